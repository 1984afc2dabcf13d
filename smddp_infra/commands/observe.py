"""``smddp-infra observe``: what jobs really read, against the file system's baseline, and what to do.

The file system is any FSx for Lustre file system: ours (``--outputs cdk-outputs.json``: its
job document adds the declared dataset, the deployment types the calculator chose from, the
capacity cap and the monitoring settings), one named by id (``--file-system``), the one a
training job reads (``--job``: its ``FileSystemDataSource``) or the one a HyperPod cluster mounts
(``--cluster``: an instance group's ``FsxLustreConfig.DnsName``). Its type, tier, capacity,
storage class and throughput are read from ``DescribeFileSystems``; an id that does not exist is
one line naming it.

One window (``--since``/``--until``, or one ``--job``): read MB/s p50/p95/max, the free-capacity
trend, a verdict and, under- or over-sized, advice (:mod:`smddp_infra.observe.replan`): grow in
place first, replacements as alternatives. Two or more ``--job`` of different sizes: the guide's
scaling symptom (:mod:`smddp_infra.observe.scaling`).

Exit codes: 0 right-sized (or scaling not limited by the file system), 1 under- or over-sized,
the file system limits scaling, or no data, 2 bad input (one line). AWS is read through
:mod:`smddp_infra.account` only; ``--print-policy`` prints the actions it needs.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping, Optional

from smddp_infra.commands._output import print_json
from smddp_infra.errors import ConfigError

HELP = ("Compare what jobs read from an FSx for Lustre file system (CloudWatch) with its baseline: under-, right- "
        "or over-sized, growth in place first; with two jobs, whether the file system limits scaling.")

_FILE_SYSTEM_ID = re.compile(r"fs-[0-9a-f]{8,17}")
#: The reads observe makes (a subset of diagnose's policy: the same statements, filtered).
ACTIONS = ("cloudwatch:GetMetricData", "fsx:DescribeFileSystems", "sagemaker:DescribeCluster",
           "sagemaker:DescribeTrainingJob")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_argument_group("the file system (one of; --job alone uses the job's)")
    source.add_argument("--outputs", metavar="FILE", help="the cdk-outputs.json `cdk deploy --outputs-file` wrote")
    source.add_argument("--file-system", metavar="ID", help="any FSx for Lustre file system, e.g. fs-0123456789abcdef0")
    source.add_argument("--cluster", metavar="NAME", help="the file system a HyperPod cluster mounts (DescribeCluster)")
    parser.add_argument("--network", metavar="NAME", help="with --outputs: the network, when the file holds several")
    parser.add_argument("--stack", metavar="NAME", help="with --outputs: the stack, when several hold a network")
    window = parser.add_argument_group("window (default: the last 24 hours)")
    window.add_argument("--since", metavar="TIME", help="start, ISO 8601 (2026-11-01T00:00; UTC when no offset)")
    window.add_argument("--until", metavar="TIME", help="end, ISO 8601 (default: now)")
    window.add_argument("--job", metavar="TRAINING_JOB_NAME", action="append", default=[],
                        help="use this training job's start and end (DescribeTrainingJob); twice or more, jobs of "
                             "different sizes: does the file system limit scaling?")
    parser.add_argument("--headroom", metavar="FACTOR", default="1.25",
                        help="the re-plan's requirement is the observed p95 x this (default: 1.25)")
    parser.add_argument("--region", metavar="REGION", help="default: the network's region, else boto3's")
    parser.add_argument("--json", action="store_true", help="print the observation as JSON")
    parser.add_argument("--print-policy", action="store_true", help="print the IAM policy observe needs, and exit")


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


def policy_document() -> dict[str, Any]:
    """diagnose's read-only policy, kept to the actions observe calls."""
    from smddp_infra.diagnose.policy import policy_document as full

    doc = full()
    statements = []
    for statement in doc["Statement"]:
        actions = [a for a in statement["Action"] if a in ACTIONS]
        if actions:
            statements.append({**statement, "Action": actions})
    return {**doc, "Statement": statements}


def job_window(account: Any, name: str) -> tuple[datetime, datetime]:
    """The training job's start and end (now, when it is still running), read through the account room."""
    return _job(account, name).window


@dataclass(frozen=True)
class _Job:
    name: str
    record: Mapping[str, Any]
    window: tuple[datetime, datetime]

    @property
    def instances(self) -> int:
        count = (self.record.get("ResourceConfig") or {}).get("InstanceCount")
        return count if isinstance(count, int) and count > 0 else 1

    @property
    def file_systems(self) -> list[str]:
        from smddp_infra.diagnose.collect import job_file_systems

        return job_file_systems(self.record)


