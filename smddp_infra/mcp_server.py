"""``smddp-infra mcp``: the read-only commands as Model Context Protocol tools, over stdio.

An agent (Claude Code, an IDE, any MCP client) starts ``smddp-infra mcp`` and calls ``check``,
``preflight``, ``size``, ``job-config``, ``review``, ``guard``, ``diagnose`` and ``observe`` as tools.
MCP (modelcontextprotocol.io): a server declares each tool with a JSON Schema for its input and
answers ``tools/list`` and ``tools/call`` over newline-delimited JSON-RPC 2.0 on stdin/stdout; a
tool's failure is a result with ``isError: true``, not a protocol error.

Nothing is re-implemented: a tool's input schema is read from the command's own argparse parser
(one flag, one property; ``--json`` is always on), and a call runs ``smddp_infra.cli.main`` with
those flags, stdout and stderr captured: the answer is the command's JSON, its exit code and what
the code means. Bad input is the command's own one line. The tools are the commands that change
nothing in an account; diagnose, observe and guard's ``deployed_stack`` read it with the caller's
credentials (boto3's chain, ``AWS_ENDPOINT_URL*`` honoured) and need only the read actions
``smddp-infra diagnose --print-policy`` lists. ``guardrails`` is left out: it only prints a policy
an agent could mistake for one to attach.

The ``mcp`` SDK is an optional extra (``pip install 'smddp-infra[mcp]'``), imported only by ``run``,
so the CLI starts without it.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from smddp_infra.errors import SmddpError

HELP = ("Serve the read-only commands (check, preflight, size, job-config, review, guard, diagnose, observe) as "
        "Model Context Protocol tools over stdio, for agents (needs smddp-infra[mcp]).")

MCP_EXTRA = "pip install 'smddp-infra[mcp]'"

_FOUND_ERRORS = "at least one finding of error severity"
_BAD_INPUT = "bad input: the one line says what and which value (nothing was judged)"


@dataclass(frozen=True)
class ToolSpec:
    """A command served as a tool: what its exit codes mean, which flags take numbers (the
    command parses them itself, so a bad one is its own one line) and whether it writes files."""

    exits: Mapping[int, str]
    numbers: Mapping[str, str] = field(default_factory=dict)
    writes_files: bool = False
    reads_account: bool = False


#: tool (= command) name -> spec; the exit meanings are the commands' documented ones (their docstrings).
TOOLS: dict[str, ToolSpec] = {
    "check": ToolSpec({0: "no finding of error severity", 1: _FOUND_ERRORS,
                       2: "an input could not be read (the others are still judged, under \"templates\")"}),
    "preflight": ToolSpec({0: "no finding of error severity", 1: _FOUND_ERRORS, 2: _BAD_INPUT}),
    "size": ToolSpec({0: "the cheapest valid plan", 2: "bad input, or no file system meets the need"},
                     numbers={"instance_count": "integer", "read_mbps_per_gpu": "number", "dataset_gib": "number",
                              "epoch_seconds": "number", "required_mbps": "number", "max_capacity_gib": "number",
                              "hot_gib": "number"}),
    "job-config": ToolSpec({0: "the training-job settings", 2: _BAD_INPUT},
                           numbers={"instance_count": "integer", "max_runtime_seconds": "integer"}),
    "review": ToolSpec({0: "the review was written (the files listed)", 2: _BAD_INPUT}, writes_files=True),
    "guard": ToolSpec({0: "nothing stateful would be replaced (or the replacement is accepted)",
                       1: "refused: the update would replace or delete a stateful resource", 2: _BAD_INPUT},
                      reads_account=True),
    "diagnose": ToolSpec({0: "no finding of error severity", 1: _FOUND_ERRORS,
                          2: "unusable input: no credentials, no such job, access denied (the action is named)"},
                         reads_account=True),
    "observe": ToolSpec({0: "right-sized (or scaling not limited by the file system)",
                         1: "under- or over-sized, the file system limits scaling, or no data", 2: _BAD_INPUT},
                        numbers={"headroom": "number"}, reads_account=True),
}

#: flags every call sets or that make no sense for a tool
_FIXED = ("help", "json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No flags: the client starts the server and speaks MCP on stdin/stdout."""


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    from smddp_infra.cli import build_parser

    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {name: action.choices[name] for name in TOOLS if name in action.choices}
    raise AssertionError("the CLI has no subcommands")  # pragma: no cover


