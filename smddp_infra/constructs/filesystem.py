"""FSx for Lustre for training data, sized by :func:`smddp_infra.sizing.planner.plan_lustre`.

The guide's "scaling efficiency drops on larger clusters" is FSx throughput: the file system
must deliver the cluster's read rate on its BASELINE disk throughput. The construct takes a
:class:`~smddp_infra.sizing.planner.LustrePlan` (never a guessed size) and records the
requirement it was sized for as the tag ``smddp:requiredThroughputMBps``, so
:mod:`smddp_infra.rules` can prove on any template that capacity x per-unit throughput meets it.
"""

from __future__ import annotations

from typing import Optional

from aws_cdk import Duration, RemovalPolicy, Tags, aws_ec2 as ec2, aws_fsx as fsx, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.contract import TAG_REQUIRED_THROUGHPUT
from smddp_infra.errors import ConfigError
from smddp_infra.sizing.lustre_rules import PERSISTENT_TYPES
from smddp_infra.sizing.planner import SIZING_METADATA, LustrePlan

REQUIREMENT_TAG = TAG_REQUIRED_THROUGHPUT
#: Where the dataset bucket appears inside the file system when linked.
DATASET_PATH = "/dataset"


class LustreFileSystem(Construct):
    """An FSx for Lustre file system in the training subnet, shared group with the instances.

    Settings: FileSystemTypeVersion 2.15, LZ4 compression, metadata configuration AUTOMATIC on
    PERSISTENT_2, daily backups kept ``backup_retention_days`` on persistent types, RETAIN,
    and an optional ``AWS::FSx::DataRepositoryAssociation`` to a dataset bucket.

    Attributes: ``file_system`` (the L2), ``file_system_id``, ``mount_name``,
    ``directory_path`` (what a SageMaker FileSystemDataSource uses), ``plan``, ``connections``.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        plan: LustrePlan,
        vpc: ec2.IVpc,
        subnet: ec2.ISubnet,
        security_group: ec2.ISecurityGroup,
        dataset_bucket: Optional[s3.IBucket] = None,
        dataset_prefix: str = "",
        kms_key: Optional[kms.IKey] = None,
        backup_retention_days: int = 7,
    ) -> None:
        """
        :param plan: the sizing plan (deployment type, capacity, per-unit throughput, EFA).
        :param vpc: the VPC of ``subnet``.
        :param subnet: the ONE training subnet (FSx for Lustre takes exactly one).
        :param security_group: the EFA group the training instances carry; its all-traffic
            self rules open Lustre's TCP 988 and 1018-1023 between clients and servers.
        :param dataset_bucket: link this bucket at ``/dataset`` with a data repository
            association (import on create, auto-import of changes). Default: none.
        :param dataset_prefix: key prefix of the dataset in that bucket. Default: the bucket root.
        :param kms_key: KMS key for data at rest. Default: the FSx service key.
        :param backup_retention_days: automatic backups on persistent types (1-90). Default: 7.
            Scratch types take no backups.
        """
        super().__init__(scope, id)
        persistent = plan.deployment_type in PERSISTENT_TYPES
        problems = plan.problems()
        if problems:
            raise ConfigError("LustreFileSystem plan: " + "; ".join(problems))
        if persistent and not 1 <= backup_retention_days <= 90:
            raise ConfigError(f"backup_retention_days must be 1-90 for {plan.deployment_type}, got {backup_retention_days}")
        self.plan = plan

        lustre = fsx.LustreConfiguration(
            deployment_type=fsx.LustreDeploymentType[plan.deployment_type],
            per_unit_storage_throughput=plan.per_unit_storage_throughput,
            data_compression_type=fsx.LustreDataCompressionType.LZ4,
            automatic_backup_retention=Duration.days(backup_retention_days) if persistent else None,
            copy_tags_to_backups=True if persistent else None,
            drive_cache_type=fsx.DriveCacheType[plan.drive_cache_type] if plan.drive_cache_type else None,
        )
        self.file_system = fsx.LustreFileSystem(
            self,
            "FileSystem",
            vpc=vpc,
            vpc_subnet=subnet,
            security_group=security_group,
            storage_capacity_gib=plan.storage_capacity_gib,
            storage_type=fsx.StorageType[plan.storage_type] if plan.storage_type == "HDD" else None,
            file_system_type_version=fsx.FileSystemTypeVersion.V_2_15,
            lustre_configuration=lustre,
            kms_key=kms_key,
            removal_policy=RemovalPolicy.RETAIN,
        )
        cfn = self.file_system.node.default_child
        assert isinstance(cfn, fsx.CfnFileSystem)
        self.cfn_file_system = cfn
        if plan.deployment_type == "PERSISTENT_2":
            # aws-cdk-lib's L2 has no metadata configuration or EFA props (REFERENCE §3).
            cfn.add_property_override("LustreConfiguration.MetadataConfiguration", {"Mode": "AUTOMATIC"})
        if plan.efa_enabled:
            cfn.add_property_override("LustreConfiguration.EfaEnabled", True)
        Tags.of(cfn).add(REQUIREMENT_TAG, _fmt(plan.required_throughput_mbps))
        # What was asked and chosen, so `smddp-infra guard` can re-plan a later update in place.
        cfn.add_metadata(SIZING_METADATA, plan.record())

        self.directory_path_suffix = ""
        self.data_repository_association: Optional[fsx.CfnDataRepositoryAssociation] = None
        if dataset_bucket is not None:
            prefix = dataset_prefix.strip("/")
            self.data_repository_association = fsx.CfnDataRepositoryAssociation(
                self,
                "Dataset",
                file_system_id=self.file_system.file_system_id,
                file_system_path=DATASET_PATH,
                data_repository_path=f"s3://{dataset_bucket.bucket_name}/{prefix + '/' if prefix else ''}",
                batch_import_meta_data_on_create=True,
                s3=fsx.CfnDataRepositoryAssociation.S3Property(
                    auto_import_policy=fsx.CfnDataRepositoryAssociation.AutoImportPolicyProperty(events=["NEW", "CHANGED", "DELETED"])
                ),
            )
            self.directory_path_suffix = DATASET_PATH

    @property
    def file_system_id(self) -> str:
        return self.file_system.file_system_id

    @property
    def mount_name(self) -> str:
        return self.file_system.mount_name

    @property
    def directory_path(self) -> str:
        """``/<mount name>[/dataset]``: SageMaker's FileSystemDataSource.DirectoryPath."""
        return f"/{self.mount_name}{self.directory_path_suffix}"

    @property
    def connections(self) -> ec2.Connections:
        return self.file_system.connections


def _fmt(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
