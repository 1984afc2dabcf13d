"""Home directories on FSx for OpenZFS for a HyperPod cluster (``HyperPodCluster(nodes=Nodes(home_directories=...))``).

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

from typing import Optional

from aws_cdk import RemovalPolicy, Tags, aws_ec2 as ec2, aws_fsx as fsx, aws_sagemaker as sagemaker
from constructs import Construct

from smddp_infra.constructs._retention import watch_retention
from smddp_infra.constructs.network_interface import ITrainingNetwork
from smddp_infra.contract import TAG_ROLE, TAG_ROLE_HOME_DIRECTORIES
from smddp_infra.errors import ConfigError
from smddp_infra.hyperpod.options import HomeDirectories
from smddp_infra.sizing import openzfs_rules as zfs


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
        self.security_group: ec2.ISecurityGroup
        if settings.imported:
            self.security_group = ec2.SecurityGroup.from_security_group_id(self, "ImportedGroup",
                                                                           str(settings.security_group_id))
            self.file_system_id, self.dns_name = str(settings.file_system_id), str(settings.dns_name)
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


__all__ = ["HomeDirectoriesFileSystem"]
