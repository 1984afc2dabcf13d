"""Table-driven tests of every FSx for Lustre capacity/throughput rule the calculator relies on.

The expected values are written out here from the FSx rules (CloudFormation
AWS::FSx::FileSystem reference, FSx for Lustre user guide) so that a mistake in
lustre_rules.py cannot hide behind itself. Boundaries: 1200, 2400, 4800 GiB; SCRATCH_1's
3600 multiples; HDD's 6000/1800 multiples; the EFA steps; and the throughput cross-overs
where SCRATCH_2 and PERSISTENT_2 tiers swap places under the default prices.
"""

from __future__ import annotations

import pytest

from smddp_infra.sizing import lustre_rules as rules
from smddp_infra.sizing.planner import plan_lustre
from smddp_infra.sizing.prices import DEFAULT_PRICES, PRICE_TABLE_DATE

SSD = "SSD"
HDD = "HDD"

# (deployment type, storage, per-unit MB/s/TiB (None = scratch), efa) -> allowed per-unit values
EXPECTED_THROUGHPUTS = {
    ("SCRATCH_1", SSD, False): (),
    ("SCRATCH_2", SSD, False): (),
    ("PERSISTENT_1", SSD, False): (50, 100, 200),
    ("PERSISTENT_1", HDD, False): (12, 40),
    ("PERSISTENT_2", SSD, False): (125, 250, 500, 1000),
    ("PERSISTENT_2", SSD, True): (125, 250, 500, 1000),
}


@pytest.mark.parametrize(("deployment_type", "storage_type", "efa"), sorted(EXPECTED_THROUGHPUTS))
def test_per_unit_throughput_values_match_the_fsx_rules(deployment_type, storage_type, efa):
    allowed = rules.allowed_throughputs(deployment_type, storage_type=storage_type, efa_enabled=efa)
    assert allowed == EXPECTED_THROUGHPUTS[(deployment_type, storage_type, efa)]


def test_there_are_exactly_the_expected_tiers():
    keys = sorted((t.key, t.efa_enabled) for t in rules.ALL_TIERS)
    expected = sorted(
        [("SCRATCH_1", False), ("SCRATCH_2", False)]
        + [(f"PERSISTENT_1/{t}", False) for t in (50, 100, 200)]
        + [(f"PERSISTENT_1/HDD/{t}", False) for t in (12, 40)]
        + [(f"PERSISTENT_2/{t}", efa) for t in (125, 250, 500, 1000) for efa in (False, True)]
    )
    assert keys == expected


def _tier(key: str, efa: bool = False) -> rules.Tier:
    (tier,) = [t for t in rules.ALL_TIERS if t.key == key and t.efa_enabled == efa]
    return tier


SSD_KEYS = ["SCRATCH_2", "PERSISTENT_1/50", "PERSISTENT_1/100", "PERSISTENT_1/200"] + [
    f"PERSISTENT_2/{t}" for t in (125, 250, 500, 1000)
]

# capacity -> valid? for "1200, 2400, then multiples of 2400"
SSD_VALIDITY = {
    0: False, 1199: False, 1200: True, 1201: False, 1800: False, 2399: False, 2400: True,
    3600: False, 4799: False, 4800: True, 6000: False, 7200: True, 100_800: True, 100_801: False,
}
SCRATCH_1_VALIDITY = {1200: True, 2400: True, 3600: True, 4800: False, 6000: False, 7200: True, 10_800: True}
HDD_12_VALIDITY = {1800: False, 5999: False, 6000: True, 9000: False, 12_000: True, 18_000: True}
HDD_40_VALIDITY = {1200: False, 1800: True, 2400: False, 3600: True, 5400: True, 6000: False}
EFA_VALIDITY = {
    125: {1200: False, 19_200: False, 38_400: True, 57_600: False, 76_800: True},
    250: {2400: False, 19_200: True, 28_800: False, 38_400: True},
    500: {4800: False, 9600: True, 14_400: False, 19_200: True},
    1000: {1200: False, 2400: False, 4800: True, 7200: False, 9600: True},
}

