"""Helpers for the SMDDP rule tests: fixture templates read the way `smddp-infra check` reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "templates"


def load(name: str) -> dict[str, Any]:
    """A fixture template read as `smddp-infra check` reads it (short-form tags -> long form)."""
    from smddp_infra.rules.loader import load_template_file

    template = load_template_file(str(FIXTURES / name))
    assert isinstance(template, dict), name
    return template


def hits(template: dict[str, Any], *, infos: bool = False, **kwargs: Any) -> set[tuple[str, str]]:
    """{(rule id, resource)} of every error and warning finding (and info notes with ``infos``)."""
    from smddp_infra.rules import check_template

    return {(f.rule_id, f.resource) for f in check_template(template, **kwargs) if infos or f.severity.value != "info"}


def efa_template(group: str = "Sg", *groups: str) -> dict[str, Any]:
    """A launch template whose EFA interface carries ``group`` (and ``groups``)."""
    refs = [{"Ref": g} for g in (group, *groups)]
    data = {"NetworkInterfaces": [{"DeviceIndex": 0, "InterfaceType": "efa", "Groups": refs}]}
    return {"Type": "AWS::EC2::LaunchTemplate", "Properties": {"LaunchTemplateData": data}}


def resources(**body: dict[str, Any]) -> dict[str, Any]:
    """A template from keyword resources: resources(Sg={"Type": ..., "Properties": {...}})."""
    return {"Resources": body}


def sg(description: str = "efa workers", **props: Any) -> dict[str, Any]:
    return {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": description, "VpcId": "vpc-1", **props}}


def self_rule(kind: str, group: str, protocol: Any = "-1", **extra: Any) -> dict[str, Any]:
    peer = "SourceSecurityGroupId" if kind == "ingress" else "DestinationSecurityGroupId"
    resource_type = "AWS::EC2::SecurityGroupIngress" if kind == "ingress" else "AWS::EC2::SecurityGroupEgress"
    ref = {"Fn::GetAtt": [group, "GroupId"]}
    return {"Type": resource_type, "Properties": {"GroupId": ref, peer: ref, "IpProtocol": protocol, **extra}}


def found(template: dict[str, Any], rule: str) -> list[Any]:
    """The findings of ``rule`` on ``template`` (every severity)."""
    from smddp_infra.rules import check_template

    return [f for f in check_template(template) if f.rule_id == rule]


def acl_entry(acl: str, number: Any, egress: Any, action: str, cidr: Any, protocol: Any = 6,
              ports: Any = None) -> dict[str, Any]:
    """An AWS::EC2::NetworkAclEntry of network ACL ``acl`` (``ports``: (from, to) for TCP/UDP;
    ``egress`` None: not written, CloudFormation's default false)."""
    props: dict[str, Any] = {"NetworkAclId": {"Ref": acl}, "RuleNumber": number, "Protocol": protocol, "RuleAction": action,
                             "CidrBlock": cidr}
    if egress is not None:
        props["Egress"] = egress
    if ports:
        props["PortRange"] = {"From": ports[0], "To": ports[1]}
    return {"Type": "AWS::EC2::NetworkAclEntry", "Properties": props}
