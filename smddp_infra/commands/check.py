"""``smddp-infra check TEMPLATE...``: judge raw CloudFormation templates with the SMDDP rules.

Templates are read with cfn-lint's own decoder, so YAML short-form tags (``!Ref``,
``!GetAtt``, ``!Sub`` ...) and JSON both work, and nothing goes through jsii or
``CfnInclude`` (which rejects templates CloudFormation accepts, e.g. booleans written
``"Yes"``). Exit 1 when any finding is an error, 0 otherwise, 2 on unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from smddp_infra.commands._output import pipe_safe_stdout
from smddp_infra.errors import ConfigError

HELP = "Check CloudFormation templates (YAML or JSON) against the SMDDP infrastructure rules."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("templates", nargs="+", metavar="TEMPLATE", help="CloudFormation template files (YAML or JSON)")
    parser.add_argument("--json", action="store_true", help="print findings as JSON (for CI)")
    parser.add_argument(
        "--region",
        default=None,
        help="resolve AWS::Region to this region (default: leave it unknown; service names still match)",
    )


_SHAPE = "a CloudFormation template must be a mapping with Resources"


def load_template(path: str) -> dict[str, Any]:
    """Read one template with cfn-lint's decoder; raise ConfigError naming the file and the problem."""
    import logging
    import os

    from cfnlint.decode import decode

    if not os.path.isfile(path):
        raise ConfigError(f"TEMPLATE {path!r} is not a file")
    _require_text(path)
    quiet = logging.getLogger("cfnlint")  # decode() also logs what it returns; say it once
    if not any(isinstance(h, logging.NullHandler) for h in quiet.handlers):
        quiet.addHandler(logging.NullHandler())
    template, matches = decode(path)
    if matches or template is None:
        detail = matches[0].message if matches else "empty document"
        raise ConfigError(f"TEMPLATE {path!r} is not a readable CloudFormation template: {detail}")
    if not isinstance(template, dict):
        raise ConfigError(f"TEMPLATE {path!r}: {_SHAPE}, got {_kind(template)}")
    if "Resources" not in template:
        raise ConfigError(f"TEMPLATE {path!r} has no Resources: {_SHAPE}")
    if not isinstance(template["Resources"], dict):
        raise ConfigError(
            f"TEMPLATE {path!r}: Resources must be a mapping of logical IDs to resources, got {_kind(template['Resources'])}"
        )
    return template


def _require_text(path: str) -> None:
    """CloudFormation reads templates as UTF-8 text (YAML or JSON) and rejects an empty one.
    cfn-lint reports non-UTF-8 bytes as "Cannot read file contents: {filename}" with the
    placeholder unfilled, and an empty file as an empty template, so say it here."""
    with open(path, "rb") as handle:
        data = handle.read()
    if not data.strip():
        raise ConfigError(f"TEMPLATE {path!r} is empty: {_SHAPE}")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"TEMPLATE {path!r} is not a text file (byte {exc.start} is not UTF-8): "
            "a CloudFormation template is YAML or JSON text"
        ) from None


def _kind(value: Any) -> str:
    """The YAML/JSON kind of a decoded value, in words (cfn-lint's node classes such as
    ``list_node`` subclass the plain types; their names mean nothing to a user)."""
    for base, name in ((bool, "a boolean"), (dict, "a mapping"), (list, "a list"), (str, "a string"), ((int, float), "a number")):
        if isinstance(value, base):
            return name
    return "nothing" if value is None else type(value).__name__


def run(args: argparse.Namespace) -> int:
    from smddp_infra.rules import Severity, check_template

    results = []
    for path in args.templates:
        template = load_template(path)
        results.append((path, check_template(template, region=args.region)))

    failed = any(f.severity is Severity.ERROR for _, findings in results for f in findings)
    with pipe_safe_stdout():  # `check --json ... | head -1`: stop quietly, keep the exit code
        if args.json:
            payload = {
                "templates": [{"template": path, "findings": [f.as_dict() for f in findings]} for path, findings in results],
                "errors": sum(f.severity is Severity.ERROR for _, fs in results for f in fs),
                "warnings": sum(f.severity is Severity.WARNING for _, fs in results for f in fs),
            }
            json.dump(payload, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            total = 0
            for path, findings in results:
                for f in findings:
                    total += 1
                    print(f"{path}: {f.resource} {f.rule_id} {f.severity.value}: {f.message}")
            checked = len(results)
            print(f"{total} finding(s) in {checked} template(s)" if total else f"no findings in {checked} template(s)", file=sys.stderr)
    return 1 if failed else 0
