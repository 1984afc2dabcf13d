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


@pytest.mark.parametrize(
    "content, expected",
    [
        ("- a\n- b\n", ": a CloudFormation template must be a mapping with Resources, got a list"),
        ("just a string", ": a CloudFormation template must be a mapping with Resources, got a string"),
        ("Resources: [1, 2]", ": Resources must be a mapping of logical IDs to resources, got a list"),
        ("AWSTemplateFormatVersion: '2010-09-09'\n", " has no Resources: a CloudFormation template must be a mapping with Resources"),
        ("", " is empty: a CloudFormation template must be a mapping with Resources"),
    ],
)
def test_a_template_of_the_wrong_shape_is_named_in_words_not_parser_types(tmp_path, capsys, content: str, expected: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    code, out, err = run(capsys, str(bad))
    assert code == 2 and out == ""
    assert err == f"smddp-infra check: error: TEMPLATE {str(bad)!r}{expected}\n"
    assert "_node" not in err


def test_a_binary_file_is_one_line_naming_the_file(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "template.yaml"
    binary.write_bytes(b"Resources:\n\x00\x01\xff\xfe\x80")
    code, out, err = run(capsys, str(binary))
    assert code == 2 and out == ""
    assert err == (f"smddp-infra check: error: TEMPLATE {str(binary)!r} is not a text file (byte 13 is not UTF-8): "
                   "a CloudFormation template is YAML or JSON text\n")
    assert "{filename}" not in err


@pytest.mark.parametrize("fmt", [["--json"], []])
def test_a_closed_pipe_is_quiet_and_keeps_the_exit_code(fmt: list[str]) -> None:
    import os

    read, write = os.pipe()
    os.close(read)  # `smddp-infra check --json ... | head -1` once head has its line
    try:
        result = subprocess.run([sys.executable, "-m", "smddp_infra.cli", "check", *fmt, str(FIXTURES / "sg_inline.yaml")],
                                stdout=write, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr
    assert "Exception ignored" not in result.stderr
