"""The network facts of a template as a reviewer reads them: group rules, endpoints, members.

The facts come from the ONE template model the rules use (:mod:`smddp_infra.rules.model`,
:mod:`smddp_infra.rules.groups`): which rules a group has (inline or separate resources,
conditions and ``Fn::If`` decided for the parameter defaults), who carries a group, which
service an endpoint reaches. This module only renders them (labels, compact intrinsics),
so the reviewer's summary and the checks cannot disagree about a template.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from smddp_infra.review.template import TemplateView, as_list
from smddp_infra.rules import groups as model_groups
from smddp_infra.rules.model import World
from smddp_infra.rules.vpc import short_service_name

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


def _world(view: TemplateView) -> World:
    """The template under its parameter defaults (what a deploy without overrides creates)."""
    return view.model.world()


def security_group_rules(view: TemplateView) -> list[SgRule]:
    """Every rule the model gives the template's groups (EC2's implicit egress left out: it is
    not written in the template), plus rule resources on groups the template does not own."""
    world = _world(view)
    groups = model_groups.security_groups(world)
    rules: list[SgRule] = []
    for permission in groups.all_permissions():
        if permission.implicit or permission.raw is None:
            continue
        inline = permission.declared_in == permission.group and view.resources.get(permission.group, {}).get("Type") == model_groups.SECURITY_GROUP
        rules.append(_rule(view, permission.group, permission.direction, permission.raw, "inline" if inline else permission.declared_in, permission))
    for resource in world.of_type(model_groups.INGRESS, model_groups.EGRESS):
        props = resource.properties
        if groups.group_of(props.get("GroupId")) is not None:
            continue
        direction = "ingress" if resource.type == model_groups.INGRESS else "egress"
        group = view.render(props.get("GroupId") or props.get("GroupName"))
        rules.append(_rule(view, group, direction, props, resource.logical_id, None))
    return sorted(rules, key=lambda r: (view.label(r.group), r.direction != "ingress", r.protocol != "all", r.ports, r.why))


def _rule(
    view: TemplateView, group: str, direction: str, raw: Mapping[str, Any], defined_by: str, permission: Optional[model_groups.Permission]
) -> SgRule:
    protocol = _PROTOCOLS.get(str(raw.get("IpProtocol")), str(raw.get("IpProtocol")))
    ports = _ports(protocol, raw.get("FromPort"), raw.get("ToPort"))
    if permission is not None:
        peer_group = permission.peer_group
    else:
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
    """``com.amazonaws.${AWS::Region}.s3`` -> ``s3``: the model's reading (the one NET2/NET3
    use), else the value as rendered."""
    resolved = _world(view).resolve(value, partial=True)
    short = short_service_name(resolved) if isinstance(resolved, str) else None
    return short or view.render(value)


def group_members(view: TemplateView) -> dict[str, list[str]]:
    """Security group logical id -> logical ids of resources that carry it (the model's view:
    any ``SecurityGroupIds``/``SecurityGroups``/``GroupSet``/``Groups`` list, at any depth)."""
    return model_groups.group_members(_world(view))
