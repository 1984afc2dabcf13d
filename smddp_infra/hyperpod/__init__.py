"""SageMaker HyperPod clusters on the training network: the pure part (no aws_cdk).

Three rooms, as the work splits: :mod:`.values` holds the typed, frozen values a user writes
(an instance group, the orchestrator); :mod:`.api` reads what the installed botocore says
HyperPod accepts (instance types, ARN patterns, health checks); :mod:`.validation` turns
those into one validator per rule with one-line errors; :mod:`.request` builds the
CreateCluster request from a synthesized ``AWS::SageMaker::Cluster`` resource. The CDK
construct is :class:`smddp_infra.constructs.hyperpod.HyperPodCluster`.
"""

from __future__ import annotations

from smddp_infra.hyperpod.values import (
    DEEP_HEALTH_CHECKS,
    DEFAULT_MOUNT_PATH,
    HYPERPOD_INTERFACE_ENDPOINTS,
    ORCHESTRATORS,
    SLURM_NODE_TYPES,
    InstanceGroup,
    KubernetesTaint,
)

__all__ = ["DEEP_HEALTH_CHECKS", "DEFAULT_MOUNT_PATH", "HYPERPOD_INTERFACE_ENDPOINTS", "ORCHESTRATORS",
           "SLURM_NODE_TYPES", "InstanceGroup", "KubernetesTaint"]
