"""HyperPod clusters read back from a template: how nodes are provisioned and scaled, and per
instance group its capacity, placement and update schedule.

One reader for everyone who reads a cluster after synth (the review summary, ``job-config --format
hyperpod --cluster-template``): it reads ``AWS::SageMaker::Cluster`` properties as the API spells
them, so a template written by hand reads the same as ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

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
    """Every ``AWS::SageMaker::Cluster`` of ``template``, in template order."""
    found = []
    for logical_id, resource in (template.get("Resources") or {}).items():
        if not isinstance(resource, Mapping) or resource.get("Type") != CLUSTER_TYPE:
            continue
        props = resource.get("Properties") or {}
        scaling = props.get("AutoScaling") or {}
        tiered = props.get("TieredStorageConfig") or {}
        found.append(ClusterView(
            logical_id,
            "eks" if "Eks" in (props.get("Orchestrator") or {}) else "slurm",
            props.get("NodeProvisioningMode") == "Continuous",
            str(scaling.get("AutoScalerType", "Karpenter")) if scaling.get("Mode") == "Enable" else None,
            props.get("ClusterRole"),
            tiered.get("InstanceMemoryAllocationPercentage", "default") if tiered.get("Mode") == "Enable" else None,
            tuple(_group(g) for g in props.get("InstanceGroups") or [] if isinstance(g, Mapping)),
        ))
    return found


def _group(group: Mapping[str, Any]) -> GroupView:
    kubernetes = group.get("KubernetesConfig") or {}
    slurm = group.get("SlurmConfig") or {}
    update = group.get("ScheduledUpdateConfig") or {}
    deployment = update.get("DeploymentConfig") or {}
    batch = (deployment.get("RollingUpdatePolicy") or {}).get("MaximumBatchSize") or {}
    return GroupView(
        name=str(group.get("InstanceGroupName")),
        instance_type=str(group.get("InstanceType", "")),
        count=group.get("InstanceCount"),
        min_count=group.get("MinInstanceCount"),
        spot="Spot" in (group.get("CapacityRequirements") or {}),
        training_plan_arn=group.get("TrainingPlanArn"),
        slurm_node_type=slurm.get("NodeType"),
        partitions=tuple(str(p) for p in slurm.get("PartitionNames") or []),
        labels={str(k): str(v) for k, v in (kubernetes.get("Labels") or {}).items()},
        taints=tuple((str(t.get("Key")), t.get("Value"), str(t.get("Effect"))) for t in kubernetes.get("Taints") or []),
        schedule=update.get("ScheduleExpression"),
        batch=(str(batch.get("Type")), batch.get("Value")) if batch else None,
        wait_seconds=deployment.get("WaitIntervalInSeconds"),
        rollback_alarms=tuple(str(a.get("AlarmName")) for a in deployment.get("AutoRollbackConfiguration") or []),
        image_id=group.get("ImageId"),
    )
