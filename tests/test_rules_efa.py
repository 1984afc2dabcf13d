"""SMDDP-SG1/SG2/SG3: all-traffic self rules, judged per attachment as AWS evaluates groups."""

from __future__ import annotations

from typing import Any

import pytest

from _rules_helpers import efa_template, hits, resources, self_rule, sg

BOTH = {("SMDDP-SG1", "Lt"), ("SMDDP-SG2", "Lt")}


def attached(**body: Any) -> dict:
    """A template whose launch template Lt carries group Sg on an EFA interface."""
    return resources(Lt=efa_template(), **body)


def test_separate_self_rules_with_getatt_are_compliant() -> None:
    assert hits(attached(Sg=sg("plain"), In=self_rule("ingress", "Sg"), Out=self_rule("egress", "Sg"))) == set()


@pytest.mark.parametrize("protocol", ["-1", -1, "all", "ALL"])
def test_every_spelling_of_all_traffic_counts(protocol: object) -> None:
    template = attached(Sg=sg("plain"), In=self_rule("ingress", "Sg", protocol), Out=self_rule("egress", "Sg", protocol))
    assert hits(template) == set()


def test_ref_to_the_group_counts_like_getatt_groupid() -> None:
    egress = self_rule("egress", "Sg")
    egress["Properties"].update(GroupId={"Ref": "Sg"}, DestinationSecurityGroupId={"Ref": "Sg"})
    assert hits(attached(Sg=sg("plain"), In=self_rule("ingress", "Sg"), Out=egress)) == set()


def test_egress_to_anywhere_does_not_count_as_egress_to_itself() -> None:
    group = sg("plain", SecurityGroupEgress=[{"IpProtocol": "-1", "CidrIp": "0.0.0.0/0"}])
    assert hits(attached(Sg=group, In=self_rule("ingress", "Sg"))) == {("SMDDP-SG2", "Lt")}


def test_tcp_self_rules_do_not_count_for_efa() -> None:
    template = attached(
        Sg=sg("plain"),
        In=self_rule("ingress", "Sg", "tcp", FromPort=0, ToPort=65535),
        Out=self_rule("egress", "Sg", "6", FromPort=0, ToPort=65535),
    )
    assert hits(template) == BOTH


def test_one_group_with_both_self_rules_is_enough_for_the_attachment() -> None:
    template = resources(
        Lt=efa_template("Efa", "Other"),
        Efa=sg("plain"), Other=sg("app"),
        In=self_rule("ingress", "Efa"), Out=self_rule("egress", "Efa"),
    )
    assert hits(template) == set()


def test_self_rules_of_a_group_not_on_the_interface_do_not_count() -> None:
    template = attached(Sg=sg("plain"), Other=sg("other"), In=self_rule("ingress", "Other"), Out=self_rule("egress", "Other"))
    assert hits(template) == BOTH


def test_rules_between_two_groups_that_are_both_on_the_interface_count() -> None:
    a_from_b = self_rule("ingress", "A")
    a_from_b["Properties"]["SourceSecurityGroupId"] = {"Ref": "B"}
    b_to_a = self_rule("egress", "B")
    b_to_a["Properties"]["DestinationSecurityGroupId"] = {"Ref": "A"}
    template = resources(Lt=efa_template("A", "B"), A=sg("a"), B=sg("b"), AB=a_from_b, BA=b_to_a)
    assert hits(template) == set()


def test_groups_that_nothing_attaches_and_no_name_suggests_are_not_judged() -> None:
    assert hits(resources(Web=sg("HTTPS from the training subnet to interface endpoints"))) == set()


@pytest.mark.parametrize(
    "group",
    [
        sg("plain", GroupName="EfaWorkers"),
        sg("p5 cluster"),
        sg("training instances"),
        sg("plain", Tags=[{"Key": "Name", "Value": "hyperpod-nodes"}]),
    ],
    ids=["camel-case-name", "instance-family", "training-instances", "name-tag"],
)
def test_names_alone_give_only_an_info_note(group: dict) -> None:
    from smddp_infra.rules import check_template

    assert hits(resources(Sg=group)) == set()
    assert {(f.rule_id, f.resource, f.severity.value) for f in check_template(resources(Sg=group))} == {("SMDDP-SG3", "Sg", "info")}


def test_the_projects_training_tag_is_strong_evidence() -> None:
    tagged = sg("plain", Tags=[{"Key": "smddp:role", "Value": "training"}])
    assert hits(resources(Sg=tagged)) == {("SMDDP-SG1", "Sg"), ("SMDDP-SG2", "Sg")}


