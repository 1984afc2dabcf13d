"""The ONE read-only model of a CloudFormation template: parameters, conditions, resolution.

The rules (``smddp-infra check``, the cfn-lint plugin, ``SmddpChecks``) and the review pack
read templates through this module and :mod:`smddp_infra.rules.groups`, so a reviewer's
summary and the checks cannot disagree.

Templates come from CDK synth output (long-form intrinsics), hand-written YAML read by
cfn-lint's decoder (short-form tags already turned into ``{"Ref": ...}``), or anything in
between. Values become plain Python where the template alone decides them and
:data:`UNKNOWN` where it does not, so every rule can follow one principle: **report only
what the template proves; unknown is not missing.**

Scenarios. A template is judged once per *parameter assignment* (:class:`World`): the
defaults, and the ``AllowedValues`` of every parameter that feeds the resources the rules
read (directly or through ``Conditions``). At most :data:`MAX_ASSIGNMENTS` combinations are
tried; beyond that, the defaults plus one parameter varied at a time. Assignments the
template's own ``Rules:`` section rejects (an ``Assert`` that is false while its
``RuleCondition`` holds) are dropped: CloudFormation would refuse them before creating
anything.

Resolution under one assignment (CloudFormation semantics):

* ``Ref`` to a parameter: the assigned value, else its ``Default``, else UNKNOWN
  (``Number`` -> number, ``List<...>``/``CommaDelimitedList`` -> list; an SSM parameter
  type is always UNKNOWN: its Default names a parameter, not its value).
* ``Ref``/``Fn::GetAtt`` to a resource: :class:`ResourceRef`.
* ``Conditions`` (``Fn::Equals``, ``Fn::And``, ``Fn::Or``, ``Fn::Not``, ``Condition``)
  are evaluated in three-valued logic (True, False, UNKNOWN); ``Fn::If`` takes its branch,
  or is UNKNOWN when the condition is; ``AWS::NoValue`` removes the property or list entry.
* A resource with ``Condition:`` exists when the condition is True; under UNKNOWN it
  *may* exist (:meth:`World.exists` says which), and a rule never errs on a maybe.
* ``Fn::Select`` over ``Fn::GetAZs`` gives :class:`AzIndex`; ``Fn::Sub``/``Fn::Join``
  build strings (``partial=True`` turns unknown pieces into ``*``); ``Fn::FindInMap``
  looks up Mappings; ``Fn::ImportValue``, ``Fn::GetAZs`` alone, ``Fn::Cidr`` and anything
  unrecognised give UNKNOWN.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from collections.abc import Mapping  # isinstance on typing.Mapping is several times slower
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

__all__ = [
    "UNKNOWN",
    "NO_VALUE",
    "MAX_ASSIGNMENTS",
    "AzIndex",
    "ResourceRef",
    "Resource",
    "TemplateModel",
    "World",
    "describe_value",
    "distinct",
    "is_known",
    "list_or_empty",
    "mappings_in",
    "to_bool",
    "to_int",
]


class _Unknown:
    """The template alone does not decide this value."""

    _instance: Optional["_Unknown"] = None

    def __new__(cls) -> "_Unknown":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False


class _NoValue:
    """``AWS::NoValue``: the property is removed."""

    def __repr__(self) -> str:
        return "NO_VALUE"


UNKNOWN: Any = _Unknown()
NO_VALUE: Any = _NoValue()

#: Most parameter assignments judged per template. Beyond it: defaults, then each
#: parameter's other values one at a time (the rest at their defaults). docs/rules.md.
MAX_ASSIGNMENTS = 256


def is_known(value: Any) -> bool:
    return value is not UNKNOWN and value is not NO_VALUE


@dataclass(frozen=True)
class ResourceRef:
    """A resource of this template, named by ``Ref`` (attribute None) or ``Fn::GetAtt``."""

    logical_id: str
    attribute: Optional[str] = None


@dataclass(frozen=True)
class AzIndex:
    """``Fn::Select [index, Fn::GetAZs region]``: the index-th AZ of the stack's region."""

    index: int


