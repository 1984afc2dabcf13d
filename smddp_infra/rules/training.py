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

**Names** (information only, SMDDP-SG3): a group whose ``GroupName``, ``GroupDescription`` or
tag value mentions EFA or training instances as whole words after camel-case splitting
(``efa``, ``smddp``, ``hyperpod``, an EFA instance family such as ``p4d``/``p5``/``trn1``,
or "training" followed by instance(s)/node(s)/job(s)/cluster(s)/worker(s)/host(s)), that
nothing in the template carries (under any assignment: a group carried by a file system, an
endpoint or an EFA interface has the role of what carries it), whose text names no other
role (``fsx``, ``lustre``, ``endpoint`` ...) and whose rules do not say it serves a file
system or endpoints (only TCP rules on the Lustre or HTTPS ports). A bare "training" is not
enough. Names never outweigh rules and attachments.

Inference (Model, EndpointConfig), monitoring, Studio and processing resources do not run
EFA collectives; their groups are left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Mapping  # isinstance on typing.Mapping is several times slower
from typing import Any, Iterator, Optional

from smddp_infra.contract import TAG_ROLE, TAG_ROLE_TRAINING
from smddp_infra.rules.groups import (
    EGRESS,
    INGRESS,
    SECURITY_GROUP,
    GroupRef,
    group_list,
    security_groups,
    template_groups_mentioned,
)
from smddp_infra.rules.model import UNKNOWN, Resource, ResourceRef, TemplateModel, World, describe_value, list_or_empty, to_bool
from smddp_infra.rules import pcluster
from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES

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


def _family(instance_type: str) -> str:
    """``p5`` of ``p5.48xlarge`` and of ``ml.p5.48xlarge`` (SageMaker's names carry ``ml.``)."""
    parts = instance_type.strip().lower().split(".")
    return parts[1] if parts[0] == "ml" and len(parts) > 2 else parts[0]


def is_efa_instance_type(value: Any) -> Any:
    """True/False for a known instance type name (``ml.p5.48xlarge`` or ``p5.48xlarge``), else UNKNOWN."""
    if not isinstance(value, str):
        return UNKNOWN
    return _family(value) in EFA_FAMILIES


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
    sagemaker: bool = True  # SageMaker places it (a training job, HyperPod); False: ParallelCluster


def _listed(world: World, raw: Any) -> Optional[tuple[Any, ...]]:
    """``raw`` resolved, as a tuple of its entries when it is a list (None: the template does not decide one)."""
    value = world.resolve(raw)
    return tuple(value) if isinstance(value, list) else None


def _groups_at(world: World, raw: Any) -> tuple[Optional[tuple[GroupRef, ...]], Optional[str]]:
    refs = group_list(world, raw)
    return (tuple(refs), None) if refs is not None else (None, describe_value(raw))


def _is_efa(interface_type: Any) -> bool:
    """An ``InterfaceType`` (resolved) of an EFA interface: ``efa`` or ``efa-only``, any case."""
    return isinstance(interface_type, str) and interface_type.lower() in EFA_INTERFACE_TYPES


def _interfaces(world: World, raw_list: Any) -> Iterator[tuple[int, Mapping[str, Any], Any]]:
    """(index, interface as written, InterfaceType resolved) for each network interface."""
    entries = world.resolve(raw_list, shallow=True)
    for index, entry in enumerate(list_or_empty(entries)):
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
            if not _is_efa(interface_type):
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


