"""Why a HyperPod cluster or its nodes failed: DescribeCluster, the nodes and the lifecycle logs.

Pure: the inputs are what :mod:`.collect` read (the ``DescribeCluster`` answer, the nodes of
``ListClusterNodes`` / ``DescribeClusterNode``, the lifecycle-script log events) and the network
findings of the same rules ``check`` runs. Each failure is ONE error finding naming the instance
group (and the node where known), the cause and the fix:

* **capacity**: EC2 had no capacity for the group's type in its AZ (``InsufficientInstanceCapacity``,
  "insufficient capacity"): another AZ ID, a training plan, fewer instances;
* **quota**: ``ResourceLimitExceeded``: the quota by its name, raised in Service Quotas;
* **lifecycle script**: a node whose lifecycle script failed: the script, the group and the
  failing log line, quoted;
* **FSx mount**: a lifecycle log line that shows a Lustre mount failing. When the network shows
  its cause (SMDDP-FSX7/FSX8, NET6, NET9, NET7, NET8) the cause's finding carries the line as evidence
  and the mount is not reported a second time;
* **deep health check**: a node that failed one (named with the check);
* anything else a failed cluster or node says is quoted as it is (one finding, never dropped);
* **addresses** (:func:`address_items`, any cluster): the next scale-up against its subnets' free addresses.

Logs (SageMaker Developer Guide, HyperPod; REFERENCE section 11): group
``/aws/sagemaker/Clusters/<cluster-name>/<cluster-id>``, streams
``LifecycleConfig/<instance-group-name>/<instance-id>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Mapping, Optional, Sequence

from smddp_infra.diagnose.report import Item
from smddp_infra.diagnose.symptoms import MOUNT_CAUSES

LOG_GROUP_PREFIX = "/aws/sagemaker/Clusters"
LIFECYCLE_STREAM_PREFIX = "LifecycleConfig/"

_CAPACITY = re.compile(r"InsufficientInstanceCapacity|insufficient capacity|not have sufficient capacity|"
                       r"InsufficientCapacity|capacity is not available", re.I)
_QUOTA = re.compile(r"ResourceLimitExceeded|service limit|quota", re.I)
_QUOTA_NAME = re.compile(r"(?:limit|quota)\s+'([^']+)'|'([^']+ for cluster usage)'", re.I)
_HEALTH = re.compile(r"deep health ?checks?|DeepHealthCheck|InstanceStress|InstanceConnectivity|"
                     r"health[ -]?checks?\b[^\n]*\bfail|fail[^\n]*\bhealth[ -]?checks?", re.I)
#: A health check that exercises EFA between nodes: InstanceConnectivity (NCCL over EFA), or one the message calls EFA's.
_EFA_CHECK = re.compile(r"InstanceConnectivity|\bEFA\b", re.I)
#: ``mount -t lustre <dns>@tcp:/<mount name> <path>``: how a lifecycle script (or mount.lustre's error) names the file system.
_LUSTRE_TARGET = re.compile(r"([a-z0-9][a-z0-9.-]*\.fsx\.[a-z0-9-]+\.amazonaws\.com(?:\.cn)?)@tcp\d*:/?([A-Za-z0-9]*)", re.I)
_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")
_LIFECYCLE = re.compile(r"lifecycle|life cycle|on_create|OnCreate", re.I)
_MOUNT = re.compile(r"mount(?:\.lustre)?\b[^\n]*(?:fail|error|timed out|timeout|refused|No route)|"
                    r"\blustre\b[^\n]*(?:fail|error|timed out)|LNetError|fsx[^\n]*(?:fail|timed out)", re.I)
_ERROR_LINE = re.compile(r"\b(?:error|failed|failure|fatal|exit (?:code|status) [1-9]|returned non-zero|"
                         r"No such file|Permission denied|Traceback|command not found)\b", re.I)


def log_group(cluster: Mapping[str, Any]) -> str:
    """``/aws/sagemaker/Clusters/<name>/<id>``: the id is the last part of the cluster's ARN."""
    arn = str(cluster.get("ClusterArn", ""))
    return f"{LOG_GROUP_PREFIX}/{cluster.get('ClusterName')}/{arn.rsplit('/', 1)[-1]}"


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _groups(cluster: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(g.get("InstanceGroupName")): g for g in cluster.get("InstanceGroups") or [] if isinstance(g, Mapping)}