VALIDITY_CASES = (
    [(key, False, c, ok) for key in SSD_KEYS for c, ok in SSD_VALIDITY.items()]
    + [("SCRATCH_1", False, c, ok) for c, ok in SCRATCH_1_VALIDITY.items()]
    + [("PERSISTENT_1/HDD/12", False, c, ok) for c, ok in HDD_12_VALIDITY.items()]
    + [("PERSISTENT_1/HDD/40", False, c, ok) for c, ok in HDD_40_VALIDITY.items()]
    + [(f"PERSISTENT_2/{t}", True, c, ok) for t, cases in EFA_VALIDITY.items() for c, ok in cases.items()]
)


@pytest.mark.parametrize(("key", "efa", "capacity", "valid"), VALIDITY_CASES)
def test_capacity_validity_at_the_boundaries(key, efa, capacity, valid):
    tier = _tier(key, efa)
    assert tier.capacity.is_valid(capacity) is valid
    # and CloudFormation's view, through the shared validator
    problems = rules.validate_lustre_settings(
        deployment_type=tier.deployment_type,
        storage_capacity_gib=capacity,
        per_unit_storage_throughput=tier.per_unit_storage_throughput,
        storage_type=tier.storage_type,
        efa_enabled=efa,
        drive_cache_type="NONE" if tier.storage_type == HDD else None,
    )
    assert (problems == []) is valid, problems


# needed GiB -> smallest valid capacity at or above it
SMALLEST_CASES = (
    [(key, False, need, want) for key in SSD_KEYS for need, want in
     ((0, 1200), (1, 1200), (1200, 1200), (1200.001, 2400), (2400, 2400), (2400.5, 4800), (4800, 4800), (4801, 7200))]
    + [("SCRATCH_1", False, need, want) for need, want in ((2400, 2400), (2401, 3600), (3601, 7200), (7201, 10_800))]
    + [("PERSISTENT_1/HDD/12", False, need, want) for need, want in ((0, 6000), (6000, 6000), (6000.1, 12_000))]
    + [("PERSISTENT_1/HDD/40", False, need, want) for need, want in ((0, 1800), (1801, 3600), (3600, 3600))]
    + [("PERSISTENT_2/125", True, 1, 38_400), ("PERSISTENT_2/125", True, 38_401, 76_800),
       ("PERSISTENT_2/250", True, 19_200, 19_200), ("PERSISTENT_2/250", True, 19_201, 38_400),
       ("PERSISTENT_2/500", True, 0, 9600), ("PERSISTENT_2/500", True, 9601, 19_200),
       ("PERSISTENT_2/1000", True, 0, 4800), ("PERSISTENT_2/1000", True, 4801, 9600)]
)


@pytest.mark.parametrize(("key", "efa", "need", "want"), SMALLEST_CASES)
def test_smallest_valid_capacity_at_or_above(key, efa, need, want):
    assert _tier(key, efa).capacity.smallest_at_least(need) == want


@pytest.mark.parametrize(
    ("key", "capacity", "mbps"),
    [
        ("SCRATCH_2", 1200, 234.375),  # 1200 / 1024 x 200 (scratch baseline)
        ("SCRATCH_1", 3600, 703.125),
        ("PERSISTENT_1/50", 2400, 117.1875),
        ("PERSISTENT_2/125", 2400, 292.96875),
        ("PERSISTENT_2/1000", 4800, 4687.5),
        ("PERSISTENT_1/HDD/12", 6000, 70.3125),
        ("PERSISTENT_1/HDD/40", 1800, 70.3125),
    ],
)
def test_baseline_throughput_is_tib_times_per_unit_with_tib_1024_gib(key, capacity, mbps):
    assert _tier(key).throughput_mbps(capacity) == mbps


def test_default_price_table_is_the_dated_us_east_1_table():
    assert dict(DEFAULT_PRICES) == {
        "SCRATCH_2": 0.140,
        "PERSISTENT_1/50": 0.145,
        "PERSISTENT_1/100": 0.210,
        "PERSISTENT_1/200": 0.290,
        "PERSISTENT_2/125": 0.145,
        "PERSISTENT_2/250": 0.210,
        "PERSISTENT_2/500": 0.340,
        "PERSISTENT_2/1000": 0.600,
        "PERSISTENT_1/HDD/12": 0.025,
        "PERSISTENT_1/HDD/40": 0.083,
    }
    year, month, day = PRICE_TABLE_DATE.split("-")
    assert len(year) == 4 and 1 <= int(month) <= 12 and 1 <= int(day) <= 31
    with pytest.raises(TypeError):
        DEFAULT_PRICES["SCRATCH_2"] = 0.0  # one table, read-only


