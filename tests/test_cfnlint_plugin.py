"""`cfn-lint --append-rules smddp_infra.rules.cfnlint_plugin` reports the SMDDP rules.

cfn-lint runs in a subprocess, exactly as a team would run it, once per loading style.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _rules_helpers import FIXTURES

PLUGIN_DIR = Path(__file__).resolve().parent.parent / "smddp_infra" / "rules" / "cfnlint_plugin"
CFN_LINT = [str(Path(sys.executable).parent / "cfn-lint")]  # the console script the venv installs
FILES = ["compliant.yaml", "sg_inline.yaml", "sg_egress_missing.json", "fsx_invalid.yaml", "fsx_throughput_low.yaml", "lustre_ports.yaml", "az_mismatch.yaml", "no_s3_route.yaml"]


def lint(append: str) -> list[dict]:
    result = subprocess.run(
        [*CFN_LINT, "--append-rules", append, "--format", "json", "--", *(str(FIXTURES / f) for f in FILES)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert result.returncode in (0, 2, 4, 6, 8, 10, 12, 14), result.stderr  # cfn-lint's bit-flag exit codes
    return json.loads(result.stdout)


@pytest.fixture(scope="module", params=["module", "directory"])
def matches(request: pytest.FixtureRequest) -> list[dict]:
    return lint("smddp_infra.rules.cfnlint_plugin" if request.param == "module" else str(PLUGIN_DIR))


def ours(matches: list[dict]) -> set[tuple[str, str, str]]:
    return {
        (Path(m["Filename"]).name, m["Rule"]["Id"], m["Location"]["Path"][1])
        for m in matches
        if m["Rule"]["Id"][1] == "9"
    }


def test_findings_appear_under_the_mapped_cfn_lint_ids(matches: list[dict]) -> None:
    assert ours(matches) == {
        ("sg_inline.yaml", "E9101", "EfaGroup"),
        ("sg_inline.yaml", "E9102", "EfaGroup"),
        ("sg_egress_missing.json", "E9102", "TrainingGroup"),
        ("fsx_invalid.yaml", "E9201", "ParameterisedFileSystem"),
        ("fsx_invalid.yaml", "E9201", "OldVersionFileSystem"),
        ("fsx_invalid.yaml", "E9201", "NoThroughputFileSystem"),
        ("fsx_throughput_low.yaml", "W9202", "FileSystem"),
        ("lustre_ports.yaml", "E9203", "StorageGroup"),
        ("az_mismatch.yaml", "E9301", "FileSystem"),
        ("no_s3_route.yaml", "E9302", "TrainingSubnet"),
        ("no_s3_route.yaml", "E9303", "TrainingSubnet"),
    }


def test_the_compliant_template_gets_none_of_our_findings(matches: list[dict]) -> None:
    assert not [m for m in matches if Path(m["Filename"]).name == "compliant.yaml" and m["Rule"]["Id"][1] == "9"]


def test_matches_carry_the_smddp_id_level_and_a_line_number(matches: list[dict]) -> None:
    (match,) = [m for m in matches if m["Rule"]["Id"] == "W9202"]
    assert match["Message"].startswith("SMDDP-FSX2: ")
    assert match["Level"] == "Warning"
    assert match["Location"]["Start"]["LineNumber"] == 5  # the FileSystem resource in fsx_throughput_low.yaml
    errors = [m for m in matches if m["Rule"]["Id"] == "E9101"]
    assert errors and all(m["Level"] == "Error" for m in errors)


def test_plugin_classes_are_only_the_rule_classes() -> None:
    import cfnlint.helpers

    import smddp_infra.rules.cfnlint_plugin as plugin
    from smddp_infra.rules import RULES

    created = cfnlint.helpers.create_rules(plugin)
    assert sorted(r.id for r in created) == sorted(r.cfn_lint_id for r in RULES)
