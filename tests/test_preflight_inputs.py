"""Preflight on what users have: notebooks, launcher scripts, SageMaker API JSON (issue 14).

Every fixture under tests/fixtures/preflight/{notebook,launcher,trainer,two_files,api} is
our own code reproducing a pattern of the public examples; each is checked through the
Python API (run_preflight) and through the CLI (exit code, --json).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from smddp_infra.cli import main
from smddp_infra.preflight import PreflightInputError, PreflightReport, run_preflight
from smddp_infra.preflight.script import analyse_source

FIXTURES = Path(__file__).parent / "fixtures" / "preflight"
ROOT = Path(__file__).resolve().parents[1]


def by_rule(report: PreflightReport, rule_id: str) -> list[Any]:
    return [f for f in report.findings if f.rule_id == rule_id]


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["preflight", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------- a notebook, variables across cells


@pytest.fixture(scope="module")
def notebook() -> PreflightReport:
    return run_preflight(FIXTURES / "notebook" / "launch.ipynb")


def test_notebook_jobs_are_found_in_cell_order_and_labelled_by_variable_and_cell(notebook):
    assert notebook.kind == "notebook"
    assert [j.job.label for j in notebook.jobs] == ["estimator (launch.ipynb cell 6 line 1)", "hf (launch.ipynb cell 8 line 2)"]
    assert [j.job.estimator for j in notebook.jobs] == ["PyTorch", "HuggingFace"]


def test_names_resolve_to_their_last_assignment_before_the_call_through_fstrings_percent_and_plus(notebook):
    [slash] = by_rule(notebook, "PF-CHECKPOINT-URI-SLASH")
    # bucket: sess.default_bucket() in cell 2 (unknown), then 'team-ml-bucket' in cell 3
    assert "s3://team-ml-bucket/resnet/run-7/checkpoints does not end in '/'" in slash.message
    assert slash.location == "launch.ipynb cell 6 line 6: checkpoint_s3_uri"
    assert slash.fix == "checkpoint_s3_uri='s3://team-ml-bucket/resnet/run-7/checkpoints/'"


def test_kwargs_dicts_built_from_literals_give_their_values_and_the_line_they_were_written_on(notebook):
    job = notebook.jobs[0].job
    assert (job.instance_type, job.instance_count) == ("ml.p4d.24xlarge", 2)
    assert notebook.jobs[0].world_size == 16
    assert job.locations["instance_type"] == "launch.ipynb cell 4 line 2: instance_type"
    assert job.locations["instance_count"] == "launch.ipynb cell 4 line 1: instance_count"


def test_empty_checkpoint_local_path_is_unset_so_the_debugger_conflict_is_an_error(notebook):
    [debugger] = by_rule(notebook, "PF-DEBUGGER-CHECKPOINT")
    assert notebook.jobs[0].job.checkpoint_local_path is None
    assert debugger.severity == "error" and debugger.location == "launch.ipynb cell 6 line 1: debugger_hook_config"
    assert "debugger_hook_config=False" in debugger.fix


def test_a_script_written_by_writefile_is_checked_with_its_notebook_cell_and_line(notebook):
    [deprecated] = by_rule(notebook, "PF-DEPRECATED-SMDDP-API")
    assert deprecated.location == "train.py:4 (launch.ipynb cell 5 line 5)"
    assert [s.path for s in notebook.scripts] == [FIXTURES / "notebook" / "code" / "train.py"]
    assert not (FIXTURES / "notebook" / "code").exists()  # only the notebook has it


def test_rank_guarded_never_iterated_and_step_bounded_loaders_are_not_findings(notebook):
    uses = {loader.line: loader.use for loader in notebook.scripts[0].loaders}
    assert uses == {21: "iterated", 23: "guarded", 26: "guarded", 29: "never", 32: "step_bounded"}
    assert by_rule(notebook, "PF-DATALOADER-SAMPLER") == []  # line 21 has a DistributedSampler


def test_a_conditional_expression_is_unknown_and_the_rules_needing_it_are_listed_not_evaluated(notebook):
    hf = notebook.jobs[1]
    assert hf.job.instance_type is None
    assert any(n.startswith("PF-SMDDP-INSTANCE not evaluated: instance_type unknown (instance_type is a conditional")
               for n in hf.not_evaluated)
    assert notebook.jobs[0].not_evaluated == ()


def test_an_argument_the_sdk_drops_is_named_with_the_nearest_real_one(notebook):
    [typo] = by_rule(notebook, "PF-UNKNOWN-KEY")
    assert typo.location == "launch.ipynb cell 6 line 9: keep_alive_time_in_seconds"
    assert typo.message.endswith("did you mean keep_alive_period_in_seconds?")


def test_notebook_structure_magics_and_shell_cells_are_never_findings(notebook):
    text = json.dumps([f.to_json() for f in notebook.findings])
    for word in ("nbformat", "metadata", "cells", "pip install", "%%bash"):
        assert word not in text


def test_notebook_through_the_cli(capsys):
    code, report = cli_json(capsys, str(FIXTURES / "notebook" / "launch.ipynb"))
    assert code == 1 == report["exit_code"]
    assert report["version"] == 2 and report["kind"] == "notebook"
    assert [j["label"] for j in report["jobs"]] == ["estimator (launch.ipynb cell 6 line 1)", "hf (launch.ipynb cell 8 line 2)"]
    assert report["summary"] == {"error": 1, "warning": 3, "info": 0}
    assert any("PF-SMDDP-INSTANCE not evaluated: instance_type unknown" in n for n in report["not_evaluated"])
    # the rank-guarded, never-iterated and step-bounded loaders of the %%writefile script
    assert "PF-DATALOADER-SAMPLER" not in {f["rule_id"] for f in report["findings"]}
    human = main(["preflight", str(FIXTURES / "notebook" / "launch.ipynb")])
    out = capsys.readouterr().out
    assert human == 1
    assert "WARNING PF-DEPRECATED-SMDDP-API  train.py:4 (launch.ipynb cell 5 line 5)" in out
    assert out.rstrip().splitlines()[-1] == ("preflight launch.ipynb (2 jobs: estimator (launch.ipynb cell 6 line 1), "
                                             "hf (launch.ipynb cell 8 line 2); scripts: train.py): 1 error(s), 3 warning(s), 0 info")


# ---------------------------------------------------------------- a launcher with a shell entry point


@pytest.fixture(scope="module")
def launcher() -> PreflightReport:
    return run_preflight(FIXTURES / "launcher" / "launch.py")


def test_smddp_on_p5_is_an_error_naming_the_supported_types_and_the_nccl_alternative(launcher):
    [f] = by_rule(launcher, "PF-SMDDP-INSTANCE")
    assert f.severity == "error"
    assert f.location == "launch.py:27: instance_type (the argparse default of --instance-type)"
    assert "ml.p4d.24xlarge, ml.p4de.24xlarge" in f.message and "ml.p5.48xlarge" in f.message
    assert 'backend="nccl"' in f.fix and "torch_distributed" in f.fix


def test_a_shell_entry_point_is_noted_and_the_scripts_it_runs_are_followed(launcher):
    [note] = by_rule(launcher, "PF-NON-PYTHON-ENTRY-POINT")
    assert note.severity == "info"
    assert "followed tools/prepare.py (line 5), detector/train.py (line 7)" in note.message
    assert "extras/check_data.py (line 6)" in note.message  # cloned at run time: not here
    assert [s.name for s in launcher.scripts] == ["tools/prepare.py", "detector/train.py"]
    [loader] = by_rule(launcher, "PF-DATALOADER-SAMPLER")
    assert loader.location == "detector/train.py:10" and loader.severity == "warning"
    assert any("extras/check_data.py (run.sh line 6)" in n for n in launcher.not_evaluated)


def test_launcher_through_the_cli(capsys):
    code, report = cli_json(capsys, str(FIXTURES / "launcher" / "launch.py"))
    assert code == 1 and report["kind"] == "launcher"
    # smdistributed on the argparse default ml.p5.48xlarge: SDK v2 refuses it at fit() as well
    assert {f["rule_id"] for f in report["findings"]} == {"PF-SMDDP-INSTANCE", "PF-DATALOADER-SAMPLER", "PF-NON-PYTHON-ENTRY-POINT",
                                                          "PF-SDK-REFUSES"}


# ---------------------------------------------------------------- ModelTrainer with SourceCode(command=...)


def test_model_trainer_command_is_followed_and_its_script_judged(capsys):
    report = run_preflight(FIXTURES / "trainer" / "train_llm.py")
    job = report.job
    assert (job.shape, job.instance_type, job.instance_count) == ("model_trainer", "ml.p5.48xlarge", 2)
    assert job.command == "torchrun --nnodes 2 --nproc_per_node 8 pretrain.py --steps 1000"
    assert job.framework == ("pytorch", "2.3.0")
    assert [s.name for s in report.scripts] == ["pretrain.py"]
    [smddp] = by_rule(report, "PF-SMDDP-INSTANCE")
    assert smddp.location == "train_llm.py:9: compute.instance_type" and 'backend="smddp"' in smddp.message
    [local] = by_rule(report, "PF-CHECKPOINT-LOCAL-PATH")
    assert local.location == "pretrain.py:14"
    [typo] = by_rule(report, "PF-UNKNOWN-KEY")
    assert typo.location == "train_llm.py:9: compute.keep_alive_time_in_seconds"
    assert "ModelTrainer rejects it" in typo.message
    code, doc = cli_json(capsys, str(FIXTURES / "trainer" / "train_llm.py"))
    assert code == 1 and doc["jobs"][0]["shape"] == "model_trainer"


# ---------------------------------------------------------------- DDP save + plain load in two files


def test_a_ddp_save_and_the_model_fn_load_of_the_same_file_are_one_error_naming_both_sites(capsys):
    # inference.py is not run by the training job: it is the serving code (model_fn) that loads
    # the job's model.pth from the model directory. One finding per pair (the save is not
    # reported again as a warning).
    report = run_preflight(FIXTURES / "two_files" / "launch.py")
    [error] = by_rule(report, "PF-DDP-PREFIX")
    assert error.severity == "error"
    assert error.location == "inference.py:12" and "train.py:26" in error.message
    assert "model directory and the same file name (model.pth)" in error.message
    assert "model.module.state_dict()" in error.fix
    assert "strip_ddp_prefix" in error.fix
    code, doc = cli_json(capsys, str(FIXTURES / "two_files" / "launch.py"))
    assert code == 1 and doc["summary"]["error"] == 1


@pytest.mark.parametrize("change", [
    ("inference.py", "model.load_state_dict(torch.load(f))", "model.load_state_dict(strip_ddp_prefix(torch.load(f)))"),
    ("train.py", "torch.save(model.state_dict()", "torch.save(model.module.state_dict()"),
])
def test_either_fix_clears_the_error(tmp_path, change):
    shutil.copytree(FIXTURES / "two_files", tmp_path / "two_files")
    name, old, new = change
    script = tmp_path / "two_files" / "code" / name
    script.write_text(script.read_text().replace(old, new))
    report = run_preflight(tmp_path / "two_files" / "launch.py")
    assert by_rule(report, "PF-DDP-PREFIX") == []  # a load that strips reads the save back: nothing left
    assert report.exit_code == 0


def test_checkpoints_with_different_names_are_not_linked():
    facts = [
        analyse_source("import torch\nfrom torch.nn.parallel import DistributedDataParallel\nm = DistributedDataParallel(n)\n"
                       "torch.save(m.state_dict(), '/opt/ml/checkpoints/resume.pt')\n", path=Path("train.py")),
        analyse_source("import torch\nnet = Net()\nnet.load_state_dict(torch.load('/opt/ml/model/pretrained.pth'))\n",
                       path=Path("inference.py")),
    ]
    from smddp_infra.preflight.facts import checkpoint_pairs

    pairs, unpaired = checkpoint_pairs(tuple(facts))
    assert pairs == () and [save.line for _, save in unpaired] == [4]


# ---------------------------------------------------------------- SageMaker API JSON


def test_describe_training_job_of_the_guides_debugger_conflict_is_an_error(capsys):
    report = run_preflight(FIXTURES / "api" / "describe-stalled.json")
    assert report.kind == "describe_training_job"
    job = report.job
    assert (job.instance_type, job.instance_count, job.region) == ("ml.p4d.24xlarge", 2, "us-east-1")
    assert job.framework == ("pytorch", "2.2.0") and job.entry_point == "train.py"
    [f] = by_rule(report, "PF-DEBUGGER-CHECKPOINT")
    assert f.severity == "error" and f.location == "describe-stalled.json: DebugHookConfig"
    assert 'sagemaker_distributed_dataparallel_enabled="true"' in f.message
    assert by_rule(report, "PF-UNKNOWN-KEY") == []  # API keys are not job-file keys
    assert any("sourcedir.tar.gz is an archive" in n for n in report.not_evaluated)
    code, doc = cli_json(capsys, str(FIXTURES / "api" / "describe-stalled.json"))
    assert code == 1 and doc["kind"] == "describe_training_job"
    assert doc["jobs"][0]["framework"] == ["pytorch", "2.2.0"]


def test_the_describe_response_can_be_checked_with_its_scripts(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import smdistributed.dataparallel.torch.distributed as dist\n")
    report = run_preflight(FIXTURES / "api" / "describe-stalled.json", [script])
    assert {f.rule_id for f in report.findings} == {"PF-DEBUGGER-CHECKPOINT", "PF-DEPRECATED-SMDDP-API"}


def test_a_create_training_job_request_is_checked_against_botocores_shape():
    report = run_preflight(FIXTURES / "api" / "create-request.json")
    assert report.kind == "create_training_job"
    [shape] = by_rule(report, "PF-API-SHAPE")
    assert shape.severity == "error" and 'Unknown parameter in ResourceConfig: "KeepAliveTimeInSeconds"' in shape.message
    # the SMDDP hyperparameter is the smdistributed launcher; no script is read, so SMDDP in use is
    # not established: a launcher warning, not an instance-type error
    assert by_rule(report, "PF-SMDDP-INSTANCE") == []
    [launcher] = by_rule(report, "PF-SMDDP-LAUNCHER")
    assert launcher.severity == "warning"
    assert launcher.location == "create-request.json: HyperParameters.sagemaker_distributed_dataparallel_enabled"


def test_without_botocore_the_shape_check_is_listed_as_not_evaluated():
    code = ("import sys; sys.modules['botocore'] = None\n"
            "from smddp_infra.preflight import run_preflight\n"
            f"r = run_preflight({str(FIXTURES / 'api' / 'create-request.json')!r})\n"
            "print([f.rule_id for f in r.findings]); print(r.not_evaluated)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert "PF-API-SHAPE" not in out.stdout.splitlines()[0]
    assert "PF-API-SHAPE not evaluated: botocore is not installed" in out.stdout, out.stderr


# ---------------------------------------------------------------- robustness


def test_a_bom_and_a_pep263_coding_line_are_read_as_cpython_reads_them(tmp_path):
    launcher = tmp_path / "launch.py"
    launcher.write_bytes("\ufeffimport sagemaker.pytorch as smp\nest = smp.PyTorch(entry_point='train.py', checkpoint_s3_uri='s3://b/c')\n"
                         .encode("utf-8"))
    (tmp_path / "train.py").write_bytes("# -*- coding: latin-1 -*-\nNOTE = 'café'\nimport smdistributed.dataparallel.torch.distributed\n"
                                        .encode("latin-1"))
    report = run_preflight(launcher)
    # the old import is SMDDP evidence too: with checkpointing and the default hook, the guide's conflict
    assert {f.rule_id for f in report.findings} == {"PF-CHECKPOINT-URI-SLASH", "PF-DEPRECATED-SMDDP-API", "PF-DEBUGGER-CHECKPOINT"}
    assert by_rule(report, "PF-DEPRECATED-SMDDP-API")[0].location == "train.py:3"


@pytest.mark.parametrize("name", ["launch.py", "job.yaml", "train.ipynb"])
def test_a_nul_byte_is_binary_input(tmp_path, capsys, name):
    path = tmp_path / name
    path.write_bytes(b"import sagemaker\x00\n")
    assert main(["preflight", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is binary input (it contains a NUL byte at offset 16)" in err[0]


@pytest.mark.parametrize("source", [
    "x = " + "(" * 300 + "1" + ")" * 300 + "\n",   # beyond the parser's nesting limit
    "x = " + "+".join(["1"] * 30000) + "\n",        # deep left-nested BinOp
    "x = " + "[" * 5000 + "]" * 5000 + "\n",
])
@pytest.mark.parametrize("where", ["launcher", "script"])
def test_deeply_nested_expressions_give_one_line_and_exit_2(tmp_path, capsys, source, where):
    if where == "launcher":
        path = tmp_path / "launch.py"
        path.write_text("from sagemaker.pytorch import PyTorch\n" + source + "PyTorch(entry_point='t.py')\n")
        argv = [str(path)]
    else:
        (tmp_path / "train.py").write_text(source)
        (tmp_path / "job.yaml").write_text("entry_point: train.py\n")
        argv = [str(tmp_path / "job.yaml")]
    code = main(["preflight", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("smddp-infra preflight: error: "), err
    assert "Traceback" not in err[0]


def test_a_launcher_without_an_estimator_says_so(tmp_path, capsys):
    path = tmp_path / "train.py"
    path.write_text("import torch\nprint(torch.__version__)\n")
    assert main(["preflight", str(path)]) == 2
    err = capsys.readouterr().err
    assert "builds no SageMaker estimator or ModelTrainer" in err and "smddp-infra preflight JOB_FILE train.py" in err


def test_a_notebook_without_an_estimator_says_so(tmp_path):
    path = tmp_path / "explore.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": ["import pandas\n"], "metadata": {}, "outputs": []}],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    with pytest.raises(PreflightInputError, match="notebook .*explore.ipynb builds no SageMaker estimator"):
        run_preflight(path)


@pytest.mark.parametrize("text", ["{}", "{}\n"])
def test_an_empty_job_says_there_is_nothing_to_check(tmp_path, capsys, text):
    path = tmp_path / "job.json"
    path.write_text(text)
    assert main(["preflight", str(path)]) == 2
    assert "is empty ({}): nothing to check" in capsys.readouterr().err


def test_a_notebook_cell_that_is_not_python_is_skipped_and_listed(tmp_path):
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": src} for src in (
        "from sagemaker.pytorch import PyTorch\n", "x = [\n", "PyTorch(entry_point='t.py', instance_type='ml.p4d.24xlarge')\n")]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    report = run_preflight(path)
    assert report.job.instance_type == "ml.p4d.24xlarge"
    assert report.not_evaluated[0].startswith("cell 2 skipped: not Python")


def test_a_launcher_is_detected_by_content_whatever_its_name(tmp_path):
    path = tmp_path / "submit"
    path.write_text("from sagemaker.pytorch import PyTorch\nPyTorch(entry_point='t.py', instance_type='ml.g5.48xlarge',\n"
                    "        distribution={'smdistributed': {'dataparallel': {'enabled': True}}})\n")
    report = run_preflight(path)
    assert report.kind == "launcher" and [f.rule_id for f in report.findings] == ["PF-SMDDP-LAUNCHER"]


# ---------------------------------------------------------------- static extraction


def extract(source: str, tmp_path: Path) -> Any:
    path = tmp_path / "launch.py"
    path.write_text(textwrap.dedent(source))
    return run_preflight(path).job


@pytest.mark.parametrize("source, instance", [
    ("import sagemaker\nsagemaker.pytorch.PyTorch(entry_point='t.py', instance_type='ml.p4d.24xlarge')", "ml.p4d.24xlarge"),
    ("import sagemaker.pytorch as smp\nsmp.PyTorch(entry_point='t.py', instance_type='ml.p4d.24xlarge')", "ml.p4d.24xlarge"),
    ("from sagemaker import pytorch\npytorch.PyTorch(entry_point='t.py', instance_type='ml.p4d.24xlarge')", "ml.p4d.24xlarge"),
    ("from sagemaker.estimator import Estimator as E\nE(image_uri='i', instance_type='ml.p4de.24xlarge')", "ml.p4de.24xlarge"),
    ("from sagemaker.pytorch import *\nPyTorch(entry_point='t.py', instance_type='ml.p4d.24xlarge')", "ml.p4d.24xlarge"),
    ("from sagemaker.pytorch import PyTorch\nt = 'ml.p4d'\nPyTorch(entry_point='t.py', instance_type=t + '.24xlarge')", "ml.p4d.24xlarge"),
    ("from sagemaker.pytorch import PyTorch\nPyTorch(entry_point='t.py', instance_type='ml.{}.{}'.format('p4d', '24xlarge'))", "ml.p4d.24xlarge"),
    ("from sagemaker.pytorch import PyTorch\nbig = f()\nPyTorch(entry_point='t.py', instance_type='ml.p4d.24xlarge' if big else 'ml.p4d.24xlarge')",
     "ml.p4d.24xlarge"),  # both branches agree
    ("from sagemaker.pytorch import PyTorch\nt = 'ml.p4d.24xlarge'\nest = PyTorch(entry_point='t.py', instance_type=t)\nt = 'ml.p5.48xlarge'",
     "ml.p4d.24xlarge"),  # an assignment after the call does not count
    ("from sagemaker.pytorch import PyTorch\nif cond:\n    t = 'ml.p4d.24xlarge'\nelse:\n    t = 'ml.p5.48xlarge'\nPyTorch(entry_point='t.py', instance_type=t)",
     None),  # the branches disagree: unknown
    ("from sagemaker.pytorch import PyTorch\nimport os\nPyTorch(entry_point='t.py', instance_type=os.environ['TYPE'])", None),
])
def test_values_are_resolved_statically_or_left_unknown(tmp_path, source, instance):
    job = extract(source, tmp_path)
    assert job.instance_type == instance
    assert ("instance_type" in job.unknown) is (instance is None)


def test_a_class_named_like_an_estimator_but_not_from_sagemaker_is_not_a_job(tmp_path):
    with pytest.raises(PreflightInputError, match="builds no SageMaker estimator"):
        extract("class PyTorch:\n    pass\nPyTorch(entry_point='t.py')\n", tmp_path)


def test_an_unresolved_kwargs_makes_the_settings_not_written_unknown(tmp_path):
    job = extract("from sagemaker.pytorch import PyTorch\nPyTorch(entry_point='t.py', checkpoint_s3_uri='s3://b/c/', **load())\n", tmp_path)
    assert "debugger_hook_config" in job.unknown and "instance_type" in job.unknown
    assert "entry_point" not in job.unknown


def test_user_code_is_never_executed(tmp_path):
    marker = tmp_path / "ran"
    extract(f"open({str(marker)!r}, 'w').write('x')\nfrom sagemaker.pytorch import PyTorch\nPyTorch(entry_point='t.py')\n", tmp_path)
    assert not marker.exists()


# ---------------------------------------------------------------- the uneven-batches rule's precision


LOADER_HEAD = """
import torch.distributed as dist
from torch.utils.data import DataLoader
rank = dist.get_rank(); dist.barrier()
"""


@pytest.mark.parametrize("body, use", [
    ("loader = DataLoader(ds)\nfor b in loader:\n    pass\n", "iterated"),
    ("for i, b in enumerate(DataLoader(ds)):\n    pass\n", "iterated"),
    ("if rank == 0:\n    loader = DataLoader(ds)\n    for b in loader:\n        pass\n", "guarded"),
    ("if dist.get_rank() == 0:\n    for b in DataLoader(ds):\n        pass\n", "guarded"),
    ("if args.local_rank in (-1, 0):\n    loader = DataLoader(ds)\n", "guarded"),
    ("loader = DataLoader(ds)\nif is_main_process():\n    for b in loader:\n        pass\n", "guarded"),
    ("loader = DataLoader(ds)\nprint(len(loader))\n", "never"),
    ("loader = DataLoader(ds)\n", "never"),
    ("loader = DataLoader(ds)\nstep = 0\nfor b in loader:\n    step += 1\n    if step >= max_steps:\n        break\n", "step_bounded"),
    ("loader = DataLoader(ds)\ndef train(l):\n    for b in l:\n        pass\ntrain(loader)\n", "iterated"),
    ("loader = DataLoader(ds)\ndef train(l):\n    for b in l:\n        pass\nif rank == 0:\n    train(loader)\n", "guarded"),
    ("loader = DataLoader(ds)\ntrainer.fit(model, loader)\n", "unclear"),
    ("loader = DataLoader(ds)\nwith torch.no_grad():\n    for b in loader:\n        pass\n", "evaluation"),
    ("def evaluate(m, l):\n    for b in l:\n        m(b)\nevaluate(model, DataLoader(ds))\n", "evaluation"),
    ("def make():\n    return DataLoader(ds)\nloader = make()\nfor b in loader:\n    pass\n", "iterated"),
    ("class T:\n    def __init__(self):\n        self.loader = DataLoader(ds)\n    def run(self):\n        for b in tqdm(self.loader):\n            pass\n",
     "iterated"),
])
def test_how_a_loader_is_used_decides_the_finding(tmp_path, body, use):
    facts = analyse_source(LOADER_HEAD + body, path=Path("train.py"))
    [loader] = facts.loaders
    assert loader.use == use
    (tmp_path / "train.py").write_text(LOADER_HEAD + body)
    (tmp_path / "job.yaml").write_text("entry_point: train.py\ninstance_type: ml.p4d.24xlarge\ninstance_count: 2\n")
    findings = by_rule(run_preflight(tmp_path / "job.yaml"), "PF-DATALOADER-SAMPLER")
    expected = {"iterated": ["warning"], "unclear": ["info"], "evaluation": ["info"]}.get(use, [])
    assert [f.severity for f in findings] == expected


#: One loader of each kind, in this order: a loader the rule skips comes before each one it reports,
#: so a skip that ended the walk would lose the findings after it.
EVERY_LOADER = """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
rank = dist.get_rank(); dist.barrier()
kept = DataLoader(ds, drop_last=True)
for b in kept:
    pass
