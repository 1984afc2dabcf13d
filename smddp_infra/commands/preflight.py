"""``smddp-infra preflight INPUT [SCRIPT ...]``: the troubleshooting guide, before submission.

INPUT is a notebook, a launcher script, a CreateTrainingJob / DescribeTrainingJob JSON or a
job file, detected by content. Exit codes: 0 no error findings, 1 at least one error
finding, 2 unreadable input (the CLI prints ``smddp-infra preflight: error: ...``). Never
imports aws_cdk: it runs in CI and on laptops without a CDK toolchain.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from smddp_infra.commands._output import print_json
from smddp_infra.commands.check import add_format_argument, output_format


HELP = ("Check a SageMaker training job (a notebook, a launcher script, CreateTrainingJob/DescribeTrainingJob "
        "JSON, or a job file) and its training scripts against the SMDDP troubleshooting guide.")

_STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job_file", metavar="INPUT", type=Path,
                        help=("a notebook (.ipynb), a launcher script (.py) building an estimator or ModelTrainer, "
                              "CreateTrainingJob/DescribeTrainingJob JSON, or a YAML/JSON job file"))
    parser.add_argument("scripts", metavar="SCRIPT", type=Path, nargs="*",
                        help="training scripts to read (default: the entry point and every .py under source_dir)")
    parser.add_argument("--outputs", metavar="CDK_OUTPUTS_JSON", type=Path,
                        help="cdk-outputs.json from `cdk deploy --outputs-file`: subnets and AZs of the training stack")
    parser.add_argument("--json", action="store_true", help="machine-readable report on stdout (for CI); the same as --format json")
    add_format_argument(parser)


def run(args: argparse.Namespace) -> int:
    from smddp_infra.preflight import run_preflight

    from smddp_infra.preflight.errors import PreflightInputError

    fmt = output_format(args)
    try:
        report = run_preflight(args.job_file, args.scripts, outputs=args.outputs)
    except PreflightInputError as exc:
        raise PreflightInputError(in_words(str(exc))) from None
    if fmt == "sarif":
        from smddp_infra.sarif import preflight_log

        print_json(preflight_log(report))
    elif fmt == "json":
        print_json(report.to_json())
    else:
        print_human(report)
    return report.exit_code


#: Python type names a reader can leak into "got <type>" -> what the user wrote, in words
_KINDS = {"NoneType": "an empty document", "list": "a list", "str": "a string", "int": "a number",
          "float": "a number", "bool": "a boolean", "dict": "a mapping", "CommentedSeq": "a list",
          "CommentedMap": "a mapping"}


def in_words(message: str) -> str:
    """``got NoneType`` (a Python type name) -> ``got an empty document``: the user wrote YAML, not Python."""
    import re

    return re.sub(r"\bgot (%s)\b" % "|".join(_KINDS), lambda m: f"got {_KINDS[m.group(1)]}", message)


def print_human(report, file=None) -> None:  # type: ignore[no-untyped-def]
    """Coloured on a terminal, plain text when piped (rich decides; NO_COLOR is honoured)."""
    from rich.console import Console
    from rich.text import Text

    console = Console(file=file or sys.stdout, highlight=False, soft_wrap=True)
    for f in report.findings:
        head = Text()
        head.append(f"{f.severity.upper():7}", style=_STYLES[f.severity])
        head.append(f" {f.rule_id}", style="bold")
        head.append(f"  {f.location}")
        console.print(head)
        console.print(Text(f"  {f.message}"))
        console.print(Text("  symptom: ", style="dim") + Text(f.symptom))
        console.print(Text("  fix:     ", style="dim") + Text(f.fix, style="green"))
    for note in report.not_evaluated:
        console.print(Text(note, style="dim"))
    counts = report.counts
    scripts = ", ".join(s.name for s in report.scripts) or "none"
    jobs = ""
    if report.kind in ("notebook", "launcher"):
        labels = ", ".join(j.job.label or j.job.estimator for j in report.jobs)
        jobs = f"{len(report.jobs)} job{'s' if len(report.jobs) > 1 else ''}: {labels}; "
    summary = Text(f"preflight {report.path.name} ({jobs}scripts: {scripts}): ")
    if report.findings:
        summary.append(f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info",
                       style="bold red" if counts["error"] else "bold yellow" if counts["warning"] else "bold")
    else:
        summary.append("no findings", style="bold green")
    console.print(summary)