# --- the planner at the boundaries ----------------------------------------------------------

@pytest.mark.parametrize(
    ("required", "capacity"),
    [
        (234.375, 1200),  # exactly 1200 GiB of scratch: that size, not the next
        (234.376, 2400),
        (468.75, 2400),
        (468.7501, 4800),
        (937.5, 4800),
        (937.51, 7200),
    ],
)
def test_scratch_2_size_steps_exactly_at_throughput_boundaries(required, capacity):
    plan = plan_lustre(required, deployment_types=["SCRATCH_2"])
    assert plan.storage_capacity_gib == capacity
    assert plan.baseline_throughput_mbps >= required


@pytest.mark.parametrize(
    ("min_capacity", "capacity"),
    [(0, 1200), (1199.9, 1200), (1200, 1200), (1200.5, 2400), (2400, 2400), (2401, 4800), (4800, 4800), (4801, 7200)],
)
def test_capacity_boundaries_1200_2400_4800(min_capacity, capacity):
    plan = plan_lustre(1, min_capacity)
    assert (plan.deployment_type, plan.storage_capacity_gib) == ("SCRATCH_2", capacity)  # $0.140/GB is cheapest SSD


# Hand-computed with the default prices; cost = GiB x USD/GB-month.
CROSSOVERS = [
    # required MB/s -> winner, GiB, $/month      (runner-up in the comment)
    (234.375, "SCRATCH_2", 1200, 168.0),  # P2/250 1200 = $252
    (234.376, "PERSISTENT_2/250", 1200, 252.0),  # scratch now needs 2400 = $336
    (292.96875, "PERSISTENT_2/250", 1200, 252.0),  # the 1200 GiB x 250 boundary, met exactly
    (292.97, "SCRATCH_2", 2400, 336.0),  # P2/500 1200 = $408
    (468.75, "SCRATCH_2", 2400, 336.0),
    (468.76, "PERSISTENT_2/500", 1200, 408.0),  # scratch 4800 = $672, P2/250 2400 = $504
    (585.9375, "PERSISTENT_2/500", 1200, 408.0),
    (585.94, "SCRATCH_2", 4800, 672.0),  # P2/1000 1200 = $720
    (937.5, "SCRATCH_2", 4800, 672.0),
    (937.51, "PERSISTENT_2/1000", 1200, 720.0),  # scratch 7200 = $1008
    (1171.875, "PERSISTENT_2/1000", 1200, 720.0),
    (1171.88, "SCRATCH_2", 7200, 1008.0),  # P2/1000 2400 = $1,440; P2/500 2400 gives 1171.875, just short
    (10_000, "PERSISTENT_2/1000", 12_000, 7200.0),  # scratch 52,800 = $7,392; P2/500 21,600 = $7,344
]


@pytest.mark.parametrize(("required", "key", "capacity", "cost"), CROSSOVERS)
def test_scratch_2_vs_persistent_2_crossovers(required, key, capacity, cost):
    plan = plan_lustre(required)
    assert (plan.tier_key, plan.storage_capacity_gib) == (key, capacity)
    assert plan.monthly_cost_usd == pytest.approx(cost, abs=1e-9)


def test_efa_one_step_is_the_minimum_and_the_cheapest_small_efa_file_system():
    plan = plan_lustre(1, efa_enabled=True)
    assert (plan.tier_key, plan.storage_capacity_gib, plan.efa_enabled) == ("PERSISTENT_2/1000", 4800, True)
    assert plan.monthly_cost_usd == pytest.approx(2880.0)  # P2/500 9600 = $3264


def test_efa_capacity_bound_picks_the_coarse_cheap_tier():
    # 40,000 GiB: P2/125 76,800 = $11,136 beats P2/250 57,600 = $12,096
    plan = plan_lustre(1, 40_000, efa_enabled=True)
    assert (plan.tier_key, plan.storage_capacity_gib) == ("PERSISTENT_2/125", 76_800)


