"""HyperPod props checked in aws-cdk-lib's ``validateProps()`` manner: one validator per rule.

Each validator takes plain values and the name of the setting the user wrote
(``instance_groups[1].instance_type``, ``smddp:instanceType``) and raises ONE line
(:class:`~smddp_infra.errors.ConfigError`) naming it, the value and what is allowed. What the
API accepts comes from the installed botocore (:mod:`smddp_infra.hyperpod.api`); without
botocore a check that needs it is not evaluated, and :func:`check_groups` says so in the notes
it returns (the construct turns them into synth infos).
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

from smddp_infra.errors import ConfigError, PropTypeError
from smddp_infra.hyperpod import api
from smddp_infra.hyperpod.values import (
    DEEP_HEALTH_CHECKS,
    SLURM_NODE_TYPES,
    TAINT_EFFECTS,
    InstanceGroup,
    KubernetesTaint,
)
from smddp_infra.facts import arns, names
from smddp_infra.facts.addresses import NodeAddresses, addresses_per_node
from smddp_infra.facts.subnets import smallest_mask_for, usable_addresses
from smddp_infra.schema.fields import flag
from smddp_infra.sizing import openzfs_rules as zfs
from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES

#: CreateCluster ``InstanceGroups``: 1 to 100 groups.
MAX_GROUPS = 100
#: ``ClusterInstanceCount``: 0 to 6,758 per group; ``ClusterThreadsPerCore``: 1 or 2;
#: ``ClusterEbsVolumeSizeInGB``: 1 to 16,384 (botocore 1.44 sagemaker model).
MAX_COUNT = 6758
MAX_EBS_GIB = 16384
#: ``ClusterName``'s limit (:mod:`smddp_infra.facts.names`, used when botocore is not installed).
MAX_CLUSTER_NAME = names.MAX_NAME_LENGTH
#: ``ClusterKubernetesLabels`` and ``ClusterKubernetesTaints``: at most 50 each (botocore 1.44).
MAX_KUBERNETES_ITEMS = 50
#: Kubernetes' qualified name (Kubernetes documentation, "Labels and Selectors", Syntax and
#: character set): an optional prefix (a DNS subdomain, at most 253 characters) and ``/``, then a
#: name of at most 63 characters. botocore's ``ClusterKubernetesLabelKey`` pattern has the same
#: characters and a total of 317 (253 + 1 + 63), without the per-part limits the API server enforces.
_K8S_KEY = re.compile(r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_K8S_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
K8S_PREFIX_MAX, K8S_NAME_MAX = 253, 63
#: ``AutoRollbackAlarms``: 1 to 10 alarms, each ``AlarmName`` 1 to 255 characters, not blank.
MAX_ROLLBACK_ALARMS = 10


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, (str, int, float, bool, type(None), tuple, list)) else type(value).__name__


def _whole(value: Any, low: int, high: int) -> bool:
    """A whole number from ``low`` to ``high``; never a bool (``True`` is an ``int`` to Python, not a count to the API)."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def check_eks_cluster_arn(prop: str, orchestrator: str, arn: Any) -> Optional[str]:
    """EKS needs the platform's EKS cluster ARN (``Orchestrator.Eks.ClusterArn``, botocore's
    ``EksClusterArn`` pattern); Slurm takes none."""
    if orchestrator != "eks":
        if arn is not None:
            raise ConfigError(f"{prop} is for orchestrator='eks' only, got {_shown(arn)} with orchestrator={orchestrator!r}")
        return None
    if arn is None:
        raise ConfigError(f"{prop} is required with orchestrator='eks' (the platform's EKS cluster, "
                          "arn:aws:eks:<region>:<account>:cluster/<name>; HyperPod does not create it), got none")
    if not isinstance(arn, str):
        raise PropTypeError(f"{prop} must be an EKS cluster ARN string, got {_shown(arn)}")
    shape = api.pattern("EksClusterArn") or arns.EKS_CLUSTER_ARN
    if not shape.fullmatch(arn):
        raise ConfigError(f"{prop} must be an EKS cluster ARN (arn:aws:eks:<region>:<account>:cluster/<name>), got {arn!r}")
    return arn


def check_cluster_name(prop: str, value: Any) -> None:
    """``ClusterName``: botocore's pattern AND its 63-character limit (the pattern alone lets any
    number of hyphens through: ``a---...---b`` of 80 characters matches it and CreateCluster refuses it)."""
    found = api.pattern("ClusterName") or names.NAME
    bounds = api.length("ClusterName") or (1, MAX_CLUSTER_NAME)
    if not isinstance(value, str) or not found.fullmatch(value) or not bounds[0] <= len(value) <= bounds[1]:
        shown = f"{value!r} ({len(value)} characters)" if isinstance(value, str) else _shown(value)
        raise ConfigError(f"{prop} must be {bounds[0]} to {bounds[1]} letters, digits and hyphens, starting and ending "
                          f"with a letter or digit (ClusterName), got {shown}")


def check_continuous_provisioning(prop: str, orchestrator: str, value: Any) -> None:
    """``NodeProvisioningMode: Continuous`` "is only supported for EKS orchestrated clusters" (botocore
    ``CreateClusterRequest.NodeProvisioningMode``; SageMaker developer guide, "Continuous provisioning for
    enhanced cluster operations on Amazon EKS": Slurm clusters use a different scaling model)."""
    flag().check(prop, value)
    if value and orchestrator != "eks":
        raise ConfigError(f"{prop}=True (NodeProvisioningMode: Continuous) is only supported on EKS-orchestrated "
                          f"clusters (botocore CreateCluster), got orchestrator={orchestrator!r}")


