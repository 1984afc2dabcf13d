"""Which security groups and subnets of a template carry training traffic.

The EFA and network rules only apply to training resources, so this is where judgement
lives. A security group is a *training group* when any of these holds (first match is
the reason reported):

1. it is tagged ``smddp:role`` = ``training`` (what this project's constructs write);
2. a SageMaker training resource lists it in its VPC settings (see
   :data:`TRAINING_VPC_SETTINGS`);
3. an EFA-enabled FSx for Lustre file system (``LustreConfiguration.EfaEnabled``) uses it:
   EFA clients and the file system share the group;
4. its ``GroupName``, ``GroupDescription`` or a tag value mentions EFA or training
   instances, as whole words after camel-case splitting: ``efa``, ``smddp``,
   ``hyperpod``, an EFA instance family from the catalog (``p4d``, ``p5``, ``trn1`` ...),
   or "training" followed by instance(s)/node(s)/job(s)/cluster(s)/worker(s)/host(s).
   A bare "training" is not enough: "HTTPS from the training subnet" describes an
   endpoint group, not one the instances use.

A subnet is a *training subnet* when it is tagged ``smddp:role`` = ``training``, listed in
a SageMaker training resource's VPC settings, or (``include_file_systems``) holds an FSx
for Lustre file system: SageMaker can only mount the file system from its own AZ, so
jobs that read it are launched into that subnet in practice.

Of the SageMaker types with VPC settings in cfn-lint's bundled schemas, only
``AWS::SageMaker::Cluster`` (HyperPod, including instance-group ``OverrideVpcConfig``)
and ``AWS::SageMaker::ProcessingJob`` run multi-node jobs. Inference (Model,
EndpointConfig), monitoring job definitions, Studio (Domain, UserProfile,
NotebookInstance) and Workforce do not use EFA collectives, so their groups are left out
on purpose: requiring self rules there would be noise. Training jobs themselves have no
CloudFormation type; they take their subnets and groups from stack outputs.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from smddp_infra.rules.groups import SecurityGroups
from smddp_infra.rules.model import NO_VALUE, UNKNOWN, Resource, TemplateModel, to_bool
from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES

ROLE_TAG = "smddp:role"
ROLE_TRAINING = "training"
SUBNET = "AWS::EC2::Subnet"
FILE_SYSTEM = "AWS::FSx::FileSystem"

#: SageMaker resource type -> property paths of its VPC settings ("*" walks a list).
TRAINING_VPC_SETTINGS: dict[str, tuple[tuple[str, ...], ...]] = {
    "AWS::SageMaker::Cluster": (
        ("VpcConfig",),
        ("InstanceGroups", "*", "OverrideVpcConfig"),
        ("RestrictedInstanceGroups", "*", "OverrideVpcConfig"),
    ),
    "AWS::SageMaker::ProcessingJob": (("NetworkConfig", "VpcConfig"),),
}

_FAMILIES = sorted({name.split(".")[1] for name in EFA_INSTANCE_TYPES})
_WORDS = ("efa", "smddp", "hyperpod", *_FAMILIES)
#: "training" alone is too loose ("HTTPS from the training subnet" describes an endpoint
#: group); it counts when it names compute: training instances/nodes/jobs/cluster/workers.
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


def _walk(node: Any, path: tuple[str, ...]) -> Iterator[Any]:
    if not path:
        yield node
        return
    head, rest = path[0], path[1:]
    if head == "*":
        if isinstance(node, list):
            for item in node:
                yield from _walk(item, rest)
    elif isinstance(node, dict) and head in node:
        yield from _walk(node[head], rest)


def training_vpc_configs(model: TemplateModel) -> Iterator[tuple[Resource, dict[str, Any]]]:
    """(SageMaker resource, resolved VpcConfig dict) for every training resource's VPC settings."""
    for resource_type, paths in TRAINING_VPC_SETTINGS.items():
        for resource in model.of_type(resource_type):
            props = model.resolve(resource.properties)
            for path in paths:
                for config in _walk(props, path):
                    if isinstance(config, dict):
                        yield resource, config


def _ids(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def is_training_tagged(model: TemplateModel, resource: Resource) -> bool:
    value = model.tags(resource).get(ROLE_TAG)
    return isinstance(value, str) and value.strip().lower() == ROLE_TRAINING


def lustre_file_systems(model: TemplateModel) -> list[Resource]:
    """FSx file systems whose FileSystemType is LUSTRE (or decided by the template to be)."""
    out = []
    for fs in model.of_type(FILE_SYSTEM):
        fs_type = model.get(fs, "FileSystemType")
        if isinstance(fs_type, str) and fs_type.upper() == "LUSTRE":
            out.append(fs)
    return out


def training_groups(model: TemplateModel, groups: SecurityGroups) -> dict[str, str]:
    """Logical id -> why it is a training group."""
    reasons: dict[str, str] = {}

    def add(group: str | None, reason: str) -> None:
        if group is not None and group not in reasons:
            reasons[group] = reason

    for name, group in groups.groups.items():
        if is_training_tagged(model, group):
            add(name, f"tagged {ROLE_TAG}={ROLE_TRAINING}")
    for resource, config in training_vpc_configs(model):
        for ref in _ids(config.get("SecurityGroupIds")):
            add(groups.group_of(ref), f"used by {resource.type} {resource.logical_id}")
    for fs in lustre_file_systems(model):
        if to_bool(model.get(fs, "LustreConfiguration", "EfaEnabled")) is True:
            for ref in _ids(model.get(fs, "SecurityGroupIds")):
                add(groups.group_of(ref), f"on EFA-enabled file system {fs.logical_id}")
    for name, group in groups.groups.items():
        if name in reasons:
            continue
        texts = [("GroupName", model.get(group, "GroupName")), ("GroupDescription", model.get(group, "GroupDescription"))]
        texts += [(f"tag {key}", value) for key, value in model.tags(group).items()]
        for where, text in texts:
            word = mentioned_word(text) if text not in (UNKNOWN, NO_VALUE) else None
            if word:
                add(name, f"its {where} mentions '{word}'")
                break
    return reasons


def training_subnets(model: TemplateModel, *, include_file_systems: bool) -> dict[str, str]:
    """Logical id of a template subnet -> why it is a training subnet."""
    subnets = {s.logical_id for s in model.of_type(SUBNET)}
    reasons: dict[str, str] = {}

    def add(ref: Any, reason: str) -> None:
        name = getattr(ref, "logical_id", None)
        if name in subnets and name not in reasons:
            reasons[name] = reason

    for subnet in model.of_type(SUBNET):
        if is_training_tagged(model, subnet):
            add(subnet, f"tagged {ROLE_TAG}={ROLE_TRAINING}")
    for resource, config in training_vpc_configs(model):
        for ref in _ids(config.get("Subnets")):
            add(ref, f"used by {resource.type} {resource.logical_id}")
    if include_file_systems:
        for fs in lustre_file_systems(model):
            for ref in _ids(model.get(fs, "SubnetIds")):
                add(ref, f"holds file system {fs.logical_id}")
    return reasons
