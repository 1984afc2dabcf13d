"""SMDDP-FSX1..4 and FSX6: Lustre settings, EFA steps, recorded throughput and Lustre ports."""

from __future__ import annotations

from typing import Any

import pytest

from _rules_helpers import hits, resources, self_rule, sg
from smddp_infra.rules import check_template


def fs(capacity: Any = 2400, deployment: Any = "PERSISTENT_2", throughput: Any = 250, *, groups: list | None = None, **lustre: Any) -> dict:
    config: dict[str, Any] = {"DeploymentType": deployment, **lustre}
    if throughput is not None:
        config["PerUnitStorageThroughput"] = throughput
    props: dict[str, Any] = {"FileSystemType": "LUSTRE", "StorageCapacity": capacity, "SubnetIds": ["subnet-1"], "LustreConfiguration": config}
    if groups:
        props["SecurityGroupIds"] = groups
    return {"Type": "AWS::FSx::FileSystem", "Properties": props}


def _judged(template: dict) -> list:
    """Findings less the "not evaluated" notes of a file system on the VPC's default group (the
    bare file systems here list no SecurityGroupIds; tests/test_rules_system.py pins those)."""
    return [f for f in check_template(template) if "lists no SecurityGroupIds" not in f.message]


def rule_hits(template: dict, prefix: str) -> set:
    return {h for h in hits(template) if h[0].startswith(prefix)}


@pytest.mark.parametrize(
    "props,expected_fragment",
    [
        ({"capacity": 1000}, "StorageCapacity must be"),
        ({"throughput": 200}, "PerUnitStorageThroughput must be 125, 250, 500, 1000"),
        ({"throughput": None}, "PerUnitStorageThroughput is required"),
        ({"deployment": "SCRATCH_2"}, "not settable for SCRATCH_2"),
        ({"capacity": 9600, "throughput": 500, "EfaEnabled": True}, "EfaEnabled requires MetadataConfiguration"),
    ],
)
def test_settings_cloudformation_rejects_are_errors(props: dict, expected_fragment: str) -> None:
    findings = [f for f in check_template(resources(Fs=fs(**props))) if f.rule_id == "SMDDP-FSX1"]
    assert findings and any(expected_fragment in f.message for f in findings)
    assert all(f.severity.value == "error" for f in findings)


def test_version_2_10_on_persistent_2_is_rejected_but_2_15_is_fine() -> None:
    old = fs()
    old["Properties"]["FileSystemTypeVersion"] = "2.10"
    assert rule_hits(resources(Fs=old), "SMDDP-FSX1") == {("SMDDP-FSX1", "Fs")}
    old["Properties"]["FileSystemTypeVersion"] = "2.15"
    assert rule_hits(resources(Fs=old), "SMDDP-FSX1") == set()


def test_a_missing_deployment_type_is_cloudformations_default_scratch_1() -> None:
    template = resources(Fs={"Type": "AWS::FSx::FileSystem", "Properties": {"FileSystemType": "LUSTRE", "StorageCapacity": 4800}})
    (finding,) = _judged(template)
    assert "SCRATCH_1" in finding.message and "got 4800" in finding.message


def test_every_allowed_value_of_a_feeding_parameter_is_tried() -> None:
    template = {
        "Parameters": {"Tier": {"Type": "Number", "Default": 250, "AllowedValues": [125, 250, 300]}},
        "Resources": {"Fs": fs(throughput={"Ref": "Tier"})},
    }
    (finding,) = _judged(template)
    assert finding.message.startswith("when Tier=300: ") and "got 300" in finding.message
    assert finding.when == ({"Tier": 300},)


def test_parameters_without_default_or_allowed_values_are_not_guessed() -> None:
    template = {"Parameters": {"Capacity": {"Type": "Number"}}, "Resources": {"Fs": fs(capacity={"Ref": "Capacity"})}}
    assert _judged(template) == []