def hyperpod_groups(
    world: World,
) -> Iterator[tuple[Resource, str, Mapping[str, Any], Any, tuple[str | int, ...], bool, Mapping[str, Any]]]:
    """(cluster, instance group name, VpcConfig as written, instance type, path, overridden, the group as written)."""
    for cluster in world.of_type(CLUSTER):
        cluster_vpc = world.resolve(cluster.properties.get("VpcConfig"), shallow=True)
        for key in ("InstanceGroups", "RestrictedInstanceGroups"):
            for index, group in enumerate(list_or_empty(world.resolve(cluster.properties.get(key), shallow=True))):
                group = world.resolve(group, shallow=True)
                if not isinstance(group, Mapping):
                    continue
                name = world.resolve(group.get("InstanceGroupName"))
                label = name if isinstance(name, str) else f"#{index}"
                override = world.resolve(group.get("OverrideVpcConfig"), shallow=True)
                instance_type = world.resolve(group.get("InstanceType"))
                if isinstance(override, Mapping):
                    yield cluster, label, override, instance_type, ("Properties", key, index, "OverrideVpcConfig"), True, group
                elif isinstance(cluster_vpc, Mapping):
                    yield cluster, label, cluster_vpc, instance_type, ("Properties", "VpcConfig"), False, group


def _hyperpod_attachments(world: World) -> Iterator[Attachment]:
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for cluster, label, vpc, _type, path, *_ in hyperpod_groups(world):
        groups, unresolved = _groups_at(world, vpc.get("SecurityGroupIds"))
        key = (cluster.logical_id, tuple(g.describe() for g in groups) if groups is not None else (str(unresolved),))
        if key in seen:
            continue
        seen.add(key)
        yield Attachment(cluster.logical_id, f"HyperPod instance group {label} of {cluster.logical_id}",
                         groups, unresolved, world.exists(cluster) is True, "strong", path)


def _training_job_sites(model: TemplateModel) -> list[tuple[Resource, Mapping[str, Any], tuple[str | int, ...]]]:
    """Where the template writes a CreateTrainingJob-shaped mapping (a ``VpcConfig`` beside
    ``ResourceConfig`` or ``AlgorithmSpecification``): found once per template, by shape."""

    def build(m: TemplateModel) -> list[tuple[Resource, Mapping[str, Any], tuple[str | int, ...]]]:
        sites = []
        for resource in m.resources.values():
            if resource.type in (CLUSTER, SECURITY_GROUP):
                continue
            stack: list[tuple[Any, tuple[str | int, ...]]] = [(resource.properties, ("Properties",))]
            while stack:
                node, path = stack.pop()
                if isinstance(node, Mapping):
                    if "VpcConfig" in node and ("ResourceConfig" in node or "AlgorithmSpecification" in node):
                        sites.append((resource, node, path))
                        continue
                    stack.extend((v, (*path, str(k))) for k, v in node.items())
                elif isinstance(node, list):
                    stack.extend((v, (*path, i)) for i, v in enumerate(node))
        return sites

    result: list[tuple[Resource, Mapping[str, Any], tuple[str | int, ...]]] = model.memo("training_job_sites", build)
    return result


def _training_job_configs(world: World) -> Iterator[tuple[Resource, Mapping[str, Any], Mapping[str, Any], tuple[str | int, ...]]]:
    """(resource, the CreateTrainingJob-shaped mapping, its VpcConfig, path) anywhere in properties."""
    for resource, node, path in _training_job_sites(world.model):
        if world.exists(resource) is False:
            continue
        vpc = world.resolve(node["VpcConfig"], shallow=True)
        if isinstance(vpc, Mapping):
            yield resource, node, vpc, (*path, "VpcConfig")


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