def check_autoscaling_orchestrator(prop: str, orchestrator: str, value: Any) -> None:
    """HyperPod's managed Karpenter autoscaling is "for clusters created with EKS orchestration"
    (SageMaker developer guide, "Autoscaling on SageMaker HyperPod EKS")."""
    flag().check(prop, value)
    if value and orchestrator != "eks":
        raise ConfigError(f"{prop}=True (AutoScaling, Karpenter) is only for EKS-orchestrated clusters (SageMaker "
                          f"developer guide, Autoscaling on SageMaker HyperPod EKS), got orchestrator={orchestrator!r}")


def check_autoscaling_needs_continuous(prop: str, autoscaling: bool, continuous: bool) -> None:
    """Karpenter autoscaling "is built on HyperPod's continuous provisioning"; its prerequisites list
    continuous provisioning enabled on the cluster (SageMaker developer guide, "Autoscaling on SageMaker
    HyperPod EKS", Prerequisites)."""
    if autoscaling and not continuous:
        raise ConfigError(f"{prop}=True needs continuous_provisioning=True (Karpenter autoscaling is built on "
                          "continuous provisioning: Autoscaling on SageMaker HyperPod EKS, Prerequisites)")


def check_autoscaling_needs_node_recovery(prop: str, autoscaling: bool, node_recovery: bool) -> None:
    """The autoscaling prerequisites list ``NodeRecovery`` set to ``Automatic`` (SageMaker developer
    guide, "Autoscaling on SageMaker HyperPod EKS", Prerequisites)."""
    if autoscaling and not node_recovery:
        raise ConfigError(f"{prop}=True needs node_recovery=True (NodeRecovery: Automatic is a prerequisite of "
                          "Karpenter autoscaling: Autoscaling on SageMaker HyperPod EKS, Prerequisites)")


def check_autoscaling_role(prop: str, autoscaling: bool, role: Any) -> None:
    """``ClusterRole`` is "only required when autoscaling is enabled" (botocore CreateCluster): a role
    given without autoscaling would be written for nothing."""
    if role is not None and not autoscaling:
        raise ConfigError(f"{prop} is the role HyperPod assumes to autoscale (ClusterRole): pass it with "
                          "autoscaling=True, or leave it out")


def check_memory_percent(prop: str, value: Any) -> None:
    """``TieredStorageConfig.InstanceMemoryAllocationPercentage``: a whole number in botocore's range
    (``ClusterInstanceMemoryAllocationPercentage``, 0 to 100)."""
    if value is None:
        return
    low, high = _int_range("ClusterInstanceMemoryAllocationPercentage", (0, 100))
    if not _whole(value, low, high):
        raise ConfigError(f"{prop} must be a whole percentage of instance memory from {low} to {high} "
                          f"(TieredStorageConfig.InstanceMemoryAllocationPercentage) or None, got {_shown(value)}")


def check_tiered_checkpointing_orchestrator(prop: str, orchestrator: str, value: Any) -> None:
    """Managed tiered checkpointing needs "an Amazon EKS HyperPod cluster" (SageMaker developer guide,
    "Set up managed tiered checkpointing", Prerequisites)."""
    if value is not None and orchestrator != "eks":
        raise ConfigError(f"{prop} (managed tiered checkpointing, TieredStorageConfig) needs an EKS-orchestrated "
                          f"cluster (Set up managed tiered checkpointing, Prerequisites), got orchestrator={orchestrator!r}")


def check_training_plan_region(prop: str, arn: Optional[str], region: Optional[str], partition: Optional[str]) -> None:
    """A training plan is regional: its reserved capacity sits in one Availability Zone of the plan's
    Region (DescribeTrainingPlan ``ReservedCapacitySummaries[].AvailabilityZone``), and the ARN names
    its partition. A cluster in another Region or partition cannot use it. Not evaluated when the
    stack's Region is not known at synth (``region`` None)."""
    if arn is None or region is None or not isinstance(arn, str):
        return
    parsed = arns.parse_arn(arn)
    if parsed is None:
        return  # check_training_plan_arn reports the shape
    plan_partition, plan_region = parsed.partition, parsed.region
    if plan_region != region or (partition is not None and plan_partition != partition):
        raise ConfigError(f"{prop} {arn!r} is a training plan in {plan_region} ({plan_partition}), but the cluster's "
                          f"stack is in {region} ({partition or 'its partition'}): a plan's reserved capacity serves "
                          "its own Region only; use a plan bought in the stack's Region")


def check_rollback_alarms(prop: str, names: Sequence[Any]) -> None:
    """``DeploymentConfig.AutoRollbackConfiguration``: at most 10 alarms, each name 1 to 255
    characters, not blank (botocore ``AutoRollbackAlarms``, ``AlarmName``)."""
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise PropTypeError(f"{prop} must be a list of CloudWatch alarm names or alarms, got {_shown(names)}")
    if len(names) > MAX_ROLLBACK_ALARMS:
        raise ConfigError(f"{prop} must list at most {MAX_ROLLBACK_ALARMS} alarms (AutoRollbackConfiguration), got {len(names)}")
    for index, name in enumerate(names):
        if isinstance(name, str) and (not name.strip() or len(name) > 255):
            raise ConfigError(f"{prop}[{index}] must be an alarm name of 1 to 255 characters, got {name!r}")


def _int_range(shape: str, default: tuple[int, int]) -> tuple[int, int]:
    bounds = api.length(shape)
    return bounds if bounds is not None and bounds[1] < 2**31 else default


