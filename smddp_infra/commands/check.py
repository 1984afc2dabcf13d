"""``smddp-infra check TEMPLATE|DIR...``: judge raw CloudFormation templates with the SMDDP rules.

Templates are read with :mod:`smddp_infra.rules.loader` (PyYAML with CloudFormation's
short-form tags ``!Ref``, ``!GetAtt``, ``!Sub`` ..., and JSON), so nothing goes through jsii,
``CfnInclude`` (which rejects templates CloudFormation accepts, e.g. booleans written
``"Yes"``) or cfn-lint (whose import alone costs about a second).

Built for CI: a directory stands for every ``*.json``, ``*.yaml``, ``*.yml`` and
``*.template`` under it (so ``smddp-infra check cdk.out`` judges every stack and nested
stack); inside a directory, files that read as YAML/JSON but are not templates (no mapping
with ``Resources``: cdk.out's manifest.json, tree.json, ``*.assets.json``, config files) are
skipped by content. A file that cannot be read at all (broken YAML, an alias bomb, past 1 MB,
not UTF-8) is reported with its reason, whether named or found in a directory: a template
with a typo must not pass CI as "no findings". The one exception is a cloud assembly's
``asset.*`` directories, where CDK copies the app's Lambda code and Docker contexts (a Helm
chart's ``{{ }}`` is not YAML): those are skipped like other non-templates. The rest are
still judged and printed, and the exit code says the worst: 2 when any input was unreadable,
else 1 when any finding is an error, else 0. ``--json`` always prints one document
(unreadable inputs under ``"unreadable"``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Optional

from smddp_infra.commands._output import print_json
from smddp_infra.commands._parallel import Runner, parse_jobs
from smddp_infra.errors import ConfigError

HELP = "Check CloudFormation templates (YAML or JSON) against the SMDDP infrastructure rules."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "templates",
        nargs="+",
        metavar="TEMPLATE",
        help="CloudFormation template files (YAML or JSON) or directories (every *.json, *.yaml, *.yml, *.template under them)",
    )
    parser.add_argument(
        "--jobs",
        metavar="N",
        help="read and judge files in N processes (default: every CPU this process may use; 1: in this process alone); "
             "the output is the same for any N",
    )
    parser.add_argument("--no-info", action="store_true", help="leave out informational findings (values the template does not resolve)")
    parser.add_argument("--json", action="store_true", help="print findings as JSON (for CI); the same as --format json")
    add_format_argument(parser)
    parser.add_argument(
        "--region",
        default=None,
        help="resolve AWS::Region to this region (default: leave it unknown; service names still match)",
    )


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    """``--format text|json|sarif``: check and preflight offer the same three."""
    parser.add_argument("--format", choices=("text", "json", "sarif"), default=None,
                        help="text (default), json (as --json) or sarif (SARIF 2.1.0, for GitHub code scanning)")


def output_format(args: argparse.Namespace) -> str:
    """The one format asked for: ``--json`` is ``--format json``; ``--json --format sarif`` is a contradiction."""
    if args.json and args.format not in (None, "json"):
        raise ConfigError(f"--json and --format {args.format} ask for two formats: give one (--format json is --json)")
    return "json" if args.json else args.format or "text"


_SHAPE = "a CloudFormation template must be a mapping with Resources"


class NotATemplate(ConfigError):
    """The file reads as YAML/JSON (or is empty) but is no template: skipped inside a directory."""


def load_template(path: str) -> dict[str, Any]:
    """Read one template with the light loader; raise ConfigError naming the file and the problem."""

    from smddp_infra.rules.loader import TemplateSyntaxError, load_template_text

    if not os.path.isfile(path):
        raise ConfigError(f"TEMPLATE {path!r} is not a file")
    text = _require_text(path)
    try:
        template = load_template_text(text)
    except TemplateSyntaxError as exc:
        raise ConfigError(f"TEMPLATE {path!r} is not a readable CloudFormation template: {exc}") from None
    if template is None:
        raise NotATemplate(f"TEMPLATE {path!r} is not a readable CloudFormation template: empty document")
    if not isinstance(template, dict):
        raise NotATemplate(f"TEMPLATE {path!r}: {_SHAPE}, got {_kind(template)}")
    if "Resources" not in template:
        raise NotATemplate(f"TEMPLATE {path!r} has no Resources: {_SHAPE}")
    if not isinstance(template["Resources"], dict):
        raise NotATemplate(
            f"TEMPLATE {path!r}: Resources must be a mapping of logical IDs to resources, got {_kind(template['Resources'])}"
        )
    return template


def _require_text(path: str) -> str:
    """The file's text: CloudFormation reads templates as UTF-8 text (YAML or JSON) and
    rejects an empty one; say which byte is not text rather than a decoder's message."""
    with open(path, "rb") as handle:
        data = handle.read()
    if not data.strip():
        raise NotATemplate(f"TEMPLATE {path!r} is empty: {_SHAPE}")
    try:
        return data.decode("utf-8-sig")  # a BOM is not part of the template
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"TEMPLATE {path!r} is not a text file (byte {exc.start} is not UTF-8): "
            "a CloudFormation template is YAML or JSON text"
        ) from None


