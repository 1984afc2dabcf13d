"""What a template hands to training that runs outside it: *launch targets*.

Training jobs are not CloudFormation resources. The most common SageMaker template builds a
VPC, a subnet, a security group and a file system, and hands the subnet and the group to
whoever starts the jobs (a notebook, a pipeline, another team's launcher): through an
``Output`` (with or without an ``Export``) or an ``AWS::SSM::Parameter`` whose value is the
group or subnet. Nothing in the template *carries* the group, so the rules that read
attachments (:mod:`.training`) never see it, yet the guide's stall at initialization is
exactly this template's failure.

A group or subnet is a **launch target** when both are true:

1. the template hands it out: an Output's ``Value``, or an SSM parameter's ``Value``, names
   it (``Ref``/``GetAtt``, alone or inside ``Fn::Join``/``Fn::If``/a list);
2. the template says what for: the output's key, ``Description`` or export name, the SSM
   parameter's name or description, or the resource's own description, name or ``Name`` tag
   names training, EFA, HyperPod or SMDDP, or names SageMaker and no role that runs no
   collectives (Studio, a notebook, a domain, inference, processing ...). A text that names
   endpoints never counts: an endpoint group serves the training subnet, it is not the
   training group.

Handed out without such words (a generic VPC exporting its groups), or named but not handed
out: not a launch target (the name-only note SMDDP-SG3 still applies). Both pieces of
evidence are kept, so a finding can say exactly why it judged the group.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any, Iterator, Optional

from smddp_infra.rules.groups import SECURITY_GROUP, resources_mentioned
from smddp_infra.rules.model import Resource, TemplateModel, World

SUBNET = "AWS::EC2::Subnet"
SSM_PARAMETER = "AWS::SSM::Parameter"

#: Words that say a hand-out is for training compute (whole words, after camel-case splitting).
_TRAINING = re.compile(r"(?<![a-z0-9])(training|efa|hyperpod|hyper pod|smddp)(?![a-z0-9])")
#: SageMaker alone names the service, not what runs: it counts when nothing else is named.
_SAGEMAKER = re.compile(r"(?<![a-z0-9])(sagemaker|sage maker)(?![a-z0-9])")
#: A group for endpoints serves whatever trains: never a training group, whatever else it says.
_ENDPOINTS = re.compile(r"(?<![a-z0-9])(endpoints?|vpce|privatelink)(?![a-z0-9])")
#: Roles that run no collectives: they outweigh a bare "SageMaker", not an explicit "training".
_OTHER_PURPOSE = re.compile(
    r"(?<![a-z0-9])(studio|notebooks?|domains?|inference|hosting|processing|lambda|bastion|"
    r"alb|elb|nat|databases?|rds|redis|canvas|mlflow)(?![a-z0-9])"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def purpose_word(text: Any) -> Optional[str]:
    """The training word ``text`` names (``training``, ``efa``, ``hyperpod``, ``smddp``, or
    ``sagemaker`` when it names no role that runs no collectives), else None. Endpoints never
    count: their group serves the training subnet, it is not the training group."""
    if not isinstance(text, str) or not text.strip():
        return None
    spaced = _CAMEL.sub(" ", text).lower().replace("_", " ").replace("-", " ").replace("/", " ")
    lowered = text.lower()
    if _ENDPOINTS.search(spaced):
        return None
    match = _TRAINING.search(spaced) or _TRAINING.search(lowered)
    if match is not None:
        return match.group(1).replace(" ", "")
    match = _SAGEMAKER.search(spaced) or _SAGEMAKER.search(lowered)
    if match is not None and not _OTHER_PURPOSE.search(spaced):
        return match.group(1).replace(" ", "")
    return None


@dataclass(frozen=True)
class HandOut:
    """One place the template hands a group or subnet out, in words a reader can check."""

    where: str  # "output SecurityGroupId (export 'fsx-sg')", "SSM parameter /ml/sg"
    words: tuple[str, ...]  # the texts of this hand-out (key, description, export or parameter name)


@dataclass(frozen=True)
class LaunchTarget:
    """A group or subnet the template hands to training outside it, and why we think so."""

    resource: str  # logical id
    type: str
    handouts: tuple[HandOut, ...]
    purpose: str  # "described as 'use in SageMaker networking config'", "whose name names 'training'"

    def evidence(self) -> str:
        """Both pieces of evidence, for a finding's message."""
        places = ", ".join(h.where for h in self.handouts)
        return f"handed out as {places}, {self.purpose}"