def check_group_list(prop: str, groups: Any) -> tuple[InstanceGroup, ...]:
    """A non-empty list of :class:`InstanceGroup` (at most 100, CreateCluster's limit)."""
    if isinstance(groups, InstanceGroup):
        raise PropTypeError(f"{prop} must be a list of InstanceGroup, got one InstanceGroup (wrap it in a list, [group])")
    if not isinstance(groups, (list, tuple)) or not groups:
        raise PropTypeError(f"{prop} must be a non-empty list of InstanceGroup, got {_shown(groups)}")
    for index, group in enumerate(groups):
        if not isinstance(group, InstanceGroup):
            raise PropTypeError(f"{prop}[{index}] must be an InstanceGroup(name=..., instance_type=..., count=...), "
                                f"got {_shown(group)}")
    if len(groups) > MAX_GROUPS:
        raise ConfigError(f"{prop} must list 1 to {MAX_GROUPS} groups (CreateCluster InstanceGroups), got {len(groups)}")
    return tuple(groups)


def check_name(prop: str, name: Any) -> None:
    found = api.pattern("ClusterInstanceGroupName") or names.NAME
    if not isinstance(name, str) or not found.fullmatch(name) or len(name) > names.MAX_NAME_LENGTH:
        raise ConfigError(f"{prop} must be 1 to {names.MAX_NAME_LENGTH} letters, digits and hyphens, starting and ending with a letter or "
                          f"digit (InstanceGroupName), got {_shown(name)}")


def check_unique_names(prop: str, groups: Sequence[InstanceGroup]) -> None:
    seen: dict[str, int] = {}
    for index, group in enumerate(groups):
        if group.name in seen:
            raise ConfigError(f"{prop}[{index}].name {group.name!r} is already the name of {prop}[{seen[group.name]}]: "
                              "instance group names are unique in a cluster")
        seen[group.name] = index


def check_instance_type(prop: str, value: Any) -> Optional[str]:
    """One of botocore's ``ClusterInstanceType`` values. Returns a note when not evaluated."""
    if not isinstance(value, str):
        raise PropTypeError(f"{prop} must be a HyperPod instance type string like 'ml.p5.48xlarge', got {_shown(value)}")
    known = api.cluster_instance_types()
    if known is None:
        return f"{prop} {value!r} not evaluated: botocore is not installed (pip install 'smddp-infra[api]')"
    if value not in known:
        near = sorted(t for t in known if t.split(".")[1:2] == value.split(".")[1:2]) or sorted(
            t for t in known if t in EFA_INSTANCE_TYPES)
        raise ConfigError(f"{prop} {value!r} is not a HyperPod instance type (botocore {api.botocore_version()} "
                          f"ClusterInstanceType); e.g. {', '.join(near[:6])}")
    return None


def check_count(prop: str, value: Any, *, minimum: int = 0) -> int:
    if not _whole(value, minimum, MAX_COUNT):
        raise ConfigError(f"{prop} must be a whole number from {minimum} to {MAX_COUNT} (InstanceCount), got {_shown(value)}")
    return int(value)


def check_threads_per_core(prop: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or value not in (1, 2)):
        raise ConfigError(f"{prop} must be 1 (hyperthreading off), 2 or None, got {_shown(value)}")


def check_ebs_volume(prop: str, value: Any) -> None:
    if value is not None and not _whole(value, 1, MAX_EBS_GIB):
        raise ConfigError(f"{prop} must be a whole number of GiB from 1 to {MAX_EBS_GIB} (EbsVolumeConfig.VolumeSizeInGB) "
                          f"or None, got {_shown(value)}")


def check_training_plan_arn(prop: str, value: Any) -> Optional[str]:
    """A SageMaker training plan ARN (botocore's ``TrainingPlanArn`` pattern and length).
    Returns a note when not evaluated. Whether the plan targets HyperPod clusters (a plan is
    bought for one resource kind) is known only to DescribeTrainingPlan, not at synth."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise PropTypeError(f"{prop} must be a training plan ARN string, got {_shown(value)}")
    found = api.pattern("TrainingPlanArn")
    bounds = api.length("TrainingPlanArn")
    if found is None or bounds is None:
        return f"{prop} not evaluated: botocore is not installed (pip install 'smddp-infra[api]')"
    if not found.fullmatch(value) or not bounds[0] <= len(value) <= bounds[1]:
        raise ConfigError(f"{prop} must be a SageMaker training plan ARN (arn:aws:sagemaker:<region>:<account>:"
                          f"training-plan/<name>, {bounds[0]} to {bounds[1]} characters: botocore's TrainingPlanArn), "
                          f"got {value!r}")
    return None


def check_slurm_node_type(prop: str, orchestrator: str, value: Any) -> None:
    if orchestrator == "eks":
        if value is not None:
            raise ConfigError(f"{prop} is for orchestrator='slurm' only (SlurmConfig.NodeType), got {value!r} on an EKS cluster")
        return
    if value not in SLURM_NODE_TYPES:
        raise ConfigError(f"{prop} must be one of {', '.join(repr(t) for t in SLURM_NODE_TYPES)} on a Slurm cluster "
                          f"(SlurmConfig.NodeType), got {_shown(value)}")


def check_partition(prop: str, orchestrator: str, node_type: Optional[str], value: Any) -> None:
    if value is None:
        return
    if orchestrator != "slurm" or node_type != "Compute":
        raise ConfigError(f"{prop} names a Slurm partition, which only a Compute group of a Slurm cluster has, got "
                          f"{value!r} on a {node_type or orchestrator} group")
    found = api.pattern("ClusterPartitionName") or names.NAME
    if not isinstance(value, str) or not found.fullmatch(value):
        raise ConfigError(f"{prop} must be letters, digits and hyphens (ClusterPartitionName), got {_shown(value)}")


def check_deep_health_checks(prop: str, value: Any) -> None:
    if value is None:
        return
    allowed = api.enum("DeepHealthCheckType") or DEEP_HEALTH_CHECKS
    if isinstance(value, str) or not isinstance(value, (tuple, list)) or any(v not in allowed for v in value) \
            or len(set(value)) != len(value):
        raise ConfigError(f"{prop} must be a tuple of distinct checks from {', '.join(allowed)} (or () for none), got {_shown(value)}")


def check_min_count(prop: str, value: Any, count: int) -> None:
    """``MinInstanceCount``: botocore's ``ClusterInstanceCount`` range, and at most ``InstanceCount``
    (the CloudFormation schema: "MinInstanceCount must be less than or equal to InstanceCount")."""
    if value is None:
        return
    if not _whole(value, 0, MAX_COUNT):
        raise ConfigError(f"{prop} must be a whole number from 0 to {MAX_COUNT} (MinInstanceCount) or None, got {_shown(value)}")
    if value > count:
        raise ConfigError(f"{prop} must be at most the group's count {count} (MinInstanceCount <= InstanceCount), got {value}")


def check_kubernetes_only(prop: str, orchestrator: str, value: Any) -> None:
    """Node labels and taints are Kubernetes' (``ClusterKubernetesConfig``: "the Kubernetes configuration
    for the instance group"): a Slurm cluster has no Kubernetes node to put them on."""
    if value and orchestrator != "eks":
        raise ConfigError(f"{prop} are Kubernetes node labels/taints (KubernetesConfig), for orchestrator='eks' only, "
                          f"got {_shown(value) if not isinstance(value, dict) else dict(value)!r} on a {orchestrator} cluster")


