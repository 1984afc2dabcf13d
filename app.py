#!/usr/bin/env python3
"""The deployable app: one TrainingNetworkStack from cdk.json context (``-c key=value`` wins).

Bad context values stop the synth with one line naming the key, the value and what is
allowed (exit 2), before any construct is built.
"""

from __future__ import annotations

import sys

import aws_cdk as cdk

from smddp_infra.app_builder import build_app
from smddp_infra.errors import SmddpError


def main() -> int:
    app = cdk.App()
    try:
        build_app(app)
    except SmddpError as exc:
        print(f"smddp_infra: error: {exc}", file=sys.stderr)
        return 2
    app.synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
