"""FSx for Lustre list prices: the one dated table the calculator costs plans with.

Why a table in code and not a price API call: the calculator is pure and offline (the CLI
must answer in a fraction of a second without AWS credentials), so it ships a dated
snapshot and lets callers pass their own (``plan_lustre(..., prices=...)``) for another
region, a negotiated rate or a newer list price.

UNCONFIRMED: these are us-east-1 list prices in USD per GB-month as recorded in the
project's reference notes; they were not re-read from the AWS price list on
:data:`PRICE_TABLE_DATE` and prices change. Treat them as defaults, not quotes.

The table is keyed by :attr:`smddp_infra.sizing.lustre_rules.Tier.key`. EFA-enabled
PERSISTENT_2 tiers share the key (and the price) of the plain PERSISTENT_2 tier of the
same throughput. SCRATCH_1 has no default price (it is a legacy type the calculator only
considers when named, and then only with a ``prices`` mapping that prices it).

PERSISTENT_1 HDD prices are for the disk alone: the calculator always plans
``DriveCacheType = "NONE"``, because the optional SSD read cache is billed on top and is
not counted as baseline disk throughput anyway.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

#: The day the table below was recorded in this project (not re-verified against AWS).
PRICE_TABLE_DATE = "2026-12-02"

#: Region the defaults apply to.
PRICE_TABLE_REGION = "us-east-1"

#: Shown next to every figure that comes from the default table.
PRICE_TABLE_NOTE = (
    f"UNCONFIRMED {PRICE_TABLE_REGION} list prices recorded {PRICE_TABLE_DATE}; "
    "pass prices= (or check the AWS pricing page) for a quote"
)

#: USD per GB-month, keyed by Tier.key. Read-only: copy it (``dict(DEFAULT_PRICES)``) to override.
DEFAULT_PRICES: Mapping[str, float] = MappingProxyType(
    {
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
)

#: A plan costing more than this per month (USD, at the table's or the caller's prices) is a
#: synth-time warning (``monthly_cost_warning_usd`` prop, ``smddp:monthlyCostWarningUSD``
#: context key). A warning, not a cap: ``max_capacity_gib`` is the guard that refuses.
DEFAULT_MONTHLY_COST_WARNING_USD = 20_000.0
