"""FSx for Lustre Intelligent-Tiering in the calculator: provisioned throughput, a read cache,
storage billed per GB stored.

Intelligent-Tiering (``StorageType: INTELLIGENT_TIERING``, PERSISTENT_2, Lustre 2.15) has no
``StorageCapacity``: throughput is provisioned directly (``LustreConfiguration.ThroughputCapacity``,
multiples of 4,000 MB/s up to 2,000,000, the shape's minimum 4,000; it can only grow), an SSD
read cache (``DataReadCacheConfiguration``, required; 8 to 32,768 GiB per 1,000 MB/s of
throughput capacity: botocore's fsx model, ``LustreReadCacheConfiguration.SizeGiB``) serves hot
data at SSD latency, and data is billed per GB stored by access tier (Frequent; Infrequent after
30 days without access; Archive Instant after 90). A cache miss costs tens of milliseconds and a
request charge.

The plan (exactly optimal for the cost model below, see docs/sizing.md):

* ``ThroughputCapacity`` = the smallest valid step at or above the requirement (cost grows with
  it, and a larger step only raises the cache's floor);
* the read cache = the working set (``hot_gib``, default the whole dataset), at least the
  class's 8 GiB per 1,000 MB/s and at most its 32,768 GiB per 1,000 MB/s; a working set above
  that cap is a warning (an epoch then re-reads data from the slow tiers);
* monthly cost = throughput x $/MB/s-month + cache x $/GiB-month + dataset x the Frequent
  Access $/GB-month. The whole dataset is costed at Frequent: a dataset read every epoch is
  accessed within 30 days (colder data costs less; not counted). Request charges for misses
  depend on the read pattern and are not counted (the price is shown per million).

No published price figures were found (REFERENCE, UNCONFIRMED): the calculator costs this class
only with the user's prices (:func:`load_price_file`), and says so otherwise.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Real
from pathlib import Path
from typing import Any, Mapping, Optional

from smddp_infra.contract import SizingRecord
from smddp_infra.errors import SizingError
from smddp_infra.sizing import lustre_rules as rules

INTELLIGENT_TIERING = rules.INTELLIGENT_TIERING
#: Storage classes ``plan_lustre(..., storage_classes=...)`` and ``size --storage-class`` know.
STORAGE_CLASSES = (rules.SSD, INTELLIGENT_TIERING)
THROUGHPUT_STEP_MBPS = rules.INTELLIGENT_TIERING_THROUGHPUT_STEP_MBPS
MAX_THROUGHPUT_MBPS = rules.INTELLIGENT_TIERING_MAX_THROUGHPUT_MBPS
#: SSD read cache per 1,000 MB/s of ThroughputCapacity (botocore's fsx model,
#: LustreReadCacheConfiguration.SizeGiB: "a minimum of 8 GiB and maximum of 32768 GiB ... for
#: every 1000 MBps of throughput capacity provisioned").
CACHE_GIB_PER_1000_MBPS = (8, 32_768)
#: The read-cache sizing mode the construct writes: the exact size the plan chose.
CACHE_SIZING_MODE = "USER_PROVISIONED"

#: The price file's keys (USD): the Intelligent-Tiering section.
PRICE_KEYS = {
    "frequent_gb_month": "Frequent Access storage, per GB-month (required)",
    "infrequent_gb_month": "Infrequent Access storage, per GB-month (optional, shown only)",
    "archive_gb_month": "Archive Instant Access storage, per GB-month (optional, shown only)",
    "throughput_mbps_month": "ThroughputCapacity, per MB/s-month (required)",
    "read_cache_gib_month": "SSD read cache, per GiB-month (required)",
    "requests_per_1000": "requests to the storage tiers (cache misses), per 1,000 (optional, shown only)",
}
REQUIRED_PRICE_KEYS = ("frequent_gb_month", "throughput_mbps_month", "read_cache_gib_month")
#: Why the class is not compared without prices (the CLI prints it, docs say it).
NO_PRICES_WHY = ("Intelligent-Tiering not compared: AWS publishes no price figures we could read, so it is costed only "
                 "with your prices (--prices FILE, docs/sizing.md)")


@dataclass(frozen=True)
class TieringPrices:
    """The user's Intelligent-Tiering prices, USD (see :data:`PRICE_KEYS`)."""

    frequent_gb_month: float
    throughput_mbps_month: float
    read_cache_gib_month: float
    infrequent_gb_month: Optional[float] = None
    archive_gb_month: Optional[float] = None
    requests_per_1000: Optional[float] = None

    @classmethod
    def parse(cls, raw: Any, *, where: str = "prices") -> "TieringPrices":
        if not isinstance(raw, Mapping):
            raise SizingError(f"{where} must be a JSON object of {', '.join(PRICE_KEYS)}, got {type(raw).__name__}")
        unknown = sorted(str(k) for k in raw if k not in PRICE_KEYS)
        if unknown:
            raise SizingError(f"{where} has unknown key(s) {', '.join(unknown)}; keys are {', '.join(PRICE_KEYS)}")
        missing = [k for k in REQUIRED_PRICE_KEYS if k not in raw]
        if missing:
            raise SizingError(f"{where} is missing {', '.join(missing)} (USD; see docs/sizing.md)")
        values: dict[str, float] = {}
        for key, value in raw.items():
            if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value < 0 \
                    or (value == 0 and key in REQUIRED_PRICE_KEYS):
                allowed = "> 0" if key in REQUIRED_PRICE_KEYS else ">= 0"
                raise SizingError(f"{where}.{key} must be a number of USD {allowed}, got {value!r}")
            values[key] = float(value)
        return cls(**values)