def _kubernetes_key_problem(key: str) -> Optional[str]:
    found = api.pattern("ClusterKubernetesLabelKey") or _K8S_KEY
    if not found.fullmatch(key):
        return "letters, digits, '-', '_', '.' with an optional DNS-subdomain prefix and '/'"
    prefix, _, name = key.rpartition("/")
    if len(prefix) > K8S_PREFIX_MAX or len(name) > K8S_NAME_MAX:
        return f"a prefix of at most {K8S_PREFIX_MAX} and a name of at most {K8S_NAME_MAX} characters (Kubernetes)"
    return None


def _kubernetes_value_problem(value: Any, shape: str) -> Optional[str]:
    found = api.pattern(shape) or _K8S_VALUE
    bounds = api.length(shape) or (1, K8S_NAME_MAX)
    if not isinstance(value, str) or not found.fullmatch(value) or not bounds[0] <= len(value) <= bounds[1]:
        return (f"{bounds[0]} to {bounds[1]} letters, digits, '-', '_', '.', starting and ending with a letter or digit")
    return None


def check_kubernetes_labels(prop: str, labels: Any) -> None:
    """``KubernetesConfig.Labels``: at most 50; keys are Kubernetes qualified names (botocore
    ``ClusterKubernetesLabelKey``; Kubernetes documentation, "Labels and Selectors"), values 1 to 63
    characters of ``ClusterKubernetesLabelValue`` (the API refuses the empty value Kubernetes allows)."""
    if not isinstance(labels, Mapping):
        raise PropTypeError(f"{prop} must be a mapping of label keys to values, got {_shown(labels)}")
    if len(labels) > MAX_KUBERNETES_ITEMS:
        raise ConfigError(f"{prop} must hold at most {MAX_KUBERNETES_ITEMS} labels (KubernetesConfig.Labels), got {len(labels)}")
    for key, value in labels.items():
        problem = _kubernetes_key_problem(key) if isinstance(key, str) else "a string"
        if problem:
            raise ConfigError(f"{prop} key {key!r} must be {problem} (a Kubernetes label key)")
        problem = _kubernetes_value_problem(value, "ClusterKubernetesLabelValue")
        if problem:
            raise ConfigError(f"{prop}[{key!r}] must be {problem} (a Kubernetes label value), got {_shown(value)}")


def check_kubernetes_taints(prop: str, taints: Any) -> None:
    """``KubernetesConfig.Taints``: at most 50 :class:`KubernetesTaint`, each key a Kubernetes
    qualified name, an optional value of 1 to 63 characters, and one of the three effects (botocore
    ``ClusterKubernetesTaint``; Kubernetes documentation, "Taints and Tolerations")."""
    if isinstance(taints, (str, KubernetesTaint)) or not isinstance(taints, (list, tuple)):
        raise PropTypeError(f"{prop} must be a list of KubernetesTaint(key, value, effect), got {_shown(taints)}")
    if len(taints) > MAX_KUBERNETES_ITEMS:
        raise ConfigError(f"{prop} must hold at most {MAX_KUBERNETES_ITEMS} taints (KubernetesConfig.Taints), got {len(taints)}")
    effects = api.enum("ClusterKubernetesTaintEffect") or TAINT_EFFECTS
    for index, taint in enumerate(taints):
        at = f"{prop}[{index}]"
        if not isinstance(taint, KubernetesTaint):
            raise PropTypeError(f"{at} must be a KubernetesTaint(key, value, effect), got {_shown(taint)}")
        problem = _kubernetes_key_problem(taint.key) if isinstance(taint.key, str) else "a string"
        if problem:
            raise ConfigError(f"{at}.key {taint.key!r} must be {problem} (a Kubernetes taint key)")
        if taint.value is not None:
            problem = _kubernetes_value_problem(taint.value, "ClusterKubernetesTaintValue")
            if problem:
                raise ConfigError(f"{at}.value must be {problem} or None (a Kubernetes taint value), got {_shown(taint.value)}")
        if taint.effect not in effects:
            raise ConfigError(f"{at}.effect must be one of {', '.join(effects)}, got {_shown(taint.effect)}")


