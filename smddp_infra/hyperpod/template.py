"""HyperPod clusters read back from a template: how nodes are provisioned and scaled, and per
instance group its capacity, placement, update schedule, instance types (one, or a flexible
group's), network interface, EBS volumes, mounted file systems and AMI version and patching.

One reader for everyone who reads a cluster after synth (the review summary, ``job-config --format
hyperpod --cluster-template``): it reads ``AWS::SageMaker::Cluster`` properties as the API spells
them, so a template written by hand reads the same as ours.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from smddp_infra.errors import ConfigError
from smddp_infra.hyperpod.request import CLUSTER_TYPE


#: ``InstanceStorageConfigs`` entries that mount an FSx file system (the schema's ``oneOf``).
FSX_CONFIGS = ("FsxLustreConfig", "FsxOpenZfsConfig")


@dataclass(frozen=True)
class EbsVolume:
    """One ``EbsVolumeConfig``: the root volume (``RootVolume: true``, its size chosen by HyperPod, the
    key a customer's) or a secondary volume of ``VolumeSizeInGB``; ``kms_key_id`` None is an AWS owned
    key (botocore ``ClusterEbsVolumeConfig``)."""

    root: bool
    size_gib: Any
    kms_key_id: Any


@dataclass(frozen=True)
class FsxMount:
    """One ``FsxLustreConfig`` or ``FsxOpenZfsConfig`` (``kind``) as written; ``mount_name`` is Lustre's only."""

    kind: str
    dns_name: Any
    mount_path: Any
    mount_name: Any = None


@dataclass(frozen=True)
class GroupView:
    name: str
    instance_type: str  # "" for a flexible group
    count: Any  # an int, or an intrinsic as written
    min_count: Any
    spot: bool
    training_plan_arn: Optional[str]
    slurm_node_type: Optional[str]
    partitions: tuple[str, ...]
    labels: Mapping[str, str]
    taints: tuple[tuple[str, Optional[str], str], ...]  # (key, value, effect)
    schedule: Optional[str]
    batch: Optional[tuple[str, Any]]  # (Type, Value)
    wait_seconds: Any
    rollback_alarms: tuple[str, ...]
    image_id: Optional[str]
    #: ``InstanceRequirements.InstanceTypes`` of a flexible group, in the order HyperPod tries them
    #: (botocore ``ClusterInstanceRequirements``: the first, then the next when capacity is short).
    instance_types: tuple[str, ...] = ()
    interface_type: Any = None  # NetworkInterface.InterfaceType: "efa", "efa-only", or None (not written)
    ebs_volumes: tuple[EbsVolume, ...] = ()
    file_systems: tuple[FsxMount, ...] = ()
    image_release_version: Any = None
    auto_patch: Any = None  # AutoPatchConfig.PatchingStrategy

    @property
    def types(self) -> tuple[str, ...]:
        """The types a node of the group may be: a flexible group's, or its one ``InstanceType``."""
        return self.instance_types or ((self.instance_type,) if self.instance_type else ())

    @property
    def capacity(self) -> str:
        return "Spot" if self.spot else "training plan" if self.training_plan_arn else "on-demand"

    @property
    def nodes(self) -> str:
        return f"{self.min_count} to {self.count}" if self.min_count is not None else str(self.count)


@dataclass(frozen=True)
class ClusterView:
    logical_id: str
    orchestrator: str  # "eks" or "slurm"
    continuous_provisioning: bool
    autoscaler: Optional[str]  # "Karpenter" when autoscaling is enabled
    cluster_role: Any
    tiered_checkpointing_percent: Any  # None: off; the percentage (or "default") when on
    groups: tuple[GroupView, ...]
    slurm_config_strategy: Any = None  # Orchestrator.Slurm.SlurmConfigStrategy as written


def hyperpod_clusters(template: Mapping[str, Any]) -> list[ClusterView]:
    """Every ``AWS::SageMaker::Cluster`` of ``template``, in template order. A property of the
    wrong shape (``Properties`` a list, ``KubernetesConfig.Labels`` a list) is one ConfigError
    naming where it is and what CloudFormation's schema has there, never an AttributeError."""
    found = []
    for logical_id, resource in (template.get("Resources") or {}).items():
        if not isinstance(resource, Mapping) or resource.get("Type") != CLUSTER_TYPE:
            continue
        where = f"{logical_id}.Properties"
        props = _mapping(resource.get("Properties"), where)
        scaling = _at(props, where, "AutoScaling")
        tiered = _at(props, where, "TieredStorageConfig")
        groups = _entries(props, where, "InstanceGroups")
        orchestrator = _at(props, where, "Orchestrator")
        found.append(ClusterView(
            logical_id,
            "eks" if "Eks" in orchestrator else "slurm",
            props.get("NodeProvisioningMode") == "Continuous",
            str(scaling.get("AutoScalerType", "Karpenter")) if scaling.get("Mode") == "Enable" else None,
            props.get("ClusterRole"),
            tiered.get("InstanceMemoryAllocationPercentage", "default") if tiered.get("Mode") == "Enable" else None,
            tuple(_group(group, at) for at, group in groups),
            _at(orchestrator, f"{where}.Orchestrator", "Slurm").get("SlurmConfigStrategy"),
        ))
    return found


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a mapping (AWS::SageMaker::Cluster's schema), got {reprlib.repr(value)}")
    return value


def _listed(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"{where} must be a list (AWS::SageMaker::Cluster's schema), got {reprlib.repr(value)}")
    return value


def _at(parent: Mapping[str, Any], where: str, key: str) -> Mapping[str, Any]:
    """``parent``'s mapping under ``key`` (absent: empty); a wrong shape is named ``where.key``."""
    return _mapping(parent.get(key), f"{where}.{key}")


def _entries(parent: Mapping[str, Any], where: str, key: str) -> list[tuple[str, Mapping[str, Any]]]:
    """``parent``'s list of mappings under ``key`` (absent: empty), each with the place that names it
    (``where.key[i]``): the schema's arrays of objects (groups, taints, alarms, storage configs, quotas)."""
    at = f"{where}.{key}"
    return [(f"{at}[{i}]", _mapping(entry, f"{at}[{i}]")) for i, entry in enumerate(_listed(parent.get(key), at))]


def _group(group: Mapping[str, Any], where: str) -> GroupView:
    kubernetes = _at(group, where, "KubernetesConfig")
    slurm = _at(group, where, "SlurmConfig")
    update = _at(group, where, "ScheduledUpdateConfig")
    at = f"{where}.ScheduledUpdateConfig.DeploymentConfig"
    deployment = _at(update, f"{where}.ScheduledUpdateConfig", "DeploymentConfig")
    batch = _at(_at(deployment, at, "RollingUpdatePolicy"), f"{at}.RollingUpdatePolicy", "MaximumBatchSize")
    alarms = _entries(deployment, at, "AutoRollbackConfiguration")
    labels = _at(kubernetes, f"{where}.KubernetesConfig", "Labels")
    bad = next((k for k, v in labels.items() if isinstance(v, (Mapping, list))), None)
    if bad is not None:
        raise ConfigError(f"{where}.KubernetesConfig.Labels must map each label to a string, got {bad!r}: "
                          f"{reprlib.repr(labels[bad])}")
    taints = [taint for _, taint in _entries(kubernetes, f"{where}.KubernetesConfig", "Taints")]
    storage = _storage(group, where)
    return GroupView(
        name=str(group.get("InstanceGroupName")),
        instance_type=str(group.get("InstanceType", "")),
        count=group.get("InstanceCount"),
        min_count=group.get("MinInstanceCount"),
        spot="Spot" in _at(group, where, "CapacityRequirements"),
        training_plan_arn=group.get("TrainingPlanArn"),
        slurm_node_type=slurm.get("NodeType"),
        partitions=tuple(str(p) for p in _listed(slurm.get("PartitionNames"), f"{where}.SlurmConfig.PartitionNames")),
        labels={str(k): str(v) for k, v in labels.items()},
        taints=tuple((str(t.get("Key")), t.get("Value"), str(t.get("Effect"))) for t in taints),
        schedule=update.get("ScheduleExpression"),
        batch=(str(batch.get("Type")), batch.get("Value")) if batch else None,
        wait_seconds=deployment.get("WaitIntervalInSeconds"),
        rollback_alarms=tuple(str(alarm.get("AlarmName")) for _, alarm in alarms),
        image_id=group.get("ImageId"),
        instance_types=tuple(str(t) for t in _listed(_at(group, where, "InstanceRequirements").get("InstanceTypes"),
                                                     f"{where}.InstanceRequirements.InstanceTypes")),
        interface_type=_at(group, where, "NetworkInterface").get("InterfaceType"),
        ebs_volumes=tuple(EbsVolume(c.get("RootVolume") is True, c.get("VolumeSizeInGB"), c.get("VolumeKmsKeyId"))
                          for c in (config.get("EbsVolumeConfig") for config in storage) if c is not None),
        file_systems=tuple(FsxMount(kind, c.get("DnsName"), c.get("MountPath"), c.get("MountName"))
                           for config in storage for kind, c in config.items() if kind in FSX_CONFIGS),
        image_release_version=group.get("ImageReleaseVersion"),
        auto_patch=_at(group, where, "AutoPatchConfig").get("PatchingStrategy"),
    )


def _storage(group: Mapping[str, Any], where: str) -> list[dict[str, Mapping[str, Any]]]:
    """``InstanceStorageConfigs``: each entry a mapping whose EBS or FSx config is a mapping."""
    return [{kind: _at(entry, at, kind) for kind in entry if kind in ("EbsVolumeConfig", *FSX_CONFIGS)}
            for at, entry in _entries(group, where, "InstanceStorageConfigs")]


@dataclass(frozen=True)
class QuotaView:
    """One ``AWS::SageMaker::ComputeQuota`` as written (values not written are None: the service's defaults)."""

    logical_id: str
    cluster: Optional[str]  # the template's cluster it names (GetAtt/Ref), None for one outside it
    team: Any
    fair_share_weight: Any
    instances: tuple[tuple[Any, Any], ...]  # (InstanceType, Count)
    strategy: Any
    borrow_limit: Any
    absolute_borrow_limits: tuple[tuple[Any, Any], ...]
    preempt_team_tasks: Any


@dataclass(frozen=True)
class PolicyView:
    """One ``AWS::SageMaker::ClusterSchedulerConfig``: fair share and priority classes (name, weight)."""

    logical_id: str
    cluster: Optional[str]
    fair_share: Any
    priority_classes: tuple[tuple[Any, Any], ...]


def task_governance(template: Mapping[str, Any]) -> tuple[list[PolicyView], list[QuotaView]]:
    """The cluster policies and team quotas of ``template``, in template order, by the schemas' names
    (:mod:`smddp_infra.hyperpod.governance`); a wrong shape is one ConfigError naming where it is."""
    from smddp_infra.hyperpod.governance import QUOTA_TYPE, SCHEDULER_TYPE

    policies, quotas = [], []
    for logical_id, resource in (template.get("Resources") or {}).items():
        kind = resource.get("Type") if isinstance(resource, Mapping) else None
        if kind not in (QUOTA_TYPE, SCHEDULER_TYPE):
            continue
        where = f"{logical_id}.Properties"
        props = _mapping(resource.get("Properties"), where)
        cluster = _cluster_named(template, props.get("ClusterArn"))
        if kind == SCHEDULER_TYPE:
            config = _at(props, where, "SchedulerConfig")
            classes = _entries(config, f"{where}.SchedulerConfig", "PriorityClasses")
            policies.append(PolicyView(logical_id, cluster, config.get("FairShare"),
                                       tuple((c.get("Name"), c.get("Weight")) for _, c in classes)))
            continue
        config = _at(props, where, "ComputeQuotaConfig")
        target = _at(props, where, "ComputeQuotaTarget")
        sharing = _at(config, f"{where}.ComputeQuotaConfig", "ResourceSharingConfig")
        quotas.append(QuotaView(
            logical_id, cluster, target.get("TeamName"), target.get("FairShareWeight"),
            _instances(config, f"{where}.ComputeQuotaConfig", "ComputeQuotaResources"),
            sharing.get("Strategy"), sharing.get("BorrowLimit"),
            _instances(sharing, f"{where}.ComputeQuotaConfig.ResourceSharingConfig", "AbsoluteBorrowLimits"),
            config.get("PreemptTeamTasks"),
        ))
    return policies, quotas


def _instances(parent: Mapping[str, Any], where: str, key: str) -> tuple[tuple[Any, Any], ...]:
    return tuple((e.get("InstanceType"), e.get("Count")) for _, e in _entries(parent, where, key))


def _cluster_named(template: Mapping[str, Any], arn: Any) -> Optional[str]:
    """The template's HyperPod cluster a ``ClusterArn`` names (``Fn::GetAtt [X, ClusterArn]`` or ``Ref X``)."""
    name: Any = None
    if isinstance(arn, Mapping) and "Ref" in arn:
        name = arn["Ref"]
    elif isinstance(arn, Mapping) and "Fn::GetAtt" in arn:
        target = arn["Fn::GetAtt"]
        name = target[0] if isinstance(target, list) and target else str(target).split(".", 1)[0]
    resource = (template.get("Resources") or {}).get(name) if isinstance(name, str) else None
    return name if isinstance(resource, Mapping) and resource.get("Type") == CLUSTER_TYPE else None