@dataclass(frozen=True)
class PriceFile:
    """What ``--prices FILE`` holds: Intelligent-Tiering prices and, optionally, an SSD table
    (``Tier.key`` -> USD per GB-month) that replaces the default one."""

    intelligent_tiering: Optional[TieringPrices] = None
    ssd: Optional[Mapping[str, float]] = None


def parse_price_file(raw: Any, *, where: str = "--prices") -> PriceFile:
    """``{"INTELLIGENT_TIERING": {...}, "SSD": {"PERSISTENT_2/125": 0.145, ...}}`` (either part
    optional; a top-level ``"comment"`` string is allowed: JSON has no comments, and a price file
    should say where its figures come from)."""
    if isinstance(raw, Mapping) and isinstance(raw.get("comment"), str):
        raw = {k: v for k, v in raw.items() if k != "comment"}
    if not isinstance(raw, Mapping) or not raw:
        raise SizingError(f"{where} must be a JSON object with INTELLIGENT_TIERING and/or SSD, got "
                          f"{'an empty object' if raw == {} else type(raw).__name__}")
    unknown = sorted(str(k) for k in raw if k not in STORAGE_CLASSES)
    if unknown:
        raise SizingError(f"{where} has unknown section(s) {', '.join(unknown)}; sections are {', '.join(STORAGE_CLASSES)}")
    tiering = raw.get(INTELLIGENT_TIERING)
    ssd = raw.get(rules.SSD)
    if ssd is not None and not isinstance(ssd, Mapping):
        raise SizingError(f"{where}: SSD must be an object of tier key -> USD per GB-month, got {type(ssd).__name__}")
    return PriceFile(
        intelligent_tiering=None if tiering is None else TieringPrices.parse(tiering, where=f"{where}: {INTELLIGENT_TIERING}"),
        ssd=None if ssd is None else dict(ssd),
    )