def _pcluster_attachments(world: World) -> Iterator[Attachment]:
    """EFA queues of ParallelCluster custom resources (see :mod:`.pcluster`); a cluster whose
    configuration the template does not state is an attachment with unresolved groups, so
    SG1/SG2 say "not judged" instead of passing in silence."""
    for resource in world.model.resources.values():
        if not pcluster.is_cluster(resource) or world.exists(resource) is False:
            continue
        why = pcluster.unread_configuration(world, resource)
        if why is not None:
            yield Attachment(resource.logical_id, f"ParallelCluster cluster {resource.logical_id}", None, why, False, "strong",
                             ("Properties", "ClusterConfiguration"))
    for queue in pcluster.queues(world):
        if queue.efa is False:
            continue
        networking = queue.networking
        if "SecurityGroups" in networking:
            groups, unresolved = _groups_at(world, networking.get("SecurityGroups"))
        else:
            groups, unresolved = (GroupRef(None, pcluster.MANAGED_GROUP),), None
        if groups is not None and "AdditionalSecurityGroups" in networking:
            extra, extra_unresolved = _groups_at(world, networking.get("AdditionalSecurityGroups"))
            if extra is None:
                groups, unresolved = None, extra_unresolved
            else:
                groups = groups + extra
        certain = world.exists(queue.cluster) is True and queue.efa is True
        yield Attachment(queue.cluster.logical_id, f"ParallelCluster queue {queue.name} (EFA) of {queue.cluster.logical_id}",
                         groups, unresolved, certain, "strong", queue.path)


def is_training_tagged(world: World, resource: Resource) -> bool:
    value = world.tags(resource).get(TAG_ROLE)
    return isinstance(value, str) and value.strip().lower() == TAG_ROLE_TRAINING


def _tagged_group_attachments(world: World) -> Iterator[Attachment]:
    for group in world.of_type(SECURITY_GROUP):
        if is_training_tagged(world, group):
            yield Attachment(group.logical_id, f"group {group.logical_id} (tagged {TAG_ROLE}={TAG_ROLE_TRAINING})",
                             (GroupRef(group.logical_id),), None, world.exists(group) is True, "strong")


_OTHER_ROLE_WORDS = re.compile(r"(?<![a-z0-9])(fsx|lustre|file[ _-]?systems?|storage|endpoints?|vpce|nat|alb|elb|bastion)(?![a-z0-9])")
#: TCP ports whose rules say what a group is for when nothing attaches it: Lustre, HTTPS.
_SERVICE_PORTS = ((988, 988), (1018, 1023), (443, 443))


def _name_evidence(world: World, group: Resource) -> Optional[str]:
    """What the group's name, description or tags say about training, if they say it alone.

    A text that also names another role (``hyperpod-fsx-sg``, "endpoints for the training
    subnet") says nothing about training: names are the weakest evidence there is."""
    texts = [("GroupName", world.get(group, "GroupName")), ("GroupDescription", world.get(group, "GroupDescription"))]
    texts += [(f"tag {key}", value) for key, value in world.tags(group).items()]
    for where, text in texts:
        word = mentioned_word(text)
        if word and not _OTHER_ROLE_WORDS.search(_CAMEL.sub(" ", str(text)).lower()):
            return f"its {where} mentions '{word}'"
    return None


def attached_groups(model: TemplateModel) -> frozenset[str]:
    """Template groups that some resource of the template carries (under any assignment):
    their role comes from what carries them, never from their names."""

    def build(m: TemplateModel) -> frozenset[str]:
        carriers = (r for r in m.resources.values() if r.type not in (SECURITY_GROUP, INGRESS, EGRESS))
        return frozenset(g for r in carriers for g in template_groups_mentioned(m, r.properties))

    result: frozenset[str] = model.memo("attached_groups", build)
    return result


def _rules_say_service(world: World, group: str) -> bool:
    """Its explicit ingress rules are all TCP rules on Lustre or HTTPS ports: a file system's
    or an endpoint's group, whatever its name says."""
    rules = [p for p in security_groups(world).of(group, "ingress") if not p.implicit]
    return bool(rules) and all(
        p.protocol == "tcp" and p.from_port is not None and p.to_port is not None
        and any(low <= p.from_port and p.to_port <= high for low, high in _SERVICE_PORTS)
        for p in rules
    )


