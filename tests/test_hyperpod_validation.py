"""The pure HyperPod validators (no synth): the rules read botocore, and say when they cannot."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from smddp_infra.errors import ConfigError
from smddp_infra.hyperpod import InstanceGroup, api
from smddp_infra.hyperpod import validation as v
from smddp_infra.hyperpod.values import default_hyperpod_groups


@pytest.fixture
def no_botocore(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if botocore were not installed (it is not a core dependency)."""
    monkeypatch.setattr(api, "service_model", lambda service: None)
    yield
    monkeypatch.undo()


def test_the_instance_types_are_botocores_enum_not_a_copy() -> None:
    import botocore.session

    enum = botocore.session.get_session().get_service_model("sagemaker").shape_for("ClusterInstanceType").enum
    assert api.cluster_instance_types() == tuple(enum)
    assert v.check_instance_type("t", enum[-1]) is None


def test_without_botocore_the_type_and_plan_checks_are_not_evaluated_and_say_so(no_botocore: Any) -> None:
    groups = [InstanceGroup(name="c", instance_type="ml.m5.2xlarge", count=1, slurm_node_type="Controller"),
              InstanceGroup(name="g", instance_type="ml.future.48xlarge", count=1, slurm_node_type="Compute",
                            training_plan_arn="arn:aws:sagemaker:us-east-1:123456789012:training-plan/x")]
    notes = v.check_groups("instance_groups", "slurm", groups)
    assert any(n.startswith("instance_groups[1].instance_type 'ml.future.48xlarge' not evaluated: botocore") for n in notes)
    assert any(n.startswith("instance_groups[1].training_plan_arn not evaluated") for n in notes)
    # rules that need no botocore still hold
    with pytest.raises(ConfigError, match="exactly one group with slurm_node_type='Controller'"):
        v.check_groups("instance_groups", "slurm", groups[1:])


def test_an_eks_arn_is_checked_even_without_botocore(no_botocore: Any) -> None:
    with pytest.raises(ConfigError, match="must be an EKS cluster ARN"):
        v.check_eks_cluster_arn("eks_cluster_arn", "eks", "arn:aws:ecs:us-east-1:123456789012:cluster/x")


def test_the_subnet_check_is_an_error_only_when_the_addresses_certainly_run_out() -> None:
    groups = [InstanceGroup(name="g", instance_type="ml.p5.48xlarge", count=7)]  # 7 x 32 = 224 IPs on Slurm
    v.check_fits_subnet("instance_groups", groups, ips_override=None, subnet_mask=24, other_ips=27)  # 251 usable
    with pytest.raises(ConfigError, match=r"^instance_groups: 7 nodes need 224 private IPs \+ 28 for the file system"):
        v.check_fits_subnet("instance_groups", groups, ips_override=None, subnet_mask=24, other_ips=28)
    with pytest.raises(ConfigError, match="takes 7 x 40 \\(ml.p5.48xlarge on slurm: ips_per_node 40, as given\\)"):
        v.check_fits_subnet("instance_groups", groups, ips_override=40, subnet_mask=24, other_ips=0)


def test_on_eks_the_subnet_check_counts_the_pods_addresses_and_names_a_new_networks_mask() -> None:
    """The same 7 p5 nodes take 81 each on EKS (32 interfaces + 49 pod addresses the VPC CNI holds):
    567 do not fit a /24; the line names the group, its figure and source, and the mask of a NEW network."""
    groups = [InstanceGroup(name="c", instance_type="ml.m5.2xlarge", count=1),
              InstanceGroup(name="train", instance_type="ml.p5.48xlarge", count=7)]
    with pytest.raises(ConfigError) as caught:
        v.check_fits_subnet("instance_groups", groups, ips_override=None, subnet_mask=24, other_ips=20, orchestrator="eks")
    text = str(caught.value)
    assert "\n" not in text and text.startswith("instance_groups: 8 nodes need 582 private IPs + 20")
    assert "instance_groups[1] 'train' takes 7 x 81 (ml.p5.48xlarge on eks: 32 network cards" in text
    assert "WARM_ENI_TARGET=1" in text and "the other groups 15" in text
    assert "a new network with a /22 or larger training subnet" in text and "never change this one in place" in text
    v.check_fits_subnet("instance_groups", groups, ips_override=None, subnet_mask=22, other_ips=20, orchestrator="eks")


def test_deep_health_checks_default_on_accelerator_efa_types_only() -> None:
    assert v.default_health_checks("ml.p5.48xlarge") == ("InstanceStress", "InstanceConnectivity")
    assert v.default_health_checks("ml.trn1.32xlarge") == ("InstanceStress", "InstanceConnectivity")
    assert v.default_health_checks("ml.m5.2xlarge") == ()
    explicit = InstanceGroup(name="g", instance_type="ml.p5.48xlarge", count=1, deep_health_checks=())
    assert v.health_checks(explicit) == ()


def test_the_default_apps_groups_pass_every_rule() -> None:
    groups = default_hyperpod_groups("ml.p5.48xlarge", 16)
    assert v.check_groups("instance_groups", "slurm", groups) == []
    assert [g.slurm_node_type for g in groups] == ["Controller", "Compute"]