def load_price_file(path: "str | Path") -> PriceFile:
    """The price file at ``path`` (one line naming ``--prices`` on any problem)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise SizingError(f"--prices file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SizingError(f"--prices file {str(path)!r} cannot be read as UTF-8 text: {exc}") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SizingError(f"--prices file {str(path)!r} is not valid JSON: {exc.msg} at line {exc.lineno} "
                          f"column {exc.colno}") from None
    return parse_price_file(raw, where=f"--prices file {str(path)!r}")


def cache_bounds(throughput_mbps: int) -> tuple[int, int]:
    """The read cache (GiB) the class allows at ``throughput_mbps`` (whole GiB, inside the ratio)."""
    low, high = CACHE_GIB_PER_1000_MBPS
    return math.ceil(Fraction(low * throughput_mbps, 1000)), math.floor(Fraction(high * throughput_mbps, 1000))


def smallest_throughput(required_mbps: float) -> int:
    """The smallest valid ThroughputCapacity at or above ``required_mbps`` (a multiple of 4,000)."""
    steps = max(1, math.ceil(Fraction(required_mbps) / THROUGHPUT_STEP_MBPS))
    throughput = steps * THROUGHPUT_STEP_MBPS
    if throughput > MAX_THROUGHPUT_MBPS:
        raise SizingError(f"required_throughput_mbps={required_mbps:,g} MB/s is above Intelligent-Tiering's largest "
                          f"ThroughputCapacity, {MAX_THROUGHPUT_MBPS:,} MB/s; split the dataset across file systems")
    return throughput


def monthly_cost(prices: TieringPrices, *, throughput_mbps: int, cache_gib: int, dataset_gib: float) -> Fraction:
    """The cost model, in exact decimals (prices as written)."""
    def exact(value: float) -> Fraction:
        return Fraction(repr(value))

    return (throughput_mbps * exact(prices.throughput_mbps_month) + cache_gib * exact(prices.read_cache_gib_month)
            + Fraction(repr(float(dataset_gib))) * exact(prices.frequent_gb_month))


@dataclass(frozen=True)
class TieringPlan:
    """One Intelligent-Tiering file system: what the construct writes and what it costs."""

    throughput_capacity_mbps: int
    read_cache_gib: int
    dataset_gib: float
    hot_gib: float
    required_throughput_mbps: float
    monthly_cost_usd: float
    efa_enabled: bool = False
    warnings: tuple[str, ...] = ()
    explanation: str = field(default="", compare=False)

    deployment_type = rules.PERSISTENT_2
    storage_type = INTELLIGENT_TIERING

    @property
    def baseline_throughput_mbps(self) -> float:
        """What the plan delivers from the cache: its ThroughputCapacity."""
        return float(self.throughput_capacity_mbps)

    @property
    def headroom(self) -> float:
        return self.baseline_throughput_mbps / self.required_throughput_mbps - 1

    @property
    def cached(self) -> bool:
        """True when the working set fits the read cache."""
        return self.read_cache_gib >= self.hot_gib

    def problems(self) -> list[str]:
        """Why FSx would refuse this plan as the construct writes it ([] when valid)."""
        problems = rules.validate_lustre_settings(
            deployment_type=rules.PERSISTENT_2, storage_capacity_gib=None, per_unit_storage_throughput=None,
            storage_type=INTELLIGENT_TIERING, efa_enabled=self.efa_enabled,
            file_system_type_version=rules.FILE_SYSTEM_TYPE_VERSION, has_metadata_configuration=True,
            throughput_capacity_mbps=self.throughput_capacity_mbps,
        )
        low, high = cache_bounds(self.throughput_capacity_mbps)
        if not low <= self.read_cache_gib <= high:
            problems.append(f"DataReadCacheConfiguration.SizeGiB must be {low:,} to {high:,} GiB at "
                            f"{self.throughput_capacity_mbps:,} MB/s, got {self.read_cache_gib}")
        return problems

    @property
    def storage_capacity_gib(self) -> int:
        """0: the class provisions no StorageCapacity (billed per GB stored)."""
        return 0

    @property
    def per_unit_storage_throughput(self) -> None:
        return None

    @property
    def tier_key(self) -> str:
        return INTELLIGENT_TIERING

    def sizing_record(self) -> SizingRecord:
        """The record as the contract carries it: no capacity (0), ThroughputCapacity as the baseline."""
        return SizingRecord(
            deployment_type=self.deployment_type, storage_type=self.storage_type, storage_capacity_gib=0,
            per_unit_storage_throughput=None, efa_enabled=self.efa_enabled,
            required_throughput_mbps=self.required_throughput_mbps, baseline_throughput_mbps=self.baseline_throughput_mbps,
            min_capacity_gib=self.dataset_gib, chosen_from=(INTELLIGENT_TIERING,), chosen_by="calculator",
        )

    def record(self) -> dict[str, Any]:
        """The file system's template Metadata (``smddp:sizing``), with the cache beside it."""
        return {**self.sizing_record().to_json(), "throughputCapacityMBps": self.throughput_capacity_mbps,
                "readCacheGiB": self.read_cache_gib}

    def to_dict(self) -> dict[str, Any]:
        given = {"read_cache_sizing_mode": CACHE_SIZING_MODE, "file_system_type_version": rules.FILE_SYSTEM_TYPE_VERSION,
                 "warnings": list(self.warnings)}
        return {name: given[name] if name in given else getattr(self, name) for name in (
            "deployment_type", "storage_type", "throughput_capacity_mbps", "read_cache_gib", "read_cache_sizing_mode",
            "efa_enabled", "file_system_type_version", "dataset_gib", "hot_gib", "baseline_throughput_mbps",
            "required_throughput_mbps", "headroom", "monthly_cost_usd", "warnings", "explanation")}