def _weak_attachments(world: World, strong: list[Attachment]) -> Iterator[Attachment]:
    """Groups that only a name suggests are training groups: nothing in the template carries
    them (under any assignment) and their rules do not say they serve a file system or
    endpoints. Informational only (SMDDP-SG3): the instances that would use them are elsewhere."""
    judged = {g for a in strong for g in a.template_groups} | attached_groups(world.model)
    for group in world.of_type(SECURITY_GROUP):
        if group.logical_id in judged or _rules_say_service(world, group.logical_id):
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
            *_pcluster_attachments(w),
            *_tagged_group_attachments(w),
        ]
        return strong + list(_weak_attachments(w, strong))

    result: list[Attachment] = world.memo("attachments", build)
    return result


def placements(world: World) -> list[Placement]:
    """Training resources that must sit in one AZ: HyperPod instance groups of an EFA type,
    and training jobs the template describes (built once per assignment)."""
    result: list[Placement] = world.memo("placements", _placements)
    return result


def _placements(world: World) -> list[Placement]:
    out: list[Placement] = []
    for cluster, label, vpc, instance_type, path, *_ in hyperpod_groups(world):
        if world.exists(cluster) is not True:
            continue
        out.append(Placement(cluster.logical_id, f"HyperPod instance group {label} ({instance_type if isinstance(instance_type, str) else '?'})",
                             _listed(world, vpc.get("Subnets")), is_efa_instance_type(instance_type), (*path, "Subnets")))
    for resource, job, vpc, path in _training_job_configs(world):
        if world.exists(resource) is not True:
            continue
        config = world.resolve(job.get("ResourceConfig"))
        instance_type = config.get("InstanceType") if isinstance(config, Mapping) else UNKNOWN
        out.append(Placement(resource.logical_id, f"training job in {resource.logical_id}", _listed(world, vpc.get("Subnets")),
                             True if instance_type is UNKNOWN else is_efa_instance_type(instance_type), (*path, "Subnets")))
    for queue in pcluster.queues(world):
        if world.exists(queue.cluster) is not True or queue.efa is False:
            continue
        out.append(Placement(queue.cluster.logical_id, f"ParallelCluster queue {queue.name} (EFA)",
                             _listed(world, queue.networking.get("SubnetIds")), queue.efa, (*queue.path, "SubnetIds"),
                             sagemaker=False))
    return out


#: Accelerated (GPU, Trainium, Gaudi) instance families: ``p3``..``p6e-gb200``, ``g4dn``..``g6e``,
#: ``gr6``, ``trn1``..``trn2u``, ``dl1``/``dl2q``. A node of one of these trains (or serves a
#: model); a subnet that holds one is a training subnet for the route rules.
_ACCELERATED_FAMILY = re.compile(r"^(?:p\d|g\d|gr\d|trn\d|dl\d)[a-z0-9-]*$")
ASG = "AWS::AutoScaling::AutoScalingGroup"
PCS_NODE_GROUP = "AWS::PCS::ComputeNodeGroup"
BATCH_ENVIRONMENT = "AWS::Batch::ComputeEnvironment"
EKS_NODE_GROUP = "AWS::EKS::Nodegroup"


def is_accelerated_instance_type(value: Any) -> Any:
    """True/False for an instance type name (``p5.48xlarge``, ``ml.g5.12xlarge``), else UNKNOWN."""
    if not isinstance(value, str) or "." not in value:
        return UNKNOWN
    return bool(_ACCELERATED_FAMILY.match(_family(value)))


@dataclass(frozen=True)
class TrainingSubnet:
    """Why a subnet is a training subnet, and what the evidence says about it.

    ``sagemaker``: SageMaker places training here (a training job's VpcConfig, a HyperPod
    instance group, the project's ``smddp:role=training`` tag): AWS documents what such a
    subnet needs (a route to S3). ``efa``: EFA traffic runs here (an EFA interface, an EFA
    instance type of HyperPod or a training job, the tag).
    """

    reason: str
    sagemaker: bool
    efa: bool


@dataclass(frozen=True)
class _Compute:
    """One EC2-launched compute resource: where it runs and what its nodes are."""

    resource: Resource
    what: str
    subnets: tuple[Any, ...]
    efa: bool  # an EFA interface (its own or its launch template's)
    accelerated: bool  # an accelerated instance type (its own or its launch template's)


