"""Close the loop on throughput: what jobs really read, against what the file system was sized for.

PURE (no ``aws_cdk``, no boto3 at import): :mod:`.metrics` holds the arithmetic the alarms
and ``smddp-infra observe`` share (bytes per period to MB/s, percentiles, the free-capacity
headroom and trend, the verdict); :mod:`.replan` turns a verdict into the calculator's new
plan and asks the replacement guard whether it grows in place.
"""

from smddp_infra.observe.metrics import (
    DEFAULT_DATAPOINTS_TO_ALARM,
    DEFAULT_EVALUATION_PERIODS,
    DEFAULT_FREE_CAPACITY_FRACTION,
    DEFAULT_HEADROOM,
    DEFAULT_PERIOD_SECONDS,
    DEFAULT_THROUGHPUT_FRACTION,
    OVER_SIZED_FRACTION,
    Verdict,
    free_capacity_threshold_gib,
    mbps,
    percentile,
    summarize,
    verdict,
)

__all__ = [
    "DEFAULT_DATAPOINTS_TO_ALARM",
    "DEFAULT_EVALUATION_PERIODS",
    "DEFAULT_FREE_CAPACITY_FRACTION",
    "DEFAULT_HEADROOM",
    "DEFAULT_PERIOD_SECONDS",
    "DEFAULT_THROUGHPUT_FRACTION",
    "OVER_SIZED_FRACTION",
    "Verdict",
    "free_capacity_threshold_gib",
    "mbps",
    "percentile",
    "summarize",
    "verdict",
]
