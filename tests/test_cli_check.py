"""`smddp-infra check`: one line per finding, --json for CI, exit 1 on errors, 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from _rules_helpers import FIXTURES
from smddp_infra.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_compliant_template_exits_0_with_no_finding_lines(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(FIXTURES / "compliant.yaml"), str(FIXTURES / "compliant.json"))
    assert code == 0 and out == "" and "no findings in 2 template(s)" in err


def test_error_findings_exit_1_one_line_each_with_resource_rule_and_message(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "sg_inline.yaml")
    code, out, _ = run(capsys, path)
    lines = out.splitlines()
    assert code == 1 and len(lines) == 2
    assert lines[0].startswith(f"{path}: EfaGroup SMDDP-SG1 error: ")
    assert lines[1].startswith(f"{path}: EfaGroup SMDDP-SG2 error: ")


def test_warnings_alone_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(FIXTURES / "fsx_throughput_low.yaml"))
    assert code == 0 and "SMDDP-FSX2 warning" in out


def test_json_output_for_ci(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--json", str(FIXTURES / "no_s3_route.yaml"), str(FIXTURES / "compliant.yaml"))
    payload = json.loads(out)
    assert code == 1 and payload["errors"] == 2 and payload["warnings"] == 0
    first, second = payload["templates"]
    assert {f["rule"] for f in first["findings"]} == {"SMDDP-NET2", "SMDDP-NET3"}
    assert all(f["resource"] == "TrainingSubnet" and f["severity"] == "error" for f in first["findings"])
    assert second["findings"] == []


def test_templates_cfninclude_rejects_are_judged(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(FIXTURES / "yes_booleans.yaml"))
    assert code == 1 and "FsxGroup SMDDP-SG1" in out and "on EFA-enabled file system FileSystem" in out


@pytest.mark.parametrize("content", ["Resources: [", "just a string", "Resources: [1, 2]"])
def test_unreadable_templates_exit_2_with_one_line(tmp_path, capsys: pytest.CaptureFixture[str], content: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    code, out, err = run(capsys, str(bad))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("smddp-infra check: error: TEMPLATE") and "bad.yaml" in err


def test_a_missing_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "/nonexistent/template.yaml")
    assert code == 2 and "is not a file" in err


def test_the_installed_command_runs_without_cdk() -> None:
    code = (
        "import sys; from smddp_infra.cli import main; rc = main(['check', sys.argv[1]]);"
        "bad=[m for m in sys.modules if m.split('.')[0] in ('aws_cdk','jsii','cdk_nag')]; sys.exit(rc if not bad else 99)"
    )
    result = subprocess.run([sys.executable, "-c", code, str(FIXTURES / "az_mismatch.yaml")], capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert "SMDDP-NET1" in result.stdout
