"""The instance group's current properties (issue 42 item 2): network_interface, instance_types,
the EBS root volume and key, image_release_version, auto_patch, and the Slurm orchestrator's
slurm_config_strategy.

ONE app for the module: an EKS cluster on a network with a KMS key (a flexible efa-only group, an
encrypted root volume, a pinned AMI version, auto-patching) and a Slurm cluster (a config strategy,
a partition, a secondary volume with its own key). Each new prop must reach the template as the
installed cfn-lint schema spells it, pass botocore's CreateCluster input shape (and the walker's
enum/pattern/maximum checks) and cfn-lint, and change in place under the replacement guard.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from _hyperpod_apps import EKS_ARN
from conftest import cdk_context

pytestmark = pytest.mark.slow

CLUSTER = "AWS::SageMaker::Cluster"
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
FLEX = ("ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.p4d.24xlarge")


def _network(stack: Any, **extra: Any) -> Any:
    from smddp_infra import SmddpTrainingNetwork

    return SmddpTrainingNetwork(stack, "Network", instance_type="ml.p5.48xlarge", instance_count=4,
                                availability_zone_id="use1-az4", read_mbps_per_gpu=50, nat_gateway=True, **extra)


def _eks_stack(app: Any) -> Any:
    from aws_cdk import Environment, Stack

    from smddp_infra import HyperPodCluster, InstanceGroup
    from smddp_infra.constructs.hyperpod import Orchestration

    stack = Stack(app, "HyperPodGroupPropsEks", env=Environment(region="us-east-1"))
    HyperPodCluster(stack, "HyperPod", network=_network(stack, create_encryption_key=True),
                    orchestration=Orchestration(orchestrator="eks", eks_cluster_arn=EKS_ARN), instance_groups=[
                        InstanceGroup(name="flex", instance_types=list(FLEX), count=2, network_interface="efa-only",
                                      ebs_root_volume=True, ebs_volume_gib=200, image_release_version="1.2.3",
                                      auto_patch="WhenIdle"),
                        InstanceGroup(name="cpu", instance_type="ml.m5.2xlarge", count=1, network_interface="efa",
                                      auto_patch="WhenAllIdle"),
                    ])
    return stack


def _slurm_stack(app: Any) -> Any:
    from aws_cdk import Environment, Stack

    from smddp_infra import HyperPodCluster, InstanceGroup
    from smddp_infra.constructs.hyperpod import Orchestration

    stack = Stack(app, "HyperPodGroupPropsSlurm", env=Environment(region="us-east-1"))
    HyperPodCluster(stack, "HyperPod", network=_network(stack),
                    orchestration=Orchestration(slurm_config_strategy="Managed"), instance_groups=[
                        InstanceGroup(name="controller", instance_type="ml.m5.2xlarge", count=1, slurm_node_type="Controller"),
                        InstanceGroup(name="train", instance_type="ml.p5.48xlarge", count=2, slurm_node_type="Compute",
                                      partition="train", ebs_volume_gib=500, ebs_kms_key_id=KEY_ARN),
                    ])
    return stack


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from aws_cdk import App

    from smddp_infra.constructs.hyperpod import VALIDATE_FLAG

    found = {}
    # aws-cdk-lib 2.275's own validator lacks ImageReleaseVersion: the EKS app turns its findings to warnings
    for name, build, flag in (("eks", _eks_stack, False), ("slurm", _slurm_stack, True)):
        outdir = tmp_path_factory.mktemp(name)
        app = App(context={**cdk_context(), VALIDATE_FLAG: flag}, outdir=str(outdir))
        stack = build(app)
        found[name] = app.synth().get_stack_artifact(stack.artifact_id).template
        found[f"{name}-assembly"] = (outdir, stack.stack_name)
    return found


def _cluster(template: dict[str, Any]) -> dict[str, Any]:
    [found] = [v for v in template["Resources"].values() if v["Type"] == CLUSTER]
    return found  # type: ignore[no-any-return]


def _groups(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {g["InstanceGroupName"]: g for g in _cluster(template)["Properties"]["InstanceGroups"]}


# --- the template, spelled as the installed schema spells it ---------------------------------------


def test_a_flexible_group_writes_instance_requirements_and_no_instance_type(templates: dict[str, Any]) -> None:
    flex = _groups(templates["eks"])["flex"]
    assert flex["InstanceRequirements"] == {"InstanceTypes": list(FLEX)} and "InstanceType" not in flex
    assert _groups(templates["eks"])["cpu"]["InstanceType"] == "ml.m5.2xlarge"


def test_interface_version_and_patching_reach_the_group(templates: dict[str, Any]) -> None:
    groups = _groups(templates["eks"])
    assert groups["flex"]["NetworkInterface"] == {"InterfaceType": "efa-only"}
    assert groups["cpu"]["NetworkInterface"] == {"InterfaceType": "efa"}
    assert groups["flex"]["ImageReleaseVersion"] == "1.2.3" and "ImageReleaseVersion" not in groups["cpu"]
    assert groups["flex"]["AutoPatchConfig"] == {"PatchingStrategy": "WhenIdle"}
    assert groups["cpu"]["AutoPatchConfig"] == {"PatchingStrategy": "WhenAllIdle"}


def test_the_root_volume_and_the_extra_volume_take_the_networks_key(templates: dict[str, Any]) -> None:
    template = templates["eks"]
    [key_id] = [k for k, v in template["Resources"].items() if v["Type"] == "AWS::KMS::Key"]
    ebs = [c["EbsVolumeConfig"] for c in _groups(template)["flex"]["InstanceStorageConfigs"] if "EbsVolumeConfig" in c]
    arn = {"Fn::GetAtt": [key_id, "Arn"]}
    assert ebs == [{"RootVolume": True, "VolumeKmsKeyId": arn}, {"VolumeSizeInGB": 200, "VolumeKmsKeyId": arn}]


def test_slurm_writes_the_config_strategy_the_partition_and_the_given_key(templates: dict[str, Any]) -> None:
    template = templates["slurm"]
    assert _cluster(template)["Properties"]["Orchestrator"] == {"Slurm": {"SlurmConfigStrategy": "Managed"}}
    train = _groups(template)["train"]
    assert train["SlurmConfig"] == {"NodeType": "Compute", "PartitionNames": ["train"]}
    assert {"EbsVolumeConfig": {"VolumeSizeInGB": 500, "VolumeKmsKeyId": KEY_ARN}} in train["InstanceStorageConfigs"]
    assert not any(k in train for k in ("NetworkInterface", "InstanceRequirements", "AutoPatchConfig"))


@pytest.mark.parametrize("name", ["eks", "slurm"])
def test_the_request_passes_botocores_create_cluster_shape(templates: dict[str, Any], name: str) -> None:
    from _sagemaker_shape_walker import all_problems
    from smddp_infra.hyperpod.request import create_cluster_request, placeholder_resolver

    template = templates[name]
    request = create_cluster_request(_cluster(template)["Properties"], placeholder_resolver(template))
    assert all_problems(request, "CreateCluster") == []
    broken = copy.deepcopy(request)  # not a rubber stamp: an interface type the API does not know
    broken["InstanceGroups"][-1]["NetworkInterface"] = {"InterfaceType": "ena"}
    broken["Orchestrator"] = {"Slurm": {"SlurmConfigStrategy": "Replace"}}
    found = " ".join(all_problems(broken, "CreateCluster"))
    assert "InterfaceType" in found and "SlurmConfigStrategy" in found


@pytest.mark.parametrize("name", ["eks", "slurm"])
def test_the_template_is_clean_under_cfn_lint(templates: dict[str, Any], name: str) -> None:
    from cfnlint.api import ManualArgs, lint

    matches = lint(json.dumps(templates[name]), config=ManualArgs(regions=["us-east-1"]))
    assert [str(m) for m in matches] == []


# --- in-place updates --------------------------------------------------------------------------------

#: Each new property: how to drop it from a group (or the cluster) and how to change it.
CHANGES = {
    "NetworkInterface": ("eks", "flex", {"InterfaceType": "efa"}),
    "InstanceRequirements": ("eks", "flex", {"InstanceTypes": ["ml.p5e.48xlarge", "ml.p5.48xlarge"]}),
    "ImageReleaseVersion": ("eks", "flex", "1.3.0"),
    "AutoPatchConfig": ("eks", "flex", {"PatchingStrategy": "WhenAllIdle"}),
    "InstanceStorageConfigs": ("slurm", "train", [{"EbsVolumeConfig": {"VolumeSizeInGB": 800, "VolumeKmsKeyId": KEY_ARN}}]),
    "SlurmConfig": ("slurm", "train", {"NodeType": "Compute", "PartitionNames": ["big"]}),
}


@pytest.mark.parametrize("prop", [*CHANGES, "SlurmConfigStrategy"])
def test_adding_or_changing_a_new_prop_is_an_in_place_update_for_the_guard(templates: dict[str, Any], prop: str) -> None:
    """The guard reads create-only properties from the installed schema (only ClusterName, VpcConfig
    and Orchestrator/Eks): none of these may replace the cluster, added, changed or removed."""
    from smddp_infra.review.replacement import ReplacementData, guard

    assert not any(r.path[0] == "InstanceGroups" or r.path == ("Orchestrator", "Slurm") for r in ReplacementData().rules(CLUSTER))
    if prop == "SlurmConfigStrategy":
        old = templates["slurm"]
        variants = [{"Slurm": {}}, {"Slurm": {"SlurmConfigStrategy": "Merge"}}]
        edits = [lambda props, v=v: props.__setitem__("Orchestrator", v) for v in variants]
    else:
        name, group, changed = CHANGES[prop]
        old = templates[name]

        def drop(props: dict[str, Any]) -> None:
            next(g for g in props["InstanceGroups"] if g["InstanceGroupName"] == group).pop(prop)

        def change(props: dict[str, Any]) -> None:
            next(g for g in props["InstanceGroups"] if g["InstanceGroupName"] == group)[prop] = changed

        edits = [drop, change]
    for edit in edits:
        new = copy.deepcopy(old)
        edit(_cluster(new)["Properties"])
        assert _cluster(new) != _cluster(old)
        for before, after in ((old, new), (new, old)):
            report = guard(before, after)
            assert not report.findings and report.exit_code == 0, [f.message() for f in report.findings]


def test_cdk_diff_of_a_deployed_cluster_without_them_shows_an_in_place_update(
        templates: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    """What a platform engineer sees: the pinned cdk CLI's ``cdk diff`` of the template with every new
    prop against the same cluster as deployed without them (``--template``: offline, no change set)
    lists the cluster as modified, never "requires replacement" or "may be replaced"."""
    import subprocess

    from conftest import ROOT

    for name in ("eks", "slurm"):
        outdir, stack_name = templates[f"{name}-assembly"]
        deployed = copy.deepcopy(templates[name])
        props = _cluster(deployed)["Properties"]
        props["Orchestrator"].get("Slurm", {}).pop("SlurmConfigStrategy", None)
        for group in props["InstanceGroups"]:
            for prop in ("NetworkInterface", "InstanceRequirements", "ImageReleaseVersion", "AutoPatchConfig"):
                group.pop(prop, None)
            group.setdefault("InstanceType", FLEX[0])
            group["InstanceStorageConfigs"] = [c for c in group.get("InstanceStorageConfigs", []) if "EbsVolumeConfig" not in c]
        assert _cluster(deployed) != _cluster(templates[name])
        old = tmp_path_factory.mktemp(f"{name}-deployed") / "deployed.template.json"
        old.write_text(json.dumps(deployed))
        run = subprocess.run([str(ROOT / "node_modules" / ".bin" / "cdk"), "diff", "--app", str(outdir), "--template", str(old),
                              "--no-change-set", "--no-notices", "--no-version-reporting", "--ci", stack_name],
                             capture_output=True, text=True, cwd=ROOT, timeout=180, check=False)
        out = run.stdout + run.stderr
        lines = [line for line in out.splitlines() if CLUSTER in line]
        assert lines and all(line.lstrip().startswith("[~]") for line in lines), out
        assert "replace" not in out.lower(), out


def test_the_guard_still_refuses_a_create_only_change_beside_them(templates: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    new = copy.deepcopy(templates["eks"])
    _cluster(new)["Properties"]["Orchestrator"]["Eks"]["ClusterArn"] = EKS_ARN.replace("ml-platform", "other")
    assert guard(templates["eks"], new).blocked


# --- one line for each bad value ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def scope() -> Any:
    from aws_cdk import App, Environment, Stack

    stack = Stack(App(context=cdk_context()), "Bad", env=Environment(region="us-east-1", account="123456789012"))
    return _network(stack)


def _gpu(**kw: Any) -> Any:
    from smddp_infra import InstanceGroup

    return InstanceGroup(**{"name": "gpu", "instance_type": "ml.p5.48xlarge", "count": 2, **kw})


BAD = [
    ({"instance_types": ["ml.p5.48xlarge"]}, "instance_groups[0]: pass instance_type or instance_types, not both"),
    ({"instance_type": None}, "instance_groups[0].instance_type is required (or instance_types=[...]"),
    ({"instance_type": None, "instance_types": [f"ml.t{i}" for i in range(21)]},
     "instance_groups[0].instance_types must list 1 to 20 distinct instance types"),
    ({"instance_type": None, "instance_types": []}, "instance_groups[0].instance_types must list 1 to 20"),
    ({"instance_type": None, "instance_types": ["ml.p5.48xlarge", "ml.p5.48xlarge"]}, "must list 1 to 20 distinct"),
    ({"instance_type": None, "instance_types": "ml.p5.48xlarge"}, "instance_groups[0].instance_types must be a list"),
    ({"instance_type": None, "instance_types": ["ml.p5.48xlarge", "ml.nope.1x"]},
     "instance_groups[0].instance_types[1] 'ml.nope.1x' is not a HyperPod instance type"),
    ({"network_interface": "ena"}, "instance_groups[0].network_interface must be one of 'efa', 'efa-only'"),
    ({"ebs_kms_key_id": "alias key"}, "instance_groups[0].ebs_kms_key_id must be a KMS key id or ARN"),
    ({"ebs_root_volume": True}, "instance_groups[0].ebs_root_volume=True needs a KMS key"),
    ({"ebs_root_volume": "yes"}, "instance_groups[0].ebs_root_volume"),
    ({"image_release_version": "1.2"}, "instance_groups[0].image_release_version must be a HyperPod AMI version"),
    ({"auto_patch": "DrainFirst"}, "instance_groups[0].auto_patch must be one of 'WhenIdle', 'WhenAllIdle'"),
    ({"count": None}, "instance_groups[0].count must be a whole number"),
    ({"image_release_version": "1.2.3"}, "instance_groups[0].image_release_version: aws-cdk-lib's built-in CloudFormation "
     "validation does not know ImageReleaseVersion yet (F3002)"),
]


@pytest.mark.parametrize(("fields", "message"), BAD, ids=[m[:48] for _, m in BAD])
def test_a_bad_value_is_one_line_naming_the_prop(scope: Any, fields: dict[str, Any], message: str) -> None:
    from smddp_infra import HyperPodCluster
    from smddp_infra.constructs.hyperpod import Orchestration
    from smddp_infra.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        HyperPodCluster(scope.node.scope, f"Bad{abs(hash(message))}", network=scope, instance_groups=[_gpu(**fields)],
                        orchestration=Orchestration(orchestrator="eks", eks_cluster_arn=EKS_ARN))
    text = str(caught.value)
    assert message in text and "\n" not in text, text


def test_an_ami_version_on_slurm_and_a_config_strategy_on_eks_are_refused() -> None:
    from smddp_infra.constructs.hyperpod import Orchestration
    from smddp_infra.errors import ConfigError
    from smddp_infra.hyperpod import validation as hv

    with pytest.raises(ConfigError, match=r"^x.image_release_version \(ImageReleaseVersion\) is supported only on EKS"):
        hv.check_image_release_version("x.image_release_version", "slurm", "1.2.3")
    with pytest.raises(ConfigError, match=r"^slurm_config_strategy is for orchestrator='slurm' only"):
        Orchestration(orchestrator="eks", eks_cluster_arn=EKS_ARN, slurm_config_strategy="Managed")
    with pytest.raises(ConfigError, match=r"^slurm_config_strategy must be one of 'Overwrite', 'Managed', 'Merge'"):
        Orchestration(slurm_config_strategy="Replace")


# --- sizing takes the most demanding type ----------------------------------------------------------


def test_a_flexible_group_plans_the_addresses_of_its_most_demanding_type() -> None:
    from smddp_infra import InstanceGroup
    from smddp_infra.errors import ConfigError
    from smddp_infra.facts.addresses import addresses_per_node
    from smddp_infra.hyperpod import validation as hv

    group = InstanceGroup(name="flex", instance_types=["ml.p4d.24xlarge", "ml.p5.48xlarge"], count=10)
    p5 = addresses_per_node("ml.p5.48xlarge", orchestrator="eks").addresses
    assert p5 > addresses_per_node("ml.p4d.24xlarge", orchestrator="eks").addresses
    assert hv.node_addresses(group, "eks", None).addresses == p5
    assert hv.addresses_needed([group], None, "eks") == 10 * p5
    with pytest.raises(ConfigError, match=r"ml\.p5\.48xlarge, the most demanding of its 2 instance_types on eks"):
        hv.check_fits_subnet("instance_groups", [group], ips_override=None, subnet_mask=24, other_ips=0, orchestrator="eks")
    # efa-only extra interfaces take no address (facts/addresses.py): the plan follows the interface
    only = InstanceGroup(name="flex", instance_types=["ml.p4d.24xlarge", "ml.p5.48xlarge"], count=10,
                         network_interface="efa-only")
    assert hv.node_addresses(only, "slurm", None).addresses == 1


def test_deep_health_checks_default_only_when_every_type_has_them() -> None:
    from smddp_infra import InstanceGroup
    from smddp_infra.hyperpod import validation as hv
    from smddp_infra.hyperpod.values import DEEP_HEALTH_CHECKS

    gpus = InstanceGroup(name="a", instance_types=["ml.p5.48xlarge", "ml.p4d.24xlarge"], count=1)
    mixed = InstanceGroup(name="b", instance_types=["ml.p5.48xlarge", "ml.m5.2xlarge"], count=1)
    assert hv.health_checks(gpus) == DEEP_HEALTH_CHECKS and hv.health_checks(mixed) == ()


# --- read back after synth: as a hand-written template reads -----------------------------------------


def test_the_cluster_reader_reads_ours_as_it_reads_a_hand_written_template(templates: dict[str, Any]) -> None:
    """tests/fixtures/hyperpod/i42_groups_eks.yaml writes the same flexible group by hand: the reader
    (review, job-config --cluster-template) sees the same group, references aside."""
    from pathlib import Path

    from smddp_infra.hyperpod.template import hyperpod_clusters
    from smddp_infra.rules.loader import load_template_file

    def seen(template: dict[str, Any]) -> dict[str, Any]:
        [cluster] = hyperpod_clusters(template)
        return {g.name: (g.instance_type, g.types, g.interface_type, [(v.root, v.size_gib, "Fn::GetAtt" in v.kms_key_id)
                                                                     for v in g.ebs_volumes],
                         [(m.kind, m.mount_path) for m in g.file_systems], g.image_release_version, g.auto_patch)
                for g in cluster.groups}

    hand = load_template_file(str(Path(__file__).parent / "fixtures" / "hyperpod" / "i42_groups_eks.yaml"))
    ours = seen(templates["eks"])
    assert ours["flex"] == seen(hand)["flex"]
    assert ours["flex"][1] == FLEX and ours["flex"][2] == "efa-only"
    [slurm] = hyperpod_clusters(templates["slurm"])
    assert slurm.slurm_config_strategy == "Managed"
    assert [(v.size_gib, v.kms_key_id) for v in slurm.groups[1].ebs_volumes] == [(500, KEY_ARN)]


def test_review_shows_our_flexible_group_its_interface_volumes_and_key(templates: dict[str, Any]) -> None:
    from smddp_infra.review.summary import _hyperpod_section
    from smddp_infra.review.template import TemplateView

    view = TemplateView(templates["eks"])
    text = "\n".join(_hyperpod_section(view, "##"))
    [key_id] = [k for k, v in templates["eks"]["Resources"].items() if v["Type"] == "AWS::KMS::Key"]
    key = "{" + view.label(key_id) + ".Arn}"
    assert "| flex | flexible: ml.p5.48xlarge, ml.p5e.48xlarge, ml.p4d.24xlarge | 2 | on-demand | - | auto-patch WhenIdle " \
           "| HyperPod AMI 1.2.3 |" in text
    assert f"| flex | efa-only (EFA device only, no ENA: no IP traffic on its EFA interfaces) | root volume, key {key}; " \
           f"200 GiB secondary volume, key {key} | FSx for Lustre " in text
    slurm = "\n".join(_hyperpod_section(TemplateView(templates["slurm"]), "##"))
    assert "Slurm (SlurmConfigStrategy Managed)" in slurm and f"500 GiB secondary volume, key {KEY_ARN} |" in slurm
