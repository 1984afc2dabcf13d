"""The launch guardrail requires the EFA group however many groups the network has, in any order.

The default app has one group, where "the first group" and "the EFA group" cannot be told
apart. Here a network carries the EFA group plus two additional groups (the platform's own),
synthesized once; the EFA group is found by evidence (the one group the network creates, with
the all-traffic self rules), never by position, and the launch statement's
``ForAnyValue:StringEquals`` on ``sagemaker:VpcSecurityGroupIds`` must name exactly it.
Requests are then evaluated with tests/_iam_model.py in every order of their groups.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from typing import Any

import pytest

from _iam_model import Decision, Request, evaluate, training_job_context
from conftest import cdk_context
from smddp_infra.guardrails import SID_LAUNCH

ACCOUNT, REGION = "123456789012", "us-east-1"
EXTRA = ("sg-0aaaaaaaaaaaaaaa1", "sg-0aaaaaaaaaaaaaaa2")  # the platform's groups, imported
JOB_ARN = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-job/groups-1"


@pytest.fixture(scope="module")
def synthesized() -> dict[str, Any]:
    from aws_cdk import App, Environment, Stack
    from aws_cdk import aws_ec2 as ec2

    from smddp_infra.constructs.training_network import SmddpTrainingNetwork

    app = App(context=cdk_context())
    stack = Stack(app, "Groups", env=Environment(account=ACCOUNT, region=REGION))
    vpc = ec2.Vpc.from_vpc_attributes(stack, "Vpc", vpc_id="vpc-0a1b2c3d4e5f67890", availability_zones=["us-east-1a"],
                                      private_subnet_ids=["subnet-0aa11bb22cc33dd44"],
                                      private_subnet_route_table_ids=["rtb-0aa11bb22cc33dd44"])
    subnet = ec2.Subnet.from_subnet_attributes(stack, "Subnet", subnet_id="subnet-0aa11bb22cc33dd44",
                                               availability_zone="us-east-1a", route_table_id="rtb-0aa11bb22cc33dd44",
                                               ipv4_cidr_block="10.20.0.0/22")
    extra = [ec2.SecurityGroup.from_security_group_id(stack, f"Platform{i}", group_id, mutable=False)
             for i, group_id in enumerate(EXTRA)]
    network = SmddpTrainingNetwork(stack, "Net", instance_type="ml.p5.48xlarge", instance_count=2,
                                   read_mbps_per_gpu=100, vpc=vpc, training_subnet=subnet,
                                   additional_security_groups=extra, allow_https_egress=True)
    network.launch_policy()
    template = app.synth().get_stack_by_name("Groups").template
    return {"template": template}


def _efa_group(template: dict[str, Any]) -> str:
    """The EFA group by evidence: a created group with all-traffic ingress AND egress to itself."""
    resources = template["Resources"]

    def self_rule(kind: str, logical: str) -> bool:
        for r in resources.values():
            if r["Type"] != f"AWS::EC2::SecurityGroup{kind}":
                continue
            p = r["Properties"]
            me, peer = (p.get("GroupId"), p.get("SourceSecurityGroupId" if kind == "Ingress" else "DestinationSecurityGroupId"))
            ref = {"Fn::GetAtt": [logical, "GroupId"]}
            if me == ref and peer == ref and str(p.get("IpProtocol")) == "-1":
                return True
        return False

    found = [k for k, r in resources.items() if r["Type"] == "AWS::EC2::SecurityGroup"
             and self_rule("Ingress", k) and self_rule("Egress", k)]
    assert len(found) == 1, found
    return found[0]


def _launch_statement(template: dict[str, Any]) -> dict[str, Any]:
    statements = [s for r in template["Resources"].values() if r["Type"] == "AWS::IAM::ManagedPolicy"
                  for s in r["Properties"]["PolicyDocument"]["Statement"] if s.get("Sid") == SID_LAUNCH]
    assert len(statements) == 1, statements
    return statements[0]


def _physical(logical: str) -> str:
    return "sg-" + hashlib.sha256(logical.encode()).hexdigest()[:17]


def _resolve(value: Any) -> Any:
    """Template values with the created group's GetAtt as a made-up id, pseudo parameters filled in."""
    if isinstance(value, list):
        return [_resolve(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"Fn::GetAtt"} and value["Fn::GetAtt"][1] == "GroupId":
            return _physical(value["Fn::GetAtt"][0])
        if set(value) == {"Ref"}:
            return {"AWS::Partition": "aws", "AWS::AccountId": ACCOUNT, "AWS::Region": REGION}.get(
                value["Ref"], f"{value['Ref'].lower()}-0123456789abcdef")
        if set(value) == {"Fn::Join"}:
            sep, parts = value["Fn::Join"]
            return sep.join(str(_resolve(p)) for p in parts)
        return {k: _resolve(v) for k, v in value.items()}
    return value


def test_for_any_value_names_the_efa_group_and_only_it(synthesized: dict[str, Any]) -> None:
    template = synthesized["template"]
    efa = {"Fn::GetAtt": [_efa_group(template), "GroupId"]}
    condition = _launch_statement(template)["Condition"]
    assert condition["ForAnyValue:StringEquals"]["sagemaker:VpcSecurityGroupIds"] == [efa]


def test_for_all_values_admits_every_group_of_the_network_in_any_order(synthesized: dict[str, Any]) -> None:
    template = synthesized["template"]
    efa = {"Fn::GetAtt": [_efa_group(template), "GroupId"]}
    allowed = _launch_statement(template)["Condition"]["ForAllValues:StringEquals"]["sagemaker:VpcSecurityGroupIds"]
    assert sorted(map(json.dumps, allowed)) == sorted(map(json.dumps, [efa, *EXTRA]))


def _request(groups: list[str]) -> dict[str, Any]:
    return {"TrainingJobName": "groups-1", "RoleArn": f"arn:aws:iam::{ACCOUNT}:role/any",
            "ResourceConfig": {"InstanceType": "ml.p5.48xlarge", "InstanceCount": 2},
            "VpcConfig": {"Subnets": ["subnet-0aa11bb22cc33dd44"], "SecurityGroupIds": groups},
            "EnableInterContainerTrafficEncryption": True}


def _decide(template: dict[str, Any], groups: list[str]) -> Decision:
    statement = copy.deepcopy(_resolve(_launch_statement(template)))
    # Only the group conditions are under test here: keep the statement's group keys and the Null guard.
    keep = {"ForAnyValue:StringEquals", "ForAllValues:StringEquals", "Null"}
    statement["Condition"] = {op: {k: v for k, v in keys.items() if k == "sagemaker:VpcSecurityGroupIds"}
                              for op, keys in statement["Condition"].items() if op in keep}
    statement["Condition"] = {op: keys for op, keys in statement["Condition"].items() if keys}
    policy = {"Version": "2012-10-17", "Statement": [statement]}
    return evaluate([policy], Request("sagemaker:CreateTrainingJob", JOB_ARN, training_job_context(_request(groups))))


def test_a_job_with_the_efa_group_is_allowed_in_every_order(synthesized: dict[str, Any]) -> None:
    template = synthesized["template"]
    efa = _physical(_efa_group(template))
    for size in (1, 2, 3):
        for groups in itertools.permutations([efa, *EXTRA], size):
            if efa in groups:
                assert _decide(template, list(groups)).allowed, groups


def test_a_job_with_only_the_platform_groups_is_refused_in_every_order(synthesized: dict[str, Any]) -> None:
    template = synthesized["template"]
    for size in (1, 2):
        for groups in itertools.permutations(EXTRA, size):
            decision = _decide(template, list(groups))
            assert not decision.allowed, groups
            assert decision.refused_by() == (SID_LAUNCH, "ForAnyValue:StringEquals", "sagemaker:VpcSecurityGroupIds")
