"""TaskGovernance: the cluster policy, a quota per team and the add-on on an EKS HyperPod cluster.

ONE app is synthesized for the module (an EKS platform with two teams, under AwsSolutions); the
snapshot is tests/snapshots/hyperpod/HyperPodEksGovernance.template.json. The values' one-line
errors are checked without a synth.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from _hyperpod_apps import EKS_ARN
from test_default_app_quality import masked

SNAPSHOT = Path(__file__).parent / "snapshots" / "hyperpod" / "HyperPodEksGovernance.template.json"
UPDATE = os.environ.get("SMDDP_UPDATE_SNAPSHOTS") == "1"
QUOTA, SCHEDULER, ADDON = "AWS::SageMaker::ComputeQuota", "AWS::SageMaker::ClusterSchedulerConfig", "AWS::EKS::Addon"


def eks_groups() -> list[Any]:
    from smddp_infra import InstanceGroup

    return [InstanceGroup(name="system", instance_type="ml.m5.2xlarge", count=2),
            InstanceGroup(name="train", instance_type="ml.p5.48xlarge", count=6)]


def two_teams() -> list[Any]:
    from smddp_infra.hyperpod.governance import TeamQuota

    return [
        TeamQuota(team_name="research", instances={"ml.p5.48xlarge": 4}, fair_share_weight=60,
                  resource_sharing="LendAndBorrow", borrow_limit=100, absolute_borrow_limits={"ml.p5.48xlarge": 2},
                  preempt_team_tasks="LowerPriority"),
        TeamQuota(team_name="product", instances={"ml.p5.48xlarge": 2, "ml.m5.2xlarge": 1}, fair_share_weight=40,
                  resource_sharing="Lend", preempt_team_tasks="Never"),
    ]


def add_governance_stack(app: Any, name: str = "HyperPodEksGovernance") -> Any:
    from aws_cdk import Environment, Stack

    from smddp_infra import HyperPodCluster, SmddpTrainingNetwork
    from smddp_infra.constructs.hyperpod import Orchestration
    from smddp_infra.constructs.task_governance import TaskGovernance
    from smddp_infra.hyperpod.governance import PriorityClass, SchedulerPolicy

    stack = Stack(app, name, env=Environment(region="us-east-1"))
    network = SmddpTrainingNetwork(stack, "Network", instance_type="ml.p5.48xlarge", instance_count=6,
                                   availability_zone_id="use1-az4", read_mbps_per_gpu=50, nat_gateway=True)
    cluster = HyperPodCluster(stack, "HyperPod", network=network, instance_groups=eks_groups(),
                              orchestration=Orchestration(orchestrator="eks", eks_cluster_arn=EKS_ARN))
    TaskGovernance(stack, "Governance", cluster=cluster, teams=two_teams(),
                   policy=SchedulerPolicy(priority_classes=[PriorityClass("inference", 100), PriorityClass("training", 50)]))
    return stack


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from aws_cdk import App, Validations
    from cdk_nag import AwsSolutionsChecks

    from conftest import cdk_context

    app = App(context=cdk_context(), outdir=str(tmp_path_factory.mktemp("governance")))
    stack = add_governance_stack(app)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app.synth().get_stack_artifact(stack.artifact_id).template  # type: ignore[no-any-return]


def _of(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def _quotas(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["Properties"]["ComputeQuotaTarget"]["TeamName"]: v for v in _of(template, QUOTA).values()}


# --- the synthesized template ----------------------------------------------------------------------


@pytest.mark.slow
def test_template_matches_the_reviewed_snapshot(template: dict[str, Any]) -> None:
    current = masked(template)
    if UPDATE:
        SNAPSHOT.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    assert SNAPSHOT.exists(), f"{SNAPSHOT} is missing: review the template, then write it with SMDDP_UPDATE_SNAPSHOTS=1"
    assert current == json.loads(SNAPSHOT.read_text())


@pytest.mark.slow
def test_logical_ids_of_policy_quotas_and_addon_are_pinned(template: dict[str, Any]) -> None:
    """Construct ids make the logical ids: a new one deletes the quota and creates another."""
    ids = sorted(k for k, v in template["Resources"].items() if v["Type"] in (QUOTA, SCHEDULER, ADDON))
    assert ids == ["GovernanceAddonB81AEBBE", "GovernanceSchedulerConfigCFF9C519",
                   "GovernanceTeamproductQuota8F061DA0", "GovernanceTeamresearchQuota45AE05AD"]


@pytest.mark.slow
def test_one_policy_with_priority_classes_and_fair_share_on_the_cluster(template: dict[str, Any]) -> None:
    [policy] = _of(template, SCHEDULER).values()
    props = policy["Properties"]
    assert props["SchedulerConfig"] == {"FairShare": "Enabled", "PriorityClasses": [
        {"Name": "inference", "Weight": 100}, {"Name": "training", "Weight": 50}]}
    [cluster_id] = _of(template, "AWS::SageMaker::Cluster")
    assert props["ClusterArn"] == {"Fn::GetAtt": [cluster_id, "ClusterArn"]}


@pytest.mark.slow
def test_a_quota_per_team_with_instances_borrowing_and_preemption(template: dict[str, Any]) -> None:
    quotas = _quotas(template)
    assert sorted(quotas) == ["product", "research"]
    research = quotas["research"]["Properties"]
    assert research["ComputeQuotaTarget"] == {"TeamName": "research", "FairShareWeight": 60}
    assert research["ComputeQuotaConfig"] == {
        "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 4}],
        "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 100,
                                  "AbsoluteBorrowLimits": [{"InstanceType": "ml.p5.48xlarge", "Count": 2}]},
        "PreemptTeamTasks": "LowerPriority"}
    product = quotas["product"]["Properties"]["ComputeQuotaConfig"]
    assert product["ComputeQuotaResources"] == [{"InstanceType": "ml.m5.2xlarge", "Count": 1},
                                                {"InstanceType": "ml.p5.48xlarge", "Count": 2}]
    assert product["ResourceSharingConfig"] == {"Strategy": "Lend"} and product["PreemptTeamTasks"] == "Never"


@pytest.mark.slow
def test_the_addon_is_installed_on_the_named_eks_cluster_before_policy_and_quotas(template: dict[str, Any]) -> None:
    [(addon_id, addon)] = _of(template, ADDON).items()
    assert addon["Properties"] == {"AddonName": "amazon-sagemaker-hyperpod-taskgovernance", "ClusterName": "ml-platform",
                                   "PreserveOnDelete": True}
    for resource in (*_of(template, QUOTA).values(), *_of(template, SCHEDULER).values()):
        assert addon_id in resource["DependsOn"]


@pytest.mark.slow
def test_template_is_clean_under_cfn_lint(template: dict[str, Any]) -> None:
    from cfnlint.api import ManualArgs, lint

    matches = lint(json.dumps(template), config=ManualArgs(regions=["us-east-1"]))
    assert [str(m) for m in matches] == []
    # and cfn-lint reads the quota's schema: a team name the pattern refuses is an error
    broken = copy.deepcopy(template)
    next(iter(_of(broken, QUOTA).values()))["Properties"]["ComputeQuotaTarget"]["TeamName"] = "Research_Team"
    assert lint(json.dumps(broken), config=ManualArgs(regions=["us-east-1"]))


# --- the guard: team names are create-only ---------------------------------------------------------


@pytest.mark.slow
def test_guard_refuses_renaming_a_team_in_place(template: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    new = copy.deepcopy(template)
    [(logical_id, quota)] = [(k, v) for k, v in _of(new, QUOTA).items()
                             if v["Properties"]["ComputeQuotaTarget"]["TeamName"] == "research"]
    quota["Properties"]["ComputeQuotaTarget"]["TeamName"] = "research-two"
    report = guard(template, new)
    assert report.blocked and report.exit_code == 1
    [finding] = [f for f in report.findings if f.first.logical_id == logical_id]
    assert finding.first.property == "ComputeQuotaTarget.TeamName" and "delete_then_create" in finding.meaning
    assert guard(template, new, accepted=True).exit_code == 0


@pytest.mark.slow
def test_guard_refuses_a_team_whose_construct_was_renamed(template: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    new = copy.deepcopy(template)
    old_id = next(k for k, v in _of(new, QUOTA).items() if v["Properties"]["ComputeQuotaTarget"]["TeamName"] == "product")
    new["Resources"]["GovernanceTeamproductsQuota00000000"] = new["Resources"].pop(old_id)
    report = guard(template, new)
    assert report.blocked and any(f.first.logical_id == old_id and f.first.kind == "delete" for f in report.findings)


@pytest.mark.slow
def test_guard_lets_a_quota_count_change_through(template: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    new = copy.deepcopy(template)
    for quota in _of(new, QUOTA).values():
        for resource in quota["Properties"]["ComputeQuotaConfig"]["ComputeQuotaResources"]:
            resource["Count"] += 1
    assert guard(template, new).exit_code == 0


# --- one-line errors and warnings, without a synth -----------------------------------------------


@pytest.mark.parametrize(("build", "message"), [
    (lambda g: g.TeamQuota(team_name="Research", instances={"ml.p5.48xlarge": 1}), "team_name must match"),
    (lambda g: g.TeamQuota(team_name="r" * 52, instances={"ml.p5.48xlarge": 1}), "team_name must have at most 51 characters"),
    (lambda g: g.TeamQuota(team_name="a", instances={"ml.p99.48xlarge": 1}), "instances['ml.p99.48xlarge'] must be one of"),
    (lambda g: g.TeamQuota(team_name="a", instances={"ml.p5.48xlarge": -1}), "instances['ml.p5.48xlarge'] must be 0 to"),
    (lambda g: g.TeamQuota(team_name="a", instances=["ml.p5.48xlarge"]), "instances must be a mapping"),
    (lambda g: g.TeamQuota(team_name="a", instances={}, fair_share_weight=101), "fair_share_weight must be 0 to 100"),
    (lambda g: g.TeamQuota(team_name="a", instances={}, resource_sharing="Borrow"), "resource_sharing must be Lend, DontLend, LendAndBorrow"),
    (lambda g: g.TeamQuota(team_name="a", instances={}, resource_sharing="Lend", borrow_limit=50),
     "borrow_limit caps borrowing, which only resource_sharing='LendAndBorrow' does"),
    (lambda g: g.TeamQuota(team_name="a", instances={}, borrow_limit=10001), "borrow_limit must be 0 to 10000"),
    (lambda g: g.TeamQuota(team_name="a", instances={}, preempt_team_tasks="Always"), "preempt_team_tasks must be Never, LowerPriority"),
    (lambda g: g.TeamQuota(team_name="a", instances={}, name="bad_name"), "name must match"),
    (lambda g: g.TeamQuota(team="a", instances={}), "TeamQuota has no field 'team': did you mean 'team_name'?"),
    (lambda g: g.PriorityClass("Inference", 10), "name must match"),
    (lambda g: g.PriorityClass("inference", 101), "weight must be 0 to 100"),
    (lambda g: g.PriorityClass("inference", 1.5), "weight must be a whole number"),
    (lambda g: g.SchedulerPolicy(priority_classes=[g.PriorityClass(f"p{i}", i) for i in range(11)]),
     "priority_classes may hold at most 10 entries"),
    (lambda g: g.SchedulerPolicy(priority_classes=[g.PriorityClass("p", 1), g.PriorityClass("p", 2)]),
     "priority_classes[1] repeats priority class 'p' of priority_classes[0]"),
    (lambda g: g.SchedulerPolicy(fair_share="yes"), "fair_share must be True or False"),
    (lambda g: g.check_teams("teams", []), "teams must name at least one team"),
    (lambda g: g.check_teams("teams", [g.TeamQuota(team_name="a", instances={}), g.TeamQuota(team_name="a", instances={})]),
     "teams[1] repeats team 'a' of teams[0]"),
    (lambda g: g.check_orchestrator("cluster", "slurm"), "cluster must be an EKS-orchestrated HyperPodCluster"),
    (lambda g: g.check_kubernetes_version("eks_settings.kubernetes_version", "1.29"), "needs 1.30 or later"),
    (lambda g: g.check_quota_types("teams[0].instances", {"ml.g5.xlarge": 1}, {"ml.p5.48xlarge": 4}),
     "teams[0].instances['ml.g5.xlarge']: the cluster has no instance group of ml.g5.xlarge"),
])
def test_bad_values_are_one_line_naming_the_prop(build: Any, message: str) -> None:
    from smddp_infra.errors import ConfigError
    from smddp_infra.hyperpod import governance

    with pytest.raises(ConfigError) as caught:
        build(governance)
    text = str(caught.value)
    assert message in text and "\n" not in text, text


def test_rules_come_from_the_installed_schema() -> None:
    """The team name rule is the schema's (a Kubernetes namespace suffix), and TeamName is create-only there."""
    from smddp_infra.hyperpod import governance as g

    assert g.schema_rule(g.QUOTA_TYPE, "ComputeQuotaTarget", "TeamName")["pattern"].startswith("^[a-z0-9]")
    assert "/properties/ComputeQuotaTarget/TeamName" in g.create_only(g.QUOTA_TYPE)
    assert g.not_evaluated() is None