@dataclass(frozen=True)
class Resource:
    logical_id: str
    type: str
    properties: Mapping[str, Any]
    condition: Optional[str] = None


_PSEUDO_PARAMETERS = {
    "AWS::AccountId",
    "AWS::NotificationARNs",
    "AWS::Partition",
    "AWS::Region",
    "AWS::StackId",
    "AWS::StackName",
    "AWS::URLSuffix",
}
_SUB_VARIABLE = re.compile(r"\$\{([^}!][^}]*)\}")
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def to_bool(value: Any) -> Any:
    """CloudFormation booleans: true/false, and the YAML 1.1 words (``Yes``/``No``) it accepts.

    Returns UNKNOWN for anything else, so a rule never guesses.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE:
        return True
    if isinstance(value, str) and value.strip().lower() in _FALSE:
        return False
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return UNKNOWN


def to_int(value: Any) -> Any:
    """A whole number from an int or a numeric string ("1200"), else UNKNOWN."""
    if isinstance(value, bool):
        return UNKNOWN
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return UNKNOWN
        return int(number) if number.is_integer() else UNKNOWN
    return UNKNOWN


def mappings_in(node: Any) -> Iterator[Mapping[str, Any]]:
    """Every mapping inside a template value, at any depth (the value itself included): for
    questions asked of a template's shape ("does this resource hold a training job?")."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Mapping):
            yield current
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)


def list_or_empty(value: Any) -> list[Any]:
    """A list value as is; [] for anything else (a mapping, a scalar, an undecided intrinsic),
    so a rule walking the entries of a property never guesses what a non-list holds."""
    return value if isinstance(value, list) else []


def distinct(items: Iterable[Any]) -> list[Any]:
    """``items`` without repeats, first occurrence first: for values a set cannot hold (the
    lists and mappings of parameter values and assignments) whose order is what a reader sees."""
    out: list[Any] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _convert_parameter_value(param_type: str, value: Any) -> Any:
    if param_type.startswith("AWS::SSM::Parameter::Value"):
        return UNKNOWN  # the Default names an SSM parameter, not its value
    if param_type.startswith("List<") or param_type == "CommaDelimitedList":
        items = value if isinstance(value, list) else [s.strip() for s in str(value).split(",")]
        if param_type == "List<Number>":
            return [_number(v) for v in items]
        return [str(v) for v in items]
    if param_type == "Number":
        return _number(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, (int, float)) else value


def _number(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    try:
        number = float(str(value))
    except ValueError:
        return UNKNOWN
    return int(number) if number.is_integer() else number


def _text(value: Any) -> Any:
    """The string CloudFormation compares in ``Fn::Equals`` (UNKNOWN stays UNKNOWN)."""
    if value is UNKNOWN or value is NO_VALUE:
        return UNKNOWN
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float, str)):
        return str(value)
    if isinstance(value, list):
        items = [_text(v) for v in value]
        return UNKNOWN if any(i is UNKNOWN for i in items) else tuple(items)
    if isinstance(value, ResourceRef):
        return value
    return UNKNOWN


def _fold(values: Iterable[Any], decisive: bool) -> Any:
    """``Fn::And`` (``decisive`` False) or ``Fn::Or`` (True) over three values: the decisive one
    wins at once, else UNKNOWN if any operand is unknown."""
    seen_unknown = False
    for v in values:
        if v is decisive:
            return decisive
        if v is not (not decisive):
            seen_unknown = True
    return UNKNOWN if seen_unknown else not decisive


#: The two-operand condition functions (``Fn::Equals``; the ``Rules`` section's list tests): which
#: operands must be lists (compared as tuples of text), and the test once both are decided.
_COMPARISONS: dict[str, tuple[tuple[bool, bool], Callable[[Any, Any], bool]]] = {
    "Fn::Equals": ((False, False), lambda left, right: left == right),
    "Fn::Contains": ((True, False), lambda items, value: value in items),
    "Fn::EachMemberEquals": ((True, False), lambda items, value: all(i == value for i in items)),
    "Fn::EachMemberIn": ((True, True), lambda items, allowed: all(i in allowed for i in items)),
}


