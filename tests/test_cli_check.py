"""`smddp-infra check`: one line per finding, --json for CI, exit 1 on errors, 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    path = str(FIXTURES / "p3_union_bad.yaml")
    code, out, _ = run(capsys, path)
    lines = out.splitlines()
    assert code == 1 and len(lines) == 2
    assert lines[0].startswith(f"{path}: ComputeTemplate SMDDP-SG1 error: ")
    assert lines[1].startswith(f"{path}: ComputeTemplate SMDDP-SG2 error: ")


@pytest.mark.parametrize("name", ["fsx_throughput_low.yaml", "p3_fsx_1018_warn.yaml"])
def test_warnings_alone_exit_0(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, _ = run(capsys, str(FIXTURES / name))
    assert code == 0 and " warning: " in out and " error: " not in out


def test_info_notes_alone_exit_0_and_can_be_left_out(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "p2_unresolved_groups.yaml")
    code, out, _ = run(capsys, path)
    assert code == 0 and out.count("SMDDP-INFO1 info: ") == 6
    assert "!ImportValue shared-efa-sg" in out
    code, out, _ = run(capsys, "--no-info", path)
    assert code == 0 and out == ""


def test_json_output_for_ci(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--json", str(FIXTURES / "no_s3_route.yaml"), str(FIXTURES / "compliant.yaml"))
    payload = json.loads(out)
    assert code == 1 and payload["errors"] == 1 and payload["warnings"] == 1 and payload["unreadable"] == []
    first, second = payload["templates"]
    assert {(f["rule"], f["severity"]) for f in first["findings"]} == {("SMDDP-NET2", "error"), ("SMDDP-NET3", "warning")}
    assert all(f["resource"] == "TrainingSubnet" for f in first["findings"])
    assert second["findings"] == []


def test_json_names_the_triggering_assignment(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "--json", str(FIXTURES / "p5_version_metadata_bad.yaml"))
    # the file system lists no SecurityGroupIds: FSX3/FSX4 are "not evaluated" notes beside it
    (finding,) = [f for f in json.loads(out)["templates"][0]["findings"] if f["severity"] != "info"]
    assert finding["when"] == [{"DeploymentType": "PERSISTENT_2", "LustreVersion": "2.12"}]
    assert finding["message"].startswith("when DeploymentType=PERSISTENT_2 (default) and LustreVersion=2.12: ")
    assert finding["assignments"] == [{"DeploymentType": "PERSISTENT_2", "LustreVersion": "2.12"}]
    assert finding["default"] is False  # the defaults (LustreVersion 2.15) do not trigger it


def test_templates_cfninclude_rejects_are_judged(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(FIXTURES / "yes_booleans.yaml"))
    assert code == 1 and "FileSystem SMDDP-SG1" in out and "EFA-enabled file system FileSystem carries group FsxGroup" in out


def test_every_fixture_through_the_command_matches_the_shared_case_list(capsys: pytest.CaptureFixture[str]) -> None:
    from _template_cases import CASES, INFOS

    code, out, _ = run(capsys, "--json", *(str(FIXTURES / name) for name in sorted(CASES)))
    payload = json.loads(out)
    assert code == 1 and payload["unreadable"] == []
    by_file = {Path(t["template"]).name: t["findings"] for t in payload["templates"]}
    for name, expected in CASES.items():
        found = {(f["rule"], f["resource"]) for f in by_file[name] if f["severity"] != "info"}
        assert found == set(expected), name
    for name, expected in INFOS.items():
        assert {(f["rule"], f["resource"]) for f in by_file[name] if f["severity"] == "info"} == set(expected), name


def _tree(root: Path) -> Path:
    """A cdk.out-like directory: two stacks, a nested stack, and non-template JSON."""
    (root / "asm").mkdir(parents=True)
    (root / "asm" / "Nested.nested.template.json").write_text((FIXTURES / "p3_union_bad.yaml").read_text())
    (root / "Good.template.json").write_text((FIXTURES / "compliant.json").read_text())
    (root / "Bad.template").write_text((FIXTURES / "p4_efa_instance_bad.yaml").read_text())
    (root / "manifest.json").write_text(json.dumps({"version": "36.0.0", "artifacts": {}}))
    (root / "tree.json").write_text(json.dumps({"version": "tree-0.1", "tree": {"id": "App"}}))
    (root / "Good.assets.json").write_text(json.dumps({"version": "36.0.0", "files": {}}))
    (root / "cdk.out").write_text('{"version":"36.0.0"}')
    (root / "README.md").write_text("not a template")
    return root


def test_a_directory_means_every_template_under_it_and_skips_other_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path / "cdk.out")
    code, out, _ = run(capsys, "--json", str(root))
    payload = json.loads(out)
    judged = sorted(Path(t["template"]).name for t in payload["templates"])
    assert judged == ["Bad.template", "Good.template.json", "Nested.nested.template.json"]
    assert sorted(Path(p).name for p in payload["skipped"]) == ["Good.assets.json", "manifest.json", "tree.json"]
    assert code == 1 and payload["unreadable"] == []


def test_files_and_directories_mix_and_an_unreadable_file_does_not_stop_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path / "out")
    broken = tmp_path / "broken.yaml"
    broken.write_text("Resources: [")
    code, out, err = run(capsys, str(FIXTURES / "p3_union_ok.yaml"), str(broken), str(root), "/nonexistent/x.yaml")
    assert code == 2  # unreadable input wins over the error findings printed
    assert "Bad.template: Node SMDDP-SG1 error" in out and "Nested.nested.template.json: ComputeTemplate SMDDP-SG2 error" in out
    assert f"TEMPLATE {str(broken)!r}" in err and "'/nonexistent/x.yaml' is not a file" in err
    assert "2 input(s) could not be read" in err


def test_json_always_prints_a_document_even_when_nothing_could_be_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    code, out, _ = run(capsys, "--json", str(broken))
    payload = json.loads(out)
    assert code == 2 and payload["templates"] == [] and payload["unreadable"][0]["template"] == str(broken)


def test_an_empty_directory_is_bad_input_not_a_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a typo in CI (an empty or wrong directory) must not pass with "no findings in 0 template(s)"
    code, out, err = run(capsys, str(tmp_path))
    assert code == 2 and out == "" and err.count("\n") == 1 and "is a directory with no CloudFormation template" in err


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
    result = subprocess.run([sys.executable, "-c", code, str(FIXTURES / "p6_hyperpod_spread_bad.yaml")], capture_output=True, text=True)
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
        result = subprocess.run([sys.executable, "-m", "smddp_infra.cli", "check", *fmt, str(FIXTURES / "p3_union_bad.yaml")],
                                stdout=write, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr
    assert "Exception ignored" not in result.stderr
