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
from dataclasses import dataclass, fields
from typing import Any, Optional, Sequence

from smddp_infra.errors import ConfigError, PropTypeError
from smddp_infra.hyperpod import validation as hv
from smddp_infra.hyperpod.values import DEFAULT_MOUNT_PATH, HYPERPOD_INTERFACE_ENDPOINTS
from smddp_infra.schema.fields import flag, group, text, texts, value, whole
from smddp_infra.sizing import openzfs_rules as zfs

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


#: Where HyperPod mounts the home directories by default: the nodes' ``/home``, so every user's home
#: (``useradd -m``) is on the shared file system.
DEFAULT_HOME_PATH = "/home"
#: The sizing fields of a created file system, with their defaults (None in the dataclass: "not given").
_CREATED_DEFAULTS: dict[str, Any] = {"deployment_type": zfs.SINGLE_AZ_1, "storage_capacity_gib": 1024,
                                     "throughput_mbps": 64, "backup_retention_days": 7}


@group
@dataclass(frozen=True)
class HomeDirectories:
    """FSx for OpenZFS home directories on every instance group (``nodes=Nodes(home_directories=...)``).

    Created by default (:class:`~smddp_infra.constructs.hyperpod_home.HomeDirectoriesFileSystem`); pass
    ``file_system_id``, ``dns_name`` and ``security_group_id`` to import one.

    :param mount_path: where every node mounts it (``FsxOpenZfsConfig.MountPath``). Default: ``/home``.
    :param deployment_type: ``SINGLE_AZ_1``, ``SINGLE_AZ_2``, ``SINGLE_AZ_HA_1`` or ``SINGLE_AZ_HA_2``
        (``MULTI_AZ_1`` needs a second subnet: import such a file system). Default: ``SINGLE_AZ_1``.
    :param storage_capacity_gib: SSD capacity, 64 to 524,288 GiB; it can grow in place later. Default: 1024.
    :param throughput_mbps: ``ThroughputCapacity``: 64 to 4,096 MB/s in steps on the ``_1`` types, 160 to
        10,240 on the ``_2`` types (:mod:`smddp_infra.sizing.openzfs_rules`). Default: 64.
    :param backup_retention_days: daily automatic backups kept, 0 (off) to 90. Default: 7.
    :param file_system_id: an existing OpenZFS file system's id (``fs-...``). Default: none (create one).
    :param dns_name: its DNS name, what the nodes mount. Required with ``file_system_id``.
    :param security_group_id: its security group (``sg-...``), which gets the NFS rules from the nodes'
        groups. Required with ``file_system_id``.
    """

    mount_path: str = DEFAULT_HOME_PATH
    deployment_type: Optional[str] = None
    storage_capacity_gib: Optional[int] = None
    throughput_mbps: Optional[int] = None
    backup_retention_days: Optional[int] = None
    file_system_id: Optional[str] = None
    dns_name: Optional[str] = None
    security_group_id: Optional[str] = None

    def __post_init__(self) -> None:
        hv.check_fsx_mount_path("home_directories.mount_path", self.mount_path)
        given = [f.name for f in fields(self) if f.name in _CREATED_DEFAULTS and getattr(self, f.name) is not None]
        imported = [n for n in ("file_system_id", "dns_name", "security_group_id") if getattr(self, n) is not None]
        if imported and len(imported) < 3:
            raise ConfigError(f"home_directories: an imported file system needs file_system_id, dns_name and "
                              f"security_group_id together, got only {', '.join(imported)}")
        if imported:
            hv.check_openzfs_imported("home_directories", self.file_system_id, self.dns_name, self.security_group_id, given)
        else:
            hv.check_openzfs_created("home_directories", *(self.setting(n) for n in _CREATED_DEFAULTS))

    @property
    def imported(self) -> bool:
        return self.file_system_id is not None

    def setting(self, name: str) -> Any:
        """A sizing field as given, or its default."""
        given = getattr(self, name)
        return _CREATED_DEFAULTS[name] if given is None else given


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
    :param home_directories: :class:`HomeDirectories`: an FSx for OpenZFS file system, created or
        imported, mounted on every group (``FsxOpenZfsConfig``) at ``/home``, its group admitting NFS
        from the nodes' groups. Default: none.
    """

    mount_path: str = value(DEFAULT_MOUNT_PATH, text("an absolute path like /fsx (FsxLustreConfig.MountPath)",
                                                     lambda path: bool(_MOUNT_PATH.fullmatch(path))))
    ips_per_node: Optional[int] = value(None, whole(1, optional=True, why=" (private IPs per HyperPod node)"))
    interface_endpoints: Optional[Sequence[str]] = value(None, texts("a list of endpoint service names (str)",
                                                                     optional=True))
    home_directories: Optional[HomeDirectories] = None

    def __post_init__(self) -> None:
        if self.home_directories is not None and not isinstance(self.home_directories, HomeDirectories):
            raise PropTypeError(f"nodes.home_directories must be a HomeDirectories(...), got "
                                f"{type(self.home_directories).__name__}")

    @property
    def endpoints(self) -> tuple[str, ...]:
        """The endpoints HyperPod nodes use without a NAT gateway (the default, or the ones given)."""
        return HYPERPOD_INTERFACE_ENDPOINTS if self.interface_endpoints is None else tuple(self.interface_endpoints)


__all__ = ["DEFAULT_HOME_PATH", "HomeDirectories", "Nodes", "Provisioning"]
