"""The one reader of clusters after synth (:mod:`smddp_infra.hyperpod.template`) reads the instance
group's current properties (issue 42): a flexible group's types, the interface type, EBS volumes and
their key, the FSx for Lustre and OpenZFS mounts, the AMI version, auto-patching and the Slurm config
strategy; and its two readers use them: `job-config --cluster-template` and `review`'s summary.

Fast: hand-written templates under tests/fixtures/hyperpod (spelled as CloudFormation's schema spells
them) and the committed snapshots, read-only. The construct's own templates are read the same way in
tests/test_hyperpod_group_props.py and tests/test_hyperpod_home_dirs.py (their module synth).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from smddp_infra.cli import main
from smddp_infra.errors import ConfigError
from smddp_infra.hyperpod.template import ClusterView, EbsVolume, FsxMount, hyperpod_clusters
from smddp_infra.rules.loader import load_template_file

TESTS = Path(__file__).resolve().parent
FIXTURES, SNAPSHOTS, OUTPUTS = TESTS / "fixtures" / "hyperpod", TESTS / "snapshots" / "hyperpod", TESTS / "fixtures" / "outputs"
FLEX = ("ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.p4d.24xlarge")
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def _template(name: str) -> dict[str, Any]:
    found = load_template_file(str(FIXTURES / name))
    assert isinstance(found, dict)
    return found


def _one(template: dict[str, Any]) -> ClusterView:
    [cluster] = hyperpod_clusters(template)
    return cluster


def _section(template: dict[str, Any]) -> str:
    from smddp_infra.review.summary import _hyperpod_section
    from smddp_infra.review.template import TemplateView

    return "\n".join(_hyperpod_section(TemplateView(template), "##"))


# --- the reader -----------------------------------------------------------------------------------


def test_a_flexible_efa_only_group_reads_its_types_volumes_version_and_patching() -> None:
    flex, cpu = _one(_template("i42_groups_eks.yaml")).groups
    assert flex.instance_type == "" and flex.instance_types == FLEX and flex.types == FLEX
    assert cpu.instance_types == () and cpu.types == ("ml.m5.2xlarge",)
    assert (flex.interface_type, cpu.interface_type) == ("efa-only", "efa")
    key = {"Fn::GetAtt": ["Key", "Arn"]}
    assert flex.ebs_volumes == (EbsVolume(True, None, key), EbsVolume(False, 200, key)) and cpu.ebs_volumes == ()
    assert flex.file_systems == (FsxMount("FsxLustreConfig", {"Fn::GetAtt": ["Lustre", "DNSName"]}, "/fsx",
                                          {"Fn::GetAtt": ["Lustre", "LustreMountName"]}),)
    assert (flex.image_release_version, cpu.image_release_version) == ("1.2.3", None)
    assert (flex.auto_patch, cpu.auto_patch) == ("WhenIdle", "WhenAllIdle")


def test_a_slurm_cluster_reads_its_strategy_home_directories_and_given_key() -> None:
    cluster = _one(_template("i42_groups_slurm.yaml"))
    assert cluster.slurm_config_strategy == "Managed"
    controller, train = cluster.groups
    assert [(m.kind, m.mount_path) for m in train.file_systems] == [("FsxLustreConfig", "/fsx"), ("FsxOpenZfsConfig", "/home")]
    assert controller.file_systems == train.file_systems
    assert train.ebs_volumes == (EbsVolume(False, 500, KEY_ARN),) and train.interface_type is None


def test_a_plain_cluster_reads_nothing_it_does_not_write() -> None:
    cluster = _one(json.loads((SNAPSHOTS / "HyperPodSlurm.template.json").read_text()))
    assert cluster.slurm_config_strategy is None
    for group in cluster.groups:
        assert (group.instance_types, group.interface_type, group.image_release_version, group.auto_patch) == ((), None, None, None)
        assert group.types == (group.instance_type,) and [m.kind for m in group.file_systems] == ["FsxLustreConfig"]
    assert {g.name: g.ebs_volumes for g in cluster.groups}["train"] == (EbsVolume(False, 500, None),)


def _group(index: int, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda props: props["InstanceGroups"][index].__setitem__(key, value)


def _storage(index: int, entry: Any) -> Callable[[dict[str, Any]], None]:
    return lambda props: props["InstanceGroups"][index]["InstanceStorageConfigs"].__setitem__(1, entry)


WRONG = [
    (_group(0, "InstanceRequirements", ["ml.p5.48xlarge"]), "InstanceGroups[0].InstanceRequirements must be a mapping"),
    (_group(0, "InstanceRequirements", {"InstanceTypes": "ml.p5.48xlarge"}),
     "InstanceGroups[0].InstanceRequirements.InstanceTypes must be a list"),
    (_group(1, "NetworkInterface", "efa"), "InstanceGroups[1].NetworkInterface must be a mapping"),
    (_group(0, "InstanceStorageConfigs", {"EbsVolumeConfig": {}}), "InstanceGroups[0].InstanceStorageConfigs must be a list"),
    (_storage(0, "root"), "InstanceGroups[0].InstanceStorageConfigs[1] must be a mapping"),
    (_storage(0, {"EbsVolumeConfig": [{"RootVolume": True}]}),
     "InstanceGroups[0].InstanceStorageConfigs[1].EbsVolumeConfig must be a mapping"),
    (_storage(0, {"FsxOpenZfsConfig": "fs-0abc.fsx"}), "InstanceGroups[0].InstanceStorageConfigs[1].FsxOpenZfsConfig must be a mapping"),
    (_group(1, "AutoPatchConfig", "WhenIdle"), "InstanceGroups[1].AutoPatchConfig must be a mapping"),
    (lambda props: props.__setitem__("Orchestrator", {"Slurm": ["Managed"]}), "Properties.Orchestrator.Slurm must be a mapping"),
]


@pytest.mark.parametrize(("change", "where"), WRONG, ids=[w.split(".", 1)[-1][:40] for _, w in WRONG])
def test_a_new_property_of_the_wrong_shape_is_one_config_error_naming_where(change: Any, where: str) -> None:
    template = copy.deepcopy(_template("i42_groups_eks.yaml"))
    change(template["Resources"]["HyperPod"]["Properties"])
    with pytest.raises(ConfigError) as caught:
        hyperpod_clusters(template)
    text = str(caught.value)
    assert text.startswith("HyperPod.Properties.") and where in text and "\n" not in text, text


# --- job-config --cluster-template ------------------------------------------------------------------


def _job(capsys: pytest.CaptureFixture[str], template: str, instance_type: str) -> tuple[int, Any, str]:
    code = main(["job-config", "--outputs", str(OUTPUTS / "default-p4d.json"), "--format", "hyperpod",
                 "--instance-type", instance_type, "--cluster-template", str(FIXTURES / template)])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err


@pytest.mark.parametrize("instance_type", FLEX)
def test_a_job_of_any_of_a_flexible_groups_types_lands_on_it(capsys: pytest.CaptureFixture[str], instance_type: str) -> None:
    code, settings, err = _job(capsys, "i42_groups_eks.yaml", instance_type)
    assert code == 0 and err == ""
    [group] = settings["cluster"]["groups"]
    assert group["name"] == "flex" and group["instanceTypes"] == list(FLEX) and group["instanceType"] is None
    assert any(n.startswith("flex is a flexible group") and f"another type than {instance_type}" in n for n in settings["notes"])


def test_a_fixed_groups_settings_keep_their_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, settings, err = _job(capsys, "i42_groups_slurm.yaml", "ml.p5.48xlarge")
    assert code == 0 and err == ""
    [group] = settings["cluster"]["groups"]
    assert group == {"name": "train", "instanceType": "ml.p5.48xlarge", "nodes": "2", "capacity": "on-demand",
                     "partitions": ["train"]}
    assert not any("flexible group" in n for n in settings["notes"])


def test_a_job_type_the_cluster_has_no_group_of_names_every_type_flexible_ones_included(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _job(capsys, "i42_groups_eks.yaml", "ml.trn1.32xlarge")
    assert code == 2 and err.count("\n") == 1
    assert "has no instance group of the job's instance type ml.trn1.32xlarge" in err
    assert ("its groups: flex (flexible: ml.p5.48xlarge, ml.p5e.48xlarge, ml.p4d.24xlarge), cpu (ml.m5.2xlarge)") in err


# --- review's summary -------------------------------------------------------------------------------


def test_the_summary_shows_flexible_types_version_patching_interface_and_volumes() -> None:
    text = _section(_template("i42_groups_eks.yaml"))
    assert ("| flex | flexible: ml.p5.48xlarge, ml.p5e.48xlarge, ml.p4d.24xlarge | 2 | on-demand | - | auto-patch WhenIdle "
            "| HyperPod AMI 1.2.3 |") in text
    assert "| cpu | ml.m5.2xlarge | 1 | on-demand | - | auto-patch WhenAllIdle | HyperPod default |" in text
    assert ("| flex | efa-only (EFA device only, no ENA: no IP traffic on its EFA interfaces) | root volume, key {Key.Arn}; "
            "200 GiB secondary volume, key {Key.Arn} | FSx for Lustre Lustre at /fsx |") in text
    assert "| cpu | efa (EFA with ENA: EFA device and IP networking) | HyperPod default | none |" in text
    # the flexible group's addresses are its most demanding type's, with its efa-only interface
    assert "Address plan: flex 2 x 50 (ml.p5.48xlarge, the most demanding of its types) + cpu 1 x 15 = 115" in text


def test_the_summary_shows_the_slurm_strategy_partitions_home_directories_and_the_key() -> None:
    text = _section(_template("i42_groups_slurm.yaml"))
    assert "HyperPod: Slurm (SlurmConfigStrategy Managed); node provisioning standard" in text
    assert "| train | ml.p5.48xlarge | 2 | on-demand | Slurm Compute, partition train | none | HyperPod default |" in text
    assert (f"| train | not written | 500 GiB secondary volume, key {KEY_ARN} | FSx for Lustre Lustre at /fsx; home "
            "directories: FSx for OpenZFS Home at /home |") in text


@pytest.mark.parametrize("name", ["HyperPodSlurm", "HyperPodEks", "HyperPodEksPlatform", "HyperPodSlurmOptions"])
def test_a_plain_clusters_summary_keeps_its_lines_and_gains_its_mounts_and_volumes(name: str) -> None:
    """Read-only snapshots of clusters without the new properties: the group table, the address plan
    and the cluster line read as before (a Slurm group gains its partition, which it lacked); the new
    table says what the template writes, and 'not written' for the interface."""
    text = _section(json.loads((SNAPSHOTS / f"{name}.template.json").read_text()))
    assert "| Group | Type | Count | Capacity | Placement | Scheduled update | Image |" in text
    assert "flexible" not in text and "auto-patch" not in text and "HyperPod AMI" not in text and "SlurmConfigStrategy" not in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and " | not written | " in line]
    cluster = _one(json.loads((SNAPSHOTS / f"{name}.template.json").read_text()))
    assert len(rows) == len(cluster.groups)
    assert all(row.endswith(" | FSx for Lustre NetworkLustreFileSystem558E8E1D at /fsx |") for row in rows)
    if name == "HyperPodSlurm":
        assert "| train | ml.p5.48xlarge | 4 | on-demand | Slurm Compute, partition train | none | HyperPod default |" in text
        assert "| train | not written | 500 GiB secondary volume, key AWS owned |" in text
        assert "Address plan: controller 1 x 1 + login 1 x 1 + train 4 x 32 + reserved 2 x 32 = 194 private IPs" in text
