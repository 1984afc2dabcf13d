"""The ``smddp-infra`` front door: size | job-config | preflight | check | review | guard | observe | diagnose | mcp.

Each subcommand lives in :mod:`smddp_infra.commands` as a module with ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. Command modules import only pure
rooms at import time (never ``aws_cdk`` or ``jsii``) and defer heavy imports to ``run``,
so the CLI starts in a fraction of a second.

Exit codes: 0 fine, 1 findings (check / preflight / guard / observe / diagnose), 2 bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Optional, Sequence

from smddp_infra.commands._output import pipe_safe_stdout
from smddp_infra.errors import SmddpError

#: subcommand name -> module under smddp_infra.commands (or a full module path)
COMMANDS = {
    "size": "size",
    "job-config": "job_config",
    "preflight": "preflight",
    "check": "check",
    "review": "review",
    "guard": "guard",
    "guardrails": "guardrails",
    "observe": "observe",
    "diagnose": "diagnose",
    # Not a command of its own: the read-only commands above as MCP tools (the [mcp] extra).
    "mcp": "smddp_infra.mcp_server",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="smddp-infra",
        description="Provision and check networks for SageMaker distributed training on EFA instances "
                    "(and SMDDP where it runs).",
    )
    from smddp_infra import __version__

    parser.add_argument("--version", action="version", version=f"smddp-infra {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        path = module_name if "." in module_name else f"smddp_infra.commands.{module_name}"
        try:
            module = importlib.import_module(path)
        except ModuleNotFoundError as exc:  # a command not built yet in this checkout
            if exc.name != path:
                raise
            continue
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(_run=module.run, _parser=command)
    return parser


#: Import name -> distribution of what the CLI needs beyond the standard library. In a training
#: container ``pip install --no-deps smddp-infra`` installs the command without them (the
#: ``smddp_infra.training`` helpers need none); the CLI then says which extra to install.
CLI_DEPENDENCIES = {"rich": "rich", "yaml": "PyYAML", "cfnlint": "cfn-lint"}
CLI_EXTRA = "pip install 'smddp-infra[cli]'"


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        return _main(argv)
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in CLI_DEPENDENCIES:
            raise
        print(f"smddp-infra: error: the command needs {CLI_DEPENDENCIES[top]}, which is not installed "
              f"(`pip install --no-deps` leaves it out): {CLI_EXTRA}", file=sys.stderr)
        return 2


def _main(argv: Optional[Sequence[str]]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with pipe_safe_stdout():  # `smddp-infra ... | head` ends quietly, with the command's exit code
            return int(args._run(args) or 0)
    except SmddpError as exc:
        print(f"smddp-infra {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
