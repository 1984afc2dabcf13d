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

Hostile input is refused in one :class:`TemplateSyntaxError`, before anything walks it:

* **Size.** A template body is at most 1 MB in an S3 object (51,200 bytes inline; CloudFormation
  User Guide, "CloudFormation quotas",
  https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html);
  a larger file is not a template CloudFormation would read (1 MB is read as 1,048,576 bytes,
  the generous reading: cfn-lint's E1002 stops at 1,000,000).
* **Aliases.** CloudFormation refuses YAML aliases ("Template error: YAML aliases are not
  allowed in CloudFormation templates"); ``aws cloudformation package`` and SAM expand them first
  (aws/aws-cli#3827), so they are expanded here too, but PyYAML expands an alias into a shared
  object: a 1 KB "billion laughs" document is small on disk and enormous when walked. The
  composed document is measured once (each node once, shared ones reused) before it is built:
  expanded, it may hold at most :data:`MAX_VALUES` values, what a 1 MB document can hold at two
  bytes a value (``0,``); an alias that contains itself is refused too.
* **Depth.** The rooms that read a document walk it recursively, and Python stops at 1,000
  frames: a document may nest :data:`MAX_DEPTH` levels (CDK's own templates and the project's
  corpus nest at most 16). libyaml refuses 1,000 levels itself; a ``RecursionError`` from the
  pure-Python parser or ``json`` is the same one line.

:func:`load_yaml_text` is the same bounded reader without CloudFormation's tags: preflight's job
files and recipes read YAML through it.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import yaml

__all__ = ["MAX_DEPTH", "MAX_TEMPLATE_BYTES", "MAX_VALUES", "TemplateSyntaxError", "compose_yaml_text",
           "load_template_file", "load_template_text", "load_yaml_text"]

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it

#: Tags that keep their name (everything else gets the ``Fn::`` prefix).
_UNPREFIXED = ("Ref", "Condition")

#: CloudFormation's largest template body (1 MB, in an S3 object; see the module docstring).
MAX_TEMPLATE_BYTES = 1024 * 1024
#: The most values (scalars, lists, mappings, keys) a document may hold once its aliases are expanded.
MAX_VALUES = MAX_TEMPLATE_BYTES // 2
#: The deepest nesting read (a scalar at the top is depth 1).
MAX_DEPTH = 100

_CFN_ALIASES = ("CloudFormation refuses YAML aliases (\"YAML aliases are not allowed in CloudFormation templates\"); "
                "`aws cloudformation package` and SAM expand them first, and the expanded template must still fit 1 MB")


class TemplateSyntaxError(ValueError):
    """The text is not YAML/JSON, or is past a bound above (message says where, with a 1-based line).

    ``problem``, ``line`` and ``column`` hold the parts, for a reader that words the place its own way.
    """

    def __init__(self, problem: str, line: Optional[int] = None, column: Optional[int] = None) -> None:
        super().__init__(f"{problem} (line {line}, column {column})" if line is not None else problem)
        self.problem, self.line, self.column = problem, line, column


def _too_deep() -> TemplateSyntaxError:
    return TemplateSyntaxError(f"the document nests more than {MAX_DEPTH} levels deep; "
                               f"smddp-infra reads up to {MAX_DEPTH} (real templates nest under 20)")


def _measure(root: yaml.Node, alias_note: str) -> None:
    """Refuse a composed document nested past MAX_DEPTH; when a node is reached twice (an alias),
    measure it as expanded (:func:`_measure_expanded`). Without aliases a document is a tree as
    large as its text, and only its depth is in question (scalars are leaves: not walked)."""
    seen: set[int] = set()
    work: list[tuple[yaml.Node, int]] = [(root, 1)]
    while work:
        node, level = work.pop()
        if id(node) in seen:
            return _measure_expanded(root, alias_note)
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode) or not node.value:
            continue
        if level >= MAX_DEPTH:  # its values would sit one level deeper
            raise _too_deep()
        kids = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
        work.extend((kid, level + 1) for kid in kids if not isinstance(kid, yaml.ScalarNode))
    return None


def _measure_expanded(root: yaml.Node, alias_note: str) -> None:
    """Refuse a document that expands past MAX_VALUES or MAX_DEPTH, or contains itself.

    Iterative and memoized by node: an alias is a second edge to a node already measured, so a
    billion-laughs document costs its written size. A ``<<`` merge counts what it copies.
    """
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_nodes: set[int] = set()
    work: list[yaml.Node] = [root]
    while work:
        node = work[-1]
        key = id(node)
        if key in size:
            work.pop()
            continue
        if isinstance(node, yaml.ScalarNode):
            size[key] = height[key] = 1
            work.pop()
            continue
        kids = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
        if key not in open_nodes:
            open_nodes.add(key)
            pending = [kid for kid in kids if id(kid) not in size]
            for kid in pending:
                if id(kid) in open_nodes:
                    raise TemplateSyntaxError(
                        f"the YAML anchor at line {kid.start_mark.line + 1} is aliased inside the node it names: expanded, "
                        f"the document never ends{alias_note}")
            if pending:
                work.extend(reversed(pending))
                continue
        open_nodes.discard(key)
        work.pop()
        size[key] = total = 1 + sum(size[id(kid)] for kid in kids)
        height[key] = levels = 1 + max((height[id(kid)] for kid in kids), default=0)
        if levels > MAX_DEPTH:
            raise _too_deep()
        if total > MAX_VALUES:
            raise TemplateSyntaxError(f"the document holds more than {MAX_VALUES:,} values once its YAML aliases are "
                                      f"expanded (line {node.start_mark.line + 1}){alias_note}")


def _reason(exc: BaseException) -> str:
    """An exception's first clause, without Python's advice (``use sys.set_int_max_str_digits()``)."""
    return str(exc).split(";")[0].split("\n")[0] or type(exc).__name__


def _depth_of(value: Any) -> None:
    """Refuse a decoded JSON document nested past MAX_DEPTH (JSON has no aliases: a tree)."""
    work: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while work:
        item, level = work.pop()
        kids = item.values() if isinstance(item, dict) else item
        if kids and level >= MAX_DEPTH:  # its values would sit one level deeper
            raise _too_deep()
        work.extend((kid, level + 1) for kid in kids if isinstance(kid, (dict, list)))


class _PlainLoader(_Base):  # type: ignore[misc]
    """SafeLoader whose scalars fail in one line (:func:`_read` measures the document first)."""

    _alias_note = ""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """A scalar PyYAML resolves but cannot build (``2001-13-45`` as a date, an int of 5,000
        digits past Python's limit, ``!!float x``) is the document's fault: one line naming it."""
        try:
            return super().construct_object(node, deep=deep)
        except TemplateSyntaxError:
            raise
        except (ValueError, TypeError, AttributeError, OverflowError) as exc:
            raise TemplateSyntaxError(f"the value at line {node.start_mark.line + 1}, column {node.start_mark.column + 1} "
                                      f"cannot be read as {node.tag.rsplit(':', 1)[-1]}: {_reason(exc)}") from None


def _int(loader: _PlainLoader, node: yaml.ScalarNode) -> int:
    """An int PyYAML builds from hex, octal or sexagesimal digits has no length limit, but
    Python refuses to write one past 4,300 decimal digits (``str()`` raises): refuse it here,
    not in the message that would name it."""
    value: int = loader.construct_yaml_int(node)
    if value.bit_length() > 14_000:  # 4,300 decimal digits are about 14,284 bits
        raise TemplateSyntaxError(f"the value at line {node.start_mark.line + 1}, column {node.start_mark.column + 1} "
                                  "is an integer of more than 4,000 digits")
    return value


_PlainLoader.add_constructor("tag:yaml.org,2002:int", _int)


class _Loader(_PlainLoader):
    """The bounded SafeLoader + CloudFormation short-form tags + duplicate-key refusal."""

    _alias_note = f"; {_CFN_ALIASES}"

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
    if len(text) > MAX_TEMPLATE_BYTES // 4 and len(text.encode("utf-8", "surrogatepass")) > MAX_TEMPLATE_BYTES:
        raise TemplateSyntaxError(
            f"the template is {len(text.encode('utf-8', 'surrogatepass')):,} bytes; CloudFormation reads a template body "
            "of at most 1 MB (from S3; 51,200 bytes inline, CloudFormation quotas): split it into nested stacks")
    json_error = ""
    if text.lstrip()[:1] in ("{", "["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            json_error = f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
        except RecursionError:
            raise _too_deep() from None
        except ValueError as exc:  # an int past Python's 4,300 digits
            raise TemplateSyntaxError(f"a value cannot be read: {_reason(exc)}") from None
        else:
            _depth_of(value)
            return value
    return _read(text, _Loader, json_error)


def load_yaml_text(text: str) -> Any:
    """A YAML document (YAML 1.1, safe types, no CloudFormation tags) under the same bounds as a
    template's: aliases expanded to at most :data:`MAX_VALUES` values, :data:`MAX_DEPTH` levels."""
    return _read(text, _PlainLoader, "")


def compose_yaml_text(text: str) -> Optional[yaml.Node]:
    """The composed YAML node graph (marks kept, for a reader that names lines), under the same
    bounds; None for an empty document. A node an alias names is shared: walk it as a DAG or
    within :data:`MAX_VALUES`."""
    node: Optional[yaml.Node] = _read(text, _PlainLoader, "", build=False)
    return node


def _read(text: str, loader_class: type, json_error: str, *, build: bool = True) -> Any:
    """Compose, measure (:func:`_measure`), then build: nothing is built past a bound."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _measure(node, loader_class._alias_note)  # type: ignore[attr-defined]
        return loader.construct_document(node) if build else node
    except TemplateSyntaxError:
        raise
    except RecursionError:  # the pure-Python composer (no libyaml) on a deep document
        raise _too_deep() from None
    except yaml.MarkedYAMLError as exc:
        if json_error:
            raise TemplateSyntaxError(json_error) from None
        mark = exc.problem_mark
        raise TemplateSyntaxError(exc.problem or exc.context or "not YAML", *((mark.line + 1, mark.column + 1)
                                                                              if mark is not None else ())) from None
    except yaml.YAMLError as exc:
        raise TemplateSyntaxError(json_error or str(exc).splitlines()[0]) from None
    finally:
        loader.dispose()


def load_template_file(path: str) -> Any:
    """:func:`load_template_text` of a UTF-8 file (raises UnicodeDecodeError / OSError as open does)."""
    with open(path, encoding="utf-8") as handle:
        return load_template_text(handle.read())