def test_non_lustre_file_systems_are_ignored() -> None:
    ontap = {"Type": "AWS::FSx::FileSystem", "Properties": {"FileSystemType": "ONTAP", "StorageCapacity": 1}}
    assert check_template(resources(Fs=ontap)) == []


def tagged(required: str, **props: Any) -> dict:
    body = fs(**props)
    body["Properties"]["Tags"] = [{"Key": "smddp:requiredThroughputMBps", "Value": required}]
    return body


def test_throughput_meeting_the_recorded_requirement_passes() -> None:
    # 2400 GiB / 1024 x 250 = 585.9 MB/s
    assert rule_hits(resources(Fs=tagged("585")), "SMDDP-FSX2") == set()


def test_throughput_below_the_recorded_requirement_is_a_warning_with_the_fix() -> None:
    (finding,) = [f for f in check_template(resources(Fs=tagged("600"))) if f.rule_id == "SMDDP-FSX2"]
    assert finding.severity.value == "warning"
    assert "586 MB/s" in finding.message and "4,800 GiB" in finding.message


def test_scratch_throughput_uses_the_200_baseline() -> None:
    # 12000 / 1024 x 200 = 2343.75 MB/s
    scratch = dict(deployment="SCRATCH_2", throughput=None, capacity=12000)
    assert rule_hits(resources(Fs=tagged("2300", **scratch)), "SMDDP-FSX2") == set()
    assert rule_hits(resources(Fs=tagged("2400", **scratch)), "SMDDP-FSX2") == {("SMDDP-FSX2", "Fs")}


def test_a_non_numeric_requirement_tag_is_reported() -> None:
    (finding,) = [f for f in check_template(resources(Fs=tagged("fast"))) if f.rule_id == "SMDDP-FSX2"]
    assert "must be a number" in finding.message


def test_all_traffic_self_rules_cover_the_lustre_ports() -> None:
    template = resources(Sg=sg("storage"), In=self_rule("ingress", "Sg"), Out=self_rule("egress", "Sg"), Fs=fs(groups=[{"Ref": "Sg"}]))
    assert rule_hits(template, "SMDDP-FSX3") == set()