def _property(action: argparse.Action) -> str:
    """The tool argument for a flag: its first long option (or a positional's name), snake_case."""
    longs = [o for o in action.option_strings if o.startswith("--")]
    return (longs[0][2:] if longs else action.dest).replace("-", "_")


def _is_list(action: argparse.Action) -> bool:
    return action.nargs in ("+", "*") or isinstance(action, (argparse._AppendAction, argparse._ExtendAction))


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.dest not in _FIXED and a.help != argparse.SUPPRESS]


def input_schema(name: str, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The command's flags as a JSON Schema object: booleans for switches, arrays for repeatable or
    several values, enums for choices, numbers where the command reads a number."""
    spec = TOOLS[name]
    properties: dict[str, Any] = {}
    required: list[str] = []
    for action in _arguments(parser):
        prop = _property(action)
        if isinstance(action, argparse._StoreTrueAction):
            value: dict[str, Any] = {"type": "boolean"}
        else:
            if prop in spec.numbers:
                value = {"type": spec.numbers[prop]}
            elif action.type in (int, float):
                value = {"type": "integer" if action.type is int else "number"}
            else:
                value = {"type": "string"}
            if action.choices is not None:
                value["enum"] = list(action.choices)
            if _is_list(action):
                value = {"type": "array", "items": value, "minItems": 1 if action.nargs == "+" else 0}
        text = (action.help or "").replace("%%", "%")
        value["description"] = text + ("" if action.option_strings else " (positional)")
        if action.default not in (None, False, [], argparse.SUPPRESS) and not _is_list(action):
            value["default"] = action.default
        properties[prop] = value
        if action.nargs not in ("?", "*") and (action.required or not action.option_strings):
            required.append(prop)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _argv(name: str, parser: argparse.ArgumentParser, arguments: Mapping[str, Any]) -> list[str]:
    """The command line the arguments stand for; ``--flag=value`` so a value starting with '-' stays a value."""
    options: list[str] = []
    positionals: list[str] = []
    for action in _arguments(parser):
        value = arguments.get(_property(action))
        if value is None or value is False:
            continue
        if not action.option_strings:
            positionals += [str(v) for v in value] if isinstance(value, list) else [str(value)]
            continue
        flag = next(o for o in action.option_strings if o.startswith("--"))
        if value is True:
            options.append(flag)
        elif isinstance(value, list):
            if action.nargs in ("+", "*") and not isinstance(action, (argparse._AppendAction, argparse._ExtendAction)):
                options += [flag, *map(_text, value)]
            else:
                options += [f"{flag}={_text(v)}" for v in value]
        else:
            options.append(f"{flag}={_text(value)}")
    json_flag = ["--json"] if any(a.dest == "json" for a in parser._actions) else []
    return [name, *options, *json_flag, "--", *positionals] if positionals else [name, *options, *json_flag]


def _text(value: Any) -> str:
    """A JSON number as the command would read it from a shell (3.0 -> '3', 1.25 -> '1.25')."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _schema_error(name: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> Optional[str]:
    """One line for arguments the schema refuses (an unknown argument, a wrong type), else None."""
    import jsonschema

    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(arguments))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(set(arguments) - set(schema["properties"]))
        return f"smddp-infra {name}: error: unknown argument {extra[0]!r}; it takes {', '.join(schema['properties'])}"
    if error.validator == "required":
        return f"smddp-infra {name}: error: {error.message}"
    return f"smddp-infra {name}: error: argument {where!r}: {error.message}"


@dataclass(frozen=True)
class Answer:
    """What one call returns: the command's exit code and what it means, its stdout (JSON where the
    command has --json) and its stderr lines (warnings; on exit 2 the one line of what is wrong)."""

    tool: str
    exit_code: int
    stdout: str
    stderr: tuple[str, ...]

    @property
    def meaning(self) -> str:
        return TOOLS[self.tool].exits.get(self.exit_code, "unexpected exit code")

    @property
    def is_error(self) -> bool:
        return self.exit_code not in (0, 1) or (self.exit_code == 1 and 1 not in TOOLS[self.tool].exits)

    @property
    def result(self) -> Any:
        try:
            return json.loads(self.stdout)
        except ValueError:
            return self.stdout

    @property
    def error_line(self) -> str:
        """The one line of what is wrong: the command's own (the last line on stderr), or for
        ``check`` the first input it could not read (its JSON lists them all)."""
        if self.stderr:
            return self.stderr[-1]
        result = self.result
        unreadable = result.get("unreadable") if isinstance(result, dict) else None
        if unreadable:
            more = f" (and {len(unreadable) - 1} more)" if len(unreadable) > 1 else ""
            return f"smddp-infra {self.tool}: error: {unreadable[0]['error']}{more}"
        return f"smddp-infra {self.tool}: exit {self.exit_code}: {self.meaning}"

    def structured(self) -> dict[str, Any]:
        return {"exit_code": self.exit_code, "exit_meaning": self.meaning, "result": self.result,
                "stderr": list(self.stderr)}