def _kind(value: Any) -> str:
    """The YAML/JSON kind of a decoded value, in words (never a parser's type name)."""
    for base, name in ((bool, "a boolean"), (dict, "a mapping"), (list, "a list"), (str, "a string"), ((int, float), "a number")):
        if isinstance(value, base):
            return name
    return "nothing" if value is None else type(value).__name__


TEMPLATE_SUFFIXES = (".json", ".yaml", ".yml", ".template")


def expand_inputs(paths: list[str]) -> list[tuple[str, bool]]:
    """(file, named explicitly?) for every input: directories recurse into template suffixes, sorted."""

    out: list[tuple[str, bool]] = []
    for path in paths:
        if os.path.isdir(path):
            found = []
            for root, dirs, files in os.walk(path):
                dirs.sort()
                found += [os.path.join(root, f) for f in sorted(files) if f.lower().endswith(TEMPLATE_SUFFIXES)]
            out += [(f, False) for f in found]
        else:
            out.append((path, True))
    return out


def _in_assets(path: str) -> bool:
    """Under an ``asset.*`` directory of a cloud assembly (a folder beside manifest.json)."""
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.dirname(folder) != folder:
        if os.path.basename(folder).startswith("asset.") and os.path.isfile(os.path.join(os.path.dirname(folder),
                                                                                          "manifest.json")):
            return True
        folder = os.path.dirname(folder)
    return False


def _under(path: str, directory: str) -> bool:

    return os.path.commonpath([os.path.abspath(path), os.path.abspath(directory)]) == os.path.abspath(directory)