def _group_in(text: str, groups: Mapping[str, Mapping[str, Any]]) -> Optional[str]:
    """The instance group a cluster-level message names (by its name, else by its instance type)."""
    for name in sorted(groups, key=len, reverse=True):
        if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
            return name
    typed = [name for name, g in groups.items() if g.get("InstanceType") and str(g["InstanceType"]) in text]
    return typed[0] if len(typed) == 1 else None


def _where(group: Optional[str], node: Optional[str], cluster: str) -> str:
    if group and node:
        return f"instance group {group}, node {node}"
    return f"instance group {group}" if group else f"cluster {cluster}"


@dataclass(frozen=True)
class _Cluster:
    """What a finding's fix is written from: the cluster as DescribeCluster answers it and the subnets read."""

    name: str
    region: str
    groups: Mapping[str, Mapping[str, Any]]
    vpc_config: Mapping[str, Any]
    subnets: Mapping[str, Mapping[str, Any]]  # subnet id -> DescribeSubnets item

    def subnets_of(self, group: str) -> list[str]:
        """The subnets the group's instances launch in: its OverrideVpcConfig's, else the cluster's."""
        override = self.groups.get(group, {}).get("OverrideVpcConfig") or {}
        return [s for s in (override.get("Subnets") or self.vpc_config.get("Subnets") or []) if isinstance(s, str)]

    def zones_of(self, group: str) -> list[tuple[str, str]]:
        """(AZ name, AZ ID) of the group's subnets, as read (capacity is per AZ; AZ IDs name it across accounts)."""
        read = [self.subnets[s] for s in self.subnets_of(group) if s in self.subnets]
        return sorted({(str(s.get("AvailabilityZone", "")), str(s.get("AvailabilityZoneId", ""))) for s in read})

    def short(self) -> list[str]:
        """Groups below their target (DescribeCluster ``CurrentCount`` < ``TargetCount``): where capacity ran out."""
        return [n for n, g in self.groups.items() if isinstance(g.get("CurrentCount"), int)
                and isinstance(g.get("TargetCount"), int) and g["CurrentCount"] < g["TargetCount"]]

    def instance_type(self, group: Optional[str]) -> Optional[str]:
        if group:
            itype = self.groups.get(group, {}).get("InstanceType")
            return str(itype) if itype else None
        types = {str(g.get("InstanceType")) for g in self.groups.values() if g.get("InstanceType")}
        return types.pop() if len(types) == 1 else None


def _count(group: Mapping[str, Any]) -> Optional[int]:
    for key in ("TargetCount", "InstanceCount", "CurrentCount"):
        if isinstance(group.get(key), int) and not isinstance(group.get(key), bool):
            return int(group[key])
    return None


