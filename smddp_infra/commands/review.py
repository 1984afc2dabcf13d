"""``smddp-infra review CDK_OUT_DIR``: write the review artifacts of a synthesized app.

Reads the cloud assembly only (manifest, templates, metadata, validation report), so it
needs no AWS credentials and never imports aws_cdk: review a cdk.out produced anywhere.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Optional

HELP = "Write docs/review/ (template YAML, summary, network diagram) from a cdk.out directory."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cdk_out", metavar="CDK_OUT_DIR", help="a synthesized cloud assembly (the output of `cdk synth`)")
    parser.add_argument("--out", default="docs/review", metavar="DIR", help="where to write the review (default: docs/review)")
    parser.add_argument("--no-image", action="store_true", help="do not run Graphviz even when it is installed")
    parser.add_argument("--deployed", metavar="OLD", default=None,
                        help="the deployed template (file, for a one-stack assembly) or the deployed cdk.out: adds a "
                             "Replacements section (what `smddp-infra guard` would refuse; empty when none)")


def run(args: argparse.Namespace) -> int:
    from smddp_infra.review import write_review

    deployed = _deployed_templates(args.deployed, args.cdk_out) if args.deployed else None
    _check_out_dir(args.out)
    try:
        result = write_review(args.cdk_out, args.out, render_images=not args.no_image, deployed=deployed)
    except OSError as exc:  # read-only, full disk, a file where a directory belongs: one line, no traceback
        raise _unwritable(args.out, exc) from None
    for path in result.files + result.images:
        print(f"wrote {path}")
    for note in result.notes:
        print(f"note: {note}")
    return 0


def _check_out_dir(out: str) -> None:
    """``--out`` must be a directory this process can create or write into."""
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise _unwritable(out, None, "it is an existing file, not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(out, exc) from None


def _unwritable(out: str, exc: Optional[OSError], reason: str = "") -> Exception:
    from smddp_infra.errors import ConfigError

    if exc is not None:
        where = f" ({exc.filename})" if exc.filename and str(exc.filename) != out else ""
        reason = f"{(exc.strerror or str(exc)).lower()}{where}"
    return ConfigError(f"--out must be a directory the review can be written to, got {out!r}: {reason}")


def _deployed_templates(old: str, cdk_out: str) -> dict[str, Optional[dict[str, Any]]]:
    """Stack name -> deployed template: from a cdk.out by stack name, or one file for a one-stack assembly."""
    from smddp_infra.errors import ConfigError
    from smddp_infra.review import load_assembly
    from smddp_infra.review.replacement import load_template

    new = load_assembly(cdk_out)
    if Path(old).is_dir():
        previous = {s.name: s.reviewable_template() for s in load_assembly(old).stacks}
        return {s.name: previous.get(s.name) for s in new.stacks}
    if len(new.stacks) != 1:
        raise ConfigError(f"--deployed {old!r} is one template, but {cdk_out!r} holds {len(new.stacks)} stacks: "
                          "pass the deployed cdk.out directory instead")
    template, _ = load_template(old, what="--deployed")
    return {new.stacks[0].name: template}