def _job(account: Any, name: str) -> _Job:
    from smddp_infra.account import training_job
    from smddp_infra.observe.during import job_window as window_of

    job = training_job(account, name, what=f"--job {name}")
    window = window_of(job, now=datetime.now(timezone.utc), period_seconds=1)
    if window is None:
        raise ConfigError(f"--job {name} has not started training yet (status {job.get('TrainingJobStatus')}): "
                          "nothing to observe")
    return _Job(name, job, window)


def _check(args: argparse.Namespace) -> None:
    sources = [flag for flag, value in (("--outputs", args.outputs), ("--file-system", args.file_system),
                                        ("--cluster", args.cluster)) if value]
    if len(sources) > 1:
        raise ConfigError(f"observe reads one file system: pass one of --outputs, --file-system or --cluster, got "
                          f"{', '.join(sources)}")
    if not sources and not args.job:
        raise ConfigError("observe needs the file system: --outputs FILE, --file-system ID, --cluster NAME or --job NAME")
    if args.file_system and not _FILE_SYSTEM_ID.fullmatch(args.file_system):
        raise ConfigError(f"--file-system must be an FSx id like fs-0123456789abcdef0, got {args.file_system!r}")
    if (args.network or args.stack) and not args.outputs:
        raise ConfigError("--network and --stack pick a network in --outputs FILE: pass them with --outputs")
    if args.job and (args.since or args.until):
        raise ConfigError("--job sets the window from the training job: pass it without --since/--until")
    if len(set(args.job)) != len(args.job):
        raise ConfigError(f"--job names the same job twice: {', '.join(args.job)}")


def run(args: argparse.Namespace) -> int:
    if args.print_policy:
        print_json(policy_document())
        return 0
    from smddp_infra.account import Account

    headroom = _headroom(args.headroom)
    _check(args)
    end = _time("--until", args.until) if args.until else datetime.now(timezone.utc)
    start = _time("--since", args.since) if args.since else end - timedelta(days=1)
    if start >= end:
        raise ConfigError(f"the window must end after it starts, got {start.isoformat()} .. {end.isoformat()}")
    window = (start, end)
    record = settings = None
    region = args.region
    file_system_id: Optional[str] = args.file_system
    label = None
    if args.outputs:
        from smddp_infra.contract import read_outputs_file, select_network

        network = select_network(read_outputs_file(args.outputs), network=args.network, stack=args.stack)
        doc = network.document
        if doc is None:
            raise ConfigError(f"{network.where} has no job document: pass --file-system {network.where}'s file system id")
        record, settings, label = doc.sizing, doc.monitoring, network.label
        region = region or doc.region
        file_system_id = doc.file_system.id
    account = Account(region=region, region_from="--region" if args.region else f"the region of --outputs {args.outputs}")
    jobs = [_job(account, name) for name in args.job]
    if args.cluster:
        file_system_id, what = _cluster_file_system(account, args.cluster), f"--cluster {args.cluster}"
    elif file_system_id is None:
        file_system_id, what = _jobs_file_system(jobs), f"--job {jobs[0].name}"
    else:
        what = "--outputs" if args.outputs else "--file-system"
        what = f"{what} {args.outputs if args.outputs else file_system_id}"
    from smddp_infra.account import file_system
    from smddp_infra.observe.during import default_settings
    from smddp_infra.sizing.growth import DeployedFileSystem

    fs = file_system(account, file_system_id, what=what)
    if fs.get("FileSystemType", "LUSTRE") != "LUSTRE":
        raise ConfigError(f"{what}: {file_system_id} is an FSx for {fs.get('FileSystemType')} file system; observe "
                          "reads FSx for Lustre")
    deployed = DeployedFileSystem.from_description(fs)
    settings = settings or default_settings(deployed.storage_capacity_gib)
    baseline = deployed.baseline_mbps or (record.baseline_throughput_mbps if record else None)
    if not baseline:
        raise ConfigError(f"{what}: file system {file_system_id} is {deployed.label}, whose baseline is not known "
                          "(not a tier in the FSx rule table)")
    context = _Context(account, file_system_id, fs, deployed, baseline, settings, record, headroom, label)
    if len(jobs) > 1:
        return _scaling(context, jobs, args.json)
    start, end = jobs[0].window if jobs else window
    return _window(context, start, end, jobs[0].name if jobs else None, args.json)