def _capacity_items(text: str, group: Optional[str], node: Optional[str], c: _Cluster) -> list[Item]:
    """One error per group short of capacity: the group named by the message, else each group below its
    target (DescribeCluster), with its type, AZ and commands that run as printed."""
    quoted = f'"{_clip(text)}"'
    named = [group] if group else c.short()
    if not named:  # nothing says which group: the cluster, and what it asked for
        itype = c.instance_type(None)
        what = f"for {itype}" if itype else "for the instances it asked for"
        return [Item("HP-CAPACITY", "error", c.name, f"{_where(None, node, c.name)}: EC2 has no capacity {what}: {quoted}; "
                     "no instance group is below its target count, so which one is short is not known", "cluster", None,
                     "place the short group in a subnet of another AZ ID (OverrideVpcConfig.Subnets), reserve its capacity "
                     "with a SageMaker training plan (TrainingPlanArn), or ask for fewer instances",
                     f"aws sagemaker describe-cluster --region {c.region} --cluster-name {c.name} --query "
                     "\"InstanceGroups[].[InstanceGroupName,InstanceType,CurrentCount,TargetCount]\" --output text")]
    items = []
    for name in named:
        spec = c.groups.get(name, {})
        itype = c.instance_type(name)
        count = _count(spec)
        zones = c.zones_of(name)
        az = " and ".join(f"{n} ({i})" if i else n for n, i in zones)
        in_az = f" in {az}" if az else " in the Availability Zone of its subnets"
        running = (f" ({spec['CurrentCount']} of {spec['TargetCount']} running)"
                   if isinstance(spec.get("CurrentCount"), int) and isinstance(spec.get("TargetCount"), int) else "")
        sharing = sorted(n for n, g in c.groups.items() if n != name and itype and g.get("InstanceType") == itype)
        shared = f"; {', '.join(sharing)} also run{'s' if len(sharing) == 1 else ''} {itype} and draw on the same capacity" if sharing else ""
        ids = [i for _, i in zones if i]
        console = (f"place {name} in a subnet of another AZ ID{' than ' + ', '.join(ids) if ids else ''} (its "
                   f"OverrideVpcConfig.Subnets), reserve {count or 'its'} {itype or 'instances'} with a SageMaker training "
                   f"plan (the TrainingPlanArn of {name}), or lower the InstanceCount of {name}{shared}")
        commands = []
        if itype and count:
            commands.append(f"aws sagemaker search-training-plan-offerings --region {c.region} --instance-type {itype} "
                            f"--instance-count {count} --target-resources hyperpod-cluster")
        vpcs = sorted({str(c.subnets[s].get("VpcId")) for s in c.subnets_of(name) if s in c.subnets and c.subnets[s].get("VpcId")})
        if vpcs and ids:
            others = " && ".join(f"AvailabilityZoneId!='{i}'" for i in ids)
            commands.append(f"aws ec2 describe-subnets --region {c.region} --filters Name=vpc-id,Values={','.join(vpcs)} "
                            f"--query \"Subnets[?{others}].[SubnetId,AvailabilityZone,AvailabilityZoneId]\" --output text")
        items.append(Item("HP-CAPACITY", "error", c.name,
                          f"{_where(name, node, c.name)}{running}: EC2 has no capacity for {itype or 'its instance type'}{in_az}"
                          f"{shared}: {quoted}", "cluster", None, console,
                          " ; ".join(commands) or None))
    return items


_QUOTA_USE = re.compile(r"current utilization of (\d+)[^\n]*?request delta of (\d+)", re.I)


def _classify(text: str, group: Optional[str], node: Optional[str], c: _Cluster) -> list[Item]:
    """The error finding(s) for one failure message (FailureMessage or a node's InstanceStatus.Message)."""
    where = _where(group, node, c.name)
    spec = c.groups.get(group or "", {})
    itype = c.instance_type(group)
    quoted = f'"{_clip(text)}"'
    if _QUOTA.search(text):
        match = _QUOTA_NAME.search(text)
        quota = next((g for g in match.groups() if g), None) if match else None
        quota = quota or (f"{itype} for cluster usage" if itype else None)
        use = _QUOTA_USE.search(text)
        wanted = int(use.group(1)) + int(use.group(2)) if use else sum(
            _count(g) or 0 for g in c.groups.values() if itype and g.get("InstanceType") == itype) or None
        cli = None
        if quota and wanted:
            code = (f"$(aws service-quotas list-service-quotas --region {c.region} --service-code sagemaker --query "
                    f"\"Quotas[?QuotaName=='{quota}'].QuotaCode\" --output text)")
            cli = (f"aws service-quotas request-service-quota-increase --region {c.region} --service-code sagemaker "
                   f"--quota-code {code} --desired-value {wanted}")
        quota_text = f"the quota '{quota}'" if quota else "the SageMaker quota the message names"
        lower = f"lower the InstanceCount of {group}" if group else "lower the instance counts"
        return [Item("HP-QUOTA", "error", c.name,
                     f"{where}: the account's quota is exceeded (ResourceLimitExceeded): {quoted}",
                     "cluster", None, f"Service Quotas console > Amazon SageMaker > {quota_text} > Request increase at "
                     f"account level{' to ' + str(wanted) if wanted else ''} (or {lower})", cli)]
    if _CAPACITY.search(text):
        return _capacity_items(text, group, node, c)
    if _HEALTH.search(text):
        check = _check_of(text, spec)
        replace_cli = (f"aws sagemaker batch-replace-cluster-nodes --region {c.region} --cluster-name {c.name} --node-ids {node}"
                       if node else None)
        return [Item("HP-HEALTH-CHECK", "error", c.name,
                     f"{where}: the node failed the deep health check {check}: {quoted}", "cluster", None,
                     f"replace the node (or let node recovery replace it) and check its hardware; the check's own log is in "
                     f"{c.name}'s log group", replace_cli)]
    if _LIFECYCLE.search(text):
        return [_lifecycle_item(text, None, where, spec, c)]
    return [Item("HP-FAILED", "error", c.name, f"{where} failed: {quoted}", "cluster", None, None, None)]


