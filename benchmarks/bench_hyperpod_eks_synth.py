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
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_hyperpod_synth import _cpu_seconds  # noqa: E402  (one copy of how CPU time is read)


def synth_seconds(eks: bool) -> tuple[float, float]:
    from aws_cdk import App, Validations
    from cdk_nag import AwsSolutionsChecks

    from smddp_infra.app_builder import build_app
    from smddp_infra.checks import SmddpChecks

    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    with tempfile.TemporaryDirectory() as out:
        start, cpu = time.perf_counter(), _cpu_seconds()
        if eks:
            from _hyperpod_apps import add_eks_built_stack

            app = App(outdir=out)
            add_eks_built_stack(app)
            Validations.of(app).add_plugins(AwsSolutionsChecks(app), SmddpChecks(app))
        else:
            app = App(context=context, outdir=out)
            build_app(app)
        app.synth()
        return time.perf_counter() - start, _cpu_seconds() - cpu


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
