"""HyperPod clusters read back from a template: how nodes are provisioned and scaled, and per
instance group its capacity, placement and update schedule.

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


@dataclass(frozen=True)
class GroupView:
    name: str
    instance_type: str
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
        scaling = _mapping(props.get("AutoScaling"), f"{where}.AutoScaling")
        tiered = _mapping(props.get("TieredStorageConfig"), f"{where}.TieredStorageConfig")
        groups = _listed(props.get("InstanceGroups"), f"{where}.InstanceGroups")
        found.append(ClusterView(
            logical_id,
            "eks" if "Eks" in _mapping(props.get("Orchestrator"), f"{where}.Orchestrator") else "slurm",
            props.get("NodeProvisioningMode") == "Continuous",
            str(scaling.get("AutoScalerType", "Karpenter")) if scaling.get("Mode") == "Enable" else None,
            props.get("ClusterRole"),
            tiered.get("InstanceMemoryAllocationPercentage", "default") if tiered.get("Mode") == "Enable" else None,
            tuple(_group(_mapping(g, f"{where}.InstanceGroups[{i}]"), f"{where}.InstanceGroups[{i}]")
                  for i, g in enumerate(groups)),
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


def _group(group: Mapping[str, Any], where: str) -> GroupView:
    kubernetes = _mapping(group.get("KubernetesConfig"), f"{where}.KubernetesConfig")
    slurm = _mapping(group.get("SlurmConfig"), f"{where}.SlurmConfig")
    update = _mapping(group.get("ScheduledUpdateConfig"), f"{where}.ScheduledUpdateConfig")
    at = f"{where}.ScheduledUpdateConfig.DeploymentConfig"
    deployment = _mapping(update.get("DeploymentConfig"), at)
    rolling = _mapping(deployment.get("RollingUpdatePolicy"), f"{at}.RollingUpdatePolicy")
    batch = _mapping(rolling.get("MaximumBatchSize"), f"{at}.RollingUpdatePolicy.MaximumBatchSize")
    alarms = _listed(deployment.get("AutoRollbackConfiguration"), f"{at}.AutoRollbackConfiguration")
    labels = _mapping(kubernetes.get("Labels"), f"{where}.KubernetesConfig.Labels")
    bad = next((k for k, v in labels.items() if isinstance(v, (Mapping, list))), None)
    if bad is not None:
        raise ConfigError(f"{where}.KubernetesConfig.Labels must map each label to a string, got {bad!r}: "
                          f"{reprlib.repr(labels[bad])}")
    taints = [_mapping(t, f"{where}.KubernetesConfig.Taints[{i}]")
              for i, t in enumerate(_listed(kubernetes.get("Taints"), f"{where}.KubernetesConfig.Taints"))]
    return GroupView(
        name=str(group.get("InstanceGroupName")),
        instance_type=str(group.get("InstanceType", "")),
        count=group.get("InstanceCount"),
        min_count=group.get("MinInstanceCount"),
        spot="Spot" in _mapping(group.get("CapacityRequirements"), f"{where}.CapacityRequirements"),
        training_plan_arn=group.get("TrainingPlanArn"),
        slurm_node_type=slurm.get("NodeType"),
        partitions=tuple(str(p) for p in _listed(slurm.get("PartitionNames"), f"{where}.SlurmConfig.PartitionNames")),
        labels={str(k): str(v) for k, v in labels.items()},
        taints=tuple((str(t.get("Key")), t.get("Value"), str(t.get("Effect"))) for t in taints),
        schedule=update.get("ScheduleExpression"),
        batch=(str(batch.get("Type")), batch.get("Value")) if batch else None,
        wait_seconds=deployment.get("WaitIntervalInSeconds"),
        rollback_alarms=tuple(str(_mapping(a, f"{at}.AutoRollbackConfiguration[{i}]").get("AlarmName"))
                              for i, a in enumerate(alarms)),
        image_id=group.get("ImageId"),
    )
