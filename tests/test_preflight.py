"""Preflight rules (smddp_infra.preflight): job files, script analysis with ast, outputs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, Optional

import pytest

from smddp_infra.errors import SmddpError
from smddp_infra.preflight import PreflightInputError, run_preflight
from smddp_infra.preflight.findings import RULES
from smddp_infra.preflight.job import MODEL_TRAINER_KEYS
from smddp_infra.preflight.script import analyse_source

FIXTURES = Path(__file__).parent / "fixtures" / "preflight"
SMDDP = {"smdistributed": {"dataparallel": {"enabled": True}}}
PLAIN_SCRIPT = "import torch\n"


def job(tmp_path: Path, settings: dict[str, Any], script: Optional[str] = PLAIN_SCRIPT, *, outputs: Optional[Path] = None):
    """Write a job file (+ train.py) and run preflight on it."""
    settings = dict(settings)
    if script is not None:
        (tmp_path / "train.py").write_text(textwrap.dedent(script))
        if MODEL_TRAINER_KEYS & settings.keys():
            settings.setdefault("source_code", {"entry_script": "train.py"})
        else:
            settings.setdefault("entry_point", "train.py")
    path = tmp_path / "job.json"
    path.write_text(json.dumps(settings))
    return run_preflight(path, outputs=outputs)


def rule_ids(report) -> list[str]:
    return [f.rule_id for f in report.findings]


def only(report, rule_id: str):
    found = [f for f in report.findings if f.rule_id == rule_id]
    assert len(found) == 1, report.findings
    return found[0]


# ---------------------------------------------------------------- fixtures end to end


def test_good_job_has_no_findings_and_reads_the_entry_point_inside_source_dir():
    report = run_preflight(FIXTURES / "good" / "job.yaml")
    assert report.findings == ()
    assert report.exit_code == 0
    assert [s.path for s in report.scripts] == [FIXTURES / "good" / "src" / "train.py"]
    assert report.world_size == 16  # 2 x ml.p4d.24xlarge x 8 GPUs


def test_bad_job_trips_every_job_and_script_rule_it_contains():
    report = run_preflight(FIXTURES / "bad" / "job.yaml", outputs=FIXTURES / "outputs" / "cdk-outputs.json")
    assert sorted(set(rule_ids(report))) == sorted({
        "PF-DEBUGGER-CHECKPOINT", "PF-DEPRECATED-SMDDP-API", "PF-DATALOADER-SAMPLER",
        "PF-CHECKPOINT-URI-SLASH", "PF-SUBNETS-MULTI-AZ", "PF-DDP-PREFIX",
    })
    assert report.exit_code == 1
    # errors first
    severities = [f.severity for f in report.findings]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)


def test_every_finding_carries_the_symptom_of_its_rule():
    report = run_preflight(FIXTURES / "bad" / "job.yaml")
    for f in report.findings:
        assert f.symptom == RULES[f.rule_id].symptom
        assert f.fix


# ---------------------------------------------------------------- Debugger + checkpointing + SMDDP


def test_debugger_default_with_only_checkpoint_s3_uri_and_smddp_is_an_error():
    f = only(run_preflight(FIXTURES / "bad" / "job.yaml"), "PF-DEBUGGER-CHECKPOINT")
    assert f.severity == "error"
    assert f.symptom == "SMDebug Does Not Currently Support Distributed Training Jobs With Checkpointing Enabled"
    assert "checkpoint_local_path" in f.message
    assert f.fix.startswith("set debugger_hook_config: false")


def test_both_checkpoint_args_let_the_pytorch_estimator_turn_debugger_off_itself(tmp_path):
    report = job(tmp_path, {"distribution": SMDDP, "checkpoint_s3_uri": "s3://b/c/", "checkpoint_local_path": "/opt/ml/checkpoints"})
    f = only(report, "PF-DEBUGGER-CHECKPOINT")
    assert f.severity == "info"
    assert report.exit_code == 0


def test_an_explicit_hook_that_the_sdk_will_silently_drop_is_a_warning(tmp_path):
    report = job(tmp_path, {"distribution": SMDDP, "checkpoint_s3_uri": "s3://b/c/",
                            "checkpoint_local_path": "/opt/ml/checkpoints",
                            "debugger_hook_config": {"s3_output_path": "s3://b/debug/"}})
    assert only(report, "PF-DEBUGGER-CHECKPOINT").severity == "warning"


_BOTH = {"checkpoint_s3_uri": "s3://b/c/", "checkpoint_local_path": "/opt/ml/checkpoints"}
_SMDDP_SCRIPT = 'import torch.distributed as dist\ndist.init_process_group(backend="smddp")\n'
_SMDDP_SEEN = 'train.py:2 `dist.init_process_group(backend="smddp")`'
_DEFAULT_HOOK = "debugger_hook_config is not set, so the SDK adds its default hook"


def _auto_off(estimator: str) -> tuple[str, str, str]:
    return ("info",
            f"{_DEFAULT_HOOK}; the {estimator} estimator turns it off only because both checkpoint_s3_uri and "
            "checkpoint_local_path are set -- another estimator class, ModelTrainer or a raw CreateTrainingJob "
            "request would not",
            "set debugger_hook_config: false explicitly")


_NOT_OFF = ("error",
            f"Debugger ({_DEFAULT_HOOK}), SageMaker checkpointing (checkpoint_s3_uri=s3://b/c/) and SMDDP ({_SMDDP_SEEN}) "
            "are all on, and the TensorFlow estimator turns the Debugger off only for a distributed job (instance_count "
            "above 1 or a distribution), which this one is not",
            "set debugger_hook_config: false (or, to keep Debugger, remove checkpoint_s3_uri and write checkpoints "
            "manually in the training script)")


@pytest.mark.parametrize("settings, expected", [
    # the framework estimators turn the hook off only for a distributed job: several instances, a
    # distribution, or the PyTorch estimator (which always counts as one)
    ({"estimator": "TensorFlow", "instance_count": 1}, _NOT_OFF),
    ({"estimator": "TensorFlow"}, _NOT_OFF),
    ({"estimator": "TensorFlow", "instance_count": 2}, _auto_off("TensorFlow")),
    ({"estimator": "TensorFlow", "instance_count": 1, "distribution": SMDDP}, _auto_off("TensorFlow")),
    ({"estimator": "PyTorch", "instance_count": 1}, _auto_off("PyTorch")),
    ({"estimator": "PyTorch", "instance_count": 1, "debugger_hook_config": None}, _auto_off("PyTorch")),
    ({"estimator": "PyTorch", "instance_count": 1, "debugger_hook_config": {"s3_output_path": "s3://b/debug/"}},
     ("warning",
      f"debugger_hook_config configures a hook, but with checkpoint_s3_uri and checkpoint_local_path both set and SMDDP "
      f"on ({_SMDDP_SEEN}) the PyTorch estimator silently replaces it with False: the job runs without the Debugger "
      "you configured",
      "set debugger_hook_config: false to say so; to keep Debugger, remove checkpoint_s3_uri and checkpoint_local_path "
      "and checkpoint manually in the script")),
])
def test_when_the_estimator_turns_the_debugger_off_itself_word_for_word(tmp_path, settings, expected):
    f = only(job(tmp_path, {**_BOTH, **settings}, _SMDDP_SCRIPT), "PF-DEBUGGER-CHECKPOINT")
    assert (f.severity, f.location, f.message, f.fix) == (expected[0], "job.json: debugger_hook_config", *expected[1:])


@pytest.mark.parametrize("estimator", ["Estimator", "HuggingFace"])
def test_estimators_that_never_disable_debugger_are_errors_even_with_both_args(tmp_path, estimator):
    report = job(tmp_path, {"estimator": estimator, "distribution": SMDDP, "checkpoint_s3_uri": "s3://b/c/",
                            "checkpoint_local_path": "/opt/ml/checkpoints"})
    f = only(report, "PF-DEBUGGER-CHECKPOINT")
    assert f.severity == "error" and f"the {estimator} estimator never turns the Debugger off" in f.message


@pytest.mark.parametrize("hook", [None, {}])
def test_null_and_empty_hook_config_mean_the_default_hook(tmp_path, hook):
    report = job(tmp_path, {"distribution": SMDDP, "checkpoint_s3_uri": "s3://b/c/", "debugger_hook_config": hook})
    assert only(report, "PF-DEBUGGER-CHECKPOINT").severity == "error"


def test_debugger_hook_config_false_is_the_fix(tmp_path):
    report = job(tmp_path, {"distribution": SMDDP, "checkpoint_s3_uri": "s3://b/c/", "debugger_hook_config": False})
    assert "PF-DEBUGGER-CHECKPOINT" not in rule_ids(report)


def test_no_checkpointing_or_no_smddp_means_no_debugger_finding(tmp_path):
    assert "PF-DEBUGGER-CHECKPOINT" not in rule_ids(job(tmp_path, {"distribution": SMDDP}))
    assert "PF-DEBUGGER-CHECKPOINT" not in rule_ids(job(tmp_path, {"checkpoint_s3_uri": "s3://b/c/"}))


def test_smddp_chosen_in_the_script_counts_as_smddp(tmp_path):
    script = 'import torch.distributed as dist\ndist.init_process_group(backend="smddp")\n'
    f = only(job(tmp_path, {"checkpoint_s3_uri": "s3://b/c/"}, script), "PF-DEBUGGER-CHECKPOINT")
    assert 'init_process_group(backend="smddp")' in f.message and f.severity == "error"


def test_pytorchddp_distribution_is_smddp_to_the_sdk(tmp_path):
    report = job(tmp_path, {"distribution": {"pytorchddp": {"enabled": True}}, "checkpoint_s3_uri": "s3://b/c/"})
    assert only(report, "PF-DEBUGGER-CHECKPOINT").severity == "error"


def test_regions_without_debugger_get_no_debugger_finding(tmp_path):
    report = job(tmp_path, {"region": "ap-southeast-3", "distribution": SMDDP, "checkpoint_s3_uri": "s3://b/c/"})
    assert "PF-DEBUGGER-CHECKPOINT" not in rule_ids(report)


@pytest.mark.parametrize("hook, findings", [
    ("", ["error"]),  # the control: no hook written, the SDK's default hook is on
    ("debugger_hook_config=make_hook(), ", []),  # written, but preflight cannot resolve it: not judged
])
def test_a_hook_preflight_cannot_resolve_is_not_judged(tmp_path, hook, findings):
    (tmp_path / "train.py").write_text(PLAIN_SCRIPT)
    (tmp_path / "launch.py").write_text(
        "from sagemaker.pytorch import PyTorch\n"
        'PyTorch(entry_point="train.py", instance_type="ml.p4d.24xlarge", instance_count=2, '
        f'checkpoint_s3_uri="s3://b/c/", {hook}distribution={SMDDP!r})\n')
    report = run_preflight(tmp_path / "launch.py")
    assert [f.severity for f in report.findings if f.rule_id == "PF-DEBUGGER-CHECKPOINT"] == findings


def test_model_trainer_sends_no_debugger_config():
    report = run_preflight(FIXTURES / "model_trainer" / "job.yaml")
    assert report.job.shape == "model_trainer"
    assert "PF-DEBUGGER-CHECKPOINT" not in rule_ids(report)


# ---------------------------------------------------------------- deprecated smdistributed APIs


@pytest.mark.parametrize(
    "source, line, module",
    [
        ("import smdistributed.dataparallel.torch.distributed as dist", 1, "smdistributed.dataparallel.torch.distributed"),
        ("import smdistributed.dataparallel.torch.distributed", 1, "smdistributed.dataparallel.torch.distributed"),
        ("import smdistributed.dataparallel.torch.parallel.distributed as x", 1, "smdistributed.dataparallel.torch.parallel.distributed"),
        ("from smdistributed.dataparallel.torch import distributed as dist", 1, "smdistributed.dataparallel.torch.distributed"),
        ("from smdistributed.dataparallel.torch import parallel", 1, "smdistributed.dataparallel.torch.parallel"),
        ("from smdistributed.dataparallel.torch import dist", 1, "smdistributed.dataparallel.torch.dist"),
        ("from smdistributed.dataparallel.torch.parallel.distributed import DistributedDataParallel as DDP", 1,
         "smdistributed.dataparallel.torch.parallel.distributed"),
        ("from smdistributed.dataparallel.torch.distributed import init_process_group", 1, "smdistributed.dataparallel.torch.distributed"),
        ("import smdistributed.dataparallel.torch as sdp\nsdp.distributed.init_process_group()", 2, "smdistributed.dataparallel.torch.distributed"),
        ("import smdistributed.dataparallel.torch\nsmdistributed.dataparallel.torch.parallel.DistributedDataParallel(m)", 2,
         "smdistributed.dataparallel.torch.parallel"),
        ("import importlib\nimportlib.import_module('smdistributed.dataparallel.torch.distributed')", 2, "smdistributed.dataparallel.torch.distributed"),
        ("def main():\n    try:\n        import smdistributed.dataparallel.torch.distributed as dist\n    except ImportError:\n        pass", 3,
         "smdistributed.dataparallel.torch.distributed"),
    ],
)
def test_every_import_form_of_the_deprecated_api_is_found(source, line, module):
    facts = analyse_source(source, path=Path("train.py"))
    assert [(d.line, d.module) for d in facts.deprecated] == [(line, module)]


@pytest.mark.parametrize(
    "source",
    [
        "import smdistributed.dataparallel.torch.torch_smddp",
        "from smdistributed.dataparallel.torch import torch_smddp",
        "import torch.distributed as dist\ndist.init_process_group(backend='smddp')",
        "# import smdistributed.dataparallel.torch.distributed as dist",
        "NOTE = 'import smdistributed.dataparallel.torch.distributed'",
        "from .torch import distributed",
        "import smdistributed.dataparallel.torch.distributedx",
    ],
)
def test_the_new_api_comments_and_strings_are_not_flagged(source):
    assert analyse_source(source, path=Path("train.py")).deprecated == ()


def test_each_use_of_a_deprecated_alias_is_not_reported_again():
    source = "import smdistributed.dataparallel.torch.distributed as dist\ndist.init_process_group()\ndist.get_rank()\n"
    assert [d.line for d in analyse_source(source, path=Path("t.py")).deprecated] == [1]


def test_deprecated_api_finding_gives_the_replacement():
    report = run_preflight(FIXTURES / "bad" / "job.yaml")
    found = [f for f in report.findings if f.rule_id == "PF-DEPRECATED-SMDDP-API"]
    assert [f.location for f in found] == ["train.py:2", "train.py:4"]  # not the comment or the string
    assert all(f.severity == "warning" for f in found)
    assert 'import smdistributed.dataparallel.torch.torch_smddp' in found[0].fix
    assert 'torch.distributed.init_process_group(backend="smddp")' in found[0].fix
    assert "from torch.nn.parallel import DistributedDataParallel" in found[1].fix


# ---------------------------------------------------------------- uneven batches


def test_uneven_split_is_an_error_with_the_batch_counts_per_rank():
    f = only(run_preflight(FIXTURES / "uneven" / "job.json"), "PF-UNEVEN-BATCHES")
    assert f.severity == "error"
    assert "ranks 0-4 run 101 batches, ranks 5-15 run 100" in f.message
    assert "drop_last: true" in f.fix
    assert "num_samples: 51200" in f.fix
    assert "101 batches on every rank" in f.fix


@pytest.mark.parametrize("change", [{"drop_last": True}, {"num_samples": 51200}, {"sharding": "distributed_sampler"}])
def test_each_suggested_setting_really_makes_the_counts_equal(tmp_path, change):
    settings = json.loads((FIXTURES / "uneven" / "job.json").read_text())
    script = (FIXTURES / "uneven" / "train.py").read_text()
    assert "PF-UNEVEN-BATCHES" in rule_ids(job(tmp_path, settings, script))
    assert "PF-UNEVEN-BATCHES" not in rule_ids(job(tmp_path, {**settings, **change}, script))


def test_one_extra_sample_on_rank_zero_is_named_as_rank_0(tmp_path):
    f = only(job(tmp_path, {"num_samples": 5, "batch_size": 2, "world_size": 2, "drop_last": False}), "PF-UNEVEN-BATCHES")
    assert "rank 0 run 2 batches, rank 1 run 1" in f.message


def test_a_script_with_distributed_sampler_pads_so_the_numbers_do_not_matter(tmp_path):
    script = "from torch.utils.data import DataLoader, DistributedSampler\nDataLoader(ds, batch_size=32, sampler=DistributedSampler(ds))\n"
    settings = json.loads((FIXTURES / "uneven" / "job.json").read_text())
    assert "PF-UNEVEN-BATCHES" not in rule_ids(job(tmp_path, settings, script))
    # ...unless the job file says the data is split by hand
    assert "PF-UNEVEN-BATCHES" in rule_ids(job(tmp_path, {**settings, "sharding": "split"}, script))


def test_world_size_comes_from_the_instance_catalog_or_the_job(tmp_path):
    assert job(tmp_path, {"instance_type": "ml.trn1.32xlarge", "instance_count": 3}).world_size == 48
    assert job(tmp_path, {"instance_type": "ml.g5.48xlarge", "instance_count": 3}).world_size is None
    assert job(tmp_path, {"instance_type": "ml.g5.48xlarge", "instance_count": 3, "world_size": 24}).world_size == 24


# ---------------------------------------------------------------- DataLoader without DistributedSampler


@pytest.mark.parametrize(
    "call, flagged",
    [
        ("DataLoader(ds, batch_size=32)", True),
        ("DataLoader(ds, batch_size=32, shuffle=True, drop_last=False)", True),
        ("torch.utils.data.DataLoader(ds, batch_size=32)", True),
        ("DataLoader(ds, batch_size=32, sampler=RandomSampler(ds))", True),
        ("DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds))", False),
        ("DataLoader(ds, 32, False, DistributedSampler(ds))", False),
        ("DataLoader(ds, batch_size=32, sampler=sampler)", False),
        ("DataLoader(ds, batch_size=32, drop_last=True)", False),
        ("DataLoader(ds, batch_sampler=even_shards(n, w, 32, drop_last=True).batches(rank))", False),
        ("DataLoader(ds, **loader_kwargs)", False),
        ("DataLoader(ds, batch_size=32, sampler=custom)", False),  # unknown: benefit of the doubt
    ],
)
def test_dataloader_without_distributed_sampler_or_drop_last_is_flagged_when_numbers_are_unknown(tmp_path, call, flagged):
    script = f"""
        import torch
        from torch.utils.data import DataLoader, DistributedSampler, RandomSampler
        sampler = DistributedSampler(ds)
        loader = {call}
        for batch in loader:
            torch.distributed.all_reduce(batch)
    """
    report = job(tmp_path, {"instance_type": "ml.p4d.24xlarge", "instance_count": 2}, script)
    assert ("PF-DATALOADER-SAMPLER" in rule_ids(report)) is flagged
    if flagged:
        f = only(report, "PF-DATALOADER-SAMPLER")
        assert f.location == "train.py:5" and f.severity == "warning"


def test_single_process_jobs_need_no_sampler(tmp_path):
    report = job(tmp_path, {"world_size": 1}, "from torch.utils.data import DataLoader\nfor b in DataLoader(ds):\n    pass\n")
    assert "PF-DATALOADER-SAMPLER" not in rule_ids(report)


def test_known_numbers_replace_the_dataloader_guess(tmp_path):
    report = job(tmp_path, {"num_samples": 1024, "batch_size": 32, "world_size": 8},
                 "from torch.utils.data import DataLoader\nDataLoader(ds, batch_size=32)\n")
    assert report.findings == ()


# ---------------------------------------------------------------- checkpoint URI and local path


def test_checkpoint_uri_without_trailing_slash_gets_the_exact_fix(tmp_path):
    f = only(job(tmp_path, {"checkpoint_s3_uri": "s3://b/run-1/checkpoints"}), "PF-CHECKPOINT-URI-SLASH")
    assert f.severity == "warning"
    assert f.fix == "checkpoint_s3_uri: s3://b/run-1/checkpoints/"
    assert "PF-CHECKPOINT-URI-SLASH" not in rule_ids(job(tmp_path, {"checkpoint_s3_uri": "s3://b/run-1/checkpoints/"}))


def test_model_trainer_checkpoint_keys_are_named_in_its_own_shape():
    report = run_preflight(FIXTURES / "model_trainer" / "job.yaml")
    f = only(report, "PF-CHECKPOINT-LOCAL-PATH")
    assert f.severity == "error" and f.location == "train.py:10"
    assert "/opt/ml/checkpoints/latest.pt" in f.message
    assert f.fix.startswith("checkpoint_config.local_path: /opt/ml/checkpoints")


@pytest.mark.parametrize(
    "local_path, write, severity",
    [
        (None, 'torch.save(m, "/opt/ml/checkpoints/latest.pt")', None),
        (None, 'torch.save(m, os.path.join("/opt/ml/checkpoints", name))', None),
        (None, 'torch.save(m, f"/opt/ml/checkpoints/epoch-{e}.pt")', None),
        (None, 'torch.save(m, Path("/opt/ml/checkpoints") / "x.pt")', None),
        (None, 'torch.save(m, "/opt/ml/model/model.pt")', None),
        (None, 'open("/tmp/scratch.txt", "w")', None),
        (None, 'open("/opt/ml/ckpt/latest.pt", "r")', None),
        (None, 'torch.save(m, "/opt/ml/ckpt/latest.pt")', "error"),
        (None, 'torch.save(m, "checkpoints/latest.pt")', "error"),
        (None, 'torch.save(obj=m, f=os.path.join("/mnt/ckpt", name))', "error"),
        (None, 'open("/opt/ml/state.json", mode="w")', "warning"),
        (None, 'tsave(m, "/opt/ml/ckpt/latest.pt")', "error"),
        ("/opt/ml/ckpt", 'torch.save(m, CKPT_DIR + "/x.pt")', "error"),
        ("/opt/ml/ckpt", 'open(f"{CKPT_DIR}/state.json", "wb")', "error"),
        ("/opt/ml/ckpt", 'torch.save(m, "/opt/ml/ckpt/x.pt")', None),
        ("/opt/ml/ckpt/", 'torch.save(m, "/opt/ml/ckpt/sub/x.pt")', None),
    ],
)
def test_script_writes_outside_the_synced_local_path_are_found(tmp_path, local_path, write, severity):
    script = f"""
        import os
        from pathlib import Path
        import torch
        from torch import save as tsave
        CKPT_DIR = "/opt/ml/checkpoints"
        {write}
    """
    settings: dict[str, Any] = {"checkpoint_s3_uri": "s3://b/c/"}
    if local_path:
        settings["checkpoint_local_path"] = local_path
    report = job(tmp_path, settings, script)
    found = [f for f in report.findings if f.rule_id == "PF-CHECKPOINT-LOCAL-PATH"]
    assert [f.severity for f in found] == ([severity] if severity else [])


def test_without_sagemaker_checkpointing_writes_are_not_judged(tmp_path):
    report = job(tmp_path, {}, 'import torch\ntorch.save(m, "/opt/ml/ckpt/x.pt")\n')
    assert report.findings == ()


# ---------------------------------------------------------------- subnets in more than one AZ


def test_job_file_subnets_with_their_azs_in_two_zones_are_an_error(tmp_path):
    report = job(tmp_path, {"subnets": ["subnet-a", "subnet-b", "subnet-c"],
                            "subnet_availability_zones": {"subnet-a": "eu-west-1a", "subnet-b": "eu-west-1b", "subnet-c": "eu-west-1b"}})
    f = only(report, "PF-SUBNETS-MULTI-AZ")
    assert f.severity == "error"
    assert "eu-west-1a: subnet-a; eu-west-1b: subnet-b, subnet-c" in f.message
    assert f.fix.startswith("subnets: [subnet-b, subnet-c]")  # the zone with most subnets


def test_outputs_subnets_in_two_zones_are_an_error_and_the_stack_zone_is_kept(tmp_path):
    report = job(tmp_path, {}, outputs=FIXTURES / "outputs" / "cdk-outputs.json")
    f = only(report, "PF-SUBNETS-MULTI-AZ")
    assert f.location == "cdk-outputs.json: TrainingNetworkStack.TrainingJobConfig"
    assert f.fix.startswith("subnets: [subnet-0aaa1111] (only the subnets in us-east-1a)")


def test_outputs_without_per_subnet_azs_place_subnets_in_the_stack_zone(tmp_path):
    report = job(tmp_path, {"subnets": ["subnet-0aaa1111", "subnet-x"], "subnet_availability_zones": {"subnet-x": "us-east-1c"}},
                 outputs=FIXTURES / "outputs" / "cdk-outputs-single-az.json")
    assert "us-east-1a: subnet-0aaa1111; us-east-1c: subnet-x" in only(report, "PF-SUBNETS-MULTI-AZ").message


def test_subnets_in_one_zone_or_of_unknown_zone_are_fine(tmp_path):
    assert job(tmp_path, {"subnets": ["subnet-0aaa1111"]}, outputs=FIXTURES / "outputs" / "cdk-outputs.json").findings == ()
    assert job(tmp_path, {"subnets": ["subnet-a", "subnet-b"]}).findings == ()


@pytest.mark.parametrize(
    "outputs, message",
    [
        ({"Stack": {"Other": "x"}}, "holds no training network: no stack has a TrainingJobConfig output"),
        ({"Stack": {"TrainingJobConfig": "{not json"}}, "stack 'Stack': output TrainingJobConfig must be a JSON document"),
        ({"Stack": {"TrainingJobConfig": json.dumps({"subnets": []})}}, "output TrainingJobConfig is missing"),
        ({"Stack": {"TrainingJobConfig": json.dumps({**json.loads(json.loads(
            (FIXTURES / "outputs" / "cdk-outputs.json").read_text())["TrainingNetworkStack"]["TrainingJobConfig"]),
            "subnetAvailabilityZones": ["us-east-1a"]})}}, "must list one AZ per subnet (2)"),
    ],
)
def test_malformed_outputs_are_unreadable_input(tmp_path, outputs, message):
    path = tmp_path / "cdk-outputs.json"
    path.write_text(json.dumps(outputs))
    with pytest.raises(PreflightInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        job(tmp_path, {}, outputs=path)


# ---------------------------------------------------------------- job files


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"instance_count": 0}, "instance_count must be a whole number >= 1, got 0"),
        ({"compute": {"instance_count": "two"}}, "compute.instance_count must be a whole number >= 1, got 'two'"),
        ({"drop_last": "maybe"}, "drop_last must be true or false, got 'maybe'"),
        ({"debugger_hook_config": "off"}, "debugger_hook_config must be false, null or a DebuggerHookConfig mapping, got 'off'"),
        ({"checkpoint_s3_uri": "my-bucket/ckpt"}, "checkpoint_s3_uri must be an s3:// URI such as s3://bucket/checkpoints/, got 'my-bucket/ckpt'"),
        ({"sharding": "random"}, "sharding must be one of split, distributed_sampler, even_shards, got 'random'"),
        ({"instance_type": "ml.p4d.24xlarge", "compute": {"instance_count": 2}}, "mixes SDK v2 Estimator arguments (instance_type) with ModelTrainer settings (compute, source_code)"),
        ({"source_dir": "s3://b/code.tar.gz"}, "is an archive preflight cannot read"),
    ],
)
def test_bad_job_settings_name_the_setting_and_the_value(tmp_path, settings, message):
    with pytest.raises(PreflightInputError) as caught:
        job(tmp_path, settings)
    assert message in str(caught.value)
    assert isinstance(caught.value, SmddpError)


def test_explicit_scripts_replace_the_entry_point(tmp_path):
    other = tmp_path / "other.py"
    other.write_text("import smdistributed.dataparallel.torch.distributed\n")
    path = tmp_path / "job.yaml"
    path.write_text("entry_point: missing.py\n")
    report = run_preflight(path, [other])
    assert [s.path for s in report.scripts] == [other]
    assert rule_ids(report) == ["PF-DEPRECATED-SMDDP-API"]


def test_a_job_without_entry_point_is_judged_on_its_settings_alone(tmp_path):
    report = job(tmp_path, {"checkpoint_s3_uri": "s3://b/c"}, script=None)
    assert report.scripts == () and rule_ids(report) == ["PF-CHECKPOINT-URI-SLASH"]


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("job.yaml", "entry_point: [", "is not valid YAML"),
        ("job.json", '{"entry_point": ', "is not valid JSON"),
        ("job.yaml", "- a\n- b\n", "must hold a mapping of Estimator arguments, got list"),
        ("job.yaml", "entry_point: nowhere.py\n", "training script"),
    ],
)
def test_unreadable_input_raises_one_clear_error(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(PreflightInputError, match=message):
        run_preflight(path)


def test_a_script_with_a_syntax_error_is_unreadable_input():
    with pytest.raises(PreflightInputError, match=r"syntax_error.py is not valid Python: .* at line 1"):
        run_preflight(FIXTURES / "broken" / "job.yaml")


# ---------------------------------------------------------------- keys nobody knows (PF-UNKNOWN-KEY)


def unknown(report) -> dict[str, str]:
    """location key -> message of every PF-UNKNOWN-KEY finding."""
    return {f.location.split(": ", 1)[1]: f.message for f in report.findings if f.rule_id == "PF-UNKNOWN-KEY"}


def test_a_misspelt_batch_fact_is_a_warning_naming_the_nearest_key_instead_of_a_silent_skip(tmp_path):
    settings = json.loads((FIXTURES / "uneven" / "job.json").read_text())
    settings["dataset_size"] = settings.pop("num_samples")  # PF-UNEVEN-BATCHES needs num_samples
    settings["batch_sz"] = settings.pop("batch_size")
    report = job(tmp_path, settings)
    assert "PF-UNEVEN-BATCHES" not in rule_ids(report)
    found = unknown(report)
    assert set(found) == {"dataset_size", "batch_sz"}
    assert found["dataset_size"].endswith("did you mean num_samples?")
    assert found["batch_sz"].endswith("did you mean batch_size?")
    f = [f for f in report.findings if f.location.endswith("dataset_size")][0]
    assert (f.severity, f.fix) == ("warning", "rename dataset_size to num_samples")
    assert "PF-UNEVEN-BATCHES" in f.symptom
    assert report.exit_code == 0  # a warning: the key may be meant for a tool of the user's


@pytest.mark.parametrize("key, nearest", [
    ("instance_cont", "instance_count"),
    ("Instance-Type", "instance_type"),
    ("checkpoint_s3_url", "checkpoint_s3_uri"),
    ("train_instance_count", "instance_count"),  # SDK v1 name: the SDK maps it, preflight does not read it
    ("per_device_batch_size", "batch_size"),
    ("zzz_unrelated", None),
])
def test_an_unknown_key_is_named_with_its_nearest_known_key(tmp_path, key, nearest):
    report = job(tmp_path, {"instance_type": "ml.p4d.24xlarge", key: 1})
    [f] = [f for f in report.findings if f.rule_id == "PF-UNKNOWN-KEY"]
    assert f.location == f"job.json: {key}"
    if nearest:
        assert f.message.endswith(f"did you mean {nearest}?") and f.fix == f"rename {key} to {nearest}"
    else:
        assert f.message == f"{key} is neither a setting preflight reads nor an SDK v2 Estimator or fit() argument: both ignore it"
        assert f.fix == f"remove {key}, or spell it as the SDK does"


#: Estimator keyword arguments real jobs pass that preflight has no rule for.
COMMON_SDK_V2_ARGS = {
    "hyperparameters": {"epochs": 3}, "framework_version": "2.3", "py_version": "py311",
    "role": "arn:aws:iam::123456789012:role/Training", "output_path": "s3://b/out/", "code_location": "s3://b/code/",
    "source_dir": ".", "image_uri": "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1", "volume_size": 100,
    "max_run": 86400, "environment": {"NCCL_DEBUG": "INFO"}, "tags": [{"Key": "team", "Value": "ml"}],
    "base_job_name": "resnet", "subnets": ["subnet-0aaa1111"], "security_group_ids": ["sg-0123456789abcdef0"],
    "encrypt_inter_container_traffic": True, "disable_profiler": True, "use_spot_instances": True,
    "max_wait": 90000, "sagemaker_session": None, "keep_alive_period_in_seconds": 600, "model_dir": "/opt/ml/model",
    "inputs": {"training": "s3://b/data/"}, "job_name": "resnet-1", "wait": False, "logs": "All",
    "estimator": "PyTorch", "region": "us-east-1", "num_samples": 1024, "batch_size": 8, "world_size": 16,
    "drop_last": True, "sharding": "split", "subnet_availability_zones": {"subnet-0aaa1111": "us-east-1a"},
}


def test_sdk_v2_estimator_and_fit_arguments_and_preflight_facts_are_not_flagged(tmp_path):
    report = job(tmp_path, {"instance_type": "ml.p4d.24xlarge", "instance_count": 2, **COMMON_SDK_V2_ARGS})
    assert unknown(report) == {}


def test_model_trainer_fields_are_known_and_typos_in_its_sections_are_named_with_the_section(tmp_path):
    settings = {
        "role": "arn:aws:iam::123456789012:role/Training", "training_image": "img:1", "base_job_name": "llm",
        "hyperparameters": {"lr": 0.1}, "environment": {}, "distributed": {"Torchrun": {}},
        "training_input_mode": "File", "input_data_config": [], "stopping_condition": {}, "notes": ["from job-config"],
        "compute": {"instance_type": "ml.p5.48xlarge", "instance_cont": 4, "volume_size_in_gb": 500},
        "networking": {"subnets": ["subnet-0aaa1111"], "security_group_ids": ["sg-1"]},
        "checkpoint_config": {"s3_uri": "s3://b/ckpt/", "local_pth": "/opt/ml/ckpt"},
        "framework_version": "2.3",  # an SDK v2 argument: ModelTrainer has no such field
    }
    found = unknown(job(tmp_path, settings))
    assert set(found) == {"compute.instance_cont", "checkpoint_config.local_pth", "framework_version"}
    assert found["compute.instance_cont"].endswith("did you mean compute.instance_count?")
    assert found["checkpoint_config.local_pth"].endswith("did you mean checkpoint_config.local_path?")
    assert "nor a ModelTrainer setting" in found["framework_version"]


def test_the_nested_job_config_form_is_checked_inside_estimator(tmp_path):
    path = tmp_path / "job.json"
    path.write_text(json.dumps({"estimator": {"instance_type": "ml.p4d.24xlarge", "instance_cout": 2, "role": "r"},
                                "fit": {"inputs": {"training": "s3://b/d/"}}}))
    assert set(unknown(run_preflight(path))) == {"instance_cout"}


def test_the_known_sdk_names_match_the_installed_sdk_signatures():
    """The static tuples (preflight must not import sagemaker) against sagemaker itself."""
    import inspect

    from sagemaker.estimator import Estimator, EstimatorBase, Framework
    from sagemaker.huggingface import HuggingFace
    from sagemaker.modules.configs import CheckpointConfig, Compute, Networking, SourceCode
    from sagemaker.modules.train import ModelTrainer
    from sagemaker.mxnet import MXNet
    from sagemaker.pytorch import PyTorch
    from sagemaker.tensorflow import TensorFlow

    from smddp_infra.preflight import known_keys as K

    def named(function) -> set[str]:
        return {p.name for p in inspect.signature(function).parameters.values()
                if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}

    estimators = (EstimatorBase, Framework, Estimator, PyTorch, TensorFlow, MXNet, HuggingFace)
    assert set(K.SDK_V2_ESTIMATOR_ARGS) == set().union(*(named(c.__init__) for c in estimators))
    assert set(K.SDK_V2_FIT_ARGS) == named(EstimatorBase.fit)
    assert set(K.SDK_V2_MODEL_TRAINER_ARGS) == set(ModelTrainer.model_fields)  # v3: test_sagemaker_sdk_v3.py
    sections = {"compute": Compute, "source_code": SourceCode, "checkpoint_config": CheckpointConfig, "networking": Networking}
    assert {k: set(v) for k, v in K.SDK_V2_MODEL_TRAINER_SECTIONS.items()} == {k: set(c.model_fields) for k, c in sections.items()}
    # every name preflight reads is one of these or one of its own facts
    from smddp_infra.preflight.job import MODEL_TRAINER_KEYS, V2_KEYS

    assert V2_KEYS <= set(K.SDK_V2_ESTIMATOR_ARGS) and MODEL_TRAINER_KEYS <= set(K.MODEL_TRAINER_ARGS)
    assert not set(K.PREFLIGHT_KEYS) & (set(K.SDK_V2_ESTIMATOR_ARGS) | set(K.MODEL_TRAINER_ARGS))
    assert set(K.SYNONYMS.values()) <= set(K.PREFLIGHT_KEYS)


def test_preflight_never_imports_sagemaker(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from smddp_infra.preflight import run_preflight; "
            f"run_preflight({str(FIXTURES / 'good' / 'job.yaml')!r}); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sagemaker'))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr


# ---------------------------------------------------------------- what a script sees (facts.Env), value by value
# (mutation testing, issue 41: each value and each "not known" reason, asserted whole)

_DP = "sagemaker_distributed_dataparallel_enabled"
_PARAMS = 'json.loads(os.environ["SM_FRAMEWORK_PARAMS"])'


def _seen(expression: str, *defaults: Any, **settings: Any) -> Any:
    """What ``expression`` evaluates to in a script of a job with ``settings`` (and argparse ``defaults``)."""
    import ast

    from smddp_infra.preflight.facts import Env
    from smddp_infra.preflight.job import JobDescription
    from smddp_infra.preflight.script import ScriptFacts

    files = (ScriptFacts(Path("train.py"), (), (), (), False, False, argparse=tuple(defaults)),) if defaults else ()
    job = JobDescription(path=Path("job.yaml"), shape="estimator", **settings)
    return Env(job, files).evaluate(ast.parse(expression, mode="eval").body)


def _unknown(reason: str) -> Any:
    from smddp_infra.preflight.facts import Unknown

    return Unknown(reason)


def _partial(template: str) -> Any:
    from smddp_infra.preflight.extract import Partial

    return Partial("an f-string", template, "", False)


def _default(dest: str, value: Any) -> Any:
    from smddp_infra.preflight.script import ArgDefault

    return ArgDefault(dest, f"--{dest}", value)


@pytest.mark.parametrize("expression, settings, seen", [
    # is_sagemaker_dp_enabled(): the SDK's smdistributed.dataparallel flag, or an API hyperparameter
    ("is_sagemaker_dp_enabled()", {"smddp_setting": "sagemaker_distributed_dataparallel_enabled: true"}, True),
    ("is_sagemaker_dp_enabled()", {"distribution": {"smdistributed": {"dataparallel": {"enabled": True}}}}, True),
    ("is_sagemaker_dp_enabled()", {"distribution": {"smdistributed": {"dataparallel": {"enabled": False}}}}, False),
    ("is_sagemaker_dp_enabled()", {"distribution": {"smdistributed": {"dataparallel": True}}}, False),
    ("is_sagemaker_dp_enabled()", {"distribution": {"pytorchddp": {"enabled": True}}}, True),
    ("is_sagemaker_dp_enabled()", {"distribution": {"pytorchddp": {"enabled": True}}, "estimator": "HuggingFace"}, False),
    ("is_sagemaker_dp_enabled()", {"unknown": {"distribution": "a variable"}}, _unknown("distribution (a variable)")),
    # is_sagemaker_mp_enabled(): false unless the job asks for model parallelism
    ("is_sagemaker_mp_enabled()", {}, False),
    ("is_sagemaker_mp_enabled()", {"unknown": {"distribution": "cfg"}}, _unknown("distribution (cfg)")),
    ("is_sagemaker_mp_enabled()", {"distributed": "smp"}, _unknown("is_sagemaker_mp_enabled() under distributed=SMP()")),
    ("is_sagemaker_mp_enabled()", {"distributed": "Torchrun"}, False),
    ("is_sagemaker_mp_enabled()", {"distribution": {"smdistributed": {"modelparallel": {"enabled": True}}}},
     _unknown("is_sagemaker_mp_enabled() (the job enables smdistributed modelparallel)")),
    ("is_sagemaker_mp_enabled()", {"distribution": {"smdistributed": {"modelparallel": {"enabled": False}}}}, False),
    # SM_FRAMEWORK_PARAMS: the flag, and whether the key is there at all
    (f'{_PARAMS}["{_DP}"]', {"distribution": {"smdistributed": {"dataparallel": {"enabled": True}}}}, True),
    (f'{_PARAMS}["{_DP}"]', {}, _unknown(f"SM_FRAMEWORK_PARAMS['{_DP}'] may be missing")),
    (f'{_PARAMS}["other"]', {}, _unknown("SM_FRAMEWORK_PARAMS 'other'")),
    (f'{_PARAMS}.get("{_DP}", False)', {}, False),
    (f'{_PARAMS}.get("{_DP}")', {"smddp_setting": "hp"}, True),
    (f'"{_DP}" in {_PARAMS}', {"smddp_setting": "hp"}, True),
    (f'"{_DP}" in {_PARAMS}', {"distribution": {"pytorchddp": {"enabled": False}}}, True),
    (f'"{_DP}" not in {_PARAMS}', {"distribution": {"pytorchddp": {"enabled": True}}, "estimator": "TensorFlow"}, True),
    (f'"{_DP}" in {_PARAMS}', {"distribution": {"torch_distributed": {"enabled": True}}}, False),
    (f'"other" in {_PARAMS}', {}, _unknown("whether SM_FRAMEWORK_PARAMS holds 'other'")),
    (f'{_PARAMS}["{_DP}"]', {"unknown": {"distribution": "x"}}, _unknown("distribution (x)")),
    # the container's environment: the job's, then what SageMaker derives from the job
    ('os.environ["NCCL_DEBUG"]', {"environment": {"NCCL_DEBUG": 3}}, "3"),
    ('os.environ["NCCL_DEBUG"]', {"environment": {"NCCL_DEBUG": _unknown("a variable")}},
     _unknown("environment variable NCCL_DEBUG (set by the job to a value preflight cannot resolve)")),
    ('os.environ["SM_HP_BACKEND"]', {"hyperparameters": {"backend": "smddp"}}, "smddp"),
    ('os.environ["SM_HP_BACKEND"]', {}, _unknown("os.environ[...]")),
    ('os.environ.get("SM_HP_BACKEND", "nccl")', {}, "nccl"),
    ('os.getenv("SM_HP_BACKEND", "nccl")', {"hyperparameters_unknown": "**hp"}, _unknown("**hp")),
    ('json.loads(os.environ["SM_HOSTS"])', {"instance_count": 2}, ["algo-1", "algo-2"]),
    ('len(json.loads(os.environ["SM_HOSTS"]))', {"instance_count": 2, "unknown": {"instance_count": "n"}},
     _unknown("environment variable SM_HOSTS")),
    ('os.environ.get("SMDATAPARALLEL_LMC_ENABLE", "0")', {}, "0"),
    ('os.environ.get("SMDATAPARALLEL_LMC_ENABLE", "0")', {"smddp_setting": "hp"},
     _unknown("environment variable SMDATAPARALLEL_LMC_ENABLE")),
    ('os.environ.get("SMDATAPARALLEL_LMC_ENABLE", "0")', {"environment_unknown": "**env"},
     _unknown("environment variable SMDATAPARALLEL_LMC_ENABLE")),
])
def test_what_a_script_sees_of_its_job(expression: str, settings: dict[str, Any], seen: Any) -> None:
    assert _seen(expression, **settings) == seen


@pytest.mark.parametrize("defaults, settings, seen", [
    ((), {"hyperparameters": {"backend": "gloo"}}, "gloo"),
    ((), {"hyperparameters": {"backend": _unknown("x")}}, _unknown("hyperparameter backend is not known before the job runs")),
    ((), {"hyperparameters": {"backend": _partial("{backend}-x")}},
     _unknown("hyperparameter backend is not known before the job runs")),
    ((), {}, _unknown("args.backend (no argparse argument or hyperparameter preflight can see)")),
    ((_default("backend", "nccl"),), {"hyperparameters_unknown": "**hp is not resolved"},
     _unknown("args.backend: **hp is not resolved")),
    ((_default("backend", "nccl"),), {}, "nccl"),
])
def test_an_argument_is_its_hyperparameter_else_its_argparse_default(defaults: tuple, settings: dict[str, Any],
                                                                      seen: Any) -> None:
    assert _seen("args.backend", *defaults, **settings) == seen


_UNSEEN = "args.unknown_thing (no argparse argument or hyperparameter preflight can see)"


@pytest.mark.parametrize("expression, seen", [
    ('json.loads(os.environ["CFG"])["a"]', 1),
    ('json.loads(os.environ["CFG"])["b"]', _unknown("json.loads(os.environ['CFG'])['b']")),
    ('args.unknown_thing["a"]', _unknown(_UNSEEN)),
    ('[1, 2][0]', _unknown('[1, 2][0]')),
    ('smp.state.is_sagemaker_mp_enabled()', False),
    ('is_sagemaker_mp_enabled(1)', _unknown('the result of is_sagemaker_mp_enabled(1)')),
    ('transformers.utils.is_sagemaker_dp_enabled()', False),
    ('json.loads(3)', _unknown('json.loads(3)')),
    ('json.loads(os.environ["BAD"])', _unknown("json.loads of '{'")),
    ('json.loads(args.unknown_thing)', _unknown(_UNSEEN)),
    ('json.loads("[1]", 2)', _unknown("the result of json.loads('[1]', 2)")),
    ('len(json.loads(os.environ["SM_HOSTS"]))', 2),
    ('len(args.unknown_thing)', _unknown(_UNSEEN)),
    ('len(3)', _unknown('len(3)')),
    ('len("ab")', 2),
    ('len([1, 2, 3])', 3),
    ('json.loads(os.environ["CFG"]).get("a")', 1),
    ('json.loads(os.environ["CFG"]).get("b")', None),
    ('json.loads(os.environ["CFG"]).get("b", 5)', 5),
    ('json.loads(os.environ["CFG"]).get("a", 5)', 1),
    ('os.environ.get("N")', '3'),
    ('os.getenv("MISSING")', _unknown('environment variable MISSING')),
    ('os.environ.get("MISSING", "d")', _unknown('environment variable MISSING')),
    ('args.backend.lower()', 'nccl'),
    ('args.backend.upper()', 'NCCL'),
    ('" x ".strip()', 'x'),
    ('(3).lower()', 3),
    ('args.backend.lower(1)', _unknown('the result of args.backend.lower(1)')),
    ('args.backend.title()', _unknown('the result of args.backend.title()')),
    ('str(8)', '8'),
    ('bool("")', False),
    ('int(args.n)', 8),
    ('int("x")', _unknown("int('x')")),
    ('int(args.unknown_thing)', _unknown(_UNSEEN)),
    ('str(1, 2)', _unknown('the result of str(1, 2)')),
    ('float("1")', _unknown("the result of float('1')")),
    ('not args.unknown_thing', _unknown(_UNSEEN)),
    ('args.n or args.unknown_thing', '8'),
    ('args.unknown_thing or 0', _unknown(_UNSEEN)),
    ('args.unknown_thing and 0', 0),
    ('0 and args.unknown_thing', 0),
    ('"" or 0', 0),
    ('1 and 2', 2),
    ('args.n > 7', _unknown('the comparison args.n > 7')),
    ('args.n >= 9', _unknown('the comparison args.n >= 9')),
    ('3 < 4', True),
    ('4 <= 3', False),
    ('int(args.n) > 7', True),
    ('"a" < "b"', _unknown("the comparison 'a' < 'b'")),
    ('1 in 2', _unknown('the comparison 1 in 2')),
    ('args.unknown_thing == 1', _unknown(_UNSEEN)),
    ('1 == args.unknown_thing', _unknown(_UNSEEN)),
    ('a < b < c', _unknown('a < b < c')),
    ('1 if args.n else 2', 1),
    ('1 if args.unknown_thing else 2', _unknown(_UNSEEN)),
    ('1 if "" else 2', 2),
    ('[args.n, 1]', ('8', 1)),
    ('(1, args.unknown_thing)', _unknown(_UNSEEN)),
    ('{1}', (1,)),
    ('some_name', _unknown('some_name (a value preflight cannot follow)')),
    ('x.y.z()', _unknown('the result of x.y.z()')),
    ('f(1)', _unknown('the result of f(1)')),
    ('lambda: 1', _unknown('lambda: 1')),
    ('"smddp" in args.backend.lower()', False),
    ('3 > 3', False), ('3 >= 3', True), ('3 < 3', False), ('3 <= 3', True), ('"x" not in "abc"', True),
    ('"a" not in "abc"', False), ('"ab" not in "xabc"', False), ('"ab" in "xabc"', True),
])
def test_what_a_script_computes_from_what_it_sees(expression: str, seen: Any) -> None:
    """The calls, operators and literals a guard or a backend expression is made of: a value when
    the job decides it, else the first thing that is not known (three-valued `and`/`or`)."""
    settings = {"hyperparameters": {"backend": "NCCL", "n": "8", "cfg": "x"}, "instance_count": 2,
                "environment": {"CFG": '{"a": 1}', "BAD": "{", "N": "3"}}
    assert _seen(expression, **settings) == seen


def test_an_argument_without_a_default_says_which_flag_and_hyperparameter() -> None:
    from smddp_infra.preflight.script import NO_DEFAULT

    assert _seen("args.backend", _default("backend", NO_DEFAULT)) == _unknown(
        "args.backend (--backend has no default and the job passes no backend hyperparameter)")


@pytest.mark.parametrize("expression, seen", [
    # hyperparameters arrive as text: "False" equals False, "8" equals 8, either side
    ('args.flag == False', True), ('False == args.flag', True), ('args.n == 8', True), ('8 == args.n', True),
    ('args.n != 8', False), ('args.name == "BERT"', False), ('"BERT" == args.name', False),
    ('args.none == None', False), ('None == args.none', False),  # "None" the text is not None
    ('args.n in (4, 8)', True), ('args.n not in (4, 8)', False), ('args.name in "xbertx"', True),
    # Python truthiness of hyperparameter text: "", "false", "0", "no", "none" are false
    *((f'not args.{k}', True) for k in ("empty", "flag", "zero", "no", "none")), ('not args.name', False),
    ('not os.environ["NCCL_DEBUG"]', False),  # the environment's "0" is a non-empty string
])
def test_hyperparameter_text_compares_as_the_script_means_it(expression: str, seen: Any) -> None:
    hyper = {"flag": " False ", "n": "8", "name": "bert", "empty": "", "zero": "0", "no": "No", "none": "None"}
    assert _seen(expression, hyperparameters=hyper, environment={"NCCL_DEBUG": "0"}) is seen


# ---------------------------------------------------------------- which load reads which save (facts.same_file)


def _path(text: str, literal: Optional[str] = None, basename: Optional[str] = None, *, model_dir: bool = False,
          open_name: bool = False, scope: str = "") -> Any:
    from smddp_infra.preflight.script import PathExpr

    return PathExpr(text, literal, basename, model_dir, open_name, scope)


def _same_file(save: Any, load: Any, *, one_file: bool = True) -> Optional[str]:
    from smddp_infra.preflight.facts import same_file
    from smddp_infra.preflight.script import StateLoad, StateSave

    return same_file(StateSave(1, "save", "ddp", save), StateLoad(2, "load", "net", load), one_file=one_file)


@pytest.mark.parametrize("save, load, one_file, how", [
    (_path("'/opt/ml/x.pt'", "/opt/ml/x.pt", "x.pt"), _path("'/opt/ml/./x.pt'", "/opt/ml/./x.pt", "x.pt"), True,
     "the same path"),
    (_path("'/opt/ml/x.pt'", "/opt/ml/x.pt", "x.pt"), _path("'/opt/ml/y.pt'", "/opt/ml/y.pt", "y.pt"), True, None),
    # a save resolved to a constant despite a name left open, and a load written the same way that leaves none open
    (_path("join(d, 'x.pt')", "/opt/ml/x.pt", "x.pt", open_name=True), _path("join(d, 'x.pt')"), False, "the same path"),
    (_path("join(d, 'x.pt')", "/opt/ml/x.pt", "x.pt", open_name=True), _path("join(d, 'x.pt')", None, "x.pt"), False,
     None),
    (_path("join(d, 'x.pt')", "/opt/ml/x.pt", "x.pt", open_name=True), _path("join(d, 'x.pt')", open_name=True), False,
     None),
    (_path("join(d, 'x.pt')", "/opt/ml/x.pt", "x.pt", open_name=True), _path("join(e, 'x.pt')"), False, None),
    (_path("join(d, 'x.pt')", None, "x.pt", open_name=True), _path("join(d, 'x.pt')"), False, None),
    # the same expression: the same file unless it holds a name each scope binds its own way
    (_path("os.path.join(d, 'a.pt')"), _path("os.path.join(d, 'a.pt')"), False, "the same path expression (os.path.join(d, 'a.pt'))"),
    (_path("f(p)", open_name=True, scope="save"), _path("f(p)", scope="save"), True, "the same path expression (f(p))"),
    (_path("f(p)", open_name=True, scope="save"), _path("f(p)", scope="load"), True, None),
    (_path("f(p)", open_name=True, scope="save"), _path("f(p)", scope="save"), False, None),
    (_path("f(p)"), _path("f(q)"), True, None),
    # the model directory and the same file name
    (_path("a", None, "m.pt", model_dir=True), _path("b", None, "m.pt", model_dir=True), False,
     "the model directory and the same file name (m.pt)"),
    (_path("a", None, "m.pt", model_dir=True), _path("b", None, "m.pt"), False, None),
    (_path("a", None, "m.pt"), _path("b", None, "m.pt", model_dir=True), False, None),
    (_path("a", None, "m.pt", model_dir=True), _path("b", None, "n.pt", model_dir=True), False, None),
    (_path("a", None, None, model_dir=True), _path("b", None, None, model_dir=True), False, None),
])
def test_a_load_reads_a_save_only_when_the_paths_show_it(save: Any, load: Any, one_file: bool, how: Optional[str]) -> None:
    assert _same_file(save, load, one_file=one_file) == how


def test_a_saved_dict_pairs_only_with_a_load_of_one_of_its_ddp_keys() -> None:
    from smddp_infra.preflight.facts import _keys_match
    from smddp_infra.preflight.script import StateLoad, StateSave

    path = _path("p")
    whole, entries = StateSave(1, "s", "ddp", path), StateSave(1, "s", "ddp", path, frozenset({"model"}))
    assert [_keys_match(save, StateLoad(2, "l", "net", path, key)) for save in (whole, entries)
            for key in (None, "model", "optim")] == [True, False, False, False, True, False]


def test_a_loader_returned_to_another_module_is_iterated_only_where_a_file_iterates_that_call() -> None:
    from smddp_infra.preflight.facts import _across_modules
    from smddp_infra.preflight.script import LoaderCall, ScriptFacts

    loader = LoaderCall(7, "return DataLoader(ds)", None, None, use="returned:make_loader:x")
    iterates = ScriptFacts(Path("train.py"), (), (), (), False, False, iterated_calls=frozenset({"make_loader:x"}))
    other = ScriptFacts(Path("eval.py"), (), (), (), False, False, iterated_calls=frozenset({"make_loader"}))
    assert _across_modules(loader, (other, iterates)) == LoaderCall(7, "return DataLoader(ds)", None, None,
                                                                    use="iterated", use_line=7)
    assert _across_modules(loader, (other,)) == LoaderCall(7, "return DataLoader(ds)", None, None, use="unclear")
    plain = LoaderCall(7, "DataLoader(ds)", None, None, use="never")
    assert _across_modules(plain, (iterates,)) is plain


@pytest.mark.parametrize("path, directory, under", [
    ("/opt/ml/ckpt/a.pt", "/opt/ml/ckpt/", True), ("/opt/ml/ckpt", "/opt/ml/ckpt/", True),
    ("/opt/ml/ckpt-old/a.pt", "/opt/ml/ckpt", False), ("/opt/ml/ckpt/a.pt", "/opt/ml/ckptX", False),
    ("/", "/", True),
])
def test_a_path_is_under_a_directory_by_whole_components(path: str, directory: str, under: bool) -> None:
    from smddp_infra.preflight.rules import _under

    assert _under(path, directory) is under


def _guards(*guards: tuple[str, bool]) -> tuple[str, Optional[str]]:
    """Env.guards over ``(condition as written, holds)`` pairs, for a job with hyperparameter backend=nccl."""
    import ast

    from smddp_infra.preflight.facts import Env
    from smddp_infra.preflight.job import JobDescription
    from smddp_infra.preflight.script import Guard

    job = JobDescription(path=Path("job.yaml"), shape="estimator", hyperparameters={"backend": "nccl"})
    return Env(job, ()).guards(tuple(Guard(ast.parse(code, mode="eval").body, holds, code) for code, holds in guards))


@pytest.mark.parametrize("guards, verdict", [
    ((), ("yes", None)),
    ((("args.backend == 'nccl'", True),), ("yes", None)),
    ((("args.backend == 'nccl'", False),), ("no", "args.backend == 'nccl'")),
    # `if not dist.is_initialized():` and `if torch.cuda.is_available():` only keep init from running twice or on CPU
    ((("not dist.is_initialized()", True),), ("yes", None)),
    ((("torch.cuda.is_available()", True),), ("yes", None)),
    ((("torch.cuda.is_available()", True), ("args.backend == 'smddp'", True)), ("no", "args.backend == 'smddp'")),
    # an undecided guard does not hide a false one after it
    ((("args.other", True), ("args.backend == 'smddp'", True)), ("no", "args.backend == 'smddp'")),
    ((("args.other", True), ("args.more", True)),
     ("unknown", "`if args.other:` (args.other (no argparse argument or hyperparameter preflight can see))")),
])
def test_a_site_runs_when_every_guard_holds(guards: tuple, verdict: tuple) -> None:
    assert _guards(*guards) == verdict
