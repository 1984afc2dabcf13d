"""Run every rule over one template, once per parameter assignment: the single entry point
the three faces share.

Findings of all assignments are merged: one finding per distinct problem (rule, resource,
message) naming the assignments that trigger it, reduced to the parameters that matter
("when LustreVersion=2.12 and DeploymentType=PERSISTENT_2"). No summary line hides
different reasons; ``Finding.when`` carries the same in ``--json``.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from smddp_infra.rules import efa_rules, fsx_key_rules, fsx_rules, network_rules, unresolved
from smddp_infra.rules.findings import Finding, Rule
from smddp_infra.rules.model import TemplateModel

#: Every rule, in report order. Ids are stable: they are what users acknowledge.
RULES: tuple[Rule, ...] = efa_rules.RULES + fsx_rules.RULES + fsx_key_rules.RULES + network_rules.RULES + unresolved.RULES
RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}

#: Resource types the rules read, and the top-level properties they read (None: all).
#: Only parameters reaching these (directly or through Conditions) are enumerated.
READ_PROPERTIES: dict[str, Optional[tuple[str, ...]]] = {
    "AWS::EC2::SecurityGroup": None,
    "AWS::EC2::SecurityGroupIngress": None,
    "AWS::EC2::SecurityGroupEgress": None,
    "AWS::EC2::Instance": ("NetworkInterfaces", "SecurityGroupIds", "SubnetId"),
    "AWS::EC2::LaunchTemplate": ("LaunchTemplateData",),
    "AWS::SageMaker::Cluster": ("VpcConfig", "InstanceGroups", "RestrictedInstanceGroups"),
    "AWS::FSx::FileSystem": None,
    "AWS::EC2::Subnet": ("AvailabilityZone", "AvailabilityZoneId", "VpcId", "CidrBlock", "Tags"),
    "AWS::EC2::VPC": ("CidrBlock",),
    "AWS::EC2::SubnetRouteTableAssociation": None,
    "AWS::EC2::Route": None,
    "AWS::EC2::VPCEndpoint": None,
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
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Mapping):
            if "VpcConfig" in current and ("ResourceConfig" in current or "AlgorithmSpecification" in current):
                return True
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return False


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
    merged: dict[tuple[str, str, str], tuple[Finding, list[int]]] = {}
    for index, assignment in enumerate(scenarios.assignments):
        world = model.world(assignment)
        for rule in chosen:
            for finding in rule.check(world):
                key = (finding.rule_id, finding.resource, finding.message)
                if key not in merged:
                    merged[key] = (finding, [index])
                elif merged[key][1][-1] != index:
                    merged[key][1].append(index)
    out = []
    for finding, indexes in merged.values():
        when, text = describe_when([scenarios.assignments[i] for i in indexes], scenarios.assignments, scenarios.parameters, model)
        out.append(finding.with_when(when, text))
    return out


def _value_text(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def describe_when(
    triggers: list[Mapping[str, Any]],
    judged: tuple[Mapping[str, Any], ...],
    parameters: tuple[str, ...],
    model: TemplateModel,
) -> tuple[tuple[Mapping[str, Any], ...], str]:
    """The assignments that trigger a finding, reduced to the parameters that matter, in words.

    A parameter matters when changing it (alone) turns a triggering assignment into a
    judged one that does not trigger. Returns ((), "") when every judged assignment triggers.
    """
    if len(triggers) == len(judged) or not parameters:
        return (), ""

    def key(a: Mapping[str, Any]) -> tuple[str, ...]:
        return tuple(_value_text(a.get(p)) for p in parameters)

    judged_keys = {key(a) for a in judged}
    trigger_keys = {key(a) for a in triggers}
    values = {p: [] for p in parameters}  # type: dict[str, list[Any]]
    for a in judged:
        for p in parameters:
            if a.get(p) not in values[p]:
                values[p].append(a.get(p))
    matters = []
    for i, p in enumerate(parameters):
        for t in triggers:
            tk = key(t)
            if any((alt := tk[:i] + (_value_text(v),) + tk[i + 1:]) in judged_keys and alt not in trigger_keys for v in values[p]):
                matters.append(p)
                break
    if not matters:  # bounded enumeration: name each trigger by how it differs from the defaults
        defaults = {p: model.default_of(p) for p in parameters}
        diffs = []
        for t in triggers:
            diff = {p: t.get(p) for p in parameters if _value_text(t.get(p)) != _value_text(defaults[p])}
            if diff not in diffs:
                diffs.append(diff)
        if diffs == [{}]:
            return (), "with the parameter defaults"
        return tuple(diffs), "; or ".join(_conjunction(d) if d else "with the parameter defaults" for d in diffs)
    projections: list[dict[str, Any]] = []
    for t in triggers:
        projection = {p: t.get(p) for p in matters}
        if projection not in projections:
            projections.append(projection)
    per_param = {p: [] for p in matters}  # type: dict[str, list[Any]]
    for projection in projections:
        for p in matters:
            if projection[p] not in per_param[p]:
                per_param[p].append(projection[p])
    size = 1
    for p in matters:
        size *= len(per_param[p])
    if size == len(projections):  # a product: "when A is x or y and B=z"
        parts = []
        for p in matters:
            vals = per_param[p]
            parts.append(f"{p}={_value_text(vals[0])}" if len(vals) == 1 else f"{p} is " + " or ".join(_value_text(v) for v in vals))
        return tuple(projections), "when " + " and ".join(parts)
    return tuple(projections), "; or ".join(_conjunction(p) for p in projections)


def _conjunction(assignment: Mapping[str, Any]) -> str:
    return "when " + " and ".join(f"{k}={_value_text(v)}" for k, v in assignment.items())