if rank == 0:
    for b in DataLoader(ds):
        pass
with torch.no_grad():
    for b in DataLoader(ds):
        pass
trainer.fit(model, DataLoader(ds))
for b in DataLoader(ds):
    pass
"""

EVERY_LOADER_FINDINGS = [
    ("warning", "train.py:16",
     "`for b in DataLoader(ds):` has no DistributedSampler and no drop_last=True and every rank iterates it to the end "
     "(line 16): ranks run different numbers of batches if their data differ in length (per-rank files or shards, a "
     "ShardedByS3Key channel), which preflight cannot check without num_samples, batch_size and world_size in the job "
     "file; with the same data on every rank, every rank trains on all of it",
     "pass sampler=DistributedSampler(dataset) (or batch_sampler=even_shards(...).batches(rank)), or add num_samples, "
     "batch_size and world_size to the job file so preflight can count"),
    ("info", "train.py:13",
     "`for b in DataLoader(ds):` has no DistributedSampler and no drop_last=True; every rank iterates it without "
     "gradients (line 13): uneven counts hang only if that loop runs collectives (an all_reduce per batch, DDP's "
     "buffer broadcast in forward)",
     "pass sampler=DistributedSampler(dataset, shuffle=False) if the evaluation loop runs collectives; or evaluate on "
     "rank 0 only (if dist.get_rank() == 0:)"),
    ("info", "train.py:15",
     "`trainer.fit(model, DataLoader(ds))` has no DistributedSampler and no drop_last=True, and is handed to code "
     "preflight cannot follow (line 15); if every rank iterates it to the end, ranks may run different numbers of batches",
     "pass sampler=DistributedSampler(dataset) if every rank iterates it; nothing to do if only one rank does or "
     "training stops on a step count"),
]


@pytest.mark.parametrize("setting, reported", [
    ("instance_count: 2", True),
    ("world_size: 2", True),  # two ranks are enough to differ
    ("world_size: 1", False),  # one rank waits for nobody
    ("sharding: split", True),
    ("sharding: distributed_sampler", False),  # the job says every rank gets the same count
    ("sharding: even_shards", False),
])
def test_every_loader_finding_word_for_word_and_when_the_job_rules_them_out(tmp_path, setting, reported):
    (tmp_path / "train.py").write_text(EVERY_LOADER)
    (tmp_path / "job.yaml").write_text(f"entry_point: train.py\ninstance_type: ml.p4d.24xlarge\n{setting}\n")
    findings = by_rule(run_preflight(tmp_path / "job.yaml"), "PF-DATALOADER-SAMPLER")
    assert [(f.severity, f.location, f.message, f.fix) for f in findings] == (EVERY_LOADER_FINDINGS if reported else [])


# ---------------------------------------------------------------- a live SDK object


def test_check_estimator_reads_a_live_sdk_v2_estimator_and_model_trainer(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    from sagemaker.modules.configs import CheckpointConfig, Compute, SourceCode
    from sagemaker.modules.train import ModelTrainer
    from sagemaker.pytorch import PyTorch

    from smddp_infra.preflight import check_estimator

    (tmp_path / "train.py").write_text("import torch.distributed as dist\ndist.init_process_group(backend='smddp')\n")
    estimator = PyTorch(entry_point="train.py", source_dir=str(tmp_path), role="arn:aws:iam::123456789012:role/R",
                        instance_type="ml.p5.48xlarge", instance_count=2, framework_version="2.2.0", py_version="py310",
                        distribution={"smdistributed": {"dataparallel": {"enabled": True}}},
                        checkpoint_s3_uri="s3://b/ckpt/")
    report = check_estimator(estimator)
    assert {f.rule_id: f.severity for f in report.findings} == {"PF-DEBUGGER-CHECKPOINT": "error", "PF-SMDDP-INSTANCE": "error",
                                                                "PF-SDK-REFUSES": "error"}
    assert by_rule(report, "PF-SMDDP-INSTANCE")[0].location == "PyTorch object: instance_type"
    # the refusal PF-SDK-REFUSES reports is the SDK's own, raised when fit() builds the hyperparameters
    from smddp_infra.preflight.job import SDK_V2_P5_REFUSAL

    with pytest.raises(ValueError, match=re.escape(SDK_V2_P5_REFUSAL)):
        estimator.hyperparameters()
    # the live object's environment decides a guard in the script
    (tmp_path / "guarded.py").write_text('import os\nif os.environ.get("USE_SMDDP") == "1":\n'
                                         '    import torch.distributed as dist\n    dist.init_process_group(backend="smddp")\n')
    for value, expected in (("1", ["PF-SMDDP-INSTANCE"]), ("0", [])):
        guarded = PyTorch(entry_point="guarded.py", source_dir=str(tmp_path), role="arn:aws:iam::123456789012:role/R",
                          instance_type="ml.g5.48xlarge", instance_count=2, framework_version="2.2.0", py_version="py310",
                          distribution={"torch_distributed": {"enabled": True}}, environment={"USE_SMDDP": value})
        assert [f.rule_id for f in check_estimator(guarded).findings] == expected
    assert [s.path for s in report.scripts] == [tmp_path / "train.py"]
    # its post-init asks STS for a default bucket: the one AWS call, replaced (preflight makes none)
    monkeypatch.setattr(ModelTrainer, "_fetch_bucket_name_and_prefix", lambda self, *a, **k: None)
    trainer = ModelTrainer(training_image="img:1", role="arn:aws:iam::123456789012:role/R",
                           compute=Compute(instance_type="ml.p4d.24xlarge", instance_count=2),
                           source_code=SourceCode(source_dir=str(tmp_path), entry_script="train.py"),
                           checkpoint_config=CheckpointConfig(s3_uri="s3://b/ckpt", local_path="/opt/ml/checkpoints"))
    report = check_estimator(trainer)
    assert [f.rule_id for f in report.findings] == ["PF-CHECKPOINT-URI-SLASH"]
    assert report.findings[0].location == "ModelTrainer object: checkpoint_config.s3_uri"
    with pytest.raises(PreflightInputError, match="takes a SageMaker SDK estimator or ModelTrainer, got builtins.dict"):
        check_estimator({})


def test_a_module_under_source_dir_that_does_not_parse_is_listed_not_fatal(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "train.py").write_text("import smdistributed.dataparallel.torch.distributed\nimport legacy_py2\n")
    (code / "legacy_py2.py").write_text("print 'hello'\n")
    (tmp_path / "launch.py").write_text("from sagemaker.pytorch import PyTorch\nPyTorch(entry_point='train.py', source_dir='code')\n")
    report = run_preflight(tmp_path / "launch.py")
    assert [f.rule_id for f in report.findings] == ["PF-DEPRECATED-SMDDP-API"]
    assert any(n.startswith("script rules not evaluated for legacy_py2.py:") for n in report.not_evaluated)
    (code / "train.py").write_text("print 'entry point'\n")
    with pytest.raises(PreflightInputError, match="train.py is not valid Python"):
        run_preflight(tmp_path / "launch.py")  # the entry point itself must parse


def test_an_empty_checkpoint_local_path_in_a_job_file_is_unset_too(tmp_path):
    (tmp_path / "job.yaml").write_text("distribution: {smdistributed: {dataparallel: {enabled: true}}}\n"
                                       "checkpoint_s3_uri: s3://b/c/\ncheckpoint_local_path: ''\n")
    [f] = by_rule(run_preflight(tmp_path / "job.yaml"), "PF-DEBUGGER-CHECKPOINT")
    assert f.severity == "error"  # not the info of "both set": the SDK reads '' as unset


@pytest.mark.parametrize("instance, severity", [
    ("ml.p4d.24xlarge", None), ("ml.p4de.24xlarge", None), ("ml.p3dn.24xlarge", "warning"),
    ("ml.p3.16xlarge", "warning"), ("ml.p5.48xlarge", "error"), ("ml.g5.48xlarge", "error"),
    ("ml.trn1.32xlarge", "error"), ("local_gpu", None),
])
def test_smddp_instance_severity_per_type(tmp_path, instance, severity):
    # SMDDP in use = the script starts the smddp backend (the launcher alone is not evidence)
    (tmp_path / "train.py").write_text("import smdistributed.dataparallel.torch.torch_smddp\nimport torch.distributed as dist\n"
                                       "dist.init_process_group(backend='smddp')\n")
    (tmp_path / "job.yaml").write_text(f"entry_point: train.py\ninstance_type: {instance}\n"
                                       "distribution: {smdistributed: {dataparallel: {enabled: true}}}\n")
    found = by_rule(run_preflight(tmp_path / "job.yaml"), "PF-SMDDP-INSTANCE")
    assert [f.severity for f in found] == ([severity] if severity else [])
    (tmp_path / "job.yaml").write_text(f"instance_type: {instance}\ndistribution: {{torch_distributed: {{enabled: true}}}}\n")
    assert by_rule(run_preflight(tmp_path / "job.yaml"), "PF-SMDDP-INSTANCE") == []  # NCCL: no SMDDP asked


def test_a_checkpoint_uri_with_an_unknown_bucket_is_still_set_and_its_end_still_judged(tmp_path):
    source = """
        import sagemaker
        from sagemaker.pytorch import PyTorch
        bucket = sagemaker.Session().default_bucket()
        SMDDP = {"smdistributed": {"dataparallel": {"enabled": True}}}
        a = PyTorch(entry_point="t.py", distribution=SMDDP, checkpoint_s3_uri=f"s3://{bucket}/ckpt")
        b = PyTorch(entry_point="t.py", distribution=SMDDP, checkpoint_s3_uri="s3://" + bucket + "/ckpt/",
                    debugger_hook_config=False)
        c = PyTorch(entry_point="t.py", checkpoint_s3_uri=f"s3://{bucket}/{run_name}")
    """
    path = tmp_path / "launch.py"
    path.write_text(textwrap.dedent(source))
    a, b, c = run_preflight(path).jobs
    assert {f.rule_id: f.severity for f in a.findings} == {"PF-DEBUGGER-CHECKPOINT": "error", "PF-CHECKPOINT-URI-SLASH": "warning"}
    assert "checkpoint_s3_uri=s3://{bucket}/ckpt" in a.findings[0].message
    assert [f.fix for f in a.findings if f.rule_id == "PF-CHECKPOINT-URI-SLASH"] == ["checkpoint_s3_uri='s3://{bucket}/ckpt/'"]
    assert b.findings == ()
    assert c.findings == ()
    assert any(n.startswith("PF-CHECKPOINT-URI-SLASH not evaluated: the end of checkpoint_s3_uri unknown") for n in c.not_evaluated)


@pytest.mark.parametrize("script, severity", [
    # an import alone does not start the backend: it depends on what initialises the process group
    ("import smdistributed.dataparallel.torch.torch_smddp\n", "warning"),
    ("import torch.distributed as dist\ndist.init_process_group(backend='smddp')\n", "error"),
    ("try:\n    import smdistributed.dataparallel.torch.torch_smddp\n    backend = 'smddp'\n"
     "except ImportError:\n    backend = 'nccl'\n", "info"),  # falls back to NCCL where SMDDP is missing
    ("import torch.distributed as dist\ndist.init_process_group(backend='nccl')\n", None),
])
def test_smddp_asked_for_in_the_script_on_p5(tmp_path, script, severity):
    (tmp_path / "train.py").write_text(script)
    (tmp_path / "job.yaml").write_text("entry_point: train.py\ninstance_type: ml.p5.48xlarge\n")
    found = by_rule(run_preflight(tmp_path / "job.yaml"), "PF-SMDDP-INSTANCE")
    assert [f.severity for f in found] == ([severity] if severity else [])


def test_an_example_laid_out_like_the_public_smddp_ones_has_no_findings(capsys):
    """Rank-0 test loader through a function, DistributedSampler, module.state_dict() saved by a
    helper, a model_fn that wraps before loading: nothing to report (the issue's precision aim)."""
    report = run_preflight(FIXTURES / "clean" / "mnist.ipynb")
    assert report.findings == () and report.not_evaluated == ()
    assert {loader.use for loader in report.scripts[0].loaders} == {"iterated", "guarded"}
    assert main(["preflight", str(FIXTURES / "clean" / "mnist.ipynb")]) == 0
    assert capsys.readouterr().out.strip().endswith("no findings")


def test_sdk_v1_names_the_sdk_still_maps_are_read_not_reported(tmp_path):
    job = extract("from sagemaker.pytorch import PyTorch\n"
                  "PyTorch(entry_point='t.py', train_instance_type='ml.p4d.24xlarge', train_instance_count=2)\n", tmp_path)
    assert (job.instance_type, job.instance_count, job.unknown_keys) == ("ml.p4d.24xlarge", 2, ())


def test_what_job_config_emits_for_boto3_is_a_request_fragment_that_passes(tmp_path, capsys):
    outputs = str(FIXTURES / "outputs" / "cdk-outputs-single-az.json")
    assert main(["job-config", "--outputs", outputs, "--format", "boto3"]) == 0
    fragment = tmp_path / "request.json"
    fragment.write_text(capsys.readouterr().out)
    code, report = cli_json(capsys, str(fragment), "--outputs", outputs)
    assert code == 0 and report["kind"] == "create_training_job"
    assert report["findings"] == []  # no unknown keys, no missing AlgorithmSpecification
    assert report["not_evaluated"][0].startswith("a CreateTrainingJob request fragment")
    doc = json.loads(fragment.read_text())
    doc["ResourceConfig"]["InstanceTyp"] = doc["ResourceConfig"].pop("InstanceType")
    fragment.write_text(json.dumps(doc))
    code, report = cli_json(capsys, str(fragment))
    assert code == 1 and [f["rule_id"] for f in report["findings"]] == ["PF-API-SHAPE"]
    assert 'Unknown parameter in ResourceConfig: "InstanceTyp"' in report["findings"][0]["message"]


def test_misspelt_arguments_in_launcher_code_are_named_the_way_each_sdk_treats_them(tmp_path):
    """ModelTrainer's configs forbid extra fields (pydantic): the code fails; an SDK v2 estimator
    takes **kwargs and drops them; a fit() argument given to the estimator is dropped too."""
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "launch.py").write_text(
        "from sagemaker.modules.train import ModelTrainer\n"
        "from sagemaker.modules.configs import Compute, SourceCode\n"
        "from sagemaker.pytorch import PyTorch\n"
        'trainer = ModelTrainer(training_image="x", source_code=SourceCode(source_dir=".", entry_script="train.py"),\n'
        '    compute=Compute(instance_type="ml.p4d.24xlarge", instance_count=2, instance_typo=1), base_job_nam="x")\n'
        "trainer.train()\n"
        'est = PyTorch(entry_point="train.py", role="r", instance_type="ml.p4d.24xlarge", instance_count=2,\n'
        '    framework_version="2.3", py_version="py311", instance_typ="x", wait=False)\n'
        "est.fit()\n")
    found = [(f.location, f.message, f.fix) for job in run_preflight(tmp_path / "launch.py").jobs for f in job.findings
             if f.rule_id == "PF-UNKNOWN-KEY"]
    assert found == [
        ("launch.py:5: base_job_nam", "base_job_nam= is not a ModelTrainer field: ModelTrainer rejects it when this code "
         "runs (pydantic extra=forbid); did you mean base_job_name?", "rename base_job_nam to base_job_name"),
        ("launch.py:5: compute.instance_typo", "compute.instance_typo= is not a compute field: ModelTrainer rejects it when "
         "this code runs (pydantic extra=forbid); did you mean compute.instance_type?",
         "rename compute.instance_typo to compute.instance_type"),
        ("launch.py:8: instance_typ", "instance_typ= is not an argument of PyTorch: the SDK drops it without a word; did "
         "you mean instance_type?", "rename instance_typ to instance_type"),
        ("launch.py:8: wait", "wait is a fit() argument: pass it to .fit(wait=...): PyTorch(...) drops it without a word",
         "move wait= to the .fit() call")]
