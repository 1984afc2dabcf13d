"""Run every rule over one template, once per parameter assignment: the single entry point
the three faces share.

Findings of all assignments are merged into one finding per problem: same rule, same
resource, same *cause*. The cause is the message with the values of the varied parameters
taken out, so "PerUnitStorageThroughput is not settable for SCRATCH_2, got 125" and "..., got
250" under two values of one parameter are one problem, not two. The merged finding names
the smallest condition that produces it: a parameter whose every value fails the same way
is dropped from ``when`` and said as "for any X"; the parameters that matter list their
failing values compactly ("when Capacity is 3600 (default) or 10800 and Throughput=125"),
default values first and marked. The message shown is the one the template's defaults
produce when they trigger it. ``--json`` keeps every triggering assignment
(``assignments``, defaults first, ``default``: whether the defaults trigger it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Mapping  # isinstance on typing.Mapping is several times slower
from typing import Any, Iterable, Optional, Sequence

from smddp_infra.rules import (dns_rules, efa_rules, eks_rules, fsx_client_rules, fsx_key_rules, fsx_rules, governance_rules,
                               launch_rules, nacl_rules, network_rules, retention_rules, unresolved)
from smddp_infra.rules.findings import Finding, Rule
from smddp_infra.rules.model import TemplateModel, distinct, is_known, mappings_in

#: Every rule, in report order. Ids are stable: they are what users acknowledge.
RULES: tuple[Rule, ...] = (
    efa_rules.RULES + launch_rules.RULES[:1] + fsx_rules.RULES + fsx_client_rules.RULES + fsx_key_rules.RULES + network_rules.RULES
    + launch_rules.RULES[1:] + nacl_rules.RULES + dns_rules.RULES + retention_rules.RULES + eks_rules.RULES
    + governance_rules.RULES + unresolved.RULES
)
RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}

#: Resource types the rules read, and the top-level properties they read (None: all).
#: Only parameters reaching these (directly or through Conditions) are enumerated.
READ_PROPERTIES: dict[str, Optional[tuple[str, ...]]] = {
    "AWS::EC2::SecurityGroup": None,
    "AWS::EC2::SecurityGroupIngress": None,
    "AWS::EC2::SecurityGroupEgress": None,
    "AWS::EC2::Instance": ("NetworkInterfaces", "SecurityGroupIds", "SubnetId"),
    "AWS::EC2::LaunchTemplate": ("LaunchTemplateData",),
    "AWS::SageMaker::Cluster": ("VpcConfig", "InstanceGroups", "RestrictedInstanceGroups", "Orchestrator"),
    "AWS::EKS::Cluster": ("AccessConfig", "ResourcesVpcConfig"),
    "AWS::SageMaker::ComputeQuota": ("ClusterArn", "ComputeQuotaConfig", "ComputeQuotaTarget"),
    "AWS::SageMaker::ClusterSchedulerConfig": ("ClusterArn",),
    "AWS::FSx::FileSystem": None,
    "AWS::EC2::Subnet": ("AvailabilityZone", "AvailabilityZoneId", "VpcId", "CidrBlock", "Tags"),
    "AWS::EC2::VPC": ("CidrBlock", "EnableDnsSupport", "EnableDnsHostnames"),
    "AWS::EC2::SubnetRouteTableAssociation": None,
    "AWS::EC2::Route": None,
    "AWS::EC2::VPCEndpoint": None,
    "AWS::SSM::Parameter": ("Name", "Value", "Description"),
    "AWS::EC2::NetworkAcl": None,
    "AWS::EC2::NetworkAclEntry": None,
    "AWS::EC2::SubnetNetworkAclAssociation": None,
}


def relevant_parameters(model: TemplateModel) -> set[str]:
    """Parameters that can change what a rule sees (see READ_PROPERTIES)."""

    def build(m: TemplateModel) -> set[str]:
        names: set[str] = set()
        for resource in m.resources.values():
            keys = READ_PROPERTIES.get(resource.type, ())
            if resource.type not in READ_PROPERTIES:
                if not _mentions_training_job(resource.properties):
                    continue
                keys = None
            body: Any = resource.properties if keys is None else {k: resource.properties.get(k) for k in keys}
            names |= m.parameters_in(body, through_conditions=True)
            if resource.condition:
                names |= m.parameters_in({"Condition": resource.condition}, through_conditions=True)
        return names

    result: set[str] = model.memo("relevant_parameters", build)
    return result


def _mentions_training_job(node: Any) -> bool:
    """A CreateTrainingJob-shaped mapping, or a ParallelCluster configuration (rules/pcluster.py), at any depth."""
    return any(("VpcConfig" in m and ("ResourceConfig" in m or "AlgorithmSpecification" in m)) or "ClusterConfiguration" in m
               for m in mappings_in(node))


@dataclass
class _Problem:
    """One cause of one rule on one resource, across the assignments that trigger it."""

    first: Finding
    indexes: list[int] = field(default_factory=list)
    findings: dict[int, Finding] = field(default_factory=dict)


def check_template(
    template: Mapping[str, Any] | TemplateModel,
    *,
    rules: Optional[Iterable[Rule]] = None,
    region: Optional[str] = None,
) -> list[Finding]:
    """All findings for a template dict (any source: CDK synth, YAML, JSON).

    Pure Python, no aws_cdk: the template is read once into a :class:`TemplateModel`;
    each assignment's derived indexes (security groups, routes) are shared by the rules.
    """
    model = template if isinstance(template, TemplateModel) else TemplateModel(template, region=region)
    chosen = tuple(RULES if rules is None else rules)
    scenarios = model.scenarios(relevant_parameters(model))
    parameters = scenarios.parameters
    by_message: dict[tuple[str, str, str], _Problem] = {}
    for index, assignment in enumerate(scenarios.assignments):
        world = model.world(assignment)
        for rule in chosen:
            for finding in rule.check(world):
                problem = by_message.setdefault((finding.rule_id, finding.resource, finding.message), _Problem(finding))
                if not problem.indexes or problem.indexes[-1] != index:
                    problem.indexes.append(index)
                    problem.findings[index] = finding
    # One problem per cause: messages that differ only by the values of varied parameters.
    # A message whose text stays the same while a parameter's value changes only mentions
    # that value by coincidence (a literal of another resource): it is its own cause.
    merged: dict[tuple[str, str, str], _Problem] = {}
    for (rule_id, resource, message), problem in by_message.items():
        cause = message
        if parameters:
            causes = {_cause(message, scenarios.assignments[i], parameters) for i in problem.indexes}
            cause = causes.pop() if len(causes) == 1 else message
        into = merged.setdefault((rule_id, resource, cause), _Problem(problem.first))
        into.indexes.extend(problem.indexes)
        into.findings.update(problem.findings)
    if not parameters:
        return [problem.first for problem in merged.values()]
    defaults = {p: model.default_of(p) for p in parameters}
    default_key = _key(defaults, parameters)
    default_index = next((i for i, a in enumerate(scenarios.assignments) if _key(a, parameters) == default_key), None)
    out = []
    for (_rule, _resource, cause), problem in merged.items():
        ordered = sorted(set(problem.indexes), key=lambda i: (i != default_index, i))  # the defaults first
        shown = problem.findings[ordered[0]]
        triggers = [scenarios.assignments[i] for i in ordered]
        mentioned = tuple(p for p in parameters if _SLOT.format(p) in cause)
        when, text = describe_when(triggers, scenarios.assignments, parameters, model, mentioned=mentioned,
                                   shown=scenarios.assignments[ordered[0]])
        out.append(shown.with_when(when, text, assignments=tuple(dict(a) for a in triggers), default=ordered[0] == default_index))
    return out


#: How a parameter's value is marked in a cause (NUL cannot occur in a message).
_SLOT = "\x00{}\x00"


def _cause(message: str, assignment: Mapping[str, Any], parameters: tuple[str, ...]) -> str:
    """The message with each varied parameter's value (as a whole token) replaced by a slot:
    findings that differ only by those values share a cause."""
    text = message
    for name in sorted(parameters, key=lambda p: -len(_value_text(assignment.get(p)))):
        value = assignment.get(name)
        if isinstance(value, (list, tuple)) or not is_known(value) or value is None:
            continue
        forms = {_value_text(value)}
        number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        if number is not None and float(number).is_integer() and abs(number) >= 1000:
            forms.add(f"{int(number):,}")  # messages write capacities with thousands separators
        forms.discard("")
        if forms:
            pattern = r"(?<![\w.])(?:" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)) + r")(?![\w]|\.\d)"
            text = re.sub(pattern, _SLOT.format(name).replace("\\", "\\\\"), text)
    return text


def _key(assignment: Mapping[str, Any], parameters: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_value_text(assignment.get(p)) for p in parameters)


def _value_text(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def describe_when(
    triggers: Sequence[Mapping[str, Any]],
    judged: tuple[Mapping[str, Any], ...],
    parameters: tuple[str, ...],
    model: TemplateModel,
    *,
    mentioned: tuple[str, ...] = (),
    shown: Optional[Mapping[str, Any]] = None,
) -> tuple[tuple[Mapping[str, Any], ...], str]:
    """The assignments that trigger a finding, reduced to the parameters that matter, in words.

    A parameter *matters* when changing it (alone) turns a triggering assignment into a judged
    one that does not trigger. A parameter the message mentions (``mentioned``) that does not
    matter fails with every value: it is said as "for any X". Values are listed default first,
    the default marked. Returns ((), "") when every judged assignment triggers and the message
    names no varied parameter.
    """
    if not parameters:
        return (), ""
    defaults = {p: model.default_of(p) for p in parameters}
    values = {p: distinct(a.get(p) for a in judged) for p in parameters}

    def shown_value(p: str, v: Any) -> str:
        return f"{_value_text(v)} (default)" if _value_text(v) == _value_text(defaults[p]) else _value_text(v)

    every = len(triggers) == len(judged)
    judged_keys = {_key(a, parameters) for a in judged}
    trigger_keys = {_key(a, parameters) for a in triggers}
    matters: list[str] = []
    if not every:
        for i, p in enumerate(parameters):
            for t in triggers:
                tk = _key(t, parameters)
                if any((alt := tk[:i] + (_value_text(v),) + tk[i + 1:]) in judged_keys and alt not in trigger_keys for v in values[p]):
                    matters.append(p)
                    break
    anys = [p for p in mentioned if p not in matters and len(values[p]) > 1]
    any_text = ""
    if anys:
        parts = [f"{p} (all {len(values[p])} values; shown: {_value_text((shown or defaults).get(p))})" for p in anys]
        any_text = "for any " + " and any ".join(parts)
    if every:
        return (), any_text
    if not matters:  # bounded enumeration: name each trigger by how it differs from the defaults
        diffs = _bounded_diffs(triggers, parameters, defaults)
        if not diffs:
            return (), _join(any_text, "with the parameter defaults")
        text = "; or ".join(_conjunction(d, shown_value) if d else "with the parameter defaults" for d in diffs)
        return tuple(d for d in diffs if d), _join(any_text, text)
    projections = distinct({p: t.get(p) for p in matters} for t in triggers)  # triggers come defaults first
    per_param = {p: distinct(projection[p] for projection in projections) for p in matters}
    size = 1
    for p in matters:
        size *= len(per_param[p])
    if size == len(projections):  # a product: "when A is x or y and B=z"
        parts = []
        for p in matters:
            vals = sorted(per_param[p], key=lambda v: _value_text(v) != _value_text(defaults[p]))
            parts.append(f"{p}={shown_value(p, vals[0])}" if len(vals) == 1 else f"{p} is " + " or ".join(shown_value(p, v) for v in vals))
        return tuple(projections), _join(any_text, "when " + " and ".join(parts))
    return tuple(projections), _join(any_text, "; or ".join(_conjunction(p, shown_value) for p in projections))


def _bounded_diffs(triggers: Sequence[Mapping[str, Any]], parameters: tuple[str, ...], defaults: Mapping[str, Any]) -> list[dict[str, Any]]:
    diffs = distinct({p: t.get(p) for p in parameters if _value_text(t.get(p)) != _value_text(defaults[p])} for t in triggers)
    return [] if diffs == [{}] else diffs


def _join(any_text: str, when_text: str) -> str:
    return f"{any_text} {when_text}" if any_text and when_text else any_text or when_text


def _conjunction(assignment: Mapping[str, Any], shown_value: Any) -> str:
    return "when " + " and ".join(f"{k}={shown_value(k, v)}" for k, v in assignment.items())
