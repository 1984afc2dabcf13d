"""SMDDP-GOV1 / GOV2 / GOV3: task governance against the HyperPod cluster it governs, on any template.

``AWS::SageMaker::ComputeQuota`` (one team's instances per type) and ``AWS::SageMaker::ClusterSchedulerConfig``
(the cluster policy) name their cluster in ``ClusterArn``. When that is the ``Fn::GetAtt ... ClusterArn`` (or
the ``Ref``: the cluster's primary identifier is its ARN) of an ``AWS::SageMaker::Cluster`` in the template,
what the cluster writes decides three things, judged by the same functions the ``TaskGovernance`` construct
validates with at synth (:mod:`smddp_infra.hyperpod.governance`):

* GOV3 (error): the cluster is not EKS-orchestrated (``Orchestrator.Slurm``, or no ``Orchestrator.Eks``: then
  there is no EKS cluster for the task-governance add-on's Kueue to run on). The ComputeQuota schema,
  ``ClusterArn``: "Slurm-orchestrated clusters are rejected by the service".
* GOV1 (error): a quota for an instance type the cluster has no instance group of
  (``ComputeQuotaResourceConfig.InstanceType`` is "the instance type of the instance group for the cluster",
  botocore sagemaker model): the quota can never be met.
* GOV2 (warning): the teams' quotas of a type add up past the cluster's instances of that type; whether
  CreateComputeQuota refuses that is UNCONFIRMED.

A cluster outside the template (a literal ARN ends in the cluster id SageMaker assigns, so it never names a
cluster of this template), a ``ClusterArn``, orchestrator, instance type or count the template does not decide:
an SMDDP-INFO1 note, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from smddp_infra.hyperpod import governance as gov
from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.model import NO_VALUE, UNKNOWN, Resource, ResourceRef, World, describe_value, is_known, to_int
from smddp_infra.rules.unresolved import UNRESOLVED

CLUSTER = "AWS::SageMaker::Cluster"
GOVERNED = (gov.QUOTA_TYPE, gov.SCHEDULER_TYPE)


@dataclass(frozen=True)
class _Cluster:
    """A HyperPod cluster of the template as governance sees it: its orchestrator ("eks", "slurm" or
    UNKNOWN) and its groups as (types, count); None where the template does not decide one."""

    resource: Resource
    orchestrator: Any
    groups: tuple[tuple[Optional[tuple[str, ...]], Optional[int]], ...]
    undecided: Optional[str]  # why the groups are not all known (None: they are)


@dataclass(frozen=True)
class _Governed:
    resource: Resource  # a ComputeQuota or ClusterSchedulerConfig
    cluster: Optional[_Cluster]
    why: str  # when cluster is None: why it is not judged


def _cluster(world: World, resource: Resource) -> _Cluster:
    orchestrator = world.get(resource, "Orchestrator")
    if orchestrator is NO_VALUE:
        kind: Any = "slurm"
    elif isinstance(orchestrator, dict) and len(orchestrator) == 1 and set(orchestrator) <= {"Eks", "Slurm"}:
        kind = "eks" if "Eks" in orchestrator else "slurm"
    else:
        kind = UNKNOWN
    groups: list[tuple[Optional[tuple[str, ...]], Optional[int]]] = []
    undecided: list[str] = []
    for key in ("InstanceGroups", "RestrictedInstanceGroups"):
        written = world.get(resource, key)
        if written is NO_VALUE:
            continue
        if not isinstance(written, list):
            undecided.append(f"its {key} ({describe_value(world.raw(resource, key))})")
            continue
        for index, group in enumerate(written):
            name = group.get("InstanceGroupName") if isinstance(group, dict) else None
            label = f"group {name}" if isinstance(name, str) else f"{key}[{index}]"
            types = _types(group)
            count = to_int(group.get("InstanceCount")) if isinstance(group, dict) else UNKNOWN
            if types is None:
                undecided.append(f"{label}'s instance type")
            if not isinstance(count, int):
                undecided.append(f"{label}'s InstanceCount")
            groups.append((types, count if isinstance(count, int) else None))
    return _Cluster(resource, kind, tuple(groups), ", ".join(undecided) or None)


def _types(group: Any) -> Optional[tuple[str, ...]]:
    """InstanceType, or a flexible group's InstanceRequirements.InstanceTypes; None when undecided."""
    if not isinstance(group, dict):
        return None
    single = group.get("InstanceType", NO_VALUE)
    if isinstance(single, str):
        return (single,)
    flexible = group.get("InstanceRequirements")
    listed = flexible.get("InstanceTypes") if isinstance(flexible, dict) else None
    if single is NO_VALUE and isinstance(listed, list) and listed and all(isinstance(t, str) for t in listed):
        return tuple(listed)
    return None


