"""Preflight judges the program each job runs: the corpus bar and one test per pattern.

The corpus (tests/fixtures/preflight-corpus, written for this project) reproduces what public
SageMaker launchers do; scripts/preflight_corpus.py prints the same figures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smddp_infra.cli import main
from smddp_infra.preflight import run_preflight

from _preflight_helpers import CORPUS, ROOT, by_rule, write


# ---------------------------------------------------------------- the corpus bar


def test_corpus_errors_are_all_true_and_every_expected_finding_is_found():
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    from preflight_corpus import measure

    result = measure(CORPUS)
    assert result.launchers >= 44
    assert result.errors.precision == 1.0, result.errors.found - result.errors.expected
    assert result.errors.recall == 1.0, result.errors.expected - result.errors.found
    assert result.warnings.precision >= 0.95, result.warnings.found - result.warnings.expected
    assert result.warnings.recall == 1.0, result.warnings.expected - result.warnings.found
    assert result.duplicates == []


def test_the_manifest_names_files_that_exist():
    manifest = json.loads((CORPUS / "manifest.json").read_text())["launchers"]
    for launcher, labels in manifest.items():
        assert (CORPUS / launcher).is_file(), launcher
        folder = (CORPUS / launcher).parents[len(Path(launcher).parts) - 2]
        names = {p.name for p in folder.rglob("*") if p.is_file()}
        for _, file in labels["errors"] + labels["warnings"]:
            assert file in names, (launcher, file)


# ---------------------------------------------------------------- the program of a job


def test_each_job_of_a_notebook_is_judged_on_the_scripts_it_runs(capsys):
    report = run_preflight(CORPUS / "c01_multi_job" / "launch.ipynb")
    smddp, nccl = report.jobs
    assert [s.name for s in smddp.scripts] == ["train_smddp.py", "model.py"]
    assert [s.name for s in nccl.scripts] == ["train_nccl.py", "model.py"]
    assert smddp.findings == ()
    assert [f.location for f in nccl.findings] == ["train_nccl.py:12"]
    assert main(["preflight", str(CORPUS / "c01_multi_job" / "launch.ipynb"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["jobs"][0]["program"] == ["train_smddp.py", "model.py"]
    assert doc["jobs"][0]["not_run"] == ["train_nccl.py"]
    assert doc["jobs"][0]["smddp"]["in_use"] == "yes" and doc["jobs"][1]["smddp"]["backend"] == "nccl"
    assert doc["jobs"][1]["launcher"] == "torch_distributed"


def test_helper_scripts_nothing_runs_are_listed_not_judged(capsys):
    report = run_preflight(CORPUS / "c02_helpers_not_run" / "launch.py")
    assert report.findings == ()
    main(["preflight", str(CORPUS / "c02_helpers_not_run" / "launch.py"), "--json"])
    assert json.loads(capsys.readouterr().out)["jobs"][0]["not_run"] == ["export_onnx.py", "make_shards.py"]


def test_imports_are_followed_through_sys_path_additions_and_relative_imports():
    report = run_preflight(CORPUS / "c21_imports" / "launch.py")
    assert [s.name for s in report.scripts] == ["train.py", "vendor/comm.py", "pkg/__init__.py", "pkg/loop.py", "pkg/data.py"]
    assert {(f.rule_id, f.location) for f in report.findings} == {
        ("PF-DEPRECATED-SMDDP-API", "vendor/comm.py:1"), ("PF-DATALOADER-SAMPLER", "pkg/data.py:6")}


def test_a_shell_entry_points_python_line_is_part_of_the_program():
    report = run_preflight(CORPUS / "c22_shell_entry" / "launch.py")
    assert [s.name for s in report.scripts] == ["train.py"]
    assert [f.severity for f in by_rule(report, "PF-SMDDP-INSTANCE")] == ["error"]


def test_a_missing_entry_point_is_an_error_naming_the_file_and_the_directory():
    [f] = run_preflight(CORPUS / "c18_missing_entry" / "launch.py").findings
    assert (f.rule_id, f.severity, f.location) == ("PF-ENTRY-POINT-MISSING", "error", "launch.py:3: entry_point")
    assert "train.py" in f.message and str(CORPUS / "c18_missing_entry" / "src") in f.message


def test_a_missing_entry_point_in_a_model_trainer_source_dir_is_an_error(tmp_path):
    write(tmp_path, {"src/main.py": "print(1)\n", "run.py": """
        from sagemaker.modules.configs import Compute, SourceCode, StoppingCondition
        from sagemaker.modules.train import ModelTrainer
        ModelTrainer(source_code=SourceCode(source_dir="src", entry_script="train.py"),
                     compute=Compute(instance_type="ml.p5.48xlarge", instance_count=1),
                     stopping_condition=StoppingCondition(max_runtime_in_seconds=86400))
    """})
    [f] = run_preflight(tmp_path / "run.py").findings
    assert f.rule_id == "PF-ENTRY-POINT-MISSING" and "source_code.entry_script" in f.message


# ---------------------------------------------------------------- paths


def test_a_notebooks_cwd_is_its_folder_so_a_parent_scripts_folder_resolves():
    report = run_preflight(CORPUS / "c17_getcwd_parent" / "notebooks" / "submit.ipynb")
    assert [s.name for s in report.scripts] == ["train.py", "model.py"]
    [f] = report.findings
    assert f.rule_id == "PF-SMDDP-INSTANCE" and f.severity == "error"
    assert "train.py:19" in f.message and "submit.ipynb cell 3 line 2: instance_type" in f.message


@pytest.mark.parametrize("expression", [
    'os.path.join(os.path.dirname(__file__), "..", "code")',
    'str(Path(__file__).parent.parent / "code")',
    'os.path.join(os.getcwd(), "../code")',
    'Path.cwd().parent / "code"',
    'os.path.abspath("../code")',
])
def test_launcher_paths_resolve(tmp_path, expression):
    write(tmp_path, {
        "code/train.py": "import torch.distributed as dist\ndist.init_process_group(backend='smddp')\n",
        "launch/submit.py": f"""
            import os
            from pathlib import Path
            from sagemaker.pytorch import PyTorch
            PyTorch(entry_point="train.py", source_dir={expression}, instance_type="ml.g5.12xlarge", instance_count=2)
        """,
    })
    report = run_preflight(tmp_path / "launch" / "submit.py")
    assert [s.name for s in report.scripts] == ["train.py"]
    assert [f.rule_id for f in report.findings] == ["PF-SMDDP-INSTANCE"]


# ---------------------------------------------------------------- SMDDP in use


def test_a_guarded_smddp_import_is_not_smddp_when_the_job_passes_backend_nccl():
    report = run_preflight(CORPUS / "c03_guard_hp_nccl" / "launch.py")
    assert report.findings == ()
    assert report.jobs[0].facts.smddp.backend == "nccl"


def test_the_argparse_default_decides_when_the_job_passes_no_backend():
    [f] = run_preflight(CORPUS / "c04_guard_default_smddp" / "launch.py").findings
    assert (f.rule_id, f.severity) == ("PF-SMDDP-INSTANCE", "error")
    assert "train.py:16" in f.message and "ml.p5.48xlarge" in f.message


def test_an_undecidable_backend_is_a_warning_saying_on_what_it_depends():
    [f] = run_preflight(CORPUS / "c05_guard_unknown" / "launch.py").findings
    assert (f.rule_id, f.severity) == ("PF-SMDDP-INSTANCE", "warning")
    assert "hyperparameter backend" in f.message


@pytest.mark.parametrize("hyperparameters, expected", [
    ('{"use_smddp": "False"}', []), ('{"use_smddp": True}', ["error"]), ("{}", []),
    ("HP", ["warning"]),  # hyperparameters preflight cannot read: the flag may be set
])
def test_a_boolean_hyperparameter_guard_is_evaluated_as_text(tmp_path, hyperparameters, expected):
    write(tmp_path, {
        "code/train.py": """
            import argparse
            import torch.distributed as dist
            p = argparse.ArgumentParser()
            p.add_argument("--use_smddp", type=bool, default=False)
            args = p.parse_args()
            if args.use_smddp:
                import smdistributed.dataparallel.torch.torch_smddp
                dist.init_process_group("smddp")
            else:
                dist.init_process_group("nccl")
        """,
        "launch.py": f"""
            from sagemaker.pytorch import PyTorch
            PyTorch(entry_point="train.py", source_dir="code", instance_type="ml.g5.12xlarge", instance_count=2,
                    hyperparameters={hyperparameters})
        """,
    })
    found = by_rule(run_preflight(tmp_path / "launch.py"), "PF-SMDDP-INSTANCE")
    assert [f.severity for f in found] == expected


def test_pytorchddp_on_g5_with_nccl_is_a_launcher_warning_not_an_error():
    [f] = run_preflight(CORPUS / "c06_pytorchddp_g5" / "train.ipynb").findings
    assert (f.rule_id, f.severity) == ("PF-SMDDP-LAUNCHER", "warning")
    assert "mpirun and smddprun" in f.message and "2.257.7" in f.message and "'nccl'" in f.message
    assert "torch_distributed" in f.fix


def test_smddp_where_it_runs_is_not_a_finding():
    assert run_preflight(CORPUS / "c23_pytorchddp_p4d" / "launch.py").findings == ()


# ---------------------------------------------------------------- loaders


@pytest.mark.parametrize("case", ["c07_fabric/launch.py", "c08_accelerate/launch.py", "c09_hf_trainer/hf.ipynb",
                                  "c10_lightning/launch.py", "c11_deepspeed/launch.py"])
def test_a_wrapper_that_shards_the_loader_is_not_a_sampler_finding(case):
    assert by_rule(run_preflight(CORPUS / case), "PF-DATALOADER-SAMPLER") == []


def test_the_same_loader_without_the_wrapper_is_flagged(tmp_path):
    text = (CORPUS / "c07_fabric" / "fabric_train.py").read_text().replace(
        "    loader = fabric.setup_dataloaders(loader)\n", "")
    write(tmp_path, {"fabric_train.py": text, "launch.py": (CORPUS / "c07_fabric" / "launch.py").read_text()})
    [f] = by_rule(run_preflight(tmp_path / "launch.py"), "PF-DATALOADER-SAMPLER")
    assert f.severity == "warning" and f.location == "fabric_train.py:12"


def test_ranks_that_run_no_collective_cannot_hang_on_uneven_batches(tmp_path):
    write(tmp_path, {"train.py": """
        import torch.distributed as dist
        from torch.utils.data import DataLoader
        dist.init_process_group("nccl")
        for batch in DataLoader(list(range(dist.get_rank(), 1001, 8))):
            print(batch)
    """, "job.yaml": "entry_point: train.py\ninstance_type: ml.p4d.24xlarge\ninstance_count: 2\n"})
    assert run_preflight(tmp_path / "job.yaml").findings == ()


# ---------------------------------------------------------------- checkpoints


def test_two_entry_points_in_one_source_dir_are_not_tied_to_each_other():
    report = run_preflight(CORPUS / "c12_two_entries" / "launch.py")
    pretrain, finetune = report.jobs
    assert [f.severity for f in pretrain.findings] == ["warning"] and finetune.findings == ()


def test_optimizer_and_scheduler_state_dicts_and_a_resume_into_the_wrapper_are_fine():
    assert run_preflight(CORPUS / "c13_optimizer_resume" / "launch.py").findings == ()


def test_a_resume_before_the_wrap_is_one_error_naming_both_sites():
    [f] = run_preflight(CORPUS / "c14_resume_before_wrap" / "launch.py").findings
    assert (f.rule_id, f.severity, f.location) == ("PF-DDP-PREFIX", "error", "train.py:19")
    assert "train.py:26" in f.message and '"model" entry' in f.message


def test_a_model_fn_loading_the_ddp_save_is_an_error_and_a_stripping_one_is_not():
    [f] = run_preflight(CORPUS / "c15_model_fn" / "launch.py").findings
    assert (f.rule_id, f.severity, f.location) == ("PF-DDP-PREFIX", "error", "train.py:15")
    assert "train.py:25" in f.message and "model directory" in f.message
    assert run_preflight(CORPUS / "c16_model_fn_strips" / "launch.py").findings == ()


def test_a_load_of_another_file_is_not_tied_to_the_ddp_save():
    [f] = run_preflight(CORPUS / "c20_different_names" / "launch.py").findings
    assert (f.severity, f.location) == ("warning", "train.py:12")


@pytest.mark.parametrize("save, load, tied", [
    ('"/opt/ml/checkpoints/a.pt"', '"/opt/ml/checkpoints/a.pt"', True),
    ('"/opt/ml/checkpoints/a.pt"', '"/opt/ml/checkpoints/b.pt"', False),
    ("PATH", "PATH", True),
    ('os.path.join(args.out, "m.pt")', 'os.path.join(args.out, "m.pt")', True),
    ('os.path.join(args.out, "m.pt")', 'os.path.join(args.other, "m.pt")', False),
])
def test_a_load_is_tied_to_a_save_only_by_the_same_file(tmp_path, save, load, tied):
    write(tmp_path, {"train.py": f"""
        import os
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        PATH = "/opt/ml/checkpoints/x.pt"
        def save(args):
            ddp = DDP(torch.nn.Linear(2, 2))
            torch.save(ddp.state_dict(), {save})
        def load(args):
            net = torch.nn.Linear(2, 2)
            net.load_state_dict(torch.load({load}))
    """, "job.yaml": "entry_point: train.py\n"})
    found = [(f.severity, f.location) for f in by_rule(run_preflight(tmp_path / "job.yaml"), "PF-DDP-PREFIX")]
    assert found == ([("error", "train.py:10")] if tied else [("warning", "train.py:7")])


def test_strict_false_and_a_visible_module_strip_are_fine(tmp_path):
    for load in ("net.load_state_dict(torch.load(P), strict=False)",
                 'net.load_state_dict({k.replace("module.", ""): v for k, v in torch.load(P).items()})'):
        write(tmp_path, {"train.py": f"""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            P = "/opt/ml/checkpoints/x.pt"
            ddp = DDP(torch.nn.Linear(2, 2))
            torch.save(ddp.state_dict(), P)
            net = torch.nn.Linear(2, 2)
            {load}
        """, "job.yaml": "entry_point: train.py\n"})
        assert by_rule(run_preflight(tmp_path / "job.yaml"), "PF-DDP-PREFIX") == [], load


# ---------------------------------------------------------------- SDK v3 run time


def test_a_model_trainer_without_stopping_condition_is_warned_about_the_one_hour_default(tmp_path):
    [f] = run_preflight(CORPUS / "c19_trainer_no_stop" / "submit.py").findings
    assert (f.rule_id, f.severity, f.location) == ("PF-STOPPING-CONDITION", "warning", "submit.py:5: stopping_condition")
    assert "DEFAULT_MAX_RUNTIME_IN_SECONDS = 3600" in f.message
    text = (CORPUS / "c19_trainer_no_stop" / "submit.py").read_text()
    for given, expected in (("StoppingCondition(max_runtime_in_seconds=86400)", []),
                            ("StoppingCondition(max_wait_time_in_seconds=86400)", ["PF-STOPPING-CONDITION"])):
        changed = text.replace("    distributed=Torchrun(),\n", f"    distributed=Torchrun(),\n    stopping_condition={given},\n")
        changed = changed.replace("import Compute, SourceCode", "import Compute, SourceCode, StoppingCondition")
        (tmp_path / "submit.py").write_text(changed)
        (tmp_path / "src").mkdir(exist_ok=True)
        (tmp_path / "src" / "train.py").write_text("print('train')\n")
        assert [f.rule_id for f in run_preflight(tmp_path / "submit.py").findings] == expected


# ---------------------------------------------------------------- one finding per problem


def test_a_script_shared_by_two_jobs_is_reported_once(tmp_path):
    write(tmp_path, {"code/train.py": "import smdistributed.dataparallel.torch.distributed as sdp\nsdp.init_process_group()\n",
                     "launch.py": """
        from sagemaker.pytorch import PyTorch
        a = PyTorch(entry_point="train.py", source_dir="code", instance_type="ml.p4d.24xlarge", instance_count=2)
        b = PyTorch(entry_point="train.py", source_dir="code", instance_type="ml.p4de.24xlarge", instance_count=2)
    """})
    report = run_preflight(tmp_path / "launch.py")
    assert [f.rule_id for f in report.findings] == ["PF-DEPRECATED-SMDDP-API"]


def test_a_hugging_face_trainer_under_the_smdistributed_launcher_is_a_warning_saying_why():
    [f] = run_preflight(CORPUS / "c26_hf_smdistributed_g5" / "launch.py").findings
    assert (f.rule_id, f.severity) == ("PF-SMDDP-INSTANCE", "warning")
    assert "transformers.Trainer" in f.message and "UNCONFIRMED" in f.message


# ---------------------------------------------------------------- every finding of the corpus, word for word

FINDINGS = ROOT / "tests" / "snapshots" / "preflight_corpus_findings.json"


#: the unit tests' own inputs (tests/fixtures/preflight) beside the corpus
_FIXTURE_INPUTS = ("bad/job.yaml", "uneven/job.json", "two_files/launch.py", "typo/job.yaml", "trainer/train_llm.py",
                   "api/describe-stalled.json", "api/create-request.json", "clean/mnist.ipynb", "launcher/launch.py",
                   "notebook/launch.ipynb", "model_trainer/job.yaml", "good/job.yaml")


def _corpus_findings() -> dict[str, list[dict[str, str]]]:
    manifest = json.loads((CORPUS / "manifest.json").read_text())["launchers"]
    fixtures = ROOT / "tests" / "fixtures" / "preflight"
    out = {}
    for launcher in [*sorted(manifest), *(f"fixtures/{name}" for name in _FIXTURE_INPUTS)]:
        path = fixtures / launcher.split("/", 1)[1] if launcher.startswith("fixtures/") else CORPUS / launcher
        report = run_preflight(path)
        here = str(path.parent.resolve())  # absolute paths the messages name, the same on every machine
        out[launcher] = [{"rule": f.rule_id, "severity": f.severity, "location": f.location,
                          "message": f.message.replace(here, "<here>"), "fix": f.fix.replace(here, "<here>")}
                         for job in report.jobs for f in job.findings]
    return out


def test_every_finding_of_the_corpus_reads_as_it_did_when_reviewed():
    """A wrong word in a message or a fix fails here (the corpus bar above counts rule ids only).
    After a deliberate change: SMDDP_UPDATE_SNAPSHOTS=1 rewrites the file; review its diff."""
    import os

    found = _corpus_findings()
    if os.environ.get("SMDDP_UPDATE_SNAPSHOTS") == "1":
        FINDINGS.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    assert found == json.loads(FINDINGS.read_text())
