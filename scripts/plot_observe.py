"""Draw docs/img/observe-io-bound-day.png: a synthetic I/O-bound day against the file system's baseline.

    python scripts/plot_observe.py [--out docs/img/observe-io-bound-day.png]

The file system is the default app's (the calculator's plan for 1,600 MB/s and 2,000 GiB).
The jobs WANT 2,600 MB/s from 08:00 to 20:00 but cannot read faster than the baseline, so
they read at it (a little noise below); at night the cluster is idle. The alarm line, the
shaded ALARM periods (3 of 4 at 80 % of the baseline) and the verdict and re-plan in the
title are computed with the same functions the construct and ``smddp-infra observe`` use.
Synthetic data, fixed seed: rerun the script after changing a default.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from smddp_infra.observe import metrics as m  # noqa: E402
from smddp_infra.observe.replan import advise  # noqa: E402
from smddp_infra.sizing.growth import DeployedFileSystem  # noqa: E402
from smddp_infra.sizing.planner import plan_lustre  # noqa: E402

DEMAND_MBPS = 2600


def synthetic_day(baseline: float, seed: int = 20) -> tuple[np.ndarray, list[float]]:
    """Hours and per-period read MB/s (from bytes per period, as FSx reports them)."""
    rng = np.random.default_rng(seed)
    periods = 24 * 3600 // m.DEFAULT_PERIOD_SECONDS
    hours = np.arange(periods) * m.DEFAULT_PERIOD_SECONDS / 3600
    values = []
    for hour in hours:
        if 8 <= hour < 20:
            rate = min(DEMAND_MBPS, baseline) * rng.uniform(0.95, 1.0)
        else:
            rate = rng.uniform(0, 0.03) * baseline
        sum_bytes = rate * 1e6 * m.DEFAULT_PERIOD_SECONDS  # what DataReadBytes Sum holds
        values.append(m.mbps(sum_bytes, m.DEFAULT_PERIOD_SECONDS))
    return hours, values


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "observe-io-bound-day.png")
    args = parser.parse_args()
    plan = plan_lustre(1600, 2000)
    sizing = plan.sizing_record()
    baseline = sizing.baseline_throughput_mbps
    hours, values = synthetic_day(baseline)
    threshold = m.throughput_threshold_mbps(baseline, m.DEFAULT_THROUGHPUT_FRACTION)
    states = m.alarm_states(values, threshold, datapoints_to_alarm=m.DEFAULT_DATAPOINTS_TO_ALARM,
                            evaluation_periods=m.DEFAULT_EVALUATION_PERIODS)
    busy = [v for h, v in zip(hours, values) if 8 <= h < 20]
    summary = m.summarize(busy)
    assert summary is not None
    found = m.verdict(summary.p95, baseline)
    deployed = DeployedFileSystem(deployment_type=sizing.deployment_type, storage_type=sizing.storage_type,
                                  storage_capacity_gib=sizing.storage_capacity_gib,
                                  per_unit_storage_throughput=sizing.per_unit_storage_throughput)
    advice = advise(deployed, "fs-0123456789abcdef0", round(summary.p95 * m.DEFAULT_HEADROOM, 1),
                    floor_gib=sizing.min_capacity_gib, grow=True, deployment_types=sizing.chosen_from)
    assert advice.headline is not None and advice.headline.plan is not None  # SCRATCH_2 grows in place
    new = advice.headline.plan

    fig, ax = plt.subplots(figsize=(10, 4.8), dpi=110)
    ax.plot(hours, values, color="#1f77b4", linewidth=1.2, label="read MB/s (Sum(DataReadBytes) / 300 s / 1e6)")
    ax.axhline(DEMAND_MBPS, color="#7f7f7f", linestyle=":", label=f"what the jobs want ({DEMAND_MBPS:,} MB/s, unseen)")
    ax.axhline(baseline, color="#d62728", label=f"baseline {baseline:,.0f} MB/s ({sizing.deployment_type}, "
                                                 f"{sizing.storage_capacity_gib:,} GiB)")
    ax.axhline(sizing.required_throughput_mbps, color="#2ca02c", linestyle="--",
               label=f"planned requirement {sizing.required_throughput_mbps:,.0f} MB/s")
    ax.axhline(threshold, color="#ff7f0e", linestyle="--", label=f"alarm threshold (80% of baseline) {threshold:,.0f} MB/s")
    step = m.DEFAULT_PERIOD_SECONDS / 3600
    for hour, state in zip(hours, states):
        if state:
            ax.axvspan(hour, hour + step, color="#d62728", alpha=0.08, linewidth=0)
    ax.set_xlim(0, 24)
    ax.set_ylim(0, DEMAND_MBPS * 1.1)
    ax.set_xticks(range(0, 25, 2))
    ax.set_xlabel("hour of the day (UTC); shaded: throughput alarm in ALARM (3 of 4 periods)")
    ax.set_ylabel("MB/s")
    ax.set_title(f"I/O-bound day: p95 {summary.p95:,.0f} MB/s = {summary.p95 / baseline:.0%} of baseline -> {found.value}; "
                 f"re-plan for {advice.required_mbps:,.0f} MB/s: {new.deployment_type}"
                 f"{'/' + str(new.per_unit_storage_throughput) if new.per_unit_storage_throughput else ''} "
                 f"{new.storage_capacity_gib:,} GiB", fontsize=9)
    ax.legend(loc="upper left", fontsize=7.5, framealpha=0.9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out)
    print(f"wrote {args.out}: p95 {summary.p95:,.1f} MB/s, {sum(states)} periods in ALARM, verdict {found.value}, "
          f"re-plan {new.storage_capacity_gib:,} GiB {new.deployment_type} ({advice.headline.change})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
