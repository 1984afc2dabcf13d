"""A read-only view of a CloudFormation template that resolves what can be known offline.

The rules judge templates from three places: CDK synth output (long-form intrinsics,
literal AZs when the stack pins them), hand-written YAML read by cfn-lint's decoder
(short-form tags already turned into ``{"Ref": ...}`` / ``{"Fn::GetAtt": [...]}``), and
anything in between. This module turns property values into plain Python where the
template alone decides them, and into :data:`UNKNOWN` where it does not (imports, SSM
parameters, conditions, GetAZs lists), so every rule can follow one principle:
report only what the template proves.

Resolution rules (CloudFormation semantics):

* ``Ref`` to a resource and ``Fn::GetAtt`` give a :class:`ResourceRef`; for security
  groups both the ``Ref`` and ``GetAtt GroupId`` name the same group.
* ``Ref`` to a parameter gives the value chosen in an *assignment* (used to try every
  ``AllowedValues`` entry), else its ``Default``, else UNKNOWN. ``Number`` parameters become
  numbers and ``List<...>`` / ``CommaDelimitedList`` parameters become lists.
* ``Fn::Select`` over ``Fn::GetAZs`` gives :class:`AzIndex`: two subnets with
  ``!Select [0, !GetAZs ""]`` are in the same AZ, ``[0]`` and ``[1]`` are not.
* ``Fn::Sub`` / ``Fn::Join`` build strings; with ``partial=True`` unknown pieces become
  ``*`` so a service name like ``com.amazonaws.${AWS::Region}.sts`` still reveals ``sts``.
* ``Fn::ImportValue``, ``Fn::If`` and anything else unrecognised give UNKNOWN.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional

__all__ = [
    "UNKNOWN",
    "NO_VALUE",
    "AzIndex",
    "ResourceRef",
    "Resource",
    "TemplateModel",
    "is_known",
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

#: Most parameter combinations tried for one resource; beyond this only defaults are used.
MAX_ASSIGNMENTS = 512


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


def _convert_parameter_value(param_type: str, value: Any) -> Any:
    if param_type.startswith("AWS::SSM::Parameter::Value"):
        return UNKNOWN  # the Default names an SSM parameter, not its value
    if param_type.startswith("List<") or param_type == "CommaDelimitedList":
        items = value if isinstance(value, list) else [s.strip() for s in str(value).split(",")]
        if param_type == "List<Number>":
            return [_number(v) for v in items]
        return items
    if param_type == "Number":
        return _number(value)
    return value if isinstance(value, str) else str(value) if isinstance(value, (int, float)) else value


def _number(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    try:
        number = float(str(value))
    except ValueError:
        return UNKNOWN
    return int(number) if number.is_integer() else number


class TemplateModel:
    """Index of one template's resources and parameters, with intrinsic resolution.

    Build it once per template; the rules share it. Lookups by type are precomputed so a
    rule pass over a few hundred resources stays in the millisecond range.
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
                resource = Resource(str(logical_id), str(body.get("Type", "")), props if isinstance(props, Mapping) else {})
                self.resources[resource.logical_id] = resource
                self._by_type.setdefault(resource.type, []).append(resource)
        params = template.get("Parameters") or {}
        self.parameters: dict[str, Mapping[str, Any]] = (
            {str(k): v for k, v in params.items() if isinstance(v, Mapping)} if isinstance(params, Mapping) else {}
        )
        mappings = template.get("Mappings") or {}
        self.mappings: Mapping[str, Any] = mappings if isinstance(mappings, Mapping) else {}
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, factory: Callable[["TemplateModel"], Any]) -> Any:
        """Build a derived index (security groups, routes ...) once per template, for all rules."""
        if key not in self._memo:
            self._memo[key] = factory(self)
        return self._memo[key]

    # -- resources ---------------------------------------------------------------------

    def of_type(self, *types: str) -> list[Resource]:
        if len(types) == 1:
            return list(self._by_type.get(types[0], ()))
        return [r for t in types for r in self._by_type.get(t, ())]

    def resource_of(self, value: Any, *types: str, assignment: Optional[Mapping[str, Any]] = None) -> Optional[Resource]:
        """The template resource a value refers to (``Ref``/``GetAtt``), if of one of ``types``."""
        resolved = self.resolve(value, assignment)
        if isinstance(resolved, ResourceRef):
            resource = self.resources.get(resolved.logical_id)
            if resource is not None and (not types or resource.type in types):
                return resource
        return None

    def tags(self, resource: Resource) -> dict[str, Any]:
        """Resolved ``Tags`` as a dict (list-of-Key/Value form, or the map form some types use)."""
        raw = resource.properties.get("Tags")
        out: dict[str, Any] = {}
        if isinstance(raw, list):
            for tag in raw:
                if isinstance(tag, Mapping):
                    key = self.resolve(tag.get("Key"))
                    if isinstance(key, str):
                        out[key] = self.resolve(tag.get("Value"))
        elif isinstance(raw, Mapping) and not _is_intrinsic(raw):
            for key, value in raw.items():
                out[str(key)] = self.resolve(value)
        return out

    def get(self, resource: Resource, *path: str, assignment: Optional[Mapping[str, Any]] = None) -> Any:
        """The resolved property at ``path`` (NO_VALUE when absent)."""
        node: Any = resource.properties
        for key in path:
            node = self.resolve(node, assignment, shallow=True)
            if not isinstance(node, Mapping) or key not in node:
                return NO_VALUE if isinstance(node, Mapping) or node is NO_VALUE else UNKNOWN
            node = node[key]
        return self.resolve(node, assignment)

    def has(self, resource: Resource, *path: str) -> bool:
        """Is the property at ``path`` present (and not ``AWS::NoValue``)?"""
        value = self.get(resource, *path)
        return value is not NO_VALUE

    # -- parameters --------------------------------------------------------------------

    def parameters_in(self, value: Any) -> set[str]:
        """Names of template parameters a value depends on (via Ref or Fn::Sub)."""
        found: set[str] = set()
        stack = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, Mapping):
                if len(node) == 1 and "Ref" in node and isinstance(node["Ref"], str):
                    if node["Ref"] in self.parameters:
                        found.add(node["Ref"])
                    continue
                if len(node) == 1 and "Fn::Sub" in node:
                    sub = node["Fn::Sub"]
                    text = sub[0] if isinstance(sub, list) and sub else sub
                    if isinstance(text, str):
                        found.update(n for n in _SUB_VARIABLE.findall(text) if n in self.parameters)
                    if isinstance(sub, list) and len(sub) > 1:
                        stack.append(sub[1])
                    continue
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        return found

    def parameter_choices(self, name: str) -> list[Any]:
        """Every value a parameter can take: its AllowedValues, else its Default, else UNKNOWN."""
        spec = self.parameters.get(name, {})
        param_type = str(spec.get("Type", "String"))
        allowed = spec.get("AllowedValues")
        if isinstance(allowed, list) and allowed:
            return [_convert_parameter_value(param_type, v) for v in allowed]
        if "Default" in spec:
            return [_convert_parameter_value(param_type, spec["Default"])]
        return [UNKNOWN]

    def assignments(self, names: Iterable[str]) -> Iterator[dict[str, Any]]:
        """Every combination of parameter values (AllowedValues x ...), capped at MAX_ASSIGNMENTS.

        Yields one empty dict when there are no parameters, so callers always loop once.
        """
        names = sorted(names)
        choices = [self.parameter_choices(n) for n in names]
        total = 1
        for c in choices:
            total *= len(c)
        if total > MAX_ASSIGNMENTS:
            choices = [c if len(c) == 1 else [self._default_or_unknown(n)] for n, c in zip(names, choices)]
        for combo in itertools.product(*choices):
            yield dict(zip(names, combo))

    def _default_or_unknown(self, name: str) -> Any:
        spec = self.parameters.get(name, {})
        if "Default" in spec:
            return _convert_parameter_value(str(spec.get("Type", "String")), spec["Default"])
        return UNKNOWN

    # -- intrinsic resolution ----------------------------------------------------------

    def resolve(
        self,
        value: Any,
        assignment: Optional[Mapping[str, Any]] = None,
        *,
        partial: bool = False,
        shallow: bool = False,
    ) -> Any:
        """Resolve intrinsics in ``value`` (see the module docstring for the semantics).

        ``shallow`` resolves only the top level (a mapping's values are left as written).
        """
        if isinstance(value, Mapping):
            if len(value) == 1:
                (key, arg), = value.items()
                if key == "Ref" or (isinstance(key, str) and key.startswith("Fn::")) or key == "Condition":
                    return self._intrinsic(str(key), arg, assignment or {}, partial)
            if shallow:
                return value
            return {k: v for k, v in ((k, self.resolve(v, assignment, partial=partial)) for k, v in value.items()) if v is not NO_VALUE}
        if isinstance(value, list):
            if shallow:
                return value
            return [v for v in (self.resolve(x, assignment, partial=partial) for x in value) if v is not NO_VALUE]
        return value

    def _intrinsic(self, key: str, arg: Any, assignment: Mapping[str, Any], partial: bool) -> Any:
        if key == "Ref":
            return self._ref(arg, assignment, partial)
        if key == "Fn::GetAtt":
            if isinstance(arg, str):
                arg = arg.split(".", 1)
            if isinstance(arg, list) and len(arg) == 2 and isinstance(arg[0], str):
                attribute = self.resolve(arg[1], assignment)
                if arg[0] in self.resources and isinstance(attribute, str):
                    return ResourceRef(arg[0], attribute)
            return UNKNOWN
        if key == "Fn::Sub":
            return self._sub(arg, assignment, partial)
        if key == "Fn::Join":
            if isinstance(arg, list) and len(arg) == 2:
                delimiter = self.resolve(arg[0], assignment)
                items = self.resolve(arg[1], assignment, partial=partial)
                if isinstance(delimiter, str) and isinstance(items, list):
                    parts = [_as_text(i, partial) for i in items]
                    if all(p is not None for p in parts):
                        return delimiter.join(parts)  # type: ignore[arg-type]
            return UNKNOWN
        if key == "Fn::Select":
            if isinstance(arg, list) and len(arg) == 2:
                index = to_int(self.resolve(arg[0], assignment))
                source = arg[1]
                if isinstance(source, Mapping) and set(source) == {"Fn::GetAZs"} and isinstance(index, int):
                    return AzIndex(index)
                items = self.resolve(source, assignment, partial=partial)
                if isinstance(index, int) and isinstance(items, list) and 0 <= index < len(items):
                    return items[index]
            return UNKNOWN
        if key == "Fn::Split":
            if isinstance(arg, list) and len(arg) == 2:
                delimiter = self.resolve(arg[0], assignment)
                text = self.resolve(arg[1], assignment)
                if isinstance(delimiter, str) and delimiter and isinstance(text, str):
                    return text.split(delimiter)
            return UNKNOWN
        if key == "Fn::FindInMap":
            if isinstance(arg, list) and len(arg) >= 3:
                keys = [self.resolve(a, assignment) for a in arg[:3]]
                if all(isinstance(k, (str, int)) for k in keys):
                    node: Any = self.mappings
                    for k in keys:
                        node = node.get(str(k)) if isinstance(node, Mapping) else None
                    if node is not None:
                        return self.resolve(node, assignment, partial=partial)
            return UNKNOWN
        return UNKNOWN  # Fn::ImportValue, Fn::If, Fn::GetAZs, Fn::Base64, Fn::Cidr, ...

    def _ref(self, name: Any, assignment: Mapping[str, Any], partial: bool) -> Any:
        if not isinstance(name, str):
            return UNKNOWN
        if name == "AWS::NoValue":
            return NO_VALUE
        if name == "AWS::Region" and self.region:
            return self.region
        if name in _PSEUDO_PARAMETERS:
            return "*" if partial else UNKNOWN
        if name in self.parameters:
            if name in assignment:
                return assignment[name]
            return self._default_or_unknown(name)
        if name in self.resources:
            return ResourceRef(name)
        return UNKNOWN

    def _sub(self, arg: Any, assignment: Mapping[str, Any], partial: bool) -> Any:
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
                value = self.resolve(variables[name], assignment, partial=partial)
            elif "." in name and name.split(".", 1)[0] in self.resources:
                value = UNKNOWN  # ${Resource.Attribute}: an attribute known only after deploy
            else:
                value = self._ref(name, assignment, partial)
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


def _is_intrinsic(value: Mapping[str, Any]) -> bool:
    return len(value) == 1 and next(iter(value)) in ("Ref", "Fn::If", "Fn::ImportValue")
