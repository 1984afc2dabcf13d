"""Benchmark: CPU of the default app's synth over a hand-written aws-cdk-lib stack's (not a test).

    python benchmarks/bench_synth_ratio.py [--rounds 7]

Each round synthesizes app.py (the default app: smddp_infra's stack and both rule packs,
AwsSolutions and SmddpChecks), benchmarks/handwritten_app.py (the same 34 resources and 12
outputs, type by type, written with aws-cdk-lib alone; the warm-up round checks and prints that
the templates hold the same) and the same hand-written stack with cdk-nag's AwsSolutions pack
(``--aws-solutions``), in rotating order, each
in a fresh process the way ``cdk synth`` runs an app (``CDK_OUTDIR``, ``CDK_CONTEXT_JSON`` with
cdk.json's context: the same feature flags for all). A fresh process is what a user pays: the
imports, jsii's node start-up, construct time, synthesis and the validation plugins. The second
ratio (over the hand-written stack with AwsSolutions) is what smddp_infra itself costs: cdk-nag's
pack costs the same whoever wrote the stack.

CPU = user + system seconds of the app's process and its children (jsii's node process does the
synthesis), read with ``os.wait4``; unlike wall time it does not grow when other jobs share the
cores. Prints each round, the medians and least values, and the ratios (issue 40 asks for at
most 1.10 over the hand-written stack with the same pack). It prints; it does not assert.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HAND = ROOT / "benchmarks" / "handwritten_app.py"
APPS: dict[str, list[str]] = {"default app": [str(ROOT / "app.py")], "hand-written": [str(HAND)],
                              "hand-written + AwsSolutions": [str(HAND), "--aws-solutions"]}
#: What ``make synth`` puts first on the PATH: the venv's pinned Node (tools/node-shims.sh) and the
#: pinned cdk CLI. jsii runs whichever ``node`` the PATH names, and the node version changes the
#: figures more than anything measured here (the system's Node 20 took 9.4 s CPU for the default
#: app where the pinned Node 24 took 5.3 s, 2026-12-04).
PATH = os.pathsep.join([str(Path(sys.executable).parent), str(ROOT / "node_modules" / ".bin"), os.environ.get("PATH", "")])


def synth(app: list[str], context: str) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the app's process tree, what its template holds) for one synth
    of ``app`` (script, args)."""
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, CDK_OUTDIR=out, CDK_CONTEXT_JSON=context, PYTHONPATH=str(ROOT), PATH=PATH)
        # As make synth runs the app: the Makefile unexports PYTHONDONTWRITEBYTECODE, so the first
        # synth writes smddp_infra's bytecode and the next ones read it, as they read aws_cdk's.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *app], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        stderr = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"{' '.join(app)} failed (exit {proc.returncode}):\n{stderr.decode(errors='replace')}")
        return wall, usage.ru_utime + usage.ru_stime, _holds(next(Path(out).glob("*.template.json")))


def _holds(template: Path) -> str:
    """The template's resources by type and its outputs: what the two apps must share for the
    ratio to be the library's cost rather than a bigger stack's."""
    body = json.loads(template.read_text())
    types = collections.Counter(r["Type"] for r in body["Resources"].values())
    return f"{sum(types.values())} resources ({', '.join(f'{n} {t}' for t, n in sorted(types.items()))}), " \
           f"{len(body.get('Outputs', {}))} outputs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    context = json.dumps(json.loads((ROOT / "cdk.json").read_text())["context"])
    node = subprocess.run(["node", "--version"], env=dict(os.environ, PATH=PATH), capture_output=True, text=True, check=False)
    print(f"node {node.stdout.strip() or '(not found)'} (the first on the PATH make synth uses)", flush=True)
    holds = {name: synth(app, context)[2] for name, app in APPS.items()}  # warm-up (the OS file cache), not measured
    same = len(set(holds.values())) == 1
    print(f"templates: {'the same' if same else 'NOT the same'} resources and outputs: {holds['default app']}"
          + ("" if same else "".join(f"\n  {name}: {held}" for name, held in holds.items())), flush=True)
    wall: dict[str, list[float]] = {name: [] for name in APPS}
    cpu: dict[str, list[float]] = {name: [] for name in APPS}
    for round_ in range(args.rounds):
        items = list(APPS.items())
        order = items[round_ % len(items):] + items[:round_ % len(items)]
        for name, app in order:
            seconds, cpu_seconds, _ = synth(app, context)
            wall[name].append(seconds)
            cpu[name].append(cpu_seconds)
        print(f"round {round_ + 1}: " + ", ".join(f"{n} {cpu[n][-1]:.2f} s CPU ({wall[n][-1]:.2f} s wall)" for n in APPS),
              flush=True)
    # The median, and the minimum: interference from other work on a shared machine only ever adds
    # time, so the least of several rounds is the steadiest estimate of what a synth itself costs.
    for label, measured, pick in (("CPU", cpu, statistics.median), ("wall", wall, statistics.median),
                                  ("CPU", cpu, min)):
        ours, theirs, nag = (pick(measured[n]) for n in APPS)
        print(f"{'median' if pick is statistics.median else 'least'} {label}: default app {ours:.2f} s, hand-written {theirs:.2f} s, hand-written + AwsSolutions "
              f"{nag:.2f} s; ratio {ours / theirs:.3f} over the hand-written stack, {ours / nag:.3f} over it with "
              f"AwsSolutions (AwsSolutions alone: {nag / theirs:.3f})")
    print(f"load average {os.getloadavg()[0]:.1f}: read CPU on a shared machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
