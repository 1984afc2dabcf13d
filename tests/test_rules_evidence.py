"""Issue 18: a resource's role from evidence, one finding per problem, the default case first.

Each fixture (tests/fixtures/templates/r18_*, written for these patterns) reproduces a false
or multiplied finding of the earlier engine; the shared case list pins their findings through
all three faces, and these tests pin what the findings say.
"""

from __future__ import annotations

from typing import Any

from _rules_helpers import efa_template, load, resources, self_rule, sg
from smddp_infra.rules import check_template
from smddp_infra.rules.model import TemplateModel
from smddp_infra.rules.training import training_subnets


def _all(name_or_template: str | dict[str, Any]) -> list[Any]:
    """Every finding, less the "not evaluated" notes of a file system on the VPC's default group
    (the bare file systems here list no SecurityGroupIds; tests/test_rules_system.py pins those)."""
    template = load(name_or_template) if isinstance(name_or_template, str) else name_or_template
    return [f for f in check_template(template) if "lists no SecurityGroupIds" not in f.message]


def test_a_subnet_holding_only_a_file_system_is_not_a_training_subnet() -> None:
    template = load("r18_fsx_only_public_subnet.yaml")
    judged = training_subnets(TemplateModel(template).world())
    assert set(judged) == {"WorkerSubnet"} and judged["WorkerSubnet"].sagemaker
    assert _all(template) == []


def test_a_no_nat_training_subnet_with_an_s3_gateway_gets_a_warning_that_names_what_breaks() -> None:
    (finding,) = _all("r18_no_nat_s3_gateway.yaml")
    assert (finding.rule_id, finding.severity.value, finding.resource) == ("SMDDP-NET3", "warning", "Isolated")
    assert "training code or an SDK client running there cannot call these APIs" in finding.message
    assert "logs: CloudWatch Logs" in finding.message and "SageMaker pulls a training job's image without it" in finding.message
    assert "Starting" not in finding.message


def test_without_the_s3_gateway_the_same_subnet_is_an_error() -> None:
    template = load("r18_no_nat_s3_gateway.yaml")
    del template["Resources"]["Buckets"]
    found = {(f.rule_id, f.severity.value) for f in _all(template)}
    assert found == {("SMDDP-NET2", "error"), ("SMDDP-NET3", "warning")}


def test_accelerated_compute_outside_sagemaker_makes_a_training_subnet_but_no_s3_error() -> None:
    """An Auto Scaling group of GPU nodes: its subnet is judged, but AWS documents no failure
    without S3 there, so s3 is one more API its callers miss (a warning)."""
    template = load("r18_no_nat_s3_gateway.yaml")
    del template["Resources"]["Buckets"], template["Resources"]["Nightly"]
    template["Resources"]["Nodes"] = {"Type": "AWS::EC2::LaunchTemplate", "Properties": {"LaunchTemplateData": {"InstanceType": "g5.48xlarge"}}}
    template["Resources"]["Pool"] = {"Type": "AWS::AutoScaling::AutoScalingGroup", "Properties": {
        "MinSize": "0", "MaxSize": "4", "VPCZoneIdentifier": [{"Ref": "Isolated"}],
        "LaunchTemplate": {"LaunchTemplateId": {"Ref": "Nodes"}, "Version": "1"}}}
    (finding,) = _all(template)
    assert (finding.rule_id, finding.severity.value) == ("SMDDP-NET3", "warning")
    assert "Auto Scaling group Pool" in finding.message and "no interface endpoint for s3, sts" in finding.message


def test_a_file_systems_group_named_hyperpod_gets_no_sg3_of_any_severity() -> None:
    assert _all("r18_hyperpod_fsx_group.yaml") == []


def test_an_unattached_group_whose_rules_open_only_lustre_ports_gets_no_sg3() -> None:
    template = load("r18_hyperpod_fsx_group.yaml")
    del template["Resources"]["Datasets"]
    assert _all(template) == []


def test_an_additional_group_on_a_satisfied_efa_union_gets_no_sg3_under_any_assignment() -> None:
    assert _all("r18_additional_group_on_efa.yaml") == []


def test_a_name_alone_still_gives_an_info_note_never_a_warning() -> None:
    (finding,) = _all(resources(Loose=sg("plain", GroupName="trn1-workers")))
    assert (finding.rule_id, finding.severity.value) == ("SMDDP-SG3", "info")


def test_an_additional_group_without_self_rules_is_judged_with_the_union() -> None:
    template = resources(Lt=efa_template("Efa", "Extra"), Efa=sg("plain"), Extra=sg("efa extras"),
                         In=self_rule("ingress", "Efa"), Out=self_rule("egress", "Efa"))
    assert _all(template) == []


def test_seven_failing_throughputs_are_one_finding_with_the_default_first() -> None:
    (finding,) = [f for f in _all("r18_scratch2_throughput_param.yaml") if f.severity.value != "info"]
    assert finding.message.startswith("for any PerUnitThroughput (all 7 values; shown: 200): file system Scratch: ")
    assert finding.message.endswith("PerUnitStorageThroughput is not settable for SCRATCH_2, got 200")
    assert finding.when == ()  # every value fails: the parameter is not a condition
    assert [a["PerUnitThroughput"] for a in finding.assignments] == [200, 50, 100, 125, 250, 500, 1000]
    assert finding.default is True
    assert finding.as_dict()["assignments"][0] == {"PerUnitThroughput": 200}


def _fs(capacity: Any, throughput: Any) -> dict[str, Any]:
    return {"Type": "AWS::FSx::FileSystem", "Properties": {
        "FileSystemType": "LUSTRE", "StorageCapacity": capacity, "SubnetIds": ["subnet-1"],
        "LustreConfiguration": {"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": throughput}}}


def test_failing_values_are_listed_compactly_with_the_smallest_condition() -> None:
    template = {
        "Parameters": {
            "Capacity": {"Type": "Number", "Default": 3600, "AllowedValues": [1200, 2400, 3600, 4800, 10800]},
            "Throughput": {"Type": "Number", "Default": 125, "AllowedValues": [125, 250]},
        },
        "Resources": {"Fs": _fs({"Ref": "Capacity"}, {"Ref": "Throughput"})},
    }
    (finding,) = _all(template)
    assert finding.message.startswith("for any Throughput (all 2 values; shown: 125) when Capacity is 3600 (default) or 10800: ")
    assert "got 3600" in finding.message  # the defaults' own message
    assert finding.when == ({"Capacity": 3600}, {"Capacity": 10800})
    assert len(finding.assignments) == 4 and finding.default is True


def test_a_problem_the_defaults_do_not_trigger_is_still_one_finding() -> None:
    template = {
        "Parameters": {
            "Capacity": {"Type": "Number", "Default": 2400, "AllowedValues": [1200, 2400, 3600, 10800]},
            "Throughput": {"Type": "Number", "Default": 125, "AllowedValues": [125, 250]},
        },
        "Resources": {"Fs": _fs({"Ref": "Capacity"}, {"Ref": "Throughput"})},
    }
    (finding,) = _all(template)
    assert finding.message.startswith("for any Throughput (all 2 values; shown: 125) when Capacity is 3600 or 10800: ")
    assert finding.default is False