def _cluster_file_system(account: Any, name: str) -> str:
    from smddp_infra.account import file_system_by_dns
    from smddp_infra.diagnose.collect import cluster_network_ids, describe_cluster

    _, _, dns = cluster_network_ids(describe_cluster(account, name))
    names = list(dict.fromkeys(dns))
    if not names:
        raise ConfigError(f"--cluster {name} mounts no FSx for Lustre file system (no instance group has an "
                          "FsxLustreConfig): pass --file-system ID")
    if len(names) > 1:
        raise ConfigError(f"--cluster {name} mounts {len(names)} FSx file systems ({', '.join(names)}): pass the one to "
                          "observe with --file-system ID")
    return str(file_system_by_dns(account, names[0], what=f"--cluster {name}")["FileSystemId"])


def _jobs_file_system(jobs: list[_Job]) -> str:
    found = {job.name: job.file_systems for job in jobs}
    for name, ids in found.items():
        if not ids:
            raise ConfigError(f"--job {name} reads no FSx for Lustre file system (no FileSystemDataSource): pass "
                              "--file-system ID")
    distinct = {i for values in found.values() for i in values}
    if len(distinct) > 1:
        listed = ", ".join(f"{name}: {' '.join(v)}" for name, v in found.items())
        raise ConfigError(f"--job: the jobs read more than one file system ({listed}): pass the one to observe with "
                          "--file-system ID")
    return distinct.pop()


@dataclass(frozen=True)
class _Context:
    account: Any
    file_system_id: str
    description: Mapping[str, Any]
    deployed: Any
    baseline: float
    settings: Any
    record: Any
    headroom: float
    network: Optional[str]

    def header(self) -> dict[str, Any]:
        d = self.deployed
        lustre = self.description.get("LustreConfiguration") or {}
        return {"network": self.network, "fileSystemId": self.file_system_id,
                "fileSystem": {"label": d.label, "deploymentType": d.deployment_type, "storageType": d.storage_type,
                               "storageCapacityGiB": d.storage_capacity_gib,
                               "perUnitStorageThroughput": d.per_unit_storage_throughput, "efaEnabled": d.efa_enabled,
                               "throughputCapacityMBps": d.throughput_capacity_mbps, "baselineMBps": self.baseline,
                               "dnsName": self.description.get("DNSName"), "mountName": lustre.get("MountName")},
                "region": self.account.region, "deployed": self.record.to_json() if self.record else None}

    def advise(self, required: float, floor: float, *, grow: bool) -> Any:
        from smddp_infra.observe.replan import advise

        record = self.record
        return advise(self.deployed, self.file_system_id, required, floor_gib=floor, grow=grow,
                      deployment_types=record.chosen_from if record else (),
                      max_capacity_gib=record.max_capacity_gib if record else None)

    def first_line(self) -> str:
        planned = (f" (planned requirement {self.record.required_throughput_mbps:,g} MB/s)" if self.record else "")
        who = f"{self.network}: " if self.network else ""
        return f"{who}file system {self.file_system_id}, {self.deployed.label}, baseline {self.baseline:,.1f} MB/s{planned}"


def _window(c: _Context, start: datetime, end: datetime, job: Optional[str], as_json: bool) -> int:
    from smddp_infra.observe import during, metrics as m
    from smddp_infra.observe.replan import floor_gib

    settings = c.settings
    series = during.read_window(c.account, c.file_system_id, start, end, settings=settings)
    found = during.judge(series, c.baseline, settings=settings)
    period = settings.period_seconds
    write = m.summarize([m.mbps(v, period) for _, v in series["write"]])
    metadata = m.summarize([v / period for _, v in series["metadata"]])
    trend = m.capacity_trend(series["free"], settings.free_capacity_threshold_gib)
    declared = c.record.min_capacity_gib if c.record else 0.0
    capacity = c.deployed.storage_capacity_gib
    held = capacity - trend.min_gib if trend and capacity else None
    floor = floor_gib(capacity, trend.min_gib if trend else None, declared)
    advice = None
    if found.verdict in (m.Verdict.UNDER_SIZED, m.Verdict.OVER_SIZED) and found.read is not None:
        advice = c.advise(round(found.read.p95 * c.headroom, 1), floor, grow=found.verdict is m.Verdict.UNDER_SIZED)
    report = {
        **c.header(),
        "window": {"start": start.isoformat(), "end": end.isoformat(), "periodSeconds": period,
                   **({"job": job} if job else {})},
        "read": found.read.to_json() if found.read else None, "write": write.to_json() if write else None,
        "metadataOpsPerSecond": metadata.to_json() if metadata else None,
        "baselineUtilisation": found.utilisation,
        "freeCapacity": trend.to_json() if trend else None,
        "stored": {"heldGiB": held, "declaredGiB": declared, "floorGiB": floor},
        "verdict": found.verdict.value, "headroom": c.headroom,
        **_advice_json(advice),
    }
    if as_json:
        print_json(report, default=str)
    else:
        _print_window(c, report, found, advice)
    return 0 if found.verdict is m.Verdict.RIGHT_SIZED else 1


