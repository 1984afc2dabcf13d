"""The file system watches itself (issue 20): alarms, dashboard and topic, from the constructs.

ONE App, synthesized once with the rule packs on (AwsSolutions, NIST 800-53 rev 5, HIPAA
Security, SmddpChecks): a successful synth proves every variant below is free of
unacknowledged findings. The default app's template comes from the session fixture.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import Synthesized, cdk_context

ENV = {"account": "111122223333", "region": "us-east-1"}
TOPIC_ARN = "arn:aws:sns:us-east-1:111122223333:platform-alerts"
MONITORING_TYPES = ("AWS::CloudWatch::Alarm", "AWS::CloudWatch::Dashboard", "AWS::SNS::Topic", "AWS::SNS::TopicPolicy",
                    "AWS::KMS::Key")


def of_type(template: dict[str, Any], type_name: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == type_name}


def alarms(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Alarm construct id (ThroughputAlarm / CapacityAlarm) -> properties."""
    found = {}
    for logical_id, resource in of_type(template, "AWS::CloudWatch::Alarm").items():
        name = "ThroughputAlarm" if "ThroughputAlarm" in logical_id else "CapacityAlarm"
        found[name] = resource["Properties"]
    return found


def dashboard_body(template: dict[str, Any]) -> dict[str, Any]:
    """The dashboard JSON with every token replaced by a marker (it is an Fn::Join)."""
    (dashboard,) = of_type(template, "AWS::CloudWatch::Dashboard").values()
    parts = dashboard["Properties"]["DashboardBody"]["Fn::Join"][1]
    return json.loads("".join(p if isinstance(p, str) else "TOKEN" for p in parts))


def document(template: dict[str, Any]) -> dict[str, Any]:
    """The network's job document (its only output ending in TrainingJobConfig)."""
    (output,) = [v for k, v in template["Outputs"].items() if k.endswith("TrainingJobConfig")]
    parts = output["Value"]["Fn::Join"][1]
    return json.loads("".join(p if isinstance(p, str) else "TOKEN" for p in parts))


