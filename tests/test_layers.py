"""Floors, from the ground up, and every import runs down or along a floor, never up.

    ground (errors, partitions) < facts < pure rooms < constructs/ < the app

A pure room is installable without aws-cdk-lib (the CLI, the rules on any template, the
runtime helpers in a training image), so it never imports ``aws_cdk``, ``jsii``, ``constructs``
or ``cdk_nag``; and the AWS facts are written once, in facts/, so their literals (the patterns
and the subnet arithmetic) appear nowhere else. The graph is the one test_import_graph reads
from the source (function-level and TYPE_CHECKING imports included).

Known breaches are listed with what mends them; the lists must shrink: an entry that no longer
holds fails the test until it is removed.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from test_import_graph import ROOT, _modules, import_graph

GROUND, FACTS, PURE, CONSTRUCTS, APP = range(5)
FLOOR_NAMES = ("ground", "facts", "pure rooms", "constructs", "app")
#: Room (``smddp_infra.<room>``; the package itself is "smddp_infra") -> floor.
FLOORS: dict[str, int] = {
    "errors": GROUND, "partitions": GROUND,
    "facts": FACTS,
    # settings reads the app's context, but as plain values (no aws_cdk): a pure parser of the
    # schema's fields, so review and job-config tools may read its tables; a construct may not.
    **{room: PURE for room in ("account", "contract", "diagnose", "guardrails", "hyperpod", "jobconfig", "observe",
                               "preflight", "review", "rules", "schema", "settings", "sizing", "spec", "training")},
    "constructs": CONSTRUCTS,
    # sarif renders the commands' findings and mcp_server serves the commands: faces of the CLI, as they are
    **{room: APP for room in ("app_builder", "checks", "cli", "commands", "mcp_server", "sarif", "stack", "smddp_infra")},
}
CDK_PACKAGES = frozenset({"aws_cdk", "jsii", "constructs", "cdk_nag"})

#: Imports that break a rule of this file today: (importer, imported module) -> what mends it.
KNOWN_BREACHES: dict[tuple[str, str], str] = {
}


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _external_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def breaches() -> dict[tuple[str, str], str]:
    """Every import that runs up a floor, reaches aws-cdk-lib from below constructs/, has a
    construct read the app's settings, or has the schema import job-config."""
    found: dict[tuple[str, str], str] = {}
    for importer, targets in import_graph().items():
        floor = FLOORS[room(importer)]
        for target in targets:
            if FLOORS[room(target)] > floor:
                found[(importer, target)] = f"{FLOOR_NAMES[floor]} imports {FLOOR_NAMES[FLOORS[room(target)]]}"
            elif room(importer) == "constructs" and room(target) == "settings":
                found[(importer, target)] = "a construct reads the app's settings"
            elif room(importer) == "schema" and room(target) == "jobconfig":
                found[(importer, target)] = "the schema imports job-config"
    for module, path in _modules().items():
        if FLOORS[room(module)] <= PURE:
            for package in sorted(_external_imports(path) & CDK_PACKAGES):
                found[(module, package)] = f"a {FLOOR_NAMES[FLOORS[room(module)]]} module imports {package}"
    return found


def test_every_room_has_a_floor() -> None:
    assert sorted({room(module) for module in _modules()} - set(FLOORS)) == []


def test_no_import_runs_up_a_floor_beyond_the_known_ones() -> None:
    found = breaches()
    new = {pair: why for pair, why in found.items() if pair not in KNOWN_BREACHES}
    mended = sorted(set(KNOWN_BREACHES) - set(found))
    assert new == {}, f"imports that run up: {new}"
    assert mended == [], f"mended: remove these from KNOWN_BREACHES: {mended}"


