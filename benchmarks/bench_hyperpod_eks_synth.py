"""Benchmark the synth time of an app with the HyperPod EKS path beside the default app's (not a test).

    python benchmarks/bench_hyperpod_eks_synth.py [--rounds 3]

Alternates, in ONE process after a warm-up synth: the default app exactly as app.py builds it
(build_app: AwsSolutions + SmddpChecks), and an app of one stack holding a training network and an
EKS-orchestrated HyperPod cluster whose EKS control plane, add-ons, access entries and dependencies
chart the app builds (tests/_hyperpod_apps.py ``add_eks_built_stack``), under the same two packs.
Prints each round's wall and CPU seconds (this process and jsii's node child), the medians and
their ratio. It prints; it does not assert.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_hyperpod_synth import default_app, timed_synth  # noqa: E402  (one copy of how synth is timed)


def eks_app(outdir: str) -> Any:
    from aws_cdk import App, Validations
    from cdk_nag import AwsSolutionsChecks

    from _hyperpod_apps import add_eks_built_stack
    from smddp_infra.checks import SmddpChecks

    app = App(outdir=outdir)
    add_eks_built_stack(app)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), SmddpChecks(app))
    return app


def synth_seconds(eks: bool) -> tuple[float, float]:
    return timed_synth(eks_app if eks else default_app)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    synth_seconds(False)  # warm-up: jsii and the aws-cdk-lib import
    walls: dict[bool, list[float]] = {False: [], True: []}
    cpus: dict[bool, list[float]] = {False: [], True: []}
    for round_ in range(args.rounds):
        for eks in (False, True):
            wall, cpu = synth_seconds(eks)
            walls[eks].append(wall)
            cpus[eks].append(cpu)
        print(f"round {round_ + 1}: default app {walls[False][-1]:.2f} s ({cpus[False][-1]:.2f} s CPU), "
              f"EKS app {walls[True][-1]:.2f} s ({cpus[True][-1]:.2f} s CPU)")
    for label, series in (("wall", walls), ("CPU (python + jsii's node)", cpus)):
        off, on = statistics.median(series[False]), statistics.median(series[True])
        print(f"median {label}: default app {off:.2f} s, EKS app {on:.2f} s; ratio {on / off:.3f} ({(on / off - 1) * 100:+.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