@pytest.fixture(scope="module")
def variants() -> dict[str, dict[str, Any]]:
    from aws_cdk import App, Stack, Validations, aws_ec2 as ec2, aws_sns as sns
    from cdk_nag import AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks

    from smddp_infra.checks import SmddpChecks
    from smddp_infra.constructs.filesystem import LustreFileSystem
    from smddp_infra.constructs.monitoring import MonitoringOptions
    from smddp_infra.constructs.training_network import SmddpTrainingNetwork
    from smddp_infra.sizing import plan_lustre

    app = App(context=cdk_context())
    stacks: dict[str, Any] = {}
    common = {"availability_zone": "us-east-1a", "read_mbps_per_gpu": 50, "dataset_gib": 2000}
    stacks["On"] = Stack(app, "On", env=ENV)
    SmddpTrainingNetwork(stacks["On"], "TrainingNetwork", **common)
    stacks["Tuned"] = Stack(app, "Tuned", env=ENV)
    topic = sns.Topic.from_topic_arn(stacks["Tuned"], "Alerts", TOPIC_ARN)
    SmddpTrainingNetwork(stacks["Tuned"], "TrainingNetwork", monitoring=MonitoringOptions(
        checkpoint_gib=400, training_job_name_prefix="llama-pretrain", throughput_fraction=0.9, period_seconds=60,
        datapoints_to_alarm=2, evaluation_periods=3, alarm_topic=topic, read_metric="DataReadBytesCustom"), **common)
    stacks["Kms"] = Stack(app, "Kms", env=ENV)
    SmddpTrainingNetwork(stacks["Kms"], "TrainingNetwork", create_encryption_key=True, deployment_types=["PERSISTENT_2"],
                         **common)
    stacks["Alone"] = Stack(app, "Alone", env=ENV)
    vpc = ec2.Vpc.from_vpc_attributes(stacks["Alone"], "Vpc", vpc_id="vpc-0a1b2c3d4e5f67890", availability_zones=["us-east-1a"],
                                      private_subnet_ids=["subnet-0aa11bb22cc33dd44"],
                                      private_subnet_route_table_ids=["rtb-0aa11bb22cc33dd44"])
    subnet = ec2.Subnet.from_subnet_attributes(stacks["Alone"], "Subnet", subnet_id="subnet-0aa11bb22cc33dd44",
                                               availability_zone="us-east-1a", route_table_id="rtb-0aa11bb22cc33dd44")
    group = ec2.SecurityGroup.from_security_group_id(stacks["Alone"], "Group", "sg-0123456789abcdef0")
    LustreFileSystem(stacks["Alone"], "Lustre", plan=plan_lustre(1600, 2000), vpc=vpc, subnet=subnet, security_group=group)
    from smddp_infra.settings import NetworkSettings
    from smddp_infra.stack import TrainingNetworkStack

    stacks["StackTuned"] = TrainingNetworkStack(app, "StackTuned", settings=NetworkSettings.from_context(cdk_context(**{
        "smddp:checkpointGiB": 300, "smddp:trainingJobNamePrefix": "llama", "smddp:alarmTopicArn": TOPIC_ARN})))
    stacks["StackOff"] = TrainingNetworkStack(app, "StackOff", settings=NetworkSettings.from_context(
        cdk_context(**{"smddp:monitoring": False})))
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), NIST80053R5Checks(app), HIPAASecurityChecks(app), SmddpChecks(app))
    assembly = app.synth()
    found = {name: assembly.get_stack_artifact(stack.artifact_id).template for name, stack in stacks.items()}
    # The same stack without monitoring, in an App of its own so that its stack id is "On" too
    # (ids of the stack appear in tags and rule names; the comparison must see only monitoring).
    bare = App(context=cdk_context())
    off = Stack(bare, "On", env=ENV)
    SmddpTrainingNetwork(off, "TrainingNetwork", monitoring=False, **common)
    found["Off"] = bare.synth().get_stack_artifact(off.artifact_id).template
    return found


# --- the default template -----------------------------------------------------------------------


def test_default_app_has_two_alarms_one_dashboard_and_one_topic(default_app: Synthesized) -> None:
    t = default_app.json
    assert len(of_type(t, "AWS::CloudWatch::Alarm")) == 2
    assert len(of_type(t, "AWS::CloudWatch::Dashboard")) == 1
    assert len(of_type(t, "AWS::SNS::Topic")) == 1
    assert set(alarms(t)) == {"ThroughputAlarm", "CapacityAlarm"}


