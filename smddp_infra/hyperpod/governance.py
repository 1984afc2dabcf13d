"""HyperPod task governance for teams: the values and their validators (pure: no aws_cdk).

Task governance is CloudFormation-native: ``AWS::SageMaker::ClusterSchedulerConfig`` (the cluster
policy: priority classes with weights, fair share) and one ``AWS::SageMaker::ComputeQuota`` per team
(instances per type, borrowing and its limits, preemption of the team's own tasks). Both are for
EKS-orchestrated clusters only (the ComputeQuota schema: "Slurm-orchestrated clusters are rejected by
the service") and need the task-governance EKS add-on ``amazon-sagemaker-hyperpod-taskgovernance``
(SageMaker developer guide, "Upgrade the task governance add-on"; aws-samples/awsome-distributed-training,
``1.architectures/7.sagemaker-hyperpod-eks/task-governance``: Kubernetes 1.30 or later, no other Kueue).

Every name, range and enum is read from the INSTALLED cfn-lint resource schemas (the CloudFormation
registry's), never copied: :func:`schema_rule` walks a property path through ``$ref``s. Without
cfn-lint a check that needs the schema is not evaluated and :func:`not_evaluated` says so.

A value refuses a bad field when it is built (one line naming the field); the rules between a team
and the cluster (:func:`check_quota_types`, :func:`quota_overcommit_warnings`) are the construct's
and ``check``'s (:mod:`smddp_infra.rules.governance_rules`), on the same functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from smddp_infra.errors import ConfigError, PropTypeError, known_fields
from smddp_infra.hyperpod.api import resource_schema

SCHEDULER_TYPE = "AWS::SageMaker::ClusterSchedulerConfig"
QUOTA_TYPE = "AWS::SageMaker::ComputeQuota"
#: The task-governance EKS add-on (SageMaker developer guide, "Upgrade the task governance add-on":
#: ``aws eks update-addon ... --addon-name amazon-sagemaker-hyperpod-taskgovernance``).
TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
#: The oldest Kubernetes the add-on installs on (aws-samples/awsome-distributed-training, task-governance
#: README, Prerequisites: "Amazon EKS cluster running Kubernetes version 1.30 or greater").
MIN_KUBERNETES = (1, 30)
#: A team's tasks run in this namespace (the ComputeQuota schema, ``TeamName``: "Materialized as
#: Kubernetes namespace 'hyperpod-ns-<TeamName>'").
TEAM_NAMESPACE_PREFIX = "hyperpod-ns-"
#: ``BorrowLimit``'s documented range (botocore 1.44 ``ResourceSharingConfig.BorrowLimit``: "The values
#: can be 1 - 500 percent"); the schema admits 0 to 10,000, so outside 1-500 is a warning, not an error.
DOCUMENTED_BORROW_LIMIT = (1, 500)


def schema_rule(resource_type: str, *path: str) -> Optional[Mapping[str, Any]]:
    """The installed schema's rule for a property path (``"ComputeQuotaTarget", "TeamName"``; ``"[]"``
    steps into an array's items), ``$ref``s followed; None without cfn-lint or the path."""
    schema = resource_schema(resource_type)
    if schema is None:
        return None
    node: Any = {"properties": schema.get("properties", {})}
    for step in path:
        node = _resolved(schema, node)
        node = node.get("items") if step == "[]" else (node.get("properties") or {}).get(step)
        if node is None:
            return None
    return _resolved(schema, node)  # type: ignore[no-any-return]


