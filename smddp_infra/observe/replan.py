"""From a verdict to advice a platform can act on: grow in place first, replacements beside it.

The requirement is the observed p95 x a headroom factor (or, for the guide's scaling symptom,
what the larger job would read had it scaled). The floor is what the file system must keep
holding: its capacity minus its free capacity (the most it held in the window) or the dataset
declared at deploy time, whichever is larger. FSx never shrinks a file system, and a smaller
one could not take the data anyway.

* **Headline**: the change that keeps the data. Under-sized: the deployed tier grown in place
  (:func:`smddp_infra.sizing.growth.grow_in_place`, the same plan ``guard`` and ``diagnose``
  give); when nothing in place meets the need, no headline and the reason. Over-sized: keep it
  (FSx cannot shrink it).
* **Alternatives**: the calculator's best plan of each other type or tier (each exactly what
  ``smddp-infra size ... --deployment-type T`` prints), with its monthly cost difference; each
  is a new, empty file system (copy the data, then switch the jobs to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from smddp_infra.errors import SizingError
from smddp_infra.sizing.growth import DeployedFileSystem, Growth, grow_in_place
from smddp_infra.sizing.planner import DEFAULT_DEPLOYMENT_TYPES, TIER_GROUPS, LustrePlan, plan_lustre

IN_PLACE, KEEP, NEW = "in place", "keep", "new file system"
NEW_WORDS = "new, empty file system: copy the data, then switch the jobs to it"


@dataclass(frozen=True)
class Option:
    """One way to meet the requirement."""

    change: str  # IN_PLACE, KEEP or NEW
    label: str
    baseline_mbps: Optional[float]
    monthly_cost_usd: Optional[float]
    monthly_cost_delta_usd: Optional[float]
    #: How to make it: the AWS CLI update (in place) or the calculator's question (new).
    command: tuple[str, ...] = ()
    plan: Optional[LustrePlan] = None

    def to_json(self) -> dict[str, Any]:
        return {"change": self.change, "fileSystem": self.label, "baselineMBps": self.baseline_mbps,
                "monthlyCostUSD": self.monthly_cost_usd, "monthlyCostDeltaUSD": self.monthly_cost_delta_usd,
                "command": list(self.command), "plan": self.plan.to_dict() if self.plan else None,
                **({"note": NEW_WORDS} if self.change == NEW else {})}


@dataclass(frozen=True)
class Advice:
    required_mbps: float
    floor_gib: float
    headline: Optional[Option]
    alternatives: tuple[Option, ...]
    #: Why nothing in place meets the need (None when the headline does).
    in_place_why_not: Optional[str]
    #: Why no alternative is listed (None when they are, or none meets the need).
    alternatives_why_not: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        return {"requiredMBps": self.required_mbps, "floorGiB": self.floor_gib,
                "headline": self.headline.to_json() if self.headline else None,
                "alternatives": [a.to_json() for a in self.alternatives], "inPlaceWhyNot": self.in_place_why_not,
                "alternativesWhyNot": self.alternatives_why_not}


def advise(deployed: DeployedFileSystem, file_system_id: str, required_mbps: float, *, floor_gib: float,
           grow: bool, deployment_types: Sequence[str] = (), max_capacity_gib: Optional[float] = None) -> Advice:
    """``grow``: the file system is under-sized (else over-sized: keep it, alternatives are smaller).

    ``deployment_types``: what the calculator chose from at deploy time (default: its defaults
    and the deployed type); ``max_capacity_gib``: the deployed record's cap.
    """
    cost = deployed.monthly_cost_usd()
    headline: Optional[Option] = None
    why_not: Optional[str] = None
    growth: Optional[Growth] = None
    if grow:
        growth = grow_in_place(deployed, required_mbps, min_capacity_gib=floor_gib, max_capacity_gib=max_capacity_gib)
        if growth.possible:
            headline = _in_place(deployed, file_system_id, growth, cost)
        else:
            why_not = f"nothing in place meets {required_mbps:,g} MB/s: {growth.why_not}"
    else:
        headline = Option(KEEP, deployed.label, deployed.baseline_mbps, cost, 0.0 if cost is not None else None)
    if deployed.tiering and floor_gib <= 0:
        return Advice(required_mbps, floor_gib, headline, (), why_not, (
            "no SSD alternative: what an Intelligent-Tiering file system stores is not read here (it has no "
            f"StorageCapacity), so a replacement's size is not known; `smddp-infra size --required-mbps {_g(required_mbps)} "
            "--dataset-gib <stored GiB>` prices them"))
    groups = list(dict.fromkeys([*(deployment_types or DEFAULT_DEPLOYMENT_TYPES),
                                 *([deployed.group] if deployed.group in TIER_GROUPS else [])]))
    alternatives = []
    for group in groups:
        try:
            plan = plan_lustre(required_mbps, floor_gib, deployment_types=[group], efa_enabled=deployed.efa_enabled,
                               max_capacity_gib=max_capacity_gib)
        except SizingError:
            continue  # no file system of this type meets it (under the cap): not an alternative
        if _same(plan, deployed, growth):
            continue
        delta = plan.monthly_cost_usd - cost if cost is not None else None
        command = ("smddp-infra", "size", *size_args(required_mbps, floor_gib, group, deployed.efa_enabled, max_capacity_gib))
        alternatives.append(Option(NEW, _plan_label(plan), plan.baseline_throughput_mbps, plan.monthly_cost_usd, delta,
                                   command, plan))
    alternatives.sort(key=lambda o: o.monthly_cost_usd or 0.0)
    return Advice(required_mbps, floor_gib, headline, tuple(alternatives), why_not)


def _in_place(deployed: DeployedFileSystem, file_system_id: str, growth: Growth, cost: Optional[float]) -> Option:
    if not growth.changes:
        return Option(KEEP, deployed.label, deployed.baseline_mbps, cost, 0.0 if cost is not None else None)
    if growth.throughput_capacity_mbps is not None:
        label = f"{deployed.deployment_type} INTELLIGENT_TIERING {growth.throughput_capacity_mbps:,} MB/s"
        command = ("aws", "fsx", "update-file-system", "--file-system-id", file_system_id, "--lustre-configuration",
                   f"ThroughputCapacity={growth.throughput_capacity_mbps}")
        return Option(IN_PLACE, label, growth.baseline_mbps, None, None, command)
    plan = growth.plan
    assert plan is not None
    command = ("aws", "fsx", "update-file-system", "--file-system-id", file_system_id, "--storage-capacity",
               str(plan.storage_capacity_gib))
    delta = plan.monthly_cost_usd - cost if cost is not None else None
    return Option(IN_PLACE, _plan_label(plan), plan.baseline_throughput_mbps, plan.monthly_cost_usd, delta, command, plan)


def _same(plan: LustrePlan, deployed: DeployedFileSystem, growth: Optional[Growth]) -> bool:
    """The plan is the deployed file system, or the in-place growth of it: not an alternative."""
    if deployed.tier != plan.tier:
        return False
    grown = growth.plan.storage_capacity_gib if growth is not None and growth.plan is not None else None
    return plan.storage_capacity_gib in (deployed.storage_capacity_gib, grown)


def _plan_label(plan: LustrePlan) -> str:
    return f"{plan.tier_key}{' with EFA' if plan.efa_enabled else ''} {plan.storage_capacity_gib:,} GiB"


def size_args(required_mbps: float, floor_gib: float, group: str, efa: bool, max_capacity_gib: Optional[float]) -> tuple[str, ...]:
    """The ``smddp-infra size`` flags that ask the calculator the same question."""
    args = ["--required-mbps", _g(required_mbps), "--dataset-gib", _g(floor_gib), "--deployment-type", group]
    if efa:
        args.append("--efa")
    if max_capacity_gib is not None:
        args += ["--max-capacity-gib", _g(max_capacity_gib)]
    return tuple(args)


def floor_gib(capacity_gib: int, min_free_gib: Optional[float], declared_gib: float) -> float:
    """What a re-plan must hold: the most the file system held in the window (capacity minus its
    least free capacity) or the declared dataset, whichever is larger, in whole GiB. Without a
    free-capacity datapoint what it holds is not known, so the whole capacity is assumed used:
    a plan never risks being smaller than the data."""
    import math

    held = float(capacity_gib) if min_free_gib is None else max(0.0, capacity_gib - min_free_gib)
    return float(math.ceil(max(held, declared_gib)))


def _g(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
