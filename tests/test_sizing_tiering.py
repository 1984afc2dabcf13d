"""Intelligent-Tiering in the calculator: the cheapest valid plan under the user's prices,
never offered without them, and one clear line for a bad price file.

The optimality proof is a brute force written here with its own copy of the class's rules
(botocore's fsx model: ThroughputCapacity a multiple of 4,000 MB/s up to 2,000,000; read cache
8 to 32,768 GiB per 1,000 MB/s): EVERY throughput step from the smallest up to several above
it, EVERY whole-GiB cache size the class allows at that step (numpy), exact integer costs.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Optional

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from smddp_infra.cli import main
from smddp_infra.errors import SizingError
from smddp_infra.sizing import plan_lustre
from smddp_infra.sizing.planner import best_per_deployment_type
from smddp_infra.sizing.tiering import TieringPlan, TieringPrices, parse_price_file, plan_intelligent_tiering

# ---------------------------------------------------------------- the independent brute force

STEP, TOP = 4000, 2_000_000
CACHE_MIN_PER_1000, CACHE_MAX_PER_1000 = 8, 32_768
SCALE = 10_000  # prices with at most 4 decimals become whole numbers


def _scaled(price: float) -> int:
    value = Fraction(repr(price)) * SCALE
    assert value.denominator == 1, price
    return int(value)


def brute_force(required: float, dataset_gib: int, hot_gib: int, prices: TieringPrices,
                extra_steps: int = 4) -> tuple[int, int, Fraction]:
    """(throughput, cache, cost) of the cheapest valid plan: every step, every cache size."""
    first = 1
    while first * STEP < required:
        first += 1
    best: Optional[tuple[int, int, int]] = None
    for steps in range(first, first + extra_steps + 1):
        throughput = steps * STEP
        if throughput > TOP:
            break
        low = -(-CACHE_MIN_PER_1000 * throughput // 1000)
        high = CACHE_MAX_PER_1000 * throughput // 1000
        caches = np.arange(low, high + 1, dtype=np.int64)
        # the cache must hold the working set, or be the largest the class allows at this step
        caches = caches[caches >= min(hot_gib, high)]
        costs = (throughput * _scaled(prices.throughput_mbps_month) + caches * _scaled(prices.read_cache_gib_month)
                 + dataset_gib * _scaled(prices.frequent_gb_month))
        index = int(np.argmin(costs))
        candidate = (int(costs[index]), throughput, int(caches[index]))
        if best is None or candidate < best:
            best = candidate
    assert best is not None
    cost, throughput, cache = best
    return throughput, cache, Fraction(cost, SCALE)


PRICES = TieringPrices(frequent_gb_month=0.023, throughput_mbps_month=0.9, read_cache_gib_month=0.3,
                       infrequent_gb_month=0.0125, archive_gb_month=0.004, requests_per_1000=0.0005)

price = st.integers(min_value=1, max_value=20_000).map(lambda n: n / SCALE)
prices_strategy = st.builds(TieringPrices, frequent_gb_month=price, throughput_mbps_month=price, read_cache_gib_month=price)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(required=st.integers(min_value=1, max_value=14_000), dataset=st.integers(min_value=0, max_value=600_000),
       hot_share=st.floats(min_value=0, max_value=1), prices=prices_strategy)
@example(required=4000, dataset=0, hot_share=0.0, prices=PRICES)  # exactly one step, nothing to cache
@example(required=4001, dataset=500_000, hot_share=1.0, prices=PRICES)  # more than the cache can hold
def test_the_plan_is_the_brute_force_optimum(required, dataset, hot_share, prices):
    hot = int(dataset * hot_share)
    plan = plan_intelligent_tiering(required, dataset, prices=prices, hot_gib=hot)
    throughput, cache, cost = brute_force(required, dataset, hot, prices)
    assert (plan.throughput_capacity_mbps, plan.read_cache_gib) == (throughput, cache)
    assert plan.monthly_cost_usd == pytest.approx(float(cost), rel=1e-12)
    assert plan.problems() == []
    assert (plan.warnings != ()) == (hot > CACHE_MAX_PER_1000 * throughput // 1000)


@settings(max_examples=30, deadline=None)
@given(required=st.integers(min_value=100, max_value=12_000), dataset=st.integers(min_value=0, max_value=300_000),
       prices=prices_strategy)
def test_plan_lustre_offers_it_only_when_strictly_cheaper_than_every_ssd_plan(required, dataset, prices):
    ssd = plan_lustre(required, dataset)
    chosen = plan_lustre(required, dataset, storage_classes=["SSD", "INTELLIGENT_TIERING"], tiering_prices=prices)
    _, _, it_cost = brute_force(required, dataset, dataset, prices)
    if float(it_cost) < ssd.monthly_cost_usd:
        assert isinstance(chosen, TieringPlan) and chosen.monthly_cost_usd == pytest.approx(float(it_cost))
    else:
        assert chosen == ssd


def test_the_default_working_set_is_the_whole_dataset_and_the_cache_is_capped_with_a_warning():
    plan = plan_intelligent_tiering(6000, 500_000, prices=PRICES)
    assert (plan.throughput_capacity_mbps, plan.read_cache_gib, plan.hot_gib) == (8000, 262_144, 500_000)
    (warning,) = plan.warnings
    assert "larger than the largest read cache at 8,000 MB/s (262,144 GiB" in warning and "tens of milliseconds" in warning
    small = plan_intelligent_tiering(6000, 10, prices=PRICES)
    assert small.read_cache_gib == 64 and small.warnings == ()  # the class's floor: 8 GiB per 1,000 MB/s


def test_a_requirement_above_the_largest_throughput_is_refused():
    with pytest.raises(SizingError, match="above Intelligent-Tiering's largest ThroughputCapacity, 2,000,000 MB/s"):
        plan_intelligent_tiering(2_000_001, prices=PRICES)


def test_never_offered_without_prices():
    with pytest.raises(SizingError, match="tiering_prices is not given"):
        plan_lustre(1000, storage_classes=["SSD", "INTELLIGENT_TIERING"])
    plans = best_per_deployment_type(1000, storage_classes=["SSD"])
    assert "INTELLIGENT_TIERING" not in plans


# ---------------------------------------------------------------- the price file and the CLI

def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["size", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def price_file(tmp_path: Path) -> Path:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"INTELLIGENT_TIERING": {
        "frequent_gb_month": 0.023, "throughput_mbps_month": 0.9, "read_cache_gib_month": 0.3,
        "requests_per_1000": 0.0005}}))
    return path


def test_the_table_shows_it_beside_the_ssd_plans_with_prices(capsys, price_file):
    code, out, _ = _run(capsys, "--required-mbps", "6000", "--dataset-gib", "200000", "--hot-gib", "50000",
                        "--storage-class", "SSD", "INTELLIGENT_TIERING", "--prices", str(price_file))
    assert code == 0
    assert "INTELLIGENT_TIERING (chosen)" in out and "SCRATCH_2" in out and "not compared" not in out


def test_without_prices_the_table_says_why_it_is_not_compared(capsys):
    code, out, _ = _run(capsys, "--required-mbps", "6000", "--dataset-gib", "200000",
                        "--storage-class", "SSD", "INTELLIGENT_TIERING")
    assert code == 0 and "INTELLIGENT_TIERING (chosen)" not in out
    assert "Intelligent-Tiering not compared: AWS publishes no price figures" in " ".join(out.split())


def test_json_is_the_it_plan_when_it_wins(capsys, price_file):
    code, out, _ = _run(capsys, "--required-mbps", "6000", "--dataset-gib", "200000", "--hot-gib", "50000",
                        "--storage-class", "INTELLIGENT_TIERING", "--prices", str(price_file), "--json")
    plan = json.loads(out)
    assert code == 0 and plan["storage_type"] == "INTELLIGENT_TIERING"
    assert (plan["throughput_capacity_mbps"], plan["read_cache_gib"]) == (8000, 50_000)
    assert plan["monthly_cost_usd"] == pytest.approx(8000 * 0.9 + 50_000 * 0.3 + 200_000 * 0.023)


@pytest.mark.parametrize("content, args, message", [
    (None, ("--storage-class", "INTELLIGENT_TIERING"), "--storage-class INTELLIGENT_TIERING needs --prices FILE"),
    ({"INTELLIGENT_TIERING": {"frequent_gb_month": 0.02}}, ("--storage-class", "INTELLIGENT_TIERING"),
     "is missing throughput_mbps_month, read_cache_gib_month"),
    ({"INTELLIGENT_TIERING": {"frequent_gb_month": 0.02, "throughput_mbps_month": 1, "read_cache_gib_month": -1}},
     ("--storage-class", "INTELLIGENT_TIERING"), "read_cache_gib_month must be a number of USD > 0, got -1"),
    ({"GLACIER": {}}, (), "has unknown section(s) GLACIER"),
    ("not json", (), "is not valid JSON"),
    (None, ("--storage-class", "HDD"), "--storage-class must be among SSD, INTELLIGENT_TIERING, got 'HDD'"),
    (None, ("--hot-gib", "10"), "--hot-gib sizes Intelligent-Tiering's read cache"),
])
def test_bad_price_input_is_one_line(capsys, tmp_path, content, args, message):
    argv = ["--required-mbps", "6000", "--dataset-gib", "100", *args]
    if content is not None:
        path = tmp_path / "p.json"
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        argv += ["--prices", str(path)]
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_the_ssd_section_overrides_default_prices():
    parsed = parse_price_file({"SSD": {"SCRATCH_2": 0.5}})
    assert parsed.ssd == {"SCRATCH_2": 0.5} and parsed.intelligent_tiering is None
