"""Read what diagnose judges from the account: a bounded, counted set of read-only calls.

One job's diagnosis (``--job``) makes at most :data:`MAX_CALLS_JOB` calls, whatever the
account holds: ``DescribeTrainingJob``; ``DescribeSubnets``, ``DescribeVpcs``,
``DescribeSecurityGroups``, ``DescribeRouteTables``, ``DescribeVpcEndpoints``,
``DescribeNetworkAcls`` (one each, filtered to the job's ids and VPCs, up to
:data:`NETWORK_PAGES` pages), and ``DescribeSubnets`` again for the interface endpoints' subnets
when they are not the job's; ``DescribeVpcAttribute`` twice per VPC (its DNS attributes); ``DescribeFileSystems`` and ``DescribeNetworkInterfaces`` (the file
system's groups: FSx does not report them) when the job reads FSx; ``FilterLogEvents`` for the
head and the tail of the job's log (:data:`LOG_PAGES` pages each); ``GetMetricData`` for the
file system's reads during the job (:data:`METRIC_PAGES` pages).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator, Mapping, Optional, Sequence

from smddp_infra.account import Account, AccountError, NotFoundError
from smddp_infra.diagnose.hyperpod import LIFECYCLE_STREAM_PREFIX
from smddp_infra.guardrails import TRAINING_LOG_GROUP
from smddp_infra.rules.live_loader import Compute, LiveNetwork

#: Events read from each end of the job's log (FilterLogEvents pages of up to this many events).
LOG_EVENTS_PER_PAGE = 1000
LOG_PAGES = 2
#: The tail window: the last minutes of the job's log, where end-of-epoch timeouts show.
TAIL_MINUTES = 30
#: Lines a job's instances write just after SageMaker records its end (the last flush) still count.
END_GRACE = timedelta(minutes=5)
NETWORK_PAGES = 2
#: VPCs whose DNS attributes are read (two DescribeVpcAttribute calls each): a job's subnets and groups share one.
MAX_DNS_VPCS = 2
METRIC_PAGES = 2
#: Calls of one --job diagnosis at most: 1 job + 7 network reads (the 7th: the endpoints' subnets) x pages + FSx 1 + ENIs 1 (one page each: at most
#: a few ids) + the log's head and tail x pages + metric pages.
MAX_CALLS_JOB = 1 + 7 * NETWORK_PAGES + 2 * MAX_DNS_VPCS + 2 + 2 * LOG_PAGES + METRIC_PAGES


@dataclass(frozen=True)
class LogEvent:
    timestamp: datetime
    stream: str
    message: str


def _ids(values: Any) -> list[str]:
    return [v for v in values or [] if isinstance(v, str)]


def describe_job(account: Account, name: str) -> Mapping[str, Any]:
    from smddp_infra.account import training_job

    try:
        return training_job(account, name, what=f"--job {name}")
    except NotFoundError as exc:
        raise NotFoundError(f"{exc} (a HyperPod cluster? use --cluster NAME)") from None


def describe_cluster(account: Account, name: str) -> Mapping[str, Any]:
    try:
        cluster: Mapping[str, Any] = account.call("sagemaker", "DescribeCluster", f"--cluster {name}", ClusterName=name)
    except NotFoundError:
        hint = ""
        try:
            account.call("sagemaker", "DescribeTrainingJob", f"--cluster {name}", TrainingJobName=name)
            hint = f": {name} is a training job (use --job {name})"
        except AccountError:
            pass
        raise NotFoundError(f"--cluster {name}: no HyperPod cluster of that name in {account.region}{hint}") from None
    return cluster


def read_network(account: Account, compute: Compute, *, group_ids: Sequence[str], subnet_ids: Sequence[str],
                 file_system_ids: Sequence[str], what: str) -> tuple[LiveNetwork, list[str]]:
    """The network around the compute: its groups, subnets, their VPCs, routes, endpoints, ACLs, file systems."""
    notes: list[str] = []
    file_systems: list[Mapping[str, Any]] = []
    fs_groups: dict[str, Optional[tuple[str, ...]]] = {}
    fs_subnets: list[str] = []
    if file_system_ids:
        file_systems = list(account.pages("fsx", "DescribeFileSystems", "FileSystems", what, max_pages=1,
                                          FileSystemIds=sorted(set(file_system_ids))))
        interfaces = {fs["FileSystemId"]: _ids(fs.get("NetworkInterfaceIds"))[:1] for fs in file_systems}
        wanted = sorted({i for ids in interfaces.values() for i in ids})
        groups_of: dict[str, tuple[str, ...]] = {}
        if wanted:
            try:
                for eni in account.pages("ec2", "DescribeNetworkInterfaces", "NetworkInterfaces", what,
                                         max_pages=1, NetworkInterfaceIds=wanted):
                    groups_of[eni["NetworkInterfaceId"]] = tuple(g["GroupId"] for g in eni.get("Groups") or [])
            except NotFoundError:
                pass
        for fs in file_systems:
            ids = interfaces.get(fs["FileSystemId"]) or []
            fs_groups[fs["FileSystemId"]] = groups_of.get(ids[0]) if ids else None
            if not ids or ids[0] not in groups_of:
                notes.append(f"the security groups of file system {fs['FileSystemId']} were not readable (FSx reports "
                             "them only on its network interfaces): SMDDP-FSX3/FSX4 not evaluated, nor FSX7/FSX8 (its clients)")
            fs_subnets += _ids(fs.get("SubnetIds"))
    all_groups = sorted(set(group_ids) | {g for gs in fs_groups.values() if gs for g in gs})
    all_subnets = sorted(set(subnet_ids) | set(fs_subnets))
    groups = list(account.pages("ec2", "DescribeSecurityGroups", "SecurityGroups", what, max_pages=NETWORK_PAGES,
                                GroupIds=all_groups)) if all_groups else []
    subnets = list(account.pages("ec2", "DescribeSubnets", "Subnets", what, max_pages=NETWORK_PAGES,
                                 SubnetIds=all_subnets)) if all_subnets else []
    vpc_ids = sorted({s["VpcId"] for s in subnets if s.get("VpcId")} | {g["VpcId"] for g in groups if g.get("VpcId")})
    vpcs: list[Mapping[str, Any]] = []
    tables: list[Mapping[str, Any]] = []
    endpoints: list[Mapping[str, Any]] = []
    acls: list[Mapping[str, Any]] = []
    if vpc_ids:
        vpc_filter = [{"Name": "vpc-id", "Values": vpc_ids}]
        vpcs = [_with_dns(account, vpc, what) if index < MAX_DNS_VPCS else vpc for index, vpc in
                enumerate(account.pages("ec2", "DescribeVpcs", "Vpcs", what, max_pages=NETWORK_PAGES, VpcIds=vpc_ids))]
        tables = list(account.pages("ec2", "DescribeRouteTables", "RouteTables", what, max_pages=NETWORK_PAGES, Filters=vpc_filter))
        endpoints = list(account.pages("ec2", "DescribeVpcEndpoints", "VpcEndpoints", what, max_pages=NETWORK_PAGES, Filters=vpc_filter))
        acls = list(account.pages("ec2", "DescribeNetworkAcls", "NetworkAcls", what, max_pages=NETWORK_PAGES, Filters=vpc_filter))
        subnets += _endpoint_subnets(account, endpoints, set(all_subnets), what, notes)
    network = LiveNetwork(compute=compute, security_groups=groups, subnets=subnets, vpcs=vpcs, route_tables=tables,
                          vpc_endpoints=endpoints, network_acls=acls, file_systems=file_systems, file_system_groups=fs_groups)
    return network, notes


def _endpoint_subnets(account: Account, endpoints: Sequence[Mapping[str, Any]], read: set[str], what: str,
                      notes: list[str]) -> list[Mapping[str, Any]]:
    """The subnets of interface endpoints not read yet (one DescribeSubnets): their CIDRs and network ACLs
    decide whether HTTPS from a training subnet reaches the endpoint (SMDDP-NET7/NET10)."""
    wanted = sorted({s for e in endpoints if e.get("VpcEndpointType") == "Interface" for s in _ids(e.get("SubnetIds"))} - read)
    if not wanted:
        return []
    try:
        return list(account.pages("ec2", "DescribeSubnets", "Subnets", what, max_pages=NETWORK_PAGES, SubnetIds=wanted))
    except NotFoundError:
        notes.append("the subnets of the VPC's interface endpoints were not readable: SMDDP-NET7/NET10 (HTTPS to the "
                     "endpoints through network ACLs) not evaluated")
        return []


def _with_dns(account: Account, vpc: Mapping[str, Any], what: str) -> Mapping[str, Any]:
    """The VPC with its DNS attributes (``DescribeVpcAttribute``, one call each: DescribeVpcs does not
    report them), as the template's ``EnableDnsSupport`` / ``EnableDnsHostnames`` (SMDDP-NET8)."""
    out = dict(vpc)
    for attribute, key in (("enableDnsSupport", "EnableDnsSupport"), ("enableDnsHostnames", "EnableDnsHostnames")):
        answer = account.call("ec2", "DescribeVpcAttribute", what, VpcId=vpc["VpcId"], Attribute=attribute)
        value = (answer.get(key) or {}).get("Value")
        if isinstance(value, bool):
            out[key] = value
    return out