def _check_of(text: str, spec: Mapping[str, Any]) -> str:
    """The deep health check a message names (else the group's configured checks, else EFA's, when it says EFA)."""
    checks = [c for c in _HEALTH_CHECKS if c.lower() in text.lower()] or list(spec.get("OnStartDeepHealthChecks") or [])
    if not checks and re.search(r"\bEFA\b", text):
        return "InstanceConnectivity (EFA)"
    return " and ".join(checks) or "named in the message"


def _lifecycle_item(text: str, line: Optional[str], where: str, spec: Mapping[str, Any], c: _Cluster) -> Item:
    config = spec.get("LifeCycleConfig") or {}
    source = str(config.get("SourceS3Uri", "")).rstrip("/")
    entry = config.get("OnCreate") or config.get("OnInitComplete")
    script = f"{source}/{entry}" if source and entry else (f"in {source}" if source else "(its LifeCycleConfig is not read)")
    failing = f"; the failing line of its log: \"{_clip(line)}\"" if line else "; its log shows no failing line"
    return Item("HP-LIFECYCLE", "error", c.name,
                f"{where}: the lifecycle script {script} failed: \"{_clip(text)}\"{failing}", "cluster", None,
                "fix the script (run it by hand on a node: it must exit 0), upload it, and re-run the lifecycle scripts",
                f"aws sagemaker update-cluster-software --region {c.region} --cluster-name {c.name}")


def _streams(events: Sequence[Any]) -> dict[tuple[str, str], list[Any]]:
    """(group, instance) -> its lifecycle events, oldest first."""
    out: dict[tuple[str, str], list[Any]] = {}
    for event in sorted(events, key=lambda e: e.timestamp):
        parts = str(event.stream).split("/")
        if len(parts) >= 3 and parts[0] + "/" == LIFECYCLE_STREAM_PREFIX:
            out.setdefault((parts[1], parts[-1]), []).append(event)
    return out


def _failing_line(events: Sequence[Any]) -> Optional[str]:
    errors = [e.message for e in events if _ERROR_LINE.search(e.message)]
    return errors[-1] if errors else None