def test_a_named_group_on_a_passing_attachment_is_not_warned_about() -> None:
    template = resources(Lt=efa_template("Efa", "Named"), Efa=sg("plain"), Named=sg("efa extras"),
                         In=self_rule("ingress", "Efa"), Out=self_rule("egress", "Efa"))
    assert hits(template) == set()


def _cluster(config_key: str) -> dict:
    vpc = {"SecurityGroupIds": [{"Fn::GetAtt": ["Sg", "GroupId"]}], "Subnets": ["subnet-1"]}
    group: dict[str, Any] = {"InstanceGroupName": "workers", "InstanceType": "ml.p5.48xlarge"}
    props: dict[str, Any] = {"InstanceGroups": [group]}
    if config_key == "OverrideVpcConfig":
        group["OverrideVpcConfig"] = vpc
    else:
        props["VpcConfig"] = vpc
    return {"Type": "AWS::SageMaker::Cluster", "Properties": props}


@pytest.mark.parametrize("config_key", ["VpcConfig", "OverrideVpcConfig"])
def test_hyperpod_instance_groups_are_strong_evidence(config_key: str) -> None:
    assert hits(resources(Sg=sg("plain"), Cluster=_cluster(config_key))) == {("SMDDP-SG1", "Cluster"), ("SMDDP-SG2", "Cluster")}


def test_inference_processing_and_studio_groups_are_not_training_groups() -> None:
    model = {"Type": "AWS::SageMaker::Model", "Properties": {"VpcConfig": {"SecurityGroupIds": [{"Ref": "Sg"}], "Subnets": ["s"]}}}
    processing = {"Type": "AWS::SageMaker::ProcessingJob", "Properties": {"NetworkConfig": {"VpcConfig": {"SecurityGroupIds": [{"Ref": "Sg"}], "Subnets": ["s"]}}}}
    assert hits(resources(Sg=sg("plain"), Model=model, Processing=processing)) == set()


def test_groups_on_an_efa_file_system_are_judged_but_not_on_a_plain_one() -> None:
    def fs(efa: object) -> dict:
        return {"Type": "AWS::FSx::FileSystem", "Properties": {
            "FileSystemType": "LUSTRE", "SecurityGroupIds": [{"Ref": "Sg"}], "LustreConfiguration": {"EfaEnabled": efa}}}

    sg_hits = {h for h in hits(resources(Sg=sg("plain"), Fs=fs("Yes"))) if h[0].startswith("SMDDP-SG")}
    assert sg_hits == {("SMDDP-SG1", "Fs"), ("SMDDP-SG2", "Fs")}
    assert not {h for h in hits(resources(Sg=sg("plain"), Fs=fs(False))) if h[0].startswith("SMDDP-SG")}


def test_an_interface_that_is_not_efa_is_not_judged() -> None:
    template = resources(Sg=sg("plain"), Lt=efa_template())
    template["Resources"]["Lt"]["Properties"]["LaunchTemplateData"]["NetworkInterfaces"][0]["InterfaceType"] = "interface"
    assert hits(template) == set()


def test_an_imported_group_on_the_interface_makes_the_verdict_unknown_not_an_error() -> None:
    template = resources(Sg=sg("plain"), Lt=efa_template())
    template["Resources"]["Lt"]["Properties"]["LaunchTemplateData"]["NetworkInterfaces"][0]["Groups"].append({"Fn::ImportValue": "shared"})
    assert hits(template, infos=True) == {("SMDDP-INFO1", "Lt")}


def test_an_undecided_condition_on_the_self_rules_is_unknown_not_missing() -> None:
    template = attached(Sg=sg("plain"), In=self_rule("ingress", "Sg"), Out=self_rule("egress", "Sg"))
    template["Parameters"] = {"Flag": {"Type": "String"}}  # no Default, no AllowedValues
    template["Conditions"] = {"On": {"Fn::Equals": [{"Ref": "Flag"}, "yes"]}}
    template["Resources"]["Out"]["Condition"] = "On"
    assert hits(template, infos=True) == {("SMDDP-INFO1", "Lt")}


def test_the_message_names_the_attachment_its_groups_and_the_fix() -> None:
    from smddp_infra.rules import check_template

    (finding,) = [f for f in check_template(attached(Sg=sg("plain"), In=self_rule("ingress", "Sg"))) if f.rule_id == "SMDDP-SG2"]
    assert "EFA network interface 0 of launch template Lt carries group Sg" in finding.message
    assert "DestinationSecurityGroupId" in finding.message and "IpProtocol -1" in finding.message
    assert finding.path == ("Properties", "LaunchTemplateData", "NetworkInterfaces", 0)