def check_update_schedule(prop: str, value: Any) -> Optional[str]:
    """``ScheduledUpdateConfig.ScheduleExpression``: botocore's ``CronScheduleExpression`` says only "a
    cron expression" of 1 to 256 characters; the CloudFormation schema (cfn-lint's copy; the template
    reference, "AWS::SageMaker::Cluster ScheduledUpdateConfig") gives the form it accepts:
    ``cron(<minute> <hour> <day-of-month or ?> <month or *> <day-of-week or ?> <year or *>)``.
    Returns a note when not evaluated (cfn-lint not installed)."""
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= 256:
        raise ConfigError(f"{prop} must be a cron expression like 'cron(0 3 ? * SUN *)' (ScheduleExpression), got {_shown(value)}")
    found = api.schedule_expression_pattern()
    if found is None:
        return f"{prop} {value!r} not evaluated: cfn-lint is not installed (pip install 'smddp-infra[cli]')"
    if not found.fullmatch(value):
        raise ConfigError(f"{prop} must be cron(<minute> <hour> <day-of-month or ?> <month or *> <day-of-week or ?> "
                          f"<year or *>) as CloudFormation's ScheduleExpression pattern allows, e.g. 'cron(0 3 ? * SUN *)', "
                          f"got {value!r}")
    return None


def check_image_id(prop: str, value: Any) -> None:
    """``ImageId``: ``ami-`` and 8 to 17 hex digits (botocore ``ImageId``). The API also takes
    ``default``, but the CloudFormation schema gives ``ImageId`` the format ``AWS::EC2::Image.Id``, which
    ``default`` is not: cfn-lint (E1152) and aws-cdk-lib's synth-time CloudFormation validation refuse
    it, so it is refused here in one line (leaving ``image_id`` out is HyperPod's default image)."""
    if value is None:
        return
    found = api.pattern("ImageId") or re.compile(r"(ami-[0-9a-fA-F]{8,17}|default)")
    if not isinstance(value, str) or not found.fullmatch(value):
        raise ConfigError(f"{prop} must be an AMI id (ami- and 8 to 17 hex digits) (ImageId), got {_shown(value)}")
    if value == "default" and api.image_id_format() == "AWS::EC2::Image.Id":
        raise ConfigError(f"{prop} 'default' is not an AMI id, and CloudFormation's ImageId has the format "
                          "AWS::EC2::Image.Id (cfn-lint E1152 refuses it): leave image_id out for HyperPod's default image")


def spot_with_plan_warning(prop: str, group: InstanceGroup) -> Optional[str]:
    """May fail: Spot capacity (``CapacityRequirements.Spot``) on a group that also draws from a training
    plan (reserved capacity bought up front, CreateTrainingPlan). The API model has no rule joining
    them and no AWS page found says HyperPod accepts or refuses both: UNCONFIRMED, so a warning."""
    if group.spot is True and group.training_plan_arn is not None:
        return (f"{prop}: spot=True with training_plan_arn: a training plan is reserved capacity and Spot is EC2's spare "
                "capacity; whether HyperPod accepts both on one group is UNCONFIRMED (no API rule or AWS page found): "
                "use one of them")
    return None


def check_one_controller(prop: str, orchestrator: str, groups: Sequence[InstanceGroup]) -> None:
    """A Slurm cluster has exactly one Controller group, of at least one instance."""
    if orchestrator != "slurm":
        return
    controllers = [(i, g) for i, g in enumerate(groups) if g.slurm_node_type == "Controller"]
    if len(controllers) != 1:
        where = ", ".join(f"{prop}[{i}] {g.name!r}" for i, g in controllers) or "none"
        raise ConfigError(f"{prop} must hold exactly one group with slurm_node_type='Controller' (the Slurm head node), "
                          f"got {len(controllers)}: {where}")
    index, controller = controllers[0]
    if controller.count < 1:
        raise ConfigError(f"{prop}[{index}].count must be at least 1 for the Controller group {controller.name!r}, got {controller.count}")


def default_health_checks(instance_type: str) -> tuple[str, ...]:
    """Both single-node deep health checks on accelerator EFA types (catalog), none elsewhere."""
    instance = EFA_INSTANCE_TYPES.get(instance_type)
    return DEEP_HEALTH_CHECKS if instance is not None and instance.accelerators > 0 else ()


def health_checks(group: InstanceGroup) -> tuple[str, ...]:
    """The group's checks: as given, or the default when every one of its types has it (a flexible
    group's instances may be any of them)."""
    if group.deep_health_checks is not None:
        return tuple(group.deep_health_checks)
    found = {default_health_checks(kind) for kind in group.types}
    return found.pop() if len(found) == 1 else ()


def node_addresses(group: InstanceGroup, orchestrator: str, override: Optional[int]) -> NodeAddresses:
    """The private IPs one node of ``group`` takes: ``ips_per_node`` when given, else the figure of its
    instance type, orchestrator and interface (:func:`smddp_infra.facts.addresses.addresses_per_node`,
    each part cited there; the VPC CNI as EKS installs it, without prefix delegation)."""
    if override is not None:
        return NodeAddresses(override, override, f"ips_per_node {override}, as given")
    return max((addresses_per_node(kind, orchestrator=orchestrator, interface=group.network_interface or "efa")
                for kind in group.types), key=lambda plan: plan.addresses)


def addresses_needed(groups: Sequence[InstanceGroup], override: Optional[int], orchestrator: str = "slurm") -> int:
    return sum(g.count * node_addresses(g, orchestrator, override).addresses for g in groups)