def _not(value: Any) -> Any:
    return (not value) if isinstance(value, bool) else UNKNOWN


def describe_value(value: Any) -> str:
    """A short text for a value as the template writes it (for "could not resolve ..." notes)."""
    if isinstance(value, Mapping) and len(value) == 1:
        (key, arg), = value.items()
        if key == "Ref":
            return f"!Ref {arg}"
        if key == "Fn::GetAtt":
            return "!GetAtt " + (".".join(str(a) for a in arg) if isinstance(arg, list) else str(arg))
        if key == "Fn::ImportValue":
            inner = arg if isinstance(arg, str) else describe_value(arg)
            return f"!ImportValue {inner}"
        if key == "Fn::If" and isinstance(arg, list) and len(arg) == 3:
            return f"!If [{arg[0]}, {describe_value(arg[1])}, {describe_value(arg[2])}]"
        if key == "Fn::Select" and isinstance(arg, list) and len(arg) == 2:
            return f"!Select [{describe_value(arg[0])}, {describe_value(arg[1])}]"
        if key == "Fn::Sub":
            return f"!Sub {arg[0] if isinstance(arg, list) and arg else arg}"
        return f"{key.replace('Fn::', '!')} ..."
    if isinstance(value, list):
        return "[" + ", ".join(describe_value(v) for v in value) + "]"
    return str(value)


_Owner = TypeVar("_Owner", bound="_Memo")