def _instance_types(world: World, raw: Any) -> list[Any]:
    value = world.resolve(raw)
    return value if isinstance(value, list) else [value]


def _template_traits(world: World, lt: Optional[Resource]) -> tuple[bool, bool]:
    """(EFA interface?, accelerated instance type?) of a launch template."""
    if lt is None:
        return False, False
    data = world.resolve(lt.properties.get("LaunchTemplateData"), shallow=True)
    if not isinstance(data, Mapping):
        return False, False
    efa = any(_is_efa(t) for _, _, t in _interfaces(world, data.get("NetworkInterfaces")))
    return efa, is_accelerated_instance_type(world.resolve(data.get("InstanceType"))) is True


def _launch_template(world: World, spec: Any, *keys: str) -> Optional[Resource]:
    spec = world.resolve(spec, shallow=True)
    if not isinstance(spec, Mapping):
        return None
    for key in keys:
        if key in spec:
            return world.resource_of(spec[key], LAUNCH_TEMPLATE)
    return None


def _compute(world: World) -> Iterator[_Compute]:
    """EC2 instances, Auto Scaling groups, PCS compute node groups, Batch compute environments
    and EKS node groups of the template, with their subnets and what their nodes are."""

    def accelerated(types: list[Any]) -> bool:
        return any(is_accelerated_instance_type(t) is True for t in types)

    for instance in world.of_type(INSTANCE):
        interfaces = list(_interfaces(world, instance.properties.get("NetworkInterfaces")))
        efa = any(_is_efa(t) for _, _, t in interfaces)
        lt_efa, lt_acc = _template_traits(world, _launch_template(world, instance.properties.get("LaunchTemplate"), "LaunchTemplateId", "LaunchTemplateName"))
        subnets = [world.resolve(instance.properties.get("SubnetId"))] + [world.resolve(e.get("SubnetId")) for _, e, _ in interfaces]
        yield _Compute(instance, f"instance {instance.logical_id}", tuple(subnets), efa or lt_efa,
                       lt_acc or accelerated([world.resolve(instance.properties.get("InstanceType"))]))
    for lt in world.of_type(LAUNCH_TEMPLATE):  # interfaces that name their subnet themselves
        data = world.resolve(lt.properties.get("LaunchTemplateData"), shallow=True)
        interfaces = list(_interfaces(world, data.get("NetworkInterfaces"))) if isinstance(data, Mapping) else []
        named = tuple(world.resolve(e.get("SubnetId")) for _, e, _ in interfaces if "SubnetId" in e)
        if named:
            efa, acc = _template_traits(world, lt)
            yield _Compute(lt, f"launch template {lt.logical_id}", named, efa, acc)
    for asg in world.of_type(ASG):
        props = asg.properties
        mixed = world.resolve(props.get("MixedInstancesPolicy"), shallow=True)
        spec: Any = props.get("LaunchTemplate")
        types: list[Any] = []
        if isinstance(mixed, Mapping):
            lt_part = world.resolve(mixed.get("LaunchTemplate"), shallow=True)
            if isinstance(lt_part, Mapping):
                spec = lt_part.get("LaunchTemplateSpecification")
                overrides = world.resolve(lt_part.get("Overrides"))
                types = [o.get("InstanceType") for o in overrides if isinstance(o, Mapping)] if isinstance(overrides, list) else []
        efa, acc = _template_traits(world, _launch_template(world, spec, "LaunchTemplateId", "LaunchTemplateName"))
        yield _Compute(asg, f"Auto Scaling group {asg.logical_id}", _listed(world, props.get("VPCZoneIdentifier")) or (),
                       efa, acc or accelerated(types))
    for group in world.of_type(PCS_NODE_GROUP):
        props = group.properties
        efa, acc = _template_traits(world, _launch_template(world, props.get("CustomLaunchTemplate"), "TemplateId", "Id"))
        configs = world.resolve(props.get("InstanceConfigs"))
        types = [c.get("InstanceType") for c in configs if isinstance(c, Mapping)] if isinstance(configs, list) else []
        yield _Compute(group, f"PCS compute node group {group.logical_id}", _listed(world, props.get("SubnetIds")) or (),
                       efa, acc or accelerated(types))
    for environment in world.of_type(BATCH_ENVIRONMENT):
        resources = world.resolve(environment.properties.get("ComputeResources"), shallow=True)
        if not isinstance(resources, Mapping):
            continue
        efa, acc = _template_traits(world, _launch_template(world, resources.get("LaunchTemplate"), "LaunchTemplateId", "LaunchTemplateName"))
        yield _Compute(environment, f"Batch compute environment {environment.logical_id}",
                       _listed(world, resources.get("Subnets")) or (), efa,
                       acc or accelerated(_instance_types(world, resources.get("InstanceTypes"))))
    for node_group in world.of_type(EKS_NODE_GROUP):
        props = node_group.properties
        efa, acc = _template_traits(world, _launch_template(world, props.get("LaunchTemplate"), "Id", "Name"))
        yield _Compute(node_group, f"EKS node group {node_group.logical_id}", _listed(world, props.get("Subnets")) or (),
                       efa, acc or accelerated(_instance_types(world, props.get("InstanceTypes"))))


