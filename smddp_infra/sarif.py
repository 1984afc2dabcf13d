"""SARIF 2.1.0 logs of ``check`` and ``preflight`` findings, for GitHub code scanning.

SARIF (OASIS standard, version 2.1.0) is what code-scanning services read: a log has ``version``,
``$schema`` and ``runs[]``; a run names its tool (``tool.driver``: name, version, rules with an id,
short and full description, help URI and ``defaultConfiguration.level``) and lists results (rule id,
level ``error|warning|note``, ``message.text``, ``locations[].physicalLocation`` with the file's
``artifactLocation.uri`` and a 1-based ``region.startLine/startColumn``). GitHub takes it through
``github/codeql-action/upload-sarif``; cfn-lint writes it with ``--format sarif``, checkov with
``-o sarif``.

This module only renders: it reads the findings each command already made (``rules.Finding``,
``preflight.Finding``) and the files they name, for line and column. Neither rules nor
preflight is re-run, and ``--json`` is untouched.

Where a result points:

* ``check``: the finding's resource, and inside it the longest prefix of its property path the
  file holds (the key's line, as cfn-lint points at it), read from the composed YAML node graph
  (JSON is YAML: one reader, with the marks PyYAML keeps); a CDK-synthesized template's
  construct path (``Metadata.aws:cdk:path``) goes in the result's ``properties.cdkPath``, since
  the file a user edits is the CDK app, not cdk.out.
* ``preflight``: the file and line its location names (``train.py:14``, ``launch.py:23: entry_point``,
  ``job.yaml: checkpoint_s3_uri``, ``launch.ipynb cell 6 line 1: ...``); a notebook cell's line is
  the line of that source line inside the ``.ipynb`` JSON, where code scanning shows it.

A file that cannot be placed (the composer refuses it, the key is not written) keeps its
``artifactLocation`` without a region: never a made-up line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import yaml

    from smddp_infra.preflight.report import PreflightReport
    from smddp_infra.rules.findings import Finding, Rule

VERSION = "2.1.0"
#: The OASIS schema the log declares (errata 01, the one GitHub validates against).
SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: Where the rules are documented, relative to the repository root (docs/rules.md has an anchor
#: per SMDDP rule id; docs/troubleshooting.md documents preflight).
RULES_DOC = "docs/rules.md"
PREFLIGHT_DOC = "docs/troubleshooting.md#smddp-infra-preflight"

#: our severities -> SARIF ``level`` (SARIF has no "info": ``note`` is its lowest level that shows)
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def rule_anchor(rule_id: str) -> str:
    """The anchor docs/rules.md carries for a rule: ``SMDDP-NET10`` -> ``smddp-net10``."""
    return rule_id.lower()


def artifact_uri(path: str | Path) -> str:
    """A repository-relative URI (what code scanning resolves against the checkout) when the file
    is under the working directory; else an absolute ``file://`` URI."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.as_uri()


def _location(path: str | Path, mark: Optional[tuple[int, int]]) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(path)}}
    if mark is not None:
        physical["region"] = {"startLine": mark[0], "startColumn": mark[1]}
    return {"physicalLocation": physical}


def _compose(path: str | Path) -> Optional["yaml.Node"]:
    """The file's node graph with marks (JSON is YAML); None when it cannot be composed."""
    from smddp_infra.rules.loader import TemplateSyntaxError, compose_yaml_text

    try:
        with open(path, encoding="utf-8-sig") as handle:
            return compose_yaml_text(handle.read())
    except (OSError, UnicodeDecodeError, TemplateSyntaxError):
        return None