def check_fits_subnet(prop: str, groups: Sequence[InstanceGroup], *, ips_override: Optional[int], subnet_mask: int,
                      other_ips: int, orchestrator: str = "slurm", subnet: str = "the training subnet") -> None:
    """Every node's addresses, plus what else lives in the subnet (the file system, endpoints),
    within the subnet's usable addresses (AWS reserves 5 in every subnet): error when certain, as
    each group's figure is what a node certainly takes. The way out is a NEW network with a larger
    training subnet, or fewer nodes: a subnet's ``CidrBlock`` is create-only, so a deployed
    network's CIDR is never changed in place."""
    usable = usable_addresses(subnet_mask)
    plans = [(index, group, node_addresses(group, orchestrator, ips_override)) for index, group in enumerate(groups)]
    nodes = sum(group.count * plan.addresses for _, group, plan in plans)
    if nodes + other_ips <= usable:
        return
    index, group, plan = max(plans, key=lambda p: p[1].count * p[2].addresses)
    rest = nodes - group.count * plan.addresses
    raise ConfigError(
        f"{prop}: {sum(g.count for g in groups)} nodes need {nodes} private IPs + {other_ips} for the file system and "
        f"endpoints, more than {subnet} (/{subnet_mask}, {usable} usable addresses) holds; {prop}[{index}] "
        f"{group.name!r} takes {group.count} x {plan.addresses} ({_typed(group, orchestrator)} on {orchestrator}: {plan.source})"
        f"{f', the other groups {rest}' if len(groups) > 1 else ''}; a new network with a /"
        f"{smallest_mask_for(nodes + other_ips)} or larger training subnet holds them (the network's max_instance_count "
        "/ smddp:maxInstanceCount; a subnet's CIDR is create-only: build a new network, never change this one in "
        "place), or use fewer nodes")


def _typed(group: InstanceGroup, orchestrator: str) -> str:
    """The group's type, or a flexible group's most demanding one (its figure is the group's)."""
    if len(group.types) == 1:
        return group.types[0]
    interface = group.network_interface or "efa"
    most = max(group.types, key=lambda kind: addresses_per_node(kind, orchestrator=orchestrator, interface=interface).addresses)
    return f"{most}, the most demanding of its {len(group.types)} instance_types"


def check_groups(prop: str, orchestrator: str, groups: Sequence[InstanceGroup]) -> list[str]:
    """Every per-group rule, then the cluster's: the notes of checks not evaluated."""
    notes: list[Optional[str]] = []  # None: evaluated
    for index, group in enumerate(groups):
        at = f"{prop}[{index}]"
        check_name(f"{at}.name", group.name)
        notes.extend(check_group_2026(at, orchestrator, group))
        notes.append(check_instance_type(f"{at}.instance_type", group.instance_type) if group.instance_type is not None else None)
        check_count(f"{at}.count", group.count)
        check_threads_per_core(f"{at}.threads_per_core", group.threads_per_core)
        check_ebs_volume(f"{at}.ebs_volume_gib", group.ebs_volume_gib)
        notes.append(check_training_plan_arn(f"{at}.training_plan_arn", group.training_plan_arn))
        check_slurm_node_type(f"{at}.slurm_node_type", orchestrator, group.slurm_node_type)
        check_partition(f"{at}.partition", orchestrator, group.slurm_node_type, group.partition)
        check_deep_health_checks(f"{at}.deep_health_checks", group.deep_health_checks)
        flag().check(f"{at}.mount_file_system", group.mount_file_system)
        check_min_count(f"{at}.min_count", group.min_count, group.count)
        flag().check(f"{at}.spot", group.spot)
        check_kubernetes_only(f"{at}.kubernetes_labels", orchestrator, group.kubernetes_labels)
        check_kubernetes_labels(f"{at}.kubernetes_labels", group.kubernetes_labels)
        check_kubernetes_only(f"{at}.kubernetes_taints", orchestrator, group.kubernetes_taints)
        check_kubernetes_taints(f"{at}.kubernetes_taints", group.kubernetes_taints)
        notes.append(check_update_schedule(f"{at}.update_schedule", group.update_schedule))
        check_image_id(f"{at}.image_id", group.image_id)
    check_unique_names(prop, groups)
    check_one_controller(prop, orchestrator, groups)
    return [note for note in notes if note]


# --- the instance group's 2026 properties (issue 42): each limit read from the installed cfn-lint
# schema (``AWS::SageMaker::Cluster``) or botocore, the figure in brackets used without them -------