def training_subnets(world: World, *, efa_only: bool = False) -> dict[str, TrainingSubnet]:
    """Logical id of a template subnet -> why it is a training subnet (evidence, never names).

    Something trains in it: tagged ``smddp:role=training`` (this project's constructs);
    listed by a HyperPod instance group or a training job the template describes; the
    subnet of an EC2 instance, Auto Scaling group, PCS compute node group, Batch compute
    environment or EKS node group whose nodes have an EFA interface or an accelerated
    instance type. A subnet that only holds a file system, endpoints or a NAT gateway is
    not one: FSx interfaces do not call AWS APIs. ``efa_only`` keeps the subnets where EFA
    traffic runs (for the one-AZ rule).
    """

    cache: dict[bool, dict[str, TrainingSubnet]] = world.memo("training_subnets", lambda w: {})
    if efa_only in cache:
        return cache[efa_only]
    subnets = {s.logical_id for s in world.of_type(SUBNET)}
    reasons: dict[str, TrainingSubnet] = {}

    def add(ref: Any, reason: str, *, sagemaker: bool, efa: bool) -> None:
        name = ref.logical_id if isinstance(ref, (ResourceRef, Resource)) else None
        if isinstance(ref, ResourceRef) and ref.attribute not in (None, "SubnetId"):
            return
        if name in subnets and name not in reasons:
            reasons[name] = TrainingSubnet(reason, sagemaker, efa)

    for subnet in world.of_type(SUBNET):
        if is_training_tagged(world, subnet):
            add(subnet, f"tagged {TAG_ROLE}={TAG_ROLE_TRAINING}", sagemaker=True, efa=True)
    for placement in placements(world):
        if efa_only and placement.efa is not True:
            continue
        for ref in placement.subnets or ():
            add(ref, f"used by {placement.what}", sagemaker=placement.sagemaker, efa=placement.efa is True)
    for compute in _compute(world):
        if world.exists(compute.resource) is not True or not (compute.efa or (compute.accelerated and not efa_only)):
            continue
        what = "EFA" if compute.efa else "accelerated-instance"
        for ref in compute.subnets:
            add(ref, f"subnet of {what} {compute.what}", sagemaker=False, efa=compute.efa)
    cache[efa_only] = reasons
    return reasons


__all__ = [
    "Attachment",
    "Placement",
    "attached_groups",
    "attachments",
    "TrainingSubnet",
    "is_accelerated_instance_type",
    "is_efa_instance_type",
    "is_training_tagged",
    "lustre_file_systems",
    "mentioned_word",
    "placements",
    "security_groups",
    "training_subnets",
]