class _Memo:
    """Derived indexes built once per owner (a template, or the template under one assignment)
    and shared by every rule: security groups, routes, attachments ..."""

    _memo: dict[str, Any]

    def memo(self: _Owner, key: str, factory: Callable[[_Owner], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = factory(self)
        return self._memo[key]


class TemplateModel(_Memo):
    """Index of one template: resources, parameters, conditions, Rules, Mappings.

    Build it once per template; :meth:`world` gives the view under one parameter
    assignment (cached), :meth:`scenarios` the assignments the rules judge.
    """

    def __init__(self, template: Mapping[str, Any], *, region: Optional[str] = None) -> None:
        if not isinstance(template, Mapping):
            raise TypeError(f"template must be a mapping, got {type(template).__name__}")
        self.template = template
        self.region = region
        raw_resources = template.get("Resources") or {}
        self.resources: dict[str, Resource] = {}
        self._by_type: dict[str, list[Resource]] = {}
        if isinstance(raw_resources, Mapping):
            for logical_id, body in raw_resources.items():
                if not isinstance(body, Mapping):
                    continue
                props = body.get("Properties") or {}
                condition = body.get("Condition")
                resource = Resource(
                    str(logical_id),
                    str(body.get("Type", "")),
                    props if isinstance(props, Mapping) else {},
                    condition if isinstance(condition, str) else None,
                )
                self.resources[resource.logical_id] = resource
                self._by_type.setdefault(resource.type, []).append(resource)
        self.parameters: dict[str, Mapping[str, Any]] = _mapping_of_mappings(template.get("Parameters"))
        mappings = template.get("Mappings") or {}
        self.mappings: Mapping[str, Any] = mappings if isinstance(mappings, Mapping) else {}
        conditions = template.get("Conditions") or {}
        self.conditions: Mapping[str, Any] = conditions if isinstance(conditions, Mapping) else {}
        self.template_rules: dict[str, Mapping[str, Any]] = _mapping_of_mappings(template.get("Rules"))
        self._worlds: dict[tuple[tuple[str, Any], ...], World] = {}
        self._memo: dict[str, Any] = {}
        self._scenarios: Optional[Scenarios] = None

    # -- resources ---------------------------------------------------------------------

    def of_type(self, *types: str) -> list[Resource]:
        if len(types) == 1:
            return list(self._by_type.get(types[0], ()))
        return [r for t in types for r in self._by_type.get(t, ())]

    # -- parameters --------------------------------------------------------------------

    def parameter_choices(self, name: str) -> list[Any]:
        """Every value a parameter can take: its AllowedValues, else its Default, else UNKNOWN."""
        spec = self.parameters.get(name, {})
        param_type = str(spec.get("Type", "String"))
        allowed = spec.get("AllowedValues")
        if isinstance(allowed, list) and allowed:
            return distinct(_convert_parameter_value(param_type, v) for v in allowed)
        if "Default" in spec:
            return [_convert_parameter_value(param_type, spec["Default"])]
        return [UNKNOWN]

    def default_of(self, name: str) -> Any:
        """The Default (typed), else the first AllowedValue, else UNKNOWN."""
        spec = self.parameters.get(name, {})
        if "Default" in spec:
            return _convert_parameter_value(str(spec.get("Type", "String")), spec["Default"])
        return self.parameter_choices(name)[0]

    def parameters_in(self, value: Any, *, through_conditions: bool = False) -> set[str]:
        """Names of template parameters a value depends on (Ref, Fn::Sub; optionally the
        parameters of every condition it names through ``Fn::If``/``Condition``)."""
        found: set[str] = set()
        seen_conditions: set[str] = set()
        stack = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, Mapping):
                if len(node) == 1:
                    (key, arg), = node.items()
                    if key == "Ref" and isinstance(arg, str):
                        if arg in self.parameters:
                            found.add(arg)
                        continue
                    if key == "Fn::Sub":
                        text = arg[0] if isinstance(arg, list) and arg else arg
                        if isinstance(text, str):
                            found.update(n.strip() for n in _SUB_VARIABLE.findall(text) if n.strip() in self.parameters)
                        if isinstance(arg, list) and len(arg) > 1:
                            stack.append(arg[1])
                        continue
                    if through_conditions and key in ("Fn::If", "Condition"):
                        name = arg[0] if key == "Fn::If" and isinstance(arg, list) and arg else arg
                        if isinstance(name, str) and name not in seen_conditions:
                            seen_conditions.add(name)
                            stack.append(self.conditions.get(name))
                        if key == "Fn::If" and isinstance(arg, list):
                            stack.extend(arg[1:])
                        continue
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        return found

    def assignments(self, names: Iterable[str]) -> Iterator[dict[str, Any]]:
        """The bounded assignments of ``names`` (see the module docstring), unfiltered.

        Yields one empty dict when there are no parameters, so callers always loop once.
        """
        for assignment in _bounded(sorted(names), self.parameter_choices, self.default_of)[0]:
            yield dict(assignment)

    def scenarios(self, relevant: Optional[Iterable[str]] = None) -> "Scenarios":
        """The assignments the rules judge: bounded, minus those the template's Rules reject.

        ``relevant`` limits enumeration to parameters that can change a finding (the
        engine passes those feeding the resource types its rules read).
        """
        if self._scenarios is not None and relevant is None:
            return self._scenarios
        names = sorted(n for n in (self.parameters if relevant is None else relevant) if len(self.parameter_choices(n)) > 1)
        combos, bounded = _bounded(names, self.parameter_choices, self.default_of)
        kept = [c for c in combos if not self.world(dict(c)).rejected_by_rules()]
        rejected = len(combos) - len(kept)
        result = Scenarios(tuple(dict(c) for c in kept), tuple(names), bounded, rejected)
        if relevant is None:
            self._scenarios = result
        return result

    def world(self, assignment: Optional[Mapping[str, Any]] = None) -> "World":
        key = tuple(sorted((assignment or {}).items(), key=lambda kv: kv[0]))
        try:
            hash(key)
        except TypeError:  # list-valued parameter: do not cache
            return World(self, dict(assignment or {}))
        world = self._worlds.get(key)
        if world is None:
            world = self._worlds[key] = World(self, dict(key))
        return world


@dataclass(frozen=True)
class Scenarios:
    """The assignments judged for one template, and how they were chosen."""

    assignments: tuple[dict[str, Any], ...]
    parameters: tuple[str, ...]  # the parameters that vary
    bounded: bool  # True: too many combinations, defaults + one parameter at a time
    rejected: int  # assignments the template's Rules section rejects


def _bounded(
    names: list[str], choices_of: Callable[[str], list[Any]], default_of: Callable[[str], Any]
) -> tuple[list[tuple[tuple[str, Any], ...]], bool]:
    choices = [choices_of(n) for n in names]
    total = 1
    for c in choices:
        total *= len(c)
        if total > MAX_ASSIGNMENTS:
            break
    if total <= MAX_ASSIGNMENTS:
        return [tuple(zip(names, combo)) for combo in itertools.product(*choices)], False
    base = {n: default_of(n) for n in names}
    out = [tuple(base.items())]
    for name, values in zip(names, choices):
        for value in values:
            if value != base[name]:
                out.append(tuple({**base, name: value}.items()))
    return out, True


def _mapping_of_mappings(value: Any) -> dict[str, Mapping[str, Any]]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, Mapping)}


