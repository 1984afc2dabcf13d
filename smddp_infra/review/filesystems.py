"""The file system's sizing as a reviewer checks it: requirement, plan, headroom, cost.

The requirement comes from the tag ``smddp:requiredThroughputMBps`` that
:class:`~smddp_infra.constructs.filesystem.LustreFileSystem` writes; the baseline throughput
and the price come from the project's single sources of truth
(:func:`smddp_infra.sizing.lustre_rules.find_tier`, :data:`smddp_infra.sizing.prices.DEFAULT_PRICES`),
so the review can never disagree with the calculator that chose the size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from smddp_infra.contract import TAG_REQUIRED_THROUGHPUT
from smddp_infra.review.template import TemplateView, as_number
from smddp_infra.sizing.lustre_rules import find_tier
from smddp_infra.sizing.prices import DEFAULT_PRICES

REQUIREMENT_TAG = TAG_REQUIRED_THROUGHPUT  # written by constructs/filesystem.py


@dataclass(frozen=True)
class FileSystemSizing:
    logical_id: str
    deployment_type: str
    storage_type: str
    capacity_gib: Optional[int]
    per_unit_throughput: Optional[int]
    efa_enabled: bool
    tier_key: Optional[str]
    baseline_mbps: Optional[float]
    required_mbps: Optional[float]
    price_usd_per_gb_month: Optional[float]
    monthly_cost_usd: Optional[float]
    note: str = ""

    @property
    def headroom(self) -> Optional[float]:
        if self.baseline_mbps is None or not self.required_mbps:
            return None
        return self.baseline_mbps / self.required_mbps - 1


def file_system_sizing(view: TemplateView) -> list[FileSystemSizing]:
    """One row per Lustre file system, its settings read by the model the rules use
    (:func:`smddp_infra.rules.fsx_rules.read_settings`, parameter defaults)."""
    from smddp_infra.rules.fsx_rules import read_settings
    from smddp_infra.rules.training import lustre_file_systems

    world = view.model.world()
    found = []
    for fs in lustre_file_systems(world):
        logical_id = fs.logical_id
        settings = read_settings(world, fs)
        if settings is None:
            found.append(FileSystemSizing(logical_id, "?", "?", None, None, False, None, None,
                                          as_number(view.tags(logical_id).get(REQUIREMENT_TAG)), None, None,
                                          note="its settings are not decided by the template (parameters without defaults, imports, a backup)"))
            continue
        deployment, storage = settings.deployment_type, settings.storage_type
        capacity, per_unit, efa = settings.storage_capacity_gib, settings.per_unit_storage_throughput, settings.efa_enabled
        required = as_number(view.tags(logical_id).get(REQUIREMENT_TAG))
        tier = find_tier(deployment, per_unit, storage_type=storage, efa_enabled=efa)
        notes = []
        baseline = price = cost = None
        if tier is None:
            notes.append(f"{deployment}/{storage}/{per_unit} is not in the FSx rule table" if storage != "INTELLIGENT_TIERING"
                         else "Intelligent-Tiering: priced per GB stored, not in the table")
        elif capacity is None:
            notes.append("StorageCapacity is not a literal number")
        else:
            baseline = tier.throughput_mbps(capacity)
            price = DEFAULT_PRICES.get(tier.key)
            cost = capacity * price if price is not None else None
            if price is None:
                notes.append(f"no default price for {tier.key}")
        if required is None:
            notes.append(f"no {REQUIREMENT_TAG} tag: the requirement is unknown")
        found.append(
            FileSystemSizing(
                logical_id=logical_id,
                deployment_type=deployment,
                storage_type=storage,
                capacity_gib=capacity,
                per_unit_throughput=per_unit,
                efa_enabled=efa,
                tier_key=tier.key if tier else None,
                baseline_mbps=baseline,
                required_mbps=required,
                price_usd_per_gb_month=price,
                monthly_cost_usd=cost,
                note="; ".join(notes),
            )
        )
    return found
