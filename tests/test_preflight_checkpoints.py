"""Checkpoints in preflight, decision by decision (issue 41, the preflight room's survivors):
which DDP save each load reads back (``facts.checkpoint_pairs``), what ``facts.derive`` keeps of
a program, which script writes PF-CHECKPOINT-LOCAL-PATH passes over and what it says of the
rest, and PF-DDP-PREFIX's warning for a load into a model preflight cannot see.

Pure and in-process: scripts are read with ``analyse_source`` or run through ``run_preflight``
on files written here; no child process, no SageMaker SDK.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from smddp_infra.preflight import PreflightReport, run_preflight
from smddp_infra.preflight.facts import checkpoint_pairs
from smddp_infra.preflight.script import PathExpr, ScriptFacts, StateLoad, StateSave, analyse_source

from _preflight_helpers import by_rule, write

DDP_HEAD = "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nddp = DDP(Net())\n"


def _run(tmp_path: Path, settings: dict[str, Any], script: str) -> PreflightReport:
    """A job file running train.py (the script dedented), through the whole of preflight."""
    write(tmp_path, {"train.py": script})
    (tmp_path / "job.json").write_text(json.dumps({"entry_point": "train.py", **settings}))
    return run_preflight(tmp_path / "job.json")


def _whole(findings: Any) -> list[tuple[str, str, str, str, str]]:
    return [(f.rule_id, f.severity, f.location, f.message, f.fix) for f in findings]


def _read(name: str, body: str) -> ScriptFacts:
    return analyse_source(DDP_HEAD + textwrap.dedent(body).lstrip("\n"), path=Path(name))


def _pairs(files: tuple[ScriptFacts, ...], serving: tuple[ScriptFacts, ...] = ()) -> tuple[list, list]:
    """(save file, line, load file, line, why) per pair, and (file, line) per save left unpaired."""
    pairs, unpaired = checkpoint_pairs(files, serving)
    return ([(p.save_file.name, p.save.line, p.load_file.name, p.load.line, p.how) for p in pairs],
            [(f.name, s.line) for f, s in unpaired])


# ---------------------------------------------------------------- facts.checkpoint_pairs

ROUNDTRIP = """
    def roundtrip(path):
        torch.save(ddp.state_dict(), path)
        net = Net()
        net.load_state_dict(torch.load(path))
