"""The network facts of a template: security-group rules, endpoints, subnets, members.

Rules are collected from both places CloudFormation allows them (inline
``SecurityGroupIngress``/``SecurityGroupEgress`` lists and separate
``AWS::EC2::SecurityGroupIngress``/``Egress`` resources), because the EFA self rules are
deliberately separate resources (see :mod:`smddp_infra.constructs.efa`) while CDK writes
other rules inline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from smddp_infra.review.template import TemplateView, as_list

_PROTOCOLS = {"-1": "all", "6": "TCP", "17": "UDP", "1": "ICMP", "58": "ICMPv6", "tcp": "TCP", "udp": "UDP", "icmp": "ICMP"}

#: What a well-known port range is for (shown after the rule's own description).
PORT_PURPOSES = {("TCP", "988-1023"): "Lustre (FSx) client/server ports", ("TCP", "443"): "HTTPS"}

#: aws-cdk-lib's "no egress" placeholder on a group with allow_all_outbound=False.
_CDK_NO_EGRESS = {"CidrIp": "255.255.255.255/32", "IpProtocol": "icmp", "FromPort": 252, "ToPort": 86}


@dataclass(frozen=True)
class SgRule:
    group: str  # logical id of the group the rule belongs to
    direction: str  # "ingress" | "egress"
    source: str
    destination: str
    protocol: str
    ports: str
    why: str
    defined_by: str  # "inline" or the rule resource's logical id
    peer_group: Optional[str] = None  # logical id of the other group, when the peer is a group
    peer_prefix_list: Optional[str] = None
    peer_cidr: Optional[str] = None


@dataclass(frozen=True)
class Endpoint:
    logical_id: str
    service: str
    kind: str
    private_dns: Optional[bool]
    subnets: tuple[str, ...]
    security_groups: tuple[str, ...]
    route_tables: tuple[str, ...]


def security_group_rules(view: TemplateView) -> list[SgRule]:
    rules: list[SgRule] = []
    for group_id, group in view.of_type("AWS::EC2::SecurityGroup"):
        props = group.get("Properties") or {}
        for raw in as_list(props.get("SecurityGroupIngress")):
            rules.append(_rule(view, group_id, "ingress", raw, "inline"))
        for raw in as_list(props.get("SecurityGroupEgress")):
            rules.append(_rule(view, group_id, "egress", raw, "inline"))
    for kind, direction in (("AWS::EC2::SecurityGroupIngress", "ingress"), ("AWS::EC2::SecurityGroupEgress", "egress")):
        for rule_id, resource in view.of_type(kind):
            props = resource.get("Properties") or {}
            group = view.referenced_id(props.get("GroupId")) or view.render(props.get("GroupId") or props.get("GroupName"))
            rules.append(_rule(view, group, direction, props, rule_id))
    return sorted(rules, key=lambda r: (view.label(r.group), r.direction != "ingress", r.protocol != "all", r.ports, r.why))


def _rule(view: TemplateView, group: str, direction: str, raw: Mapping[str, Any], defined_by: str) -> SgRule:
    protocol = _PROTOCOLS.get(str(raw.get("IpProtocol")), str(raw.get("IpProtocol")))
    ports = _ports(protocol, raw.get("FromPort"), raw.get("ToPort"))
    peer_group = view.referenced_id(raw.get("SourceSecurityGroupId") or raw.get("DestinationSecurityGroupId"))
    prefix_list = raw.get("SourcePrefixListId") or raw.get("DestinationPrefixListId")
    cidr = raw.get("CidrIp") or raw.get("CidrIpv6")
    if peer_group:
        peer = "itself" if peer_group == group else f"group {view.label(peer_group)}"
    elif raw.get("SourceSecurityGroupId") or raw.get("DestinationSecurityGroupId"):
        peer = f"group {view.render(raw.get('SourceSecurityGroupId') or raw.get('DestinationSecurityGroupId'))}"
    elif prefix_list:
        peer = f"prefix list {view.render(prefix_list)}"
    elif cidr is not None:
        peer = view.render(cidr)
        subnet = _subnet_with_cidr(view, cidr)
        if subnet:
            peer += f" ({view.label(subnet)})"
    else:
        peer = "?"
    why = str(raw.get("Description") or "(no description)")
    if all(raw.get(k) == v for k, v in _CDK_NO_EGRESS.items()):
        why = "none: aws-cdk-lib placeholder meaning 'no outbound traffic' (allow_all_outbound=False)"
        peer, protocol, ports = "nothing", "-", "-"
    elif why.startswith(("from ", "to ")) and ":" in why:
        why = f"added by aws-cdk-lib ({why})"
    purpose = PORT_PURPOSES.get((protocol, ports))
    if purpose and purpose.lower() not in why.lower():
        why = f"{why} [{purpose}]"
    me = f"group {view.label(group)}"
    source, destination = (peer if peer != "itself" else me, me) if direction == "ingress" else (me, peer if peer != "itself" else me)
    return SgRule(
        group=group,
        direction=direction,
        source=source,
        destination=destination,
        protocol=protocol,
        ports=ports,
        why=why,
        defined_by=defined_by,
        peer_group=peer_group,
        peer_prefix_list=view.render(prefix_list) if prefix_list else None,
        peer_cidr=view.render(cidr) if cidr is not None else None,
    )


def _ports(protocol: str, low: Any, high: Any) -> str:
    if protocol == "all" or low in (None, -1) and high in (None, -1):
        return "all"
    if low == high or high is None:
        return str(low)
    return f"{low}-{high}"


def _subnet_with_cidr(view: TemplateView, cidr: Any) -> Optional[str]:
    for subnet_id, subnet in view.of_type("AWS::EC2::Subnet"):
        block = (subnet.get("Properties") or {}).get("CidrBlock")
        if block == cidr:
            return subnet_id
        if isinstance(cidr, Mapping) and view.referenced_id(cidr) == subnet_id:
            return subnet_id
    return None


def endpoints(view: TemplateView) -> list[Endpoint]:
    found = []
    for logical_id, resource in view.of_type("AWS::EC2::VPCEndpoint"):
        props = resource.get("Properties") or {}
        found.append(
            Endpoint(
                logical_id=logical_id,
                service=service_name(view, props.get("ServiceName")),
                kind=str(props.get("VpcEndpointType") or "Gateway"),
                private_dns=props.get("PrivateDnsEnabled"),
                subnets=tuple(view.referenced_id(s) or view.render(s) for s in as_list(props.get("SubnetIds"))),
                security_groups=tuple(view.referenced_id(s) or view.render(s) for s in as_list(props.get("SecurityGroupIds"))),
                route_tables=tuple(view.referenced_id(s) or view.render(s) for s in as_list(props.get("RouteTableIds"))),
            )
        )
    return sorted(found, key=lambda e: (e.kind != "Gateway", e.service))


def service_name(view: TemplateView, value: Any) -> str:
    """``com.amazonaws.${AWS::Region}.s3`` -> ``s3``; the short name reviewers know."""
    text = view.render(value)
    for prefix in ("com.amazonaws.${AWS::Region}.",):
        if text.startswith(prefix):
            return text[len(prefix):]
    parts = text.split(".")
    if text.startswith("com.amazonaws.") and len(parts) > 3:
        return ".".join(parts[3:])
    return text


def group_members(view: TemplateView) -> dict[str, list[str]]:
    """Security group logical id -> logical ids of resources that carry it."""
    members: dict[str, list[str]] = {}
    for logical_id, resource in view.resources.items():
        if resource.get("Type") in ("AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress"):
            continue
        props = resource.get("Properties") or {}
        for key in ("SecurityGroupIds", "SecurityGroups"):
            for value in as_list(props.get(key)):
                group = view.referenced_id(value)
                if group and view.resources[group].get("Type") == "AWS::EC2::SecurityGroup":
                    members.setdefault(group, []).append(logical_id)
    return members
