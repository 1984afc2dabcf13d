"""smddp_infra: networks for SageMaker distributed training on EFA instances.

The pure parts (:mod:`smddp_infra.sizing`, :mod:`smddp_infra.training`,
:mod:`smddp_infra.contract`, :mod:`smddp_infra.jobconfig`, :mod:`smddp_infra.rules`,
:mod:`smddp_infra.preflight`, :mod:`smddp_infra.schema`)
never import aws_cdk. The constructs are exported lazily from here so that
``import smddp_infra`` stays cheap for the CLI and inside training containers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # what type checkers see; at run time the names below are loaded lazily
    from smddp_infra.checks import SmddpChecks as SmddpChecks
    from smddp_infra.constructs.checkpoints import CheckpointBucket as CheckpointBucket
    from smddp_infra.constructs.efa import EfaSecurityGroup as EfaSecurityGroup
    from smddp_infra.constructs.existing_filesystem import ExistingFileSystem as ExistingFileSystem
    from smddp_infra.constructs.filesystem import LustreFileSystem as LustreFileSystem
    from smddp_infra.constructs.hyperpod import HyperPodCluster as HyperPodCluster
    from smddp_infra.constructs.hyperpod_role import HyperPodClusterRole as HyperPodClusterRole
    from smddp_infra.hyperpod.eks import DependenciesChart as DependenciesChart, HyperPodEks as HyperPodEks
    from smddp_infra.hyperpod.values import InstanceGroup as InstanceGroup
    from smddp_infra.hyperpod.values import KubernetesTaint as KubernetesTaint
    from smddp_infra.constructs.launch_policy import LaunchConditions as LaunchConditions, LaunchJobs as LaunchJobs
    from smddp_infra.constructs.launch_policy import NetworkParts as NetworkParts
    from smddp_infra.constructs.launch_policy import TrainingLaunchPolicy as TrainingLaunchPolicy
    from smddp_infra.constructs.monitoring import FileSystemMonitoring as FileSystemMonitoring
    from smddp_infra.constructs.monitoring import MonitoringOptions as MonitoringOptions
    from smddp_infra.constructs.network import TrainingVpc as TrainingVpc
    from smddp_infra.constructs.role import TrainingExecutionRole as TrainingExecutionRole
    from smddp_infra.constructs.network_interface import ITrainingNetwork as ITrainingNetwork
    from smddp_infra.constructs.training_network import Existing as Existing
    from smddp_infra.constructs.deprecated import SmddpTrainingNetwork as SmddpTrainingNetwork
    from smddp_infra.constructs.training_network import TrainingNetwork as TrainingNetwork
    from smddp_infra.contract import JobDocument as JobDocument, read_outputs_file as read_outputs_file
    from smddp_infra.errors import ConfigError as ConfigError, SizingError as SizingError, SmddpError as SmddpError
    from smddp_infra.sizing.planner import LustrePlan as LustrePlan, plan_lustre as plan_lustre
    from smddp_infra.schema import Jobs as Jobs, Placement as Placement, Security as Security
    from smddp_infra.schema import Storage as Storage, Workload as Workload
    from smddp_infra.stack import TrainingNetworkStack as TrainingNetworkStack

_LAZY = {
    "TrainingNetwork": "smddp_infra.constructs.training_network",
    "Existing": "smddp_infra.constructs.training_network",
    "ITrainingNetwork": "smddp_infra.constructs.network_interface",
    "Workload": "smddp_infra.schema",
    "Placement": "smddp_infra.schema",
    "Storage": "smddp_infra.schema",
    "Security": "smddp_infra.schema",
    "Jobs": "smddp_infra.schema",
    "SmddpTrainingNetwork": "smddp_infra.constructs.deprecated",
    "TrainingVpc": "smddp_infra.constructs.network",
    "EfaSecurityGroup": "smddp_infra.constructs.efa",
    "LustreFileSystem": "smddp_infra.constructs.filesystem",
    "CheckpointBucket": "smddp_infra.constructs.checkpoints",
    "TrainingExecutionRole": "smddp_infra.constructs.role",
    "TrainingLaunchPolicy": "smddp_infra.constructs.launch_policy",
    "NetworkParts": "smddp_infra.constructs.launch_policy",
    "LaunchJobs": "smddp_infra.constructs.launch_policy",
    "LaunchConditions": "smddp_infra.constructs.launch_policy",
    "FileSystemMonitoring": "smddp_infra.constructs.monitoring",
    "MonitoringOptions": "smddp_infra.constructs.monitoring",
    "ExistingFileSystem": "smddp_infra.constructs.existing_filesystem",
    "TrainingNetworkStack": "smddp_infra.stack",
    "HyperPodCluster": "smddp_infra.constructs.hyperpod",
    "HyperPodClusterRole": "smddp_infra.constructs.hyperpod_role",
    "InstanceGroup": "smddp_infra.hyperpod.values",
    "KubernetesTaint": "smddp_infra.hyperpod.values",
    "HyperPodEks": "smddp_infra.hyperpod.eks",
    "DependenciesChart": "smddp_infra.hyperpod.eks",
    "SmddpChecks": "smddp_infra.checks",
    "plan_lustre": "smddp_infra.sizing.planner",
    "LustrePlan": "smddp_infra.sizing.planner",
    "JobDocument": "smddp_infra.contract",
    "read_outputs_file": "smddp_infra.contract",
    "SmddpError": "smddp_infra.errors",
    "SizingError": "smddp_infra.errors",
    "ConfigError": "smddp_infra.errors",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'smddp_infra' has no attribute {name!r}") from None
    return getattr(importlib.import_module(module), name)