def test_the_reader_sees_an_upward_import_and_a_cdk_import_in_a_pure_room(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = {"smddp_infra.facts.x": {"smddp_infra.sizing.y"}, "smddp_infra.sizing.y": set()}
    here = sys.modules[__name__]
    monkeypatch.setattr(here, "import_graph", lambda: graph)
    monkeypatch.setattr(here, "_modules", lambda: {"smddp_infra.sizing.y": Path(__file__)})
    monkeypatch.setattr(here, "_external_imports", lambda path: {"aws_cdk", "re"})
    assert breaches() == {("smddp_infra.facts.x", "smddp_infra.sizing.y"): "facts imports pure rooms",
                          ("smddp_infra.sizing.y", "aws_cdk"): "a pure rooms module imports aws_cdk"}


# --- each fact once ------------------------------------------------------------------------------

#: A string literal outside facts/ (docstrings aside) that carries one of these is a second copy of a fact.
FACT_PATTERNS: dict[str, "re.Pattern[str]"] = {
    "SageMaker name (facts.names.NAME)": re.compile(re.escape("(-*[a-zA-Z0-9])")),
    "AZ ID (facts.regions.AZ_ID)": re.compile(r"-az(\\d|\[0-9\])"),
    "Region name (facts.regions.REGION)": re.compile(re.escape("(-gov|-iso")),
    "ARN (facts.arns)": re.compile(re.escape("arn:aws[a-z")),
    # a bucket name's shape: a letter or digit, the middle, a letter or digit at the end (an FSx DNS name
    # pattern, which goes on to ".fsx.", is another fact)
    "S3 bucket name (facts.s3)": re.compile(r"\[a-z0-9\]\[a-z0-9\.-\](\{1,61\}|\*)\[a-z0-9\]"),
    "prefix list id (facts.regions.PREFIX_LIST_ID)": re.compile(re.escape("pl-[0-9a-f]")),
}

#: Copies that remain in files outside this change: (module, fact) -> who mends it.
KNOWN_COPIES: dict[tuple[str, str], str] = {
}


def _fact_copies(tree: ast.AST) -> set[str]:
    """The facts whose pattern a string literal of ``tree`` repeats, and subnet arithmetic
    (``2 ** (32 - mask)``, ``.num_addresses``, ``log2``) done by hand."""
    found: set[str] = set()
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.update(name for name, fingerprint in FACT_PATTERNS.items() if fingerprint.search(node.value))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Constant) \
                and node.left.value == 2 and isinstance(node.right, ast.BinOp) \
                and isinstance(node.right.left, ast.Constant) and node.right.left.value == 32:
            found.add("subnet size (facts.subnets.usable_addresses)")
        elif isinstance(node, ast.Attribute) and node.attr in ("num_addresses", "log2"):
            found.add("subnet size (facts.subnets.usable_addresses)")
    return found


def fact_copies() -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for module, path in _modules().items():
        if room(module) == "facts":
            continue
        for fact in _fact_copies(ast.parse(path.read_text(encoding="utf-8"))):
            found[(module, fact)] = str(path.relative_to(ROOT.parent))
    return found


def test_each_facts_literal_is_written_once_in_facts() -> None:
    found = fact_copies()
    new = {pair: where for pair, where in found.items() if pair not in KNOWN_COPIES}
    mended = sorted(set(KNOWN_COPIES) - set(found))
    assert new == {}, f"a fact written again outside smddp_infra/facts: {new}"
    assert mended == [], f"mended: remove these from KNOWN_COPIES: {mended}"


def test_the_reader_sees_a_copied_pattern_and_hand_made_subnet_arithmetic() -> None:
    source = '''
import math, re
NAME = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9])*")
ok = re.fullmatch(r"subnet-[0-9a-f]{8,17}", value)
zone = re.fullmatch(r"[a-z]{2,}[0-9]+-az[0-9]+", value)
usable = 2 ** (32 - mask) - 5
wanted = 32 - math.ceil(math.log2(needed))
'''
    assert _fact_copies(ast.parse(source)) == {"SageMaker name (facts.names.NAME)", "AZ ID (facts.regions.AZ_ID)",
                                               "subnet size (facts.subnets.usable_addresses)"}
