"""Security-group permissions as one flat list, whichever way the template writes them.

CloudFormation has two ways to write a rule, and real templates mix them:

* inline, in ``AWS::EC2::SecurityGroup`` ``SecurityGroupIngress`` / ``SecurityGroupEgress``.
  An inline rule cannot name its own group (``!Ref`` to itself is a circular dependency),
  so self rules are never inline;
* separate ``AWS::EC2::SecurityGroupIngress`` / ``AWS::EC2::SecurityGroupEgress``
  resources with ``GroupId: !GetAtt Sg.GroupId`` (or ``!Ref Sg``) and
  ``SourceSecurityGroupId`` / ``DestinationSecurityGroupId`` - the usual form of a self
  rule, and what aws-cdk-lib synthesizes for ``sg.connections.allow_internally``.

A group without an inline ``SecurityGroupEgress`` property keeps EC2's default egress
rule (all traffic to 0.0.0.0/0); separate egress resources add to it, they do not
replace it. That default is modelled here, because it matters for Lustre (it covers the
file system's client traffic) but not for EFA (egress to 0.0.0.0/0 is not egress to
the group itself, and EFA needs the latter).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from smddp_infra.rules.model import UNKNOWN, ResourceRef, TemplateModel, to_int

SECURITY_GROUP = "AWS::EC2::SecurityGroup"
INGRESS = "AWS::EC2::SecurityGroupIngress"
EGRESS = "AWS::EC2::SecurityGroupEgress"

ALL = "all"
_PROTOCOLS = {"-1": ALL, "all": ALL, "6": "tcp", "tcp": "tcp", "17": "udp", "udp": "udp", "1": "icmp", "icmp": "icmp"}


@dataclass(frozen=True)
class Permission:
    """One ingress or egress rule of one group (``group`` is its logical id)."""

    group: str
    direction: str  # "ingress" | "egress"
    protocol: str  # "all", "tcp", "udp", "icmp", another number, or "?" when unknown
    from_port: Optional[int]
    to_port: Optional[int]
    peer_group: Optional[str]  # logical id of a security group of this template
    cidr: Optional[str]  # CidrIp / CidrIpv6 when the peer is an address range
    declared_in: str  # logical id of the resource that writes the rule
    implicit: bool = False  # EC2's default egress rule

    @property
    def all_traffic(self) -> bool:
        return self.protocol == ALL

    def covers_tcp(self, low: int, high: int) -> bool:
        if self.protocol == ALL:
            return True
        if self.protocol != "tcp" or self.from_port is None or self.to_port is None:
            return False
        if self.from_port == -1 and self.to_port == -1:
            return True
        return self.from_port <= low and self.to_port >= high


def normalize_protocol(value: Any) -> str:
    if value is UNKNOWN or value is None:
        return "?"
    text = str(value).strip().lower()
    return _PROTOCOLS.get(text, text)


class SecurityGroups:
    """All permissions of all groups in a template, indexed by group."""

    def __init__(self, model: TemplateModel) -> None:
        self.model = model
        self.groups: dict[str, Any] = {g.logical_id: g for g in model.of_type(SECURITY_GROUP)}
        self.permissions: dict[str, list[Permission]] = {name: [] for name in self.groups}
        for group in self.groups.values():
            self._inline(group)
        for resource in model.of_type(INGRESS, EGRESS):
            self._separate(resource)

    def group_of(self, value: Any) -> Optional[str]:
        """The logical id of the template's security group that ``value`` names, if any."""
        resolved = self.model.resolve(value)
        if isinstance(resolved, ResourceRef) and resolved.logical_id in self.groups:
            if resolved.attribute in (None, "GroupId"):
                return resolved.logical_id
        return None

    def of(self, group: str, direction: str) -> list[Permission]:
        return [p for p in self.permissions.get(group, ()) if p.direction == direction]

    def _inline(self, group: Any) -> None:
        props = group.properties
        for key, direction, peer_key in (
            ("SecurityGroupIngress", "ingress", "SourceSecurityGroupId"),
            ("SecurityGroupEgress", "egress", "DestinationSecurityGroupId"),
        ):
            entries = self.model.resolve(props.get(key), shallow=True) if key in props else None
            if isinstance(entries, list):
                for entry in entries:
                    entry = self.model.resolve(entry, shallow=True)
                    if isinstance(entry, dict):
                        self._add(group.logical_id, direction, entry, peer_key, group.logical_id)
        if "SecurityGroupEgress" not in props:
            self.permissions[group.logical_id].append(
                Permission(group.logical_id, "egress", ALL, None, None, None, "0.0.0.0/0", group.logical_id, implicit=True)
            )

    def _separate(self, resource: Any) -> None:
        props = resource.properties
        group = self.group_of(props.get("GroupId"))
        if group is None:
            return
        if resource.type == INGRESS:
            self._add(group, "ingress", props, "SourceSecurityGroupId", resource.logical_id)
        else:
            self._add(group, "egress", props, "DestinationSecurityGroupId", resource.logical_id)

    def _add(self, group: str, direction: str, entry: Any, peer_key: str, declared_in: str) -> None:
        resolve = self.model.resolve
        peer = self.group_of(entry.get(peer_key)) if peer_key in entry else None
        cidr = resolve(entry.get("CidrIp") or entry.get("CidrIpv6"))
        from_port = to_int(resolve(entry.get("FromPort"))) if "FromPort" in entry else None
        to_port = to_int(resolve(entry.get("ToPort"))) if "ToPort" in entry else None
        self.permissions.setdefault(group, []).append(
            Permission(
                group=group,
                direction=direction,
                protocol=normalize_protocol(resolve(entry.get("IpProtocol"))),
                from_port=from_port if isinstance(from_port, int) else None,
                to_port=to_port if isinstance(to_port, int) else None,
                peer_group=peer,
                cidr=cidr if isinstance(cidr, str) else None,
                declared_in=declared_in,
            )
        )
