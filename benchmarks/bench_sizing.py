"""Benchmark the FSx for Lustre calculator against an independent brute force (not a test).

    python benchmarks/bench_sizing.py [--requests 10000] [--seed 7]

Draws requests log-uniformly over 100..500,000 MB/s and 0..1,000,000 GiB (a quarter with no
capacity need), mixing the default groups, HDD, SCRATCH_1, EFA and capacity caps, and prints:

* share optimal: how often plan_lustre's cost/throughput/scratch rank equals the brute force's
  (and, with a cap, how often both agree that nothing fits);
* worst cost ratio: plan cost / brute-force optimum cost (1.0 means never worse);
* plans per second of plan_lustre alone;
* the CLI's cold start (``python -m smddp_infra.cli size ...``) next to ``python -c pass``.

The brute force has its own copy of the FSx rule table and enumerates every valid capacity
of every tier up to a bound above which no tier can hold its optimum, with numpy and exact
integer costs (prices scaled to whole thousandths of a dollar).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smddp_infra.errors import SizingError  # noqa: E402
from smddp_infra.sizing.planner import plan_lustre  # noqa: E402
from smddp_infra.sizing.prices import DEFAULT_PRICES  # noqa: E402


class Config(NamedTuple):
    group: str
    key: str
    rate: int  # MB/s per TiB
    efa: bool
    explicit: tuple[int, ...]
    step: int
    scratch: bool


# Written from the FSx docs, independently of smddp_infra/sizing/lustre_rules.py.
TABLE = (
    [Config("SCRATCH_1", "SCRATCH_1", 200, False, (1200, 2400), 3600, True),
     Config("SCRATCH_2", "SCRATCH_2", 200, False, (1200, 2400), 2400, True)]
    + [Config("PERSISTENT_1", f"PERSISTENT_1/{t}", t, False, (1200, 2400), 2400, False) for t in (50, 100, 200)]
    + [Config("PERSISTENT_1_HDD", "PERSISTENT_1/HDD/12", 12, False, (), 6000, False),
       Config("PERSISTENT_1_HDD", "PERSISTENT_1/HDD/40", 40, False, (), 1800, False)]
    + [Config("PERSISTENT_2", f"PERSISTENT_2/{t}", t, False, (1200, 2400), 2400, False) for t in (125, 250, 500, 1000)]
    + [Config("PERSISTENT_2", f"PERSISTENT_2/{t}", t, True, (), s, False)
       for t, s in ((125, 38_400), (250, 19_200), (500, 9600), (1000, 4800))]
)

PRICES = dict(DEFAULT_PRICES, SCRATCH_1=0.140)


class Request(NamedTuple):
    required: float
    min_capacity: float
    efa: bool
    groups: Optional[tuple[str, ...]]
    max_capacity: Optional[int]


def brute_force(req: Request) -> Optional[tuple[Fraction, Fraction, int]]:
    """The optimal (cost, throughput, scratch) over every valid configuration, or None."""
    groups = req.groups or (("PERSISTENT_2",) if req.efa else ("SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"))
    configs = [c for c in TABLE if c.group in groups and c.efa == req.efa]
    slowest = min(c.rate for c in configs)
    bound = int(max(req.min_capacity, req.required * 1024 / slowest)) + 2 * max(c.step for c in configs) + 2400
    if req.max_capacity is not None:
        bound = min(bound, req.max_capacity)
    required_x1024 = Fraction(req.required) * 1024
    best = None
    for c in configs:
        sizes = np.concatenate([np.array(c.explicit, dtype=np.int64), np.arange(c.step, bound + 1, c.step, dtype=np.int64)])
        sizes = sizes[sizes <= bound]
        # throughput c/1024*rate >= required  <=>  c*rate >= required*1024 (exact for the float required)
        threshold = math.ceil(required_x1024)  # c*rate is an integer
        feasible = sizes[(sizes * c.rate >= threshold) & (sizes >= req.min_capacity)]
        if feasible.size == 0:
            continue
        capacity = int(feasible.min())  # cost grows with capacity within a tier
        price_milli = Fraction(repr(PRICES[c.key])) * 1000
        assert price_milli.denominator == 1
        key = (capacity * price_milli / 1000, -Fraction(capacity * c.rate, 1024), int(c.scratch))
        if best is None or key < best:
            best = key
    if best is None:
        return None
    return best[0], -best[1], best[2]


def draw_requests(n: int, seed: int) -> list[Request]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        required = 10 ** rng.uniform(2, math.log10(500_000))
        min_capacity = 0.0 if rng.random() < 0.25 else 10 ** rng.uniform(0, 6)
        efa = rng.random() < 0.2
        groups: Optional[tuple[str, ...]] = None
        if not efa and rng.random() < 0.4:
            groups = tuple(rng.sample(["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_1_HDD", "PERSISTENT_2"], rng.randint(1, 5)))
        max_capacity = int(10 ** rng.uniform(3, 6.5)) if rng.random() < 0.1 else None
        out.append(Request(required, min_capacity, efa, groups, max_capacity))
    return out


def plan(req: Request):
    return plan_lustre(
        req.required, req.min_capacity, efa_enabled=req.efa, deployment_types=req.groups,
        prices=PRICES, max_capacity_gib=req.max_capacity,
    )


def cold_start(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cold-start-runs", type=int, default=7)
    args = parser.parse_args()

    requests = draw_requests(args.requests, args.seed)
    optimal = both_infeasible = 0
    worst_ratio = 0.0
    mismatches = []
    start = time.perf_counter()
    for req in requests:
        expected = brute_force(req)
        try:
            got = plan(req)
        except SizingError:
            got = None
        if expected is None or got is None:
            if expected is None and got is None:
                optimal += 1
                both_infeasible += 1
            else:
                mismatches.append((req, expected, got))
            continue
        rank = (Fraction(repr(got.price_usd_per_gb_month)) * got.storage_capacity_gib,
                Fraction(got.storage_capacity_gib * (got.per_unit_storage_throughput or 200), 1024),
                int(got.deployment_type.startswith("SCRATCH")))
        if rank == expected:
            optimal += 1
        else:
            mismatches.append((req, expected, got))
        worst_ratio = max(worst_ratio, float(rank[0] / expected[0]))
    brute_seconds = time.perf_counter() - start

    start = time.perf_counter()
    for req in requests:
        try:
            plan(req)
        except SizingError:
            pass
    plan_seconds = time.perf_counter() - start

    python_pass = cold_start([sys.executable, "-c", "pass"], args.cold_start_runs)
    cli = cold_start([sys.executable, "-m", "smddp_infra.cli", "size", "--instance-type", "ml.p5.48xlarge",
                      "--instance-count", "16", "--read-mbps-per-gpu", "200", "--dataset-gib", "20000", "--json"],
                     args.cold_start_runs)

    required = [r.required for r in requests]
    capacity = [r.min_capacity for r in requests]
    print(f"requests:            {len(requests):,} (seed {args.seed})")
    print(f"  required MB/s:     {min(required):,.1f} .. {max(required):,.1f}")
    print(f"  min capacity GiB:  {min(capacity):,.1f} .. {max(capacity):,.1f}")
    print(f"  EFA / named types / capped: {sum(r.efa for r in requests):,} / "
          f"{sum(r.groups is not None for r in requests):,} / {sum(r.max_capacity is not None for r in requests):,}")
    print(f"share optimal:       {optimal / len(requests):.4%} ({optimal:,}/{len(requests):,}; "
          f"{both_infeasible:,} agreed nothing fits the cap)")
    print(f"worst cost ratio:    {worst_ratio:.6f} (plan cost / brute-force optimum)")
    print(f"plans per second:    {len(requests) / plan_seconds:,.0f} ({plan_seconds * 1e6 / len(requests):.0f} us per plan)")
    print(f"brute force time:    {brute_seconds:.1f} s")
    print(f"CLI cold start:      {cli * 1000:.0f} ms median of {args.cold_start_runs} "
          f"(python -c pass: {python_pass * 1000:.0f} ms; difference {(cli - python_pass) * 1000:.0f} ms)")
    for req, expected, got in mismatches[:5]:
        print(f"MISMATCH {req} expected {expected} got {got}")
    return 0 if not mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