def test_quotas_past_the_clusters_instances_are_a_warning_marked_unconfirmed() -> None:
    from smddp_infra.hyperpod.governance import quota_overcommit_warnings

    [warning] = quota_overcommit_warnings([("research", {"ml.p5.48xlarge": 4}), ("product", {"ml.p5.48xlarge": 3})],
                                          {"ml.p5.48xlarge": 6, "ml.m5.2xlarge": 2})
    assert "add up to 7 (research 4, product 3), more than the cluster's 6" in warning and "UNCONFIRMED" in warning
    assert quota_overcommit_warnings([("research", {"ml.p5.48xlarge": 6})], {"ml.p5.48xlarge": 6}) == []


# --- the construct's own refusals ------------------------------------------------------------------


@pytest.fixture(scope="module")
def clusters() -> dict[str, Any]:
    """An EKS and a Slurm cluster in one unsynthesized stack (construction only)."""
    from aws_cdk import App, Environment, Stack

    from smddp_infra import HyperPodCluster, InstanceGroup, SmddpTrainingNetwork
    from smddp_infra.constructs.hyperpod import Orchestration

    stack = Stack(App(), "Refusals", env=Environment(region="us-east-1"))
    network = SmddpTrainingNetwork(stack, "Network", instance_type="ml.p5.48xlarge", instance_count=6,
                                   availability_zone_id="use1-az4", read_mbps_per_gpu=50, nat_gateway=True)
    eks = HyperPodCluster(stack, "Eks", network=network, instance_groups=eks_groups(),
                          orchestration=Orchestration(orchestrator="eks", eks_cluster_arn=EKS_ARN))
    slurm = HyperPodCluster(stack, "Slurm", network=network, instance_groups=[
        InstanceGroup(name="controller", instance_type="ml.m5.2xlarge", count=1, slurm_node_type="Controller"),
        InstanceGroup(name="train", instance_type="ml.p5.48xlarge", count=4, slurm_node_type="Compute")])
    return {"stack": stack, "eks": eks, "slurm": slurm}


