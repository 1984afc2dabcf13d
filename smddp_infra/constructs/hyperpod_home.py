"""Home directories on FSx for OpenZFS for a HyperPod cluster (``HyperPodCluster(home_directories=...)``).

A Slurm cluster's users share one home (their code, environments, dotfiles) on every node; HyperPod
mounts an FSx for OpenZFS file system on each instance group itself through
``InstanceStorageConfigs[].FsxOpenZfsConfig {DnsName, MountPath}`` (CloudFormation's
``AWS::SageMaker::Cluster`` schema in cfn-lint 1.58; botocore ``ClusterFsxOpenZfsConfig``). Neither the
schema nor the API limits it to Slurm, so an EKS cluster takes it too (its pods see it only through a
volume of their own: docs/hyperpod.md).

The file system is created here (aws-cdk-lib has no OpenZFS L2, so the L1 ``CfnFileSystem``) in the
training subnet, or imported by id, DNS name and security group. Either way its group admits NFS
from every group the nodes carry, and those groups may send it: TCP and UDP 111 (rpcbind), 2049 (nfsd)
and 20001-20003 (mountd, nlockmgr, status) (FSx for OpenZFS User Guide, "File system access control with
Amazon VPC"); the network's groups allow no outbound traffic but what they name, so the egress side is
needed too. It is stateful (every user's files): RETAIN, and the guard protects it as it does any
``AWS::FSx::FileSystem``. Construct ids ("HomeDirectories", "FileSystem", "SecurityGroup") are part of
the contract: a changed id is a new, empty file system.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Optional

from aws_cdk import Annotations, RemovalPolicy, Tags, aws_ec2 as ec2, aws_fsx as fsx, aws_sagemaker as sagemaker
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.constructs._retention import watch_retention
from smddp_infra.constructs.network_interface import ITrainingNetwork
from smddp_infra.contract import TAG_ROLE, TAG_ROLE_HOME_DIRECTORIES
from smddp_infra.errors import ConfigError, known_fields
from smddp_infra.hyperpod import validation as hv
from smddp_infra.sizing import openzfs_rules as zfs

#: Where HyperPod mounts the home directories by default: the nodes' ``/home``, so every user's home
#: (``useradd -m``) is on the shared file system.
DEFAULT_HOME_PATH = "/home"
#: The sizing fields of a created file system, with their defaults (None in the dataclass: "not given").
_CREATED_DEFAULTS: dict[str, Any] = {"deployment_type": zfs.SINGLE_AZ_1, "storage_capacity_gib": 1024,
                                     "throughput_mbps": 64, "backup_retention_days": 7}


@known_fields
@dataclass(frozen=True)
class HomeDirectories:
    """FSx for OpenZFS home directories on every instance group (``home_directories=``).

    Created by default; pass ``file_system_id``, ``dns_name`` and ``security_group`` to import one.

    :param mount_path: where every node mounts it (``FsxOpenZfsConfig.MountPath``). Default: ``/home``.
    :param deployment_type: ``SINGLE_AZ_1``, ``SINGLE_AZ_2``, ``SINGLE_AZ_HA_1`` or ``SINGLE_AZ_HA_2``
        (``MULTI_AZ_1`` needs a second subnet: import such a file system). Default: ``SINGLE_AZ_1``.
    :param storage_capacity_gib: SSD capacity, 64 to 524,288 GiB; it can grow in place later. Default: 1024.
    :param throughput_mbps: ``ThroughputCapacity``: 64 to 4,096 MB/s in steps on the ``_1`` types, 160 to
        10,240 on the ``_2`` types (:mod:`smddp_infra.sizing.openzfs_rules`). Default: 64.
    :param backup_retention_days: daily automatic backups kept, 0 (off) to 90. Default: 7.
    :param file_system_id: an existing OpenZFS file system's id (``fs-...``). Default: none (create one).
    :param dns_name: its DNS name, what the nodes mount. Required with ``file_system_id``.
    :param security_group: its security group, which gets the NFS rules from the nodes' groups (a group
        imported with ``mutable=False`` must already have them). Required with ``file_system_id``.
    """

    mount_path: str = DEFAULT_HOME_PATH
    deployment_type: Optional[str] = None
    storage_capacity_gib: Optional[int] = None
    throughput_mbps: Optional[int] = None
    backup_retention_days: Optional[int] = None
    file_system_id: Optional[str] = None
    dns_name: Optional[str] = None
    security_group: Optional[ec2.ISecurityGroup] = None

    def __post_init__(self) -> None:
        hv.check_fsx_mount_path("home_directories.mount_path", self.mount_path)
        v.require("home_directories.security_group", self.security_group, "ISecurityGroup")
        given = [f.name for f in fields(self) if f.name in _CREATED_DEFAULTS and getattr(self, f.name) is not None]
        imported = [n for n in ("file_system_id", "dns_name", "security_group") if getattr(self, n) is not None]
        if imported and len(imported) < 3:
            raise ConfigError(f"home_directories: an imported file system needs file_system_id, dns_name and security_group "
                              f"together, got only {', '.join(imported)}")
        if imported:
            hv.check_openzfs_imported("home_directories", self.file_system_id, self.dns_name, given)
        else:
            hv.check_openzfs_created("home_directories", *(self.setting(n) for n in _CREATED_DEFAULTS))

    @property
    def imported(self) -> bool:
        return self.file_system_id is not None

    def setting(self, name: str) -> Any:
        """A sizing field as given, or its default."""
        given = getattr(self, name)
        return _CREATED_DEFAULTS[name] if given is None else given


class HomeDirectoriesFileSystem(Construct):
    """The home directories' file system (created or imported) and its NFS rules from the nodes' groups.

    Attributes: ``file_system`` (the ``CfnFileSystem``; None when imported), ``file_system_id``,
    ``dns_name``, ``security_group``, ``mount_path``, ``storage_config`` (the instance groups'
    ``FsxOpenZfsConfig``).
    """

    def __init__(self, scope: Construct, id: str, *, settings: HomeDirectories, network: ITrainingNetwork,
                 lustre_mount_path: Optional[str]) -> None:
        if lustre_mount_path is not None and lustre_mount_path.rstrip("/") == settings.mount_path:
            raise ConfigError(f"home_directories.mount_path {settings.mount_path!r} is where the network's FSx for Lustre "
                              "file system is mounted (nodes.mount_path): choose another path for one of them")
        if not settings.imported and network.vpc is None:
            raise ConfigError("home_directories: the network was imported by its parts, without its VPC, so the file "
                              "system's security group cannot be made here: import a file system (file_system_id=, "
                              "dns_name=, security_group=)")
        super().__init__(scope, id)
        self.mount_path = settings.mount_path
        self.file_system: Optional[fsx.CfnFileSystem] = None
        if settings.imported:
            assert settings.security_group is not None and settings.dns_name is not None
            self.security_group, self.dns_name = settings.security_group, settings.dns_name
            self.file_system_id = str(settings.file_system_id)
        else:
            self.security_group = ec2.SecurityGroup(
                self, "SecurityGroup", vpc=network.vpc, allow_all_outbound=False,  # type: ignore[arg-type]
                description="FSx for OpenZFS home directories: NFS from the HyperPod node groups")
            self.file_system = self._create(settings, network)
            self.file_system_id, self.dns_name = self.file_system.ref, self.file_system.attr_dns_name
        self._admit(network)
        self.storage_config = sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty(
            fsx_open_zfs_config=sagemaker.CfnCluster.ClusterFsxOpenZfsConfigProperty(
                dns_name=self.dns_name, mount_path=self.mount_path))

    def _create(self, settings: HomeDirectories, network: ITrainingNetwork) -> fsx.CfnFileSystem:
        """The L1 file system in the training subnet, under the network's key when it has one."""
        days = settings.setting("backup_retention_days")
        created = fsx.CfnFileSystem(
            self, "FileSystem", file_system_type="OPENZFS", storage_type="SSD",
            storage_capacity=settings.setting("storage_capacity_gib"),
            subnet_ids=[network.training_subnet.subnet_id], security_group_ids=[self.security_group.security_group_id],
            kms_key_id=network.encryption_key.key_arn if network.encryption_key is not None else None,
            open_zfs_configuration=fsx.CfnFileSystem.OpenZFSConfigurationProperty(
                deployment_type=settings.setting("deployment_type"),
                throughput_capacity=settings.setting("throughput_mbps"),
                automatic_backup_retention_days=days, copy_tags_to_backups=True if days else None,
                root_volume_configuration=fsx.CfnFileSystem.RootVolumeConfigurationProperty(
                    data_compression_type="LZ4",
                    # Who may mount is the security group's to say (the nodes' groups only); root is not
                    # squashed because the lifecycle scripts create and chown each user's home as root.
                    nfs_exports=[fsx.CfnFileSystem.NfsExportsProperty(client_configurations=[
                        fsx.CfnFileSystem.ClientConfigurationsProperty(
                            clients="*", options=["rw", "crossmnt", "no_root_squash"])])]),
            ),
        )
        # Every user's files: kept when the stack or the resource goes (the guard refuses the rest).
        created.apply_removal_policy(RemovalPolicy.RETAIN)
        Tags.of(created).add(TAG_ROLE, TAG_ROLE_HOME_DIRECTORIES)
        watch_retention(self)
        return created

    def _admit(self, network: ITrainingNetwork) -> None:
        """NFS from each node group into the file system's group, and out of each node group to it;
        ``rules`` holds the rule resources added (the cluster waits for them)."""
        home = self.security_group
        holders = [home, *network.security_groups]
        before = {child.node.path for holder in holders for child in holder.node.children}  # jsii proxies: no stable id()
        if not v.group_takes_rules(home):
            Annotations.of(self).add_warning_v2(
                "smddp:homeGroupImmutable",
                f"home_directories.security_group {home.security_group_id} was imported with mutable=False: it must already "
                "admit TCP and UDP 111, 2049 and 20001-20003 from the nodes' groups (FSx for OpenZFS User Guide)")
        for group in network.security_groups:
            for protocol, low, high in zfs.NFS_PORTS:
                port = (ec2.Port.tcp_range if protocol == "tcp" else ec2.Port.udp_range)(low, high) if low != high else \
                    (ec2.Port.tcp if protocol == "tcp" else ec2.Port.udp)(low)
                what = f"NFS {zfs.NFS_SERVICES[low]}"
                home.add_ingress_rule(group, port, f"{what} from the HyperPod nodes")
                if not group.allow_all_outbound:
                    group.add_egress_rule(home, port, f"{what} to the home directories")
        self.rules: list[Construct] = [child for holder in holders for child in holder.node.children
                                       if child.node.path not in before]


__all__ = ["DEFAULT_HOME_PATH", "HomeDirectories", "HomeDirectoriesFileSystem"]