def _resolved(schema: Mapping[str, Any], node: Mapping[str, Any]) -> Any:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/definitions/"):
        return {**schema["definitions"][ref.rsplit("/", 1)[1]], **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def create_only(resource_type: str) -> tuple[str, ...]:
    """The installed schema's ``createOnlyProperties`` (JSON pointers), () without cfn-lint."""
    schema = resource_schema(resource_type)
    return tuple(schema.get("createOnlyProperties") or ()) if schema else ()


def not_evaluated() -> Optional[str]:
    """The one note when the schemas are not installed (names, ranges and enums not evaluated)."""
    if schema_rule(QUOTA_TYPE, "Name") is not None and schema_rule(SCHEDULER_TYPE, "Name") is not None:
        return None
    return ("task governance: cfn-lint's ComputeQuota / ClusterSchedulerConfig schemas are not installed "
            "(pip install 'smddp-infra[cli]'), so names, weights, ranges and instance types are not evaluated")


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__


# --- one validator per rule, each reading the schema -------------------------------------------


def check_text(prop: str, value: Any, resource_type: str, *path: str) -> None:
    """A string by the schema's pattern and lengths (``Name``, ``TeamName``, a priority class's name)."""
    if not isinstance(value, str):
        raise PropTypeError(f"{prop} must be a string, got {_shown(value)}")
    rule = schema_rule(resource_type, *path)
    if rule is None:
        return
    low, high = int(rule.get("minLength", 0)), rule.get("maxLength")
    pattern = rule.get("pattern")
    too_long = high is not None and len(value) > int(high)
    if len(value) < low or too_long or (pattern and not re.search(str(pattern), value)):
        limits = f"{low} to {high} characters" if high is not None else f"at least {low} characters"
        raise ConfigError(f"{prop} must match {pattern} ({limits}; {resource_type} {'.'.join(path)}), got {value!r}")


def check_number(prop: str, value: Any, resource_type: str, *path: str) -> None:
    """A whole number in the schema's range (weights, counts, borrow limits)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise PropTypeError(f"{prop} must be a whole number, got {_shown(value)}")
    rule = schema_rule(resource_type, *path)
    if rule is None:
        return
    low, high = rule.get("minimum"), rule.get("maximum")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ConfigError(f"{prop} must be {low} to {high} ({resource_type} {'.'.join(path)}), got {value}")


def check_choice(prop: str, value: Any, resource_type: str, *path: str) -> None:
    """One of the schema's enum (a strategy, a preemption policy, an instance type)."""
    rule = schema_rule(resource_type, *path)
    allowed = tuple(rule.get("enum") or ()) if rule else ()
    if not isinstance(value, str):
        raise PropTypeError(f"{prop} must be a string, got {_shown(value)}")
    if allowed and value not in allowed:
        shown = ", ".join(allowed) if len(allowed) <= 10 else f"one of the {len(allowed)} types the schema lists"
        raise ConfigError(f"{prop} must be {shown} ({resource_type} {'.'.join(path)}), got {value!r}")


def check_count(prop: str, items: Sequence[Any], resource_type: str, *path: str) -> None:
    """At most the schema's ``maxItems`` (priority classes, a team's instance types)."""
    rule = schema_rule(resource_type, *path)
    high = rule.get("maxItems") if rule else None
    if high is not None and len(items) > int(high):
        raise ConfigError(f"{prop} may hold at most {high} entries ({resource_type} {'.'.join(path)}), got {len(items)}")


def check_unique(prop: str, names: Sequence[str], what: str) -> None:
    """Each priority class and each team once: a second would be a second resource or entry of one name."""
    seen: dict[str, int] = {}
    for index, name in enumerate(names):
        if name in seen:
            raise ConfigError(f"{prop}[{index}] repeats {what} {name!r} of {prop}[{seen[name]}]: each {what} once")
        seen[name] = index


#: A Kubernetes namespace name is an RFC 1123 label of at most 63 characters (Kubernetes documentation,
#: "Namespaces" / "Object Names and IDs"); the schema's TeamName pattern sets no length.
NAMESPACE_MAX = 63


def check_team_namespace(prop: str, team_name: str) -> None:
    """The team's namespace ``hyperpod-ns-<team_name>`` must be a valid namespace name (the schema's TeamName
    description: "must satisfy RFC 1123 namespace constraints"), so a team name has at most 51 characters."""
    most = NAMESPACE_MAX - len(TEAM_NAMESPACE_PREFIX)
    if len(team_name) > most:
        raise ConfigError(f"{prop} must have at most {most} characters (its namespace {TEAM_NAMESPACE_PREFIX}<team_name> is "
                          f"a Kubernetes name of at most {NAMESPACE_MAX}), got {len(team_name)} characters")


def check_instances(prop: str, value: Any) -> dict[str, int]:
    """Instance type -> count: the schema's types (``ComputeQuotaResourceConfig.InstanceType``) and counts."""
    if not isinstance(value, Mapping):
        raise PropTypeError(f"{prop} must be a mapping of instance type to count, got {_shown(value)}")
    for instance_type, count in value.items():
        check_choice(f"{prop}[{instance_type!r}]", instance_type, QUOTA_TYPE,
                     "ComputeQuotaConfig", "ComputeQuotaResources", "[]", "InstanceType")
        check_number(f"{prop}[{instance_type!r}]", count, QUOTA_TYPE,
                     "ComputeQuotaConfig", "ComputeQuotaResources", "[]", "Count")
    check_count(prop, list(value), QUOTA_TYPE, "ComputeQuotaConfig", "ComputeQuotaResources")
    return dict(value)


def check_orchestrator(prop: str, orchestrator: str) -> None:
    """Task governance is for EKS-orchestrated clusters (ComputeQuota ``ClusterArn``: "Slurm-orchestrated
    clusters are rejected by the service")."""
    if orchestrator != "eks":
        raise ConfigError(f"{prop} must be an EKS-orchestrated HyperPodCluster: task governance (ComputeQuota, "
                          f"ClusterSchedulerConfig) is EKS only, got orchestrator={orchestrator!r}")


def check_kubernetes_version(prop: str, version: Optional[str]) -> None:
    """The add-on needs Kubernetes 1.30 or later (:data:`MIN_KUBERNETES`), when the version is known."""
    if version is None:
        return
    parts = tuple(int(p) for p in re.findall(r"\d+", version)[:2])
    if parts < MIN_KUBERNETES:
        raise ConfigError(f"{prop} is Kubernetes {version}: the task-governance add-on needs 1.30 or later "
                          "(awsome-distributed-training task-governance README, Prerequisites)")


def check_borrowing(prop: str, strategy: Optional[str], borrow_limit: Optional[int], absolute: Mapping[str, int]) -> None:
    """Borrow limits cap what a team borrows: only a ``LendAndBorrow`` team borrows (botocore
    ``ResourceSharingConfig.Strategy``: Lend and DontLend teams do not borrow idle compute)."""
    if (borrow_limit is not None or absolute) and strategy not in (None, "LendAndBorrow"):
        given = "borrow_limit" if borrow_limit is not None else "absolute_borrow_limits"
        raise ConfigError(f"{prop}.{given} caps borrowing, which only resource_sharing='LendAndBorrow' does, "
                          f"got resource_sharing={strategy!r}")


def instance_counts(groups: Iterable[tuple[Sequence[str], Optional[int]]]) -> dict[str, int]:
    """Instances per type across a cluster's groups, each given as (its types, its count): what quotas
    are judged against. A flexible group (``InstanceRequirements``, several types) may run any of its
    types, so it counts under each: the most of a type the cluster can hold, which keeps the over-quota
    warning from firing on capacity that may exist."""
    counts: dict[str, int] = {}
    for types, count in groups:
        for instance_type in types:
            counts[instance_type] = counts.get(instance_type, 0) + (count or 0)
    return counts


def quota_type_problem(prop: str, instance_type: str, cluster_types: Iterable[str], *,
                       cluster: str = "the cluster") -> Optional[str]:
    """A quota for an instance type the cluster has no group of can never be met (the API's
    ``ComputeQuotaResourceConfig.InstanceType``: "the instance type of the instance group for the cluster").
    ``cluster``: how the message names it (``check`` names the template's resource)."""
    have = sorted(cluster_types)
    if instance_type in have:
        return None
    return (f"{prop}[{instance_type!r}]: {cluster} has no instance group of {instance_type} "
            f"(its groups' types: {', '.join(have) or 'none'})")


def check_quota_types(prop: str, quotas: Mapping[str, int], cluster_counts: Mapping[str, int]) -> None:
    """Refuses the first quota type the cluster has no group of (:func:`quota_type_problem`)."""
    for instance_type in quotas:
        problem = quota_type_problem(prop, instance_type, cluster_counts)
        if problem:
            raise ConfigError(problem)


def quota_overcommit_warnings(quotas: Iterable[tuple[str, Mapping[str, int]]],
                              cluster_counts: Mapping[str, int], *, cluster: str = "the cluster") -> list[str]:
    """Types whose teams' quotas together exceed the cluster's instances of that type. A warning, not
    an error: whether CreateComputeQuota refuses such a sum, or admits it and the teams' guarantees
    cannot all hold at once, is UNCONFIRMED (no AWS page or API rule we could read says)."""
    totals: dict[str, list[tuple[str, int]]] = {}
    for team, instances in quotas:
        for instance_type, count in instances.items():
            totals.setdefault(instance_type, []).append((team, count))
    out = []
    for instance_type, shares in sorted(totals.items()):
        have = cluster_counts.get(instance_type)
        total = sum(count for _, count in shares)
        if have is not None and total > have:
            who = ", ".join(f"{team} {count}" for team, count in shares)
            out.append(f"the teams' quotas of {instance_type} add up to {total} ({who}), more than {cluster}'s "
                       f"{have}: not every team's quota can be met at once (whether SageMaker refuses this is UNCONFIRMED)")
    return out


def borrow_limit_warning(prop: str, borrow_limit: Optional[int]) -> Optional[str]:
    low, high = DOCUMENTED_BORROW_LIMIT
    if borrow_limit is None or low <= borrow_limit <= high:
        return None
    return (f"{prop}.borrow_limit {borrow_limit} is outside the documented 1 to 500 percent (botocore "
            "ResourceSharingConfig.BorrowLimit); the schema admits it, the service may not")


# --- the values ---------------------------------------------------------------------------------


@known_fields
@dataclass(frozen=True)
class PriorityClass:
    """A priority class of the cluster policy (``SchedulerConfig.PriorityClasses[]``): tasks name it
    and a higher weight is scheduled (and may preempt) first.

    :param name: ``Name``: lowercase letters, digits and hyphens (a Kubernetes name; the schema's pattern).
    :param weight: ``Weight``: 0 to 100 (the schema's range).
    """

    name: str
    weight: int

    def __post_init__(self) -> None:
        check_text("name", self.name, SCHEDULER_TYPE, "SchedulerConfig", "PriorityClasses", "[]", "Name")
        check_number("weight", self.weight, SCHEDULER_TYPE, "SchedulerConfig", "PriorityClasses", "[]", "Weight")


@known_fields
@dataclass(frozen=True)
class SchedulerPolicy:
    """The cluster policy (one ``ClusterSchedulerConfig`` per cluster).

    :param priority_classes: :class:`PriorityClass` values, at most 10, each name once. Default: none.
    :param fair_share: ``FairShare: Enabled``: teams borrow idle compute by their ``fair_share_weight``;
        off, first come first served (botocore ``SchedulerConfig.FairShare``). Default: True (the API's default, written).
    :param idle_resource_sharing: ``IdleResourceSharing`` Enabled/Disabled. Default: none (not written).
    :param name: ``Name`` (create-only: a new name replaces the policy). Default: from the construct's path.
    """

    priority_classes: Sequence[PriorityClass] = field(default=(), hash=False)
    fair_share: bool = True
    idle_resource_sharing: Optional[bool] = None
    name: Optional[str] = None

    def __post_init__(self) -> None:
        classes = list(self.priority_classes) if isinstance(self.priority_classes, (list, tuple)) else None
        if classes is None or not all(isinstance(c, PriorityClass) for c in classes):
            raise PropTypeError(f"priority_classes must be a list of PriorityClass(...), got {_shown(self.priority_classes)}")
        check_count("priority_classes", classes, SCHEDULER_TYPE, "SchedulerConfig", "PriorityClasses")
        check_unique("priority_classes", [c.name for c in classes], "priority class")
        for prop, flag in (("fair_share", self.fair_share), ("idle_resource_sharing", self.idle_resource_sharing)):
            if flag is not None and not isinstance(flag, bool):
                raise PropTypeError(f"{prop} must be True or False, got {_shown(flag)}")
        if self.name is not None:
            check_text("name", self.name, SCHEDULER_TYPE, "Name")


@known_fields
@dataclass(frozen=True)
class TeamQuota:
    """One team's compute allocation (one ``ComputeQuota``).

    :param team_name: ``ComputeQuotaTarget.TeamName``: the team's tasks run in namespace
        ``hyperpod-ns-<team_name>``; lowercase letters, digits, hyphens (the schema's pattern). Create-only:
        renaming a team replaces its quota (delete, then create), and ``smddp-infra guard`` refuses it.
    :param instances: instance type -> instances guaranteed to the team (``ComputeQuotaResources``,
        at most 15 types); every type must be one of the cluster's groups.
    :param fair_share_weight: ``FairShareWeight`` 0 to 100, the team's share of idle compute with fair
        share on. Default: none (the service's 0).
    :param resource_sharing: ``Lend``, ``DontLend`` or ``LendAndBorrow`` (``ResourceSharingConfig.Strategy``).
        Default: none (not written; the service's LendAndBorrow with a borrow limit of 50).
    :param borrow_limit: ``BorrowLimit``, percent of idle compute the team may borrow (documented 1 to 500).
        Default: none (the service's 50).
    :param absolute_borrow_limits: instance type -> at most this many borrowed (``AbsoluteBorrowLimits``).
        Default: none.
    :param preempt_team_tasks: ``LowerPriority`` (the team's higher-priority tasks preempt its lower ones)
        or ``Never``. Default: none (the service's LowerPriority).
    :param name: the quota's ``Name`` (create-only). Default: from the construct's path.
    """

    team_name: str
    instances: Mapping[str, int] = field(hash=False)
    fair_share_weight: Optional[int] = None
    resource_sharing: Optional[str] = None
    borrow_limit: Optional[int] = None
    absolute_borrow_limits: Mapping[str, int] = field(default_factory=dict, hash=False)
    preempt_team_tasks: Optional[str] = None
    name: Optional[str] = None

    def __post_init__(self) -> None:
        check_text("team_name", self.team_name, QUOTA_TYPE, "ComputeQuotaTarget", "TeamName")
        check_team_namespace("team_name", self.team_name)
        check_instances("instances", self.instances)
        if self.fair_share_weight is not None:
            check_number("fair_share_weight", self.fair_share_weight, QUOTA_TYPE, "ComputeQuotaTarget", "FairShareWeight")
        sharing = ("ComputeQuotaConfig", "ResourceSharingConfig")
        if self.resource_sharing is not None:
            check_choice("resource_sharing", self.resource_sharing, QUOTA_TYPE, *sharing, "Strategy")
        if self.borrow_limit is not None:
            check_number("borrow_limit", self.borrow_limit, QUOTA_TYPE, *sharing, "BorrowLimit")
        check_instances("absolute_borrow_limits", self.absolute_borrow_limits)
        check_borrowing(f"teams[{self.team_name!r}]", self.resource_sharing, self.borrow_limit, self.absolute_borrow_limits)
        if self.preempt_team_tasks is not None:
            check_choice("preempt_team_tasks", self.preempt_team_tasks, QUOTA_TYPE, "ComputeQuotaConfig", "PreemptTeamTasks")
        if self.name is not None:
            check_text("name", self.name, QUOTA_TYPE, "Name")

    def quota_config(self) -> dict[str, Any]:
        """``ComputeQuotaConfig`` as the schema spells it (what is not given is not written)."""
        config: dict[str, Any] = {"ComputeQuotaResources": _resources(self.instances)}
        sharing: dict[str, Any] = {}
        if self.resource_sharing is not None or self.borrow_limit is not None or self.absolute_borrow_limits:
            sharing["Strategy"] = self.resource_sharing or "LendAndBorrow"
        if self.borrow_limit is not None:
            sharing["BorrowLimit"] = self.borrow_limit
        if self.absolute_borrow_limits:
            sharing["AbsoluteBorrowLimits"] = _resources(self.absolute_borrow_limits)
        if sharing:
            config["ResourceSharingConfig"] = sharing
        if self.preempt_team_tasks is not None:
            config["PreemptTeamTasks"] = self.preempt_team_tasks
        return config

    def target(self) -> dict[str, Any]:
        target: dict[str, Any] = {"TeamName": self.team_name}
        if self.fair_share_weight is not None:
            target["FairShareWeight"] = self.fair_share_weight
        return target


def _resources(instances: Mapping[str, int]) -> list[dict[str, Any]]:
    return [{"InstanceType": t, "Count": c} for t, c in sorted(instances.items())]


def check_teams(prop: str, teams: Any) -> tuple[TeamQuota, ...]:
    """A non-empty list of :class:`TeamQuota`, each team once."""
    if not isinstance(teams, (list, tuple)) or not all(isinstance(t, TeamQuota) for t in teams):
        raise PropTypeError(f"{prop} must be a list of TeamQuota(...), got {_shown(teams)}")
    if not teams:
        raise ConfigError(f"{prop} must name at least one team (one ComputeQuota each), got none")
    check_unique(prop, [t.team_name for t in teams], "team")
    names = [t.name for t in teams if t.name is not None]
    check_unique(f"{prop} names", names, "quota name")
    return tuple(teams)


__all__ = ["PriorityClass", "SchedulerPolicy", "TASK_GOVERNANCE_ADDON", "TeamQuota"]
