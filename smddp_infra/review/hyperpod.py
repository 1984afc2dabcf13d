"""HyperPod clusters of a template, as a reviewer reads them: how nodes are provisioned and scaled,
and per instance group its capacity, placement and update schedule (the review summary's table).

Reads ``AWS::SageMaker::Cluster`` properties as the API spells them (``NodeProvisioningMode``,
``AutoScaling``, ``TieredStorageConfig``, and per group ``MinInstanceCount``, ``CapacityRequirements``,
``TrainingPlanArn``, ``KubernetesConfig``, ``ScheduledUpdateConfig``, ``ImageId``); a template written
by hand reads the same as ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from smddp_infra.review.template import TemplateView

CLUSTER_TYPE = "AWS::SageMaker::Cluster"


@dataclass(frozen=True)
class GroupRow:
    name: str
    instance_type: str
    count: str  # "4" or "2 to 4" (MinInstanceCount to InstanceCount)
    capacity: str  # "Spot", "training plan", "on-demand"
    placement: str  # Slurm node type, or Kubernetes labels and taints
    updates: str  # schedule and batch, or "none"
    image: str


@dataclass(frozen=True)
class ClusterRow:
    logical_id: str
    orchestrator: str
    provisioning: str
    autoscaling: str
    tiered_checkpointing: str
    groups: tuple[GroupRow, ...]


def hyperpod_clusters(view: TemplateView) -> list[ClusterRow]:
    rows = []
    for logical_id, _ in view.of_type(CLUSTER_TYPE):
        props = view.props(logical_id)
        orchestrator = "EKS" if "Eks" in (props.get("Orchestrator") or {}) else "Slurm"
        scaling = props.get("AutoScaling") or {}
        tiered = props.get("TieredStorageConfig") or {}
        rows.append(ClusterRow(
            logical_id, orchestrator,
            "continuous" if props.get("NodeProvisioningMode") == "Continuous" else "standard",
            f"{scaling.get('AutoScalerType', 'yes')} (ClusterRole {_plain(props.get('ClusterRole'))})"
            if scaling.get("Mode") == "Enable" else "off",
            f"on, {tiered.get('InstanceMemoryAllocationPercentage', 'default')} % of memory" if tiered.get("Mode") == "Enable" else "off",
            tuple(_group(g) for g in props.get("InstanceGroups") or [] if isinstance(g, Mapping)),
        ))
    return rows


def _group(group: Mapping[str, Any]) -> GroupRow:
    count = _plain(group.get("InstanceCount"))
    if group.get("MinInstanceCount") is not None:
        count = f"{_plain(group.get('MinInstanceCount'))} to {count}"
    capacity = ("Spot" if "Spot" in (group.get("CapacityRequirements") or {})
                else "training plan" if group.get("TrainingPlanArn") else "on-demand")
    kubernetes = group.get("KubernetesConfig") or {}
    labels = [f"{k}={v}" for k, v in (kubernetes.get("Labels") or {}).items()]
    taints = [f"{t.get('Key')}{'=' + str(t['Value']) if t.get('Value') else ''}:{t.get('Effect')}" for t in kubernetes.get("Taints") or []]
    slurm = (group.get("SlurmConfig") or {}).get("NodeType")
    placement = "; ".join(x for x in (f"Slurm {slurm}" if slurm else "", ", ".join(labels), "taints " + ", ".join(taints) if taints else "") if x)
    update = group.get("ScheduledUpdateConfig") or {}
    updates = "none"
    if update:
        deployment = update.get("DeploymentConfig") or {}
        batch = (deployment.get("RollingUpdatePolicy") or {}).get("MaximumBatchSize") or {}
        unit = "%" if batch.get("Type") == "CAPACITY_PERCENTAGE" else " instances"
        updates = f"`{update.get('ScheduleExpression')}`"
        if batch:
            updates += f", batches of {batch.get('Value')}{unit}"
        if deployment.get("WaitIntervalInSeconds") is not None:
            updates += f", {deployment['WaitIntervalInSeconds']} s between"
        alarms = [a.get("AlarmName") for a in deployment.get("AutoRollbackConfiguration") or []]
        if alarms:
            updates += f", rollback on {', '.join(str(a) for a in alarms)}"
    return GroupRow(str(group.get("InstanceGroupName")), str(group.get("InstanceType", "")), count, capacity,
                    placement or "-", updates, str(group.get("ImageId") or "HyperPod's"))


def _plain(value: Any) -> str:
    if isinstance(value, Mapping) and "Fn::GetAtt" in value:
        target = value["Fn::GetAtt"]
        return str(target[0] if isinstance(target, list) else str(target).split(".")[0])
    if isinstance(value, Mapping) and "Ref" in value:
        return str(value["Ref"])
    return str(value)
