"""plan_lustre is exactly optimal, valid and honest; bad requests fail with a clear SizingError.

The optimality proof is a property test against an independent brute force written here:
its own copy of the FSx rule table (from the FSx docs, not lustre_rules.py), an enumeration
of EVERY valid (tier, capacity) up to a bound no optimum can exceed, and exact decimal cost.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import NamedTuple, Optional

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from smddp_infra.errors import ConfigError, SizingError
from smddp_infra.sizing import best_per_deployment_type, plan_lustre
from smddp_infra.sizing.prices import DEFAULT_PRICES
from smddp_infra.sizing.workload import MB_PER_GIB, throughput_from_cluster, throughput_from_epoch

# ---------------------------------------------------------------- the independent brute force


class Config(NamedTuple):
    group: str
    deployment_type: str
    storage_type: str
    per_unit: Optional[int]
    mbps_per_tib: int
    efa: bool
    explicit: tuple[int, ...]
    step: int

    @property
    def price_key(self) -> str:
        if self.per_unit is None:
            return self.deployment_type
        return "/".join([self.deployment_type] + (["HDD"] if self.storage_type == "HDD" else []) + [str(self.per_unit)])


ORACLE_TABLE = (
    [Config("SCRATCH_1", "SCRATCH_1", "SSD", None, 200, False, (1200, 2400), 3600),
     Config("SCRATCH_2", "SCRATCH_2", "SSD", None, 200, False, (1200, 2400), 2400)]
    + [Config("PERSISTENT_1", "PERSISTENT_1", "SSD", t, t, False, (1200, 2400), 2400) for t in (50, 100, 200)]
    + [Config("PERSISTENT_1_HDD", "PERSISTENT_1", "HDD", 12, 12, False, (), 6000),
       Config("PERSISTENT_1_HDD", "PERSISTENT_1", "HDD", 40, 40, False, (), 1800)]
    + [Config("PERSISTENT_2", "PERSISTENT_2", "SSD", t, t, False, (1200, 2400), 2400) for t in (125, 250, 500, 1000)]
    + [Config("PERSISTENT_2", "PERSISTENT_2", "SSD", t, t, True, (), s)
       for t, s in ((125, 38_400), (250, 19_200), (500, 9600), (1000, 4800))]
)


class Option(NamedTuple):
    cost: Fraction
    throughput: float
    scratch: int
    config: Config
    capacity: int


def brute_force(required, min_capacity=0.0, *, efa=False, groups=None, prices=None, max_capacity=None):
    """Every option of minimal (cost, -throughput, scratch) rank, or [] when nothing is feasible.

    Capacities are enumerated up to ``bound``: above it every tier already has a feasible size
    (one step past the largest need), and a bigger size of the same tier costs strictly more.
    """
    prices = dict(DEFAULT_PRICES) if prices is None else prices
    groups = groups or (["PERSISTENT_2"] if efa else ["SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"])
    configs = [c for c in ORACLE_TABLE if c.group in groups and c.efa == efa]
    slowest = min(c.mbps_per_tib for c in configs)
    bound = max(min_capacity, required * 1024 / slowest) + 2 * max(c.step for c in configs) + 2400
    best: list[Option] = []
    for config in configs:
        price = Fraction(repr(prices[config.price_key]))
        sizes = set(config.explicit)
        sizes.update(range(config.step, int(bound) + 1, config.step))
        for capacity in sizes:
            if max_capacity is not None and capacity > max_capacity:
                continue
            throughput = capacity / 1024 * config.mbps_per_tib
            if throughput < required or capacity < min_capacity:
                continue
            option = Option(capacity * price, throughput, int(config.per_unit is None), config, capacity)
            key = (option.cost, -option.throughput, option.scratch)
            if not best or key < (best[0].cost, -best[0].throughput, best[0].scratch):
                best = [option]
            elif key == (best[0].cost, -best[0].throughput, best[0].scratch):
                best.append(option)
    return best


def _matches(plan, option: Option) -> bool:
    c = option.config
    return (
        plan.deployment_type == c.deployment_type
        and plan.storage_type == c.storage_type
        and plan.per_unit_storage_throughput == c.per_unit
        and plan.efa_enabled == c.efa
        and plan.storage_capacity_gib == option.capacity
    )


# ---------------------------------------------------------------- strategies

GROUPS = ["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_1_HDD", "PERSISTENT_2"]
ALL_KEYS = sorted({c.price_key for c in ORACLE_TABLE})


def _boundary_throughputs():
    """Throughputs exactly on a size boundary (and a hair either side): where rounding bugs live."""
    sizes = st.sampled_from([1200, 2400, 4800, 7200, 9600, 19_200, 38_400, 6000, 1800, 3600, 26_400])
    rates = st.sampled_from([12, 40, 50, 100, 125, 200, 250, 500, 1000])
    nudge = st.sampled_from([0.0, 1e-9, -1e-9, 0.5, -0.5])
    return st.builds(lambda c, r, d: max(0.001, c / 1024 * r + d), sizes, rates, nudge)


throughputs = st.one_of(st.floats(min_value=0.001, max_value=30_000, allow_nan=False), _boundary_throughputs())
capacities = st.one_of(
    st.just(0.0),
    st.floats(min_value=0, max_value=250_000, allow_nan=False),
    st.sampled_from([1199.5, 1200, 1201, 2400, 2401, 4800, 6000, 38_400, 100_800]),
)
price_tables = st.one_of(
    st.just(None),
    st.fixed_dictionaries({k: st.floats(min_value=0.001, max_value=2.0, allow_nan=False) for k in ALL_KEYS}),
    st.fixed_dictionaries({k: st.sampled_from([0.14, 0.145, 0.29, 0.58, 0.84, 0.07]) for k in ALL_KEYS}),
)


@st.composite
def requests(draw):
    efa = draw(st.booleans())
    if efa:
        groups = draw(st.sampled_from([None, ["PERSISTENT_2"]]))
    else:
        groups = draw(st.one_of(st.none(), st.lists(st.sampled_from(GROUPS), min_size=1, max_size=5, unique=True)))
    prices = draw(price_tables)
    if prices is None and groups and "SCRATCH_1" in groups:
        prices = dict(DEFAULT_PRICES, SCRATCH_1=0.14)
    max_capacity = draw(st.one_of(st.none(), st.integers(min_value=1, max_value=400_000)))
    return dict(
        required=draw(throughputs),
        min_capacity=draw(capacities),
        efa=efa,
        groups=groups,
        prices=prices,
        max_capacity=max_capacity,
    )


def _plan(r):
    return plan_lustre(
        r["required"],
        r["min_capacity"],
        efa_enabled=r["efa"],
        deployment_types=r["groups"],
        prices=r["prices"],
        max_capacity_gib=r["max_capacity"],
    )


# ---------------------------------------------------------------- the properties


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests())
@example(dict(required=234.375, min_capacity=0.0, efa=False, groups=None, prices=None, max_capacity=None))
@example(dict(required=1000.0, min_capacity=0.0, efa=False, groups=["SCRATCH_2", "PERSISTENT_2"],
              prices=dict(DEFAULT_PRICES, **{"PERSISTENT_2/125": 9.0, "PERSISTENT_2/250": 9.0,
                                             "PERSISTENT_2/500": 9.0, "PERSISTENT_2/1000": 0.84}),
              max_capacity=None))
@example(dict(required=30_000.0, min_capacity=250_000.0, efa=False, groups=GROUPS,
              prices=dict(DEFAULT_PRICES, SCRATCH_1=0.14), max_capacity=None))
@example(dict(required=1.0, min_capacity=0.0, efa=True, groups=None, prices=None, max_capacity=4799))
def test_plan_is_exactly_optimal_valid_and_meets_both_needs(r):
    optimum = brute_force(
        r["required"], r["min_capacity"], efa=r["efa"], groups=r["groups"], prices=r["prices"],
        max_capacity=r["max_capacity"],
    )
    if not optimum:
        with pytest.raises(SizingError, match="max_capacity_gib"):
            _plan(r)
        return
    plan = _plan(r)
    # meets both needs and the cap
    assert plan.baseline_throughput_mbps >= r["required"]
    assert plan.storage_capacity_gib >= r["min_capacity"]
    assert r["max_capacity"] is None or plan.storage_capacity_gib <= r["max_capacity"]
    # valid under the rules CloudFormation enforces
    assert plan.problems() == []
    # nothing valid is cheaper, and ties were broken as documented
    assert any(_matches(plan, option) for option in optimum), (plan, optimum)
    assert plan.monthly_cost_usd == float(optimum[0].cost)
    assert plan.baseline_throughput_mbps == optimum[0].throughput


@settings(max_examples=100, deadline=None)
@given(requests())
def test_best_per_deployment_type_leads_with_the_plan_and_is_optimal_per_group(r):
    try:
        overall = _plan(r)
    except SizingError:
        with pytest.raises(SizingError):
            best_per_deployment_type(r["required"], r["min_capacity"], efa_enabled=r["efa"],
                                     deployment_types=r["groups"], prices=r["prices"],
                                     max_capacity_gib=r["max_capacity"])
        return
    per_group = best_per_deployment_type(
        r["required"], r["min_capacity"], efa_enabled=r["efa"], deployment_types=r["groups"],
        prices=r["prices"], max_capacity_gib=r["max_capacity"],
    )
    plans = list(per_group.values())
    assert plans[0] == overall
    assert [p.monthly_cost_usd for p in plans] == sorted(p.monthly_cost_usd for p in plans)
    for group, plan in per_group.items():
        optimum = brute_force(r["required"], r["min_capacity"], efa=r["efa"], groups=[group],
                              prices=r["prices"], max_capacity=r["max_capacity"])
        assert any(_matches(plan, option) for option in optimum), (group, plan)


# ---------------------------------------------------------------- the plan value


def test_plan_fields_headroom_and_json():
    plan = plan_lustre(12_800, 20_000)
    assert (plan.deployment_type, plan.storage_type, plan.per_unit_storage_throughput) == ("PERSISTENT_2", "SSD", 500)
    assert plan.storage_capacity_gib == 26_400 and isinstance(plan.storage_capacity_gib, int)
    assert plan.baseline_throughput_mbps == 26_400 / 1024 * 500
    assert plan.monthly_cost_usd == pytest.approx(26_400 * 0.34)
    assert plan.headroom == pytest.approx(plan.baseline_throughput_mbps / 12_800 - 1)
    assert (plan.required_throughput_mbps, plan.min_capacity_gib) == (12_800, 20_000)
    assert plan.drive_cache_type is None and plan.efa_enabled is False
    assert "PERSISTENT_2/500" in plan.explanation and "26,400 GiB" in plan.explanation
    assert "next: SCRATCH_2" in plan.explanation
    data = json.loads(json.dumps(plan.to_dict()))
    assert data["storage_capacity_gib"] == 26_400
    assert data["per_unit_storage_throughput"] == 500
    assert data["headroom"] == pytest.approx(plan.headroom)
    assert data["file_system_type_version"] == "2.15"
    with pytest.raises(AttributeError):
        plan.storage_capacity_gib = 1  # frozen


def test_explanation_says_which_need_set_the_size():
    assert "size set by capacity" in plan_lustre(1, 50_000).explanation
    assert "size set by throughput" in plan_lustre(50_000, 1).explanation
    assert "size set by minimum size" in plan_lustre(1).explanation


def test_quota_warning_above_100800_gib_only():
    assert plan_lustre(1, 100_800).warnings == ()
    (warning,) = plan_lustre(1, 100_801).warnings
    assert "103,200 GiB" in warning and "100,800 GiB" in warning and "quota" in warning


def test_per_client_warning_only_when_each_client_outruns_a_tcp_client():
    assert not any("clients must read" in w for w in plan_lustre(100_000, clients=16).warnings)  # 6,250 MB/s each
    assert not any("clients must read" in w for w in plan_lustre(400_000).warnings)  # client count unknown
    warnings = plan_lustre(400_000, clients=16).warnings  # 25,000 MB/s each
    assert any("each of 16 clients must read 25,000 MB/s" in w for w in warnings)
    assert not any("clients must read" in w for w in plan_lustre(400_000, efa_enabled=True, clients=16).warnings)


def test_efa_plans_say_what_else_efa_needs():
    plan = plan_lustre(5000, efa_enabled=True)
    assert plan.efa_enabled and plan.deployment_type == "PERSISTENT_2"
    assert any("fsx:DescribeFileSystems" in w for w in plan.warnings)


def test_ints_and_floats_are_accepted_alike():
    assert plan_lustre(1000, 2400) == plan_lustre(1000.0, 2400.0)


# ---------------------------------------------------------------- impossible requests


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(required_throughput_mbps=0), "required_throughput_mbps must be > 0 MB/s, got 0"),
        (dict(required_throughput_mbps=-5), "required_throughput_mbps must be > 0"),
        (dict(required_throughput_mbps=math.nan), "required_throughput_mbps must be a finite number"),
        (dict(required_throughput_mbps=math.inf), "required_throughput_mbps must be a finite number"),
        (dict(required_throughput_mbps="100"), "required_throughput_mbps must be a number, got '100'"),
        (dict(required_throughput_mbps=True), "required_throughput_mbps must be a number"),
        (dict(required_throughput_mbps=1, min_capacity_gib=-1), "min_capacity_gib must be >= 0"),
        (dict(required_throughput_mbps=1, min_capacity_gib=math.nan), "min_capacity_gib must be a finite"),
        (dict(required_throughput_mbps=1, max_capacity_gib=0), "max_capacity_gib must be > 0"),
        (dict(required_throughput_mbps=1, max_capacity_gib=1199), "max_capacity_gib=1,199 is too small.*1,200 GiB"),
        (dict(required_throughput_mbps=100_000, max_capacity_gib=100_000), "is too small.*103,200 GiB"),
        (dict(required_throughput_mbps=1, efa_enabled=True, max_capacity_gib=4000), "4,800 GiB.*with EFA"),
        (dict(required_throughput_mbps=1, deployment_types=["SCRATCH_3"]), "deployment_types must be among .*'SCRATCH_3'"),
        (dict(required_throughput_mbps=1, deployment_types=[]), "at least one"),
        (dict(required_throughput_mbps=1, deployment_types=["PERSISTENT_1"], efa_enabled=True), "only PERSISTENT_2"),
        (dict(required_throughput_mbps=1, deployment_types=["SCRATCH_1"]), "no entry for 'SCRATCH_1'"),
        (dict(required_throughput_mbps=1, prices={"SCRATCH_2": 0.14}), "no entry for 'PERSISTENT_1/50'"),
        (dict(required_throughput_mbps=1, prices=dict(DEFAULT_PRICES, SCRATCH_2=-0.1)), "prices\\['SCRATCH_2'\\] must be a positive"),
        (dict(required_throughput_mbps=1, prices=dict(DEFAULT_PRICES, SCRATCH_2=math.nan)), "must be a positive"),
        (dict(required_throughput_mbps=1, prices=dict(DEFAULT_PRICES, SCRATCH_2=0)), "must be a positive"),
        (dict(required_throughput_mbps=1, prices=dict(DEFAULT_PRICES, SCRATCH_2="0.14")), "must be a positive"),
        (dict(required_throughput_mbps=1, prices=dict(DEFAULT_PRICES, SCRATCH2=0.14)), "unknown tier key.*SCRATCH2"),
        (dict(required_throughput_mbps=1, prices=[("SCRATCH_2", 0.14)]), "prices must be a mapping"),
        (dict(required_throughput_mbps=1, efa_enabled="yes"), "efa_enabled must be True or False"),
        (dict(required_throughput_mbps=1, clients=0), "clients must be a whole number >= 1"),
    ],
)
def test_impossible_requests_raise_a_sizing_error_naming_the_input(kwargs, message):
    with pytest.raises(SizingError, match=message) as raised:
        plan_lustre(**kwargs)
    assert isinstance(raised.value, ValueError)


def test_a_single_string_names_one_deployment_type():
    assert plan_lustre(1, deployment_types="PERSISTENT_2").deployment_type == "PERSISTENT_2"


def test_a_price_only_needs_to_exist_for_considered_tiers():
    plan = plan_lustre(1, deployment_types=["SCRATCH_2"], prices={"SCRATCH_2": 0.2})
    assert plan.monthly_cost_usd == pytest.approx(240.0)
    assert "default prices" not in plan.explanation


# ---------------------------------------------------------------- workload helpers


def test_throughput_from_cluster_is_instances_x_accelerators_x_rate():
    assert throughput_from_cluster("ml.p5.48xlarge", 16, 200) == 16 * 8 * 200
    assert throughput_from_cluster("ml.trn1.32xlarge", 2, 10.5) == 2 * 16 * 10.5


def test_unknown_instance_type_lists_the_known_ones():
    with pytest.raises(ConfigError, match="instance_type must be .*ml.p4d.24xlarge.*ml.trn1n.32xlarge.*got 'ml.g5.xlarge'"):
        throughput_from_cluster("ml.g5.xlarge", 1, 100)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ml.p5.48xlarge", 0, 100), "instance_count must be a whole number >= 1, got 0"),
        (("ml.p5.48xlarge", 1.5, 100), "instance_count must be a whole number >= 1, got 1.5"),
        (("ml.p5.48xlarge", True, 100), "instance_count must be a whole number"),
        (("ml.p5.48xlarge", 2, 0), "read_mbps_per_accelerator must be a number > 0 MB/s, got 0"),
        (("ml.p5.48xlarge", 2, math.nan), "read_mbps_per_accelerator must be a number > 0"),
    ],
)
def test_bad_cluster_numbers_are_clear_errors(args, message):
    with pytest.raises(ValueError, match=message):
        throughput_from_cluster(*args)


def test_throughput_from_epoch_converts_gib_to_decimal_mb():
    assert MB_PER_GIB == 1073.741824
    assert throughput_from_epoch(1000, 1000) == pytest.approx(1073.741824)
    assert throughput_from_epoch(20_000, 3600) == pytest.approx(20_000 * 2**30 / 1e6 / 3600)


@pytest.mark.parametrize(
    ("args", "message"),
    [((0, 10), "dataset_gib must be a number > 0 GiB, got 0"), ((10, -1), "epoch_seconds must be a number > 0 seconds"),
     ((10, math.inf), "epoch_seconds"), (("10", 10), "dataset_gib")],
)
def test_bad_epoch_numbers_are_clear_errors(args, message):
    with pytest.raises(SizingError, match=message):
        throughput_from_epoch(*args)


def test_the_oracle_itself_agrees_with_hand_arithmetic():
    # guard the guard: 10,000 MB/s -> P2/1000 at 12,000 GiB for $7,200 (see test_sizing_rules)
    (option,) = brute_force(10_000)
    assert (option.config.per_unit, option.capacity, option.cost) == (1000, 12_000, 7200)
    assert brute_force(1, max_capacity=1199) == []
