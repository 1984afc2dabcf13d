"""FSx for Lustre sizing: pure Python, never imports aws_cdk.

SageMaker's SMDDP troubleshooting guide names FSx for Lustre throughput as the cause of
scaling efficiency collapsing on larger clusters. This room turns "use a bigger file
system" into arithmetic: :func:`plan_lustre` returns the cheapest valid file system whose
baseline throughput and capacity meet the workload (see docs/sizing.md).

* :mod:`.lustre_rules` - the FSx capacity/throughput rule table (single source of truth)
* :mod:`.catalog` - SageMaker EFA training instance types and accelerator counts
* :mod:`.prices` - the one dated (UNCONFIRMED) price table
* :mod:`.planner` - :func:`plan_lustre`, :func:`best_per_deployment_type`, :class:`LustrePlan`
* :mod:`.workload` - required MB/s from a cluster or from an epoch time
* :mod:`.growth` - the deployed file system grown in place (observe, diagnose and guard's one in-place plan)
"""

from smddp_infra.sizing.planner import (
    DEFAULT_DEPLOYMENT_TYPES,
    DEPLOYMENT_TYPE_NAMES,
    PERSISTENT_1_HDD,
    LustrePlan,
    best_per_deployment_type,
    plan_lustre,
)
from smddp_infra.sizing.prices import DEFAULT_PRICES, PRICE_TABLE_DATE
from smddp_infra.sizing.workload import throughput_from_cluster, throughput_from_epoch

__all__ = [
    "DEFAULT_DEPLOYMENT_TYPES",
    "DEFAULT_PRICES",
    "DEPLOYMENT_TYPE_NAMES",
    "PERSISTENT_1_HDD",
    "PRICE_TABLE_DATE",
    "LustrePlan",
    "best_per_deployment_type",
    "plan_lustre",
    "throughput_from_cluster",
    "throughput_from_epoch",
]