def plan_intelligent_tiering(required_throughput_mbps: float, dataset_gib: float = 0, *, prices: TieringPrices,
                             hot_gib: Optional[float] = None, efa_enabled: bool = False) -> TieringPlan:
    """The cheapest Intelligent-Tiering plan: the smallest ThroughputCapacity at or above the
    requirement and a read cache sized to the working set (see the module docstring)."""
    if not isinstance(prices, TieringPrices):
        raise SizingError(f"prices must be TieringPrices (from a price file), got {type(prices).__name__}")
    for name, value in (("required_throughput_mbps", required_throughput_mbps), ("dataset_gib", dataset_gib)):
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value < 0:
            raise SizingError(f"{name} must be a finite number >= 0, got {value!r}")
    if required_throughput_mbps <= 0:
        raise SizingError(f"required_throughput_mbps must be > 0 MB/s, got {required_throughput_mbps:g}")
    hot = float(dataset_gib) if hot_gib is None else hot_gib
    if isinstance(hot, bool) or not isinstance(hot, Real) or not math.isfinite(hot) or hot < 0:
        raise SizingError(f"hot_gib must be a finite number >= 0 GiB, got {hot_gib!r}")
    if hot > dataset_gib and hot_gib is not None:
        raise SizingError(f"hot_gib={hot_gib:g} is more than the dataset ({dataset_gib:g} GiB): the working set is part of it")
    throughput = smallest_throughput(required_throughput_mbps)
    low, high = cache_bounds(throughput)
    cache = min(max(math.ceil(hot), low), high)
    cost = monthly_cost(prices, throughput_mbps=throughput, cache_gib=cache, dataset_gib=dataset_gib)
    warnings: list[str] = []
    if hot > high:
        warnings.append(
            f"the working set ({hot:,g} GiB) is larger than the largest read cache at {throughput:,} MB/s ({high:,} GiB, "
            f"32,768 GiB per 1,000 MB/s): an epoch re-reads {hot - high:,.0f} GiB from the storage tiers at tens of "
            "milliseconds first-byte latency and a request charge each; an SSD plan (or more ThroughputCapacity) keeps "
            "it at SSD latency")
    text = (f"INTELLIGENT_TIERING, ThroughputCapacity {throughput:,} MB/s for {required_throughput_mbps:,g} MB/s required "
            f"(smallest multiple of {THROUGHPUT_STEP_MBPS:,}), read cache {cache:,} GiB for a {hot:,g} GiB working set "
            f"({low:,} to {high:,} GiB allowed), {dataset_gib:,g} GiB stored at the Frequent Access price; "
            f"${float(cost):,.2f}/month at your prices")
    if prices.requests_per_1000 is not None:
        text += f"; cache misses cost ${prices.requests_per_1000 * 1000:,.2f} per million requests (not counted)"
    return TieringPlan(throughput_capacity_mbps=throughput, read_cache_gib=cache, dataset_gib=float(dataset_gib),
                       hot_gib=hot, required_throughput_mbps=float(required_throughput_mbps),
                       monthly_cost_usd=float(cost), efa_enabled=efa_enabled, warnings=tuple(warnings), explanation=text)
