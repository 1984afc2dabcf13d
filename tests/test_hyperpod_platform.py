"""HyperPod as platforms run it (issue 34): continuous provisioning, Karpenter autoscaling, tiered
checkpointing, Spot, Kubernetes placement, scheduled rolling updates, pinned images.

ONE app is synthesized for the module: an EKS platform cluster and a Slurm cluster with the options
Slurm takes (tests/_hyperpod_apps.py). tests/test_hyperpod.py synthesizes the same two stacks with
the other HyperPod stacks for what every stack must pass (snapshot, the four rule packs, cfn-lint,
botocore's validator). The one-line errors build constructs without synth.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from _hyperpod_apps import (
    EKS_ARN,
    EKS_VPC_ID,
    PLAN_ARN,
    ROLLBACK_ALARM,
    add_eks_platform_stack,
    add_slurm_options_stack,
)
from conftest import cdk_context

pytestmark = pytest.mark.slow

CLUSTER = "AWS::SageMaker::Cluster"
STACKS = ("HyperPodEksPlatform", "HyperPodSlurmOptions")


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from aws_cdk import App

    out = tmp_path_factory.mktemp("hyperpod-platform")
    app = App(context=cdk_context(), outdir=str(out))
    stacks = {"HyperPodEksPlatform": add_eks_platform_stack(app), "HyperPodSlurmOptions": add_slurm_options_stack(app)}
    assembly = app.synth()
    templates = {name: assembly.get_stack_artifact(stack.artifact_id).template for name, stack in stacks.items()}
    return {"stacks": stacks, "templates": templates, "out": out}


def _cluster(template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    [found] = [(k, v) for k, v in template["Resources"].items() if v["Type"] == CLUSTER]
    return found


def _groups(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {g["InstanceGroupName"]: g for g in _cluster(template)[1]["Properties"]["InstanceGroups"]}


# --- what the template carries, spelled as the API spells it ---------------------------------------


def test_the_cluster_carries_continuous_provisioning_karpenter_and_tiered_checkpointing(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodEksPlatform"]
    _, cluster = _cluster(template)
    props = cluster["Properties"]
    assert props["NodeProvisioningMode"] == "Continuous"
    assert props["AutoScaling"] == {"Mode": "Enable", "AutoScalerType": "Karpenter"}
    assert props["TieredStorageConfig"] == {"Mode": "Enable", "InstanceMemoryAllocationPercentage": 20}
    assert props["NodeRecovery"] == "Automatic"
    role_id = props["ClusterRole"]["Fn::GetAtt"][0]
    assert template["Resources"][role_id]["Type"] == "AWS::IAM::Role"


def test_the_slurm_cluster_writes_none_of_the_eks_only_properties(synth: dict[str, Any]) -> None:
    _, cluster = _cluster(synth["templates"]["HyperPodSlurmOptions"])
    assert not {"NodeProvisioningMode", "AutoScaling", "ClusterRole", "TieredStorageConfig"} & set(cluster["Properties"])
    assert all("KubernetesConfig" not in g and "CapacityRequirements" not in g for g in _groups(synth["templates"]["HyperPodSlurmOptions"]).values())


def test_groups_carry_min_count_spot_labels_taints_and_image(synth: dict[str, Any]) -> None:
    groups = _groups(synth["templates"]["HyperPodEksPlatform"])
    assert groups["train"]["MinInstanceCount"] == 2 and "MinInstanceCount" not in groups["spot"]
    assert groups["spot"]["CapacityRequirements"] == {"Spot": {}}  # ClusterSpotOptions has no members
    assert "CapacityRequirements" not in groups["train"]  # on-demand: nothing written
    assert groups["train"]["KubernetesConfig"] == {
        "Labels": {"role": "train", "example.com/team": "foundation"},
        "Taints": [{"Key": "nvidia.com/gpu", "Value": "true", "Effect": "NoSchedule"}]}
    assert groups["system"]["KubernetesConfig"] == {"Labels": {"role": "system"}}
    assert groups["train"]["ImageId"] == "ami-0123456789abcdef0" and "ImageId" not in groups["system"]


def test_a_scheduled_update_rolls_in_batches_with_a_wait_and_the_clusters_alarms(synth: dict[str, Any]) -> None:
    from smddp_infra.hyperpod.values import DEFAULT_UPDATE_BATCH_PERCENT, DEFAULT_UPDATE_WAIT_SECONDS

    update = _groups(synth["templates"]["HyperPodEksPlatform"])["train"]["ScheduledUpdateConfig"]
    batch = {"Type": "CAPACITY_PERCENTAGE", "Value": DEFAULT_UPDATE_BATCH_PERCENT}
    assert update == {"ScheduleExpression": "cron(30 4 ? * SAT *)", "DeploymentConfig": {
        "RollingUpdatePolicy": {"MaximumBatchSize": batch, "RollbackMaximumBatchSize": batch},
        "WaitIntervalInSeconds": DEFAULT_UPDATE_WAIT_SECONDS,
        "AutoRollbackConfiguration": [{"AlarmName": ROLLBACK_ALARM}]}}
    slurm = _groups(synth["templates"]["HyperPodSlurmOptions"])["train"]["ScheduledUpdateConfig"]
    assert "AutoRollbackConfiguration" not in slurm["DeploymentConfig"]  # no alarms given, none written
    assert "ScheduledUpdateConfig" not in _groups(synth["templates"]["HyperPodEksPlatform"])["spot"]


def test_the_autoscaling_role_trusts_hyperpod_and_may_only_add_and_delete_nodes_here(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodEksPlatform"]
    role_id = _cluster(template)[1]["Properties"]["ClusterRole"]["Fn::GetAtt"][0]
    trust = template["Resources"][role_id]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert [s["Principal"] for s in trust] == [{"Service": "hyperpod.sagemaker.amazonaws.com"}]
    assert "aws:SourceAccount" in json.dumps(trust)
    [policy] = [r for r in template["Resources"].values() if r["Type"] == "AWS::IAM::ManagedPolicy"
                and {"Ref": role_id} in r["Properties"].get("Roles", [])]
    [statement] = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Action"] == ["sagemaker:BatchAddClusterNodes", "sagemaker:BatchDeleteClusterNodes"]
    resource = json.dumps(statement["Resource"])
    assert ":sagemaker:us-east-1:" in resource and "cluster/*" in resource  # this Region and account only


def test_botocores_validator_is_not_a_rubber_stamp_for_the_new_shapes(synth: dict[str, Any]) -> None:
    """tests/test_hyperpod.py validates every stack's request; here: a taint without its Effect is refused."""
    from smddp_infra.hyperpod.api import validate_create_cluster
    from smddp_infra.hyperpod.request import create_cluster_request, placeholder_resolver

    template = synth["templates"]["HyperPodEksPlatform"]
    request = create_cluster_request(_cluster(template)[1]["Properties"], placeholder_resolver(template))
    assert validate_create_cluster(request) == ""
    del request["InstanceGroups"][1]["KubernetesConfig"]["Taints"][0]["Effect"]
    assert "Effect" in str(validate_create_cluster(request))


