"""Security groups of a template: their rules, and which resources carry them.

CloudFormation has two ways to write a rule, and real templates mix them:

* inline, in ``AWS::EC2::SecurityGroup`` ``SecurityGroupIngress`` / ``SecurityGroupEgress``.
  An inline rule cannot name its own group (``!Ref`` to itself is a circular dependency),
  so self rules are never inline;
* separate ``AWS::EC2::SecurityGroupIngress`` / ``AWS::EC2::SecurityGroupEgress``
  resources with ``GroupId: !GetAtt Sg.GroupId`` (or ``!Ref Sg``, or an ``Fn::If`` choosing
  between a new and an existing group) and ``SourceSecurityGroupId`` /
  ``DestinationSecurityGroupId``: the usual form of a self rule, and what aws-cdk-lib
  synthesizes for ``sg.connections.allow_internally``.

A group without an inline ``SecurityGroupEgress`` property keeps EC2's default egress rule
(all traffic to 0.0.0.0/0); separate egress resources add to it. That default matters for
Lustre (it covers client traffic) but not for EFA (egress to 0.0.0.0/0 is not egress to a
group, and EFA needs the latter).

Everything here is computed under one parameter assignment (:class:`~.model.World`), so
conditional groups, conditional rule resources and ``Fn::If`` attachments are seen as
CloudFormation would create them. What cannot be resolved is kept as *unresolved* (never
dropped, never guessed): a rule whose resource may or may not exist is ``certain=False``,
a peer the template does not name is ``peer_unresolved``, an attached group that is not a
template group (a literal ``sg-...``, an import, a parameter) is listed by what it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Mapping  # isinstance on typing.Mapping is several times slower
from typing import Any, Iterable, Optional

from smddp_infra.rules.model import NO_VALUE, UNKNOWN, Resource, ResourceRef, TemplateModel, World, describe_value, to_int

SECURITY_GROUP = "AWS::EC2::SecurityGroup"
INGRESS = "AWS::EC2::SecurityGroupIngress"
EGRESS = "AWS::EC2::SecurityGroupEgress"

ALL = "all"
_PROTOCOLS = {
    "-1": ALL, "all": ALL, "6": "tcp", "tcp": "tcp", "17": "udp", "udp": "udp",
    "1": "icmp", "icmp": "icmp", "58": "icmpv6", "icmpv6": "icmpv6",
}


@dataclass(frozen=True)
class Permission:
    """One ingress or egress rule of one template group (``group`` is its logical id)."""

    group: str
    direction: str  # "ingress" | "egress"
    protocol: str  # "all", "tcp", "udp", "icmp", another number, or "?" when unknown
    from_port: Optional[int]
    to_port: Optional[int]
    peer_group: Optional[str]  # logical id of a security group of this template
    cidr: Optional[str]  # CidrIp / CidrIpv6 when the peer is an address range
    declared_in: str  # logical id of the resource that writes the rule
    implicit: bool = False  # EC2's default egress rule
    certain: bool = True  # False: its resource's Condition (or its GroupId) is undecided
    peer_unresolved: Optional[str] = None  # the peer as written, when it cannot be resolved
    peer_candidates: tuple[str, ...] = ()  # template groups an unresolved peer might be
    prefix_list: Optional[str] = None
    description: Optional[str] = None
    raw: Optional[Mapping[str, Any]] = None  # the rule as written (for the review pack)

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

    def may_cover_tcp(self, low: int, high: int) -> bool:
        """Could this rule cover the ports once unknown protocol/ports are known?"""
        if self.covers_tcp(low, high):
            return True
        return self.protocol == "?" or (self.protocol == "tcp" and (self.from_port is None or self.to_port is None))


def normalize_protocol(value: Any) -> str:
    if value is UNKNOWN or value is None or value is NO_VALUE:
        return "?"
    text = str(value).strip().lower()
    return _PROTOCOLS.get(text, text)


@dataclass(frozen=True)
class GroupRef:
    """One entry of a ``SecurityGroupIds``-style list, resolved under one assignment."""

    group: Optional[str]  # a template group's logical id
    unresolved: Optional[str] = None  # what it is when not a template group ("sg-0abc", "!ImportValue X")

    def describe(self) -> str:
        return self.group or self.unresolved or "?"


def template_groups_mentioned(world: World | TemplateModel, raw: Any) -> tuple[str, ...]:
    """Template security groups named anywhere inside a raw value (both branches of an
    undecided ``Fn::If``, for instance): what an unresolved reference might be; over a
    resource's whole properties, every group it may carry under any assignment."""
    return tuple(sorted(resources_mentioned(world, raw, (SECURITY_GROUP,))))


