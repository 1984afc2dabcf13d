"""Alarms and dashboards as a reviewer reads them: what is watched, at what threshold, who is told.

Thresholds are shown in the units people size file systems in: an alarm on metric math
``x / PERIOD(x) / 1000000`` over a bytes ``Sum`` is MB/s, ``x / 1073741824`` is GiB, and an
alarm straight on a bytes metric is converted (``Sum`` per period to MB/s, a capacity in bytes
to GiB) rather than shown as bytes per period. Read from any template, not only ours.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from smddp_infra.review.template import TemplateView, as_number

_MBPS = re.compile(r"^\s*(\w+)\s*/\s*PERIOD\(\s*(\w+)\s*\)\s*/\s*(1000000|1e6|1E6)\s*$")
_GIB = re.compile(r"^\s*(\w+)\s*/\s*(1073741824)\s*$")
_OPERATORS = {
    "GreaterThanOrEqualToThreshold": ">=", "GreaterThanThreshold": ">", "LessThanThreshold": "<",
    "LessThanOrEqualToThreshold": "<=",
}


@dataclass(frozen=True)
class AlarmRow:
    logical_id: str
    watches: str
    condition: str
    periods: str
    actions: str
    description: str


@dataclass(frozen=True)
class DashboardRow:
    logical_id: str
    widgets: tuple[str, ...]


def _metric_text(stat: Mapping[str, Any]) -> tuple[str, str, Optional[int]]:
    metric = stat.get("Metric") or {}
    return str(metric.get("Namespace", "?")), str(metric.get("MetricName", "?")), as_number(stat.get("Period"), int)


def alarms(view: TemplateView) -> list[AlarmRow]:
    rows = []
    for logical_id, resource in view.of_type("AWS::CloudWatch::Alarm"):
        props = resource.get("Properties") or {}
        threshold = None if isinstance(props.get("Threshold"), bool) else as_number(props.get("Threshold"))
        unit, watches, period = "", "?", as_number(props.get("Period"), int)
        metrics = props.get("Metrics")
        if isinstance(metrics, list) and metrics:
            raw = {q.get("Id"): q for q in metrics if isinstance(q, Mapping) and "MetricStat" in q}
            expression = next((q for q in metrics if isinstance(q, Mapping) and q.get("Expression")), None)
            if expression is not None:
                text = str(expression["Expression"])
                mbps, gib = _MBPS.match(text), _GIB.match(text)
                if mbps and mbps.group(1) == mbps.group(2) and mbps.group(1) in raw:
                    namespace, name, period = _metric_text(raw[mbps.group(1)]["MetricStat"])
                    watches, unit = f"{namespace} {name}: Sum / period / 1e6 (MB/s)", "MB/s"
                elif gib and gib.group(1) in raw:
                    stat = raw[gib.group(1)]["MetricStat"]
                    namespace, name, period = _metric_text(stat)
                    watches, unit = f"{namespace} {name} ({stat.get('Stat')}) in GiB", "GiB"
                else:
                    watches = f"metric math `{text}`"
                    period = next((_metric_text(q["MetricStat"])[2] for q in raw.values()), period)
            elif raw:
                stat = next(iter(raw.values()))["MetricStat"]
                namespace, name, period = _metric_text(stat)
                watches, unit, threshold = _raw(namespace, name, str(stat.get("Stat")), period, threshold)
        elif props.get("MetricName"):
            watches, unit, threshold = _raw(str(props.get("Namespace")), str(props["MetricName"]),
                                            str(props.get("Statistic") or props.get("ExtendedStatistic")), period, threshold)
        operator = _OPERATORS.get(str(props.get("ComparisonOperator")), str(props.get("ComparisonOperator")))
        shown = "?" if threshold is None else f"{threshold:,.1f}".rstrip("0").rstrip(".")
        m = as_number(props.get("EvaluationPeriods"), int)
        n = as_number(props.get("DatapointsToAlarm"), int) or m
        periods = f"{n} of {m} x {period} s" if period else f"{n} of {m}"
        missing = props.get("TreatMissingData")
        if missing:
            periods += f"; missing data: {missing}"
        actions = ", ".join(_target(view, a) for a in props.get("AlarmActions") or []) or "none"
        rows.append(AlarmRow(logical_id, watches, f"{operator} {shown} {unit}".strip(), periods, actions,
                             str(props.get("AlarmDescription") or "")))
    return rows


def _target(view: TemplateView, value: Any) -> str:
    target = view.referenced_id(value)
    return view.label(target) if target else view.render(value)


def _raw(namespace: str, name: str, stat: str, period: Optional[int], threshold: Optional[float]) -> tuple[str, str, Optional[float]]:
    """A bytes metric straight in an alarm: shown converted (never bytes per period)."""
    if threshold is not None and name.endswith("Bytes") and stat == "Sum" and period:
        return f"{namespace} {name} (Sum per period, shown as MB/s)", "MB/s", threshold / period / 1e6
    if threshold is not None and name.endswith("Capacity") and namespace == "AWS/FSx":
        return f"{namespace} {name} ({stat}, shown in GiB)", "GiB", threshold / 1024**3
    return f"{namespace} {name} ({stat})", "", threshold


def dashboards(view: TemplateView) -> list[DashboardRow]:
    rows = []
    for logical_id, resource in view.of_type("AWS::CloudWatch::Dashboard"):
        body = (resource.get("Properties") or {}).get("DashboardBody")
        widgets: tuple[str, ...] = ()
        parsed = _body(body)
        if parsed is not None:
            widgets = tuple(_widget(w) for w in parsed.get("widgets") or [] if isinstance(w, Mapping))
        rows.append(DashboardRow(logical_id, widgets))
    return rows


def _body(body: Any) -> Optional[Mapping[str, Any]]:
    """The dashboard JSON, with every intrinsic inside an ``Fn::Join`` replaced by ``<token>``."""
    if isinstance(body, Mapping) and isinstance(body.get("Fn::Join"), list) and len(body["Fn::Join"]) == 2:
        separator, parts = body["Fn::Join"]
        if isinstance(parts, list):
            body = str(separator).join(p if isinstance(p, str) else "<token>" for p in parts)
    if not isinstance(body, str):
        return None
    try:
        parsed = json.loads(body)
    except json.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, Mapping) else None


def _widget(widget: Mapping[str, Any]) -> str:
    props = widget.get("properties") or {}
    title = props.get("title") or widget.get("type", "widget")
    lines = [a for a in ((props.get("annotations") or {}).get("horizontal") or []) if isinstance(a, Mapping)]
    if lines:
        title += " (lines: " + "; ".join(str(a.get("label") or a.get("value")) for a in lines) + ")"
    return str(title)
