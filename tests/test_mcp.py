"""``smddp-infra mcp`` through the MCP SDK's own client over stdio, as an agent runs it.

One server process for the module (``python -m smddp_infra.cli mcp``, this tree first on the path),
pointed at moto's server through the standard AWS variables. Each tool is called once on a fixture
and its answer compared with the command run directly; bad input is one line with isError.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Iterator

import pytest

from smddp_infra.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = "tests/fixtures"
REGION = "us-east-1"


def _cloud_assembly(directory: Path) -> Path:
    """A one-stack cdk.out holding a fixture template (review reads the manifest and the template only)."""
    directory.mkdir()
    (directory / "Net.template.json").write_text((ROOT / FIXTURES / "templates" / "compliant.json").read_text())
    (directory / "manifest.json").write_text(json.dumps({"version": "36.0.0", "artifacts": {"Net": {
        "type": "aws:cloudformation:stack", "environment": "aws://unknown-account/unknown-region",
        "properties": {"templateFile": "Net.template.json"}}}}))
    return directory


def _calls(tmp: Path, net: dict[str, Any], fs: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """label -> (tool, arguments): each tool once on a fixture (two for check: a pass and a finding)."""
    return {
        "check": ("check", {"templates": [f"{FIXTURES}/templates/compliant.yaml"]}),
        "check-finding": ("check", {"templates": [f"{FIXTURES}/templates/fsx_invalid.yaml"], "no_info": True}),
        "preflight": ("preflight", {"job_file": f"{FIXTURES}/preflight/good/job.yaml"}),
        "size": ("size", {"instance_type": "ml.p5.48xlarge", "instance_count": 4, "read_mbps_per_gpu": 200}),
        "job-config": ("job-config", {"outputs": f"{FIXTURES}/outputs/default-p4d.json", "format": "boto3"}),
        "review": ("review", {"cdk_out": str(_cloud_assembly(tmp / "cdk.out")), "out": str(tmp / "review"),
                              "no_image": True}),
        "guard": ("guard", {"new": f"{FIXTURES}/guard/grown.yaml", "deployed": f"{FIXTURES}/guard/deployed.yaml"}),
        "diagnose": ("diagnose", {"security_group": [net["group"]], "subnet": net["subnets"], "region": REGION}),
        "observe": ("observe", {"file_system": fs, "since": "2026-11-02T00:00", "until": "2026-11-02T06:00"}),
    }


#: tool -> arguments the command itself refuses (a file that is not there, an id of the wrong shape...)
REFUSED = {
    "check": {"templates": ["nope.yaml"]},
    "preflight": {"job_file": "nope.yaml"},
    "size": {"instance_type": "ml.p5.48xlarge", "instance_count": 0, "read_mbps_per_gpu": 200},
    "job-config": {"outputs": "nope.json", "format": "v2"},
    "review": {"cdk_out": "nope"},
    "guard": {"new": "nope.yaml", "deployed": "nope.yaml"},
    "diagnose": {"security_group": ["sg-1"], "subnet": ["subnet-1"]},
    "observe": {"file_system": "fs-1"},
}
#: arguments the input schema refuses before the command runs
SCHEMA_REFUSED = {
    "unknown": ("check", {"templates": ["x.yaml"], "tempaltes": ["y.yaml"]}),
    "type": ("size", {"instance_count": "four"}),
    "enum": ("job-config", {"format": "v9"}),
    "missing": ("preflight", {}),
}


def _direct(tool: str, arguments: dict[str, Any]) -> tuple[int, str]:
    """The command run in this process with the same flags (the tool's own flag mapping)."""
    from smddp_infra.mcp_server import _argv, _subparsers

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(_argv(tool, _subparsers()[tool], arguments))
    return code, out.getvalue()


def doc_server() -> dict[str, Any]:
    """The server entry of docs/agents.md's JSON config (the test starts the server with it)."""
    text = (ROOT / "docs" / "agents.md").read_text()
    config = json.loads(re.search(r"^```json\n(.*?)^```", text, re.S | re.M).group(1))  # type: ignore[union-attr]
    return dict(config["mcpServers"]["smddp-infra"])


async def _session(env: dict[str, str], work: list[tuple[str, str, dict[str, Any]]]) -> tuple[Any, dict[str, Any]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    # As docs/agents.md configures it (the venv's console script; this tree first on the path), with
    # moto's endpoint and test keys in place of the doc's profile.
    entry = doc_server()
    assert set(entry["env"]) == {"AWS_PROFILE", "AWS_REGION"}
    server = StdioServerParameters(command=str(Path(sys.executable).parent / entry["command"]), args=entry["args"], env=env,
                                   cwd=str(ROOT))
    answers: dict[str, Any] = {}
    with open(os.devnull, "w") as quiet:
        async with stdio_client(server, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            for label, tool, arguments in work:
                answers[label] = await session.call_tool(tool, arguments)
    return listed, answers


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    import anyio

    from _diagnose_scenarios import Aws
    from _moto_server import account_env, moto_server

    tmp = tmp_path_factory.mktemp("mcp")
    with moto_server(reset=True) as url, account_env(url, region=REGION):
        aws = Aws(url)
        net = aws.network()
        fs = aws.file_system(net["subnets"][0], net["group"])
        calls = _calls(tmp, net, fs)
        work = [(label, tool, args) for label, (tool, args) in calls.items()]
        work += [(f"refused-{tool}", tool, args) for tool, args in REFUSED.items()]
        work += [(f"schema-{label}", tool, args) for label, (tool, args) in SCHEMA_REFUSED.items()]
        work += [("no-such-tool", "guardrails", {})]
        env = {"PYTHONPATH": str(ROOT), "AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "testing",
               "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": REGION}
        listed, answers = anyio.run(_session, env, work)
        # The review is written again by the direct run: into another directory.
        direct_calls = dict(calls, review=("review", dict(calls["review"][1], out=str(tmp / "review-direct"))))
        direct = {label: _direct(tool, args) for label, (tool, args) in direct_calls.items()}
        yield {"tools": listed.tools, "answers": answers, "direct": direct, "tmp": tmp, "fs": fs}


def test_the_tools_are_the_read_only_commands(served: dict[str, Any]) -> None:
    from smddp_infra.mcp_server import TOOLS

    tools = {t.name: t for t in served["tools"]}
    assert sorted(tools) == sorted(TOOLS) == sorted(["check", "preflight", "size", "job-config", "review", "guard",
                                                     "diagnose", "observe"])
    assert all(t.annotations.destructive_hint is False for t in tools.values())
    assert [n for n, t in tools.items() if not t.annotations.read_only_hint] == ["review"]  # it writes local files


def test_each_tools_input_is_its_commands_flags_typed(served: dict[str, Any]) -> None:
    tools = {t.name: t.input_schema for t in served["tools"]}
    assert tools["check"]["required"] == ["templates"] and tools["check"]["properties"]["templates"]["type"] == "array"
    assert tools["size"]["properties"]["instance_count"]["type"] == "integer"
    assert tools["size"]["properties"]["efa"]["type"] == "boolean"
    assert tools["job-config"]["properties"]["format"]["enum"] == ["v2", "v3", "boto3", "hyperpod"]
    assert tools["diagnose"]["properties"]["quiet_minutes"] == {
        "type": "number", "default": 15.0, "description": tools["diagnose"]["properties"]["quiet_minutes"]["description"]}
    assert all("json" not in schema["properties"] and schema["additionalProperties"] is False for schema in tools.values())


def test_each_tool_answers_like_its_command(served: dict[str, Any]) -> None:
    answers, direct = served["answers"], served["direct"]
    for label, (code, out) in direct.items():
        answer = answers[label]
        assert answer.is_error is False, (label, answer.content)
        assert answer.structured_content["exit_code"] == code, label
        if label == "review":  # no JSON: the files it wrote, each under its own --out
            assert answer.content[0].text == out.replace("review-direct", "review")
        else:
            assert json.loads(answer.content[0].text) == json.loads(out), label
        assert answer.content[1].text.startswith(f"exit {code}: "), label
    assert answers["check-finding"].structured_content["exit_code"] == 1
    assert answers["check-finding"].structured_content["exit_meaning"] == "at least one finding of error severity"
    assert (served["tmp"] / "review" / "README.md").is_file()


def test_the_account_tools_read_moto_through_the_standard_variables(served: dict[str, Any]) -> None:
    diagnosis = served["answers"]["diagnose"].structured_content
    assert diagnosis["exit_code"] == 0 and diagnosis["result"]["findings"] is not None
    observed = served["answers"]["observe"].structured_content
    assert observed["exit_code"] == 1 and observed["exit_meaning"].endswith("or no data")
    assert served["fs"] in json.dumps(observed["result"])


@pytest.mark.parametrize("tool", sorted(REFUSED))
def test_input_the_command_refuses_is_one_line_and_an_error_result(served: dict[str, Any], tool: str) -> None:
    answer = served["answers"][f"refused-{tool}"]
    assert answer.is_error is True
    [content] = answer.content
    assert "\n" not in content.text and content.text.startswith(f"smddp-infra {tool}: error: "), content.text


@pytest.mark.parametrize("label", sorted(SCHEMA_REFUSED))
def test_input_the_schema_refuses_is_one_line_naming_the_argument(served: dict[str, Any], label: str) -> None:
    tool, arguments = SCHEMA_REFUSED[label]
    [content] = served["answers"][f"schema-{label}"].content
    assert served["answers"][f"schema-{label}"].is_error is True
    assert "\n" not in content.text and content.text.startswith(f"smddp-infra {tool}: error: "), content.text
    named = {"unknown": "'tempaltes'", "type": "'instance_count'", "enum": "'format'", "missing": "'job_file'"}[label]
    assert named in content.text, content.text


def test_a_tool_that_is_not_served_is_one_line_listing_the_tools(served: dict[str, Any]) -> None:
    answer = served["answers"]["no-such-tool"]
    assert answer.is_error is True
    assert answer.content[0].text.startswith("unknown tool 'guardrails': the tools are check, preflight")


def test_without_the_sdk_the_command_names_the_extra(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    assert main(["mcp"]) == 2
    err = capsys.readouterr().err
    assert err == ("smddp-infra mcp: error: the mcp command needs the MCP Python SDK (mcp), which is not installed: "
                   "pip install 'smddp-infra[mcp]'\n")


def test_the_extra_pins_the_sdk_the_tests_use() -> None:
    from importlib.metadata import version

    pyproject = (ROOT / "pyproject.toml").read_text()
    dev = (ROOT / "requirements-dev.txt").read_text()
    pinned = re.search(r"^mcp==([\d.]+)$", dev, re.M)
    assert pinned and pinned.group(1) == version("mcp")
    assert re.search(r'^mcp = \["mcp>=%s,<%d"\]$' % (re.escape(pinned.group(1)), int(pinned.group(1).split(".")[0]) + 1),
                     pyproject, re.M)


def test_docs_name_every_tool_and_every_action_the_account_tools_may_call() -> None:
    from smddp_infra.diagnose.policy import all_actions
    from smddp_infra.mcp_server import TOOLS

    text = (ROOT / "docs" / "agents.md").read_text()
    rows = re.findall(r"^\| `([\w-]+)` \|", text, re.M)
    assert rows == list(TOOLS)
    named = set(re.findall(r"`(\w+:\w+)`", text))
    assert named == set(all_actions())
    assert all(re.match(r"\w+:(Describe|Get|List|FilterLogEvents)", action) for action in named)


@pytest.mark.slow
def test_the_extra_installs_into_a_fresh_environment_and_serves(tmp_path: Path) -> None:
    """``pip install 'smddp-infra[mcp]'`` on a machine with nothing of ours: a new virtual environment,
    this tree installed with its ``mcp`` extra from the registry (uv, as ``make`` installs every venv),
    then the SDK's client lists the server's tools through the new environment's console script."""
    import anyio

    uv = ROOT / ".venv-uv" / "bin" / "uv"
    if not uv.exists():  # `make test` installs it first (requirements-uv.txt); uv from the PATH otherwise
        uv = Path(shutil.which("uv") or "uv")
    fresh = tmp_path / "venv"
    subprocess.run([str(uv), "venv", "--quiet", "--python", sys.executable, str(fresh)], check=True, timeout=120)
    subprocess.run([str(uv), "pip", "install", "--quiet", "--python", str(fresh / "bin" / "python"), f"{ROOT}[mcp]"],
                   check=True, timeout=600, env={**os.environ, "UV_NATIVE_TLS": "1"})

    async def tools() -> list[str]:
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        server = StdioServerParameters(command=str(fresh / "bin" / "smddp-infra"), args=["mcp"], env={"PATH": os.defpath},
                                       cwd=str(tmp_path))
        with open(os.devnull, "w") as quiet:
            async with stdio_client(server, errlog=quiet) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return sorted(tool.name for tool in (await session.list_tools()).tools)

    assert anyio.run(tools) == sorted(["check", "preflight", "size", "job-config", "review", "guard", "diagnose", "observe"])
