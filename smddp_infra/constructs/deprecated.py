"""The deprecated fronts, in one module: each kept, typed, for one minor release, with ONE
DeprecationWarning naming the new form, and the templates of the new form byte for byte
(docs/upgrading.md maps each keyword to its new place).
"""

from __future__ import annotations

import warnings
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, TypedDict, Union

from aws_cdk import aws_ec2 as ec2, aws_iam as iam, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.constructs.existing_filesystem import ExistingFileSystem
from smddp_infra.constructs.launch_policy import LaunchConditions, LaunchJobs, NetworkParts
from smddp_infra.constructs.monitoring import MonitoringOptions
from smddp_infra.constructs.training_network import GROUPS, TrainingNetwork
from smddp_infra.errors import ConfigError, PropTypeError, unknown_field
from smddp_infra.sizing.planner import LustrePlan
from smddp_infra.sizing.tiering import TieringPlan

# --- TrainingNetwork ---

if TYPE_CHECKING:
    from aws_cdk import aws_cloudwatch as cloudwatch, aws_eks as eks_v1, aws_eks_v2 as eks
    from aws_cdk import aws_lambda as lambda_

    from smddp_infra.hyperpod.eks import HyperPodEks


class SmddpTrainingNetwork(TrainingNetwork):
    """Deprecated: the flat-keyword front of :class:`TrainingNetwork` (one minor release).

    Same 43 keywords, same construct IDs and templates; each keyword's new place is in
    docs/upgrading.md. Emits one DeprecationWarning naming the new API.

    Attributes: those of :class:`TrainingNetwork`.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        instance_type: str = "ml.p4d.24xlarge",
        instance_count: int = 4,
        max_instance_count: Optional[int] = None,
        availability_zone: Optional[str] = None,
        availability_zone_id: Optional[str] = None,
        lustre_plan: "Optional[LustrePlan | TieringPlan]" = None,
        read_mbps_per_gpu: Optional[float] = None,
        required_throughput_mbps: Optional[float] = None,
        dataset_gib: float = 0,
        deployment_types: Optional[Sequence[str]] = None,
        max_capacity_gib: Optional[float] = None,
        efa_file_system: bool = False,
        nat_gateway: bool = False,
        vpc_cidr: str = "10.0.0.0/16",
        vpc: Optional[ec2.IVpc] = None,
        training_subnet: Optional[ec2.ISubnet] = None,
        security_group: Optional[ec2.ISecurityGroup] = None,
        additional_security_groups: Sequence[ec2.ISecurityGroup] = (),
        checkpoint_bucket: Optional[s3.IBucket] = None,
        checkpoint_noncurrent_days: int = 30,
        dataset_bucket: Optional[s3.IBucket] = None,
        dataset_prefix: str = "",
        encryption_key: Optional[kms.IKey] = None,
        create_encryption_key: bool = False,
        role: Optional[iam.IRole] = None,
        s3_prefix_list_id: Optional[str] = None,
        endpoint_security_groups: Sequence[ec2.ISecurityGroup] = (),
        allow_https_egress: Optional[bool] = None,
        ips_per_instance: Optional[int] = None,
        restrict_default_security_group: bool = False,
        file_system_access_mode: str = "ro",
        encrypt_inter_container_traffic: bool = True,
        publish_job_config: bool = True,
        job_config_output_id: Optional[str] = None,
        monthly_cost_warning_usd: Optional[float] = None,
        availability_zone_id_prefix: Optional[str] = None,
        monitoring: "bool | MonitoringOptions" = True,
        max_runtime_seconds: Optional[int] = None,
        image_account: Optional[str] = None,
        ecr_repository_arns: Optional[Sequence[str]] = None,
        file_system: Optional["ExistingFileSystem"] = None,
        training_plan_arn: Optional[str] = None,
        training_plan_availability_zone_id: Optional[str] = None,
    ) -> None:
        """
        Each keyword is the same-named field of a :class:`TrainingNetwork` group (docs/upgrading.md),
        with the default and the AWS fact documented there.

        :param instance_type: ``Workload.instance_type``; default as there.
        :param instance_count: ``Workload.instance_count``; default as there.
        :param max_instance_count: ``Placement.max_instance_count``; default as there.
        :param availability_zone: ``Placement.availability_zone``; default as there.
        :param availability_zone_id: ``Placement.availability_zone_id``; default as there.
        :param lustre_plan: ``Storage.lustre_plan``; default as there.
        :param read_mbps_per_gpu: ``Workload.read_mbps_per_gpu``; default as there.
        :param required_throughput_mbps: ``Workload.required_throughput_mbps``; default as there.
        :param dataset_gib: ``Workload.dataset_gib``; default as there.
        :param deployment_types: ``Storage.deployment_types``; default as there.
        :param max_capacity_gib: ``Storage.max_capacity_gib``; default as there.
        :param efa_file_system: ``Storage.efa_file_system``; default as there.
        :param nat_gateway: ``Placement.nat_gateway``; default as there.
        :param vpc_cidr: ``Placement.vpc_cidr``; default as there.
        :param vpc: ``Existing.vpc``; default as there.
        :param training_subnet: ``Existing.training_subnet``; default as there.
        :param security_group: ``Existing.security_group``; default as there.
        :param additional_security_groups: ``Existing.additional_security_groups``; default as there.
        :param checkpoint_bucket: ``Existing.checkpoint_bucket``; default as there.
        :param checkpoint_noncurrent_days: ``Storage.checkpoint_noncurrent_days``; default as there.
        :param dataset_bucket: ``Existing.dataset_bucket``; default as there.
        :param dataset_prefix: ``Storage.dataset_prefix``; default as there.
        :param encryption_key: ``Existing.encryption_key``; default as there.
        :param create_encryption_key: ``Security.create_encryption_key``; default as there.
        :param role: ``Existing.role``; default as there.
        :param s3_prefix_list_id: ``Placement.s3_prefix_list_id``; default as there.
        :param endpoint_security_groups: ``Existing.endpoint_security_groups``; default as there.
        :param allow_https_egress: ``Placement.allow_https_egress``; default as there.
        :param ips_per_instance: ``Placement.ips_per_instance``; default as there.
        :param restrict_default_security_group: ``Placement.restrict_default_security_group``; default as there.
        :param file_system_access_mode: ``Storage.file_system_access_mode``; default as there.
        :param encrypt_inter_container_traffic: ``Jobs.encrypt_inter_container_traffic``; default as there.
        :param publish_job_config: ``Jobs.publish_job_config``; default as there.
        :param job_config_output_id: ``Jobs.job_config_output_id``; default as there.
        :param monthly_cost_warning_usd: ``Storage.monthly_cost_warning_usd``; default as there.
        :param availability_zone_id_prefix: ``Placement.availability_zone_id_prefix``; default as there.
        :param monitoring: ``monitoring``; default as there.
        :param max_runtime_seconds: ``Jobs.max_runtime_seconds``; default as there.
        :param image_account: ``Security.image_account``; default as there.
        :param ecr_repository_arns: ``Security.ecr_repository_arns``; default as there.
        :param file_system: ``Existing.file_system``; default as there.
        :param training_plan_arn: ``Jobs.training_plan_arn``; default as there.
        :param training_plan_availability_zone_id: ``Jobs.training_plan_availability_zone_id``; default as there.
        """
        flat = {name: given for name, given in locals().items() if name not in ("self", "scope", "id", "__class__")}
        warnings.warn("SmddpTrainingNetwork is deprecated: use TrainingNetwork(scope, id, workload=Workload(...), "
                      "placement=Placement(...), storage=Storage(...), security=Security(...), jobs=Jobs(...), "
                      "monitoring=..., existing=Existing(...)); docs/upgrading.md maps each keyword",
                      DeprecationWarning, stacklevel=3)  # past jsii's JSIIMeta.__call__: the user's line
        groups = {prop: cls(**{f.name: flat[f.name] for f in fields(cls) if f.name in flat}) for prop, cls in GROUPS}
        super().__init__(scope, id, monitoring=monitoring, **groups)


# --- TrainingLaunchPolicy ---


_LAUNCH_GROUPS: tuple[tuple[str, type], ...] = (("parts", NetworkParts), ("jobs", LaunchJobs),
                                                ("conditions", LaunchConditions))


def launch_policy_groups(flat: dict[str, Any], *, parts: Optional[NetworkParts], jobs: Optional[LaunchJobs],
                         conditions: Optional[LaunchConditions]) -> tuple[Any, Any, Any]:
    """The groups the flat keywords fill, with ONE DeprecationWarning naming each keyword's new place."""
    known = {f.name: prop for prop, cls in _LAUNCH_GROUPS for f in fields(cls)}
    unknown = sorted(set(flat) - set(known))
    if unknown:
        raise PropTypeError(f"TrainingLaunchPolicy got an unexpected keyword {unknown[0]!r}: its props are network, "
                            "parts, jobs, conditions and managed_policy_name")
    given = {"parts": parts, "jobs": jobs, "conditions": conditions}
    built = []
    for prop, cls in _LAUNCH_GROUPS:
        mine = {name: value for name, value in flat.items() if known[name] == prop}
        if mine and given[prop] is not None:
            raise ConfigError(f"{', '.join(mine)}: pass {'them' if len(mine) > 1 else 'it'} inside {prop}="
                              f"{cls.__name__}(...), not beside it")
        built.append(cls(**mine) if mine else given[prop])
    classes = {prop: cls.__name__ for prop, cls in _LAUNCH_GROUPS}
    moved = ", ".join(f"{name} -> {known[name]}={classes[known[name]]}({name}=...)" for name in flat)
    warnings.warn(f"TrainingLaunchPolicy's flat keywords are deprecated: {moved} (docs/upgrading.md)",
                  DeprecationWarning, stacklevel=4)  # past __init__ and jsii's JSIIMeta.__call__: the user's line
    return built[0], built[1], built[2]


