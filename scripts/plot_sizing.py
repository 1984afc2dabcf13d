"""Draw docs/img/sizing-cost.png: monthly cost against required throughput, per deployment type.

    python scripts/plot_sizing.py [--out docs/img/sizing-cost.png] [--dataset-gib 0]

Each line is the cheapest valid file system of one group for the required MB/s (and the
given capacity need), computed by plan_lustre with the default (UNCONFIRMED, dated) prices;
the dashed line is the overall choice. Steps are the valid capacity increments.
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

from smddp_infra.sizing.planner import plan_lustre  # noqa: E402
from smddp_infra.sizing.prices import PRICE_TABLE_DATE, PRICE_TABLE_REGION  # noqa: E402

SERIES = (
    ("SCRATCH_2", {"deployment_types": ["SCRATCH_2"]}),
    ("PERSISTENT_1 (SSD)", {"deployment_types": ["PERSISTENT_1"]}),
    ("PERSISTENT_2", {"deployment_types": ["PERSISTENT_2"]}),
    ("PERSISTENT_2 + EFA", {"efa_enabled": True}),
    ("PERSISTENT_1 HDD", {"deployment_types": ["PERSISTENT_1_HDD"]}),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "sizing-cost.png")
    parser.add_argument("--dataset-gib", type=float, default=0.0)
    args = parser.parse_args()

    required = np.geomspace(100, 200_000, 700)
    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=110)
    for label, options in SERIES:
        costs = [plan_lustre(float(r), args.dataset_gib, **options).monthly_cost_usd for r in required]
        ax.step(required, costs, where="post", label=label, linewidth=1.3)
    best = [plan_lustre(float(r), args.dataset_gib).monthly_cost_usd for r in required]
    ax.step(required, best, where="post", label="chosen (default types)", color="black", linestyle="--", linewidth=1.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("required baseline read throughput (MB/s)")
    ax.set_ylabel("USD per month")
    need = f", holding {args.dataset_gib:,.0f} GiB" if args.dataset_gib else ""
    ax.set_title(
        f"Cheapest valid FSx for Lustre per deployment type{need}\n"
        f"{PRICE_TABLE_REGION} list prices recorded {PRICE_TABLE_DATE} (UNCONFIRMED); baseline throughput only",
        fontsize=10,
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out)
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
