"""``smddp-infra observe``: what jobs really read, against the baseline the file system was sized for.

Reads the deployed network from ``cdk-outputs.json`` (its job document carries the sizing
record and the monitoring settings), fetches the file system's ``AWS/FSx`` metrics for one
window with ONE ``GetMetricData`` request (followed through its pages), and prints observed
read MB/s (p50, p95, max at the alarm's period), the share of the baseline, the free-capacity
trend and a verdict. Under- or over-sized: the calculator's plan for the observed p95 x
``--headroom``, its monthly cost delta, and whether it grows in place (the replacement guard's
answer). ``--job NAME`` takes the window from ``DescribeTrainingJob``.

Exit codes: 0 right-sized, 1 under- or over-sized or no data in the window, 2 bad input.
AWS is read through :mod:`smddp_infra.account` (one boto3 Session, retries, pagination, a missing
permission or credential as one line); boto3 is imported only in ``run``; credentials and
endpoint are the caller's (``AWS_PROFILE``, ``AWS_ENDPOINT_URL``...).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timedelta, timezone
from typing import Any

from smddp_infra.errors import ConfigError

HELP = ("Compare what jobs read from the file system (CloudWatch) with its baseline: under-, right- or "
        "over-sized, and the calculator's new plan.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--outputs", metavar="FILE", required=True,
                        help="the cdk-outputs.json `cdk deploy --outputs-file` wrote")
    parser.add_argument("--network", metavar="NAME", help="the network, when the file holds several")
    parser.add_argument("--stack", metavar="NAME", help="the stack, when several hold a network")
    window = parser.add_argument_group("window (default: the last 24 hours)")
    window.add_argument("--since", metavar="TIME", help="start, ISO 8601 (2026-11-01T00:00; UTC when no offset)")
    window.add_argument("--until", metavar="TIME", help="end, ISO 8601 (default: now)")
    window.add_argument("--job", metavar="TRAINING_JOB_NAME",
                        help="use this training job's start and end (DescribeTrainingJob)")
    parser.add_argument("--headroom", metavar="FACTOR", default="1.25",
                        help="the re-plan's requirement is the observed p95 x this (default: 1.25)")
    parser.add_argument("--region", metavar="REGION", help="default: the network's region")
    parser.add_argument("--json", action="store_true", help="print the observation as JSON")


def _time(flag: str, text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"{flag} must be an ISO 8601 time such as 2026-11-01T00:00, got {text!r}") from None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _headroom(text: str) -> float:
    from smddp_infra.observe.metrics import check_headroom

    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"--headroom must be a number >= 1 (the factor on the observed p95), got {text!r}") from None
    return check_headroom(value)


def job_window(account: Any, name: str) -> tuple[datetime, datetime]:
    """The training job's start and end (now, when it is still running), read through the account room."""
    from smddp_infra.account import training_job

    job = training_job(account, name, what=f"--job {name}")
    start = job.get("TrainingStartTime")
    if start is None:
        raise ConfigError(f"--job {name} has not started training yet (status {job.get('TrainingJobStatus')}): "
                          "nothing to observe")
    end = job.get("TrainingEndTime") or datetime.now(timezone.utc)
    return start, end


def run(args: argparse.Namespace) -> int:
    from smddp_infra.contract import MonitoringSettings, read_outputs_file, select_network
    from smddp_infra.observe import metrics as m
    from smddp_infra.observe.replan import replan

    headroom = _headroom(args.headroom)
    if args.job and (args.since or args.until):
        raise ConfigError("--job sets the window from the training job: pass it without --since/--until")
    network = select_network(read_outputs_file(args.outputs), network=args.network, stack=args.stack)
    doc = network.document
    if doc is None or doc.sizing is None:
        raise ConfigError(f"{network.where} has no sizing record in its job document (deployed before "
                          "smddp-infra observe existed): redeploy it to publish one")
    sizing = doc.sizing
    settings = doc.monitoring or MonitoringSettings(
        period_seconds=m.DEFAULT_PERIOD_SECONDS, throughput_fraction=m.DEFAULT_THROUGHPUT_FRACTION,
        datapoints_to_alarm=m.DEFAULT_DATAPOINTS_TO_ALARM, evaluation_periods=m.DEFAULT_EVALUATION_PERIODS,
        free_capacity_threshold_gib=m.free_capacity_threshold_gib(sizing.storage_capacity_gib))
    region = args.region or doc.region
    if not region:
        raise ConfigError(f"{network.where} does not name its region: pass --region")

    from smddp_infra.account import Account, metric_data

    account = Account(region=region)
    if args.job:
        start, end = job_window(account, args.job)
    else:
        end = _time("--until", args.until) if args.until else datetime.now(timezone.utc)
        start = _time("--since", args.since) if args.since else end - timedelta(days=1)
    if start >= end:
        raise ConfigError(f"the window must end after it starts, got {start.isoformat()} .. {end.isoformat()}")

    queries = m.metric_data_queries(doc.file_system.id, namespace=settings.namespace, period_seconds=settings.period_seconds,
                                    read_metric=settings.read_metric, write_metric=settings.write_metric,
                                    free_capacity_metric=settings.free_capacity_metric,
                                    metadata_metric=settings.metadata_metric)
    series = metric_data(account, queries, start, end, what=f"file system {doc.file_system.id}")
    period = settings.period_seconds
    read = m.summarize([m.mbps(v, period) for _, v in series["read"]])
    write = m.summarize([m.mbps(v, period) for _, v in series["write"]])
    metadata = m.summarize([v / period for _, v in series["metadata"]])
    trend = m.capacity_trend(series["free"], settings.free_capacity_threshold_gib)
    baseline = sizing.baseline_throughput_mbps
    found = m.verdict(read.p95 if read else None, baseline, under_fraction=settings.throughput_fraction)
    plan = None
    if found in (m.Verdict.UNDER_SIZED, m.Verdict.OVER_SIZED) and read is not None:
        plan = replan(sizing, round(read.p95 * headroom, 1))

    report = {
        "network": network.label, "fileSystemId": doc.file_system.id, "region": region,
        "window": {"start": start.isoformat(), "end": end.isoformat(), "periodSeconds": period,
                   **({"job": args.job} if args.job else {})},
        "deployed": sizing.to_json(),
        "read": read.to_json() if read else None, "write": write.to_json() if write else None,
        "metadataOpsPerSecond": metadata.to_json() if metadata else None,
        "baselineUtilisation": (read.p95 / baseline) if read else None,
        "freeCapacity": trend.to_json() if trend else None,
        "verdict": found.value, "headroom": headroom,
        "replan": plan.to_json() if plan else None,
    }
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        _print(report, sizing, settings, found, plan)
    return 0 if found is m.Verdict.RIGHT_SIZED else 1


