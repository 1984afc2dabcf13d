"""Check a request against botocore's service model the way the service does.

``botocore.validate.validate_parameters`` checks required members, unknown members, types
and minimums only. SageMaker itself also rejects a value outside an enum, over a maximum
(length, count or number) or not matching a member's pattern. This walker checks exactly
those over the same shapes, so a request that passes both is one the API model accepts.

Patterns in AWS models are Java regular expressions matched against the WHOLE value; the
few Java-only constructs that occur (``\\p{Alnum}`` and friends) are translated. A pattern
that still fails to compile is an error of this tool (raised), never a silent pass.
Test tooling only: nothing under smddp_infra imports it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import botocore.session
from botocore.model import OperationModel, Shape
from botocore.validate import validate_parameters

_JAVA_CLASSES = {
    r"\p{Alnum}": "A-Za-z0-9",
    r"\p{Alpha}": "A-Za-z",
    r"\p{Digit}": "0-9",
    r"\p{Upper}": "A-Z",
    r"\p{Lower}": "a-z",
    r"\p{XDigit}": "0-9A-Fa-f",
    r"\p{Punct}": r"!-/:-@\[-`{-~",
    r"\p{Print}": r"\x20-\x7e",
    r"\p{Graph}": r"\x21-\x7e",
    r"\p{Space}": r" \t\n\x0b\f\r",
}


@lru_cache(maxsize=None)
def sagemaker_operation(name: str) -> OperationModel:
    return botocore.session.get_session().get_service_model("sagemaker").operation_model(name)


@lru_cache(maxsize=None)
def compile_pattern(pattern: str) -> "re.Pattern[str]":
    translated = pattern
    for java, chars in _JAVA_CLASSES.items():
        # inside a [...] class the range goes in as is; outside it needs its own brackets
        translated = re.sub(r"(\[[^\]]*?)" + re.escape(java), lambda m, chars=chars: m.group(1) + chars, translated)
        translated = translated.replace(java, f"[{chars}]")
    return re.compile(translated)


def walk(value: Any, shape: Shape, path: str = "") -> list[str]:
    """Every enum, maximum, list-length and pattern violation under ``value``, as text."""
    problems: list[str] = []
    meta = shape.metadata
    kind = shape.type_name
    where = path or shape.name
    if kind == "structure":
        if not isinstance(value, dict):
            return [f"{where}: expected a structure, got {type(value).__name__}"]
        for name in shape.required_members:
            if name not in value:
                problems.append(f"{where}: missing required member {name}")
        if meta.get("union") and len(value) != 1:
            problems.append(f"{where}: a union takes exactly one member, got {sorted(value)}")
        for name, member_value in value.items():
            member = shape.members.get(name)
            if member is None:
                problems.append(f"{where}: unknown member {name}")
                continue
            problems.extend(walk(member_value, member, f"{path}.{name}" if path else name))
    elif kind == "list":
        if not isinstance(value, (list, tuple)):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        problems.extend(_bounds(len(value), meta, where, "entries"))
        for i, item in enumerate(value):
            problems.extend(walk(item, shape.member, f"{where}[{i}]"))
    elif kind == "map":
        if not isinstance(value, dict):
            return [f"{where}: expected a map, got {type(value).__name__}"]
        problems.extend(_bounds(len(value), meta, where, "entries"))
        for key, item in value.items():
            problems.extend(walk(key, shape.key, f"{where} key {key!r}"))
            problems.extend(walk(item, shape.value, f"{where}[{key!r}]"))
    elif kind == "string":
        if not isinstance(value, str):
            return [f"{where}: expected a string, got {type(value).__name__}"]
        enum = getattr(shape, "enum", None) or meta.get("enum")
        if enum and value not in enum:
            shown = ", ".join(enum) if len(enum) <= 12 else f"{len(enum)} values"
            problems.append(f"{where}: {value!r} is not one of {shown}")
        problems.extend(_bounds(len(value), meta, where, "characters"))
        pattern = meta.get("pattern")
        if pattern and not compile_pattern(pattern).fullmatch(value):
            problems.append(f"{where}: {value!r} does not match the pattern {pattern}")
    elif kind in ("integer", "long"):
        if isinstance(value, bool) or not isinstance(value, int):
            return [f"{where}: expected a whole number, got {value!r}"]
        problems.extend(_bounds(value, meta, where, ""))
    elif kind in ("float", "double"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return [f"{where}: expected a number, got {value!r}"]
        problems.extend(_bounds(value, meta, where, ""))
    elif kind == "boolean":
        if not isinstance(value, bool):
            problems.append(f"{where}: expected true or false, got {value!r}")
    return problems


def _bounds(size: Any, meta: dict, where: str, unit: str) -> list[str]:
    out = []
    if "min" in meta and size < meta["min"]:
        out.append(f"{where}: {size} {unit} is below the minimum {meta['min']}".replace("  ", " "))
    if "max" in meta and size > meta["max"]:
        out.append(f"{where}: {size} {unit} is above the maximum {meta['max']}".replace("  ", " "))
    return out


def botocore_errors(request: dict, operation: str = "CreateTrainingJob") -> str:
    """botocore's own verdict: '' when valid, else its report."""
    try:
        validate_parameters(request, sagemaker_operation(operation).input_shape)
    except Exception as exc:  # botocore.exceptions.ParamValidationError
        return str(exc)
    return ""


def all_problems(request: dict, operation: str = "CreateTrainingJob") -> list[str]:
    """botocore's verdict plus the walker's: empty means the API model accepts the request."""
    found = botocore_errors(request, operation)
    return ([found] if found else []) + walk(request, sagemaker_operation(operation).input_shape)
