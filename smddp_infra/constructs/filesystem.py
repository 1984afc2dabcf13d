"""FSx for Lustre for training data, sized by :func:`smddp_infra.sizing.planner.plan_lustre`.

The guide's "scaling efficiency drops on larger clusters" is FSx throughput: the file system
must deliver the cluster's read rate on its BASELINE disk throughput. The construct takes a
:class:`~smddp_infra.sizing.planner.LustrePlan` (never a guessed size) and records the
requirement it was sized for as the tag ``smddp:requiredThroughputMBps``, so
:mod:`smddp_infra.rules` can prove on any template that capacity x per-unit throughput meets it.
"""

from __future__ import annotations

import functools
from typing import Any, Optional

from aws_cdk import Annotations, Duration, RemovalPolicy, Tags, aws_ec2 as ec2, aws_fsx as fsx, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.constructs._training_network_validation import context_cost_warning
from smddp_infra.constructs.monitoring import FileSystemMonitoring, MonitoringOptions, monitoring_options, validate_options
from smddp_infra.contract import TAG_REQUIRED_THROUGHPUT
from smddp_infra.errors import ConfigError, PropTypeError
from smddp_infra.sizing.guards import plan_alerts
from smddp_infra.sizing.lustre_rules import MAX_BACKUP_RETENTION_DAYS, PERSISTENT_TYPES
from smddp_infra.sizing.planner import CUSTOMER_KEY_WHY, SIZING_METADATA, LustrePlan
from smddp_infra.sizing.tiering import CACHE_SIZING_MODE, TieringPlan

REQUIREMENT_TAG = TAG_REQUIRED_THROUGHPUT
#: Where the dataset bucket appears inside the file system when linked.
DATASET_PATH = "/dataset"


