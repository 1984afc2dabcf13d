"""The arithmetic of watching a file system: one place for the alarms and ``smddp-infra observe``.

FSx for Lustre publishes ``DataReadBytes`` as bytes read in each period (namespace ``AWS/FSx``,
dimension ``FileSystemId``), so throughput over a period is ``Sum / period seconds / 1e6``
MB/s -- the same decimal megabytes the FSx baseline (MB/s per TiB) is quoted in.
``FreeDataStorageCapacity`` is bytes; this module speaks GiB (2**30 bytes), as StorageCapacity does.

Defaults, and why (docs/observe.md says the same for users):

* period 300 s: long enough to smooth a data loader's step-to-step jitter, short enough that
  an hour-long epoch gives a dozen samples;
* 3 of 4 periods (15 of 20 minutes) at or above 80 % of the baseline: a job that reads at the
  baseline for a quarter of an hour is held back by the file system; one period below (an
  evaluation pass, a checkpoint write) does not reset the count, while a short burst (the
  first batches, a restart reading a checkpoint) never fills three periods;
* 80 %: sustained reads that close to the baseline leave no margin for the next epoch's
  cache misses or a second job; SCRATCH_2 can burst above its baseline for a while, so a
  burst counts too (burst credits run out; the calculator never counts them);
* over-sized below 30 % at p95: even the busiest periods use under a third of what is paid for;
* free capacity below 10 % of the file system, or twice the checkpoint when its size is
  known: the next checkpoint (and a spare while the previous one is still being written)
  must fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Optional, Sequence

from smddp_infra.errors import ConfigError

BYTES_PER_MB = 1_000_000
BYTES_PER_GIB = 1024**3

DEFAULT_PERIOD_SECONDS = 300
DEFAULT_THROUGHPUT_FRACTION = 0.8
DEFAULT_DATAPOINTS_TO_ALARM = 3
DEFAULT_EVALUATION_PERIODS = 4
DEFAULT_FREE_CAPACITY_FRACTION = 0.10
#: A checkpoint needs room for itself and the one being replaced while it is written.
CHECKPOINT_MULTIPLE = 2
#: p95 below this fraction of the baseline: the file system is bigger than the jobs need.
OVER_SIZED_FRACTION = 0.3
#: The re-plan's requirement is the observed p95 times this.
DEFAULT_HEADROOM = 1.25



def mbps_expression(metric_id: str) -> str:
    """CloudWatch metric math for MB/s from a bytes metric's ``Sum``: the alarm and dashboard use
    exactly this, :func:`mbps` is the same formula for ``observe``."""
    return f"{metric_id} / PERIOD({metric_id}) / {BYTES_PER_MB}"


def gib_expression(metric_id: str) -> str:
    """Free capacity in GiB (the capacity alarm's threshold is in GiB, like StorageCapacity)."""
    return f"{metric_id} / {BYTES_PER_GIB}"


def per_second_expression(metric_id: str) -> str:
    return f"{metric_id} / PERIOD({metric_id})"


def mbps(sum_bytes: float, period_seconds: float) -> float:
    """MB/s over one period from the period's ``Sum`` of a bytes metric."""
    if period_seconds <= 0:
        raise ValueError(f"period_seconds must be > 0, got {period_seconds!r}")
    return sum_bytes / period_seconds / BYTES_PER_MB


def gib(value_bytes: float) -> float:
    return value_bytes / BYTES_PER_GIB


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linear between closest ranks (numpy's default method).

    p0 is the minimum, p100 the maximum; the result never leaves [min, max] and grows with q.
    """
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be within 0..100, got {q!r}")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    fraction = rank - low
    value = ordered[low] + (ordered[high] - ordered[low]) * fraction
    return min(max(value, ordered[low]), ordered[high])  # no float drift outside the bracketing values


@dataclass(frozen=True)
class Summary:
    """Observed MB/s at the alarm's period."""

    samples: int
    p50: float
    p95: float
    max: float

    def to_json(self) -> dict[str, float]:
        return {"samples": self.samples, "p50": self.p50, "p95": self.p95, "max": self.max}


def summarize(values_mbps: Sequence[float]) -> Optional[Summary]:
    """p50 / p95 / max of per-period MB/s; None when there is no datapoint."""
    if not values_mbps:
        return None
    return Summary(len(values_mbps), percentile(values_mbps, 50), percentile(values_mbps, 95), max(values_mbps))


def throughput_threshold_mbps(baseline_mbps: float, fraction: float) -> float:
    """The throughput alarm's threshold: ``fraction`` of the plan's baseline, in MB/s."""
    return baseline_mbps * fraction


def free_capacity_threshold_gib(capacity_gib: float, *, checkpoint_gib: Optional[float] = None,
                                fraction: float = DEFAULT_FREE_CAPACITY_FRACTION) -> float:
    """The capacity alarm's threshold in GiB: twice the checkpoint when known, else a fraction of the capacity."""
    if checkpoint_gib is not None:
        return checkpoint_gib * CHECKPOINT_MULTIPLE
    return capacity_gib * fraction


class Verdict(str, Enum):
    UNDER_SIZED = "under-sized"
    RIGHT_SIZED = "right-sized"
    OVER_SIZED = "over-sized"
    NOT_EVALUATED = "not evaluated"


def verdict(p95_mbps: Optional[float], baseline_mbps: float, *, under_fraction: float = DEFAULT_THROUGHPUT_FRACTION,
            over_fraction: float = OVER_SIZED_FRACTION) -> Verdict:
    """Under-sized at p95 >= ``under_fraction`` of the baseline, over-sized below ``over_fraction``."""
    if p95_mbps is None:
        return Verdict.NOT_EVALUATED
    if p95_mbps >= under_fraction * baseline_mbps:
        return Verdict.UNDER_SIZED
    if p95_mbps < over_fraction * baseline_mbps:
        return Verdict.OVER_SIZED
    return Verdict.RIGHT_SIZED


@dataclass(frozen=True)
class CapacityTrend:
    """Free capacity over the window (GiB) and where it is heading."""

    first_gib: float
    last_gib: float
    min_gib: float
    #: Least-squares slope; negative when the file system fills up.
    gib_per_day: float
    threshold_gib: float
    #: Days from the last sample until the headroom alarm, at the current slope (None: not filling).
    days_to_threshold: Optional[float]

    def to_json(self) -> dict[str, Optional[float]]:
        return {"firstGiB": self.first_gib, "lastGiB": self.last_gib, "minGiB": self.min_gib,
                "gibPerDay": self.gib_per_day, "thresholdGiB": self.threshold_gib,
                "daysToThreshold": self.days_to_threshold}


#: Below a MiB a day the file system is not filling (float noise on a flat series is far smaller).
FLAT_GIB_PER_DAY = 1 / 1024


def capacity_trend(points: Sequence[tuple[datetime, float]], threshold_gib: float) -> Optional[CapacityTrend]:
    """From (timestamp, free bytes) samples; None without samples."""
    if not points:
        return None
    ordered = sorted(points)
    t0 = ordered[0][0]
    xs = [(t - t0).total_seconds() / 86400 for t, _ in ordered]
    ys = [gib(v) for _, v in ordered]
    slope = 0.0
    if len(ordered) > 1:
        mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
        spread = sum((x - mean_x) ** 2 for x in xs)
        slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread if spread else 0.0
    last = ys[-1]
    days = None
    if slope < -FLAT_GIB_PER_DAY:
        days = max(0.0, (last - threshold_gib) / -slope)
    return CapacityTrend(ys[0], last, min(ys), slope, threshold_gib, days)


def metric_data_queries(file_system_id: str, *, namespace: str, period_seconds: int, read_metric: str,
                        write_metric: str, free_capacity_metric: str, metadata_metric: str) -> list[dict[str, object]]:
    """The GetMetricData queries of one window: the raw metrics, converted here (the same formula
    as the alarm's metric math, :func:`mbps_expression`)."""
    def stat(query_id: str, metric: str, statistic: str) -> dict[str, object]:
        return {"Id": query_id, "ReturnData": True, "MetricStat": {
            "Metric": {"Namespace": namespace, "MetricName": metric,
                       "Dimensions": [{"Name": "FileSystemId", "Value": file_system_id}]},
            "Period": period_seconds, "Stat": statistic}}

    return [stat("read", read_metric, "Sum"), stat("write", write_metric, "Sum"),
            stat("free", free_capacity_metric, "Minimum"), stat("metadata", metadata_metric, "Sum")]


def check_headroom(value: float, flag: str = "--headroom") -> float:
    if not math.isfinite(value) or value < 1:
        raise ConfigError(f"{flag} must be a number >= 1 (the factor on the observed p95), got {value!r}")
    return value


def alarm_states(values: Sequence[Optional[float]], threshold: float, *, datapoints_to_alarm: int,
                 evaluation_periods: int, at_or_above: bool = True) -> list[bool]:
    """In ALARM after each period? N of the last M periods breaching (missing = not breaching,
    the throughput alarm's ``notBreaching``). A model of CloudWatch's rule, for plots and tests."""
    breaching = [v is not None and (v >= threshold if at_or_above else v < threshold) for v in values]
    states = []
    for index in range(len(breaching)):
        window = breaching[max(0, index - evaluation_periods + 1): index + 1]
        states.append(sum(window) >= datapoints_to_alarm)
    return states
