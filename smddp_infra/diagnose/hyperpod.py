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
* anything else a failed cluster or node says is quoted as it is (one finding, never dropped).

Logs (SageMaker Developer Guide, HyperPod; REFERENCE section 11): group
``/aws/sagemaker/Clusters/<cluster-name>/<cluster-id>``, streams
``LifecycleConfig/<instance-group-name>/<instance-id>``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Mapping, Optional, Sequence

from smddp_infra.diagnose.report import Item
from smddp_infra.diagnose.symptoms import MOUNT_CAUSES

LOG_GROUP_PREFIX = "/aws/sagemaker/Clusters"
LIFECYCLE_STREAM_PREFIX = "LifecycleConfig/"

_CAPACITY = re.compile(r"InsufficientInstanceCapacity|insufficient capacity|not have sufficient capacity|"
                       r"InsufficientCapacity|capacity is not available", re.I)
_QUOTA = re.compile(r"ResourceLimitExceeded|service limit|quota", re.I)
_QUOTA_NAME = re.compile(r"(?:limit|quota)\s+'([^']+)'|'([^']+ for cluster usage)'", re.I)
_HEALTH = re.compile(r"deep health ?check|DeepHealthCheck|InstanceStress|InstanceConnectivity", re.I)
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


def _where(group: Optional[str], node: Optional[str]) -> str:
    if group and node:
        return f"instance group {group}, node {node}"
    return f"instance group {group}" if group else "the cluster"


def _classify(text: str, name: str, group: Optional[str], node: Optional[str], groups: Mapping[str, Mapping[str, Any]],
              resource: str) -> Item:
    """One error finding for one failure message (FailureMessage or a node's InstanceStatus.Message)."""
    where = _where(group, node)
    spec = groups.get(group or "", {})
    itype = spec.get("InstanceType", "the group's instance type")
    quoted = f'"{_clip(text)}"'
    if _QUOTA.search(text):
        match = _QUOTA_NAME.search(text)
        quota = next((g for g in match.groups() if g), None) if match else None
        quota_text = f"the quota '{quota}'" if quota else f"the SageMaker quota for {itype} cluster usage"
        return Item("HP-QUOTA", "error", resource,
                    f"{where}: the account's quota is exceeded (ResourceLimitExceeded): {quoted}",
                    "cluster", None, f"Service Quotas console > Amazon SageMaker > {quota_text} > Request increase at "
                    "account level (or lower the group's InstanceCount)",
                    f"aws service-quotas list-service-quotas --service-code sagemaker --query \"Quotas[?contains(QuotaName, "
                    f"'{quota or 'cluster usage'}')]\" then aws service-quotas request-service-quota-increase --service-code "
                    "sagemaker --quota-code <code> --desired-value <n>")
    if _CAPACITY.search(text):
        return Item("HP-CAPACITY", "error", resource,
                    f"{where}: EC2 has no capacity for {itype} in the group's Availability Zone: {quoted}", "cluster", None,
                    f"place {group or 'the group'} in a subnet of another AZ ID (OverrideVpcConfig.Subnets), reserve the "
                    "capacity with a SageMaker training plan (the group's TrainingPlanArn), or ask for fewer instances",
                    f"aws sagemaker search-training-plan-offerings --instance-type {itype} --instance-count "
                    f"{spec.get('TargetCount', '<n>')} --target-resources hyperpod-cluster")
    if _HEALTH.search(text):
        checks = [c for c in _HEALTH_CHECKS if c.lower() in text.lower()] or list(spec.get("OnStartDeepHealthChecks") or [])
        check = " and ".join(checks) or "a deep health check"
        return Item("HP-HEALTH-CHECK", "error", resource,
                    f"{where}: the node failed the deep health check {check}: {quoted}", "cluster", None,
                    f"replace the node (aws sagemaker batch-replace-cluster-nodes, or let node recovery replace it) and "
                    f"check its hardware; the check's own log is in {name}'s log group", None)
    if _LIFECYCLE.search(text):
        return _lifecycle_item(text, None, where, spec, resource)
    return Item("HP-FAILED", "error", resource, f"{where} failed: {quoted}", "cluster", None, None, None)


def _lifecycle_item(text: str, line: Optional[str], where: str, spec: Mapping[str, Any], resource: str) -> Item:
    config = spec.get("LifeCycleConfig") or {}
    script = f"{str(config.get('SourceS3Uri', '')).rstrip('/')}/{config.get('OnCreate', '<OnCreate>')}"
    failing = f"; the failing line of its log: \"{_clip(line)}\"" if line else "; its log shows no failing line"
    return Item("HP-LIFECYCLE", "error", resource,
                f"{where}: the lifecycle script {script} failed: \"{_clip(text)}\"{failing}", "cluster", None,
                "fix the script (run it by hand on a node: it must exit 0), upload it, and re-run it "
                "(aws sagemaker update-cluster-software re-runs the lifecycle scripts)", None)


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


def cluster_items(cluster: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]], events: Optional[Sequence[Any]],
                  network: list[Item]) -> tuple[list[Item], list[Item]]:
    """(the network findings, the mount evidence added to their causes; the cluster's own failures)."""
    name = str(cluster.get("ClusterName"))
    groups = _groups(cluster)
    streams = _streams(events or [])
    items: list[Item] = []
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
            items.append(_lifecycle_item(message or "status Failure", _failing_line(lines), _where(group, instance),
                                         groups.get(group, {}), name))
        else:
            items.append(_classify(message or "status Failure (no message)", name, group, instance, groups, name))
    failure = str(cluster.get("FailureMessage") or "")
    if cluster.get("ClusterStatus") in ("Failed", "RollingBack") or failure:
        if failure and not any(i.message.endswith(f'"{_clip(failure)}"') for i in items):
            covered = {i.rule_id for i in items}
            item = _classify(failure, name, _group_in(failure, groups), None, groups, name)
            lifecycle_is_mount = item.rule_id == "HP-LIFECYCLE" and bool(mounts)  # the mount below is that failure
            if (item.rule_id not in covered or item.rule_id == "HP-FAILED") and not lifecycle_is_mount:
                items.append(item)
        elif not failure and not items:
            items.append(Item("HP-FAILED", "error", name, f"the cluster is {cluster.get('ClusterStatus')} and gives no "
                              "FailureMessage; no node reports a failure", "cluster"))
    causes = [i for i in network if i.rule_id in MOUNT_CAUSES and i.severity in ("error", "warning")]
    joined = list(network)
    for group, instance, line in mounts:
        evidence = f"instance group {group}, node {instance}: its lifecycle log shows the mount failing: \"{_clip(line)}\""
        if causes:
            joined = [replace(i, evidence=(*i.evidence, evidence)) if i in causes else i for i in joined]
            continue
        items.append(Item("HP-FSX-MOUNT", "error", name,
                          f"{_where(group, instance)}: the lifecycle script's FSx for Lustre mount failed: \"{_clip(line)}\"; "
                          "no network finding explains it (the rules that would: " + ", ".join(MOUNT_CAUSES) + ")",
                          "cluster", None, "check the file system's groups admit the group's on TCP 988 and 1018-1023, the "
                          "subnets' network ACLs and the VPC's DNS attributes; then re-run the lifecycle script", None))
    return joined, items