# --- issue 34: the 2026 surface, one rule each through the entry point that runs it ----------------

def _eks(**kw: Any) -> InstanceGroup:
    base: dict[str, Any] = {"name": "gpu", "instance_type": "ml.p5.48xlarge", "count": 4}
    base.update(kw)
    return InstanceGroup(**base)


def _taint(key: str = "nvidia.com/gpu", value: Any = "true", effect: str = "NoSchedule") -> Any:
    from smddp_infra import KubernetesTaint

    return KubernetesTaint(key, value, effect)


GROUP_RULES = [
    ({"min_count": 5}, "instance_groups[0].min_count must be at most the group's count 4 (MinInstanceCount <= InstanceCount), got 5"),
    ({"min_count": -1}, "instance_groups[0].min_count must be a whole number from 0 to 6758"),
    ({"spot": "yes"}, "instance_groups[0].spot must be True or False, got str 'yes'"),
    ({"kubernetes_labels": {"team/": "x"}}, "instance_groups[0].kubernetes_labels key 'team/' must be letters"),
    ({"kubernetes_labels": {"example.com/" + "n" * 64: "x"}}, "a name of at most 63 characters (Kubernetes)"),
    ({"kubernetes_labels": {"role": ""}}, "instance_groups[0].kubernetes_labels['role'] must be 1 to 63"),
    ({"kubernetes_labels": {"role": "-bad"}}, "instance_groups[0].kubernetes_labels['role'] must be 1 to 63"),
    ({"kubernetes_labels": {f"k{i}": "v" for i in range(51)}}, "must hold at most 50 labels"),
    ({"kubernetes_labels": ["role=x"]}, "instance_groups[0].kubernetes_labels must be a mapping"),
    ({"kubernetes_taints": [_taint(effect="NoRun")]},
     "instance_groups[0].kubernetes_taints[0].effect must be one of NoSchedule, PreferNoSchedule, NoExecute, got 'NoRun'"),
    ({"kubernetes_taints": [_taint(key="bad key")]}, "instance_groups[0].kubernetes_taints[0].key 'bad key' must be"),
    ({"kubernetes_taints": [_taint(value="x" * 64)]}, "instance_groups[0].kubernetes_taints[0].value must be 1 to 63"),
    ({"kubernetes_taints": [("k", "v", "NoSchedule")]}, "instance_groups[0].kubernetes_taints[0] must be a KubernetesTaint"),
    ({"kubernetes_taints": _taint()}, "instance_groups[0].kubernetes_taints must be a list of KubernetesTaint"),
    ({"update_schedule": "cron(0 3 * * * *)"}, "instance_groups[0].update_schedule must be cron(<minute> <hour>"),
    ({"update_schedule": "rate(7 days)"}, "instance_groups[0].update_schedule must be cron("),
    ({"update_schedule": ""}, "instance_groups[0].update_schedule must be a cron expression"),
    ({"image_id": "ami-123"}, "instance_groups[0].image_id must be an AMI id"),
    ({"image_id": "default"}, "instance_groups[0].image_id 'default' is not an AMI id, and CloudFormation's ImageId"),
]


