"""Each schema field declared once: its type, its parser from text, its limits, its context key.

A group (:class:`~smddp_infra.schema.network.Workload`, ...) is a frozen dataclass decorated with
:func:`group`; each field's ``metadata`` holds one :class:`Rule`. The group runs every field's
rule when it is BUILT, so a bad value (wrong type, NaN or infinite, out of range, bad pattern)
never reaches a validator, a construct or jsii, whoever wrote it: the library user (the message
names the field), the app's context (the reader re-names the key: :class:`FieldValueError`
carries what was wrong, not who wrote it), a job document.

Why a rule names what is allowed rather than raising its own text: the same rule then reads
the same through every door, ``instance_count must be a whole number >= 1, got 0`` in Python and
``smddp:instanceCount must be a whole number >= 1, got '0'`` from ``-c``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, TypeVar

from smddp_infra.errors import ConfigError, PropTypeError, known_fields

#: How a CDK token reads in a Python string (``${Token[TOKEN.12]}``): a value known only at deploy.
TOKEN_MARK = "${Token["
#: What aws-cdk-lib's ``Stack.availability_zones`` returns BEFORE the CLI has performed its context
#: lookup (aws-cdk-lib ``aws-ec2/lib/vpc.js``): not a value to refuse, the CLI runs the app again.
LOOKUP_PLACEHOLDER_AZS = frozenset({"dummy1a", "dummy1b", "dummy1c"})
#: aws-cdk-lib encodes a number token as a double in this range (``token-encoding``: the
#: 0xFBFF marker bits make a huge negative value, -1.8881545897087626e+289 and neighbours).
_NUMBER_TOKEN_BELOW = -1e289

#: The key under which a field's :class:`Rule` sits in ``dataclasses.field(metadata=...)``.
RULE = "smddp_rule"


class FieldValueError(ConfigError):
    """A field's value broke its rule: which field, the value, and what is allowed.

    Raised by a group when it is built; a reader that knows how the user wrote the field (a
    context key) re-renders it with :meth:`named`."""

    def __init__(self, field_name: str, value: Any, allowed: str, *, type_error: bool = False, hint: str = "") -> None:
        self.field_name, self.value, self.allowed, self.type_error, self.hint = field_name, value, allowed, type_error, hint
        super().__init__(self.named(field_name))

    def named(self, name: str) -> str:
        shown = f"{type(self.value).__name__} {_shown(self.value)}" if self.type_error else _shown(self.value)
        return f"{name} must be {self.allowed}, got {shown}{self.hint}"


class FieldTypeError(FieldValueError, PropTypeError):
    """A value of the wrong type (also a ``TypeError``, as Python's own would be)."""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def is_token(value: Any) -> bool:
    """A CDK token: a string carrying the token mark, or an encoded number token."""
    if isinstance(value, str):
        return TOKEN_MARK in value
    return isinstance(value, float) and not isinstance(value, bool) and value < _NUMBER_TOKEN_BELOW


@dataclass(frozen=True)
class Rule:
    """One field's rule: what it accepts and how text becomes it.

    ``accepts`` is called with a value of the right type and says whether it is allowed;
    ``allowed`` says in words what is (``"a whole number >= 1"``); ``parse`` turns a context
    value (a JSON value from cdk.json, or the string ``-c`` gives) into the field's type;
    ``key`` is the app's context key for the field ("" when the app has none); ``tokens``: a
    token (known only at deploy) is passed through unchecked.
    """

    allowed: str
    kind: type | tuple[type, ...]
    accepts: Callable[[Any], bool] = lambda _: True
    parse: Callable[[Any], Any] = lambda raw: raw
    key: str = ""
    optional: bool = False
    tokens: bool = False
    #: for a number: why a token is refused (it sizes resources and must be known at synth)
    synth_only: bool = False
    #: what is allowed, as text a context key holds (``true or false`` rather than ``True or False``)
    text_allowed: str = ""
    #: more words for a refused value, which is of the rule's kind (``" (ml.g5.x is left out on purpose: ...)"``)
    hint: Callable[[Any], str] = lambda _: ""

    def check(self, name: str, value: Any) -> Any:
        """The value if it is allowed, else a :class:`FieldValueError` naming ``name``."""
        if value is None and self.optional:
            return value
        if is_token(value):
            if self.tokens:
                return value
            if self.synth_only:
                raise ConfigError(f"{name} must be known at synth (a literal number): it sizes resources, got a token")
        if isinstance(value, bool) and bool not in _kinds(self.kind) or not isinstance(value, self.kind):
            raise FieldTypeError(name, value, self.allowed, type_error=True)
        if isinstance(value, float) and not math.isfinite(value) or not self.accepts(value):
            raise FieldValueError(name, value, self.allowed, hint=self.hint(value))
        return value

    def read(self, name: str, raw: Any) -> Any:
        """A context value: parsed from text (or taken as the JSON value), then checked."""
        allowed = self.text_allowed or self.allowed
        try:
            value = self.parse(raw)
        except (TypeError, ValueError):
            raise FieldValueError(name, raw, allowed) from None
        try:
            return self.check(name, value)
        except FieldValueError as exc:  # name the value as the user wrote it ('0', not 0)
            raise FieldValueError(name, raw, allowed, hint=exc.hint) from None


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


# --- rules, one constructor per kind of value -------------------------------------------------------

def _text(raw: Any) -> str:
    if not isinstance(raw, str):
        raise TypeError(raw)
    return raw


def _whole_text(raw: Any) -> int:
    if isinstance(raw, bool) or isinstance(raw, float) and not raw.is_integer():
        raise ValueError(raw)
    return int(raw)  # int() itself allows the spaces around a number in text


def _number_text(raw: Any) -> float:
    if isinstance(raw, bool):
        raise ValueError(raw)
    return float(raw)


def _flag_text(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    raise ValueError(raw)


def whole(minimum: int, maximum: Optional[int] = None, *, key: str = "", optional: bool = False, why: str = "",
          unit: str = "") -> Rule:
    """A whole number from ``minimum`` (to ``maximum``); ``why`` is the AWS fact behind the limit."""
    kind = f"a whole number{' of ' + unit if unit else ''}"
    allowed = f"{kind} >= {minimum}" if maximum is None else f"{kind} from {minimum:,} to {maximum:,}"
    allowed += " or None" if optional and maximum is None else ""  # an optional count: None is allowed too
    return Rule(allowed + why, int, lambda v: v >= minimum and (maximum is None or v <= maximum), _whole_text, key,
                optional, synth_only=True)


def number(minimum: float, *, exclusive: bool = False, unit: str = "", key: str = "", optional: bool = False) -> Rule:
    """A finite number > (or >=) ``minimum``; ints are numbers too."""
    allowed = f"a number {'>' if exclusive else '>='} {minimum:g}{' ' + unit if unit else ''}"
    return Rule(allowed, (int, float), lambda v: v > minimum if exclusive else v >= minimum, _number_text, key,
                optional, synth_only=True)


def flag(*, key: str = "", optional: bool = False) -> Rule:
    return Rule("True or False", bool, parse=_flag_text, key=key, optional=optional, text_allowed="true or false")


def text(what: str = "a string", accepts: Callable[[str], bool] = lambda _: True, *, key: str = "",
         optional: bool = False, tokens: bool = False, hint: Callable[[Any], str] = lambda _: "") -> Rule:
    """A string ``accepts`` allows (a pattern, a table); ``what`` says what that is in words."""
    return Rule(what, str, accepts, _text, key, optional, tokens, hint=hint)


def choice(options: Sequence[str], *, key: str = "", optional: bool = False) -> Rule:
    names = [repr(o) for o in options]
    allowed = " or ".join(names) if len(names) == 2 else "one of " + ", ".join(names)
    return Rule(allowed, str, lambda v: v in options, _text, key, optional)


def texts(what: str, accepts: Callable[[str], bool] = lambda _: True, *, key: str = "", optional: bool = False,
          one: bool = False, nonempty: bool = False) -> Rule:
    """A list (or tuple) of strings each ``accepts`` allows; ``one``: a lone string is a list of one."""
    def ok(values: Any) -> bool:
        items = [values] if isinstance(values, str) else values
        return (not nonempty or bool(items)) and all(isinstance(v, str) and (TOKEN_MARK in v or accepts(v))
                                                     for v in items)
    kinds: tuple[type, ...] = (list, tuple, str) if one else (list, tuple)
    return Rule(what, kinds, ok, lambda raw: raw, key, optional)


def value(default: Any, rule: Rule) -> Any:
    """A field with its default and its one rule (``dataclasses.field`` with the rule as metadata)."""
    return dataclasses.field(default=default, metadata={RULE: rule})


def field_of(cls: type, name: str) -> dataclasses.Field[Any]:
    """The dataclass field ``name`` of ``cls``."""
    return next(f for f in dataclasses.fields(cls) if f.name == name)


def rule_of(f: dataclasses.Field[Any]) -> Optional[Rule]:
    rule: Optional[Rule] = f.metadata.get(RULE)
    return rule


def rule_for(cls: type, name: str) -> Rule:
    """The rule of ``cls``'s field ``name``: a reader outside the group checks by the group's own rule."""
    rule = rule_of(field_of(cls, name))
    assert rule is not None, f"{cls.__name__}.{name} declares no rule"
    return rule


# --- the group decorator ----------------------------------------------------------------------------

G = TypeVar("G")


def group(cls: type[G]) -> type[G]:
    """A frozen dataclass that refuses bad values when built (each field's :class:`Rule`), and an
    unknown field in one line naming the nearest (:func:`smddp_infra.errors.known_fields`)."""
    return known_fields(cls, check=check_rules)


def check_rules(instance: Any) -> None:
    """Every field's rule over the value it holds."""
    for f in dataclasses.fields(instance):
        rule = rule_of(f)
        if rule is not None:
            rule.check(f.name, getattr(instance, f.name))


__all__ = ["LOOKUP_PLACEHOLDER_AZS", "RULE", "TOKEN_MARK", "FieldTypeError", "FieldValueError", "Rule", "check_rules",
           "choice", "field_of", "flag", "group",
           "is_token", "number", "rule_for", "rule_of", "text", "texts", "value", "whole"]