def resources_mentioned(
    world: World | TemplateModel, raw: Any, types: tuple[str, ...], *, attributes: Optional[tuple[Optional[str], ...]] = None,
    in_sub: bool = False,
) -> list[str]:
    """Logical ids of template resources of ``types`` that ``Ref``/``Fn::GetAtt`` name anywhere in
    ``raw``, in the order met; ``attributes`` limits the GetAtt attributes that count (None: any),
    ``in_sub`` also reads ``${Name}`` / ``${Name.Attribute}`` in ``Fn::Sub`` text."""
    found: list[str] = []

    def add(name: str, attribute: Optional[str]) -> None:
        resource = world.resources.get(name)
        if resource is not None and resource.type in types and (attributes is None or attribute in attributes):
            if resource.logical_id not in found:
                found.append(resource.logical_id)

    stack = [raw]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if len(node) == 1 and ("Ref" in node or "Fn::GetAtt" in node):
                target = node.get("Ref") or node.get("Fn::GetAtt")
                parts = target if isinstance(target, list) else str(target).split(".", 1)
                if parts:
                    add(str(parts[0]), str(parts[1]) if len(parts) > 1 else None)
                continue
            if in_sub and len(node) == 1 and "Fn::Sub" in node:
                arg = node["Fn::Sub"]
                text = arg[0] if isinstance(arg, list) and arg else arg
                for name, attribute in _SUB_NAMES.findall(text) if isinstance(text, str) else ():
                    add(name.strip(), attribute or None)
                if isinstance(arg, list) and len(arg) > 1:
                    stack.append(arg[1])
                continue
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


_SUB_NAMES = re.compile(r"\$\{([^}!.][^}.]*)(?:\.([^}]+))?\}")


def group_ref(world: World, raw: Any, resolved: Any = None) -> GroupRef:
    """Classify one group reference (``resolved`` when the caller already resolved it)."""
    value = world.resolve(raw) if resolved is None else resolved
    if isinstance(value, ResourceRef):
        resource = world.resources.get(value.logical_id)
        if resource is not None and resource.type == SECURITY_GROUP and value.attribute in (None, "GroupId"):
            return GroupRef(value.logical_id)
        return GroupRef(None, describe_value(raw) if raw is not None else f"{value.logical_id}.{value.attribute}")
    if isinstance(value, str):
        return GroupRef(None, value)
    return GroupRef(None, describe_value(raw))


def group_list(world: World, raw: Any) -> Optional[list[GroupRef]]:
    """A resolved list of group references, or None when the list itself is unresolved."""
    resolved_list = world.resolve(raw, shallow=True)
    if resolved_list is NO_VALUE or resolved_list is None:
        return []
    if isinstance(resolved_list, str):  # a CommaDelimitedList default is already a list; a bare id is one
        return [GroupRef(None, resolved_list)]
    if not isinstance(resolved_list, list):
        return None
    out: list[GroupRef] = []
    for entry in resolved_list:
        value = world.resolve(entry)
        if value is NO_VALUE:
            continue
        if isinstance(value, list):  # !Ref to a List<SecurityGroup::Id> parameter inside a list
            out.extend(GroupRef(None, str(v)) for v in value)
            continue
        out.append(group_ref(world, entry, value))
    return out