@pytest.mark.parametrize(
    ("required", "min_capacity", "key", "capacity"),
    [
        (1, 0, "PERSISTENT_1/HDD/40", 1800),  # $149.40 vs HDD/12 6000 = $150
        (1, 6000, "PERSISTENT_1/HDD/12", 6000),
        (100, 6000, "PERSISTENT_1/HDD/12", 12_000),  # 100 MB/s needs 8533 GiB at 12
        (100, 0, "PERSISTENT_1/HDD/40", 3600),  # needs 2560 GiB at 40: 3600 = $298.80 vs 12,000 at 12 = $300
    ],
)
def test_hdd_multiples_of_6000_and_1800(required, min_capacity, key, capacity):
    plan = plan_lustre(required, min_capacity, deployment_types=["PERSISTENT_1_HDD"])
    assert (plan.tier_key, plan.storage_capacity_gib, plan.storage_type) == (key, capacity, HDD)
    assert plan.drive_cache_type == "NONE"


def test_hdd_is_not_considered_unless_named():
    # HDD/12 would hold 600,000 GiB for $15,000; SCRATCH_2 costs $84,000 but is the default
    assert plan_lustre(1, 600_000).storage_type == SSD
    assert plan_lustre(1, 600_000, deployment_types=["SCRATCH_2", "PERSISTENT_1_HDD"]).storage_type == HDD


def test_scratch_1_is_not_considered_by_default_and_needs_a_price():
    assert all(p.deployment_type != "SCRATCH_1" for p in (plan_lustre(r) for r in (1, 500, 5000)))
    plan = plan_lustre(600, deployment_types=["SCRATCH_1"], prices={"SCRATCH_1": 0.14})
    assert (plan.deployment_type, plan.storage_capacity_gib) == ("SCRATCH_1", 3600)


def test_equal_cost_goes_to_the_higher_throughput():
    # P1/50 and P2/125 are both $0.145/GB: at 1200 GiB the 125 tier gives more for the same money
    plan = plan_lustre(10, deployment_types=["PERSISTENT_1", "PERSISTENT_2"])
    assert (plan.tier_key, plan.storage_capacity_gib) == ("PERSISTENT_2/125", 1200)


def test_exactly_equal_cost_from_different_sizes_is_a_tie_not_float_noise():
    # 7,200 GiB x 0.14 and 1,200 GiB x 0.84 are both $1,008, but in binary floats
    # 7200 * 0.14 == 1008.0000000000001 > 1200 * 0.84 == 1008.0. It is a tie, so the higher
    # throughput wins: SCRATCH_2 7,200 GiB (1,406 MB/s) over P2/1000 1,200 GiB (1,172 MB/s).
    assert 7200 * 0.14 > 1200 * 0.84  # the float noise this test is about
    prices = {"SCRATCH_2": 0.14, "PERSISTENT_2/125": 9.0, "PERSISTENT_2/250": 9.0,
              "PERSISTENT_2/500": 9.0, "PERSISTENT_2/1000": 0.84}
    plan = plan_lustre(1000, deployment_types=["SCRATCH_2", "PERSISTENT_2"], prices=prices)
    assert (plan.tier_key, plan.storage_capacity_gib) == ("SCRATCH_2", 7200)
    assert plan.monthly_cost_usd == 1008.0


def test_equal_cost_and_throughput_goes_to_persistent_over_scratch():
    prices = dict(DEFAULT_PRICES, **{"PERSISTENT_1/200": 0.140})  # same price, same 200 MB/s/TiB as scratch
    plan = plan_lustre(100, prices=prices)
    assert (plan.deployment_type, plan.per_unit_storage_throughput, plan.storage_capacity_gib) == ("PERSISTENT_1", 200, 1200)


@pytest.mark.parametrize("throughput", [None, 200])  # missing, or not an FSx tier: no tier to name
def test_an_efa_capacity_that_fits_no_tier_names_every_efa_step(throughput):
    problems = rules.validate_lustre_settings(
        deployment_type="PERSISTENT_2", storage_capacity_gib=1200,
        per_unit_storage_throughput=throughput, efa_enabled=True,
    )
    (capacity,) = [p for p in problems if p.startswith("StorageCapacity")]
    assert capacity == (
        "StorageCapacity 1200 GiB is not valid for any PERSISTENT_2 tier with EfaEnabled: it must be a multiple "
        "of 38,400 GiB at 125, 19,200 GiB at 250, 9,600 GiB at 500 or 4,800 GiB at 1000 MB/s/TiB"
    )


def test_a_capacity_that_fits_no_tier_without_efa_keeps_its_short_message():
    problems = rules.validate_lustre_settings(deployment_type="PERSISTENT_2", storage_capacity_gib=1000)
    assert "StorageCapacity 1000 GiB is not valid for any PERSISTENT_2 tier" in problems