class LustreFileSystem(Construct):
    """An FSx for Lustre file system in the training subnet, shared group with the instances.

    Settings: FileSystemTypeVersion 2.15, LZ4 compression, metadata configuration AUTOMATIC on
    PERSISTENT_2, daily backups kept ``backup_retention_days`` on persistent types, RETAIN,
    and an optional ``AWS::FSx::DataRepositoryAssociation`` to a dataset bucket.

    Attributes: ``file_system`` (the L2), ``file_system_id``, ``mount_name``,
    ``directory_path`` (what a SageMaker FileSystemDataSource uses), ``plan``, ``connections``,
    ``monitoring`` (:class:`FileSystemMonitoring`, None with ``monitoring=False``).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        plan: "LustrePlan | TieringPlan",
        vpc: ec2.IVpc,
        subnet: ec2.ISubnet,
        security_group: ec2.ISecurityGroup,
        dataset_bucket: Optional[s3.IBucket] = None,
        dataset_prefix: str = "",
        kms_key: Optional[kms.IKey] = None,
        backup_retention_days: int = 7,
        monthly_cost_warning_usd: Optional[float] = None,
        monitoring: "bool | MonitoringOptions" = True,
    ) -> None:
        """
        :param plan: the sizing plan (deployment type, capacity, per-unit throughput, EFA), or an
            Intelligent-Tiering plan (:func:`~smddp_infra.sizing.tiering.plan_intelligent_tiering`:
            StorageType INTELLIGENT_TIERING, ThroughputCapacity and a USER_PROVISIONED read cache, no
            StorageCapacity; its free-capacity alarm does not apply, so ``monitoring`` is not built).
        :param vpc: the VPC of ``subnet``.
        :param subnet: the ONE training subnet (FSx for Lustre takes exactly one).
        :param security_group: the EFA group the training instances carry; its all-traffic
            self rules open Lustre's TCP 988 and 1018-1023 between clients and servers.
        :param dataset_bucket: link this bucket at ``/dataset`` with a data repository
            association (import on create, auto-import of changes). Default: none.
        :param dataset_prefix: key prefix of the dataset in that bucket. Default: the bucket root.
        :param kms_key: KMS key for data at rest, written as its ARN; PERSISTENT plans only (FSx
            encrypts SCRATCH file systems with its service key). Default: the FSx service key.
        :param backup_retention_days: automatic backups on persistent types (1-90). Default: 7.
            Scratch types take no backups.
        :param monthly_cost_warning_usd: a plan costing more per month is a synth warning, as is
            one above the default regional FSx for Lustre quota (100,800 GiB). Default: the
            ``smddp:monthlyCostWarningUSD`` context value, else 20,000 (:mod:`smddp_infra.sizing.guards`).
        :param monitoring: alarms on read throughput (against the plan's baseline) and free
            capacity, a dashboard and an encrypted SNS topic (:class:`FileSystemMonitoring`);
            ``MonitoringOptions(...)`` to tune them, False for none. Default: True.
        """
        _validate_values(plan=plan, vpc=vpc, subnet=subnet, security_group=security_group, dataset_bucket=dataset_bucket,
                         dataset_prefix=dataset_prefix, kms_key=kms_key, backup_retention_days=backup_retention_days,
                         monthly_cost_warning_usd=monthly_cost_warning_usd)
        tiered = isinstance(plan, TieringPlan)
        watch = _monitoring_options(monitoring, plan) if isinstance(plan, LustrePlan) else None
        super().__init__(scope, id)
        if tiered and monitoring is not False:
            Annotations.of(self).add_info(
                "monitoring not built for an Intelligent-Tiering file system (no provisioned StorageCapacity for the "
                "free-capacity alarm); watch ThroughputCapacity with smddp-infra observe: not evaluated here")
        v.stack_of(self)  # one line, not a jsii trace, when created outside a stack
        v.check_subnet_in_vpc(self, subnet, vpc, subnet_prop="subnet")
        persistent = plan.deployment_type in PERSISTENT_TYPES
        self.plan = plan
        if monthly_cost_warning_usd is None:
            monthly_cost_warning_usd = context_cost_warning(self)
            cost_setting = ("context smddp:monthlyCostWarningUSD" if monthly_cost_warning_usd is not None
                            else "default; set monthly_cost_warning_usd or smddp:monthlyCostWarningUSD")
        else:
            cost_setting = "monthly_cost_warning_usd"
        #: Quota and spend alerts, also shown as synth warnings on this construct.
        self.alerts = plan_alerts(plan, monthly_cost_warning_usd=monthly_cost_warning_usd, cost_setting=cost_setting)
        for alert in self.alerts:
            Annotations.of(self).add_warning_v2(alert.id, alert.message)
        if not v.group_takes_rules(security_group):
            # aws-cdk-lib's L2 adds a self rule for TCP 988-1023; an immutable import drops it.
            Annotations.of(self).add_warning_v2(
                "smddp:lustreGroupImmutable",
                f"security_group {security_group.security_group_id} was imported with mutable=False: it must already admit "
                "TCP 988 and 1018-1023 from itself (FSx refuses to create a file system whose groups do not admit 988)",
            )

        lustre = fsx.LustreConfiguration(
            deployment_type=fsx.LustreDeploymentType[plan.deployment_type],
            per_unit_storage_throughput=plan.per_unit_storage_throughput,
            data_compression_type=fsx.LustreDataCompressionType.LZ4,
            automatic_backup_retention=Duration.days(backup_retention_days) if persistent else None,
            copy_tags_to_backups=True if persistent else None,
            drive_cache_type=(fsx.DriveCacheType[plan.drive_cache_type]
                              if isinstance(plan, LustrePlan) and plan.drive_cache_type else None),
        )
        self.file_system = fsx.LustreFileSystem(
            self,
            "FileSystem",
            vpc=vpc,
            vpc_subnet=subnet,
            security_group=security_group,
            # Intelligent-Tiering has no StorageCapacity, but the L2 requires a valid one: a placeholder
            # the override below deletes (aws-cdk-lib's L2 has no throughput or cache props either).
            storage_capacity_gib=TIERING_PLACEHOLDER_GIB if tiered else plan.storage_capacity_gib,
            storage_type=fsx.StorageType[plan.storage_type] if plan.storage_type == "HDD" else None,
            file_system_type_version=fsx.FileSystemTypeVersion.V_2_15,
            lustre_configuration=lustre,
            kms_key=kms_key,
            removal_policy=RemovalPolicy.RETAIN,
        )
        cfn = self.file_system.node.default_child
        assert isinstance(cfn, fsx.CfnFileSystem)
        self.cfn_file_system = cfn
        if kms_key is not None:
            # The L2 writes the bare key id, which KMS resolves in the stack's OWN account: a key
            # of another account is only found by its ARN (FSx API reference, KmsKeyId).
            cfn.kms_key_id = kms_key.key_arn
        if plan.deployment_type == "PERSISTENT_2":
            # aws-cdk-lib's L2 has no metadata configuration or EFA props (REFERENCE §3).
            cfn.add_property_override("LustreConfiguration.MetadataConfiguration", {"Mode": "AUTOMATIC"})
        if plan.efa_enabled:
            cfn.add_property_override("LustreConfiguration.EfaEnabled", True)
        if isinstance(plan, TieringPlan):
            _intelligent_tiering(cfn, plan)
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

        #: The alarms, dashboard and topic (None with ``monitoring=False``).
        self.monitoring: Optional[FileSystemMonitoring] = None
        if watch is not None:
            self.monitoring = FileSystemMonitoring(self, "Monitoring", file_system_id=self.file_system.file_system_id,
                                                   sizing=plan.sizing_record(), options=watch,
                                                   encryption_key=kms_key)

    @property
    def file_system_id(self) -> str:
        return self._attributes[0]

    @property
    def mount_name(self) -> str:
        return self._attributes[1]

    @functools.cached_property
    def _attributes(self) -> tuple[str, str]:
        """The id and mount name tokens, read once from jsii (they never change)."""
        return self.file_system.file_system_id, self.file_system.mount_name

    @property
    def directory_path(self) -> str:
        """``/<mount name>[/dataset]``: SageMaker's FileSystemDataSource.DirectoryPath."""
        return f"/{self.mount_name}{self.directory_path_suffix}"

    @property
    def connections(self) -> ec2.Connections:
        return self.file_system.connections


#: What the L2 is given for an Intelligent-Tiering plan and the override then deletes.
TIERING_PLACEHOLDER_GIB = 1200


def _intelligent_tiering(cfn: fsx.CfnFileSystem, plan: TieringPlan) -> None:
    """The L1 properties of an Intelligent-Tiering file system (CloudFormation's schema has them;
    aws-cdk-lib's L2 does not): StorageType, ThroughputCapacity, the read cache, no StorageCapacity."""
    cfn.add_property_override("StorageType", plan.storage_type)
    cfn.add_property_deletion_override("StorageCapacity")
    cfn.add_property_override("LustreConfiguration.ThroughputCapacity", plan.throughput_capacity_mbps)
    cfn.add_property_override("LustreConfiguration.DataReadCacheConfiguration",
                              {"SizingMode": CACHE_SIZING_MODE, "SizeGiB": plan.read_cache_gib})


def _validate_values(*, plan: Any, vpc: Any, subnet: Any, security_group: Any, dataset_bucket: Any, dataset_prefix: Any,
                     kms_key: Any, backup_retention_days: Any, monthly_cost_warning_usd: Any) -> None:
    """One validator per prop, before any jsii call (aws-cdk-lib's ``validateProps`` manner)."""
    if not isinstance(plan, TieringPlan):
        v.instance("plan", plan, LustrePlan, "from smddp_infra.sizing.plan_lustre(...)")
    if plan is None:
        raise PropTypeError("plan is required: pass smddp_infra.sizing.plan_lustre(...)")
    problems = plan.problems()
    if problems:
        raise ConfigError("LustreFileSystem plan: " + "; ".join(problems))
    v.require("vpc", vpc, "IVpc", optional=False)
    v.require("subnet", subnet, "ISubnet", optional=False)
    v.require("security_group", security_group, "ISecurityGroup", optional=False)
    v.require("dataset_bucket", dataset_bucket, "IBucket")
    v.text("dataset_prefix", dataset_prefix, optional=False)
    v.require("kms_key", kms_key, "IKey")
    if kms_key is not None and plan.deployment_type not in PERSISTENT_TYPES:
        raise ConfigError(f"kms_key was given with a {plan.deployment_type} plan: {CUSTOMER_KEY_WHY}; plan a PERSISTENT "
                          "type (plan_lustre(..., customer_key=True)) or drop kms_key")
    if plan.deployment_type in PERSISTENT_TYPES:
        v.whole("backup_retention_days", backup_retention_days, minimum=1, maximum=MAX_BACKUP_RETENTION_DAYS,
                why=f" for {plan.deployment_type}")
    v.number("monthly_cost_warning_usd", monthly_cost_warning_usd, minimum=0, exclusive=True, unit="USD per month")


def _monitoring_options(value: Any, plan: LustrePlan) -> Optional[MonitoringOptions]:
    options = monitoring_options(value)
    if options is not None:
        validate_options(options, capacity_gib=plan.storage_capacity_gib)
    return options


def _fmt(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
