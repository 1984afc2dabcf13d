"""What a plan should make a person look twice at before deploying: quota and spend.

Pure (no aws_cdk): the constructs turn each :class:`PlanAlert` into a synth warning through
CDK's ``Annotations`` (seen in ``cdk synth`` output, in ``manifest.json`` and in the review
summary), the CLI can print them. Neither is an error: a file system above the default
regional quota deploys once the quota is raised, and an expensive one may be intended.
What refuses is ``max_capacity_gib`` (the calculator never plans above it) and the size no
CloudFormation template can hold (:data:`~smddp_infra.sizing.lustre_rules.MAX_STORAGE_CAPACITY_GIB`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, Any, Optional

from smddp_infra.errors import ConfigError
from smddp_infra.sizing.lustre_rules import DEFAULT_REGIONAL_QUOTA_GIB
from smddp_infra.sizing.planner import LustrePlan
from smddp_infra.sizing.prices import DEFAULT_MONTHLY_COST_WARNING_USD

if TYPE_CHECKING:
    from smddp_infra.sizing.tiering import TieringPlan

#: Annotation ids (``Annotations.add_warning_v2``): stable, so an app can acknowledge one.
QUOTA_ALERT_ID = "smddp:lustreQuota"
COST_ALERT_ID = "smddp:lustreMonthlyCost"


@dataclass(frozen=True)
class PlanAlert:
    """One thing to check before deploying; ``id`` is stable, ``message`` one line."""

    id: str
    message: str


def monthly_cost_threshold(value: Any, *, setting: str = "monthly_cost_warning_usd") -> float:
    """A threshold in USD per month: a finite number > 0 (None means the default)."""
    if value is None:
        return DEFAULT_MONTHLY_COST_WARNING_USD
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{setting} must be a number of USD per month > 0, got {value!r}")
    return float(value)


def plan_alerts(plan: "LustrePlan | TieringPlan", *, monthly_cost_warning_usd: Optional[float] = None,
                cost_setting: str = "monthly_cost_warning_usd / smddp:monthlyCostWarningUSD") -> tuple[PlanAlert, ...]:
    """Quota and spend alerts for ``plan`` (empty for an ordinary plan)."""
    threshold = monthly_cost_threshold(monthly_cost_warning_usd, setting=cost_setting)
    alerts: list[PlanAlert] = []
    if not isinstance(plan, LustrePlan):  # Intelligent-Tiering: no capacity quota to compare, the user's prices
        if plan.monthly_cost_usd > threshold:
            alerts.append(PlanAlert(
                COST_ALERT_ID,
                f"FSx for Lustre Intelligent-Tiering file system ({plan.throughput_capacity_mbps:,} MB/s, "
                f"{plan.read_cache_gib:,} GiB read cache, {plan.dataset_gib:,g} GiB stored) costs about "
                f"${plan.monthly_cost_usd:,.0f}/month at your prices, above the ${threshold:,.0f}/month warning "
                f"threshold ({cost_setting})",
            ))
        return tuple(alerts)
    size = plan.storage_capacity_gib
    if size > DEFAULT_REGIONAL_QUOTA_GIB:
        alerts.append(PlanAlert(
            QUOTA_ALERT_ID,
            f"FSx for Lustre file system of {size:,} GiB is above the default regional FSx for Lustre storage "
            f"quota of {DEFAULT_REGIONAL_QUOTA_GIB:,} GiB: raise the quota in Service Quotas before deploying, "
            "or cap the plan with max_capacity_gib (smddp:maxCapacityGiB)",
        ))
    if plan.monthly_cost_usd > threshold:
        alerts.append(PlanAlert(
            COST_ALERT_ID,
            f"FSx for Lustre file system of {size:,} GiB ({plan.tier_key}) costs about "
            f"${plan.monthly_cost_usd:,.0f}/month at ${plan.price_usd_per_gb_month:.3f}/GB-month, above the "
            f"${threshold:,.0f}/month warning threshold ({cost_setting}); cap it with max_capacity_gib "
            "(smddp:maxCapacityGiB) if that is not intended (prices: UNCONFIRMED list prices)",
        ))
    return tuple(alerts)


#: Annotation id of :data:`EFA_OVER_TCP_FOR_TRAINING_JOBS` (acknowledgeable).
EFA_TRAINING_JOBS_ALERT_ID = "smddp:efaFileSystemForTrainingJobs"

#: Why an EFA-enabled file system gains a network of training jobs nothing. CreateTrainingJob
#: mounts FSx through ``FileSystemDataSource``, whose only members are FileSystemId,
#: FileSystemType, DirectoryPath and FileSystemAccessMode (botocore's sagemaker model): there is
#: no EFA or GPUDirect Storage option, and SageMaker (not the script) mounts it. An EFA-enabled
#: file system also serves TCP clients, so jobs read it over TCP. That SageMaker never mounts
#: over EFA is UNCONFIRMED (no page says so either way); the clients that do use EFA are HyperPod
#: and EC2 instances with the EFA Lustre client (FSx for Lustre User Guide, EFA-enabled file
#: systems: Nitro v4+ with EFA, not trn2, kernel 6.8+; GDS on P5/P5e/P5en/P6-B200).
EFA_OVER_TCP_FOR_TRAINING_JOBS = (
    "the EFA-enabled file system's only clients are SageMaker training jobs, which mount it over TCP: "
    "CreateTrainingJob's FileSystemDataSource has FileSystemId, FileSystemType, DirectoryPath and "
    "FileSystemAccessMode and no EFA option (botocore's sagemaker model; that SageMaker never mounts over EFA "
    "is UNCONFIRMED), so the EFA capacity steps are paid for and not used; EFA pays off for HyperPod or EC2 "
    "clients with the EFA Lustre client (Nitro v4+, not trn2, kernel 6.8+)"
)