# --- safe updates -----------------------------------------------------------------------------------


def test_none_of_the_new_properties_is_create_only_in_either_source() -> None:
    """cfn-lint's createOnlyProperties and CDK's service spec (causesReplacement) agree: only the three."""
    from smddp_infra.review.replacement import ReplacementData

    data = ReplacementData(require_service_spec=True)
    assert {r.path for r in data.rules(CLUSTER)} == {("ClusterName",), ("VpcConfig",), ("Orchestrator", "Eks")}
    assert {r.source for r in data.rules(CLUSTER)} >= {"cfn-lint schema createOnlyProperties"}


def test_guard_lets_count_growth_labels_taints_schedules_and_modes_through(synth: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    old = synth["templates"]["HyperPodEksPlatform"]
    new = copy.deepcopy(old)
    _, cluster = _cluster(new)
    props = cluster["Properties"]
    for group in props["InstanceGroups"]:
        group["InstanceCount"] += 4
        group.setdefault("KubernetesConfig", {}).setdefault("Labels", {})["example.com/tier"] = "gold"
    props["InstanceGroups"][1]["KubernetesConfig"]["Taints"] = []
    props["InstanceGroups"][1]["ScheduledUpdateConfig"]["ScheduleExpression"] = "cron(0 1 ? * MON *)"
    props["InstanceGroups"][2]["MinInstanceCount"] = 1
    props["TieredStorageConfig"]["InstanceMemoryAllocationPercentage"] = 30
    props["AutoScaling"]["Mode"] = "Disable"
    report = guard(old, new)
    assert not report.findings and report.exit_code == 0


def test_guard_refuses_a_cluster_name_change_and_a_role_change_while_autoscaling(synth: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    old = synth["templates"]["HyperPodEksPlatform"]
    renamed = copy.deepcopy(old)
    logical_id, cluster = _cluster(renamed)
    cluster["Properties"]["ClusterName"] = "platform-training"
    report = guard(old, renamed)
    assert report.blocked and [r.property for f in report.findings for r in f.replacements] == ["ClusterName"]
    assert guard(old, renamed, accepted=True).exit_code == 0

    rerolled = copy.deepcopy(old)
    _, cluster = _cluster(rerolled)
    cluster["Properties"]["ClusterRole"] = "arn:aws:iam::123456789012:role/platform-autoscaler"
    report = guard(old, rerolled)
    [finding] = report.findings
    assert report.blocked and finding.first.kind == "fails" and finding.first.property == "ClusterRole"
    assert "Cannot be updated while autoscaling is enabled" in finding.first.reason
    assert "UpdateCluster refuses it" in finding.meaning
    # with autoscaling off in the deployed cluster, the role may change
    off = copy.deepcopy(old)
    _cluster(off)[1]["Properties"]["AutoScaling"]["Mode"] = "Disable"
    assert not guard(off, rerolled).findings


# --- review lists the options ------------------------------------------------------------------------


def test_review_lists_the_new_options(synth: dict[str, Any]) -> None:
    from smddp_infra.review.summary import _hyperpod_section
    from smddp_infra.review.template import TemplateView

    text = "\n".join(_hyperpod_section(TemplateView(synth["templates"]["HyperPodEksPlatform"]), "##"))
    assert "node provisioning continuous; autoscaling Karpenter" in text and "tiered checkpointing on, 20 % of memory" in text
    assert "| train | ml.p5.48xlarge | 2 to 4 | on-demand | role=train, example.com/team=foundation; taints " \
           "nvidia.com/gpu=true:NoSchedule | `cron(30 4 ? * SAT *)`, batches of 20%, 300 s between, rollback on " \
           f"{ROLLBACK_ALARM} | ami-0123456789abcdef0 |" in text
    assert "| spot | ml.p5.48xlarge | 2 | Spot |" in text
    slurm = "\n".join(_hyperpod_section(TemplateView(synth["templates"]["HyperPodSlurmOptions"]), "##"))
    assert "Slurm; node provisioning standard; autoscaling off" in slurm and "| train | ml.p5.48xlarge | 3 to 4 |" in slurm
    # the address plan: per group nodes x addresses per node (facts.addresses), against the subnet's usable ones
    assert "Address plan: system 2 x 15 + train 4 x 81 + spot 2 x 81 = 516 private IPs of 4,091 usable in its " \
           "subnet (10.0.0.0/20)" in text
    assert _hyperpod_section(TemplateView({"Resources": {}}), "##") == []  # no cluster, no section


def test_the_api_reference_documents_every_new_prop() -> None:
    from smddp_infra.review.api_docs import render

    text = render()
    for name in ("continuous_provisioning", "autoscaling_role", "tiered_checkpointing_memory_percent",
                 "update_rollback_alarms", "eks_cluster"):
        assert f"`{name}`" in text, name


# --- one-line errors and warnings from the construct (no synth) --------------------------------------


@pytest.fixture(scope="module")
def eks_network() -> Any:
    from aws_cdk import App, Environment, Stack

    from smddp_infra import SmddpTrainingNetwork

    stack = Stack(App(context=cdk_context()), "Platform", env=Environment(region="us-east-1", account="123456789012"))
    return SmddpTrainingNetwork(stack, "Network", availability_zone="us-east-1a", read_mbps_per_gpu=10,
                                instance_type="ml.p5.48xlarge", instance_count=2, nat_gateway=True)


def _gpu(**kw: Any) -> Any:
    from smddp_infra import InstanceGroup

    base: dict[str, Any] = {"name": "gpu", "instance_type": "ml.p5.48xlarge", "count": 2}
    base.update(kw)
    return InstanceGroup(**base)


def _controller() -> Any:
    from smddp_infra import InstanceGroup

    return InstanceGroup(name="controller", instance_type="ml.m5.2xlarge", count=1, slurm_node_type="Controller")


EKS = {"orchestrator": "eks", "eks_cluster_arn": EKS_ARN}
SLURM_GROUPS = [_controller()]
BAD = [
    ({"continuous_provisioning": True, "instance_groups": SLURM_GROUPS},
     "continuous_provisioning=True (NodeProvisioningMode: Continuous) is only supported on EKS-orchestrated clusters"),
    ({"autoscaling": True, "instance_groups": SLURM_GROUPS}, "autoscaling=True (AutoScaling, Karpenter) is only for EKS"),
    ({**EKS, "autoscaling": True, "instance_groups": [_gpu()]}, "autoscaling=True needs continuous_provisioning=True"),
    ({**EKS, "autoscaling": True, "continuous_provisioning": True, "node_recovery": False, "instance_groups": [_gpu()]},
     "autoscaling=True needs node_recovery=True"),
    ({**EKS, "autoscaling_role": "PLACEHOLDER", "instance_groups": [_gpu()]}, "autoscaling_role is the role HyperPod assumes"),
    ({**EKS, "tiered_checkpointing_memory_percent": 150, "instance_groups": [_gpu()]},
     "tiered_checkpointing_memory_percent must be a whole percentage of instance memory from 0 to 100"),
    ({"tiered_checkpointing_memory_percent": 20, "instance_groups": SLURM_GROUPS},
     "tiered_checkpointing_memory_percent (managed tiered checkpointing, TieredStorageConfig) needs an EKS-orchestrated"),
    ({"cluster_name": "a" + "-" * 70 + "b", "instance_groups": SLURM_GROUPS}, "cluster_name must be 1 to 63 letters"),
    ({**EKS, "instance_groups": [_gpu(training_plan_arn=PLAN_ARN.replace("us-east-1", "eu-west-1"))]},
     "instance_groups[0].training_plan_arn 'arn:aws:sagemaker:eu-west-1:123456789012:training-plan/hyperpod-p5-two-nodes' "
     "is a training plan in eu-west-1 (aws), but the cluster's stack is in us-east-1 (aws)"),
    ({**EKS, "update_rollback_alarms": [f"alarm-{i}" for i in range(11)], "instance_groups": [_gpu()]},
     "update_rollback_alarms must list at most 10 alarms"),
    ({**EKS, "update_rollback_alarms": [42], "instance_groups": [_gpu()]},
     "update_rollback_alarms[0] must be a CloudWatch alarm (cloudwatch.IAlarm) or its name, got int"),
    ({**EKS, "instance_groups": [_gpu(min_count=3)]}, "instance_groups[0].min_count must be at most the group's count 2"),
    ({"instance_groups": [_controller(), _gpu(slurm_node_type="Compute", kubernetes_labels={"role": "x"})]},
     "instance_groups[1].kubernetes_labels are Kubernetes node labels/taints (KubernetesConfig), for orchestrator='eks' only"),
]


@pytest.mark.parametrize(("props", "message"), BAD, ids=[m[:40] for _, m in BAD])
def test_bad_new_props_raise_one_line_naming_the_prop(eks_network: Any, props: dict[str, Any], message: str) -> None:
    from aws_cdk import aws_iam as iam

    from smddp_infra import HyperPodCluster
    from smddp_infra.errors import ConfigError

    scope = eks_network.node.scope
    if props.get("autoscaling_role") == "PLACEHOLDER":
        props = {**props, "autoscaling_role": iam.Role.from_role_arn(
            scope, f"R{abs(hash(message))}", "arn:aws:iam::123456789012:role/autoscaler", mutable=False)}
    with pytest.raises(ConfigError) as caught:
        HyperPodCluster(scope, f"Bad{abs(hash(message))}", network=eks_network, **props)
    text = str(caught.value)
    assert message in text and "\n" not in text, text


def _warnings(construct: Any, warning_id: str) -> list[str]:
    return [str(e.data) for c in construct.node.find_all() for e in c.node.metadata
            if e.type == "aws:cdk:warning" and warning_id in str(e.data)]


def test_a_taken_autoscaling_role_is_used_as_given(eks_network: Any) -> None:
    from aws_cdk import aws_iam as iam

    from smddp_infra import HyperPodCluster

    scope = eks_network.node.scope
    role = iam.Role.from_role_arn(scope, "Autoscaler", "arn:aws:iam::123456789012:role/platform-autoscaler", mutable=False)
    cluster = HyperPodCluster(scope, "Taken", network=eks_network, **EKS, continuous_provisioning=True, autoscaling=True,
                              autoscaling_role=role, instance_groups=[_gpu()])
    assert cluster.autoscaling_role is None and cluster.cluster_role is role
    assert cluster.cluster.cluster_role == "arn:aws:iam::123456789012:role/platform-autoscaler"


def test_spot_with_a_training_plan_is_a_synth_warning_not_an_error(eks_network: Any) -> None:
    from smddp_infra import HyperPodCluster
    from smddp_infra.constructs.hyperpod import WARN_SPOT_WITH_PLAN

    cluster = HyperPodCluster(eks_network.node.scope, "SpotPlan", network=eks_network, **EKS,
                              instance_groups=[_gpu(spot=True, training_plan_arn=PLAN_ARN)])
    [warning] = _warnings(cluster, WARN_SPOT_WITH_PLAN)
    assert "instance_groups[0]: spot=True with training_plan_arn" in warning and "UNCONFIRMED" in warning


def test_an_imported_eks_cluster_in_another_vpc_is_refused_and_in_the_same_vpc_is_taken(eks_network: Any) -> None:
    from aws_cdk import aws_ec2 as ec2, aws_eks_v2 as eks

    from smddp_infra import ConfigError, HyperPodCluster

    scope = eks_network.node.scope
    other_vpc = ec2.Vpc.from_vpc_attributes(scope, "PlatformVpc", vpc_id=EKS_VPC_ID, availability_zones=["us-east-1a"])
    elsewhere = eks.Cluster.from_cluster_attributes(scope, "Elsewhere", cluster_name="ml-platform", vpc=other_vpc)
    with pytest.raises(ConfigError, match=f"eks_cluster .* is in VPC {EKS_VPC_ID}, not the training network's VPC"):
        HyperPodCluster(scope, "OtherVpc", network=eks_network, orchestrator="eks", eks_cluster=elsewhere,
                        instance_groups=[_gpu()])
    here = eks.Cluster.from_cluster_attributes(scope, "Here", cluster_name="ml-platform", vpc=eks_network.vpc)
    same = HyperPodCluster(scope, "SameVpc", network=eks_network, orchestrator="eks", eks_cluster=here,
                           instance_groups=[_gpu()])
    assert same.eks_cluster is here and same.cluster.orchestrator is not None