def _named(model: TemplateModel, value: Any, types: tuple[str, ...]) -> list[str]:
    """Logical ids of template groups and subnets named anywhere in ``value`` (also in Fn::Sub)."""
    return resources_mentioned(model, value, types, attributes=(None, "GroupId", "SubnetId"), in_sub=True)


def _text(world: World, value: Any) -> Optional[str]:
    resolved = world.resolve(value, partial=True)
    return resolved if isinstance(resolved, str) else None


def _handouts(world: World) -> Iterator[tuple[str, HandOut]]:
    """(logical id handed out, how) for every Output and SSM parameter of the template."""
    model = world.model
    types = (SECURITY_GROUP, SUBNET)
    outputs = model.template.get("Outputs")
    for key, output in (outputs.items() if isinstance(outputs, Mapping) else ()):
        if not isinstance(output, Mapping):
            continue
        condition = output.get("Condition")
        if isinstance(condition, str) and world.condition(condition) is False:
            continue
        export = output.get("Export")
        export_name = _text(world, export.get("Name")) if isinstance(export, Mapping) else None
        description = _text(world, output.get("Description"))
        where = f"output {key}" + (f" (export '{export_name}')" if export_name else "")
        words = tuple(w for w in (str(key), description, export_name) if w)
        for name in _named(model, output.get("Value"), types):
            yield name, HandOut(where, words)
    for parameter in world.of_type(SSM_PARAMETER):
        name_text = _text(world, parameter.properties.get("Name"))
        description = _text(world, parameter.properties.get("Description"))
        where = f"SSM parameter {name_text or parameter.logical_id}"
        words = tuple(w for w in (parameter.logical_id, name_text, description) if w)
        for name in _named(model, parameter.properties.get("Value"), types):
            yield name, HandOut(where, words)


def _own_words(world: World, resource: Resource) -> list[tuple[str, Any]]:
    if resource.type == SECURITY_GROUP:
        texts: list[tuple[str, Any]] = [("GroupDescription", world.get(resource, "GroupDescription")),
                                        ("GroupName", world.get(resource, "GroupName"))]
    else:
        texts = []
    name_tag = world.tags(resource).get("Name")
    texts.append(("Name tag", name_tag))
    return texts


def _purpose(world: World, resource: Resource, handouts: list[HandOut]) -> Optional[str]:
    """Where the template says the hand-out is for training (the first text that says it)."""
    for handout in handouts:
        for text in handout.words:
            word = purpose_word(text)
            if word:
                return f"whose name names '{word}'" if text in handout.where else f"described as '{text}'"
    for where, text in _own_words(world, resource):
        word = purpose_word(text)
        if word:
            return f"its {where} '{text}' names '{word}'"
    return None


def launch_targets(world: World) -> dict[str, LaunchTarget]:
    """Logical id -> launch target, for the groups and subnets this template hands to training
    outside it (built once per assignment)."""

    def build(w: World) -> dict[str, LaunchTarget]:
        handed: dict[str, list[HandOut]] = {}
        for name, handout in _handouts(w):
            if handout not in handed.setdefault(name, []):
                handed[name].append(handout)
        out: dict[str, LaunchTarget] = {}
        for name, handouts in handed.items():
            resource = w.resources[name]
            if w.exists(resource) is False:
                continue
            purpose = _purpose(w, resource, handouts)
            if purpose:
                out[name] = LaunchTarget(name, resource.type, tuple(handouts), purpose)
        return out

    result: dict[str, LaunchTarget] = world.memo("launch_targets", build)
    return result


__all__ = ["HandOut", "LaunchTarget", "launch_targets", "purpose_word"]