"""


def test_a_path_held_by_a_parameter_is_the_same_file_within_one_function_of_one_file() -> None:
    assert _pairs((_read("train.py", ROUNDTRIP),)) == (
        [("train.py", 5, "train.py", 7, "the same path expression (path)")], [])


def test_the_same_parameter_name_in_another_file_is_not_shown_to_be_the_same_file() -> None:
    # each file's roundtrip() is called with its own path: nothing ties them together
    saves = _read("train.py", "def roundtrip(path):\n    torch.save(ddp.state_dict(), path)\n")
    loads = _read("evaluate.py", "def roundtrip(path):\n    net = Net()\n    net.load_state_dict(torch.load(path))\n")
    assert _pairs((saves, loads)) == ([], [("train.py", 5)])


def test_a_load_is_compared_with_every_save_not_only_the_first() -> None:
    train = _read("train.py", """
        torch.save(ddp.state_dict(), "/opt/ml/checkpoints/best.pt")
        torch.save(ddp.state_dict(), "/opt/ml/checkpoints/last.pt")
        net = Net()
        net.load_state_dict(torch.load("/opt/ml/checkpoints/last.pt"))
    """)
    assert _pairs((train,)) == ([("train.py", 5, "train.py", 7, "the same path")], [("train.py", 4)])


def test_a_load_that_reads_ddp_keys_correctly_settles_every_save_of_its_file() -> None:
    # the same file saved at two sites, resumed into the DDP wrapper itself: nothing to report
    train = _read("train.py", """
        torch.save(ddp.state_dict(), "/opt/ml/checkpoints/last.pt")
        torch.save(ddp.state_dict(), "/opt/ml/checkpoints/last.pt")
        ddp.load_state_dict(torch.load("/opt/ml/checkpoints/last.pt"))
    """)
    assert [load.target for load in train.state_loads] == ["fine"]
    assert _pairs((train,)) == ([], [])


def test_each_save_and_load_of_one_file_is_its_own_pair() -> None:
    train = _read("train.py", """
        torch.save(ddp.state_dict(), "/opt/ml/checkpoints/last.pt")
        net = Net()
        net.load_state_dict(torch.load("/opt/ml/checkpoints/last.pt"))
    """)
    evaluate = _read("evaluate.py", """
        net = Net()
        net.load_state_dict(torch.load("/opt/ml/checkpoints/last.pt"))
    """)
    assert _pairs((train, evaluate)) == ([("train.py", 4, "train.py", 6, "the same path"),
                                          ("train.py", 4, "evaluate.py", 5, "the same path")], [])


def _path(text: str, basename: str, *, model_dir: bool) -> PathExpr:
    return PathExpr(text, None, basename, model_dir, False, "")


def _facts(name: str, *, saves: tuple[StateSave, ...] = (), loads: tuple[StateLoad, ...] = ()) -> ScriptFacts:
    return ScriptFacts(Path(name), (), (), (), False, False, ddp_saves=saves, state_loads=loads)


def test_serving_code_reads_a_save_only_when_both_paths_are_in_the_model_directory() -> None:
    # the serving container sees the job's model.tar.gz, i.e. what it left in /opt/ml/model; the
    # paths below are facts as given (the same expression, model_dir set on one side, the other
    # or both), so the rule is seen apart from how the reader sets the flag
    for save_in, load_in, paired in ((True, True, True), (True, False, False), (False, True, False)):
        save = StateSave(3, "torch.save(ddp.state_dict(), out)", "ddp", _path("out", "m.pt", model_dir=save_in))
        load = StateLoad(9, "net.load_state_dict(torch.load(out))", "net", _path("out", "m.pt", model_dir=load_in))
        expected = ([("train.py", 3, "inference.py", 9, "the same path expression (out)")], []) if paired else (
            [], [("train.py", 3)])
        assert _pairs((_facts("train.py", saves=(save,)),), (_facts("inference.py", loads=(load,)),)) == expected


def test_serving_code_passes_over_a_save_outside_the_model_directory_and_reads_the_next() -> None:
    outside = StateSave(3, "torch.save(ddp.state_dict(), out)", "ddp", _path("out", "m.pt", model_dir=False))
    inside = StateSave(4, "torch.save(ddp.state_dict(), final)", "ddp", _path("final", "m.pt", model_dir=True))
    load = StateLoad(9, "net.load_state_dict(torch.load(out))", "net", _path("out", "m.pt", model_dir=True))
    assert _pairs((_facts("train.py", saves=(outside, inside)),), (_facts("inference.py", loads=(load,)),)) == (
        [("train.py", 4, "inference.py", 9, "the model directory and the same file name (m.pt)")], [("train.py", 3)])


# ---------------------------------------------------------------- facts.derive


def test_a_deprecated_api_under_a_guard_the_job_makes_false_is_not_in_use(tmp_path: Path) -> None:
    script = """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--backend", default="nccl")
        args = p.parse_args()
        if args.backend == "smddp":
            import smdistributed.dataparallel.torch.distributed as dist
    """
    report = _run(tmp_path, {}, script)
    assert report.jobs[0].facts.deprecated == () and report.findings == ()
    report = _run(tmp_path, {"hyperparameters": {"backend": "smddp"}}, script)
    assert [(facts.name, use.line) for facts, use in report.jobs[0].facts.deprecated] == [("train.py", 6)]
    assert _whole(report.findings) == [(
        "PF-DEPRECATED-SMDDP-API", "warning", "train.py:6",
        "`import smdistributed.dataparallel.torch.distributed as dist` uses "
        "smdistributed.dataparallel.torch.distributed, deprecated since SMDDP v1.4.0",
        'import smdistributed.dataparallel.torch.torch_smddp, then torch.distributed.init_process_group(backend="smddp")',
    )]


# ---------------------------------------------------------------- PF-DDP-PREFIX: a load into a parameter


def test_a_ddp_save_loaded_into_a_model_preflight_cannot_see_is_a_warning_naming_both_sites(tmp_path: Path) -> None:
    report = _run(tmp_path, {}, """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def restore(model):
            model.load_state_dict(torch.load("/opt/ml/checkpoints/last.pt"))

        net = Net()
        ddp = DDP(net)
        torch.save(ddp.state_dict(), "/opt/ml/checkpoints/last.pt")
    """)
    assert report.jobs[0].facts.collectives == ("train.py:8 DistributedDataParallel",)
    assert _whole(report.findings) == [(
        "PF-DDP-PREFIX", "warning", "train.py:5",
        '`model.load_state_dict(torch.load("/opt/ml/checkpoints/last.pt"))` loads the file train.py:9 saves with '
        'module. keys (`torch.save(ddp.state_dict(), "/opt/ml/checkpoints/last.pt")`; the same path); it fails '
        "unless model is a DistributedDataParallel wrapper when it loads, which preflight cannot see",
        "save ddp.module.state_dict() at train.py:9, or load with "
        "smddp_infra.training.strip_ddp_prefix(torch.load(...))",
    )]


# ---------------------------------------------------------------- PF-CHECKPOINT-LOCAL-PATH


def test_writes_the_job_syncs_or_uploads_or_that_are_not_checkpoints_are_passed_over(tmp_path: Path) -> None:
    # each write the rule passes over comes before one it flags, in the same file: the walk goes on
    report = _run(tmp_path, {"checkpoint_s3_uri": "s3://b/c/"}, """
        import os
        import torch
        run = os.environ["RUN"]
        torch.save(m, "/opt/ml/checkpoints/a.pt")
        torch.save(m, f"/opt/ml/check{run}")
        torch.save(m, "/opt/ml/model/m.pt")
        open("/tmp/log.txt", "w")
        torch.save(m, "/opt/ml/ckpt/../checkpoints/b.pt")
        open("/opt/ml/check", "w")
    """)
    # f"/opt/ml/check{run}" may be the synced path; "/opt/ml/check" is not, and says no checkpoint
    assert _whole(report.findings) == [(
        "PF-CHECKPOINT-LOCAL-PATH", "warning", "train.py:9",
        "open writes /opt/ml/check (outside checkpoint_local_path /opt/ml/checkpoints): SageMaker uploads only "
        "/opt/ml/checkpoints to s3://b/c/",
        "write under /opt/ml/checkpoints, the checkpoint_local_path SageMaker syncs: "
        "os.path.join('/opt/ml/checkpoints', 'check')",
    )]


def test_a_write_known_only_in_part_or_relative_to_the_working_directory_is_named_as_such(tmp_path: Path) -> None:
    report = _run(tmp_path, {"checkpoint_s3_uri": "s3://b/c/"}, """
        import os
        import torch
        run = os.environ["RUN"]
        torch.save(m, f"/mnt/ckpt/{run}")
        torch.save(m, "checkpoints/latest.pt")
    """)
    fix = "write under /opt/ml/checkpoints, the checkpoint_local_path SageMaker syncs: os.path.join('/opt/ml/checkpoints', "
    assert _whole(report.findings) == [
        ("PF-CHECKPOINT-LOCAL-PATH", "error", "train.py:4",
         "torch.save writes /mnt/ckpt/... (outside checkpoint_local_path /opt/ml/checkpoints): SageMaker uploads "
         "only /opt/ml/checkpoints to s3://b/c/",
         fix + "'checkpoint.pt')"),
        ("PF-CHECKPOINT-LOCAL-PATH", "error", "train.py:5",
         "torch.save writes checkpoints/latest.pt (relative to the working directory, outside checkpoint_local_path "
         "/opt/ml/checkpoints): SageMaker uploads only /opt/ml/checkpoints to s3://b/c/",
         fix + "'latest.pt')"),
    ]


def test_writes_are_not_judged_against_a_local_path_preflight_cannot_resolve(tmp_path: Path) -> None:
    write(tmp_path, {"train.py": 'import torch\ntorch.save(m, "/opt/ml/ckpt/x.pt")\n'})
    for local, unknown, found in (('os.environ["CKPT"]', ["checkpoint_local_path"], []),
                                  ('"/opt/ml/checkpoints"', [], ["train.py:2"])):
        write(tmp_path, {"launch.py": f"""
            import os
            from sagemaker.pytorch import PyTorch
            PyTorch(entry_point="train.py", checkpoint_s3_uri="s3://b/c/", checkpoint_local_path={local})
        """})
        report = run_preflight(tmp_path / "launch.py")
        assert list(report.jobs[0].job.unknown) == unknown
        assert [f.location for f in by_rule(report, "PF-CHECKPOINT-LOCAL-PATH")] == found


def test_a_write_is_judged_where_its_path_leads_whether_relative_or_absolute(tmp_path: Path) -> None:
    # final.pt beside the checkpoint folder: "checkpoints" is a folder the path leaves, not the file it
    # writes; relative, final.pt is a scratch file like any other, absolute it is under /opt/ml
    report = _run(tmp_path, {"checkpoint_s3_uri": "s3://b/c/"}, """
        import os
        import torch
        CKPT_DIR = "checkpoints"
        torch.save(m, os.path.join(CKPT_DIR, "..", "final.pt"))
        torch.save(m, os.path.join("/opt/ml/checkpoints", "..", "final.pt"))
    """)
    assert _whole(report.findings) == [(
        "PF-CHECKPOINT-LOCAL-PATH", "warning", "train.py:5",
        "torch.save writes /opt/ml/checkpoints/../final.pt (outside checkpoint_local_path /opt/ml/checkpoints): "
        "SageMaker uploads only /opt/ml/checkpoints to s3://b/c/",
        "write under /opt/ml/checkpoints, the checkpoint_local_path SageMaker syncs: "
        "os.path.join('/opt/ml/checkpoints', 'final.pt')",
    )]


def test_the_model_directory_is_opt_ml_model_and_what_is_under_it_not_a_sibling_sharing_its_prefix() -> None:
    # SageMaker packs /opt/ml/model (SM_MODEL_DIR) into model.tar.gz; /opt/ml/model_backup is another folder
    from smddp_infra.preflight.script import analyse_source

    analysis = analyse_source(textwrap.dedent("""
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        ddp = DDP(model)
        torch.save(ddp.state_dict(), "/opt/ml/model_backup/m.pt")
        torch.save(ddp.state_dict(), "/opt/ml/model/m.pt")
        torch.save(ddp.state_dict(), "/opt/ml/model")
        torch.save(ddp.state_dict(), "/opt/ml/output/../model/x.pt")
    """), path=Path("train.py"))
    assert [(s.path.literal, s.path.model_dir) for s in analysis.ddp_saves] == [
        ("/opt/ml/model_backup/m.pt", False), ("/opt/ml/model/m.pt", True), ("/opt/ml/model", True),
        ("/opt/ml/model/x.pt", True)]
