"""Benchmark what a HyperPod cluster adds to the default app's synth time (not a test).

    python benchmarks/bench_hyperpod_synth.py [--rounds 3]

Builds the default app exactly as app.py does (build_app: AwsSolutions + SmddpChecks packs) with
``smddp:hyperpod`` off and on, alternating, in ONE process after a warm-up synth (jsii's start-up
and aws-cdk-lib's import are paid once, as in ``cdk synth``), and prints each round's seconds,
the medians and their ratio (on / off), in wall time and in CPU time of the process and jsii's node\nchild (CPU time is what to read on a loaded machine: wall time there measures the neighbours). Issue 28 asks for under 10 % more; this prints, it does
not assert.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def _cpu_seconds() -> float:
    """CPU seconds of this process and its live children (jsii's node process does the synth work):
    unlike wall time, it does not grow when other jobs share the machine's cores."""
    import os

    ticks = os.sysconf("SC_CLK_TCK")
    total = sum(os.times()[:2])
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:  # ppid
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
    return total


def timed_synth(build: Callable[[str], Any]) -> tuple[float, float]:
    """Wall and CPU seconds of building an app (``build(outdir)`` returns it) and synthesizing it."""
    with tempfile.TemporaryDirectory() as out:
        start, cpu = time.perf_counter(), _cpu_seconds()
        build(out).synth()
        return time.perf_counter() - start, _cpu_seconds() - cpu


def default_app(outdir: str, **context_values: Any) -> Any:
    """The default app exactly as app.py builds it (build_app: AwsSolutions + SmddpChecks)."""
    from aws_cdk import App

    from smddp_infra.app_builder import build_app

    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    app = App(context={**context, **context_values}, outdir=outdir)
    build_app(app)
    return app


def synth_seconds(hyperpod: bool) -> tuple[float, float]:
    return timed_synth(lambda out: default_app(out, **{"smddp:hyperpod": hyperpod}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    synth_seconds(False)  # warm-up: jsii and the aws-cdk-lib import
    off: list[float] = []
    on: list[float] = []
    off_cpu: list[float] = []
    on_cpu: list[float] = []
    for round_ in range(args.rounds):
        for flag, wall, cpu in ((False, off, off_cpu), (True, on, on_cpu)):
            seconds, cpu_seconds = synth_seconds(flag)
            wall.append(seconds)
            cpu.append(cpu_seconds)
        print(f"round {round_ + 1}: off {off[-1]:.2f} s ({off_cpu[-1]:.2f} s CPU), on {on[-1]:.2f} s ({on_cpu[-1]:.2f} s CPU)")
    ratio = statistics.median(on) / statistics.median(off)
    print(f"median synth: smddp:hyperpod off {statistics.median(off):.2f} s, on {statistics.median(on):.2f} s; "
          f"ratio {ratio:.3f} ({(ratio - 1) * 100:+.1f} %)")
    cpu_ratio = statistics.median(on_cpu) / statistics.median(off_cpu)
    print(f"median CPU (python + jsii's node): off {statistics.median(off_cpu):.2f} s, on {statistics.median(on_cpu):.2f} s; "
          f"ratio {cpu_ratio:.3f} ({(cpu_ratio - 1) * 100:+.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
