"""SMDDP-SG1/SG2: training groups need all-traffic self ingress and self egress."""

from __future__ import annotations

import pytest

from _rules_helpers import hits, resources, self_rule, sg

BOTH = {("SMDDP-SG1", "Sg"), ("SMDDP-SG2", "Sg")}


def test_separate_self_rules_with_getatt_are_compliant() -> None:
    assert hits(resources(Sg=sg(), In=self_rule("ingress", "Sg"), Out=self_rule("egress", "Sg"))) == set()


@pytest.mark.parametrize("protocol", ["-1", -1, "all", "ALL"])
def test_every_spelling_of_all_traffic_counts(protocol: object) -> None:
    template = resources(Sg=sg(), In=self_rule("ingress", "Sg", protocol), Out=self_rule("egress", "Sg", protocol))
    assert hits(template) == set()


def test_ref_to_the_group_counts_like_getatt_groupid() -> None:
    egress = self_rule("egress", "Sg")
    egress["Properties"].update(GroupId={"Ref": "Sg"}, DestinationSecurityGroupId={"Ref": "Sg"})
    assert hits(resources(Sg=sg(), In=self_rule("ingress", "Sg"), Out=egress)) == set()


def test_egress_to_anywhere_does_not_count_as_egress_to_itself() -> None:
    group = sg(SecurityGroupEgress=[{"IpProtocol": "-1", "CidrIp": "0.0.0.0/0"}])
    assert hits(resources(Sg=group, In=self_rule("ingress", "Sg"))) == {("SMDDP-SG2", "Sg")}


def test_tcp_self_rules_do_not_count_for_efa() -> None:
    template = resources(
        Sg=sg(),
        In=self_rule("ingress", "Sg", "tcp", FromPort=0, ToPort=65535),
        Out=self_rule("egress", "Sg", "6", FromPort=0, ToPort=65535),
    )
    assert hits(template) == BOTH


def test_self_rules_of_another_group_do_not_count() -> None:
    template = resources(Sg=sg(), Other=sg("other"), In=self_rule("ingress", "Other"), Out=self_rule("egress", "Other"))
    assert ("SMDDP-SG1", "Sg") in hits(template) and ("SMDDP-SG2", "Sg") in hits(template)


def test_groups_that_are_not_training_groups_are_not_judged() -> None:
    assert hits(resources(Web=sg("HTTPS from the training subnet to interface endpoints"))) == set()


@pytest.mark.parametrize(
    "group",
    [
        sg("plain", Tags=[{"Key": "smddp:role", "Value": "training"}]),
        sg("plain", GroupName="EfaWorkers"),
        sg("p5 cluster"),
        sg("training instances"),
        sg("plain", Tags=[{"Key": "Name", "Value": "hyperpod-nodes"}]),
    ],
    ids=["tag", "camel-case-name", "instance-family", "training-instances", "name-tag"],
)
def test_training_groups_are_recognised_by_tag_name_and_description(group: dict) -> None:
    assert hits(resources(Sg=group)) == BOTH


def _vpc_user(resource_type: str, path: list[str]) -> dict:
    config = {"SecurityGroupIds": [{"Fn::GetAtt": ["Sg", "GroupId"]}], "Subnets": ["subnet-1"]}
    props: dict = {}
    node = props
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = config
    return {"Type": resource_type, "Properties": props}


@pytest.mark.parametrize(
    "resource_type,path",
    [("AWS::SageMaker::Cluster", ["VpcConfig"]), ("AWS::SageMaker::ProcessingJob", ["NetworkConfig", "VpcConfig"])],
)
def test_groups_used_by_sagemaker_training_resources_are_training_groups(resource_type: str, path: list[str]) -> None:
    assert hits(resources(Sg=sg("plain"), User=_vpc_user(resource_type, path))) == BOTH


def test_groups_of_hyperpod_instance_group_overrides_are_training_groups() -> None:
    cluster = {
        "Type": "AWS::SageMaker::Cluster",
        "Properties": {"InstanceGroups": [{"OverrideVpcConfig": {"SecurityGroupIds": [{"Ref": "Sg"}], "Subnets": ["subnet-1"]}}]},
    }
    assert hits(resources(Sg=sg("plain"), Cluster=cluster)) == BOTH


def test_inference_and_studio_groups_are_not_training_groups() -> None:
    assert hits(resources(Sg=sg("plain"), Model=_vpc_user("AWS::SageMaker::Model", ["VpcConfig"]))) == set()


def test_groups_on_an_efa_file_system_are_training_groups_but_not_on_a_plain_one() -> None:
    def fs(efa: object) -> dict:
        return {
            "Type": "AWS::FSx::FileSystem",
            "Properties": {
                "FileSystemType": "LUSTRE",
                "SecurityGroupIds": [{"Ref": "Sg"}],
                "LustreConfiguration": {"EfaEnabled": efa},
            },
        }

    sg_hits = {h for h in hits(resources(Sg=sg("plain"), Fs=fs("Yes"))) if h[0].startswith("SMDDP-SG")}
    assert sg_hits == BOTH
    assert not {h for h in hits(resources(Sg=sg("plain"), Fs=fs(False))) if h[0].startswith("SMDDP-SG")}


def test_the_message_says_why_the_group_is_training_and_how_to_fix_it() -> None:
    from smddp_infra.rules import check_template

    (finding,) = [f for f in check_template(resources(Sg=sg(), In=self_rule("ingress", "Sg"))) if f.rule_id == "SMDDP-SG2"]
    assert "mentions 'efa'" in finding.message
    assert "DestinationSecurityGroupId" in finding.message and "IpProtocol -1" in finding.message