def job_file_systems(job: Mapping[str, Any]) -> list[str]:
    out = []
    for channel in job.get("InputDataConfig") or []:
        source = (channel.get("DataSource") or {}).get("FileSystemDataSource") or {}
        if source.get("FileSystemType") == "FSxLustre" and isinstance(source.get("FileSystemId"), str):
            out.append(source["FileSystemId"])
    return out


def cluster_network_ids(cluster: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """(group ids, subnet ids, FSx DNS names) a HyperPod cluster uses."""
    groups = _ids((cluster.get("VpcConfig") or {}).get("SecurityGroupIds"))
    subnets = _ids((cluster.get("VpcConfig") or {}).get("Subnets"))
    dns: list[str] = []
    for group in cluster.get("InstanceGroups") or []:
        override = group.get("OverrideVpcConfig") or {}
        groups += _ids(override.get("SecurityGroupIds"))
        subnets += _ids(override.get("Subnets"))
        for storage in group.get("InstanceStorageConfigs") or []:
            name = (storage.get("FsxLustreConfig") or {}).get("DnsName")
            if isinstance(name, str):
                dns.append(name)
    return groups, subnets, dns


#: Nodes listed (ListClusterNodes pages of up to 100) and failed nodes described (DescribeClusterNode) at most.
NODE_PAGES = 5
MAX_NODE_DETAILS = 10


def read_cluster_nodes(account: Account, cluster: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every node (ListClusterNodes, paginated), a failed one with DescribeClusterNode's details."""
    name = str(cluster.get("ClusterName"))
    what = f"--cluster {name}"
    nodes: list[Mapping[str, Any]] = list(account.pages("sagemaker", "ListClusterNodes", "ClusterNodeSummaries", what,
                                                        max_pages=NODE_PAGES, ClusterName=name, MaxResults=100))
    out: list[Mapping[str, Any]] = []
    described = 0
    for node in nodes:
        if (node.get("InstanceStatus") or {}).get("Status") == "Failure" and described < MAX_NODE_DETAILS:
            described += 1
            details = account.call("sagemaker", "DescribeClusterNode", what, ClusterName=name,
                                   NodeId=node["InstanceId"]).get("NodeDetails") or {}
            node = {**node, **details}
        out.append(node)
    return out


def read_cluster_logs(account: Account, cluster: Mapping[str, Any], group: str) -> tuple[Optional[list[LogEvent]], Optional[str]]:
    """The lifecycle-script streams of the cluster's log group (bounded FilterLogEvents); None when it does not exist."""
    try:
        return list(_log_events(account, f"--cluster {cluster.get('ClusterName')}", group, LIFECYCLE_STREAM_PREFIX)), None
    except NotFoundError:
        return None, (f"lifecycle logs: no log group {group} in {account.region} yet (the nodes have not written one): "
                      "lifecycle-script and FSx mount failures not evaluated")


def _log_events(account: Account, what: str, group: str, prefix: str, **window: Any) -> Iterator[LogEvent]:
    """The events of ``group``'s streams named ``prefix...`` (FilterLogEvents, :data:`LOG_PAGES` pages); a
    stream outside the prefix is skipped (a prefix the service did not apply: moto 5.2.5 ignores it)."""
    for event in account.pages("logs", "FilterLogEvents", "events", what, max_pages=LOG_PAGES, logGroupName=group,
                               logStreamNamePrefix=prefix, limit=LOG_EVENTS_PER_PAGE, **window):
        stream = str(event.get("logStreamName", ""))
        if stream.startswith(prefix):
            stamp = datetime.fromtimestamp(int(event.get("timestamp", 0)) / 1000, timezone.utc)
            yield LogEvent(stamp, stream, str(event.get("message", "")).rstrip())


def read_logs(account: Account, job: Mapping[str, Any], *, now: datetime) -> tuple[Optional[list[LogEvent]], Optional[str]]:
    """The head and the tail of the job's log (bounded FilterLogEvents); newest first."""
    name = str(job.get("TrainingJobName"))
    start = job.get("TrainingStartTime") or job.get("CreationTime")
    ended = job.get("TrainingEndTime")
    end: datetime = ended + END_GRACE if isinstance(ended, datetime) else now
    if not isinstance(start, datetime):
        return None, "the job has not started: no log to read"
    events: dict[LogEvent, None] = {}  # the head and the tail window overlap; kept in the order read
    windows = [(start, end)]
    if end - start > timedelta(minutes=TAIL_MINUTES):
        windows.append((end - timedelta(minutes=TAIL_MINUTES), end))
    try:
        for low, high in windows:
            read = _log_events(account, f"--job {name}", TRAINING_LOG_GROUP, f"{name}/", startTime=_ms(low),
                               endTime=_ms(high) + 1000)
            events.update(dict.fromkeys(read))
    except NotFoundError:
        return [], f"no log group {TRAINING_LOG_GROUP} (or no stream for {name}) in {account.region}"
    return sorted(events, key=lambda e: e.timestamp, reverse=True), None


def _ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)
