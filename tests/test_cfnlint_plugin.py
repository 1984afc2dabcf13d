"""`cfn-lint --append-rules smddp_infra.rules.cfnlint_plugin` reports the SMDDP rules.

cfn-lint runs in a subprocess, exactly as a team would run it, once per loading style,
over EVERY fixture of the shared case list (tests/_template_cases.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _rules_helpers import FIXTURES
from _template_cases import CASES, INFOS

PLUGIN_DIR = Path(__file__).resolve().parent.parent / "smddp_infra" / "rules" / "cfnlint_plugin"
CFN_LINT = [str(Path(sys.executable).parent / "cfn-lint")]  # the console script the venv installs


def lint(append: str, *extra: str) -> list[dict]:
    result = subprocess.run(
        [*CFN_LINT, "--append-rules", append, "--format", "json", *extra, "--", *(str(FIXTURES / f) for f in sorted(CASES))],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert result.returncode in range(16), result.stderr  # cfn-lint's bit-flag exit codes
    return json.loads(result.stdout)


@pytest.fixture(scope="module", params=["module", "directory"])
def matches(request: pytest.FixtureRequest) -> list[dict]:
    return lint("smddp_infra.rules.cfnlint_plugin" if request.param == "module" else str(PLUGIN_DIR), "--include-checks", "I")


def ours(matches: list[dict], levels: tuple[str, ...] = ("Error", "Warning")) -> dict[str, set[tuple[str, str]]]:
    """file -> {(SMDDP rule id, resource)} of our matches at these levels."""
    from smddp_infra.rules import RULES

    by_cfn_id = {rule.cfn_lint_id: rule.id for rule in RULES}
    out: dict[str, set[tuple[str, str]]] = {name: set() for name in CASES}
    for m in matches:
        if m["Rule"]["Id"] in by_cfn_id and m["Level"] in levels:
            out[Path(m["Filename"]).name].add((by_cfn_id[m["Rule"]["Id"]], m["Location"]["Path"][1]))
    return out


def test_every_fixture_gets_exactly_the_expected_findings(matches: list[dict]) -> None:
    assert ours(matches) == {name: set(expected) for name, expected in CASES.items()}


def test_info_notes_appear_as_informational_with_include_checks(matches: list[dict]) -> None:
    infos = ours(matches, ("Informational",))
    for name, expected in INFOS.items():
        assert infos[name] == set(expected)


def test_matches_carry_the_smddp_id_level_and_a_line_number(matches: list[dict]) -> None:
    (match,) = [m for m in matches if m["Rule"]["Id"] == "W9202"]
    assert match["Message"].startswith("SMDDP-FSX2: ")
    assert match["Level"] == "Warning"
    assert match["Location"]["Start"]["LineNumber"] == 5  # the FileSystem resource in fsx_throughput_low.yaml
    errors = [m for m in matches if m["Rule"]["Id"] == "E9101"]
    assert errors and all(m["Level"] == "Error" for m in errors)


def test_conditional_findings_name_their_assignment(matches: list[dict]) -> None:
    (match,) = [m for m in matches if Path(m["Filename"]).name == "p5_efa_if_bad.yaml" and m["Rule"]["Id"] == "W9206"]
    assert match["Message"].startswith("SMDDP-FSX6: when EnableEfa=true: ")
    (match,) = [m for m in matches if Path(m["Filename"]).name == "p5_version_metadata_bad.yaml" and m["Rule"]["Id"] == "E9201"]
    assert match["Message"].startswith("SMDDP-FSX1: when DeploymentType=PERSISTENT_2 (default) and LustreVersion=2.12: ")


def test_plugin_classes_are_only_the_rule_classes() -> None:
    import cfnlint.helpers

    import smddp_infra.rules.cfnlint_plugin as plugin
    from smddp_infra.rules import RULES

    created = cfnlint.helpers.create_rules(plugin)
    assert sorted(r.id for r in created) == sorted(r.cfn_lint_id for r in RULES)
