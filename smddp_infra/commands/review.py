"""``smddp-infra review CDK_OUT_DIR``: write the review artifacts of a synthesized app.

Reads the cloud assembly only (manifest, templates, metadata, validation report), so it
needs no AWS credentials and never imports aws_cdk: review a cdk.out produced anywhere.
"""

from __future__ import annotations

import argparse

HELP = "Write docs/review/ (template YAML, summary, network diagram) from a cdk.out directory."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cdk_out", metavar="CDK_OUT_DIR", help="a synthesized cloud assembly (the output of `cdk synth`)")
    parser.add_argument("--out", default="docs/review", metavar="DIR", help="where to write the review (default: docs/review)")
    parser.add_argument("--no-image", action="store_true", help="do not run Graphviz even when it is installed")


def run(args: argparse.Namespace) -> int:
    from smddp_infra.review import write_review

    result = write_review(args.cdk_out, args.out, render_images=not args.no_image)
    for path in result.files + result.images:
        print(f"wrote {path}")
    for note in result.notes:
        print(f"note: {note}")
    return 0