def test_throughput_alarm_is_read_mbps_at_80_percent_of_the_plans_baseline_3_of_4(default_app: Synthesized) -> None:
    """Metric math Sum(DataReadBytes)/PERIOD/1e6 against the calculator's baseline (the job document's sizing)."""
    t = default_app.json
    sizing = document(t)["sizing"]
    a = alarms(t)["ThroughputAlarm"]
    assert a["Threshold"] == pytest.approx(0.8 * sizing["baselineThroughputMBps"])
    assert a["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert (a["DatapointsToAlarm"], a["EvaluationPeriods"]) == (3, 4)
    assert a["TreatMissingData"] == "notBreaching"
    (expression,) = [q for q in a["Metrics"] if "Expression" in q]
    (raw,) = [q for q in a["Metrics"] if "MetricStat" in q]
    assert expression["Expression"] == f"{raw['Id']} / PERIOD({raw['Id']}) / 1000000" and expression["ReturnData"] is True
    stat = raw["MetricStat"]
    assert (stat["Metric"]["Namespace"], stat["Metric"]["MetricName"], stat["Stat"], stat["Period"]) == \
        ("AWS/FSx", "DataReadBytes", "Sum", 300)
    (fs_id,) = of_type(t, "AWS::FSx::FileSystem")
    assert stat["Metric"]["Dimensions"] == [{"Name": "FileSystemId", "Value": {"Ref": fs_id}}]
    assert raw["ReturnData"] is False


def test_the_alarms_baseline_is_the_file_systems_plan(default_app: Synthesized) -> None:
    """One place per fact: the baseline behind the requirement tag is the plan the file system was built from."""
    from smddp_infra.sizing.lustre_rules import find_tier

    t = default_app.json
    ((fs_id, fs),) = of_type(t, "AWS::FSx::FileSystem").items()
    record = fs["Metadata"]["smddp:sizing"]
    lustre = fs["Properties"]["LustreConfiguration"]
    tier = find_tier(lustre["DeploymentType"], lustre.get("PerUnitStorageThroughput"))
    assert tier is not None
    assert record["baselineThroughputMBps"] == tier.throughput_mbps(fs["Properties"]["StorageCapacity"])
    tag = {x["Key"]: x["Value"] for x in fs["Properties"]["Tags"]}["smddp:requiredThroughputMBps"]
    assert float(tag) == record["requiredThroughputMBps"] <= record["baselineThroughputMBps"]
    assert document(t)["sizing"]["baselineThroughputMBps"] == record["baselineThroughputMBps"]
    assert alarms(t)["ThroughputAlarm"]["Threshold"] == pytest.approx(0.8 * record["baselineThroughputMBps"])


def test_capacity_alarm_fires_below_10_percent_of_the_capacity_in_gib(default_app: Synthesized) -> None:
    t = default_app.json
    (fs,) = of_type(t, "AWS::FSx::FileSystem").values()
    a = alarms(t)["CapacityAlarm"]
    assert a["Threshold"] == pytest.approx(0.1 * fs["Properties"]["StorageCapacity"])
    assert a["ComparisonOperator"] == "LessThanThreshold"
    (expression,) = [q for q in a["Metrics"] if "Expression" in q]
    (raw,) = [q for q in a["Metrics"] if "MetricStat" in q]
    assert expression["Expression"] == f"{raw['Id']} / 1073741824"
    assert (raw["MetricStat"]["Metric"]["MetricName"], raw["MetricStat"]["Stat"]) == ("FreeDataStorageCapacity", "Minimum")


def test_both_alarms_notify_the_topic_and_nothing_subscribes_to_it(default_app: Synthesized) -> None:
    t = default_app.json
    (topic_id,) = of_type(t, "AWS::SNS::Topic")
    for a in alarms(t).values():
        assert a["AlarmActions"] == [{"Ref": topic_id}]
    assert of_type(t, "AWS::SNS::Subscription") == {}
    assert "Subscription" not in of_type(t, "AWS::SNS::Topic")[topic_id]["Properties"]


def test_topic_is_encrypted_with_a_rotating_key_cloudwatch_may_use(default_app: Synthesized) -> None:
    t = default_app.json
    ((topic_id, topic),) = of_type(t, "AWS::SNS::Topic").items()
    ((key_id, key),) = of_type(t, "AWS::KMS::Key").items()
    assert topic["Properties"]["KmsMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert key["Properties"]["EnableKeyRotation"] is True
    (grant,) = [s for s in key["Properties"]["KeyPolicy"]["Statement"] if s.get("Sid") == "CloudWatchAlarmsPublish"]
    assert grant["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    assert sorted(grant["Action"]) == ["kms:Decrypt", "kms:GenerateDataKey*"]
    assert grant["Condition"]["StringEquals"]["aws:SourceAccount"] == {"Ref": "AWS::AccountId"}


def test_topic_policy_denies_publishing_without_tls_and_admits_only_this_accounts_alarms(default_app: Synthesized) -> None:
    t = default_app.json
    (topic_id,) = of_type(t, "AWS::SNS::Topic")
    (policy,) = of_type(t, "AWS::SNS::TopicPolicy").values()
    assert policy["Properties"]["Topics"] == [{"Ref": topic_id}]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    (deny,) = [s for s in statements if s["Effect"] == "Deny"]
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} and deny["Principal"] == "*"
    (allow,) = [s for s in statements if s["Effect"] == "Allow"]
    assert allow["Principal"] == {"Service": "cloudwatch.amazonaws.com"} and allow["Action"] == "sns:Publish"
    assert allow["Condition"]["StringEquals"]["aws:SourceAccount"] == {"Ref": "AWS::AccountId"}
    assert ":alarm:*" in json.dumps(allow["Condition"]["ArnLike"]["aws:SourceArn"])


def test_dashboard_shows_read_write_against_baseline_and_requirement(default_app: Synthesized) -> None:
    t = default_app.json
    sizing = document(t)["sizing"]
    body = dashboard_body(t)
    widgets = {w["properties"].get("title"): w for w in body["widgets"]}
    throughput = widgets["FSx read and write MB/s"]["properties"]
    lines = {a["value"] for a in throughput["annotations"]["horizontal"]}
    assert {sizing["baselineThroughputMBps"], sizing["requiredThroughputMBps"]} <= lines
    expressions = [m[0]["expression"] for m in throughput["metrics"] if isinstance(m[0], dict)]
    assert expressions == ["read / PERIOD(read) / 1000000", "write / PERIOD(write) / 1000000"]
    assert "FSx free capacity (GiB)" in widgets and "FSx metadata operations/s" in widgets
    assert "File system alarms" in widgets
    assert not any("GPU" in str(title) for title in widgets)  # no job name prefix in the default app


def test_default_document_tells_observe_what_the_alarms_watch(default_app: Synthesized) -> None:
    doc = document(default_app.json)
    mon = doc["monitoring"]
    assert (mon["periodSeconds"], mon["throughputFraction"], mon["datapointsToAlarm"], mon["evaluationPeriods"]) == (300, 0.8, 3, 4)
    assert mon["metrics"] == {"read": "DataReadBytes", "write": "DataWriteBytes", "freeCapacity": "FreeDataStorageCapacity",
                              "metadata": "MetadataOperations"}
    assert {"throughputAlarm", "capacityAlarm", "dashboard", "alarmTopicArn"} <= set(mon)


# --- variants ------------------------------------------------------------------------------------


def test_monitoring_false_leaves_no_trace(variants: dict[str, dict[str, Any]]) -> None:
    off, on = variants["Off"], variants["On"]
    for type_name in MONITORING_TYPES:
        assert of_type(off, type_name) == {}, type_name
    assert "monitoring" not in document(off)
    added = set(on["Resources"]) - set(off["Resources"])
    assert {on["Resources"][k]["Type"] for k in added} == set(MONITORING_TYPES)
    assert all("Monitoring" in k for k in added)
    # Everything else is the same resource under the same logical id.
    assert set(off["Resources"]) <= set(on["Resources"])
    changed = [k for k in off["Resources"] if k != "CDKMetadata" and off["Resources"][k] != on["Resources"][k]]
    assert changed == []


def test_options_change_thresholds_periods_topic_and_metric_names(variants: dict[str, dict[str, Any]]) -> None:
    t = variants["Tuned"]
    a = alarms(t)
    sizing = document(t)["sizing"]
    assert a["ThroughputAlarm"]["Threshold"] == pytest.approx(0.9 * sizing["baselineThroughputMBps"])
    assert (a["ThroughputAlarm"]["DatapointsToAlarm"], a["ThroughputAlarm"]["EvaluationPeriods"]) == (2, 3)
    (raw,) = [q for q in a["ThroughputAlarm"]["Metrics"] if "MetricStat" in q]
    assert (raw["MetricStat"]["Metric"]["MetricName"], raw["MetricStat"]["Period"]) == ("DataReadBytesCustom", 60)
    assert a["CapacityAlarm"]["Threshold"] == 800  # twice the 400 GiB checkpoint
    for alarm in a.values():
        assert alarm["AlarmActions"] == [TOPIC_ARN]
    assert of_type(t, "AWS::SNS::Topic") == {} and of_type(t, "AWS::KMS::Key") == {}
    mon = document(t)["monitoring"]
    assert mon["metrics"]["read"] == "DataReadBytesCustom" and mon["alarmTopicArn"] == TOPIC_ARN
    assert mon["freeCapacityThresholdGiB"] == 800 and mon["trainingJobNamePrefix"] == "llama-pretrain"


def test_dashboard_shows_gpu_utilisation_of_the_named_jobs(variants: dict[str, dict[str, Any]]) -> None:
    body = dashboard_body(variants["Tuned"])
    (gpu,) = [w for w in body["widgets"] if "GPU" in str(w["properties"].get("title"))]
    (expression,) = [m[0]["expression"] for m in gpu["properties"]["metrics"]]
    assert expression.startswith("SEARCH('{/aws/sagemaker/TrainingJobs,Host} MetricName=\"GPUUtilization\" llama-pretrain'")


def test_a_network_with_its_own_key_encrypts_the_topic_with_it(variants: dict[str, dict[str, Any]]) -> None:
    t = variants["Kms"]
    ((key_id, key),) = of_type(t, "AWS::KMS::Key").items()
    (topic,) = of_type(t, "AWS::SNS::Topic").values()
    assert topic["Properties"]["KmsMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert any(s.get("Sid") == "CloudWatchAlarmsPublish" for s in key["Properties"]["KeyPolicy"]["Statement"])


def test_the_file_system_alone_is_watched_too(variants: dict[str, dict[str, Any]]) -> None:
    t = variants["Alone"]
    assert len(of_type(t, "AWS::CloudWatch::Alarm")) == 2
    assert len(of_type(t, "AWS::CloudWatch::Dashboard")) == 1
    assert len(of_type(t, "AWS::SNS::Topic")) == 1


# --- bad input: one line naming the prop ----------------------------------------------------------


@pytest.mark.parametrize("options, message", [
    ({"throughput_fraction": 1.5}, "monitoring.throughput_fraction must be a number > 0 and <= 1"),
    ({"throughput_fraction": 0}, "monitoring.throughput_fraction must be a number > 0"),
    ({"period_seconds": 90}, "monitoring.period_seconds must be a multiple of 60"),
    ({"datapoints_to_alarm": 5}, "monitoring.datapoints_to_alarm must be <= evaluation_periods (4), got 5"),
    ({"checkpoint_gib": 6000}, "monitoring.checkpoint_gib=6000 needs 12000 GiB free"),
    ({"training_job_name_prefix": "my_job"}, "monitoring.training_job_name_prefix must be the start of a SageMaker"),
    ({"read_metric": "Data Read"}, "monitoring.read_metric must be a CloudWatch metric name"),
    ({"alarm_topic": "arn:aws:sns:us-east-1:1:x"}, "monitoring.alarm_topic must be an aws_sns.ITopic"),
])
def test_bad_options_are_one_line_naming_the_field(options: dict[str, Any], message: str) -> None:
    from smddp_infra.constructs.monitoring import MonitoringOptions, validate_options
    from smddp_infra.errors import SmddpError

    with pytest.raises(SmddpError) as caught:
        validate_options(MonitoringOptions(**options), capacity_gib=9600)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("arn, where", [
    ("arn:aws:sns:us-west-2:123456789012:alarms", "us-west-2 (aws)"),
    ("arn:aws-us-gov:sns:us-gov-west-1:123456789012:alarms", "us-gov-west-1 (aws-us-gov)"),
])
def test_an_alarm_topic_of_another_region_or_partition_is_one_line(arn: str, where: str) -> None:
    """CloudWatch alarm actions must be in the alarm's Region: a topic elsewhere is refused at synth."""
    from aws_cdk import App, Environment, Stack, aws_sns as sns

    from smddp_infra.constructs.monitoring import check_topic_region
    from smddp_infra.errors import ConfigError

    stack = Stack(App(), "S", env=Environment(region="us-east-1"))
    with pytest.raises(ConfigError) as caught:
        check_topic_region(stack, sns.Topic.from_topic_arn(stack, "Topic", arn))
    assert str(caught.value) == (f"monitoring.alarm_topic {arn} is in {where}, the stack in us-east-1 (aws): CloudWatch "
                                 "alarm actions must be in the alarm's Region; pass a topic of the stack's Region")
    check_topic_region(stack, sns.Topic.from_topic_arn(stack, "Here", "arn:aws:sns:us-east-1:123456789012:alarms"))
    agnostic = Stack(App(), "Agnostic")
    check_topic_region(agnostic, sns.Topic.from_topic_arn(agnostic, "Topic", arn))  # no Region: not evaluated


def test_the_network_refuses_an_alarm_topic_of_another_region() -> None:
    from aws_cdk import App, Stack, aws_sns as sns

    from smddp_infra.constructs.monitoring import MonitoringOptions
    from smddp_infra.constructs.training_network import SmddpTrainingNetwork
    from smddp_infra.errors import ConfigError

    stack = Stack(App(context=cdk_context()), "Elsewhere", env=ENV)
    topic = sns.Topic.from_topic_arn(stack, "Alerts", "arn:aws:sns:eu-west-1:123456789012:alarms")
    with pytest.raises(ConfigError, match=r"^monitoring\.alarm_topic arn:aws:sns:eu-west-1:123456789012:alarms is in eu-west-1"):
        SmddpTrainingNetwork(stack, "TrainingNetwork", monitoring=MonitoringOptions(alarm_topic=topic),
                             availability_zone="us-east-1a", read_mbps_per_gpu=50, dataset_gib=2000)


def test_monitoring_prop_of_the_wrong_type_is_one_line() -> None:
    from smddp_infra.constructs.monitoring import monitoring_options
    from smddp_infra.errors import SmddpError

    with pytest.raises(SmddpError, match=r"monitoring must be True, False or MonitoringOptions\(...\), got dict"):
        monitoring_options({"checkpoint_gib": 10})


def test_guard_sees_adding_monitoring_as_additive(variants: dict[str, dict[str, Any]]) -> None:
    """Updating a network deployed without monitoring replaces, deletes or fails on nothing."""
    from smddp_infra.review.replacement import ReplacementData, guard

    report = guard(variants["Off"], variants["On"], data=ReplacementData())
    assert report.findings == () and report.exit_code == 0


# --- the review pack -------------------------------------------------------------------------------


def test_review_shows_the_alarms_in_mbps_and_gib_and_the_dashboard_widgets(default_app: Synthesized) -> None:
    from smddp_infra.review.monitoring import alarms as review_alarms, dashboards
    from smddp_infra.review.template import TemplateView

    view = TemplateView(default_app.json)
    rows = {("Throughput" if "Throughput" in r.logical_id else "Capacity"): r for r in review_alarms(view)}
    threshold = alarms(default_app.json)["ThroughputAlarm"]["Threshold"]
    assert rows["Throughput"].condition == f">= {threshold:,.0f} MB/s"
    assert rows["Throughput"].periods == "3 of 4 x 300 s; missing data: notBreaching"
    assert rows["Capacity"].condition.startswith("< ") and rows["Capacity"].condition.endswith(" GiB")
    assert "AlarmTopic" in rows["Capacity"].actions
    (board,) = dashboards(view)
    assert board.widgets[0].startswith("FSx read and write MB/s (lines: baseline")
    assert "FSx metadata operations/s" in board.widgets


def test_review_converts_an_alarm_on_raw_bytes_per_period_to_mbps() -> None:
    """Another team's template: DataReadBytes Sum > 3e11 bytes per 300 s is 1,000 MB/s."""
    from smddp_infra.review.monitoring import alarms as review_alarms
    from smddp_infra.review.template import TemplateView

    template = {"Resources": {"Raw": {"Type": "AWS::CloudWatch::Alarm", "Properties": {
        "Namespace": "AWS/FSx", "MetricName": "DataReadBytes", "Statistic": "Sum", "Period": 300, "Threshold": 3e11,
        "ComparisonOperator": "GreaterThanThreshold", "EvaluationPeriods": 2}}, "Free": {
        "Type": "AWS::CloudWatch::Alarm", "Properties": {
            "Namespace": "AWS/FSx", "MetricName": "FreeDataStorageCapacity", "Statistic": "Minimum", "Period": 60,
            "Threshold": 100 * 1024**3, "ComparisonOperator": "LessThanThreshold", "EvaluationPeriods": 1}}}}
    rows = {r.logical_id: r for r in review_alarms(TemplateView(template))}
    assert rows["Raw"].condition == "> 1,000 MB/s" and rows["Raw"].periods == "2 of 2 x 300 s"
    assert rows["Free"].condition == "< 100 GiB"


def test_guard_lets_monitoring_be_turned_off_without_calling_its_key_stateful(variants: dict[str, dict[str, Any]]) -> None:
    """The alarm key encrypts notifications in flight only; a key that encrypts data stays guarded."""
    from smddp_infra.review.replacement import ReplacementData, guard

    data = ReplacementData()
    assert guard(variants["On"], variants["Off"], data=data).findings == ()
    (key_id,) = of_type(variants["On"], "AWS::KMS::Key")
    on_with_data = json.loads(json.dumps(variants["On"]))
    (fs,) = of_type(on_with_data, "AWS::FSx::FileSystem").values()
    fs["Properties"]["KmsKeyId"] = {"Ref": key_id}
    off_with_data = json.loads(json.dumps(variants["Off"]))
    (fs_off,) = of_type(off_with_data, "AWS::FSx::FileSystem").values()
    fs_off["Properties"]["KmsKeyId"] = {"Ref": key_id}
    kinds = {(f.first.logical_id, f.verb) for f in guard(on_with_data, off_with_data, data=data).findings}
    assert (key_id, "DELETE") in kinds


def test_the_default_app_takes_monitoring_from_context_in_one_line_per_bad_value() -> None:
    from smddp_infra.errors import ConfigError
    from smddp_infra.settings import NetworkSettings

    settings = NetworkSettings.from_context(cdk_context(**{
        "smddp:checkpointGiB": "300", "smddp:trainingJobNamePrefix": "llama", "smddp:alarmTopicArn": TOPIC_ARN}))
    assert (settings.monitoring, settings.checkpoint_gib, settings.training_job_name_prefix, settings.alarm_topic_arn) == \
        (True, 300, "llama", TOPIC_ARN)
    assert NetworkSettings.from_context(cdk_context(**{"smddp:monitoring": "false"})).monitoring is False
    for key, value, message in (("smddp:alarmTopicArn", "my-topic", "smddp:alarmTopicArn must be an SNS topic ARN"),
                                ("smddp:trainingJobNamePrefix", "a_b", "smddp:trainingJobNamePrefix must be the start"),
                                ("smddp:checkpointGiB", "-1", "smddp:checkpointGiB must be")):
        with pytest.raises(ConfigError, match=message):
            NetworkSettings.from_context(cdk_context(**{key: value}))


def test_the_default_stack_passes_the_context_keys_to_the_network(variants: dict[str, dict[str, Any]]) -> None:
    tuned, off = variants["StackTuned"], variants["StackOff"]
    a = alarms(tuned)
    assert a["CapacityAlarm"]["Threshold"] == 600 and all(x["AlarmActions"] == [TOPIC_ARN] for x in a.values())
    assert of_type(tuned, "AWS::SNS::Topic") == {}
    assert any("GPU" in str(w["properties"].get("title")) for w in dashboard_body(tuned)["widgets"])
    for type_name in MONITORING_TYPES:
        assert of_type(off, type_name) == {}, type_name