def _schema_enum(path: tuple[str, ...], shape: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """The values CloudFormation's schema allows (it writes the template), else botocore's enum."""
    found = api.cluster_schema_at(*path)
    if isinstance(found, Mapping) and found.get("enum"):
        return tuple(found["enum"])
    return api.enum(shape) or default


def check_one_type_kind(prop: str, instance_type: Any, instance_types: Any) -> None:
    """``InstanceType`` and ``InstanceRequirements`` "are mutually exclusive" (botocore
    ``ClusterInstanceGroupSpecification.InstanceRequirements``), and a group needs one of them."""
    if instance_type is not None and instance_types is not None:
        raise ConfigError(f"{prop}: pass instance_type or instance_types, not both (InstanceType and InstanceRequirements "
                          f"are mutually exclusive: botocore CreateCluster), got {instance_type!r} and {_shown(instance_types)}")
    if instance_type is None and instance_types is None:
        raise ConfigError(f"{prop}.instance_type is required (or instance_types=[...] for a flexible group), got none")


def check_instance_types(prop: str, value: Any) -> list[str]:
    """``InstanceRequirements.InstanceTypes``: 1 to 20 distinct HyperPod types (the schema's ``minItems``/
    ``maxItems``, botocore ``ClusterInstanceTypes``), in priority order. Returns the notes of types not evaluated."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise PropTypeError(f"{prop} must be a list of HyperPod instance types like ['ml.p5.48xlarge', 'ml.p5e.48xlarge'], "
                            f"got {_shown(value)}")
    found = api.cluster_schema_at("InstanceRequirements", "properties", "InstanceTypes")
    low, high = ((int(found["minItems"]), int(found["maxItems"])) if isinstance(found, Mapping) and "maxItems" in found
                 else api.length("ClusterInstanceTypes") or (1, 20))
    if not low <= len(value) <= high or len(set(value)) != len(value):
        raise ConfigError(f"{prop} must list {low} to {high} distinct instance types (InstanceRequirements.InstanceTypes), "
                          f"got {len(value)}: {_shown(list(value))}")
    notes = [check_instance_type(f"{prop}[{index}]", kind) for index, kind in enumerate(value)]
    return [note for note in notes if note][:1]


def _check_schema_choice(prop: str, value: Any, path: tuple[str, ...], shape: str, default: tuple[str, ...],
                         where: str) -> None:
    """``value`` is None or one of the installed schema's enum at ``path`` (botocore's ``shape``, else ``default``)."""
    if value is None:
        return
    allowed = _schema_enum(path, shape, default)
    if value not in allowed:
        raise ConfigError(f"{prop} must be one of {', '.join(map(repr, allowed))} ({where}) or None, got {_shown(value)}")


def check_network_interface(prop: str, value: Any) -> None:
    """``NetworkInterface.InterfaceType``: ``efa`` or ``efa-only`` (schema and botocore ``ClusterInterfaceType``)."""
    _check_schema_choice(prop, value, ("ClusterNetworkInterface", "properties", "InterfaceType"), "ClusterInterfaceType",
                         ("efa", "efa-only"), "NetworkInterface.InterfaceType")


def check_ebs_kms_key_id(prop: str, value: Any) -> None:
    """``EbsVolumeConfig.VolumeKmsKeyId``: the schema's pattern (letters, digits, ``:/_-``) and length (botocore ``KmsKeyId``)."""
    if value is None:
        return
    found = api.cluster_schema_at("ClusterEbsVolumeConfig", "properties", "VolumeKmsKeyId")
    shape = re.compile(str(found["pattern"])) if isinstance(found, Mapping) and "pattern" in found else re.compile(r"^[a-zA-Z0-9:/_-]*$")
    high = int(found.get("maxLength", 2048)) if isinstance(found, Mapping) else 2048
    if not isinstance(value, str) or not value or len(value) > high or not shape.search(value):
        raise ConfigError(f"{prop} must be a KMS key id or ARN of 1 to {high} letters, digits and ':/_-' "
                          f"(EbsVolumeConfig.VolumeKmsKeyId) or None, got {_shown(value)}")


def check_root_volume_key(prop: str, root_volume: Any, key_id: Optional[str], network_key: bool) -> None:
    """``RootVolume: true`` needs a customer key: "You must specify a KMS key ID for VolumeKmsKeyId"
    (botocore ``ClusterEbsVolumeConfig.RootVolume``); the network's key is the default."""
    flag().check(prop, root_volume)
    if root_volume and key_id is None and not network_key:
        raise ConfigError(f"{prop}=True needs a KMS key (RootVolume needs VolumeKmsKeyId: botocore ClusterEbsVolumeConfig), "
                          "got no ebs_kms_key_id and a network without an encryption key")


def check_image_release_version(prop: str, orchestrator: str, value: Any) -> None:
    """``ImageReleaseVersion``: ``MAJOR.MINOR.PATCH`` of 5 to 64 characters, "Supported only for
    EKS-orchestrated clusters" (the installed schema's pattern, length and description)."""
    if value is None:
        return
    found = api.cluster_schema_at("ClusterInstanceGroup", "properties", "ImageReleaseVersion")
    found = found if isinstance(found, Mapping) else {}
    shape = re.compile(str(found.get("pattern", r"^[0-9]+\.[0-9]+\.[0-9]+$")))
    low, high = int(found.get("minLength", 5)), int(found.get("maxLength", 64))
    if not isinstance(value, str) or not shape.search(value) or not low <= len(value) <= high:
        raise ConfigError(f"{prop} must be a HyperPod AMI version MAJOR.MINOR.PATCH like '1.2.3' ({low} to {high} "
                          f"characters, ImageReleaseVersion) or None, got {_shown(value)}")
    if orchestrator != "eks":
        raise ConfigError(f"{prop} (ImageReleaseVersion) is supported only on EKS-orchestrated clusters (CloudFormation "
                          f"schema), got {value!r} on a {orchestrator} cluster")


def check_auto_patch(prop: str, value: Any) -> None:
    """``AutoPatchConfig.PatchingStrategy`` as CloudFormation's schema allows it (``WhenIdle``,
    ``WhenAllIdle``; botocore also has ``DrainFirst``, which the schema does not take)."""
    _check_schema_choice(prop, value, ("AutoPatchConfig", "properties", "PatchingStrategy"), "ClusterPatchingStrategy",
                         ("WhenIdle", "WhenAllIdle"), "AutoPatchConfig.PatchingStrategy")


def check_slurm_config_strategy(prop: str, orchestrator: str, value: Any) -> None:
    """``Orchestrator.Slurm.SlurmConfigStrategy``: ``Overwrite``, ``Managed`` or ``Merge`` (schema and
    botocore ``ClusterSlurmConfigStrategy``), on a Slurm cluster only."""
    if value is None:
        return
    _check_schema_choice(prop, value, ("ClusterOrchestratorSlurmConfig", "properties", "SlurmConfigStrategy"),
                         "ClusterSlurmConfigStrategy", ("Overwrite", "Managed", "Merge"), "Orchestrator.Slurm.SlurmConfigStrategy")
    if orchestrator != "slurm":
        raise ConfigError(f"{prop} is for orchestrator='slurm' only (Orchestrator.Slurm), got {value!r} with "
                          f"orchestrator={orchestrator!r}")


