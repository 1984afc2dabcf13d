"""Whether a job's program uses SMDDP (``facts.smddp_use``), answer by answer (issue 41).

Mutation testing of the preflight room left 54 survivors in ``smddp_use``: which sites and uses
it passes over, which backend it keeps, and every field of the answer it returns. Each case here
hands it the facts of scripts written for the test (``analyse_source``) and a job whose
hyperparameter ``backend`` is ``nccl``, and compares the whole :class:`SmddpUse`: state,
evidence, what an unknown depends on, the backend and its site, and the framework.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Optional

import pytest

from smddp_infra.preflight.facts import Env, SmddpUse, smddp_use
from smddp_infra.preflight.job import JobDescription
from smddp_infra.preflight.script import analyse_source

IMPORT_SMDDP = "import smdistributed.dataparallel.torch.torch_smddp"
DEPRECATED = "import smdistributed.dataparallel.torch.distributed as sdist"
OTHER = "args.other (no argparse argument or hyperparameter preflight can see)"
LIBRARY = "the program initialises no process group preflight can see (a library may ask for smddp)"
HF = ("the Hugging Face Trainer, which may start the smddp backend itself when SageMaker's "
      "smdistributed launcher is on (UNCONFIRMED for this transformers version)")
SMDISTRIBUTED = ("smdistributed", 'distribution={"smdistributed": {"dataparallel": {"enabled": True}}}')


def use(*scripts: str, launcher: Optional[tuple[str, str]] = None, **settings: Any) -> SmddpUse:
    """smddp_use over ``scripts`` (named a.py, b.py, ... in that order) for a job with hyperparameter backend=nccl."""
    files = tuple(analyse_source(textwrap.dedent(source), path=Path(f"{'abcd'[i]}.py")) for i, source in enumerate(scripts))
    job = JobDescription(path=Path("job.yaml"), shape="estimator", hyperparameters={"backend": "nccl"}, **settings)
    return smddp_use(Env(job, files), files, launcher)


# ---------------------------------------------------------------- no SMDDP: the backend the program starts


def test_a_program_that_starts_no_process_group_uses_no_smddp_and_names_no_backend():
    assert use("import torch\n") == SmddpUse("no")


def test_init_without_a_backend_is_the_default_backend():
    assert use("""\
        import torch.distributed as dist
        dist.init_process_group()
        """) == SmddpUse("no", backend="the default (nccl on GPUs)", backend_site="a.py:2 `dist.init_process_group()`")


def test_the_first_backend_that_surely_runs_is_kept():
    # the nccl site under an undecided guard may not run; of the two that run, the first is the backend
    assert use("""\
        import torch.distributed as dist
        if args.other:
            dist.init_process_group(backend="nccl")
        dist.init_process_group(backend="gloo")
        dist.init_process_group(backend=args.backend)
        """) == SmddpUse("no", backend="gloo", backend_site='a.py:4 `dist.init_process_group(backend="gloo")`')


def test_a_backend_only_an_undecided_guard_starts_is_not_known():
    assert use("""\
        import torch.distributed as dist
        if args.other:
            dist.init_process_group(backend="nccl")
        """) == SmddpUse("no")


def test_an_undecided_backend_is_unknown_only_when_the_program_imports_torch_smddp():
    without = """\
        import torch.distributed as dist
        dist.init_process_group(backend=args.other)
        """
    assert use(without) == SmddpUse("no")
    assert use(f"{IMPORT_SMDDP}\n{textwrap.dedent(without)}") == SmddpUse(
        "unknown", "a.py:3 `dist.init_process_group(backend=args.other)`", depends_on=f"the backend: {OTHER}")


# ---------------------------------------------------------------- the smddp backend after sites it passes over


@pytest.mark.parametrize("passed_over", [
    # a site whose guard does not hold (hyperparameter backend=nccl)
    'if args.backend == "gloo":\n    dist.init_process_group(backend="gloo")',
    # a site whose backend preflight cannot read
    'if __name__ == "__main__":\n    dist.init_process_group(backend=args.other)',
    # a site whose backend is no text
    'if __name__ == "__main__":\n    dist.init_process_group(backend=None)',
    # a site that starts another backend
    'if __name__ == "__main__":\n    dist.init_process_group(backend="nccl")',
], ids=["guard-false", "undecided", "not-text", "nccl"])
def test_the_smddp_backend_is_found_after_any_site_before_it(passed_over: str):
    # the smddp site sits at the same depth, after the one passed over (sites are read breadth first)
    script = (f"{IMPORT_SMDDP}\nimport torch.distributed as dist\n{passed_over}\n"
              'if __name__ == "__main__":\n    dist.init_process_group(backend="smddp")\n')
    evidence = 'a.py:6 `dist.init_process_group(backend="smddp")`'
    assert use(script) == SmddpUse("yes", evidence, backend="smddp", backend_site=evidence)


def test_an_smddp_backend_inside_a_try_that_catches_a_failed_import_is_optional():
    # the except branch starts nccl: that is the backend the program surely reaches
    assert use(f"""\
        import torch.distributed as dist
        try:
            {IMPORT_SMDDP}
            dist.init_process_group(backend="smddp")
        except ImportError:
            dist.init_process_group(backend="nccl")
        """) == SmddpUse("optional", 'a.py:4 `dist.init_process_group(backend="smddp")`',
                         backend="nccl", backend_site='a.py:6 `dist.init_process_group(backend="nccl")`')


# ---------------------------------------------------------------- the deprecated APIs and the TensorFlow API


def test_the_deprecated_api_is_found_after_a_use_whose_guard_does_not_hold():
    evidence = f"a.py:4 `{DEPRECATED}` (the deprecated smdistributed.dataparallel.torch.distributed)"
    assert use(f"""\
        if args.backend == "gloo":
            {DEPRECATED}
        else:
            {DEPRECATED}
        """) == SmddpUse("yes", evidence, backend="smddp", backend_site=evidence)


def test_the_deprecated_api_inside_a_try_that_catches_a_failed_import_is_optional():
    assert use(f"""\
        try:
            {DEPRECATED}
        except ImportError:
            import torch.distributed as sdist
        """) == SmddpUse("optional", f"a.py:2 `{DEPRECATED}` (the deprecated smdistributed.dataparallel.torch.distributed)")


def test_the_deprecated_api_under_an_undecided_guard_is_unknown_and_keeps_the_backend_that_runs():
    assert use(f"""\
        import torch.distributed as dist
        dist.init_process_group(backend="nccl")
        if args.other:
            {DEPRECATED}
        """) == SmddpUse("unknown", f"a.py:4 `{DEPRECATED}` (the deprecated smdistributed.dataparallel.torch.distributed)",
                         depends_on=f"whether `if args.other:` ({OTHER}) holds",
                         backend="nccl", backend_site='a.py:2 `dist.init_process_group(backend="nccl")`')


def test_the_tensorflow_api_is_yes_with_its_framework():
    evidence = "a.py:2 `sdp.init()` (smdistributed.dataparallel.tensorflow)"
    assert use("""\
        import smdistributed.dataparallel.tensorflow as sdp
        sdp.init()
        """) == SmddpUse("yes", evidence, backend="smddp", backend_site=evidence, framework="tensorflow")


def test_the_tensorflow_api_under_an_undecided_guard_is_unknown_with_its_framework():
    assert use("""\
        import smdistributed.dataparallel.tensorflow as sdp
        if args.other:
            sdp.init()
        """) == SmddpUse("unknown", "a.py:3 `sdp.init()` (smdistributed.dataparallel.tensorflow)",
                         depends_on=f"whether `if args.other:` ({OTHER}) holds", framework="tensorflow")


def test_pytorch_beside_the_tensorflow_api_is_the_evidence_and_no_framework():
    evidence = 'a.py:4 `dist.init_process_group(backend="smddp")`'
    assert use(f"""\
        {IMPORT_SMDDP}
        import smdistributed.dataparallel.tensorflow as sdp
        import torch.distributed as dist
        dist.init_process_group(backend="smddp")
        sdp.init()
        """) == SmddpUse("yes", evidence, backend="smddp", backend_site=evidence)


# ---------------------------------------------------------------- torch_smddp imported, no process group seen


def test_torch_smddp_imported_with_no_process_group_is_unknown():
    assert use(f"{IMPORT_SMDDP}\n") == SmddpUse("unknown", f"a.py:1 `{IMPORT_SMDDP}`", depends_on=LIBRARY)


def test_an_import_tried_in_any_file_makes_the_answer_optional():
    # the deprecated API tried first is the evidence; the import tried in b.py makes the answer optional
    tried = f"""\
        try:
            {DEPRECATED}
            {IMPORT_SMDDP}
        except ImportError:
            pass
        """
    assert use(f"{IMPORT_SMDDP}\n", tried) == SmddpUse(
        "optional", f"b.py:2 `{DEPRECATED}` (the deprecated smdistributed.dataparallel.torch.distributed)")


# ---------------------------------------------------------------- Hugging Face trainers under the smdistributed launcher


@pytest.mark.parametrize("source, trainer", [
    ("from transformers import Trainer\nTrainer(model=model)\n", "transformers.Trainer"),
    ("from trl import SFTTrainer\nSFTTrainer(model=model)\n", "trl.SFTTrainer"),
    ("from setfit import Trainer\nTrainer(model=model)\n", "setfit.Trainer"),
])
def test_a_hugging_face_trainer_under_the_smdistributed_launcher_may_start_smddp(source: str, trainer: str):
    assert use(source, launcher=SMDISTRIBUTED) == SmddpUse("unknown", f"a.py ({trainer})", depends_on=HF)
    assert use(source) == SmddpUse("no")  # another launcher (none): the Trainer starts nccl


def test_a_lightning_trainer_under_the_smdistributed_launcher_is_no_smddp():
    assert use("import lightning as L\nL.Trainer(devices=8)\n", launcher=SMDISTRIBUTED) == SmddpUse("no")


def test_an_import_whose_guard_does_not_hold_is_neither_the_evidence_nor_makes_the_answer_optional():
    # a.py tries torch_smddp only for backend=smddp (the job says nccl): that import never runs;
    # b.py imports it unguarded, outside any try
    guarded = f"""\
        if args.backend == "smddp":
            try:
                {IMPORT_SMDDP}
            except ImportError:
                pass
        """
    assert use(guarded, f"{IMPORT_SMDDP}\n") == SmddpUse("unknown", f"b.py:1 `{IMPORT_SMDDP}`", depends_on=LIBRARY)


def test_the_evidence_of_an_optional_answer_is_the_import_tried():
    tried = f"""\
        try:
            {IMPORT_SMDDP}
        except ImportError:
            pass
        """
    assert use(f"{IMPORT_SMDDP}\n", tried) == SmddpUse("optional", f"b.py:2 `{IMPORT_SMDDP}`")