def _governed(world: World) -> list[_Governed]:
    def build(w: World) -> list[_Governed]:
        clusters: dict[str, _Cluster] = {}
        out = []
        for resource in w.of_type(*GOVERNED):
            arn = w.get(resource, "ClusterArn")
            target = w.resources.get(arn.logical_id) if isinstance(arn, ResourceRef) else None
            if target is not None and target.type == CLUSTER and arn.attribute in (None, "ClusterArn"):
                if target.logical_id not in clusters:
                    clusters[target.logical_id] = _cluster(w, target)
                out.append(_Governed(resource, clusters[target.logical_id], ""))
            elif isinstance(arn, str):
                out.append(_Governed(resource, None, f"its cluster {arn} is not in this template"))
            else:
                named = f"names {arn.logical_id}" if isinstance(arn, ResourceRef) else "is not decided by the template"
                out.append(_Governed(resource, None, f"its ClusterArn {named} ({describe_value(w.raw(resource, 'ClusterArn'))})"))
        return out

    found: list[_Governed] = world.memo("governance", build)
    return found


def _quota(world: World, resource: Resource) -> tuple[str, list[tuple[Any, Any]]]:
    """(team, [(instance type, count)] as resolved; UNKNOWN where the template does not decide)."""
    team = world.get(resource, "ComputeQuotaTarget", "TeamName")
    entries = world.get(resource, "ComputeQuotaConfig", "ComputeQuotaResources")
    if entries is NO_VALUE:
        entries = []
    pairs: list[tuple[Any, Any]] = []
    if not isinstance(entries, list):
        pairs.append((UNKNOWN, UNKNOWN))
    for entry in entries if isinstance(entries, list) else []:
        kind = entry.get("InstanceType", UNKNOWN) if isinstance(entry, dict) else UNKNOWN
        count = to_int(entry.get("Count")) if isinstance(entry, dict) and "Count" in entry else None
        pairs.append((kind if isinstance(kind, str) else UNKNOWN, count))
    return (team if isinstance(team, str) else resource.logical_id), pairs


def check_orchestrator(world: World) -> list[Finding]:
    findings = []
    by_cluster: dict[str, list[str]] = {}
    for governed in _governed(world):
        cluster = governed.cluster
        if cluster is None:
            findings.append(UNRESOLVED.finding(governed.resource.logical_id, f"{NOT_EKS.id}, {QUOTA_TYPE_MISSING.id} and "
                                               f"{QUOTA_OVERCOMMIT.id} not judged for {governed.resource.logical_id}: {governed.why}",
                                               "Properties", "ClusterArn"))
        elif cluster.orchestrator == "slurm":
            by_cluster.setdefault(cluster.resource.logical_id, []).append(governed.resource.logical_id)
        elif not is_known(cluster.orchestrator):
            findings.append(UNRESOLVED.finding(governed.resource.logical_id, f"{NOT_EKS.id} not judged for "
                                               f"{governed.resource.logical_id}: the Orchestrator of its cluster "
                                               f"{cluster.resource.logical_id} is not decided by the template", "Properties", "ClusterArn"))
    for name, governing in by_cluster.items():
        findings.append(NOT_EKS.finding(
            name, f"HyperPod cluster {name} is not EKS-orchestrated, and task governance ({', '.join(governing)}) is EKS only: "
            "SageMaker rejects a ComputeQuota or ClusterSchedulerConfig on a Slurm cluster; write Orchestrator.Eks, or "
            "remove the governance resources", "Properties", "Orchestrator"))
    return findings


def _judged(world: World) -> list[_Governed]:
    """Quotas on a cluster of the template that is (or may be) EKS-orchestrated: a Slurm one is GOV3's."""
    return [g for g in _governed(world) if g.cluster is not None and g.cluster.orchestrator != "slurm"
            and g.resource.type == gov.QUOTA_TYPE]


def check_quota_types(world: World) -> list[Finding]:
    findings = []
    for governed in _judged(world):
        assert governed.cluster is not None
        quota, cluster = governed.resource.logical_id, governed.cluster
        types = [t for t, _ in cluster.groups]
        team, pairs = _quota(world, governed.resource)
        if any(t is None for t in types):
            findings.append(UNRESOLVED.finding(quota, f"{QUOTA_TYPE_MISSING.id} not judged for {quota}: not decided by the template: "
                                               f"{cluster.undecided} of cluster {cluster.resource.logical_id}",
                                               "Properties", "ComputeQuotaConfig"))
            continue
        have = {t for group in types if group for t in group}
        undecided = sum(1 for kind, _ in pairs if not is_known(kind))
        if undecided:
            findings.append(UNRESOLVED.finding(quota, f"{QUOTA_TYPE_MISSING.id} not judged for {undecided} of {quota}'s "
                                               "ComputeQuotaResources: the instance type is not decided by the template",
                                               "Properties", "ComputeQuotaConfig", "ComputeQuotaResources"))
        for kind, _count in pairs:
            problem = (gov.quota_type_problem("ComputeQuotaResources", kind, have, cluster=f"cluster {cluster.resource.logical_id}")
                       if is_known(kind) else None)
            if problem:
                findings.append(QUOTA_TYPE_MISSING.finding(
                    quota, f"team {team} on HyperPod cluster {cluster.resource.logical_id}: {problem}: the quota can never "
                    f"be met; quota one of the types of {cluster.resource.logical_id} or add a group of {kind} to it",
                    "Properties", "ComputeQuotaConfig", "ComputeQuotaResources"))
    return findings