@pytest.mark.slow
def test_a_slurm_cluster_and_a_quota_for_a_missing_type_are_refused(clusters: dict[str, Any]) -> None:
    from smddp_infra.constructs.task_governance import TaskGovernance
    from smddp_infra.errors import ConfigError, PropTypeError
    from smddp_infra.hyperpod.governance import TeamQuota

    stack = clusters["stack"]
    with pytest.raises(ConfigError, match="cluster must be an EKS-orchestrated HyperPodCluster.*'slurm'"):
        TaskGovernance(stack, "OnSlurm", cluster=clusters["slurm"], teams=two_teams())
    with pytest.raises(ConfigError, match=r"teams\[0\]\.instances\['ml\.g5\.xlarge'\]: the cluster has no instance group"):
        TaskGovernance(stack, "Missing", cluster=clusters["eks"],
                       teams=[TeamQuota(team_name="a", instances={"ml.g5.xlarge": 1})])
    with pytest.raises(PropTypeError, match="cluster must be a HyperPodCluster, got str"):
        TaskGovernance(stack, "NotACluster", cluster="my-cluster", teams=two_teams())  # type: ignore[arg-type]
    assert stack.node.try_find_child("OnSlurm") is None  # refused before anything is created


@pytest.mark.slow
def test_overcommitted_quotas_are_a_synth_warning_not_an_error(clusters: dict[str, Any]) -> None:
    from aws_cdk.assertions import Annotations, Match

    from smddp_infra.constructs.task_governance import WARN_QUOTA_OVERCOMMIT, TaskGovernance
    from smddp_infra.hyperpod.governance import TeamQuota

    stack = clusters["stack"]
    TaskGovernance(stack, "Over", cluster=clusters["eks"], teams=[
        TeamQuota(team_name="a", instances={"ml.p5.48xlarge": 4}), TeamQuota(team_name="b", instances={"ml.p5.48xlarge": 4})])
    found = Annotations.from_stack(stack).find_warning("/Refusals/Over", Match.string_like_regexp("add up to 8"))
    assert found and WARN_QUOTA_OVERCOMMIT in json.dumps(found[0].entry.data)
