"""HyperPod props checked in aws-cdk-lib's ``validateProps()`` manner: one validator per rule.

Each validator takes plain values and the name of the setting the user wrote
(``instance_groups[1].instance_type``, ``smddp:instanceType``) and raises ONE line
(:class:`~smddp_infra.errors.ConfigError`) naming it, the value and what is allowed. What the
API accepts comes from the installed botocore (:mod:`smddp_infra.hyperpod.api`); without
botocore a check that needs it is not evaluated, and :func:`check_groups` says so in the notes
it returns (the construct turns them into synth infos).
"""

from __future__ import annotations

import math
import re
from typing import Any, Optional, Sequence

from smddp_infra.errors import ConfigError, PropTypeError
from smddp_infra.hyperpod import api
from smddp_infra.hyperpod.values import (
    DEEP_HEALTH_CHECKS,
    DEFAULT_IPS_PER_EFA_NODE,
    DEFAULT_IPS_PER_NODE,
    ORCHESTRATORS,
    SLURM_NODE_TYPES,
    InstanceGroup,
)
from smddp_infra.spec.subnets import AWS_RESERVED_IPS
from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES

#: The API's shapes (botocore 1.44 ``ClusterInstanceGroupName``, ``ClusterPartitionName``); used
#: when botocore is not installed, so a name is still checked.
_NAME = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")
#: CreateCluster ``InstanceGroups``: 1 to 100 groups.
MAX_GROUPS = 100
#: ``ClusterInstanceCount``: 0 to 6,758 per group; ``ClusterThreadsPerCore``: 1 or 2;
#: ``ClusterEbsVolumeSizeInGB``: 1 to 16,384 (botocore 1.44 sagemaker model).
MAX_COUNT = 6758
MAX_EBS_GIB = 16384


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, (str, int, float, bool, type(None), tuple, list)) else type(value).__name__


def check_orchestrator(prop: str, value: Any) -> str:
    """``slurm`` or ``eks``."""
    if value not in ORCHESTRATORS:
        raise ConfigError(f"{prop} must be one of {', '.join(repr(o) for o in ORCHESTRATORS)}, got {_shown(value)}")
    return str(value)


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
    found = api.pattern("EksClusterArn")
    shape = found or re.compile(r"arn:aws[a-z\-]*:eks:[a-z0-9\-]*:[0-9]{12}:cluster\/[0-9A-Za-z][A-Za-z0-9\-_]{0,99}")
    if not shape.fullmatch(arn):
        raise ConfigError(f"{prop} must be an EKS cluster ARN (arn:aws:eks:<region>:<account>:cluster/<name>), got {arn!r}")
    return arn


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
    found = api.pattern("ClusterInstanceGroupName") or _NAME
    if not isinstance(name, str) or not found.fullmatch(name) or len(name) > 63:
        raise ConfigError(f"{prop} must be 1 to 63 letters, digits and hyphens, starting and ending with a letter or "
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
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_COUNT:
        raise ConfigError(f"{prop} must be a whole number from {minimum} to {MAX_COUNT} (InstanceCount), got {_shown(value)}")
    return int(value)


def check_threads_per_core(prop: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or value not in (1, 2)):
        raise ConfigError(f"{prop} must be 1 (hyperthreading off), 2 or None, got {_shown(value)}")


def check_ebs_volume(prop: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_EBS_GIB):
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
    found = api.pattern("ClusterPartitionName") or _NAME
    if not isinstance(value, str) or not found.fullmatch(value):
        raise ConfigError(f"{prop} must be letters, digits and hyphens (ClusterPartitionName), got {_shown(value)}")


def check_deep_health_checks(prop: str, value: Any) -> None:
    if value is None:
        return
    allowed = api.enum("DeepHealthCheckType") or DEEP_HEALTH_CHECKS
    if isinstance(value, str) or not isinstance(value, (tuple, list)) or any(v not in allowed for v in value) \
            or len(set(value)) != len(value):
        raise ConfigError(f"{prop} must be a tuple of distinct checks from {', '.join(allowed)} (or () for none), got {_shown(value)}")


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
    return default_health_checks(group.instance_type) if group.deep_health_checks is None else tuple(group.deep_health_checks)


def ips_per_node(group: InstanceGroup, override: Optional[int]) -> int:
    """Private IPs planned for one node of ``group``: the prop, else the UNCONFIRMED defaults."""
    if override is not None:
        return override
    return DEFAULT_IPS_PER_EFA_NODE if group.instance_type in EFA_INSTANCE_TYPES else DEFAULT_IPS_PER_NODE


def check_ips_per_node(prop: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"{prop} must be a whole number >= 1 (private IPs per HyperPod node) or None, got {_shown(value)}")


def addresses_needed(groups: Sequence[InstanceGroup], override: Optional[int]) -> int:
    return sum(g.count * ips_per_node(g, override) for g in groups)


def check_fits_subnet(prop: str, groups: Sequence[InstanceGroup], *, ips_override: Optional[int], subnet_mask: int,
                      other_ips: int, subnet: str = "the training subnet") -> None:
    """Every node's addresses, plus what else lives in the subnet (the file system, endpoints),
    within the subnet's usable addresses (AWS reserves 5 in every subnet): error when certain."""
    usable = 2 ** (32 - subnet_mask) - AWS_RESERVED_IPS
    nodes = addresses_needed(groups, ips_override)
    if nodes + other_ips > usable:
        total = sum(g.count for g in groups)
        wanted = 32 - math.ceil(math.log2(nodes + other_ips + AWS_RESERVED_IPS))
        raise ConfigError(
            f"{prop}: {total} nodes need {nodes} private IPs (ips_per_node "
            f"{ips_override if ips_override is not None else 'default, UNCONFIRMED'}) + {other_ips} for the file system "
            f"and endpoints, more than {subnet} (/{subnet_mask}, {usable} usable addresses) holds; use a /{wanted} or "
            "larger subnet (the network's max_instance_count / smddp:maxInstanceCount) or fewer nodes")


def check_groups(prop: str, orchestrator: str, groups: Sequence[InstanceGroup]) -> list[str]:
    """Every per-group rule, then the cluster's: the notes of checks not evaluated."""
    notes: list[str] = []
    for index, group in enumerate(groups):
        at = f"{prop}[{index}]"
        check_name(f"{at}.name", group.name)
        note = check_instance_type(f"{at}.instance_type", group.instance_type)
        if note:
            notes.append(note)
        check_count(f"{at}.count", group.count)
        check_threads_per_core(f"{at}.threads_per_core", group.threads_per_core)
        check_ebs_volume(f"{at}.ebs_volume_gib", group.ebs_volume_gib)
        note = check_training_plan_arn(f"{at}.training_plan_arn", group.training_plan_arn)
        if note:
            notes.append(note)
        check_slurm_node_type(f"{at}.slurm_node_type", orchestrator, group.slurm_node_type)
        check_partition(f"{at}.partition", orchestrator, group.slurm_node_type, group.partition)
        check_deep_health_checks(f"{at}.deep_health_checks", group.deep_health_checks)
        if not isinstance(group.mount_file_system, bool):
            raise PropTypeError(f"{at}.mount_file_system must be True or False, got {_shown(group.mount_file_system)}")
    check_unique_names(prop, groups)
    check_one_controller(prop, orchestrator, groups)
    return notes
