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


# --- --cluster-template: where the job lands on the cluster (issue 34) -----------------------------

SNAPSHOTS = Path(__file__).parent / "snapshots" / "hyperpod"


def test_an_eks_cluster_template_gives_each_groups_node_selector_tolerations_and_capacity(
        capsys: pytest.CaptureFixture[str]) -> None:
    settings = run(capsys, "p5-64-node-two-groups.json", "--cluster-template",
                   str(SNAPSHOTS / "HyperPodEksPlatform.template.json"))
    cluster = settings["cluster"]
    assert (cluster["orchestrator"], cluster["nodeProvisioning"], cluster["autoscaling"],
            cluster["tieredCheckpointingMemoryPercent"]) == ("eks", "Continuous", "Karpenter", 20)
    groups = {g["name"]: g for g in cluster["groups"]}
    assert set(groups) == {"train", "spot"}  # the groups of the job's instance type, not the system group
    assert groups["train"]["nodeSelector"] == {"role": "train", "example.com/team": "foundation"}
    assert groups["train"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "true",
                                               "effect": "NoSchedule"}]
    assert groups["train"]["nodes"] == "2 to 4" and groups["spot"]["capacity"] == "Spot"
    assert any("Spot capacity in spot" in n for n in settings["notes"])
    assert any("managed tiered checkpointing is on (20 %" in n for n in settings["notes"])


def test_a_slurm_cluster_template_gives_the_partitions(capsys: pytest.CaptureFixture[str]) -> None:
    settings = run(capsys, "p5-64-node-two-groups.json", "--cluster-template", str(SNAPSHOTS / "HyperPodSlurm.template.json"))
    groups = {g["name"]: g for g in settings["cluster"]["groups"]}
    assert groups["train"]["partitions"] == ["train"] and groups["reserved"]["capacity"] == "training plan"
    assert "nodeSelector" not in groups["train"] and settings["cluster"]["autoscaling"] is None


def test_a_cluster_template_is_refused_in_one_line_without_a_cluster_or_for_another_format(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}))
    assert main(["job-config", "--outputs", str(OUTPUTS / "default-p4d.json"), "--format", "hyperpod",
                 "--cluster-template", str(empty)]) != 0
    err = capsys.readouterr().err.strip()
    assert "must hold one AWS::SageMaker::Cluster, got 0" in err and "\n" not in err
    assert main(["job-config", "--outputs", str(OUTPUTS / "default-p4d.json"), "--format", "v2",
                 "--cluster-template", str(SNAPSHOTS / "HyperPodSlurm.template.json")]) != 0
    assert "--cluster-template is for --format hyperpod" in capsys.readouterr().err


# --- --cluster-template of the wrong shape: one line naming where (issue 41) ----------------------


def _cluster_template(tmp_path: Path, change: Any) -> str:
    template = json.loads((SNAPSHOTS / "HyperPodEksPlatform.template.json").read_text())
    cluster = next(r for r in template["Resources"].values() if r.get("Type") == "AWS::SageMaker::Cluster")
    change(cluster)
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(template))
    return str(path)


def _groups(cluster: dict[str, Any]) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = cluster["Properties"]["InstanceGroups"]
    return groups


@pytest.mark.parametrize(("change", "where", "got"), [
    (lambda c: c.__setitem__("Properties", ["InstanceGroups"]), "Properties must be a mapping", "['InstanceGroups']"),
    (lambda c: c["Properties"].__setitem__("InstanceGroups", {"train": {}}), "Properties.InstanceGroups must be a list",
     "{'train': {}}"),
    (lambda c: _groups(c)[1].setdefault("KubernetesConfig", {}).__setitem__("Labels", ["role=train"]),
     "Properties.InstanceGroups[1].KubernetesConfig.Labels must be a mapping", "['role=train']"),
    (lambda c: _groups(c)[1].setdefault("KubernetesConfig", {}).__setitem__("Labels", {"role": ["train"]}),
     "Properties.InstanceGroups[1].KubernetesConfig.Labels must map each label to a string", "'role'"),
    (lambda c: _groups(c)[1].__setitem__("KubernetesConfig", "role=train"),
     "Properties.InstanceGroups[1].KubernetesConfig must be a mapping", "'role=train'"),
    (lambda c: _groups(c)[1].setdefault("KubernetesConfig", {}).__setitem__("Taints", ["gpu"]),
     "Properties.InstanceGroups[1].KubernetesConfig.Taints[0] must be a mapping", "'gpu'"),
], ids=["properties", "groups", "labels-list", "label-value", "kubernetes-config", "taint"])
def test_a_cluster_property_of_the_wrong_shape_is_one_line_naming_its_path(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, change: Any, where: str, got: str) -> None:
    path = _cluster_template(tmp_path, change)
    assert main(["job-config", "--outputs", str(OUTPUTS / "p5-64-node-two-groups.json"), "--format", "hyperpod",
                 "--cluster-template", path]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"smddp-infra job-config: error: --cluster-template {path!r}: HyperPodCluster")
    assert where in err and got in err


def test_a_cluster_without_a_group_of_the_jobs_instance_type_is_refused_naming_the_types_it_has(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    def cpu_only(cluster: dict[str, Any]) -> None:
        for group in _groups(cluster):
            group["InstanceType"] = "ml.c5.xlarge"

    path = _cluster_template(tmp_path, cpu_only)
    assert main(["job-config", "--outputs", str(OUTPUTS / "p5-64-node-two-groups.json"), "--format", "hyperpod",
                 "--cluster-template", path]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "has no instance group of the job's instance type ml.p5.48xlarge" in err
    assert "its groups: system (ml.c5.xlarge), train (ml.c5.xlarge), spot (ml.c5.xlarge)" in err
