"""Throughput during a window (a job's run): the ONE computation ``observe`` and ``diagnose`` share.

A window's reads come from one ``GetMetricData`` request (the alarm's metrics at its period,
through :mod:`smddp_infra.account`); they become per-period MB/s with the alarm's formula and are
judged against the file system's baseline with the alarm's fraction. ``diagnose``'s
SYM-FSX-THROUGHPUT and ``observe`` (one window, or each of several jobs for the guide's scaling
symptom) call :func:`read_window` and :func:`judge`, so they never disagree on a job.

A training job's window is ``TrainingStartTime`` .. ``TrainingEndTime`` (now, while it runs),
at least one period long: GetMetricData refuses an empty window.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Mapping, Optional

from smddp_infra.contract import MonitoringSettings
from smddp_infra.observe import metrics as m

Series = dict[str, list[tuple[datetime, float]]]


def default_settings(capacity_gib: float) -> MonitoringSettings:
    """The construct's defaults: what a file system without our monitoring is read and judged with."""
    return MonitoringSettings(period_seconds=m.DEFAULT_PERIOD_SECONDS, throughput_fraction=m.DEFAULT_THROUGHPUT_FRACTION,
                              datapoints_to_alarm=m.DEFAULT_DATAPOINTS_TO_ALARM,
                              evaluation_periods=m.DEFAULT_EVALUATION_PERIODS,
                              free_capacity_threshold_gib=m.free_capacity_threshold_gib(capacity_gib))


def job_window(job: Mapping[str, Any], *, now: datetime, period_seconds: int) -> Optional[tuple[datetime, datetime]]:
    """The job's training window, at least one period long; None before it starts training."""
    start = job.get("TrainingStartTime")
    if not isinstance(start, datetime):
        return None
    end = job.get("TrainingEndTime")
    end = end if isinstance(end, datetime) else now
    return start, max(end, start + timedelta(seconds=period_seconds))


def read_window(account: Any, file_system_id: str, start: datetime, end: datetime, *, settings: MonitoringSettings,
                max_pages: int = 20) -> Series:
    """The file system's read, write, free-capacity and metadata series over the window."""
    from smddp_infra.account import metric_data

    queries = m.metric_data_queries(file_system_id, namespace=settings.namespace, period_seconds=settings.period_seconds,
                                    read_metric=settings.read_metric, write_metric=settings.write_metric,
                                    free_capacity_metric=settings.free_capacity_metric,
                                    metadata_metric=settings.metadata_metric)
    return metric_data(account, queries, start, end, what=f"file system {file_system_id}", max_pages=max_pages)


@dataclass(frozen=True)
class Throughput:
    """Reads over a window against the baseline."""

    read: Optional[m.Summary]
    baseline_mbps: float
    verdict: m.Verdict
    period_seconds: int

    @property
    def utilisation(self) -> Optional[float]:
        """p95 as a share of the baseline."""
        return self.read.p95 / self.baseline_mbps if self.read is not None and self.baseline_mbps else None

    @property
    def at_baseline(self) -> bool:
        """The file system sat at its baseline (p95 at or above the alarm's fraction of it)."""
        return self.verdict is m.Verdict.UNDER_SIZED

    def per_instance_mbps(self, instances: int) -> Optional[float]:
        """The median read MB/s of the window, per instance: what each instance sustained."""
        return self.read.p50 / instances if self.read is not None and instances > 0 else None


def judge(series: Series, baseline_mbps: float, *, settings: MonitoringSettings) -> Throughput:
    """Per-period MB/s (the alarm's formula), p50/p95/max, and the verdict at the alarm's fraction."""
    period = settings.period_seconds
    read = m.summarize([m.mbps(v, period) for _, v in series.get("read", [])])
    found = m.verdict(read.p95 if read else None, baseline_mbps, under_fraction=settings.throughput_fraction)
    return Throughput(read, baseline_mbps, found, period)