def check_group_2026(at: str, orchestrator: str, group: InstanceGroup) -> list[str]:
    """The 2026 properties of one group (``at`` is ``instance_groups[i]``): the notes of checks not evaluated."""
    check_one_type_kind(at, group.instance_type, group.instance_types)
    notes = check_instance_types(f"{at}.instance_types", group.instance_types)
    check_network_interface(f"{at}.network_interface", group.network_interface)
    check_ebs_kms_key_id(f"{at}.ebs_kms_key_id", group.ebs_kms_key_id)
    check_image_release_version(f"{at}.image_release_version", orchestrator, group.image_release_version)
    check_auto_patch(f"{at}.auto_patch", group.auto_patch)
    return notes


# --- home directories on FSx for OpenZFS (issue 42 item 4): the table is sizing.openzfs_rules --------


def check_fsx_mount_path(prop: str, value: Any) -> None:
    """``FsxOpenZfsConfig.MountPath``: the installed schema's pattern (absolute, no ``//``, no trailing
    ``/``) and length, else botocore's ``ClusterFsxMountPath``."""
    found = api.cluster_schema_at("ClusterFsxOpenZfsConfig", "properties", "MountPath")
    shape = (re.compile(str(found["pattern"])) if isinstance(found, Mapping) and "pattern" in found
             else re.compile("^" + (api.pattern("ClusterFsxMountPath") or re.compile(r"/[a-zA-Z0-9._/-]+")).pattern + "$"))
    if not isinstance(value, str) or not shape.search(value) or len(value) > 1024:
        raise ConfigError(f"{prop} must be an absolute path like /home of letters, digits and '._-' between single '/' "
                          f"(FsxOpenZfsConfig.MountPath), got {_shown(value)}")


def check_openzfs_created(prop: str, deployment_type: Any, capacity_gib: Any, throughput_mbps: Any,
                          backup_days: Any) -> None:
    """A file system the cluster creates: a deployment type of one subnet (MULTI_AZ_1 needs a standby
    subnet in a second AZ and ``PreferredSubnetId``, and the training network has one subnet), SSD
    capacity 64 to 524,288 GiB, the type's throughput steps, backups 0 to 90 days
    (:mod:`smddp_infra.sizing.openzfs_rules`, each with its source)."""
    if deployment_type not in zfs.DEPLOYMENT_TYPES:
        raise ConfigError(f"{prop}.deployment_type must be one of {', '.join(map(repr, zfs.DEPLOYMENT_TYPES[:4]))} "
                          f"(OpenZFSConfiguration.DeploymentType), got {_shown(deployment_type)}")
    if deployment_type == zfs.MULTI_AZ_1:
        raise ConfigError(f"{prop}.deployment_type 'MULTI_AZ_1' needs a standby subnet in a second Availability Zone "
                          "(PreferredSubnetId) and the training network has one subnet: create it beside the network and "
                          "import it (file_system_id=, dns_name=, security_group=)")
    low, high = zfs.MIN_CAPACITY_GIB, zfs.MAX_CAPACITY_GIB
    if not _whole(capacity_gib, low, high):
        raise ConfigError(f"{prop}.storage_capacity_gib must be a whole number of GiB from {low:,} to {high:,} "
                          f"(FSx for OpenZFS StorageCapacity), got {_shown(capacity_gib)}")
    problem = (zfs.throughput_problem(deployment_type, throughput_mbps)
               if isinstance(throughput_mbps, int) and not isinstance(throughput_mbps, bool) else "a whole number of MB/s")
    if problem:
        raise ConfigError(f"{prop}.throughput_mbps must be one the deployment type takes: {problem}, got {_shown(throughput_mbps)}")
    if not _whole(backup_days, 0, zfs.MAX_BACKUP_RETENTION_DAYS):
        raise ConfigError(f"{prop}.backup_retention_days must be a whole number of days from 0 (off) to "
                          f"{zfs.MAX_BACKUP_RETENTION_DAYS} (AutomaticBackupRetentionDays), got {_shown(backup_days)}")


def _id_or_token(value: Any, shape: re.Pattern[str]) -> bool:
    """An id of ``shape``, or a token: a value resolved at deploy, whose shape CloudFormation checks."""
    return isinstance(value, str) and (value.startswith("${Token[") or shape.fullmatch(value) is not None)


def check_openzfs_imported(prop: str, file_system_id: Any, dns_name: Any, group_id: Any, created: Sequence[str]) -> None:
    """An imported file system: its id (``fs-`` and 8+ hex digits, botocore ``FileSystemId``), DNS name
    (``FsxOpenZfsConfig.DnsName``: botocore ``ClusterDnsName``) and security group id (``sg-`` and 8 to 17
    hex digits, :data:`smddp_infra.facts.arns.SECURITY_GROUP_ID`), or tokens; none of the fields that only
    size a file system this construct creates (``created``: the names given)."""
    if created:
        raise ConfigError(f"{prop}: {', '.join(created)} size a file system the cluster creates; an imported one "
                          f"(file_system_id={file_system_id!r}) keeps its own: leave them out")
    if not _id_or_token(file_system_id, api.pattern("FileSystemId") or re.compile(r"(fs-[0-9a-f]{8,})")):
        raise ConfigError(f"{prop}.file_system_id must be an FSx file system id (fs- and 8 or more hex digits), got "
                          f"{_shown(file_system_id)}")
    if not _id_or_token(dns_name, api.pattern("ClusterDnsName") or re.compile(r"((fs|fc)i?-[0-9a-f]{8,}\..{4,253})")):
        raise ConfigError(f"{prop}.dns_name must be the file system's DNS name (fs-....fsx.<region>.amazonaws.com: "
                          f"FsxOpenZfsConfig.DnsName), got {_shown(dns_name)}")
    if not _id_or_token(group_id, arns.SECURITY_GROUP_ID):
        raise ConfigError(f"{prop}.security_group_id must be the file system's security group id (sg- and 8 to 17 hex "
                          f"digits), got {_shown(group_id)}")
