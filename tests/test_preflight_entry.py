"""Preflight's uneven-batch and entry-point findings, word for word (the preflight mutation room).

What each message says is the product: a platform engineer pastes the fix, and a reviewer reads
where the SDK refuses the job. These cases are the ones the room showed unguarded: an explicit
world size (no catalogue note), a job that drops the last batch, a source_dir missing beside a
launcher (SDK v2 ``fit()`` and SDK v3 ``ModelTrainer`` each refuse it with their own ValueError),
and a shell entry point that runs several scripts preflight cannot find, or none at all.
"""

from __future__ import annotations

import json
from pathlib import Path

from smddp_infra.preflight import run_preflight

from _preflight_helpers import write

SCRIPT = "import torch\n"


def _uneven(tmp_path: Path, settings: dict) -> tuple[str, str]:
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "job.json").write_text(json.dumps({"entry_point": "train.py", **settings}))
    [f] = [f for f in run_preflight(tmp_path / "job.json").findings if f.rule_id == "PF-UNEVEN-BATCHES"]
    assert (f.severity, f.location) == ("error", "job.json: num_samples")
    return f.message, f.fix


def test_an_explicit_world_size_is_not_explained_and_drop_last_true_is_kept_in_the_fix(tmp_path):
    message, fix = _uneven(tmp_path, {"num_samples": 10, "batch_size": 3, "world_size": 4, "drop_last": True})
    assert message == ("num_samples=10 split over world_size=4 with batch_size=3, drop_last=true: "
                       "ranks 0-1 run 1 batches, ranks 2-3 run 0")
    assert fix == ("any one of: drop_last: false; num_samples: 8 (drop the last 2 samples so 4 divides it); "
                   "sampler=DistributedSampler(dataset, drop_last=True) or "
                   "smddp_infra.training.even_shards(10, 4, 3, drop_last=True): 0 batches on every rank")


def test_a_world_size_from_the_catalogue_names_where_it_comes_from(tmp_path):
    message, fix = _uneven(tmp_path, {"num_samples": 20, "batch_size": 2, "instance_type": "ml.p4d.24xlarge",
                                      "instance_count": 1, "drop_last": False})
    assert message == ("num_samples=20 split over world_size=8 (instance_count 1 x GPUs of ml.p4d.24xlarge) with "
                       "batch_size=2, drop_last=false: ranks 0-3 run 2 batches, ranks 4-7 run 1")
    assert fix.endswith("even_shards(20, 8, 2, drop_last=False): 2 batches on every rank")


def _findings(tmp_path: Path, files: dict[str, str], launcher: str) -> list[tuple[str, str, str, str]]:
    write(tmp_path, files)
    return [(f.rule_id, f.location, f.message, f.fix) for f in run_preflight(tmp_path / launcher).findings]


def test_a_source_dir_missing_beside_an_sdk_v2_launcher(tmp_path):
    found = _findings(tmp_path, {"launch.py": """
        from sagemaker.pytorch import PyTorch
        PyTorch(entry_point="train.py", source_dir="code", instance_type="ml.p4d.24xlarge", instance_count=2).fit()
    """}, "launch.py")
    assert found == [(
        "PF-SOURCE-DIR-MISSING", "launch.py:2: source_dir",
        f"source_dir code does not exist ({tmp_path / 'code'}) relative to the launcher's folder (or any folder above "
        "it), and no step in launch.py creates it (mkdir, clone, copy, download, %%writefile): fit() refuses the job "
        "before upload (sagemaker 2.257.7 fw_utils.validate_source_dir: ValueError: No file named \"train.py\" was "
        "found in directory \"code\".)",
        "create code/ with train.py in it beside launch.py, or set source_dir to the folder that holds the training code")]


def test_a_source_dir_missing_beside_a_model_trainer(tmp_path):
    found = _findings(tmp_path, {"run.py": """
        from sagemaker.modules.configs import Compute, SourceCode, StoppingCondition
        from sagemaker.modules.train import ModelTrainer
        ModelTrainer(source_code=SourceCode(source_dir="src", entry_script="train.py"),
                     compute=Compute(instance_type="ml.p4d.24xlarge", instance_count=1),
                     stopping_condition=StoppingCondition(max_runtime_in_seconds=86400))
    """}, "run.py")
    assert found == [(
        "PF-SOURCE-DIR-MISSING", "run.py:3: source_code.source_dir",
        f"source_code.source_dir src does not exist ({tmp_path / 'src'}) relative to the launcher's folder (or any "
        "folder above it), and no step in run.py creates it (mkdir, clone, copy, download, %%writefile): ModelTrainer "
        "refuses it when it is built (sagemaker-train 1.27.0 ModelTrainer._validate_source_code: ValueError: Invalid "
        "'source_dir' path: src. Must be a valid local directory, s3 uri or path to tar.gz file stored locally or in s3.)",
        "create src/ with train.py in it beside run.py, or set source_code.source_dir to the folder that holds the "
        "training code")]


def test_a_shell_entry_point_names_every_script_it_cannot_find_or_says_it_runs_none(tmp_path):
    found = _findings(tmp_path, {
        "code/run.sh": "#!/bin/bash\npython a.py\npython b.py\n",
        "code/other.sh": "echo hi\n",
        "launch.py": """
            from sagemaker.pytorch import PyTorch
            PyTorch(entry_point="run.sh", source_dir="code", instance_type="ml.p4d.24xlarge", instance_count=2).fit()
            PyTorch(entry_point="other.sh", source_dir="code", instance_type="ml.p4d.24xlarge", instance_count=2).fit()
        """}, "launch.py")
    fix = "nothing to fix; pass the scripts it runs to check them: smddp-infra preflight INPUT path/to/script.py"
    assert found == [
        ("PF-NON-PYTHON-ENTRY-POINT", "launch.py:2: entry_point",
         "entry_point run.sh is not a Python script; preflight reads the Python scripts it runs: not found here "
         "(fetched at run time?): a.py (line 2), b.py (line 3)", fix),
        ("PF-NON-PYTHON-ENTRY-POINT", "launch.py:3: entry_point",
         "entry_point other.sh is not a Python script; preflight reads the Python scripts it runs (it runs none "
         "preflight can see)", fix)]
