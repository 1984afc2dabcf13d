"""From a verdict to the calculator's new plan, its cost, and whether it grows in place.

The new requirement is the observed p95 x a headroom factor; everything else the calculator
was asked at deploy time (dataset GiB, the deployment types it chose from, EFA, the capacity
cap) comes from the deployed sizing record. So the plan is exactly what
``smddp-infra size --required-mbps R --dataset-gib D ...`` prints for the same inputs
(:meth:`Replan.size_args` are those flags). Whether the change is an in-place update is the
replacement guard's answer on the deployed and the new file system (the same published
data ``smddp-infra guard`` uses), not a second opinion kept here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from smddp_infra.contract import METADATA_SIZING, SizingRecord
from smddp_infra.errors import SizingError
from smddp_infra.sizing.planner import LustrePlan, best_per_deployment_type
from smddp_infra.sizing.prices import DEFAULT_PRICES


@dataclass(frozen=True)
class Replan:
    required_mbps: float
    plan: LustrePlan
    deployed_monthly_cost_usd: Optional[float]
    #: "in place", "no change" or "new file system"
    change: str
    #: The guard's lines when the change is not in place (why, what it means).
    guard_lines: tuple[str, ...]
    size_args: tuple[str, ...]

    @property
    def monthly_cost_delta_usd(self) -> Optional[float]:
        if self.deployed_monthly_cost_usd is None:
            return None
        return self.plan.monthly_cost_usd - self.deployed_monthly_cost_usd

    def to_json(self) -> dict[str, Any]:
        return {"requiredMBps": self.required_mbps, "plan": self.plan.to_dict(),
                "deployedMonthlyCostUSD": self.deployed_monthly_cost_usd,
                "monthlyCostDeltaUSD": self.monthly_cost_delta_usd, "change": self.change,
                "guard": list(self.guard_lines), "sizeCommand": ["smddp-infra", "size", *self.size_args]}


def size_args(required_mbps: float, sizing: SizingRecord) -> tuple[str, ...]:
    """The ``smddp-infra size`` flags that ask the calculator the same question."""
    args = ["--required-mbps", _g(required_mbps), "--dataset-gib", _g(sizing.min_capacity_gib)]
    if sizing.chosen_from:
        args += ["--deployment-type", *sizing.chosen_from]
    if sizing.efa_enabled:
        args.append("--efa")
    if sizing.max_capacity_gib is not None:
        args += ["--max-capacity-gib", _g(sizing.max_capacity_gib)]
    return tuple(args)


def replan(sizing: SizingRecord, required_mbps: float) -> Replan:
    """The calculator's plan for ``required_mbps``, with the deployed record's other inputs."""
    try:
        plans = best_per_deployment_type(
            required_mbps,
            sizing.min_capacity_gib,
            efa_enabled=sizing.efa_enabled,
            deployment_types=list(sizing.chosen_from) or None,
            max_capacity_gib=sizing.max_capacity_gib,
        )
    except SizingError as exc:
        raise SizingError(f"re-plan for {required_mbps:,.1f} MB/s: {exc}") from None
    plan = next(iter(plans.values()))
    change, lines = _change(sizing, plan)
    return Replan(required_mbps, plan, deployed_cost(sizing), change, lines, size_args(required_mbps, sizing))


def deployed_cost(sizing: SizingRecord) -> Optional[float]:
    """Monthly cost of the deployed file system at the default price table (None: tier unknown)."""
    from smddp_infra.sizing.lustre_rules import find_tier

    tier = find_tier(sizing.deployment_type, sizing.per_unit_storage_throughput, storage_type=sizing.storage_type,
                     efa_enabled=sizing.efa_enabled)
    if tier is None or tier.key not in DEFAULT_PRICES:
        return None
    return sizing.storage_capacity_gib * DEFAULT_PRICES[tier.key]


def _resource(kind: str, capacity: int, per_unit: Optional[int], storage_type: str, efa: bool,
              record: dict[str, Any]) -> dict[str, Any]:
    lustre: dict[str, Any] = {"DeploymentType": kind}
    if per_unit is not None:
        lustre["PerUnitStorageThroughput"] = per_unit
    if efa:
        lustre["EfaEnabled"] = True
    props: dict[str, Any] = {"FileSystemType": "LUSTRE", "StorageCapacity": capacity, "LustreConfiguration": lustre}
    if storage_type == "HDD":
        props["StorageType"] = "HDD"
    return {"Type": "AWS::FSx::FileSystem", "Properties": props, "Metadata": {METADATA_SIZING: record},
            "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"}


def _change(sizing: SizingRecord, plan: LustrePlan) -> tuple[str, tuple[str, ...]]:
    from smddp_infra.review.replacement import ReplacementData, guard

    old = {"Resources": {"FileSystem": _resource(sizing.deployment_type, sizing.storage_capacity_gib,
                                                 sizing.per_unit_storage_throughput, sizing.storage_type,
                                                 sizing.efa_enabled, sizing.to_json())}}
    new = {"Resources": {"FileSystem": _resource(plan.deployment_type, plan.storage_capacity_gib,
                                                 plan.per_unit_storage_throughput, plan.storage_type,
                                                 plan.efa_enabled, plan.record())}}
    report = guard(old, new, data=ReplacementData())
    if report.findings:
        lines: list[str] = []
        for finding in report.findings:
            lines += finding.lines()
        return "new file system", tuple(lines)
    if plan.storage_capacity_gib == sizing.storage_capacity_gib:
        return "no change", ()
    return "in place", ()


def _g(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
