"""`smddp-infra preflight`: exit codes, human and JSON output, and no aws_cdk import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from smddp_infra.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "preflight"
ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command, piped (not a terminal)."""
    full_env = {k: v for k, v in os.environ.items() if k not in {"FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "COLUMNS"}}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "smddp_infra.cli", "preflight", *args],
                          capture_output=True, text=True, cwd=ROOT, env=full_env)


def test_good_job_exits_0_with_a_no_findings_summary(capsys):
    assert main(["preflight", str(FIXTURES / "good" / "job.yaml")]) == 0
    out = capsys.readouterr().out
    assert out.strip() == "preflight job.yaml (scripts: train.py): no findings"


def test_error_findings_exit_1_and_print_rule_location_symptom_and_fix(capsys):
    code = main(["preflight", str(FIXTURES / "bad" / "job.yaml"), "--outputs", str(FIXTURES / "outputs" / "cdk-outputs.json")])
    out = capsys.readouterr().out
    assert code == 1
    assert "ERROR   PF-DEBUGGER-CHECKPOINT  job.yaml: debugger_hook_config" in out
    assert "  symptom: SMDebug Does Not Currently Support Distributed Training Jobs With Checkpointing Enabled" in out
    assert "  fix:     set debugger_hook_config: false" in out
    assert "WARNING PF-DEPRECATED-SMDDP-API  train.py:2" in out
    assert out.rstrip().endswith("preflight job.yaml (scripts: train.py): 2 error(s), 5 warning(s), 0 info")


def test_warnings_only_exit_0(tmp_path, capsys):
    job = tmp_path / "job.yaml"
    job.write_text("checkpoint_s3_uri: s3://b/c\n")
    assert main(["preflight", str(job)]) == 0
    assert "WARNING PF-CHECKPOINT-URI-SLASH" in capsys.readouterr().out


def test_json_report_for_ci(capsys):
    code = main(["preflight", str(FIXTURES / "uneven" / "job.json"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 == report["exit_code"]
    assert report["world_size"] == 16
    assert report["summary"] == {"error": 1, "warning": 0, "info": 0}
    [finding] = report["findings"]
    assert set(finding) == {"severity", "rule_id", "location", "message", "symptom", "fix"}
    assert finding["rule_id"] == "PF-UNEVEN-BATCHES" and finding["severity"] == "error"


def test_explicit_scripts_are_read_instead_of_the_entry_point(capsys):
    code = main(["preflight", str(FIXTURES / "good" / "job.yaml"), str(FIXTURES / "bad" / "train.py"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["scripts"] == [str(FIXTURES / "bad" / "train.py")]
    assert code == 0  # script warnings only: the job settings are good
    assert {f["rule_id"] for f in report["findings"]} == {"PF-DEPRECATED-SMDDP-API", "PF-DDP-PREFIX"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.yaml"], "smddp-infra preflight: error: job file missing.yaml does not exist"),
        ([str(FIXTURES / "broken" / "bad.yaml")], "is not valid YAML: did not find expected ',' or ']' at line 3 column 1"),
        ([str(FIXTURES / "broken" / "job.yaml")], "syntax_error.py is not valid Python: invalid syntax at line 1"),
        ([str(FIXTURES / "good" / "job.yaml"), "nowhere.py"], "training script nowhere.py does not exist"),
        ([str(FIXTURES / "good" / "job.yaml"), "--outputs", "nowhere.json"], "--outputs file 'nowhere.json' does not exist"),
    ],
)
def test_unreadable_input_exits_2_with_one_line(capsys, args, message):
    assert main(["preflight", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("smddp-infra preflight: error: ") and message in lines[0]


def test_piped_output_is_plain_and_a_terminal_gets_colour():
    args = [str(FIXTURES / "bad" / "job.yaml")]
    plain = cli(*args)
    assert plain.returncode == 1
    assert "\x1b[" not in plain.stdout
    assert "PF-DEBUGGER-CHECKPOINT" in plain.stdout
    coloured = cli(*args, env={"FORCE_COLOR": "1", "TERM": "xterm-256color"})
    assert coloured.returncode == 1
    assert "\x1b[" in coloured.stdout  # rich's terminal path: what a user sees


def test_long_lines_are_not_wrapped_when_piped():
    out = cli(str(FIXTURES / "bad" / "job.yaml"), env={"COLUMNS": "40"}).stdout
    assert max(len(line) for line in out.splitlines()) > 120
    assert "  symptom: SMDebug Does Not Currently Support Distributed Training Jobs With Checkpointing Enabled" in out


def test_preflight_never_imports_aws_cdk():
    code = textwrap.dedent(
        f"""
        import sys
        from smddp_infra.cli import main
        rc = main(["preflight", {str(FIXTURES / "bad" / "job.yaml")!r}, "--outputs",
                   {str(FIXTURES / "outputs" / "cdk-outputs.json")!r}, "--json"])
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in {{"aws_cdk", "jsii", "constructs", "cdk_nag"}}
                       or m.startswith("smddp_infra.constructs"))
        print("RESULT", rc, heavy, file=sys.stderr)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert "RESULT 1 []" in result.stderr, result.stderr


@pytest.mark.parametrize("fmt", ["v2", "v3"])
def test_what_job_config_emits_passes_preflight(tmp_path, capsys, fmt):
    # The settings our stack hands out must be clean by our own rules (debugger off,
    # trailing slash, one AZ), in both SDK shapes preflight reads.
    outputs = str(FIXTURES / "outputs" / "cdk-outputs-single-az.json")
    assert main(["job-config", "--outputs", outputs, "--format", fmt]) == 0
    job = tmp_path / f"job-{fmt}.json"
    job.write_text(capsys.readouterr().out)
    assert main(["preflight", str(job), "--outputs", outputs, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["shape"] == ("estimator" if fmt == "v2" else "model_trainer")
    # a ModelTrainer without stopping_condition runs at most one hour (SDK v3 default): flagged
    # until job-config emits one
    missing_stop = fmt == "v3" and "stopping_condition" not in json.loads(job.read_text())
    assert [f["rule_id"] for f in report["findings"]] == (["PF-STOPPING-CONDITION"] if missing_stop else [])


def test_every_output_line_in_the_docs_is_what_the_command_prints(monkeypatch, capsys):
    import re
    import shlex

    docs = (ROOT / "docs" / "troubleshooting.md").read_text()
    blocks = re.findall(r"```console\n(.*?)```", docs, flags=re.S)
    monkeypatch.chdir(FIXTURES)

    def run(argv: list[str]) -> set[str]:
        main(argv)
        captured = capsys.readouterr()
        return set((captured.out + captured.err).splitlines())

    everything = set().union(*(run(["preflight", *a]) for a in (
        ["bad/job.yaml", "--outputs", "outputs/cdk-outputs.json"], ["uneven/job.json"], ["model_trainer/job.yaml"])))
    checked = 0
    for block in blocks:
        lines = textwrap.dedent(block).rstrip("\n").splitlines()
        if lines[0].startswith("$ smddp-infra preflight INPUT"):
            continue  # the synopsis
        if lines[0].startswith("$ smddp-infra preflight "):
            printed = run(shlex.split(lines[0])[2:])
            lines = lines[1:]
        else:
            printed = everything
        for line in lines:
            assert line in printed, line
            checked += 1
    assert checked >= 60


# ---------------------------------------------------------------- a reader that stops early (| head -1)


def into_closed_pipe(*argv: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the command with stdout a pipe whose reading end is already closed: every write
    fails with EPIPE, as in ``smddp-infra preflight ... --json | head -1`` once head is done."""
    read, write = os.pipe()
    os.close(read)
    command = [sys.executable, "-c", code, *argv] if code else [sys.executable, "-m", "smddp_infra.cli", *argv]
    try:
        return subprocess.run(command, stdout=write, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    finally:
        os.close(write)


@pytest.mark.parametrize("fmt", [["--json"], []])
@pytest.mark.parametrize("job, exit_code", [("bad/job.yaml", 1), ("good/job.yaml", 0)])
def test_a_closed_pipe_is_quiet_and_keeps_the_exit_code(fmt, job, exit_code):
    result = into_closed_pipe("preflight", str(FIXTURES / job), *fmt)
    assert result.stderr == ""  # no BrokenPipeError traceback, no "Exception ignored"
    assert result.returncode == exit_code


#: What cli.main would do with the shared helper around every command (the change proposed
#: for cli.py): ``size`` and ``job-config`` then stop quietly as well.
AROUND_MAIN = (
    "import sys\n"
    "from smddp_infra.cli import main\n"
    "from smddp_infra.commands._output import pipe_safe_stdout\n"
    "with pipe_safe_stdout():\n"
    "    code = main(sys.argv[1:])\n"
    "sys.exit(code)\n"
)


@pytest.mark.parametrize("argv", [
    ["size", "--required-mbps", "5000", "--json"],
    ["size", "--required-mbps", "5000"],
    ["job-config", "--outputs", str(FIXTURES / "outputs" / "cdk-outputs-single-az.json"), "--format", "v2"],
])
def test_the_shared_helper_around_any_command_stops_quietly_on_a_closed_pipe(argv):
    result = into_closed_pipe(*argv, code=AROUND_MAIN)
    assert result.returncode == 0, result.stderr
    for noise in ("Traceback", "BrokenPipeError", "Exception ignored"):
        assert noise not in result.stderr  # the command's own notes on stderr may remain


def test_the_helper_passes_output_through_while_the_reader_is_there(capsys):
    from smddp_infra.commands._output import pipe_safe_stdout

    with pipe_safe_stdout():
        print("first")
        with pipe_safe_stdout():  # nesting is harmless
            sys.stdout.write("second\n")
    assert capsys.readouterr().out == "first\nsecond\n"
    assert not type(sys.stdout).__name__.startswith("_PipeSafe")  # restored