def _assets(path: str) -> dict[str, str]:
    """{S3 object key: local file} of a CDK ``*.assets.json`` (how a nested stack's TemplateURL
    names the file beside it); {} for anything else."""
    try:
        with open(path, encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (OSError, ValueError):
        return {}
    out: dict[str, str] = {}
    files = manifest.get("files") if isinstance(manifest, dict) else None
    for entry in (files.values() if isinstance(files, dict) else ()):
        source = entry.get("source", {}).get("path") if isinstance(entry, dict) else None
        for destination in (entry.get("destinations") or {}).values() if isinstance(entry, dict) else ():
            key = destination.get("objectKey") if isinstance(destination, dict) else None
            if isinstance(key, str) and isinstance(source, str):
                out[key] = source
    return out


def judge(
    templates: dict[str, dict[str, Any]],
    *,
    region: Optional[str] = None,
    assets: Optional[dict[str, dict[str, str]]] = None,
    runner: Optional[Runner] = None,
) -> tuple[dict[str, list[Any]], list[Any]]:
    """({file: findings}, systems): templates linked by exports, nested stacks or SSM parameters
    are judged as one system (rules/system.py), each finding back on its own file; the rest alone.
    A ``runner`` spreads the judging (one call per template or system) over its processes."""
    from smddp_infra.rules.system import link_templates

    systems, alone = link_templates(templates, assets=assets, region=region)
    by_path = {os.path.normpath(p): p for p in templates}
    out: dict[str, list[Any]] = {p: [] for p in templates}
    tasks = [(templates[by_path[normal]], region) for normal in alone] + [(system.template, region) for system in systems]
    weights = [1] * len(alone) + [len(system.paths) for system in systems]
    found = runner.map("checked", "templates", _check_one, tasks, weights) if runner else list(map(_check_one, tasks))
    for normal, findings in zip(alone, found):
        out[by_path[normal]] = findings
    for system, findings in zip(systems, found[len(alone):]):
        for finding in findings:
            normal, placed = system.place(finding)
            out[by_path[normal]].append(placed)
    return out, systems


def _read_one(path: str) -> tuple[Optional[dict[str, Any]], Optional[ConfigError]]:
    """(template, None), or (None, why not): the reading a worker process does for one file."""
    try:
        return load_template(path), None
    except ConfigError as exc:
        return None, exc


def _check_one(task: tuple[Any, Optional[str]]) -> list[Any]:
    """The findings of one template or joined system: the judging a worker process does."""
    from smddp_infra.rules import check_template

    template, region = task
    return check_template(template, region=region)


def run(args: argparse.Namespace) -> int:
    from smddp_infra.rules import Severity

    fmt = output_format(args)
    if args.region is not None:
        from smddp_infra.account import check_region

        check_region(args.region)
    results: list[tuple[str, list[Any]]] = []
    unreadable: list[tuple[str, str]] = []
    skipped: list[str] = []
    templates: dict[str, dict[str, Any]] = {}
    assets: dict[str, dict[str, str]] = {}
    inputs = expand_inputs(args.templates)
    files = list(dict.fromkeys(path for path, _ in inputs))
    with Runner(parse_jobs(args.jobs), len(files)) as runner:
        read = dict(zip(files, runner.map("read", "files", _read_one, files)))
        for path, explicit in inputs:
            template, exc = read[path]
            if path in templates:
                continue
            if template is not None:
                templates[path] = template
            elif explicit or not (isinstance(exc, NotATemplate) or _in_assets(path)):
                unreadable.append((path, str(exc)))
            else:
                skipped.append(path)
                if path.endswith(".assets.json"):
                    assets.setdefault(os.path.dirname(os.path.normpath(path)), {}).update(_assets(path))
        judged_findings, systems = judge(templates, region=args.region, assets=assets, runner=runner)
    for path, findings in judged_findings.items():
        if args.no_info:
            findings = [f for f in findings if f.severity is not Severity.INFO]
        results.append((path, findings))
    # A directory with no template in it (a typo, an empty cdk.out) is bad input, not a pass:
    # "no findings in 0 template(s)" and exit 0 would let a CI typo through.
    judged = {path for path, _ in results}
    for directory in (p for p in args.templates if os.path.isdir(p)):
        if not any(_under(path, directory) for path in judged):
            unreadable.append((directory, f"TEMPLATE {directory!r} is a directory with no CloudFormation template in it "
                                          f"(no {', '.join('*' + s for s in TEMPLATE_SUFFIXES)} file with Resources)"))

    def count(severity: Severity) -> int:
        return sum(f.severity is severity for _, fs in results for f in fs)

    if fmt == "sarif":
        from smddp_infra.sarif import check_log

        print_json(check_log(results, templates, unreadable))
    elif fmt == "json":
        payload = {
            "templates": [{"template": path, "findings": [f.as_dict() for f in findings]} for path, findings in results],
            "systems": [
                {"templates": list(system.paths), "links": [link.describe() for link in system.links]} for system in systems
            ],
            "unreadable": [{"template": path, "error": message} for path, message in unreadable],
            "skipped": skipped,
            "errors": count(Severity.ERROR),
            "warnings": count(Severity.WARNING),
            "infos": count(Severity.INFO),
        }
        print_json(payload)
    else:
        total = 0
        for path, findings in results:
            for f in findings:
                total += 1
                print(f"{path}: {f.resource} {f.rule_id} {f.severity.value}: {f.message}")
        for system in systems:
            print(f"judged as one system: {' + '.join(system.paths)} ("
                  + "; ".join(link.describe() for link in system.links) + ")", file=sys.stderr)
        for _path, message in unreadable:
            print(f"smddp-infra check: error: {message}", file=sys.stderr)
        checked = len(results)
        if results or not unreadable:  # a single unreadable input stays one line
            summary = f"{total} finding(s) in {checked} template(s)" if total else f"no findings in {checked} template(s)"
            if unreadable:
                summary += f"; {len(unreadable)} input(s) could not be read"
            print(summary, file=sys.stderr)
    if unreadable:
        return 2
    return 1 if count(Severity.ERROR) else 0