def logged_mounts(events: Optional[Sequence[Any]]) -> dict[str, list[tuple[str, str]]]:
    """Instance group -> the (DNS name, mount name) its lifecycle logs mount: the evidence that the group
    mounts a file system when its ``InstanceStorageConfigs`` does not say (a script reading
    provisioning_parameters.json mounts it itself)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for (group, _instance), lines in _streams(events or []).items():
        for event in lines:
            for dns, mount_name in _LUSTRE_TARGET.findall(event.message):
                if (dns.lower(), mount_name) not in out.setdefault(group, []):
                    out[group].append((dns.lower(), mount_name))
    return out


def with_logged_mounts(cluster: Mapping[str, Any], mounts: Mapping[str, Sequence[tuple[str, str]]]) -> Mapping[str, Any]:
    """The cluster with each group's logged mounts written as the ``FsxLustreConfig`` they amount to, so
    the rules (SMDDP-FSX7/FSX8) judge the group as a named client of that file system."""
    if not mounts:
        return cluster
    groups = []
    for group in cluster.get("InstanceGroups") or []:
        if not isinstance(group, Mapping):
            continue
        configs = [dict(c) for c in group.get("InstanceStorageConfigs") or [] if isinstance(c, Mapping)]
        known = {str((c.get("FsxLustreConfig") or {}).get("DnsName", "")).lower() for c in configs}
        configs += [{"FsxLustreConfig": {"DnsName": dns, "MountName": mount_name}}
                    for dns, mount_name in mounts.get(str(group.get("InstanceGroupName")), []) if dns not in known]
        groups.append({**group, "InstanceStorageConfigs": configs} if configs else dict(group))
    return {**cluster, "InstanceGroups": groups}


def cluster_items(cluster: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]], events: Optional[Sequence[Any]],
                  network: list[Item], *, region: str, subnets: Mapping[str, Mapping[str, Any]] = {},
                  file_systems: Mapping[str, Mapping[str, Any]] = {}) -> tuple[list[Item], list[Item]]:
    """(the network findings, with the failures they explain joined in as evidence; the cluster's other failures).

    ``subnets``: subnet id -> DescribeSubnets item (the groups' AZs); ``file_systems``: DNS name (lower
    case) -> the file system of that name found in the account."""
    name = str(cluster.get("ClusterName"))
    c = _Cluster(name, region, _groups(cluster), cluster.get("VpcConfig") or {}, subnets)
    streams = _streams(events or [])
    items: list[Item] = []
    health: list[tuple[str, Optional[str], str, Item]] = []  # (group, node, the check, its finding)
    mounts: list[tuple[str, str, str]] = []  # (group, instance, line)
    for (group, instance), lines in streams.items():
        mount = next((e.message for e in reversed(lines) if _MOUNT.search(e.message)), None)
        if mount:
            mounts.append((group, instance, mount))
    mounted = {(g, i) for g, i, _ in mounts}
    for node in nodes:
        status = node.get("InstanceStatus") or {}
        if status.get("Status") != "Failure":
            continue
        group, instance = str(node.get("InstanceGroupName")), str(node.get("InstanceId"))
        if (group, instance) in mounted:
            continue  # its lifecycle log shows the mount failing: reported once, below
        message = str(status.get("Message") or "")
        lines = streams.get((group, instance), [])
        if _LIFECYCLE.search(message) or (lines and not _CAPACITY.search(message) and not _QUOTA.search(message)
                                          and not _HEALTH.search(message)):
            items.append(_lifecycle_item(message or "status Failure", _failing_line(lines), _where(group, instance, name),
                                         c.groups.get(group, {}), c))
        else:
            found = _classify(message or "status Failure (no message)", group, instance, c)
            health += [(group, instance, message, i) for i in found if i.rule_id == "HP-HEALTH-CHECK"]
            items += found
    failure = str(cluster.get("FailureMessage") or "")
    if cluster.get("ClusterStatus") in ("Failed", "RollingBack") or failure:
        if failure and not any(i.message.endswith(f'"{_clip(failure)}"') for i in items):
            covered = {i.rule_id for i in items}
            named = _group_in(failure, c.groups) or (next(iter(c.groups)) if len(c.groups) == 1 else None)
            found = _classify(failure, named, None, c)
            lifecycle_is_mount = found[0].rule_id == "HP-LIFECYCLE" and bool(mounts)  # the mount below is that failure
            if (found[0].rule_id not in covered or found[0].rule_id == "HP-FAILED") and not lifecycle_is_mount:
                if named:
                    health += [(named, None, failure, i) for i in found if i.rule_id == "HP-HEALTH-CHECK"]
                items += found
        elif not failure and not items:
            items.append(Item("HP-FAILED", "error", name, f"the cluster is {cluster.get('ClusterStatus')} and gives no "
                              "FailureMessage; no node reports a failure", "cluster"))
    joined = list(network)
    for group, node_id, text, item in health:
        joined, absorbed = _join_health(joined, group, node_id, text, c)
        if absorbed:
            items.remove(item)
    joined, unexplained = _join_mounts(joined, mounts, c, file_systems)
    return joined, items + unexplained


def _join_health(network: list[Item], group: str, node: Optional[str], text: str, c: _Cluster) -> tuple[list[Item], bool]:
    """An EFA health check failed on ``group``, which carries groups without the EFA self rules
    (SMDDP-SG1/SG2 name it): the missing rule is the failure's cause, ONE error naming both."""
    if not _EFA_CHECK.search(text):
        return network, False
    label = f"HyperPod instance group {group} of {c.name}"
    causes = [i for i in network if i.rule_id in ("SMDDP-SG1", "SMDDP-SG2") and i.severity == "error"
              and re.search(rf"{re.escape(label)}(?![\w-])", i.message)]
    if not causes:
        return network, False
    check = _check_of(text, c.groups.get(group, {}))
    seen = f"{_where(group, node, c.name)} failed the deep health check {check}: \"{_clip(text)}\""
    return [replace(i, message=f"{seen}; the cause: {i.message}", evidence=(*i.evidence, seen)) if i in causes else i
            for i in network], True


def _join_mounts(network: list[Item], mounts: Sequence[tuple[str, str, str]], c: _Cluster,
                 file_systems: Mapping[str, Mapping[str, Any]]) -> tuple[list[Item], list[Item]]:
    """Each failed mount joined to the finding that explains it (the file system's, when its log names
    it), else ONE error with what was and was not judged."""
    joined, items = list(network), []
    for group, instance, line in mounts:
        names = [(dns, fs) for dns, _ in _LUSTRE_TARGET.findall(line) for fs in [file_systems.get(dns.lower())]]
        fs_ids = {str(fs["FileSystemId"]) for _, fs in names if fs}
        causes = [i for i in joined if i.rule_id in MOUNT_CAUSES and i.severity in ("error", "warning")]
        own = [i for i in causes if i.resource in fs_ids]
        evidence = f"instance group {group}, node {instance}: its lifecycle log shows the mount failing: \"{_clip(line)}\""
        if own or causes:
            joined = [replace(i, evidence=(*i.evidence, evidence)) if i in (own or causes) else i for i in joined]
            continue
        missing = [dns for dns, fs in names if fs is None]
        where = (f"no file system with DNS name {', '.join(missing)} in this account and {c.region}: its groups are not judged"
                 if missing else "no network finding explains it (the rules that would: " + ", ".join(MOUNT_CAUSES) + ")")
        carried = (c.groups.get(group, {}).get("OverrideVpcConfig") or c.vpc_config).get("SecurityGroupIds") or []
        clients = ", ".join(str(g) for g in carried) or f"the groups of instance group {group}"
        target = ", ".join(sorted(fs_ids)) or (", ".join(dns for dns, _ in names) or "the file system it mounts")
        items.append(Item("HP-FSX-MOUNT", "error", c.name,
                          f"{_where(group, instance, c.name)}: the lifecycle script's FSx for Lustre mount failed: "
                          f"\"{_clip(line)}\"; {where}", "cluster", None,
                          f"check that the security groups of {target} admit {clients} on TCP 988 and 1018-1023, that the "
                          f"subnets' network ACLs pass them and that the VPC resolves DNS; then re-run the lifecycle scripts",
                          f"aws sagemaker update-cluster-software --region {c.region} --cluster-name {c.name}"))
    return joined, items


def _group_types(group: Mapping[str, Any]) -> list[str]:
    """The group's instance types: ``InstanceType``, or a flexible group's current and desired types."""
    if group.get("InstanceType"):
        return [str(group["InstanceType"])]
    wanted = group.get("InstanceRequirements") or {}
    return sorted({str(t) for key in ("CurrentInstanceTypes", "DesiredInstanceTypes") for t in wanted.get(key) or []})


def _per_node(group: Mapping[str, Any], orchestrator: str) -> Optional[tuple[str, int, int, bool]]:
    """(type, addresses a node takes, of which its interfaces', unconfirmed) for the group's most demanding
    type (:func:`smddp_infra.facts.addresses.addresses_per_node`). The interfaces' addresses are certain;
    on EKS the rest is the VPC CNI's warm pool, which its settings change (prefix delegation, WARM_IP_TARGET)."""
    from smddp_infra.facts.addresses import addresses_per_node

    interface = "efa-only" if (group.get("NetworkInterface") or {}).get("InterfaceType") == "efa-only" else "efa"
    figures = [(t, addresses_per_node(t, orchestrator=orchestrator, interface=interface),
                addresses_per_node(t, orchestrator="slurm", interface=interface)) for t in _group_types(group)]
    if not figures:
        return None
    itype, planned, interfaces = max(figures, key=lambda f: f[1].addresses)
    return itype, planned.addresses, interfaces.addresses, planned.unconfirmed


def address_items(cluster: Mapping[str, Any], subnets: Mapping[str, Mapping[str, Any]], *,
                  region: str) -> tuple[list[Item], list[str]]:
    """(findings, not-evaluated notes): will the next scale-up fit the free addresses of its subnets?

    A group's next scale-up is ``TargetCount - CurrentCount`` nodes (DescribeCluster), each taking the
    addresses of :mod:`smddp_infra.facts.addresses` in the group's subnets (its ``OverrideVpcConfig``, else
    the cluster's), whose free addresses are DescribeSubnets' ``AvailableIpAddressCount``. Groups in the same
    subnets add up. A warning when the planned figure does not fit (on EKS it includes the VPC CNI's default
    warm pool); an error only when the nodes' own interfaces alone do not fit: the target is certainly above
    what the subnets hold."""
    name = str(cluster.get("ClusterName"))
    c = _Cluster(name, region, _groups(cluster), cluster.get("VpcConfig") or {}, subnets)
    orchestrator = "eks" if (cluster.get("Orchestrator") or {}).get("Eks") else "slurm"
    notes: list[str] = []
    if (cluster.get("AutoScaling") or {}).get("Mode") == "Enable":
        notes.append(f"HP-ADDRESSES: {name} autoscales (Karpenter): a group may grow past its TargetCount to its NodePool's "
                     "limit, which DescribeCluster does not return; the subnets' room is judged for TargetCount only")
    pending: dict[tuple[str, ...], list[tuple[str, int, tuple[str, int, int, bool], int, int]]] = {}
    for group_name, group in c.groups.items():
        current, target = group.get("CurrentCount"), group.get("TargetCount")
        if not isinstance(current, int) or not isinstance(target, int):
            notes.append(f"HP-ADDRESSES: instance group {group_name} gives no CurrentCount or TargetCount: its next scale-up is not known")
            continue
        figure = _per_node(group, orchestrator)
        where = tuple(sorted(c.subnets_of(group_name)))
        if target <= current or figure is None or not where:
            if target > current:
                notes.append(f"HP-ADDRESSES: instance group {group_name}'s instance type or subnets are not in DescribeCluster: "
                             "its next scale-up is not judged")
            continue
        pending.setdefault(where, []).append((group_name, target - current, figure, current, target))
    items = []
    for where, groups in pending.items():
        unread = [s for s in where if s not in subnets or not isinstance(subnets[s].get("AvailableIpAddressCount"), int)]
        if unread:
            notes.append(f"HP-ADDRESSES: the free addresses of {', '.join(unread)} were not read: the next scale-up of "
                         f"{', '.join(g[0] for g in groups)} is not judged")
            continue
        free = sum(int(subnets[s]["AvailableIpAddressCount"]) for s in where)
        need = sum(nodes * figure[1] for _, nodes, figure, _, _ in groups)
        certain = sum(nodes * figure[2] for _, nodes, figure, _, _ in groups)
        if need <= free:
            continue
        cidrs = ", ".join(f"{s} ({subnets[s].get('CidrBlock')})" if subnets[s].get("CidrBlock") else s for s in where)
        parts = []
        for group_name, nodes, (itype, per, _own, unconfirmed), current, target in groups:
            flag = " UNCONFIRMED" if unconfirmed else ""
            parts.append(f"instance group {group_name} ({current} of {target} running: {nodes} more {itype} nodes x {per}"
                         f"{flag} addresses = {nodes * per:,})")
        fits = " or ".join(f"{free // g[2][1]} more {g[0]} nodes" for g in groups)
        severity = "error" if certain > free else "warning"
        why = (f"their network interfaces alone take {certain:,}" if severity == "error" else
               f"on {'EKS with the VPC CNI defaults (no prefix delegation)' if orchestrator == 'eks' else 'Slurm'}")
        subject = "subnet" if len(where) == 1 else "subnets"
        groups_named = " and ".join(g[0] for g in groups)
        lower = (f"lower the InstanceCount of {groups[0][0]} to at most {groups[0][3] + free // groups[0][2][1]}" if len(groups) == 1
                 else f"lower the InstanceCounts of {groups_named} to what fits together")
        eks = ", or turn on the VPC CNI's prefix delegation (16 addresses a node start with)" if orchestrator == "eks" else ""
        items.append(Item(
            "HP-ADDRESSES", severity, name,
            f"the next scale-up does not fit {subject} {cidrs}: {' + '.join(parts)} need {need:,} private IPs ({why}), "
            f"{free:,} are free; the nodes past what fits fail to launch when the subnet runs out (room for {fits})",
            "cluster", None,
            f"free addresses in {', '.join(where)} (delete network interfaces nothing uses), move {groups_named} to a larger "
            f"subnet of the same AZ (OverrideVpcConfig.Subnets: a subnet's CIDR never changes), or {lower}{eks}",
            f"aws ec2 describe-network-interfaces --region {region} --filters Name=subnet-id,Values={','.join(where)} "
            "Name=status,Values=available --query \"NetworkInterfaces[].[NetworkInterfaceId,Description]\" --output text"))
    return items, notes
