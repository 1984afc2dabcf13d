"""Read a CloudFormation template (YAML or JSON) into plain Python, fast.

Why not cfn-lint's decoder: importing ``cfnlint.decode`` pulls in cfn-lint's whole rule
machinery (and sympy through it), about one second before the first template is read,
which made ``smddp-infra check`` on one small template take over a second. Parsing needs
only PyYAML (libyaml when present) plus CloudFormation's short-form tags:

* ``!Ref X`` -> ``{"Ref": "X"}``; ``!Condition X`` -> ``{"Condition": "X"}``;
* ``!GetAtt A.B`` -> ``{"Fn::GetAtt": ["A", "B"]}`` (split at the first dot, as
  CloudFormation does: ``!GetAtt A.B.C`` is attribute ``B.C`` of ``A``); ``!GetAtt [A, B]``
  as written;
* every other ``!Name`` -> ``{"Fn::Name": value}`` (``!Sub``, ``!If``, ``!Join``, ``!Select``,
  ``!Split``, ``!FindInMap``, ``!GetAZs``, ``!ImportValue``, ``!Base64``, ``!Cidr``,
  ``!Equals``, ``!And``, ``!Or``, ``!Not``, ``!Contains``, ``!EachMemberEquals``,
  ``!EachMemberIn``, ``!Length``, ``!ToJsonString``, ``!Transform`` ...), with a scalar,
  list or mapping argument.

Scalars follow YAML 1.1 as cfn-lint's decoder does (``Yes`` is a boolean, ``1200`` an int);
the model reads both spellings. A key written twice in one mapping is refused (cfn-lint
refuses it too, and the later value would silently win). JSON templates are read with the
standard library. Nothing here imports cfn-lint.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

__all__ = ["TemplateSyntaxError", "load_template_file", "load_template_text"]

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it

#: Tags that keep their name (everything else gets the ``Fn::`` prefix).
_UNPREFIXED = ("Ref", "Condition")


class TemplateSyntaxError(ValueError):
    """The text is not YAML/JSON (message says where, with a 1-based line)."""


class _Loader(_Base):  # type: ignore[misc]
    """SafeLoader + CloudFormation short-form tags + duplicate-key refusal."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        self.flatten_mapping(node)
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise TemplateSyntaxError(
                    f"key {key!r} appears twice in one mapping (lines {seen[key]} and {key_node.start_mark.line + 1})"
                )
            if isinstance(key, (str, int, float, bool)):
                seen[key] = key_node.start_mark.line + 1
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result


def _intrinsic(loader: _Loader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = suffix if suffix in _UNPREFIXED else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        text = loader.construct_scalar(node)
        if name == "Fn::GetAtt" and isinstance(text, str):
            return {name: text.split(".", 1)}
        return {name: text}
    if isinstance(node, yaml.SequenceNode):
        return {name: loader.construct_sequence(node, deep=True)}
    if isinstance(node, yaml.MappingNode):
        return {name: loader.construct_mapping(node, deep=True)}
    raise TemplateSyntaxError(f"!{suffix} has an argument of an unknown kind")  # pragma: no cover


_Loader.add_multi_constructor("!", _intrinsic)
_Loader.add_constructor("tag:yaml.org,2002:map", lambda loader, node: loader.construct_mapping(node, deep=True))


def load_template_text(text: str) -> Any:
    """The decoded document (any YAML/JSON value); raise TemplateSyntaxError when unreadable.

    JSON is tried first when the text starts like JSON (``{`` or ``[``): it is the common
    case for cdk.out and much faster through ``json``; YAML is a superset for the rest.
    """
    json_error = ""
    if text.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            json_error = f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except TemplateSyntaxError:
        raise
    except yaml.MarkedYAMLError as exc:
        if json_error:
            raise TemplateSyntaxError(json_error) from None
        mark = exc.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise TemplateSyntaxError(f"{exc.problem or exc.context or 'not YAML'}{where}") from None
    except yaml.YAMLError as exc:
        raise TemplateSyntaxError(json_error or str(exc).splitlines()[0]) from None


def load_template_file(path: str) -> Any:
    """:func:`load_template_text` of a UTF-8 file (raises UnicodeDecodeError / OSError as open does)."""
    with open(path, encoding="utf-8") as handle:
        return load_template_text(handle.read())