def call(tool: str, arguments: Optional[Mapping[str, Any]], *,
         parsers: Optional[Mapping[str, argparse.ArgumentParser]] = None) -> Answer:
    """Run the command behind ``tool`` with ``arguments`` as ``smddp-infra`` would from a shell."""
    from smddp_infra.cli import main

    parsers = parsers or _subparsers()
    if tool not in parsers:
        raise SmddpError(f"unknown tool {tool!r}: the tools are {', '.join(parsers)}")
    arguments = dict(arguments or {})
    problem = _schema_error(tool, input_schema(tool, parsers[tool]), arguments)
    if problem is not None:
        return Answer(tool, 2, "", (problem,))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(_argv(tool, parsers[tool], arguments))
        except SystemExit as exc:  # argparse refused a value: its last line says which
            code = exc.code if isinstance(exc.code, int) else 2
    lines = tuple(line for line in err.getvalue().splitlines() if line.strip())
    return Answer(tool, code, out.getvalue(), lines)


def _description(name: str, parser: argparse.ArgumentParser) -> str:
    spec = TOOLS[name]
    exits = "; ".join(f"{code} {meaning}" for code, meaning in sorted(spec.exits.items()))
    reads = (" Reads the account with the caller's credentials (read-only: `smddp-infra diagnose --print-policy`)."
             if spec.reads_account else "")
    writes = " Writes the review files under `out` (local files only)." if spec.writes_files else ""
    return (f"{parser.description} Arguments are the flags of `smddp-infra {name}`.{reads}{writes} "
            f"Returns the command's output and exit code: {exits}.")


def serve() -> None:
    """Answer tools/list and tools/call on stdin/stdout until the client closes the pipe."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    from smddp_infra import __version__

    parsers = _subparsers()
    tools = [
        types.Tool(
            name=name,
            description=_description(name, parser),
            input_schema=input_schema(name, parser),
            annotations=types.ToolAnnotations(read_only_hint=not TOOLS[name].writes_files, destructive_hint=False,
                                              idempotent_hint=True, open_world_hint=TOOLS[name].reads_account),
        )
        for name, parser in parsers.items()
    ]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        try:
            answer = call(params.name, params.arguments, parsers=parsers)
        except SmddpError as exc:
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(exc))], is_error=True)
        except Exception as exc:  # a bug of ours: one line for the agent, the traceback on the server's stderr
            import traceback

            traceback.print_exc(file=sys.stderr)
            return types.CallToolResult(content=[types.TextContent(
                type="text", text=f"smddp-infra {params.name}: internal error (a bug): {type(exc).__name__}: {exc}")],
                is_error=True)
        if answer.is_error:
            return types.CallToolResult(content=[types.TextContent(type="text", text=answer.error_line)],
                                        structured_content=answer.structured(), is_error=True)
        notes = "".join(f"\n{line}" for line in answer.stderr)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer.stdout),
                     types.TextContent(type="text", text=f"exit {answer.exit_code}: {answer.meaning}{notes}")],
            structured_content=answer.structured(), is_error=False)

    server: Any = Server("smddp-infra", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool,
                         instructions="Read-only checks of SageMaker distributed-training infrastructure: "
                                      "templates, launchers, cdk-outputs.json and (diagnose, observe) the account.")

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


def run(args: argparse.Namespace) -> int:
    try:
        import mcp.server.lowlevel  # noqa: F401
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types"):
            raise
        raise SmddpError(f"the mcp command needs the MCP Python SDK (mcp), which is not installed: {MCP_EXTRA}") from None
    serve()
    return 0
