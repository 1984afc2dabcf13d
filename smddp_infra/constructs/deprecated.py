"""The old, flat keywords of the constructs that now take grouped options, and where each went.

Each construct's section maps its old keywords to the group that holds them now, for one minor
release: a call with old keywords still builds the same template, with ONE DeprecationWarning
naming the new place of the keywords it used. Delete a section when its release has passed.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, TypedDict, Union

from smddp_infra.constructs import _validation as v
from smddp_infra.errors import ConfigError, PropTypeError, unknown_field

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch, aws_ec2 as ec2, aws_eks as eks_v1, aws_eks_v2 as eks
    from aws_cdk import aws_iam as iam, aws_lambda as lambda_, aws_s3 as s3

    from smddp_infra.hyperpod.eks import HyperPodEks


# --- HyperPodCluster ---------------------------------------------------------------------------------


class HyperPodClusterLegacyProps(TypedDict, total=False):
    """``HyperPodCluster``'s flat keywords before the groups (each is the same-named field of the
    group :data:`HYPERPOD_GROUPS` names; the network's parts go to ``TrainingNetwork.from_attributes``)."""

    orchestrator: str
    eks_cluster_arn: Optional[str]
    eks_settings: Optional[HyperPodEks]
    eks_cluster: Optional[Union[eks.ICluster, eks_v1.ICluster]]
    eks_kubectl_layer: Optional[lambda_.ILayerVersion]
    node_recovery: bool
    continuous_provisioning: bool
    autoscaling: bool
    tiered_checkpointing_memory_percent: Optional[int]
    lifecycle_script: Optional[str]
    lifecycle_prefix: str
    lifecycle_bucket: Optional[s3.IBucket]
    mount_path: str
    ips_per_node: Optional[int]
    interface_endpoints: Optional[Sequence[str]]
    update_rollback_alarms: Sequence[Union[cloudwatch.IAlarm, str]]
    role: Optional[iam.IRole]
    autoscaling_role: Optional[iam.IRole]
    training_subnet: Optional[ec2.ISubnet]
    security_groups: Optional[Sequence[ec2.ISecurityGroup]]
    job_bucket: Optional[s3.IBucket]
    checkpoint_prefix: Optional[str]
    file_system_id: Optional[str]
    file_system_dns_name: Optional[str]
    file_system_mount_name: Optional[str]


#: The group prop (and its class) that holds each old keyword now; ``network`` takes the parts as
#: ``TrainingNetwork.from_attributes(...)``.
HYPERPOD_GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "orchestration": ("Orchestration", ("orchestrator", "eks_cluster_arn", "eks_settings", "eks_cluster", "eks_kubectl_layer")),
    "provisioning": ("Provisioning", ("node_recovery", "continuous_provisioning", "autoscaling",
                                      "tiered_checkpointing_memory_percent")),
    "lifecycle": ("Lifecycle", ("lifecycle_script", "lifecycle_prefix", "lifecycle_bucket")),
    "nodes": ("Nodes", ("mount_path", "ips_per_node", "interface_endpoints")),
    "updates": ("Updates", ("update_rollback_alarms",)),
    "roles": ("Roles", ("role", "autoscaling_role")),
    "network": ("TrainingNetwork.from_attributes", ("training_subnet", "security_groups", "job_bucket", "checkpoint_prefix",
                                                    "file_system_id", "file_system_dns_name", "file_system_mount_name")),
}


def hyperpod_legacy(legacy: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The old keywords in ``legacy``, by the group prop that holds them now (the network's parts
    only when not None, as before); one DeprecationWarning naming where they go. An unknown
    keyword, or an old keyword beside the group that holds it (``given``), is one line."""
    if not legacy:
        return {}
    known = [name for _, names in HYPERPOD_GROUPS.values() for name in names]
    for name in legacy:
        if name not in known:
            raise unknown_field("HyperPodCluster", name, [*given, "instance_groups", "cluster_name", *known], what="keyword")
    placed: dict[str, dict[str, Any]] = {}
    for group, (_, names) in HYPERPOD_GROUPS.items():
        used = {n: legacy[n] for n in names if n in legacy and (group != "network" or legacy[n] is not None)}
        if used and given.get(group) is not None and group == "network":
            raise ConfigError(f"pass network, or its parts ({', '.join(sorted(used))}), not both")
        if used and given.get(group) is not None:
            raise ConfigError(f"pass {', '.join(used)} inside {group}={HYPERPOD_GROUPS[group][0]}(...), not beside "
                              f"{group}=")
        if used:
            placed[group] = used
    if placed:
        where = "; ".join(f"{group}={HYPERPOD_GROUPS[group][0]}({'scope, id, ' if group == 'network' else ''}"
                          f"{', '.join(f'{n}=...' for n in used)})" for group, used in placed.items())
        warnings.warn(f"HyperPodCluster's flat keywords are deprecated (one minor release): pass {where}",
                      DeprecationWarning, stacklevel=5)  # _Options.of, __init__, jsii's metaclass
    return placed


def check_hyperpod_parts(parts: Mapping[str, Any]) -> None:
    """The old parts of a network, checked before ``TrainingNetwork.from_attributes`` takes them
    (which checks nothing: a network imported by its parts is the platform's). None at all: the
    cluster was given no network."""
    if not parts:
        raise PropTypeError("network is required: pass a TrainingNetwork, or TrainingNetwork.from_attributes(scope, id, "
                            "training_subnet=..., security_groups=..., job_bucket=...) for one built elsewhere")
    v.require("training_subnet", parts.get("training_subnet"), "ISubnet", optional=False)
    groups = v.require_each("security_groups", parts.get("security_groups", []), "ISecurityGroup")
    if not 1 <= len(groups) <= 5:
        raise ConfigError(f"security_groups must list 1 to 5 groups (VpcConfig.SecurityGroupIds), got {len(groups)}")
    v.require("job_bucket", parts.get("job_bucket"), "IBucket", optional=False)
    dns, mount = parts.get("file_system_dns_name"), parts.get("file_system_mount_name")
    if (dns is None) != (mount is None):
        raise ConfigError("file_system_dns_name and file_system_mount_name go together (FsxLustreConfig needs "
                          f"both), got dns name {dns!r} and mount name {mount!r}")


# --- end HyperPodCluster -----------------------------------------------------------------------------