def check_overcommit(world: World) -> list[Finding]:
    findings = []
    teams_of: dict[str, list[tuple[str, dict[str, int]]]] = {}
    clusters: dict[str, _Cluster] = {}
    undecided: dict[str, list[str]] = {}
    for governed in _judged(world):
        assert governed.cluster is not None
        name = governed.cluster.resource.logical_id
        clusters[name] = governed.cluster
        team, pairs = _quota(world, governed.resource)
        if any(not is_known(kind) or (count is not None and not isinstance(count, int)) for kind, count in pairs):
            undecided.setdefault(name, []).append(governed.resource.logical_id)
        known = {kind: count for kind, count in pairs if is_known(kind) and isinstance(count, int)}
        teams_of.setdefault(name, []).append((team, known))
    for name, teams in teams_of.items():
        cluster = clusters[name]
        if cluster.undecided or name in undecided:
            why = cluster.undecided or f"the instance types or counts of {', '.join(undecided[name])}"
            findings.append(UNRESOLVED.finding(name, f"{QUOTA_OVERCOMMIT.id} not judged for cluster {name}: not decided by "
                                               f"the template: {why}", "Properties", "InstanceGroups"))
            continue
        counts = gov.instance_counts((types or (), count) for types, count in cluster.groups)
        for warning in gov.quota_overcommit_warnings(teams, counts, cluster=f"cluster {name}"):
            findings.append(QUOTA_OVERCOMMIT.finding(name, f"HyperPod cluster {name}: {warning}", "Properties", "InstanceGroups"))
    return findings


QUOTA_TYPE_MISSING = Rule(
    id="SMDDP-GOV1",
    severity=Severity.ERROR,
    cfn_lint_id="E9601",
    title="A team's compute quota names an instance type its HyperPod cluster has no instance group of",
    explanation="Quota one of the HyperPod cluster's instance types (InstanceGroups[].InstanceType), or add a group of that type.",
    symptom="the team's quota can never be met: its tasks wait for capacity the cluster cannot have",
    check=check_quota_types,
    source=("botocore sagemaker model, ComputeQuotaResourceConfig.InstanceType: 'The instance type of the instance "
            "group for the cluster'; the quota guarantees the team instances of that group's type, which a cluster "
            "without such a group never has."),
)

QUOTA_OVERCOMMIT = Rule(
    id="SMDDP-GOV2",
    severity=Severity.WARNING,
    cfn_lint_id="W9602",
    title="The teams' compute quotas of an instance type add up to more than the cluster's instances of it",
    explanation="Lower the teams' Count for the type, or raise the InstanceCount of the HyperPod cluster's group of it.",
    symptom="not every team's guaranteed instances can be given at once",
    check=check_overcommit,
    source=("UNCONFIRMED: whether CreateComputeQuota refuses quotas that sum past the cluster's instances, or admits "
            "them and the teams' guarantees cannot all hold at once; no AWS page or API rule we could read says."),
)

NOT_EKS = Rule(
    id="SMDDP-GOV3",
    severity=Severity.ERROR,
    cfn_lint_id="E9603",
    title="Task governance (ComputeQuota, ClusterSchedulerConfig) on a HyperPod cluster that is not EKS-orchestrated",
    explanation="Task governance is EKS only: write Orchestrator.Eks on the HyperPod cluster, or remove the governance resources.",
    symptom="the stack fails creating the compute quota or cluster policy",
    check=check_orchestrator,
    source=("CloudFormation resource schema AWS::SageMaker::ComputeQuota, ClusterArn: 'The ARN of the EKS-orchestrated "
            "SageMaker HyperPod cluster the compute allocation definition is bound to. Slurm-orchestrated clusters are "
            "rejected by the service.' SageMaker developer guide, 'Upgrade the task governance add-on': governance runs "
            "as the amazon-sagemaker-hyperpod-taskgovernance add-on of the cluster's EKS cluster, which a cluster "
            "without Orchestrator.Eks does not have."),
)

RULES = (QUOTA_TYPE_MISSING, QUOTA_OVERCOMMIT, NOT_EKS)