# --- end of TrainingLaunchPolicy ---



# --- HyperPodCluster ---------------------------------------------------------------------------------


class HyperPodClusterLegacyProps(TypedDict, total=False):
    """``HyperPodCluster``'s flat keywords before the groups (each is the same-named field of the
    group that holds it now; the network's parts, :data:`HYPERPOD_PARTS`, go to
    ``TrainingNetwork.from_attributes``)."""

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


#: The old keywords of the network's parts: ``network`` takes them as ``TrainingNetwork.from_attributes(...)``.
HYPERPOD_PARTS = ("training_subnet", "security_groups", "job_bucket", "checkpoint_prefix", "file_system_id",
                  "file_system_dns_name", "file_system_mount_name")


#: Group fields added after the flat keywords were deprecated: they never had a flat form.
NOT_FLAT = frozenset({"home_directories"})


def hyperpod_legacy(legacy: Mapping[str, Any], given: Mapping[str, Any],
                    groups: Mapping[str, type]) -> dict[str, dict[str, Any]]:
    """The old keywords in ``legacy``, by the group prop that holds them now (each a field of its class
    in ``groups``; the network's parts only when not None, as before); one DeprecationWarning naming
    where they go. An unknown keyword, or an old keyword beside the group that holds it (``given``),
    is one line."""
    if not legacy:
        return {}
    places = {prop: (cls.__name__, tuple(f.name for f in fields(cls) if f.name not in NOT_FLAT))
              for prop, cls in groups.items()}
    places["network"] = ("TrainingNetwork.from_attributes", HYPERPOD_PARTS)
    known = [name for _, names in places.values() for name in names]
    for name in legacy:
        if name not in known:
            raise unknown_field("HyperPodCluster", name, [*given, "instance_groups", "cluster_name", *known], what="keyword",
                                moved={f.name: f"{prop}={cls.__name__}({f.name}=...)" for prop, cls in groups.items()
                                       for f in fields(cls) if f.name in NOT_FLAT})
    placed: dict[str, dict[str, Any]] = {}
    for group, (_, names) in places.items():
        used = {n: legacy[n] for n in names if n in legacy and (group != "network" or legacy[n] is not None)}
        if used and given.get(group) is not None and group == "network":
            raise ConfigError(f"pass network, or its parts ({', '.join(sorted(used))}), not both")
        if used and given.get(group) is not None:
            raise ConfigError(f"pass {', '.join(used)} inside {group}={places[group][0]}(...), not beside "
                              f"{group}=")
        if used:
            placed[group] = used
    if placed:
        where = "; ".join(f"{group}={places[group][0]}({'scope, id, ' if group == 'network' else ''}"
                          f"{', '.join(f'{n}=...' for n in used)})" for group, used in placed.items())
        warnings.warn(f"HyperPodCluster's flat keywords are deprecated (one minor release): pass {where}",
                      DeprecationWarning, stacklevel=5)  # _Options.of, __init__, jsii's metaclass
    return placed


def check_hyperpod_parts(parts: Mapping[str, Any]) -> None:
    """The old parts of a network: none at all means the cluster was given no network. Their
    values are checked once, by ``TrainingNetwork.from_attributes`` (``network_interface.check_parts``),
    which the cluster builds from them."""
    if not parts:
        raise PropTypeError("network is required: pass a TrainingNetwork, or TrainingNetwork.from_attributes(scope, id, "
                            "training_subnet=..., security_groups=..., job_bucket=...) for one built elsewhere")


# --- end HyperPodCluster -----------------------------------------------------------------------------


__all__ = ["HYPERPOD_PARTS", "HyperPodClusterLegacyProps", "SmddpTrainingNetwork", "check_hyperpod_parts",
           "hyperpod_legacy", "launch_policy_groups"]