@pytest.mark.parametrize(("kw", "message"), GROUP_RULES, ids=[m[:50] for _, m in GROUP_RULES])
def test_each_new_group_rule_is_one_line_naming_the_prop(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        v.check_groups("instance_groups", "eks", [_eks(**kw)])
    assert message in str(caught.value) and "\n" not in str(caught.value), str(caught.value)


@pytest.mark.parametrize("kw", [{"kubernetes_labels": {"role": "train"}}, {"kubernetes_taints": [_taint()]}])
def test_kubernetes_labels_and_taints_are_refused_on_slurm(kw: dict[str, Any]) -> None:
    groups = [InstanceGroup(name="c", instance_type="ml.m5.2xlarge", count=1, slurm_node_type="Controller", **kw)]
    with pytest.raises(ConfigError, match=r"instance_groups\[0\]\.kubernetes_(labels|taints) are Kubernetes node "
                                          r"labels/taints \(KubernetesConfig\), for orchestrator='eks' only"):
        v.check_groups("instance_groups", "slurm", groups)


def test_valid_new_group_options_pass_on_eks_and_what_slurm_takes_passes_on_slurm() -> None:
    group = _eks(min_count=4, spot=True, kubernetes_labels={"example.com/team": "ml", "role": "train"},
                 kubernetes_taints=[_taint(), _taint("dedicated", None, "NoExecute")],
                 update_schedule="cron(30 4 ? * SAT *)", image_id="ami-0123456789abcdef0")
    assert v.check_groups("instance_groups", "eks", [group]) == []
    slurm = [InstanceGroup(name="c", instance_type="ml.m5.2xlarge", count=1, slurm_node_type="Controller", min_count=1,
                           update_schedule="cron(0 2 ? * SUN *)", image_id="ami-0123456789abcdef0")]
    assert v.check_groups("instance_groups", "slurm", slurm) == []


def test_the_label_and_taint_syntax_is_botocores_and_the_effects_its_enum() -> None:
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    assert api.enum("ClusterKubernetesTaintEffect") == tuple(model.shape_for("ClusterKubernetesTaintEffect").enum) \
        == ("NoSchedule", "PreferNoSchedule", "NoExecute")
    assert api.pattern("ClusterKubernetesLabelKey").pattern == model.shape_for("ClusterKubernetesLabelKey").metadata["pattern"]
    assert v._K8S_KEY.pattern == model.shape_for("ClusterKubernetesLabelKey").metadata["pattern"]  # the fallback is the same


def test_the_schedule_form_is_read_from_the_cloudformation_schema_and_not_evaluated_without_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert api.schedule_expression_pattern() is not None
    monkeypatch.setattr(api, "schedule_expression_pattern", lambda: None)
    note = v.check_update_schedule("instance_groups[0].update_schedule", "cron(0 3 * * * *)")
    assert note is not None and "not evaluated: cfn-lint is not installed" in note


def test_the_cited_api_facts_are_in_the_installed_botocore() -> None:
    """The rules that cite botocore's own words: the text is there, so the rule stands on it."""
    assert "only supported for EKS orchestrated clusters" in str(api.doc("CreateClusterRequest", "NodeProvisioningMode"))
    assert "only required when autoscaling is enabled" in str(api.doc("CreateClusterRequest", "ClusterRole"))
    assert "Cannot be updated while autoscaling is enabled" in str(api.doc("UpdateClusterRequest", "ClusterRole"))
    assert api.length("ClusterInstanceMemoryAllocationPercentage") == (0, 100)
    assert api.length("ClusterName") == (1, 63)


@pytest.mark.parametrize(("check", "args", "message"), [
    (v.check_continuous_provisioning, ("continuous_provisioning", "slurm", True),
     "continuous_provisioning=True (NodeProvisioningMode: Continuous) is only supported on EKS-orchestrated clusters"),
    (v.check_autoscaling_orchestrator, ("autoscaling", "slurm", True), "autoscaling=True (AutoScaling, Karpenter) is only for EKS"),
    (v.check_autoscaling_needs_continuous, ("autoscaling", True, False), "autoscaling=True needs continuous_provisioning=True"),
    (v.check_autoscaling_needs_node_recovery, ("autoscaling", True, False), "autoscaling=True needs node_recovery=True"),
    (v.check_autoscaling_role, ("autoscaling_role", False, object()), "autoscaling_role is the role HyperPod assumes"),
    (v.check_memory_percent, ("tiered_checkpointing_memory_percent", 101), "from 0 to 100"),
    (v.check_memory_percent, ("tiered_checkpointing_memory_percent", True), "from 0 to 100"),
    (v.check_tiered_checkpointing_orchestrator, ("tiered_checkpointing_memory_percent", "slurm", 20),
     "needs an EKS-orchestrated cluster"),
    (v.check_cluster_name, ("cluster_name", "a" + "-" * 70 + "b"), "(72 characters)"),
    (v.check_cluster_name, ("cluster_name", "a" * 64), "1 to 63 letters"),
    (v.check_training_plan_region, ("p", "arn:aws:sagemaker:us-west-2:123456789012:training-plan/p5", "us-east-1", "aws"),
     "is a training plan in us-west-2 (aws), but the cluster's stack is in us-east-1"),
    (v.check_training_plan_region, ("p", "arn:aws-cn:sagemaker:us-east-1:123456789012:training-plan/p5", "us-east-1", "aws"),
     "(aws-cn)"),
    (v.check_rollback_alarms, ("update_rollback_alarms", [f"a{i}" for i in range(11)]), "at most 10 alarms"),
    (v.check_rollback_alarms, ("update_rollback_alarms", ["  "]), "update_rollback_alarms[0] must be an alarm name"),
])
def test_each_cluster_rule_is_one_line_naming_the_prop(check: Any, args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check(*args)
    assert message in str(caught.value) and "\n" not in str(caught.value), str(caught.value)


def test_the_cluster_rules_accept_what_the_api_accepts() -> None:
    v.check_continuous_provisioning("continuous_provisioning", "eks", True)
    v.check_autoscaling_orchestrator("autoscaling", "eks", True)
    v.check_autoscaling_needs_continuous("autoscaling", True, True)
    v.check_autoscaling_needs_node_recovery("autoscaling", True, True)
    v.check_memory_percent("tiered_checkpointing_memory_percent", 0)
    v.check_memory_percent("tiered_checkpointing_memory_percent", 100)
    v.check_cluster_name("cluster_name", "a" * 63)
    v.check_training_plan_region("p", "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5", "us-east-1", "aws")


def test_spot_with_a_training_plan_is_a_warning_marked_unconfirmed() -> None:
    plan = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/hyperpod-p5-two-nodes"
    warning = v.spot_with_plan_warning("instance_groups[0]", _eks(spot=True, training_plan_arn=plan))
    assert warning is not None and "UNCONFIRMED" in warning and warning.startswith("instance_groups[0]: spot=True")
    assert v.spot_with_plan_warning("g", _eks(spot=True)) is None
    assert v.spot_with_plan_warning("g", _eks(training_plan_arn=plan)) is None
