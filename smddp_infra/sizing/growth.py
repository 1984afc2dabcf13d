"""Growing a deployed file system in place: the change that keeps its data.

FSx for Lustre changes a file system in place in two ways only (FSx API reference,
UpdateFileSystem): more ``StorageCapacity`` (SCRATCH_2, PERSISTENT_1, PERSISTENT_2; never less,
never on SCRATCH_1; an EFA-enabled one in its EFA steps) and, on Intelligent-Tiering, more
``ThroughputCapacity`` (it only grows). Everything else (deployment type, per-unit throughput,
storage class, EFA) is fixed at creation: another value is a new, EMPTY file system.

:func:`grow_in_place` is the calculator pinned to the deployed tier with the deployed capacity
as its floor: the plan ``smddp-infra observe``, ``diagnose`` and the replacement guard give as
"grow it in place". One place, so the three never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from smddp_infra.errors import SizingError
from smddp_infra.sizing import lustre_rules as rules
from smddp_infra.sizing.planner import PERSISTENT_1_HDD, LustrePlan, plan_lustre
from smddp_infra.sizing.prices import DEFAULT_PRICES


@dataclass(frozen=True)
class DeployedFileSystem:
    """A file system as it exists (what ``DescribeFileSystems`` or a sizing record says)."""

    deployment_type: str
    storage_type: str  # SSD, HDD or INTELLIGENT_TIERING
    storage_capacity_gib: int  # 0 on Intelligent-Tiering (no provisioned storage)
    per_unit_storage_throughput: Optional[int] = None
    efa_enabled: bool = False
    throughput_capacity_mbps: Optional[int] = None  # Intelligent-Tiering only

    @classmethod
    def from_description(cls, fs: Mapping[str, Any]) -> "DeployedFileSystem":
        """From one ``DescribeFileSystems`` entry (FSx's own field names)."""
        lustre = fs.get("LustreConfiguration") or {}
        per_unit = lustre.get("PerUnitStorageThroughput")
        throughput = lustre.get("ThroughputCapacity")
        return cls(deployment_type=str(lustre.get("DeploymentType") or rules.SCRATCH_1),
                   storage_type=str(fs.get("StorageType") or rules.SSD),
                   storage_capacity_gib=int(fs.get("StorageCapacity") or 0),
                   per_unit_storage_throughput=int(per_unit) if per_unit is not None else None,
                   efa_enabled=bool(lustre.get("EfaEnabled")),
                   throughput_capacity_mbps=int(throughput) if throughput is not None else None)

    @property
    def tiering(self) -> bool:
        return self.storage_type == rules.INTELLIGENT_TIERING

    @property
    def tier(self) -> Optional[rules.Tier]:
        if self.tiering:
            return None
        return rules.find_tier(self.deployment_type, self.per_unit_storage_throughput, storage_type=self.storage_type,
                               efa_enabled=self.efa_enabled)

    @property
    def group(self) -> str:
        """The calculator's ``deployment_types`` name for this file system's type."""
        return PERSISTENT_1_HDD if self.storage_type == rules.HDD else self.deployment_type

    @property
    def label(self) -> str:
        """``PERSISTENT_2/125 2,400 GiB``, ``SCRATCH_2 14,400 GiB``, ``PERSISTENT_2 INTELLIGENT_TIERING 8,000 MB/s``."""
        if self.tiering:
            return f"{self.deployment_type} INTELLIGENT_TIERING {self.throughput_capacity_mbps or 0:,} MB/s"
        tier = self.tier
        name = tier.key if tier is not None else self.deployment_type
        return f"{name}{' with EFA' if self.efa_enabled else ''} {self.storage_capacity_gib:,} GiB"

    @property
    def baseline_mbps(self) -> Optional[float]:
        """Baseline disk throughput (Intelligent-Tiering: its ThroughputCapacity); None when unknown."""
        if self.tiering:
            return float(self.throughput_capacity_mbps) if self.throughput_capacity_mbps else None
        tier = self.tier
        return tier.throughput_mbps(self.storage_capacity_gib) if tier is not None else None

    def monthly_cost_usd(self, prices: Optional[Mapping[str, float]] = None) -> Optional[float]:
        """At the price table (None: Intelligent-Tiering or a tier without a price)."""
        table = DEFAULT_PRICES if prices is None else prices
        tier = self.tier
        if tier is None or tier.key not in table:
            return None
        return self.storage_capacity_gib * table[tier.key]


@dataclass(frozen=True)
class Growth:
    """The in-place answer: a plan (``plan`` or ``throughput_capacity_mbps``), or why there is none."""

    deployed: DeployedFileSystem
    required_mbps: float
    plan: Optional[LustrePlan] = None
    #: Intelligent-Tiering: the ThroughputCapacity that meets the need.
    throughput_capacity_mbps: Optional[int] = None
    #: Why nothing in place meets the need (None when something does).
    why_not: Optional[str] = None
    #: The capacity floor came from the deployed size, not the requirement or the data (the
    #: unpinned plan would be smaller: FSx cannot shrink).
    held_by_deployed_size: bool = False

    @property
    def possible(self) -> bool:
        return self.why_not is None

    @property
    def changes(self) -> bool:
        """True when the file system must grow (False: it already meets the need)."""
        if self.plan is not None:
            return self.plan.storage_capacity_gib > self.deployed.storage_capacity_gib
        if self.throughput_capacity_mbps is not None:
            return self.throughput_capacity_mbps > (self.deployed.throughput_capacity_mbps or 0)
        return False

    @property
    def baseline_mbps(self) -> Optional[float]:
        if self.plan is not None:
            return self.plan.baseline_throughput_mbps
        return float(self.throughput_capacity_mbps) if self.throughput_capacity_mbps is not None else None

    @property
    def monthly_cost_usd(self) -> Optional[float]:
        return self.plan.monthly_cost_usd if self.plan is not None else None


def grow_in_place(deployed: DeployedFileSystem, required_mbps: float, *, min_capacity_gib: float = 0,
                  max_capacity_gib: Optional[float] = None, prices: Optional[Mapping[str, float]] = None,
                  clients: Optional[int] = None) -> Growth:
    """The deployed tier, sized by the calculator for ``required_mbps`` and at least its own
    capacity and ``min_capacity_gib`` (the data it must hold); or why that is impossible."""
    if deployed.tiering:
        return _grow_tiering(deployed, required_mbps)
    current = deployed.storage_capacity_gib
    if deployed.deployment_type not in rules.CAPACITY_GROWS_IN_PLACE:
        return Growth(deployed, required_mbps, why_not=(
            f"a {deployed.deployment_type} file system cannot grow (FSx grows only "
            f"{', '.join(rules.CAPACITY_GROWS_IN_PLACE)}; UpdateFileSystem StorageCapacity)"))
    if deployed.tier is None:
        return Growth(deployed, required_mbps, why_not=(
            f"{deployed.label} is not a tier in the FSx rule table, so its growth is not computed"))
    pinned: dict[str, Any] = dict(efa_enabled=deployed.efa_enabled, deployment_types=[deployed.group],
                                  per_unit_storage_throughput=deployed.per_unit_storage_throughput,
                                  max_capacity_gib=max_capacity_gib, prices=prices, clients=clients)
    try:
        unpinned = plan_lustre(required_mbps, min_capacity_gib, **pinned)
        plan = unpinned if unpinned.storage_capacity_gib >= current else plan_lustre(
            required_mbps, max(min_capacity_gib, current), **pinned)
    except SizingError as exc:
        why = str(exc)
        if deployed.efa_enabled:
            why += f"; its throughput tier cannot change ({rules.EFA_TIER_FIXED_SOURCE})"
        return Growth(deployed, required_mbps, why_not=why)
    return Growth(deployed, required_mbps, plan=plan, held_by_deployed_size=unpinned.storage_capacity_gib < current)


def _grow_tiering(deployed: DeployedFileSystem, required_mbps: float) -> Growth:
    from smddp_infra.sizing.tiering import smallest_throughput

    try:
        needed = smallest_throughput(required_mbps)
    except SizingError as exc:
        return Growth(deployed, required_mbps, why_not=str(exc))
    return Growth(deployed, required_mbps, throughput_capacity_mbps=max(needed, deployed.throughput_capacity_mbps or 0))
