"""The grouped options of a HyperPod cluster that hold no CDK object (PURE).

:class:`~smddp_infra.constructs.hyperpod.HyperPodCluster` takes its options in groups, as
aws-cdk-lib's ``ec2.Vpc`` does: the two here are plain values; the ones that can hold a CDK
object (the orchestration's EKS cluster, the lifecycle bucket, alarms, roles) live beside the
construct. Each group refuses a bad value when it is built (type, range, pattern: one line naming
the field, by its :mod:`~smddp_infra.schema.fields` rule, or by :mod:`.validation` where botocore
holds the limit); a rule across groups (autoscaling needs EKS) is the construct's. A field keeps
the name the flat ``HyperPodCluster`` keyword had, so an error names what the user wrote in either
form.

Not in :mod:`.values`: these groups call :mod:`.validation`, which reads ``values`` (a cycle).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

from smddp_infra.hyperpod import validation as hv
from smddp_infra.hyperpod.values import DEFAULT_MOUNT_PATH, HYPERPOD_INTERFACE_ENDPOINTS
from smddp_infra.schema.fields import flag, group, text, texts, value, whole

#: ``FsxLustreConfig.MountPath``: an absolute path of letters, digits and ``._/-``.
_MOUNT_PATH = re.compile(r"/[a-zA-Z0-9._/-]+")


@group
@dataclass(frozen=True)
class Provisioning:
    """How HyperPod provisions, recovers and scales the nodes (``provisioning=``).

    :param node_recovery: HyperPod replaces faulty nodes on its own (``NodeRecovery: Automatic``).
        Default: True.
    :param continuous_provisioning: ``NodeProvisioningMode: Continuous`` (EKS only, botocore
        CreateCluster): HyperPod provisions what it can, retries the rest in the background and keeps
        the groups InService while scaling. Default: False (HyperPod's standard provisioning).
    :param autoscaling: HyperPod's managed Karpenter autoscaling (``AutoScaling {Mode: Enable,
        AutoScalerType: Karpenter}``); needs EKS, ``continuous_provisioning`` and ``node_recovery``
        (SageMaker developer guide, "Autoscaling on SageMaker HyperPod EKS", Prerequisites) and a
        ``ClusterRole`` (``roles.autoscaling_role``, or one built). Default: False.
    :param tiered_checkpointing_memory_percent: managed tiered checkpointing on (``TieredStorageConfig
        {Mode: Enable, InstanceMemoryAllocationPercentage}``), with this share of each instance's
        memory (0 to 100) for checkpoints; EKS only. Default: none (off, nothing written).
    """

    node_recovery: bool = value(True, flag())
    continuous_provisioning: bool = value(False, flag())
    autoscaling: bool = value(False, flag())
    tiered_checkpointing_memory_percent: Optional[int] = None

    def __post_init__(self) -> None:  # the range is botocore's (hyperpod.api), read when checked
        hv.check_memory_percent("tiered_checkpointing_memory_percent", self.tiered_checkpointing_memory_percent)


@group
@dataclass(frozen=True)
class Nodes:
    """What every node gets from the network (``nodes=``).

    :param mount_path: where every group mounts the file system (``FsxLustreConfig.MountPath``).
        Default: ``/fsx``.
    :param ips_per_node: private IPs planned per node (every group) when checking that the subnet holds
        the cluster, e.g. for a VPC CNI configured otherwise than EKS installs it. Default: none, each
        group's figure from its instance type, orchestrator and interface
        (:func:`smddp_infra.facts.addresses.addresses_per_node`: on Slurm one address per network
        card, 32 on a p5; on EKS also the pod addresses the VPC CNI holds, 81 on a p5; table and
        sources in docs/hyperpod.md).
    :param interface_endpoints: interface endpoints to add to a network that has no NAT gateway,
        beyond the ones it has. Default: ``ssm``, ``ssmmessages``, ``ec2messages`` (UNCONFIRMED:
        Systems Manager access to nodes; see docs/hyperpod.md); none with a NAT gateway or a network
        given as parts.
    """

    mount_path: str = value(DEFAULT_MOUNT_PATH, text("an absolute path like /fsx (FsxLustreConfig.MountPath)",
                                                     lambda path: bool(_MOUNT_PATH.fullmatch(path))))
    ips_per_node: Optional[int] = value(None, whole(1, optional=True, why=" (private IPs per HyperPod node)"))
    interface_endpoints: Optional[Sequence[str]] = value(None, texts("a list of endpoint service names (str)",
                                                                     optional=True))

    @property
    def endpoints(self) -> tuple[str, ...]:
        """The endpoints HyperPod nodes use without a NAT gateway (the default, or the ones given)."""
        return HYPERPOD_INTERFACE_ENDPOINTS if self.interface_endpoints is None else tuple(self.interface_endpoints)


__all__ = ["Nodes", "Provisioning"]