class World(_Memo):
    """The template under one parameter assignment: conditions decided, intrinsics resolved."""

    def __init__(self, model: TemplateModel, assignment: dict[str, Any]) -> None:
        self.model = model
        self.assignment = assignment
        self.region = model.region
        self.resources = model.resources
        self.parameters = model.parameters
        self._conditions: dict[str, Any] = {}
        self._evaluating: set[str] = set()
        self._memo: dict[str, Any] = {}

    # -- conditions and existence ------------------------------------------------------

    def condition(self, name: Any) -> Any:
        """A named condition: True, False or UNKNOWN (also for a name not in Conditions)."""
        if not isinstance(name, str) or name not in self.model.conditions:
            return UNKNOWN
        if name in self._conditions:
            return self._conditions[name]
        if name in self._evaluating:  # a cycle: CloudFormation rejects it; we do not guess
            return UNKNOWN
        self._evaluating.add(name)
        value = self.evaluate(self.model.conditions[name])
        self._evaluating.discard(name)
        self._conditions[name] = value
        return value

    def evaluate(self, expr: Any) -> Any:
        """A condition (or Rules assertion) expression in three-valued logic."""
        if isinstance(expr, bool):
            return expr
        if isinstance(expr, str):
            return to_bool(expr)
        if not isinstance(expr, Mapping) or len(expr) != 1:
            return UNKNOWN
        (key, arg), = expr.items()
        if key == "Condition":
            return self.condition(arg)
        if key in _COMPARISONS and isinstance(arg, list) and len(arg) == 2:
            lists, test = _COMPARISONS[key]
            operands = [_text(self.resolve(a)) for a in arg]
            if any(o is UNKNOWN or (must_list and not isinstance(o, tuple)) for o, must_list in zip(operands, lists)):
                return UNKNOWN
            return test(*operands)
        if key == "Fn::Not" and isinstance(arg, list) and len(arg) == 1:
            return _not(self.evaluate(arg[0]))
        if key == "Fn::And" and isinstance(arg, list):
            return _fold((self.evaluate(a) for a in arg), False)
        if key == "Fn::Or" and isinstance(arg, list):
            return _fold((self.evaluate(a) for a in arg), True)
        if key == "Ref":
            return to_bool(self.resolve(expr))
        return UNKNOWN  # Fn::RefAll, Fn::ValueOf, Fn::ValueOfAll: need the account

    def rejected_by_rules(self) -> bool:
        """Does the template's ``Rules:`` section reject this assignment (an assertion proven false)?"""
        for rule in self.model.template_rules.values():
            if "RuleCondition" in rule and self.evaluate(rule["RuleCondition"]) is not True:
                continue
            assertions = rule.get("Assertions")
            for assertion in assertions if isinstance(assertions, list) else []:
                if isinstance(assertion, Mapping) and self.evaluate(assertion.get("Assert")) is False:
                    return True
        return False

    def exists(self, resource: Resource) -> Any:
        """True, False, or UNKNOWN (its ``Condition`` is undecided: it *may* exist)."""
        if resource.condition is None:
            return True
        return self.condition(resource.condition)

    def of_type(self, *types: str) -> list[Resource]:
        """Resources of these types that exist or may exist under this assignment."""
        return [r for r in self.model.of_type(*types) if self.exists(r) is not False]

    # -- property access ---------------------------------------------------------------

    def get(self, resource: Resource, *path: str) -> Any:
        """The resolved property at ``path`` (NO_VALUE when absent)."""
        node: Any = resource.properties
        for key in path:
            node = self.resolve(node, shallow=True)
            if not isinstance(node, Mapping) or key not in node:
                return NO_VALUE if isinstance(node, Mapping) or node is NO_VALUE else UNKNOWN
            node = node[key]
        return self.resolve(node)

    def raw(self, resource: Resource, *path: str) -> Any:
        """The property at ``path`` as written (None when absent)."""
        node: Any = resource.properties
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        return node

    def has(self, resource: Resource, *path: str) -> bool:
        return self.get(resource, *path) is not NO_VALUE

    def tags(self, resource: Resource) -> dict[str, Any]:
        """Resolved ``Tags`` as a dict (list-of-Key/Value form, or the map form some types use)."""
        raw = self.resolve(resource.properties.get("Tags"), shallow=True)
        out: dict[str, Any] = {}
        if isinstance(raw, list):
            for tag in raw:
                tag = self.resolve(tag, shallow=True)
                if isinstance(tag, Mapping):
                    key = self.resolve(tag.get("Key"))
                    if isinstance(key, str):
                        out[key] = self.resolve(tag.get("Value"))
        elif isinstance(raw, Mapping):
            for key, value in raw.items():
                out[str(key)] = self.resolve(value)
        return out

    def resource_of(self, value: Any, *types: str) -> Optional[Resource]:
        """The template resource a value refers to (``Ref``/``GetAtt``), if of one of ``types``."""
        resolved = self.resolve(value)
        if isinstance(resolved, ResourceRef):
            resource = self.resources.get(resolved.logical_id)
            if resource is not None and (not types or resource.type in types):
                return resource
        return None

    # -- intrinsic resolution ----------------------------------------------------------

    def resolve(self, value: Any, *, partial: bool = False, shallow: bool = False) -> Any:
        """Resolve intrinsics in ``value`` (see the module docstring for the semantics).

        ``shallow`` resolves only the top level (a mapping's values are left as written).
        """
        if isinstance(value, Mapping):
            if len(value) == 1:
                (key, arg), = value.items()
                if key == "Ref" or (isinstance(key, str) and key.startswith("Fn::")):
                    resolved = self._intrinsic(str(key), arg, partial)
                    if shallow or not isinstance(resolved, (Mapping, list)) or resolved is value:
                        return resolved
                    return self.resolve(resolved, partial=partial)
                if key == "Condition" and isinstance(arg, str):
                    return self.condition(arg)
            if shallow:
                return value
            out = {}
            for k, v in value.items():
                r = self.resolve(v, partial=partial)
                if r is not NO_VALUE:
                    out[k] = r
            return out
        if isinstance(value, list):
            if shallow:
                return value
            return [v for v in (self.resolve(x, partial=partial) for x in value) if v is not NO_VALUE]
        return value

    def _intrinsic(self, key: str, arg: Any, partial: bool) -> Any:
        if key == "Ref":
            return self._ref(arg, partial)
        if key == "Fn::If":
            if isinstance(arg, list) and len(arg) == 3:
                decided = self.condition(arg[0])
                if decided is True:
                    return self.resolve(arg[1], partial=partial, shallow=True)
                if decided is False:
                    return self.resolve(arg[2], partial=partial, shallow=True)
            return UNKNOWN
        if key == "Fn::GetAtt":
            if isinstance(arg, str):
                arg = arg.split(".", 1)
            if isinstance(arg, list) and len(arg) == 2 and isinstance(arg[0], str):
                attribute = self.resolve(arg[1])
                if arg[0] in self.resources and isinstance(attribute, str):
                    return ResourceRef(arg[0], attribute)
            return UNKNOWN
        if key == "Fn::Sub":
            return self._sub(arg, partial)
        if key == "Fn::Join":
            if isinstance(arg, list) and len(arg) == 2:
                delimiter = self.resolve(arg[0])
                items = self.resolve(arg[1], partial=partial)
                if isinstance(delimiter, str) and isinstance(items, list):
                    parts = [_as_text(i, partial) for i in items]
                    if all(p is not None for p in parts):
                        return delimiter.join(parts)  # type: ignore[arg-type]
            return UNKNOWN
        if key == "Fn::Select":
            if isinstance(arg, list) and len(arg) == 2:
                index = to_int(self.resolve(arg[0]))
                source = arg[1]
                if isinstance(source, Mapping) and set(source) == {"Fn::GetAZs"} and isinstance(index, int):
                    return AzIndex(index)
                items = self.resolve(source, partial=partial)
                if isinstance(index, int) and isinstance(items, list) and 0 <= index < len(items):
                    return items[index]
            return UNKNOWN
        if key == "Fn::Split":
            if isinstance(arg, list) and len(arg) == 2:
                delimiter = self.resolve(arg[0])
                text = self.resolve(arg[1])
                if isinstance(delimiter, str) and delimiter and isinstance(text, str):
                    return text.split(delimiter)
            return UNKNOWN
        if key == "Fn::FindInMap":
            if isinstance(arg, list) and len(arg) >= 3:
                keys = [self.resolve(a) for a in arg[:3]]
                if all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in keys):
                    node: Any = self.model.mappings
                    for k in keys:
                        node = node.get(str(k)) if isinstance(node, Mapping) else None
                    if node is not None:
                        return self.resolve(node, partial=partial)
            return UNKNOWN
        if key in ("Fn::Equals", "Fn::And", "Fn::Or", "Fn::Not"):
            return self.evaluate({key: arg})
        return UNKNOWN  # Fn::ImportValue, Fn::GetAZs, Fn::Base64, Fn::Cidr, ...

    def _ref(self, name: Any, partial: bool) -> Any:
        if not isinstance(name, str):
            return UNKNOWN
        if name == "AWS::NoValue":
            return NO_VALUE
        if name == "AWS::Region" and self.region:
            return self.region
        if name in _PSEUDO_PARAMETERS:
            return "*" if partial else UNKNOWN
        if name in self.parameters:
            if name in self.assignment:
                return self.assignment[name]
            spec = self.parameters[name]
            if "Default" in spec:
                return _convert_parameter_value(str(spec.get("Type", "String")), spec["Default"])
            return UNKNOWN
        if name in self.resources:
            return ResourceRef(name)
        return UNKNOWN

    def _sub(self, arg: Any, partial: bool) -> Any:
        if isinstance(arg, list) and arg:
            text, variables = arg[0], (arg[1] if len(arg) > 1 and isinstance(arg[1], Mapping) else {})
        else:
            text, variables = arg, {}
        if not isinstance(text, str):
            return UNKNOWN
        failed = False

        def replace(match: re.Match[str]) -> str:
            nonlocal failed
            name = match.group(1).strip()
            if name in variables:
                value = self.resolve(variables[name], partial=partial)
            elif "." in name and name.split(".", 1)[0] in self.resources:
                value = UNKNOWN  # ${Resource.Attribute}: an attribute known only after deploy
            else:
                value = self._ref(name, partial)
            rendered = _as_text(value, partial)
            if rendered is None:
                failed = True
                return "*"
            return rendered

        result = _SUB_VARIABLE.sub(replace, text).replace("${!", "${")
        return UNKNOWN if failed and not partial else result


def _as_text(value: Any, partial: bool) -> Optional[str]:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return "*" if partial else None
