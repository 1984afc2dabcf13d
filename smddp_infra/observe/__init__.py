"""Close the loop on throughput: what jobs really read, against what the file system delivers.

PURE (no ``aws_cdk``, no boto3 at import): :mod:`.metrics` holds the arithmetic the alarms
and ``smddp-infra observe`` share (bytes per period to MB/s, percentiles, the free-capacity
headroom and trend, the verdict); :mod:`.during` is the one "throughput during a window / a job"
computation (observe and diagnose's SYM-FSX-THROUGHPUT); :mod:`.replan` turns a verdict into
advice (grow in place first, replacements beside it, never below the stored data);
:mod:`.scaling` measures the guide's scaling symptom over jobs of different sizes.
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