class SecurityGroups:
    """All permissions of all template groups under one assignment, indexed by group."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.groups: dict[str, Resource] = {g.logical_id: g for g in world.of_type(SECURITY_GROUP)}
        self.permissions: dict[str, list[Permission]] = {name: [] for name in self.groups}
        for group in self.groups.values():
            self._inline(group)
        for resource in world.of_type(INGRESS, EGRESS):
            self._separate(resource)

    def group_of(self, value: Any) -> Optional[str]:
        """The logical id of the template's security group that ``value`` names, if any."""
        ref = group_ref(self.world, value)
        return ref.group if ref.group in self.groups else None

    def of(self, group: str, direction: str) -> list[Permission]:
        return [p for p in self.permissions.get(group, ()) if p.direction == direction]

    def all_permissions(self) -> list[Permission]:
        return [p for perms in self.permissions.values() for p in perms]

    def _inline(self, group: Resource) -> None:
        world = self.world
        certain = world.exists(group) is True
        props = group.properties
        for key, direction, peer_key in (
            ("SecurityGroupIngress", "ingress", "SourceSecurityGroupId"),
            ("SecurityGroupEgress", "egress", "DestinationSecurityGroupId"),
        ):
            entries = world.resolve(props.get(key), shallow=True) if key in props else NO_VALUE
            if entries is UNKNOWN:  # the whole list is undecided: a maybe-rule that could be anything
                self.permissions[group.logical_id].append(
                    Permission(group.logical_id, direction, "?", None, None, None, None, group.logical_id, certain=False,
                               peer_unresolved=describe_value(props.get(key)))
                )
            elif isinstance(entries, list):
                for entry in entries:
                    resolved = world.resolve(entry, shallow=True)
                    if isinstance(resolved, Mapping):
                        self._add(group.logical_id, direction, resolved, peer_key, group.logical_id, certain)
                    elif resolved is UNKNOWN:
                        self.permissions[group.logical_id].append(
                            Permission(group.logical_id, direction, "?", None, None, None, None, group.logical_id,
                                       certain=False, peer_unresolved=describe_value(entry),
                                       peer_candidates=template_groups_mentioned(world, entry))
                        )
            if key == "SecurityGroupEgress" and (entries is NO_VALUE or entries is None):
                self.permissions[group.logical_id].append(
                    Permission(group.logical_id, "egress", ALL, None, None, None, "0.0.0.0/0", group.logical_id,
                               implicit=True, certain=certain, description="EC2 default egress")
                )

    def _separate(self, resource: Resource) -> None:
        world = self.world
        props = resource.properties
        exists = world.exists(resource)
        direction, peer_key = ("ingress", "SourceSecurityGroupId") if resource.type == INGRESS else ("egress", "DestinationSecurityGroupId")
        ref = group_ref(world, props.get("GroupId")) if "GroupId" in props else GroupRef(None, "GroupName " + describe_value(props.get("GroupName")))
        if ref.group in self.groups:
            self._add(ref.group, direction, props, peer_key, resource.logical_id, exists is True)
            return
        # GroupId undecided (an Fn::If on an unknown condition): a maybe-rule for every
        # template group it could be. An import or a literal id is another stack's group.
        for candidate in template_groups_mentioned(world, props.get("GroupId")):
            if candidate in self.groups:
                self._add(candidate, direction, props, peer_key, resource.logical_id, False)

    def _add(self, group: str, direction: str, entry: Mapping[str, Any], peer_key: str, declared_in: str, certain: bool) -> None:
        world = self.world
        resolve = world.resolve
        peer: Optional[str] = None
        peer_unresolved: Optional[str] = None
        candidates: tuple[str, ...] = ()
        if peer_key in entry:
            ref = group_ref(world, entry.get(peer_key))
            if ref.group in self.groups:
                peer = ref.group
            else:
                peer_unresolved = ref.describe()
                candidates = template_groups_mentioned(world, entry.get(peer_key))
        cidr = resolve(entry.get("CidrIp") if "CidrIp" in entry else entry.get("CidrIpv6"))
        if isinstance(cidr, ResourceRef) and cidr.attribute == "CidrBlock" and cidr.logical_id in world.resources:
            cidr = world.get(world.resources[cidr.logical_id], "CidrBlock")  # !GetAtt Vpc.CidrBlock
        has_cidr = "CidrIp" in entry or "CidrIpv6" in entry
        if has_cidr and not isinstance(cidr, str) and cidr is not NO_VALUE:
            peer_unresolved = peer_unresolved or describe_value(entry.get("CidrIp") or entry.get("CidrIpv6"))
        prefix = entry.get("SourcePrefixListId") or entry.get("DestinationPrefixListId")
        resolved_prefix = resolve(prefix) if prefix is not None else None
        if prefix is not None:
            peer_unresolved = peer_unresolved or f"prefix list {describe_value(prefix) if not isinstance(resolved_prefix, str) else resolved_prefix}"
        if "SourceSecurityGroupName" in entry and peer is None:
            peer_unresolved = peer_unresolved or f"group name {describe_value(entry['SourceSecurityGroupName'])}"
        from_port = to_int(resolve(entry.get("FromPort"))) if "FromPort" in entry else None
        to_port = to_int(resolve(entry.get("ToPort"))) if "ToPort" in entry else None
        description = resolve(entry.get("Description"))
        protocol = normalize_protocol(resolve(entry.get("IpProtocol")))
        self.permissions.setdefault(group, []).append(
            Permission(
                group=group,
                direction=direction,
                protocol=protocol,
                from_port=from_port if isinstance(from_port, int) else None,
                to_port=to_port if isinstance(to_port, int) else None,
                peer_group=peer,
                cidr=cidr if isinstance(cidr, str) else None,
                declared_in=declared_in,
                certain=certain and protocol != "?",
                peer_unresolved=peer_unresolved,
                peer_candidates=candidates,
                prefix_list=resolved_prefix if isinstance(resolved_prefix, str) else None,
                description=description if isinstance(description, str) else None,
                raw=entry,
            )
        )


def security_groups(world: World) -> SecurityGroups:
    """The shared, per-assignment index (built once for all rules)."""
    result: SecurityGroups = world.memo("security_groups", SecurityGroups)
    return result


#: Properties that attach groups to a resource, by where they sit (any resource type).
_GROUP_LIST_KEYS = ("SecurityGroupIds", "SecurityGroups", "GroupSet", "Groups")


def group_members(world: World) -> dict[str, list[str]]:
    """Template group logical id -> logical ids of resources that carry it (any depth).

    The review pack's "who uses this group"; the rules use the typed attachments of
    :mod:`smddp_infra.rules.training`, which know what each resource is.
    """
    groups = security_groups(world)
    members: dict[str, list[str]] = {}
    for resource in world.model.resources.values():
        if resource.type in (INGRESS, EGRESS, SECURITY_GROUP) or world.exists(resource) is False:
            continue
        for raw in _group_lists(resource.properties):
            for ref in group_list(world, raw) or []:
                if ref.group in groups.groups and resource.logical_id not in members.get(ref.group, []):
                    members.setdefault(ref.group, []).append(resource.logical_id)
    return members


def _group_lists(node: Any) -> Iterable[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Mapping):
            for key, value in current.items():
                if key in _GROUP_LIST_KEYS:
                    yield value
                else:
                    stack.append(value)
        elif isinstance(current, list):
            stack.extend(current)
