"""The cheapest valid FSx for Lustre file system that meets a read throughput and holds the data.

SageMaker's SMDDP troubleshooting guide blames falling scaling efficiency on larger clusters
on the FSx for Lustre throughput limit. A Lustre file system's baseline disk throughput is
proportional to its size (capacity in TiB x per-unit throughput), so "use a bigger file
system" is arithmetic: this module does it exactly.

The model (see docs/sizing.md):

* throughput of a plan = ``storage_capacity_gib / 1024 x MB/s per TiB`` (SCRATCH_2 counts its
  200 MB/s/TiB baseline). Burst credits and LZ4 compression are never counted: a training
  job reads its whole dataset every epoch, far longer than any burst lasts.
* monthly cost = ``storage_capacity_gib x USD per GB-month`` of the tier
  (:mod:`smddp_infra.sizing.prices`).
* valid sizes and tiers come from :mod:`smddp_infra.sizing.lustre_rules` only.

Why it is exactly optimal: within one tier cost grows strictly with capacity (prices must be
> 0), so the tier's cheapest feasible size is its smallest valid size at or above
``max(min_capacity, required x 1024 / MB/s-per-TiB)``. The best plan overall is therefore the
best of those per-tier minima, compared with ties going to the higher throughput, then to
persistent over scratch, then to the rule table's order. The arithmetic is done in exact
rationals, so a requirement that lands exactly on a size boundary picks that size.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field, fields
from fractions import Fraction
from numbers import Real
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence, overload

from smddp_infra.contract import METADATA_SIZING, SizingRecord
from smddp_infra.errors import SizingError
from smddp_infra.sizing import lustre_rules as rules
from smddp_infra.sizing.lustre_rules import Tier
from smddp_infra.sizing.prices import DEFAULT_PRICES, PRICE_TABLE_DATE, PRICE_TABLE_REGION

if TYPE_CHECKING:
    from typing import TypedDict, Unpack

    from smddp_infra.sizing.tiering import TieringPlan, TieringPrices

    class _PlanOptions(TypedDict, total=False):
        """The options :func:`plan_lustre` and :func:`best_per_deployment_type` share beside the
        storage classes: one list for their overloads (the functions themselves name them)."""

        efa_enabled: bool
        deployment_types: Optional[Sequence[str]]
        prices: Optional[Mapping[str, float]]
        max_capacity_gib: Optional[float]
        clients: Optional[int]
        per_unit_storage_throughput: Optional[int]
        customer_key: bool

#: Name that selects PERSISTENT_1 on HDD in ``deployment_types`` (HDD only exists there).
PERSISTENT_1_HDD = "PERSISTENT_1_HDD"

#: ``deployment_types`` names -> the tiers they select (EFA off).
TIER_GROUPS: Mapping[str, tuple[Tier, ...]] = {
    rules.SCRATCH_1: rules.tiers_for(rules.SCRATCH_1),
    rules.SCRATCH_2: rules.tiers_for(rules.SCRATCH_2),
    rules.PERSISTENT_1: rules.tiers_for(rules.PERSISTENT_1),
    PERSISTENT_1_HDD: rules.tiers_for(rules.PERSISTENT_1, storage_type="HDD"),
    rules.PERSISTENT_2: rules.tiers_for(rules.PERSISTENT_2),
}

#: Every name ``deployment_types`` (and the app's ``smddp:deploymentType``) may take: FSx's four
#: ``DeploymentType`` values (:data:`~smddp_infra.sizing.lustre_rules.DEPLOYMENT_TYPES`) and
#: ``PERSISTENT_1_HDD``. The one list: a reader that names the choices reads it here.
DEPLOYMENT_TYPE_NAMES: tuple[str, ...] = tuple(TIER_GROUPS)

#: Considered when ``deployment_types`` is None. SCRATCH_1 is a legacy type (same price as
#: SCRATCH_2, coarser sizes, no S3 associations) and HDD is far slower per TiB; both must be
#: asked for by name.
DEFAULT_DEPLOYMENT_TYPES = (rules.SCRATCH_2, rules.PERSISTENT_1, rules.PERSISTENT_2)

#: Considered when ``deployment_types`` is None and the file system is to be encrypted with a
#: customer KMS key: FSx for Lustre uses a customer key on PERSISTENT_1 and PERSISTENT_2 only;
#: SCRATCH_1/SCRATCH_2 are encrypted with the FSx service key of the account (FSx API reference,
#: CreateFileSystem ``KmsKeyId``; FSx for Lustre guide, "Encrypting data at rest").
CUSTOMER_KEY_DEPLOYMENT_TYPES = (rules.PERSISTENT_1, rules.PERSISTENT_2)
CUSTOMER_KEY_WHY = ("a customer KMS key is used only by PERSISTENT_1 and PERSISTENT_2 file systems (scratch types are "
                    "encrypted with the FSx service key: FSx API reference, CreateFileSystem KmsKeyId)")

#: Template Metadata key on the file system resource holding :meth:`LustrePlan.record`.
SIZING_METADATA = METADATA_SIZING

#: With EFA only PERSISTENT_2 exists, on the EFA capacity steps (UNCONFIRMED as a minimum).
EFA_TIER_GROUPS: Mapping[str, tuple[Tier, ...]] = {rules.PERSISTENT_2: rules.EFA_TIERS}
_EFA_STEPS_NOTE = (" with EFA, on the EFA capacity steps, which are UNCONFIRMED: a LustrePlan made by hand is not held "
                   "to them")

#: UNCONFIRMED: what one Lustre client without EFA reads at most, about 100 Gbps (ENA).
#: Only used for a warning when the number of clients is known.
PER_CLIENT_TCP_MBPS = 12_500

_TIER_ORDER = {tier: index for index, tier in enumerate(rules.ALL_TIERS)}


def group_of(tier: Tier) -> str:
    """The ``deployment_types`` name that selects ``tier`` (e.g. ``PERSISTENT_1_HDD``)."""
    if tier.storage_type == "HDD":
        return PERSISTENT_1_HDD
    return tier.deployment_type


@dataclass(frozen=True)
class LustrePlan:
    """One FSx for Lustre configuration, why it won, and what it costs.

    ``drive_cache_type`` is ``"NONE"`` for HDD plans (CloudFormation requires a value there)
    and None otherwise: the SSD read cache is billed extra and not baseline disk throughput.
    """

    deployment_type: str
    storage_type: str
    storage_capacity_gib: int
    per_unit_storage_throughput: Optional[int]
    baseline_throughput_mbps: float
    monthly_cost_usd: float
    efa_enabled: bool
    drive_cache_type: Optional[str]
    required_throughput_mbps: float
    min_capacity_gib: float
    price_usd_per_gb_month: float
    warnings: tuple[str, ...] = ()
    explanation: str = field(default="", compare=False)
    #: The ``deployment_types`` groups the calculator chose from (one: the type was pinned) and
    #: its capacity cap: with the requirement, what :meth:`record` writes into the template so a
    #: later update can be re-planned in place (``smddp-infra guard``).
    considered_groups: tuple[str, ...] = field(default=(), compare=False)
    max_capacity_gib: Optional[float] = field(default=None, compare=False)

    def problems(self) -> list[str]:
        """Every reason CloudFormation would reject this plan as the file-system construct emits
        it (FileSystemTypeVersion 2.15, MetadataConfiguration on PERSISTENT_2); [] when valid.
        The EFA capacity steps are UNCONFIRMED as a minimum at creation, so a hand-made EFA plan
        off them is not refused here (the planner itself still plans on them)."""
        return rules.validate_lustre_settings(
            deployment_type=self.deployment_type,
            storage_capacity_gib=self.storage_capacity_gib,
            per_unit_storage_throughput=self.per_unit_storage_throughput,
            storage_type=self.storage_type,
            efa_enabled=self.efa_enabled,
            drive_cache_type=self.drive_cache_type,
            file_system_type_version=rules.FILE_SYSTEM_TYPE_VERSION,
            has_metadata_configuration=self.deployment_type == rules.PERSISTENT_2,
            efa_steps=False,
        )

    @property
    def headroom(self) -> float:
        """Spare baseline throughput as a fraction of the requirement (0.25 = 25 % more)."""
        return self.baseline_throughput_mbps / self.required_throughput_mbps - 1

    @property
    def tier_key(self) -> str:
        """The price-table key of this plan's tier, e.g. ``PERSISTENT_2/250``."""
        return self.tier.key

    @property
    def tier(self) -> Tier:
        found = rules.find_tier(
            self.deployment_type,
            self.per_unit_storage_throughput,
            storage_type=self.storage_type,
            efa_enabled=self.efa_enabled,
        )
        assert found is not None, "a LustrePlan is only built from a rule-table tier"
        return found

    @property
    def pinned(self) -> bool:
        """True when the caller named exactly one deployment type (the calculator did not choose it)."""
        return len(self.considered_groups) == 1

    def record(self) -> dict[str, Any]:
        """The sizing as deployed, for the file system's template Metadata (:data:`SIZING_METADATA`).

        The deployed type is what decides whether a later plan is an in-place update: FSx grows
        StorageCapacity in place, but a new DeploymentType or PerUnitStorageThroughput is a new,
        empty file system. Metadata is not a property, so writing it never updates the resource.
        """
        return self.sizing_record().to_json()

    def sizing_record(self) -> SizingRecord:
        """The record as the contract's typed value (what the alarms and the job document carry)."""
        return SizingRecord(  # every field but the two below is this plan's, by the same name
            **{f.name: getattr(self, f.name) for f in fields(SizingRecord) if f.name not in ("chosen_from", "chosen_by")},
            chosen_from=self.considered_groups,
            chosen_by="pinned" if self.pinned else "calculator" if self.considered_groups else "given",
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (what ``smddp-infra size --json`` prints)."""
        given = {"file_system_type_version": rules.FILE_SYSTEM_TYPE_VERSION, "tier": self.tier_key,
                 "warnings": list(self.warnings)}
        return {name: given[name] if name in given else getattr(self, name) for name in (
            "deployment_type", "storage_type", "storage_capacity_gib", "per_unit_storage_throughput", "efa_enabled",
            "drive_cache_type", "file_system_type_version", "baseline_throughput_mbps", "required_throughput_mbps",
            "min_capacity_gib", "headroom", "monthly_cost_usd", "price_usd_per_gb_month", "tier", "warnings",
            "explanation")}


@dataclass(frozen=True)
class _Candidate:
    """The cheapest feasible size of one tier, with its ranking key."""

    tier: Tier
    capacity_gib: int
    throughput_mbps: float
    cost_usd: float
    price: float
    binding: str  # "throughput", "capacity" or "minimum size"
    exact_cost: Fraction  # capacity x the price as written in decimal: ties are real ties

    @property
    def rank(self) -> tuple[Fraction, float, int, int]:
        # cheapest, then the higher throughput, then persistent over scratch, then table order
        scratch = 1 if self.tier.deployment_type in rules.SCRATCH_TYPES else 0
        return (self.exact_cost, -self.throughput_mbps, scratch, _TIER_ORDER[self.tier])


@overload
def plan_lustre(required_throughput_mbps: float, min_capacity_gib: float = 0, *, storage_classes: None = None,
                tiering_prices: None = None, hot_gib: None = None, **options: Unpack[_PlanOptions]) -> LustrePlan: ...


@overload
def plan_lustre(required_throughput_mbps: float, min_capacity_gib: float = 0, *, storage_classes: Sequence[str],
                tiering_prices: Optional[TieringPrices] = None, hot_gib: Optional[float] = None,
                **options: Unpack[_PlanOptions]) -> LustrePlan | TieringPlan: ...


def plan_lustre(required_throughput_mbps: float, min_capacity_gib: float = 0,
                **options: Any) -> "LustrePlan | TieringPlan":
    """The cheapest valid file system with baseline throughput and capacity both met.

    ``storage_classes`` (default ``("SSD",)``) adds ``"INTELLIGENT_TIERING"``: then the
    Intelligent-Tiering plan (:func:`~smddp_infra.sizing.tiering.plan_intelligent_tiering`, with
    ``tiering_prices`` and ``hot_gib``, the working set the read cache is sized to) competes on
    cost with the SSD plans and wins only when strictly cheaper. Intelligent-Tiering needs
    ``tiering_prices``: no price figures are published.

    ``deployment_types`` names the groups to consider: ``SCRATCH_1``, ``SCRATCH_2``,
    ``PERSISTENT_1`` (SSD), ``PERSISTENT_1_HDD`` and ``PERSISTENT_2``; default
    :data:`DEFAULT_DEPLOYMENT_TYPES`. With ``efa_enabled`` only ``PERSISTENT_2`` on the EFA
    capacity steps exists. ``prices`` replaces the whole default table (keyed by
    ``Tier.key``); ``clients`` (the number of training instances), when given, enables a
    per-client throughput warning; ``per_unit_storage_throughput`` keeps only the tiers of that
    MB/s/TiB (to keep a deployed tier: changing it replaces the file system).
    ``customer_key`` (the file system is encrypted with a customer KMS key) keeps the PERSISTENT
    types only (:data:`CUSTOMER_KEY_DEPLOYMENT_TYPES`) and says so in the explanation; a SCRATCH
    type named in ``deployment_types`` beside it is an error. Raises :class:`SizingError` for
    impossible requests.
    """
    # best_per_deployment_type's keywords, refused as Python refuses an unknown one here
    if (unknown := next((k for k in options if k not in inspect.signature(best_per_deployment_type).parameters), None)):
        raise TypeError(f"plan_lustre() got an unexpected keyword argument {unknown!r}")
    plans: "dict[str, LustrePlan | TieringPlan]" = best_per_deployment_type(  # its first entry wins
        required_throughput_mbps, min_capacity_gib, **options)
    return next(iter(plans.values()))


@overload
def best_per_deployment_type(
    required_throughput_mbps: float, min_capacity_gib: float = 0, *, storage_classes: None = None,
    tiering_prices: None = None, hot_gib: None = None, **options: Unpack[_PlanOptions],
) -> dict[str, LustrePlan]: ...


@overload
def best_per_deployment_type(
    required_throughput_mbps: float, min_capacity_gib: float = 0, *, storage_classes: Sequence[str],
    tiering_prices: Optional[TieringPrices] = None, hot_gib: Optional[float] = None, **options: Unpack[_PlanOptions],
) -> dict[str, LustrePlan | TieringPlan]: ...


def best_per_deployment_type(  # type: ignore[misc]  # dict is invariant: the SSD-only overload returns dict[str, LustrePlan]
    required_throughput_mbps: float,
    min_capacity_gib: float = 0,
    *,
    efa_enabled: bool = False,
    deployment_types: Optional[Sequence[str]] = None,
    prices: Optional[Mapping[str, float]] = None,
    max_capacity_gib: Optional[float] = None,
    clients: Optional[int] = None,
    per_unit_storage_throughput: Optional[int] = None,
    customer_key: bool = False,
    storage_classes: Optional[Sequence[str]] = None,
    tiering_prices: Optional["TieringPrices"] = None,
    hot_gib: Optional[float] = None,
) -> "dict[str, LustrePlan | TieringPlan]":
    """The best plan of each considered group (``SCRATCH_2``, ``PERSISTENT_1``, ...), cheapest first.

    Groups with no feasible size under ``max_capacity_gib`` are left out; the first entry is
    always the plan :func:`plan_lustre` returns for the same arguments. Raises
    :class:`SizingError` when no group is feasible. With ``"INTELLIGENT_TIERING"`` in
    ``storage_classes`` its plan is the entry ``INTELLIGENT_TIERING``, placed by cost (an equal
    cost goes to the SSD plan: its reads never miss to a slower tier).
    """
    classes = _storage_classes(storage_classes)
    tiering = None
    if INTELLIGENT_TIERING_CLASS in classes:
        tiering = _tiering_plan(required_throughput_mbps, min_capacity_gib, tiering_prices, hot_gib, efa_enabled)
    if rules.SSD not in classes:
        assert tiering is not None
        return {INTELLIGENT_TIERING_CLASS: tiering}
    ssd = _best_ssd_per_group(_Request.build(
        required_throughput_mbps, min_capacity_gib, efa_enabled, deployment_types, prices, max_capacity_gib, clients,
        per_unit_storage_throughput, customer_key,
    ))
    if tiering is None:
        return dict(ssd)
    ordered: list[tuple[str, "LustrePlan | TieringPlan"]] = list(ssd.items())
    position = next((i for i, (_, plan) in enumerate(ordered) if tiering.monthly_cost_usd < plan.monthly_cost_usd),
                    len(ordered))
    ordered.insert(position, (INTELLIGENT_TIERING_CLASS, tiering))
    return dict(ordered)


def _best_ssd_per_group(request: "_Request") -> dict[str, LustrePlan]:
    candidates = sorted(request.feasible_candidates(), key=lambda c: c.rank)
    result: dict[str, LustrePlan] = {}
    for candidate in candidates:
        group = group_of(candidate.tier)
        if not result:  # the overall winner: explained against every tier, as plan_lustre does
            result[group] = request.to_plan(candidate, others=candidates[1:])
        elif group not in result:
            others = [c for c in candidates if group_of(c.tier) == group and c is not candidate]
            result[group] = request.to_plan(candidate, others=others, within=group)
    return result


# --------------------------------------------------------------------------- internals

INTELLIGENT_TIERING_CLASS = rules.INTELLIGENT_TIERING


def _storage_classes(value: Optional[Sequence[str]]) -> tuple[str, ...]:
    if value is None:
        return (rules.SSD,)
    names = (value,) if isinstance(value, str) else tuple(value)
    allowed = (rules.SSD, INTELLIGENT_TIERING_CLASS)
    if not names or any(n not in allowed for n in names):
        raise SizingError(f"storage_classes must name one or both of {', '.join(allowed)}, got {list(names)!r}")
    return names


def _tiering_plan(required: float, dataset_gib: float, prices: Optional["TieringPrices"], hot_gib: Optional[float],
                  efa_enabled: bool) -> "TieringPlan":
    from smddp_infra.sizing.tiering import NO_PRICES_WHY, plan_intelligent_tiering

    if prices is None:
        raise SizingError(f"storage_classes includes {INTELLIGENT_TIERING_CLASS} but tiering_prices is not given: "
                          f"{NO_PRICES_WHY}")
    return plan_intelligent_tiering(required, dataset_gib, prices=prices, hot_gib=hot_gib, efa_enabled=efa_enabled)



def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise SizingError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        raise SizingError(f"{name} must be a finite number, got {value!r}")
    return number


def _decimal(price: float) -> Fraction:
    """The price exactly as written (0.14, not the binary float 0.14000000000000001...).

    Costing in exact decimals makes 4,800 GiB x 0.145 and 2,400 GiB x 0.29 the same $696, so
    equal costs are decided by the documented tie-break instead of by float rounding.
    """
    return Fraction(repr(price))


def _selected_tiers(deployment_types: Optional[Sequence[str]], efa_enabled: bool,
                    customer_key: bool = False) -> tuple[Tier, ...]:
    groups = EFA_TIER_GROUPS if efa_enabled else TIER_GROUPS
    if deployment_types is None:
        names: Sequence[str] = (tuple(groups) if efa_enabled else
                                CUSTOMER_KEY_DEPLOYMENT_TYPES if customer_key else DEFAULT_DEPLOYMENT_TYPES)
    elif isinstance(deployment_types, str):
        names = (deployment_types,)
    else:
        names = tuple(deployment_types)
    if not names:
        raise SizingError(f"deployment_types must name at least one of {', '.join(groups)}, got none")
    tiers: list[Tier] = []
    for name in names:
        if name not in groups:
            if efa_enabled and name in TIER_GROUPS:
                raise SizingError(
                    f"deployment_types contains {name!r}, but with efa_enabled only PERSISTENT_2 is allowed "
                    "(FSx for Lustre supports EFA on PERSISTENT_2 only)"
                )
            raise SizingError(f"deployment_types must be among {', '.join(groups)}, got {name!r}")
        if customer_key and name in rules.SCRATCH_TYPES:
            raise SizingError(f"deployment_types contains {name!r}, but the file system is to use a customer KMS key: "
                              f"{CUSTOMER_KEY_WHY}")
        tiers.extend(t for t in groups[name] if t not in tiers)
    return tuple(tiers)


def _with_per_unit(tiers: tuple[Tier, ...], per_unit: Any) -> tuple[Tier, ...]:
    if per_unit is None:
        return tiers
    kept = tuple(t for t in tiers if t.per_unit_storage_throughput == per_unit)
    if not kept:
        allowed = sorted({t.per_unit_storage_throughput for t in tiers if t.per_unit_storage_throughput is not None})
        groups = ", ".join(dict.fromkeys(group_of(t) for t in tiers))
        raise SizingError(
            f"per_unit_storage_throughput must be one of {', '.join(map(str, allowed)) or '(none: not settable)'} "
            f"MB/s/TiB for {groups}, got {per_unit!r}"
        )
    return kept


def _validated_prices(prices: Optional[Mapping[str, float]], tiers: Iterable[Tier]) -> dict[str, float]:
    table = DEFAULT_PRICES if prices is None else prices
    if not isinstance(table, Mapping):
        raise SizingError(f"prices must be a mapping of tier key to USD per GB-month, got {type(table).__name__}")
    known = {t.key for t in rules.ALL_TIERS}
    unknown = sorted(str(k) for k in table if k not in known)
    if unknown:
        raise SizingError(f"prices has unknown tier key(s) {', '.join(unknown)}; keys are {', '.join(sorted(known))}")
    result: dict[str, float] = {}
    for tier in tiers:
        if tier.key not in table:
            hint = " (SCRATCH_1 has no default price)" if tier.key == rules.SCRATCH_1 else ""
            raise SizingError(f"prices has no entry for {tier.key!r}, a tier being considered{hint}")
        value = table[tier.key]
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value <= 0:
            raise SizingError(f"prices[{tier.key!r}] must be a positive number of USD per GB-month, got {value!r}")
        result[tier.key] = float(value)
    return result


@dataclass(frozen=True)
class _Request:
    required: float
    min_capacity: float
    efa_enabled: bool
    tiers: tuple[Tier, ...]
    prices: Mapping[str, float]
    max_capacity: Optional[float]
    clients: Optional[int]
    custom_prices: bool
    groups: tuple[str, ...] = ()
    customer_key: bool = False

    @classmethod
    def build(
        cls,
        required: Any,
        min_capacity: Any,
        efa_enabled: Any,
        deployment_types: Optional[Sequence[str]],
        prices: Optional[Mapping[str, float]],
        max_capacity: Any,
        clients: Any,
        per_unit: Any = None,
        customer_key: Any = False,
    ) -> "_Request":
        required = _number("required_throughput_mbps", required)
        if required <= 0:
            raise SizingError(f"required_throughput_mbps must be > 0 MB/s, got {required:g}")
        min_capacity = _number("min_capacity_gib", min_capacity)
        if min_capacity < 0:
            raise SizingError(f"min_capacity_gib must be >= 0 GiB, got {min_capacity:g}")
        if not isinstance(efa_enabled, bool):
            raise SizingError(f"efa_enabled must be True or False, got {efa_enabled!r}")
        if max_capacity is not None:
            max_capacity = _number("max_capacity_gib", max_capacity)
            if max_capacity <= 0:
                raise SizingError(f"max_capacity_gib must be > 0 GiB, got {max_capacity:g}")
        if clients is not None and (isinstance(clients, bool) or not isinstance(clients, int) or clients < 1):
            raise SizingError(f"clients must be a whole number >= 1, got {clients!r}")
        if not isinstance(customer_key, bool):
            raise SizingError(f"customer_key must be True or False, got {customer_key!r}")
        tiers = _with_per_unit(_selected_tiers(deployment_types, efa_enabled, customer_key), per_unit)
        table = _validated_prices(prices, tiers)
        groups = tuple(dict.fromkeys(group_of(t) for t in tiers))
        return cls(required, min_capacity, efa_enabled, tiers, table, max_capacity, clients, prices is not None, groups,
                   customer_key)

    def candidate(self, tier: Tier) -> _Candidate:
        """The tier's smallest valid size meeting both needs (exact rational arithmetic)."""
        for_throughput = Fraction(self.required) * 1024 / tier.baseline_mbps_per_tib
        capacity = tier.capacity.smallest_at_least(max(for_throughput, Fraction(self.min_capacity)))
        if capacity == tier.capacity.smallest_at_least(0):
            binding = "minimum size"
        elif for_throughput >= self.min_capacity:
            binding = "throughput"
        else:
            binding = "capacity"
        price = self.prices[tier.key]
        exact_cost = capacity * _decimal(price)
        return _Candidate(tier, capacity, tier.throughput_mbps(capacity), float(exact_cost), price, binding, exact_cost)

    def feasible_candidates(self) -> list[_Candidate]:
        all_candidates = [self.candidate(t) for t in self.tiers]
        representable = [c for c in all_candidates if c.capacity_gib <= rules.MAX_STORAGE_CAPACITY_GIB]
        if not representable:
            raise SizingError(
                f"required_throughput_mbps={self.required:,g} MB/s (with {self.min_capacity:,g} GiB) is more than any FSx for "
                f"Lustre file system can deliver: it needs more than {rules.MAX_STORAGE_CAPACITY_GIB:,} GiB, the largest "
                f"StorageCapacity CloudFormation accepts; split the dataset across file systems or read less per GPU"
            )
        feasible = [c for c in representable if self.max_capacity is None or c.capacity_gib <= self.max_capacity]
        if not feasible:
            smallest = min(representable, key=lambda c: (c.capacity_gib, c.rank))
            raise SizingError(
                f"max_capacity_gib={self.max_capacity:,g} is too small: the smallest valid file system meeting "
                f"{self.required:,g} MB/s and {self.min_capacity:,g} GiB is {smallest.capacity_gib:,} GiB "
                f"({smallest.tier.key}{_EFA_STEPS_NOTE if self.efa_enabled else ''})"
            )
        return feasible

    def to_plan(self, best: _Candidate, *, others: Sequence[_Candidate], within: Optional[str] = None) -> LustrePlan:
        tier = best.tier
        return LustrePlan(
            deployment_type=tier.deployment_type,
            storage_type=tier.storage_type,
            storage_capacity_gib=best.capacity_gib,
            per_unit_storage_throughput=tier.per_unit_storage_throughput,
            baseline_throughput_mbps=best.throughput_mbps,
            monthly_cost_usd=best.cost_usd,
            efa_enabled=tier.efa_enabled,
            drive_cache_type="NONE" if tier.storage_type == "HDD" else None,
            required_throughput_mbps=self.required,
            min_capacity_gib=self.min_capacity,
            price_usd_per_gb_month=best.price,
            warnings=self.warnings(best),
            explanation=self.explain(best, others, within),
            considered_groups=(within,) if within else self.groups,
            max_capacity_gib=self.max_capacity,
        )

    def warnings(self, best: _Candidate) -> tuple[str, ...]:
        found: list[str] = []
        if best.capacity_gib > rules.DEFAULT_REGIONAL_QUOTA_GIB:
            found.append(
                f"{best.capacity_gib:,} GiB is above the default regional FSx for Lustre storage quota of "
                f"{rules.DEFAULT_REGIONAL_QUOTA_GIB:,} GiB: request an increase in Service Quotas before deploying"
            )
        if self.clients is not None:
            per_client = self.required / self.clients
            if not best.tier.efa_enabled and per_client > PER_CLIENT_TCP_MBPS:
                found.append(
                    f"each of {self.clients} clients must read {per_client:,.0f} MB/s, more than one Lustre client "
                    f"reads without EFA (about {PER_CLIENT_TCP_MBPS:,} MB/s, UNCONFIRMED): the file system is "
                    "not the limit, the clients are; consider an EFA-enabled file system"
                )
        if best.tier.efa_enabled:
            found.append(
                "EFA plan: clients need an EFA-capable Lustre client, and the training role needs "
                "fsx:DescribeFileSystems or Lustre silently falls back to TCP; the EFA capacity steps are UNCONFIRMED"
            )
        return tuple(found)

    def explain(self, best: _Candidate, others: Sequence[_Candidate], within: Optional[str]) -> str:
        tier = best.tier
        name = tier.key + (" with EFA" if tier.efa_enabled else "")
        if tier.storage_type == "HDD":
            name += " (DriveCacheType NONE)"
        text = (
            f"{name}, {best.capacity_gib:,} GiB: {best.throughput_mbps:,.1f} MB/s baseline for "
            f"{self.required:,g} MB/s required, holds {self.min_capacity:,g} GiB; "
            f"size set by {best.binding}; ${best.cost_usd:,.2f}/month"
        )
        runner_up = min(others, key=lambda c: c.rank) if others else None
        scope = f"{within} tiers" if within else "candidate tiers"
        if runner_up is None:
            text += f"; the only feasible one of the {scope}" if within is None or len(self.tiers_of(within)) > 1 else ""
        else:
            text += (
                f"; cheapest of {len(others) + 1} feasible {scope} "
                f"(next: {runner_up.tier.key}, {runner_up.capacity_gib:,} GiB, ${runner_up.cost_usd:,.2f}/month)"
            )
        if self.customer_key:
            text += f"; PERSISTENT types only: {CUSTOMER_KEY_WHY}"
        if not self.custom_prices:
            text += f" (default prices: {PRICE_TABLE_REGION}, {PRICE_TABLE_DATE}, UNCONFIRMED)"
        return text

    def tiers_of(self, group: str) -> list[Tier]:
        return [t for t in self.tiers if group_of(t) == group]
