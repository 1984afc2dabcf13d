"""What in a template carries training traffic, and how strong the evidence is.

The EFA and network rules apply to training resources only, so this is where judgement
lives. An :class:`Attachment` is one training resource (or one EFA interface of it) with
the security groups on it; AWS evaluates those groups as a union.

**Strong evidence** (error-level findings):

1. a network interface with ``InterfaceType: efa`` or ``efa-only``: on an
   ``AWS::EC2::Instance`` (``NetworkInterfaces[].GroupSet``) or an
   ``AWS::EC2::LaunchTemplate`` (``LaunchTemplateData.NetworkInterfaces[].Groups``), hence
   every PCS compute node group, Batch compute environment, EKS node group or
   ParallelCluster queue launched from it;
2. an ``AWS::SageMaker::Cluster`` (HyperPod) instance group: its ``OverrideVpcConfig``, else
   the cluster's ``VpcConfig`` (HyperPod requires the same self rules of its groups);
3. an FSx for Lustre file system with ``LustreConfiguration.EfaEnabled`` true (EFA clients
   and the file system share the group);
4. a training job the template describes: any mapping in a resource's properties that has
   a ``VpcConfig`` beside ``ResourceConfig`` or ``AlgorithmSpecification`` (the
   CreateTrainingJob shape, as custom resources and state machines carry it);
5. a group tagged ``smddp:role`` = ``training``: this project's constructs declare it.

**Weak evidence** (warning at most): a group whose ``GroupName``, ``GroupDescription`` or tag
value mentions EFA or training instances as whole words after camel-case splitting
(``efa``, ``smddp``, ``hyperpod``, an EFA instance family such as ``p4d``/``p5``/``trn1``,
or "training" followed by instance(s)/node(s)/job(s)/cluster(s)/worker(s)/host(s)), and
that no strong attachment judges already. A bare "training" is not enough.

Inference (Model, EndpointConfig), monitoring, Studio and processing resources do not run
EFA collectives; their groups are left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional

from smddp_infra.contract import TAG_ROLE, TAG_ROLE_TRAINING
from smddp_infra.rules.groups import SECURITY_GROUP, GroupRef, group_list, security_groups
from smddp_infra.rules.model import UNKNOWN, Resource, ResourceRef, World, describe_value, to_bool
from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES

ROLE_TAG = TAG_ROLE
ROLE_TRAINING = TAG_ROLE_TRAINING
SUBNET = "AWS::EC2::Subnet"
FILE_SYSTEM = "AWS::FSx::FileSystem"
INSTANCE = "AWS::EC2::Instance"
LAUNCH_TEMPLATE = "AWS::EC2::LaunchTemplate"
CLUSTER = "AWS::SageMaker::Cluster"
EFA_INTERFACE_TYPES = ("efa", "efa-only")

#: EFA-capable accelerated families (SageMaker and HyperPod names: ml.<family>.<size>).
#: The catalog holds the SMDDP training types; HyperPod also offers the newer ones.
EFA_FAMILIES = frozenset(
    {name.split(".")[1] for name in EFA_INSTANCE_TYPES}
    | {"p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "p6e-gb200", "trn1", "trn1n", "trn2", "trn2u"}
)

_WORDS = ("efa", "smddp", "hyperpod", *sorted({name.split(".")[1] for name in EFA_INSTANCE_TYPES}))
_TRAINING_COMPUTE = r"training[ _-]?(?:instances?|nodes?|jobs?|clusters?|workers?|hosts?)"
_WORD_RE = re.compile(
    r"(?<![a-z0-9])(" + "|".join([*(re.escape(w) for w in _WORDS), _TRAINING_COMPUTE]) + r")(?![a-z0-9])"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def mentioned_word(text: Any) -> str | None:
    """The training word ``text`` mentions, if any (case-insensitive, whole words)."""
    if not isinstance(text, str):
        return None
    match = _WORD_RE.search(_CAMEL.sub(" ", text).lower())
    return match.group(1) if match else None


def is_efa_instance_type(value: Any) -> Any:
    """True/False for a known instance type name (``ml.p5.48xlarge`` or ``p5.48xlarge``), else UNKNOWN."""
    if not isinstance(value, str):
        return UNKNOWN
    parts = value.strip().lower().split(".")
    family = parts[1] if parts[0] == "ml" and len(parts) > 2 else parts[0]
    return family in EFA_FAMILIES


@dataclass(frozen=True)
class Attachment:
    """One training resource (or EFA interface) and the groups AWS evaluates together on it."""

    resource: str  # logical id the finding belongs on
    what: str  # "EFA network interface 0 of launch template", "instance group 'workers'", ...
    groups: Optional[tuple[GroupRef, ...]]  # None: the group list itself is unresolved
    unresolved_list: Optional[str]  # the list as written, when groups is None
    certain: bool  # the resource exists under this assignment (no undecided Condition)
    evidence: str  # "strong" | "weak"
    path: tuple[str | int, ...] = ("Properties",)

    @property
    def template_groups(self) -> tuple[str, ...]:
        return tuple(sorted({g.group for g in self.groups or () if g.group}))

    @property
    def other_groups(self) -> tuple[str, ...]:
        return tuple(g.describe() for g in self.groups or () if not g.group)

    def describe_groups(self) -> str:
        if self.groups is None:
            return f"groups {self.unresolved_list}"
        names = [g.describe() for g in self.groups]
        return ("group " if len(names) == 1 else "groups ") + ", ".join(names) if names else "no security group"


@dataclass(frozen=True)
class Placement:
    """Where one training resource runs: its subnets (for the one-AZ rule)."""

    resource: str
    what: str
    subnets: Optional[tuple[Any, ...]]  # resolved entries; None when unresolved
    efa: Any  # True / False / UNKNOWN: does it use EFA (instance type or interface)
    path: tuple[str | int, ...] = ("Properties",)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _groups_at(world: World, raw: Any) -> tuple[Optional[tuple[GroupRef, ...]], Optional[str]]:
    refs = group_list(world, raw)
    return (tuple(refs), None) if refs is not None else (None, describe_value(raw))


def _interfaces(world: World, raw_list: Any) -> Iterator[tuple[int, Mapping[str, Any], Any]]:
    """(index, interface as written, InterfaceType resolved) for each network interface."""
    entries = world.resolve(raw_list, shallow=True)
    for index, entry in enumerate(_as_list(entries)):
        entry = world.resolve(entry, shallow=True)
        if isinstance(entry, Mapping):
            yield index, entry, world.resolve(entry.get("InterfaceType"))


def _efa_interface_attachments(world: World) -> Iterator[Attachment]:
    for resource in world.of_type(INSTANCE, LAUNCH_TEMPLATE):
        certain = world.exists(resource) is True
        if resource.type == INSTANCE:
            base: tuple[str | int, ...] = ("Properties", "NetworkInterfaces")
            raw_list, group_key, kind = resource.properties.get("NetworkInterfaces"), "GroupSet", "instance"
        else:
            data = world.resolve(resource.properties.get("LaunchTemplateData"), shallow=True)
            raw_list = data.get("NetworkInterfaces") if isinstance(data, Mapping) else None
            base, group_key, kind = ("Properties", "LaunchTemplateData", "NetworkInterfaces"), "Groups", "launch template"
        seen: set[tuple[str, ...]] = set()
        for index, entry, interface_type in _interfaces(world, raw_list):
            if not (isinstance(interface_type, str) and interface_type.lower() in EFA_INTERFACE_TYPES):
                continue
            if group_key in entry:
                groups, unresolved = _groups_at(world, entry[group_key])
            else:  # no groups on the interface: the VPC's default group, which the template does not show
                groups, unresolved = None, "(none on the interface: the VPC's default security group)"
            key = tuple(g.describe() for g in groups) if groups is not None else (str(unresolved),)
            if key in seen:
                continue  # the same groups on every EFA interface: one attachment
            seen.add(key)
            yield Attachment(resource.logical_id, f"EFA network interface {index} of {kind} {resource.logical_id}",
                             groups, unresolved, certain, "strong", (*base, index))


def _hyperpod_groups(world: World) -> Iterator[tuple[Resource, str, Mapping[str, Any], Any, tuple[str | int, ...], bool]]:
    """(cluster, instance group name, VpcConfig as written, instance type, path, overridden)."""
    for cluster in world.of_type(CLUSTER):
        cluster_vpc = world.resolve(cluster.properties.get("VpcConfig"), shallow=True)
        for key in ("InstanceGroups", "RestrictedInstanceGroups"):
            for index, group in enumerate(_as_list(world.resolve(cluster.properties.get(key), shallow=True))):
                group = world.resolve(group, shallow=True)
                if not isinstance(group, Mapping):
                    continue
                name = world.resolve(group.get("InstanceGroupName"))
                label = name if isinstance(name, str) else f"#{index}"
                override = world.resolve(group.get("OverrideVpcConfig"), shallow=True)
                instance_type = world.resolve(group.get("InstanceType"))
                if isinstance(override, Mapping):
                    yield cluster, label, override, instance_type, ("Properties", key, index, "OverrideVpcConfig"), True
                elif isinstance(cluster_vpc, Mapping):
                    yield cluster, label, cluster_vpc, instance_type, ("Properties", "VpcConfig"), False


def _hyperpod_attachments(world: World) -> Iterator[Attachment]:
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for cluster, label, vpc, _type, path, _ in _hyperpod_groups(world):
        groups, unresolved = _groups_at(world, vpc.get("SecurityGroupIds"))
        key = (cluster.logical_id, tuple(g.describe() for g in groups) if groups is not None else (str(unresolved),))
        if key in seen:
            continue
        seen.add(key)
        yield Attachment(cluster.logical_id, f"HyperPod instance group {label} of {cluster.logical_id}",
                         groups, unresolved, world.exists(cluster) is True, "strong", path)


def _training_job_configs(world: World) -> Iterator[tuple[Resource, Mapping[str, Any], Mapping[str, Any], tuple[str | int, ...]]]:
    """(resource, the CreateTrainingJob-shaped mapping, its VpcConfig, path) anywhere in properties."""
    for resource in world.model.resources.values():
        if world.exists(resource) is False or resource.type in (CLUSTER, SECURITY_GROUP):
            continue
        stack: list[tuple[Any, tuple[str | int, ...]]] = [(resource.properties, ("Properties",))]
        while stack:
            node, path = stack.pop()
            if isinstance(node, Mapping):
                if "VpcConfig" in node and ("ResourceConfig" in node or "AlgorithmSpecification" in node):
                    vpc = world.resolve(node["VpcConfig"], shallow=True)
                    if isinstance(vpc, Mapping):
                        yield resource, node, vpc, (*path, "VpcConfig")
                        continue
                stack.extend((v, (*path, str(k))) for k, v in node.items())
            elif isinstance(node, list):
                stack.extend((v, (*path, i)) for i, v in enumerate(node))


def _training_job_attachments(world: World) -> Iterator[Attachment]:
    for resource, _job, vpc, path in _training_job_configs(world):
        groups, unresolved = _groups_at(world, vpc.get("SecurityGroupIds"))
        yield Attachment(resource.logical_id, f"training job VpcConfig in {resource.logical_id}", groups, unresolved,
                         world.exists(resource) is True, "strong", path)


def lustre_file_systems(world: World) -> list[Resource]:
    """FSx file systems whose FileSystemType is LUSTRE (and that may exist)."""
    out = []
    for fs in world.of_type(FILE_SYSTEM):
        fs_type = world.get(fs, "FileSystemType")
        if isinstance(fs_type, str) and fs_type.upper() == "LUSTRE":
            out.append(fs)
    return out


def _efa_file_system_attachments(world: World) -> Iterator[Attachment]:
    for fs in lustre_file_systems(world):
        if to_bool(world.get(fs, "LustreConfiguration", "EfaEnabled")) is True:
            groups, unresolved = _groups_at(world, fs.properties.get("SecurityGroupIds"))
            yield Attachment(fs.logical_id, f"EFA-enabled file system {fs.logical_id}", groups, unresolved,
                             world.exists(fs) is True, "strong", ("Properties", "SecurityGroupIds"))


def is_training_tagged(world: World, resource: Resource) -> bool:
    value = world.tags(resource).get(ROLE_TAG)
    return isinstance(value, str) and value.strip().lower() == ROLE_TRAINING


def _tagged_group_attachments(world: World) -> Iterator[Attachment]:
    for group in world.of_type(SECURITY_GROUP):
        if is_training_tagged(world, group):
            yield Attachment(group.logical_id, f"group {group.logical_id} (tagged {ROLE_TAG}={ROLE_TRAINING})",
                             (GroupRef(group.logical_id),), None, world.exists(group) is True, "strong")


def _name_evidence(world: World, group: Resource) -> Optional[str]:
    texts = [("GroupName", world.get(group, "GroupName")), ("GroupDescription", world.get(group, "GroupDescription"))]
    texts += [(f"tag {key}", value) for key, value in world.tags(group).items()]
    for where, text in texts:
        word = mentioned_word(text)
        if word:
            return f"its {where} mentions '{word}'"
    return None


def _weak_attachments(world: World, strong: list[Attachment]) -> Iterator[Attachment]:
    judged = {g for a in strong for g in a.template_groups}
    for group in world.of_type(SECURITY_GROUP):
        if group.logical_id in judged:
            continue
        why = _name_evidence(world, group)
        if why:
            yield Attachment(group.logical_id, f"group {group.logical_id} ({why})", (GroupRef(group.logical_id),), None,
                             world.exists(group) is True, "weak")


def attachments(world: World) -> list[Attachment]:
    """Every training attachment under this assignment: strong ones, then weak ones."""

    def build(w: World) -> list[Attachment]:
        strong = [
            *_efa_interface_attachments(w),
            *_hyperpod_attachments(w),
            *_efa_file_system_attachments(w),
            *_training_job_attachments(w),
            *_tagged_group_attachments(w),
        ]
        return strong + list(_weak_attachments(w, strong))

    result: list[Attachment] = world.memo("attachments", build)
    return result


def placements(world: World) -> list[Placement]:
    """Training resources that must sit in one AZ: HyperPod instance groups of an EFA type,
    and training jobs the template describes."""
    out: list[Placement] = []
    for cluster, label, vpc, instance_type, path, _ in _hyperpod_groups(world):
        if world.exists(cluster) is not True:
            continue
        subnets = world.resolve(vpc.get("Subnets"))
        out.append(Placement(cluster.logical_id, f"HyperPod instance group {label} ({instance_type if isinstance(instance_type, str) else '?'})",
                             tuple(subnets) if isinstance(subnets, list) else None, is_efa_instance_type(instance_type), (*path, "Subnets")))
    for resource, job, vpc, path in _training_job_configs(world):
        if world.exists(resource) is not True:
            continue
        subnets = world.resolve(vpc.get("Subnets"))
        config = world.resolve(job.get("ResourceConfig"))
        instance_type = config.get("InstanceType") if isinstance(config, Mapping) else UNKNOWN
        out.append(Placement(resource.logical_id, f"training job in {resource.logical_id}",
                             tuple(subnets) if isinstance(subnets, list) else None, True if instance_type is UNKNOWN else is_efa_instance_type(instance_type),
                             (*path, "Subnets")))
    return out


def training_subnets(world: World, *, include_file_systems: bool, efa_only: bool = False) -> dict[str, str]:
    """Logical id of a template subnet -> why it is a training subnet.

    Tagged ``smddp:role=training``; listed by a HyperPod instance group or a training job;
    the subnet of an EC2 instance with an EFA interface; and (``include_file_systems``) the
    subnet of a Lustre file system (SageMaker mounts it only from its own AZ).
    """
    subnets = {s.logical_id for s in world.of_type(SUBNET)}
    reasons: dict[str, str] = {}

    def add(ref: Any, reason: str) -> None:
        name = ref.logical_id if isinstance(ref, ResourceRef) else getattr(ref, "logical_id", None)
        if name in subnets and name not in reasons:
            reasons[name] = reason

    for subnet in world.of_type(SUBNET):
        if is_training_tagged(world, subnet):
            add(subnet, f"tagged {ROLE_TAG}={ROLE_TRAINING}")
    for placement in placements(world):
        if efa_only and placement.efa is not True:
            continue
        for ref in placement.subnets or ():
            add(ref, f"used by {placement.what}")
    for instance in world.of_type(INSTANCE):
        for _index, entry, interface_type in _interfaces(world, instance.properties.get("NetworkInterfaces")):
            if isinstance(interface_type, str) and interface_type.lower() in EFA_INTERFACE_TYPES:
                add(world.resolve(entry.get("SubnetId")), f"EFA interface of {instance.logical_id}")
    if include_file_systems:
        for fs in lustre_file_systems(world):
            if world.exists(fs) is True:
                for ref in _as_list(world.get(fs, "SubnetIds")):
                    add(ref, f"holds file system {fs.logical_id}")
    return reasons


__all__ = [
    "Attachment",
    "Placement",
    "attachments",
    "is_efa_instance_type",
    "is_training_tagged",
    "lustre_file_systems",
    "mentioned_word",
    "placements",
    "security_groups",
    "training_subnets",
]
