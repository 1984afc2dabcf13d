"""What the constructs do with bought capacity (issue 29): a training plan on the L3 (job
document, launch guardrail, the plan's AZ against the subnet's) and an EFA-enabled file
system whose only clients are training jobs.

One App, synthesized once for the module; the refusals happen before synth.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import Synthesized, cdk_context

PLAN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-16-node-reserved-2027-q1"
ENV = {"account": "123456789012", "region": "us-east-1"}


def _tiering_plan() -> Any:
    from smddp_infra.sizing.tiering import TieringPrices, plan_intelligent_tiering

    prices = TieringPrices(frequent_gb_month=0.023, throughput_mbps_month=0.9, read_cache_gib_month=0.3)
    return plan_intelligent_tiering(6000, 200_000, prices=prices, hot_gib=50_000)


TIERING_PLAN = _tiering_plan()


def _network(stack: Any, **props: Any) -> Any:
    from smddp_infra.constructs.training_network import SmddpTrainingNetwork

    defaults: dict[str, Any] = {"instance_type": "ml.p5.48xlarge", "instance_count": 2, "required_throughput_mbps": 2000}
    defaults.update(props)
    return SmddpTrainingNetwork(stack, "Net", **defaults)


def _messages(synth: Synthesized, stack: Any, level: str) -> list[str]:
    artifact = synth.assembly.get_stack_artifact(stack.artifact_id)
    return [str(m.entry.data) for m in artifact.messages if str(m.level).lower().endswith(level)]


@pytest.fixture(scope="module")
def built() -> dict[str, Any]:
    from aws_cdk import App, Environment, Stack

    app = App(context=cdk_context())
    env = Environment(**ENV)
    by_id = Stack(app, "PlanById", env=env)
    net = _network(by_id, availability_zone_id="use1-az6", training_plan_arn=PLAN,
                   training_plan_availability_zone_id="use1-az6")
    net.launch_policy()
    by_name = Stack(app, "PlanByName", env=env)
    _network(by_name, availability_zone="us-east-1a", training_plan_arn=PLAN, training_plan_availability_zone_id="use1-az6")
    efa_jobs = Stack(app, "EfaJobsOnly", env=env)
    _network(efa_jobs, availability_zone="us-east-1a", efa_file_system=True)
    efa_cluster = Stack(app, "EfaWithCluster", env=env)
    clustered = _network(efa_cluster, availability_zone="us-east-1a", efa_file_system=True)
    clustered.add_efa_client("HyperPod cluster Cluster")  # what the HyperPod construct calls
    tiering = Stack(app, "Tiering", env=env)
    _network(tiering, availability_zone="us-east-1a", required_throughput_mbps=None, lustre_plan=TIERING_PLAN)
    stacks = {"by_id": by_id, "by_name": by_name, "net": net, "efa_jobs": efa_jobs, "efa_cluster": efa_cluster,
              "clustered": clustered, "tiering": tiering}
    synth = Synthesized(app, by_id)
    return {"synth": synth, **stacks}


def _document(synth: Synthesized, stack: Any) -> dict[str, Any]:
    template = synth.assembly.get_stack_artifact(stack.artifact_id).template
    (output,) = [o for k, o in template["Outputs"].items() if k.endswith("TrainingJobConfig")]
    parts = output["Value"]["Fn::Join"][1]
    text = "".join(p if isinstance(p, str) else "TOKEN" for p in parts)  # tokens sit inside JSON strings
    return json.loads(text)


def test_the_document_carries_the_plan_its_zone_and_the_subnets_zone_id(built):
    doc = _document(built["synth"], built["by_id"])
    assert doc["version"] == 2
    assert (doc["trainingPlanArn"], doc["trainingPlanAvailabilityZoneId"], doc["availabilityZoneId"]) == (
        PLAN, "use1-az6", "use1-az6")


def test_the_launch_policy_allows_exactly_the_plan(built):
    template = built["synth"].json
    (policy,) = [r for r in template["Resources"].values()
                 if r["Type"] == "AWS::IAM::ManagedPolicy" and "Roles" not in r["Properties"]]
    launch = policy["Properties"]["PolicyDocument"]["Statement"][0]
    assert PLAN in launch["Resource"] and sum(1 for r in launch["Resource"] if r == PLAN) == 1


def test_a_network_placed_by_name_says_the_plan_zone_is_not_evaluated(built):
    infos = _messages(built["synth"], built["by_name"], "info")
    assert any("training_plan_availability_zone_id not evaluated" in m and "known by name only" in m for m in infos), infos
    assert not any("training_plan" in m for m in _messages(built["synth"], built["by_id"], "info"))


@pytest.mark.parametrize("props, message", [
    ({"availability_zone_id": "use1-az6", "training_plan_arn": PLAN, "training_plan_availability_zone_id": "use1-az1"},
     "training_plan_availability_zone_id 'use1-az1': the training plan's reserved capacity is in use1-az1 but the "
     "training subnet is in use1-az6"),
    ({"availability_zone_id": "use1-az6", "training_plan_arn": "arn:aws:sagemaker:us-east-1:123456789012:plan/x"},
     "training_plan_arn must be a SageMaker training plan ARN"),
    ({"availability_zone_id": "use1-az6", "training_plan_availability_zone_id": "use1-az6"},
     "training_plan_availability_zone_id='use1-az6' was given without training_plan_arn"),
])
def test_bad_plan_props_are_one_line_before_synth(props, message):
    from aws_cdk import App, Environment, Stack

    from smddp_infra.errors import ConfigError

    stack = Stack(App(context=cdk_context()), "Bad", env=Environment(**ENV))
    with pytest.raises(ConfigError) as caught:
        _network(stack, **props)
    assert message in str(caught.value) and "\n" not in str(caught.value)


# --- an EFA-enabled file system for training jobs ---------------------------------------------

def _efa_warnings(synth: Synthesized, stack: Any) -> list[str]:
    return [m for m in _messages(synth, stack, "warning") if "smddp:efaFileSystemForTrainingJobs" in m]


def test_an_efa_file_system_for_training_jobs_only_is_a_warning_that_says_tcp(built):
    from smddp_infra.sizing.guards import EFA_OVER_TCP_FOR_TRAINING_JOBS

    (warning,) = _efa_warnings(built["synth"], built["efa_jobs"])
    assert "efa_file_system=True on EfaJobsOnly/Net" in warning and "mount it over TCP" in warning
    assert EFA_OVER_TCP_FOR_TRAINING_JOBS in warning and "UNCONFIRMED" in warning
    template = built["synth"].assembly.get_stack_artifact(built["efa_jobs"].artifact_id).template
    (fs,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::FSx::FileSystem"]
    assert fs["Properties"]["LustreConfiguration"]["EfaEnabled"] is True  # still built as asked


def test_the_shape_the_warning_cites_has_no_efa_member():
    import botocore.session

    shape = botocore.session.get_session().get_service_model("sagemaker").shape_for("FileSystemDataSource")
    assert sorted(shape.members) == ["DirectoryPath", "FileSystemAccessMode", "FileSystemId", "FileSystemType"]


def test_an_attached_efa_client_silences_it_and_a_plain_file_system_never_warns(built):
    assert _efa_warnings(built["synth"], built["efa_cluster"]) == []
    assert built["clustered"].efa_clients == ("HyperPod cluster Cluster",)
    assert _efa_warnings(built["synth"], built["by_id"]) == []


# --- an Intelligent-Tiering file system ---------------------------------------------------------

def _template(built: dict[str, Any], name: str) -> dict[str, Any]:
    return built["synth"].assembly.get_stack_artifact(built[name].artifact_id).template


def test_an_intelligent_tiering_plan_builds_the_class_without_storage_capacity(built):
    (fs,) = [r for r in _template(built, "tiering")["Resources"].values() if r["Type"] == "AWS::FSx::FileSystem"]
    props = fs["Properties"]
    assert props["StorageType"] == "INTELLIGENT_TIERING" and "StorageCapacity" not in props
    lustre = props["LustreConfiguration"]
    assert lustre["DeploymentType"] == "PERSISTENT_2" and "PerUnitStorageThroughput" not in lustre
    assert lustre["ThroughputCapacity"] == TIERING_PLAN.throughput_capacity_mbps == 8000
    assert lustre["DataReadCacheConfiguration"] == {"SizingMode": "USER_PROVISIONED", "SizeGiB": 50_000}
    assert lustre["MetadataConfiguration"] == {"Mode": "AUTOMATIC"} and props["FileSystemTypeVersion"] == "2.15"
    assert fs["Metadata"]["smddp:sizing"]["storageType"] == "INTELLIGENT_TIERING"


def test_the_intelligent_tiering_template_is_clean_under_cfn_lint_and_the_rules(built):
    from cfnlint.api import ManualArgs, lint

    from smddp_infra.rules.engine import check_template

    template = _template(built, "tiering")
    assert [str(m) for m in lint(json.dumps(template), config=ManualArgs(regions=["us-east-1"]))] == []
    fsx = [f for f in check_template(template) if f.rule_id.startswith("SMDDP-FSX")]
    assert fsx == [], [f.message for f in fsx]
    infos = _messages(built["synth"], built["tiering"], "info")
    assert any("monitoring not built for an Intelligent-Tiering file system" in m for m in infos)