def _advice_json(advice: Any) -> dict[str, Any]:
    if advice is None:
        return {"requiredMBps": None, "headline": None, "alternatives": [], "inPlaceWhyNot": None, "alternativesWhyNot": None}
    doc = advice.to_json()
    return {key: doc[key] for key in ("requiredMBps", "headline", "alternatives", "inPlaceWhyNot", "alternativesWhyNot")}


def _print_window(c: _Context, report: dict[str, Any], found: Any, advice: Any) -> None:
    from smddp_infra.observe.metrics import OVER_SIZED_FRACTION, Verdict

    settings = c.settings
    w = report["window"]
    baseline = c.baseline
    out = [c.first_line(),
           f"window {w['start']} .. {w['end']}{' (job ' + w['job'] + ')' if 'job' in w else ''}, period {w['periodSeconds']} s"]
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
    stored = report["stored"]
    if c.deployed.storage_capacity_gib or stored["declaredGiB"]:
        parts = []
        if stored["heldGiB"] is not None:
            parts.append(f"holds {stored['heldGiB']:,.0f} GiB at most (capacity minus its least free capacity)")
        elif c.deployed.storage_capacity_gib:
            parts.append(f"no {settings.free_capacity_metric} datapoints: what it holds is not known, so the whole "
                         f"{c.deployed.storage_capacity_gib:,} GiB is assumed used")
        if stored["declaredGiB"]:
            parts.append(f"declared dataset {stored['declaredGiB']:,g} GiB")
        out.append(f"stored: {'; '.join(parts)}: a re-plan holds at least {stored['floorGiB']:,.0f} GiB")
    if found.verdict is Verdict.NOT_EVALUATED:
        out.append(f"verdict: NOT EVALUATED: no {settings.read_metric} datapoints for this file system in the window "
                   "(wrong window or region, or nothing read it)")
    elif found.verdict is Verdict.UNDER_SIZED:
        out.append(f"verdict: UNDER-SIZED: p95 read {read['p95']:,.1f} MB/s is at least {settings.throughput_fraction:.0%} "
                   f"of the {baseline:,.1f} MB/s baseline: the file system is the bottleneck")
    elif found.verdict is Verdict.OVER_SIZED:
        out.append(f"verdict: OVER-SIZED: p95 read {read['p95']:,.1f} MB/s is under {OVER_SIZED_FRACTION:.0%} of the "
                   f"{baseline:,.1f} MB/s baseline")
    else:
        out.append(f"verdict: RIGHT-SIZED: p95 read {read['p95']:,.1f} MB/s is between {OVER_SIZED_FRACTION:.0%} and "
                   f"{settings.throughput_fraction:.0%} of the {baseline:,.1f} MB/s baseline")
    if advice is not None:
        out += _advice_lines(advice, f"p95 x {c.headroom:g}")
    sys.stdout.write("\n".join(out) + "\n")


def _money(option: Any) -> str:
    if option.monthly_cost_usd is None:
        return "cost not known (no price for this tier)"
    delta = option.monthly_cost_delta_usd
    text = f"${option.monthly_cost_usd:,.2f}/month"
    if delta is not None:
        text += f" ({'+' if delta >= 0 else '-'}${abs(delta):,.2f}/month against the deployed one)"
    return text


def _advice_lines(advice: Any, basis: str) -> list[str]:
    from smddp_infra.observe.replan import IN_PLACE, NEW_WORDS

    holding = f", holding at least {advice.floor_gib:,.0f} GiB" if advice.floor_gib > 0 else ""
    out = [f"re-plan for {advice.required_mbps:,g} MB/s ({basis}){holding}:"]
    head = advice.headline
    if head is None:
        out.append(f"  headline: {advice.in_place_why_not}")
    elif head.change == IN_PLACE:
        out.append(f"  headline: grow in place to {head.label}, {head.baseline_mbps:,.1f} MB/s baseline, {_money(head)}; "
                   "the data stays (FSx grows it without replacing it)")
        out.append(f"    {' '.join(head.command)}")
    else:
        out.append(f"  headline: keep {head.label} as it is (FSx cannot shrink a file system; it already meets "
                   f"{advice.required_mbps:,g} MB/s)" if advice.in_place_why_not is None else f"  headline: {advice.in_place_why_not}")
    if advice.alternatives:
        out.append("  alternatives (each another type, tier or size):")
        for alt in advice.alternatives:
            out.append(f"    {alt.label}, {alt.baseline_mbps:,.1f} MB/s baseline, {_money(alt)}: {NEW_WORDS}")
            out.append(f"      same as: {' '.join(alt.command)}")
    elif advice.alternatives_why_not:
        out.append(f"  {advice.alternatives_why_not}")
    return out


