"""`job-config --format hyperpod`: what a Slurm job on the network's HyperPod cluster needs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from smddp_infra.cli import main

OUTPUTS = Path(__file__).parent / "fixtures" / "outputs"


def run(capsys: pytest.CaptureFixture[str], fixture: str, *extra: str) -> dict[str, Any]:
    assert main(["job-config", "--outputs", str(OUTPUTS / fixture), "--format", "hyperpod", *extra]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    settings: dict[str, Any] = json.loads(out)
    return settings


def test_p5_gets_torchrun_with_nccl_and_no_smddp(capsys: pytest.CaptureFixture[str]) -> None:
    settings = run(capsys, "p5-64-node-two-groups.json")
    assert settings["launcher"]["backend"] == "nccl" and settings["launcher"]["image"] is None
    assert "torchrun" in settings["launcher"]["command"] and "--nproc_per_node=8" in settings["launcher"]["command"]
    assert not any("smddp\")" in note for note in settings["notes"])
    assert settings["nodes"] == 64


def test_p4d_gets_smddp_with_the_smp_image_and_says_what_is_unconfirmed(capsys: pytest.CaptureFixture[str]) -> None:
    settings = run(capsys, "default-p4d.json")
    assert settings["launcher"]["backend"] == "smddp"
    assert "SMP" in settings["launcher"]["image"]
    assert any("UNCONFIRMED" in note and "HyperPod" in note for note in settings["notes"])
    assert any("AllReduce needs an mpirun-based launcher" in note for note in settings["notes"])


def test_p6_and_trainium_never_get_smddp(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "default-p4d.json", "--instance-type", "ml.p6-b200.48xlarge")["launcher"]["backend"] == "nccl"
    trn = run(capsys, "default-p4d.json", "--instance-type", "ml.trn1.32xlarge")
    assert trn["launcher"]["backend"] == "xla" and trn["launcher"]["image"] is None


def test_mount_path_data_path_and_checkpoint_prefix_come_from_the_network(capsys: pytest.CaptureFixture[str]) -> None:
    settings = run(capsys, "p5-64-node-two-groups.json")
    document = next(iter(json.loads((OUTPUTS / "p5-64-node-two-groups.json").read_text()).values()))
    assert settings["fileSystem"]["mountPath"] == "/fsx"
    assert settings["fileSystem"]["dataPath"] == "/fsx/datasets/tokenized"
    assert settings["checkpoints"]["s3Uri"].startswith("s3://") and settings["checkpoints"]["s3Uri"].endswith("/")
    assert settings["checkpoints"]["s3Uri"] in json.dumps(document)


def test_the_data_path_of_a_network_without_a_dataset_is_the_mount_itself(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "default-p4d.json")["fileSystem"]["dataPath"] == "/fsx"