def _mark(node: "yaml.Node") -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _child(node: Optional["yaml.Node"], step: str | int) -> tuple[Optional["yaml.Node"], Optional["yaml.Node"]]:
    """(the key node or list item that names ``step``, the value node) inside ``node``."""
    import yaml

    if isinstance(node, yaml.MappingNode) and isinstance(step, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == step:
                return key, value
    if isinstance(node, yaml.SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
        return node.value[step], node.value[step]
    return None, None


def find_mark(root: Optional["yaml.Node"], path: Sequence[str | int]) -> Optional[tuple[int, int]]:
    """(line, column), 1-based, of the deepest step of ``path`` the document holds; None if not even the first."""
    found: Optional[tuple[int, int]] = None
    node = root
    for step in path:
        named, node = _child(node, step)
        if named is None:
            break
        found = _mark(named)
    return found


# ---------------------------------------------------------------- check


def _check_rule(rule: "Rule") -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": re.sub(r"[^A-Za-z0-9]", "", rule.id.title()),
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": f"{rule.explanation} Prevents: {rule.symptom}"},
        "help": {"text": f"{rule.explanation}\nSource: {rule.source}"},
        "helpUri": f"{RULES_DOC}#{rule_anchor(rule.id)}",
        "defaultConfiguration": {"level": LEVELS[rule.severity.value]},
        "properties": {"cfnLintId": rule.cfn_lint_id},
    }


_SECTIONS = ("Resources", "Parameters", "Outputs", "Conditions", "Mappings", "Rules")


def _check_result(path: str, finding: "Finding", root: Optional["yaml.Node"], template: Mapping[str, Any],
                  index: Mapping[str, int]) -> dict[str, Any]:
    mark = None
    for section in _SECTIONS:  # the logical id is a resource, else a parameter or output named in it
        mark = find_mark(root, (section, finding.resource, *finding.path))
        if mark is not None:
            break
    properties: dict[str, Any] = {"resource": finding.resource, "path": list(finding.path)}
    resource = (template.get("Resources") or {}).get(finding.resource)
    metadata = resource.get("Metadata") if isinstance(resource, Mapping) else None
    if isinstance(metadata, Mapping) and isinstance(metadata.get("aws:cdk:path"), str):
        properties["cdkPath"] = metadata["aws:cdk:path"]
    if finding.when:
        properties["when"] = [dict(w) for w in finding.when]
    return {
        "ruleId": finding.rule_id,
        "ruleIndex": index[finding.rule_id],
        "level": LEVELS[finding.severity.value],
        "message": {"text": f"{finding.resource}: {finding.message}"},
        "locations": [_location(path, mark)],
        "properties": properties,
    }


def check_log(results: Iterable[tuple[str, Sequence["Finding"]]], templates: Mapping[str, Mapping[str, Any]],
              unreadable: Iterable[tuple[str, str]] = ()) -> dict[str, Any]:
    """The SARIF log of one ``smddp-infra check``: every SMDDP rule, every finding placed in its
    file; an unreadable input is a tool execution notification (and the run did not succeed)."""
    from smddp_infra.rules.engine import RULES

    rules = [_check_rule(rule) for rule in RULES]
    index = {rule.id: i for i, rule in enumerate(RULES)}
    out = []
    for path, findings in results:
        root = _compose(path) if findings else None
        out += [_check_result(path, f, root, templates.get(path, {}), index) for f in findings]
    return _log("smddp-infra check", rules, out, unreadable)


def _log(name: str, rules: list[dict[str, Any]], results: list[dict[str, Any]],
         unreadable: Iterable[tuple[str, str]] = ()) -> dict[str, Any]:
    """The log of one run of command ``name``."""
    from smddp_infra import __version__

    notes = [{"level": "error", "message": {"text": message}, "locations": [_location(path, None)]}
             for path, message in unreadable]
    driver = {"name": name, "version": __version__, "semanticVersion": __version__, "informationUri": RULES_DOC, "rules": rules}
    run = {
        "tool": {"driver": driver},
        # one category per command, so code scanning keeps check's and preflight's alerts apart
        "automationDetails": {"id": f"{name.replace(' ', '/')}/"},
        "invocations": [{"executionSuccessful": not notes, "toolExecutionNotifications": notes}],
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": VERSION, "runs": [run]}


# ---------------------------------------------------------------- preflight

#: ``NAME:LINE``, ``NAME:LINE: key``, ``NAME:LINE (ORIGIN line L)`` (a %%writefile script)
_AT_LINE = re.compile(r"^(?P<name>.+?):(?P<line>\d+)(?: \((?P<origin>.+?) line (?P<oline>\d+)\))?(?::|$)")
#: ``NAME cell C line L: key`` (a notebook's code)
_IN_CELL = re.compile(r"^(?P<name>.+?) cell (?P<cell>\d+)(?: line (?P<line>\d+))?(?::|$)")
#: ``NAME: key`` (a job file's key)
_KEY = re.compile(r"^(?P<name>[^:]+): (?P<key>[A-Za-z_][A-Za-z0-9_.]*)")


def _notebook_mark(path: Path, cell: int, line: Optional[int]) -> Optional[tuple[int, int]]:
    """The line of the cell's ``line``-th source line inside the .ipynb JSON (cells count from 1)."""
    root = _compose(path)
    _key, cells = _child(root, "cells")
    _named, node = _child(cells, cell - 1)
    _key, source = _child(node, "source")
    if source is None:
        return None
    _item, text = _child(source, (line or 1) - 1)
    return _mark(text if text is not None else source)


def _key_mark(path: Path, key: str) -> Optional[tuple[int, int]]:
    """The first mapping key ``key`` (its last dotted part) anywhere in a YAML/JSON job file."""
    import yaml

    wanted = key.split(".")[-1]
    stack = [_compose(path)]
    seen: set[int] = set()
    while stack:
        node = stack.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == wanted:
                    return _mark(k)
                stack.append(v)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return None


def place_preflight(location: str, files: Mapping[str, Path], default: Path) -> tuple[Path, Optional[tuple[int, int]]]:
    """(file, (line, column) or None) of a preflight location string; ``files`` maps the names
    locations use to the files on disk, ``default`` is the input (for ``label: key``)."""
    at = _AT_LINE.match(location)
    if at:
        script = files.get(at["name"])
        if at["origin"]:  # written by %%writefile: the cell of the notebook is the file on disk
            cell = _IN_CELL.match(at["origin"] + ":")
            if cell and cell["name"] in files and not (script and script.is_file()):
                return files[cell["name"]], _notebook_mark(files[cell["name"]], int(cell["cell"]), int(at["oline"]))
        if script is not None:
            return script, (int(at["line"]), 1)
    cell = _IN_CELL.match(location)
    if cell and cell["name"] in files:
        return files[cell["name"]], _notebook_mark(files[cell["name"]], int(cell["cell"]),
                                                   int(cell["line"]) if cell["line"] else None)
    key = _KEY.match(location)
    if key and key["name"] in files:
        return files[key["name"]], _key_mark(files[key["name"]], key["key"])
    return default, None


def _preflight_rule(rule: Any) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": re.sub(r"[^A-Za-z0-9]", "", rule.id.title()),
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": f"{rule.title}. At run time: {rule.symptom}"},
        "helpUri": PREFLIGHT_DOC,
        # a preflight rule's severity depends on the evidence (each result carries its own level)
        "defaultConfiguration": {"level": "warning"},
    }


def preflight_log(report: "PreflightReport") -> dict[str, Any]:
    """The SARIF log of one ``smddp-infra preflight``: every PF rule; each finding in its file and line."""
    from smddp_infra.preflight.findings import RULES

    files: dict[str, Path] = {report.path.name: report.path, report.job.path.name: report.job.path}
    for script in report.scripts:
        files.setdefault(script.name, script.path)
    ids = list(RULES)
    results = []
    for finding in report.findings:
        path, mark = place_preflight(finding.location, files, report.path)
        results.append({
            "ruleId": finding.rule_id,
            "ruleIndex": ids.index(finding.rule_id),
            "level": LEVELS[finding.severity],
            "message": {"text": f"{finding.message} Fix: {finding.fix}"},
            "locations": [_location(path, mark)],
            "properties": {"location": finding.location, "symptom": finding.symptom},
        })
    return _log("smddp-infra preflight", [_preflight_rule(r) for r in RULES.values()], results)