def _print(report: dict[str, Any], sizing: Any, settings: Any, found: Any, plan: Any) -> None:
    from smddp_infra.observe.metrics import OVER_SIZED_FRACTION, Verdict

    w = report["window"]
    baseline = sizing.baseline_throughput_mbps
    out = [f"{report['network']}: file system {report['fileSystemId']}, {sizing.deployment_type}"
           f"{'/' + str(sizing.per_unit_storage_throughput) if sizing.per_unit_storage_throughput else ''} "
           f"{sizing.storage_capacity_gib:,} GiB, baseline {baseline:,.1f} MB/s (planned requirement "
           f"{sizing.required_throughput_mbps:,g} MB/s)",
           f"window {w['start']} .. {w['end']}{' (job ' + w['job'] + ')' if 'job' in w else ''}, "
           f"period {w['periodSeconds']} s"]
    read = report["read"]
    if read:
        out.append(f"read MB/s:  p50 {read['p50']:,.1f}  p95 {read['p95']:,.1f}  max {read['max']:,.1f}  "
                   f"({read['samples']} periods; p95 is {report['baselineUtilisation']:.0%} of the baseline)")
    write = report["write"]
    if write:
        out.append(f"write MB/s: p50 {write['p50']:,.1f}  p95 {write['p95']:,.1f}  max {write['max']:,.1f}")
    trend = report["freeCapacity"]
    if trend:
        when = (f", {trend['daysToThreshold']:,.1f} days to the {trend['thresholdGiB']:,.0f} GiB alarm at this rate"
                if trend["daysToThreshold"] is not None else f" (alarm below {trend['thresholdGiB']:,.0f} GiB)")
        out.append(f"free capacity: {trend['firstGiB']:,.0f} -> {trend['lastGiB']:,.0f} GiB (min {trend['minGiB']:,.0f}), "
                   f"{trend['gibPerDay']:+,.1f} GiB/day{when}")
    if found is Verdict.NOT_EVALUATED:
        out.append(f"verdict: NOT EVALUATED: no {settings.read_metric} datapoints for this file system in the window "
                   "(wrong window or region, or nothing read it)")
    elif found is Verdict.UNDER_SIZED:
        out.append(f"verdict: UNDER-SIZED: p95 read {read['p95']:,.1f} MB/s is at least {settings.throughput_fraction:.0%} "
                   f"of the {baseline:,.1f} MB/s baseline: the file system is the bottleneck")
    elif found is Verdict.OVER_SIZED:
        out.append(f"verdict: OVER-SIZED: p95 read {read['p95']:,.1f} MB/s is under {OVER_SIZED_FRACTION:.0%} of the "
                   f"{baseline:,.1f} MB/s baseline")
    else:
        out.append(f"verdict: RIGHT-SIZED: p95 read {read['p95']:,.1f} MB/s is between {OVER_SIZED_FRACTION:.0%} and "
                   f"{settings.throughput_fraction:.0%} of the {baseline:,.1f} MB/s baseline")
    if plan is not None:
        p = plan.plan
        delta = plan.monthly_cost_delta_usd
        cost = f"${p.monthly_cost_usd:,.2f}/month" + (
            f" ({'+' if delta >= 0 else '-'}${abs(delta):,.2f}/month against the deployed one)" if delta is not None else "")
        out.append(f"re-plan for {plan.required_mbps:,g} MB/s (p95 x {report['headroom']:g}): {p.deployment_type}"
                   f"{'/' + str(p.per_unit_storage_throughput) if p.per_unit_storage_throughput else ''} "
                   f"{p.storage_capacity_gib:,} GiB, {p.baseline_throughput_mbps:,.1f} MB/s baseline, {cost}")
        if plan.change == "in place":
            out.append(f"  grows in place from {sizing.storage_capacity_gib:,} GiB (FSx raises StorageCapacity "
                       "without replacing the file system)")
        elif plan.change == "no change":
            out.append("  the deployed file system is already the calculator's plan for this requirement")
        else:
            out.append("  NOT in place: a new file system (copy the data, then switch jobs to it); the guard says:")
            out += [f"    {line}" for line in plan.guard_lines]
        out.append(f"  same as: smddp-infra size {' '.join(plan.size_args)}")
    sys.stdout.write("\n".join(out) + "\n")