def _scaling(c: _Context, jobs: list[_Job], as_json: bool) -> int:
    from smddp_infra.observe import during, scaling as sc
    from smddp_infra.observe.replan import floor_gib

    if len({job.instances for job in jobs}) < 2:
        raise ConfigError(f"--job: the scaling comparison needs jobs of different sizes, got {', '.join(args_of(jobs))}")
    reads = []
    free_min: Optional[float] = None
    for job in jobs:
        series = during.read_window(c.account, c.file_system_id, *job.window, settings=c.settings)
        reads.append(sc.JobReads(job.name, job.instances, job.window, during.judge(series, c.baseline, settings=c.settings)))
        lows = [v / 2**30 for _, v in series["free"]]
        if lows:
            free_min = min([*lows, free_min] if free_min is not None else lows)
    result = sc.compare(reads)
    declared = c.record.min_capacity_gib if c.record else 0.0
    floor = floor_gib(c.deployed.storage_capacity_gib, free_min, declared)
    advice = None
    if result.verdict == sc.LIMITS and result.demand_mbps is not None:
        advice = c.advise(round(result.demand_mbps * c.headroom, 1), floor, grow=True)
    report = {**c.header(), "jobs": [r.to_json() for r in sorted(reads, key=lambda r: r.instances)],
              "scaling": result.to_json(), "verdict": result.verdict, "headroom": c.headroom,
              "stored": {"declaredGiB": declared, "floorGiB": floor}, **_advice_json(advice)}
    if as_json:
        print_json(report, default=str)
    else:
        _print_scaling(c, result, reads, advice)
    return 0 if result.verdict in (sc.NOT_FS, sc.HOLDS) else 1


def args_of(jobs: list[_Job]) -> list[str]:
    return [f"{job.name} ({job.instances} instance(s))" for job in jobs]


def _print_scaling(c: _Context, result: Any, reads: list[Any], advice: Any) -> None:
    from smddp_infra.observe import scaling as sc

    out = [c.first_line()]
    for r in sorted(reads, key=lambda r: r.instances):
        t = r.throughput
        if t.read is None:
            out.append(f"job {r.name}: {r.instances} instance(s), {r.window[0].isoformat()} .. {r.window[1].isoformat()}: "
                       "no read datapoints")
            continue
        state = "AT the baseline" if t.at_baseline else "below the baseline"
        out.append(f"job {r.name}: {r.instances} instance(s), {r.window[0].isoformat()} .. {r.window[1].isoformat()}: read "
                   f"p50 {t.read.p50:,.1f} MB/s, p95 {t.read.p95:,.1f} MB/s ({t.utilisation:.0%} of the baseline, {state}); "
                   f"{r.per_instance_mbps:,.1f} MB/s per instance")
    s, large = result.smaller, result.larger
    if result.verdict == sc.NOT_EVALUATED:
        out.append("verdict: NOT EVALUATED: a job has no read datapoints for this file system during its run")
    else:
        change = (f"from {s.instances} to {large.instances} instances the read rate per instance went from "
                  f"{s.per_instance_mbps:,.1f} to {large.per_instance_mbps:,.1f} MB/s ({result.kept:.0%})")
        t = large.throughput
        if result.verdict == sc.LIMITS:
            out.append(f"verdict: FILE SYSTEM LIMITS SCALING: {change} while the file system sat at its baseline during "
                       f"{large.name} (p95 {t.read.p95:,.1f} MB/s, {t.utilisation:.0%} of {c.baseline:,.1f} MB/s): the "
                       "guide's case, scaling efficiency drops at the FSx for Lustre throughput limit")
        elif result.verdict == sc.NOT_FS:
            out.append(f"verdict: NOT THE FILE SYSTEM: {change}, but the file system had headroom during {large.name} "
                       f"(p95 {t.read.p95:,.1f} MB/s, {t.utilisation:.0%} of {c.baseline:,.1f} MB/s): look at the network "
                       f"and the input pipeline (smddp-infra diagnose --job {large.name})")
        else:
            out.append(f"verdict: SCALING HOLDS: {change}")
    if advice is not None:
        out += _advice_lines(advice, f"{s.per_instance_mbps:,.1f} MB/s per instance x {large.instances} instances x "
                                     f"{c.headroom:g}")
    sys.stdout.write("\n".join(out) + "\n")