def test_lustre_ingress_from_a_cidr_counts_only_when_it_covers_the_file_systems_subnet() -> None:
    def template(cidr: str, subnet_cidr: str | None) -> dict:
        group = sg("storage", SecurityGroupIngress=[{"IpProtocol": "tcp", "FromPort": 988, "ToPort": 1023, "CidrIp": cidr}])
        body = resources(Sg=group, Fs=fs(groups=[{"Ref": "Sg"}]))
        if subnet_cidr:
            body["Resources"]["Subnet"] = {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": "vpc-1", "CidrBlock": subnet_cidr}}
            body["Resources"]["Fs"]["Properties"]["SubnetIds"] = [{"Ref": "Subnet"}]
        return body

    assert rule_hits(template("0.0.0.0/0", None), "SMDDP-FSX3") == set()
    assert rule_hits(template("10.0.0.0/16", "10.0.4.0/24"), "SMDDP-FSX3") == set()
    (finding,) = [f for f in check_template(template("192.168.0.0/16", "10.0.4.0/24")) if f.rule_id == "SMDDP-FSX3"]
    assert "ingress on TCP 988" in finding.message and "egress" not in finding.message.split("none allows")[1].split(" on ")[0]
    # the file system's subnet is not in the template: a CIDR source may cover it (unknown, not missing)
    unknown = check_template(template("10.0.0.0/16", None))
    assert not [f for f in unknown if f.severity.value == "error"]
    assert any(f.rule_id == "SMDDP-INFO1" and "SMDDP-FSX3 not judged" in f.message for f in unknown)


def test_two_file_system_groups_may_open_the_ports_to_each_other() -> None:
    a_to_b = self_rule("ingress", "A")
    a_to_b["Properties"]["SourceSecurityGroupId"] = {"Fn::GetAtt": ["B", "GroupId"]}
    b_to_a = self_rule("ingress", "B")
    b_to_a["Properties"]["SourceSecurityGroupId"] = {"Fn::GetAtt": ["A", "GroupId"]}
    template = resources(A=sg("storage a"), B=sg("storage b"), AB=a_to_b, BA=b_to_a, Fs=fs(groups=[{"Ref": "A"}, {"Ref": "B"}]))
    assert rule_hits(template, "SMDDP-FSX3") == set()


def test_an_efa_file_system_without_a_tier_is_told_the_efa_capacity_steps() -> None:
    # 1200 GiB is a valid PERSISTENT_2 size, but not a whole EFA step: the (UNCONFIRMED)
    # step warning must say what is (and not send the user to the non-EFA 1200/2400 rule).
    template = resources(Fs=fs(1200, throughput=None, EfaEnabled=True, MetadataConfiguration={"Mode": "AUTOMATIC"}))
    found = check_template(template)
    assert not [f for f in found if f.rule_id == "SMDDP-FSX1" and "StorageCapacity" in f.message]
    (capacity,) = [f.message for f in found if f.rule_id == "SMDDP-FSX6"]
    assert "with EfaEnabled" in capacity and "'IP addresses for file systems'" in capacity
    assert "that CreateFileSystem refuses another capacity is UNCONFIRMED" in capacity
    for step, tier in (("38,400", 125), ("19,200", 250), ("9,600", 500), ("4,800", 1000)):
        assert f"{step} GiB at {tier}" in capacity
    assert "MB/s/TiB" in capacity


def test_each_port_rule_runs_on_its_own_when_chosen_alone() -> None:
    from _rules_helpers import load

    from smddp_infra.rules import RULES_BY_ID

    template = load("lustre_ports.yaml")
    only_fsx4 = check_template(template, rules=[RULES_BY_ID["SMDDP-FSX4"]])
    assert {(f.rule_id, f.resource) for f in only_fsx4} == {("SMDDP-FSX4", "BadFileSystem")}
    only_fsx3 = check_template(template, rules=[RULES_BY_ID["SMDDP-FSX3"]])
    assert {(f.rule_id, f.resource) for f in only_fsx3} == {("SMDDP-FSX3", "BadFileSystem")}


EFA = {"EfaEnabled": True, "MetadataConfiguration": {"Mode": "AUTOMATIC"}}


@pytest.mark.parametrize(
    "capacity,throughput,expected",
    [
        (2400, 125, {("SMDDP-FSX6", "Fs")}),  # a valid PERSISTENT_2 size, off the 38,400 GiB EFA step: a warning only
        (4800, 500, {("SMDDP-FSX6", "Fs")}),
        (1000, 125, {("SMDDP-FSX1", "Fs")}),  # the cited PERSISTENT_2 rule rejects it: one error, no step warning on top
        (38400, 125, set()),
        (9600, 500, set()),
    ],
)
def test_a_finding_that_rests_only_on_the_unconfirmed_efa_step_is_a_warning(capacity: int, throughput: int, expected: set) -> None:
    template = resources(Fs=fs(capacity, throughput=throughput, **EFA))
    assert rule_hits(template, "SMDDP-FSX") == expected
    for finding in check_template(template):
        if finding.rule_id == "SMDDP-FSX6":
            assert finding.severity.value == "warning"


def test_a_hand_made_efa_plan_off_the_steps_is_not_refused_but_the_planner_keeps_them() -> None:
    from dataclasses import replace

    from smddp_infra.sizing.planner import plan_lustre

    plan = plan_lustre(1, efa_enabled=True)
    assert plan.storage_capacity_gib % 4800 == 0  # the planner still plans on the EFA steps
    off_step = replace(plan, storage_capacity_gib=2400, per_unit_storage_throughput=125)
    assert off_step.problems() == []  # UNCONFIRMED steps: no refusal in the constructs
    assert replace(plan, storage_capacity_gib=1000).problems()  # the cited rule still refuses
