"""HyperPodCluster: a SageMaker HyperPod cluster (Slurm or EKS) on the training network.

The cluster needs what the network already is (REFERENCE, the guide's section on EFA): one
subnet in one AZ, a group with all-traffic rules to and from itself, FSx for Lustre sized for
the reads, a checkpoint bucket, a scoped role. So it takes an ``ITrainingNetwork`` (a
``TrainingNetwork``, or ``TrainingNetwork.from_attributes(...)``) and adds only the cluster: aws-cdk-lib's L1 ``CfnCluster``
(``AWS::SageMaker::Cluster``; there is no L2) with the training subnet and the network's groups
in ``VpcConfig``, the file system mounted natively on every group (``FsxLustreConfig``), node
recovery on, deep health checks on GPU/Trainium groups, and HyperPod's own Slurm
(``SlurmConfig`` node types) instead of lifecycle scripts of our own. An optional user script
runs through ``LifeCycleConfig.OnInitComplete`` from the job bucket's lifecycle prefix.

Its options come in groups, as aws-cdk-lib's ``ec2.Vpc`` takes them: the pure ones
(:class:`~smddp_infra.hyperpod.options.Provisioning`, :class:`~smddp_infra.hyperpod.options.Nodes`)
and, here, the ones that can hold a CDK object (:class:`Orchestration`, :class:`Lifecycle`,
:class:`Updates`, :class:`Roles`). Each refuses a bad value when built; the old flat keywords
are translated in :mod:`smddp_infra.constructs.deprecated`.

Construct ids ("Role", "Cluster") are part of the contract: ``ClusterName``, ``VpcConfig`` and
``Orchestrator.Eks`` are create-only, so a changed id or name replaces the cluster and ends
every running job; the cluster is RETAINed and ``smddp-infra guard`` refuses such updates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, TypeVar, Union

from aws_cdk import Annotations, Names, RemovalPolicy, Stack, Token, aws_cloudwatch as cloudwatch, aws_ec2 as ec2, aws_iam as iam, aws_s3 as s3
from aws_cdk import aws_eks_v2 as eks, aws_lambda as lambda_, aws_sagemaker as sagemaker
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.constructs.deprecated import check_hyperpod_parts, hyperpod_legacy
from smddp_infra.constructs.hyperpod_home import HomeDirectoriesFileSystem
from smddp_infra.constructs.hyperpod_role import HyperPodAutoscalingRole, HyperPodClusterRole
from smddp_infra.constructs.network_interface import ITrainingNetwork, add_missing_endpoints, missing_endpoints
from smddp_infra.constructs.training_network import TrainingNetwork
from smddp_infra.errors import ConfigError, PropTypeError, known_fields
from smddp_infra.hyperpod import eks as hyperpod_eks, validation as hv
from smddp_infra.hyperpod.options import HomeDirectories, Nodes, Provisioning
from smddp_infra.hyperpod.values import (
    DEFAULT_LIFECYCLE_PREFIX,
    DEFAULT_UPDATE_BATCH_PERCENT,
    DEFAULT_UPDATE_WAIT_SECONDS,
    ORCHESTRATORS,
    InstanceGroup,
)
from smddp_infra.facts.subnets import FILE_SYSTEM_IPS
from smddp_infra.schema.fields import choice

if TYPE_CHECKING:
    from typing import Unpack

    from aws_cdk import aws_eks as eks_v1

    from smddp_infra.constructs.deprecated import HyperPodClusterLegacyProps


@known_fields
@dataclass(frozen=True)
class Orchestration:
    """Who schedules the nodes (``orchestration=``): HyperPod's Slurm, or the platform's EKS.

    :param orchestrator: ``slurm`` (HyperPod's Slurm, node types per group) or ``eks``.
        Default: ``slurm``.
    :param eks_cluster_arn: the platform's EKS cluster by ARN (HyperPod does not create one).
        Default: none; with ``eks`` and neither this nor ``eks_cluster``, the cluster builds the
        EKS control plane on the network (:mod:`smddp_infra.constructs.hyperpod_eks`).
    :param eks_settings: the EKS side (:class:`~smddp_infra.hyperpod.eks.HyperPodEks`): the control
        plane's second AZ and version, admin roles, add-ons, the dependencies chart. Default: none
        (with ``eks_cluster_arn``: nothing on EKS; otherwise HyperPodEks() defaults).
    :param eks_cluster: an imported EKS cluster to attach to (``aws_eks_v2.ICluster``, or the older
        ``aws_eks.ICluster`` many platforms import with); its add-ons and chart are installed as on a
        built one, and a VPC other than the network's is refused. Default: none.
    :param eks_kubectl_layer: a kubectl Lambda layer for the control plane's kubectl provider,
        which installs ``eks_settings.dependencies_chart``. Default: none.
    :param slurm_config_strategy: how HyperPod manages the Slurm configuration's partitions
        (``Orchestrator.Slurm.SlurmConfigStrategy``): ``Managed``, ``Overwrite`` or ``Merge``; Slurm only
        (docs/hyperpod.md says what each does). Default: none (HyperPod's default, nothing written).
    """

    orchestrator: str = "slurm"
    eks_cluster_arn: Optional[str] = None
    eks_settings: Optional[hyperpod_eks.HyperPodEks] = None
    eks_cluster: Optional[Union[eks.ICluster, "eks_v1.ICluster"]] = None
    eks_kubectl_layer: Optional[lambda_.ILayerVersion] = None
    slurm_config_strategy: Optional[str] = None

    def __post_init__(self) -> None:
        choice(ORCHESTRATORS).check("orchestrator", self.orchestrator)
        hv.check_slurm_config_strategy("slurm_config_strategy", self.orchestrator, self.slurm_config_strategy)
        if self.orchestrator != "eks" or self.eks_cluster_arn is not None:
            hv.check_eks_cluster_arn("eks_cluster_arn", self.orchestrator, self.eks_cluster_arn)
        _check_eks_props(self.orchestrator, self.eks_cluster_arn, self.eks_settings, self.eks_cluster, self.eks_kubectl_layer)
        if self.eks_wanted:
            hyperpod_eks.check_eks("eks_settings", self.eks_settings,
                                   building=self.eks_cluster is None and self.eks_cluster_arn is None)

    @property
    def eks_wanted(self) -> bool:
        """EKS with HyperPod's prerequisites on it (a control plane built, or add-ons on an imported
        one); an ARN alone, without ``eks_settings``, leaves the platform's EKS as it is."""
        return self.orchestrator == "eks" and (self.eks_settings is not None or self.eks_cluster_arn is None)


@known_fields
@dataclass(frozen=True)
class Lifecycle:
    """A script of the platform's that runs on every node after HyperPod's own set-up (``lifecycle=``).

    :param lifecycle_script: file name of a script under ``lifecycle_prefix`` that runs on every
        node (``LifeCycleConfig.OnInitComplete``); the role may read that prefix. Default: none
        (HyperPod's bootstrap alone).
    :param lifecycle_prefix: key prefix of the script in the job bucket. Default: ``hyperpod-lifecycle``.
    :param lifecycle_bucket: the bucket of the script instead of the job bucket, e.g. one named
        ``sagemaker-...`` (the CreateCluster reference asks for ``s3://sagemaker-`` paths; see
        docs/hyperpod.md). Default: the job bucket.
    """

    lifecycle_script: Optional[str] = None
    lifecycle_prefix: str = DEFAULT_LIFECYCLE_PREFIX
    lifecycle_bucket: Optional[s3.IBucket] = None

    def __post_init__(self) -> None:
        script = self.lifecycle_script
        if script is not None and (not isinstance(script, str) or not 1 <= len(script) <= 128 or "/" in script):
            raise ConfigError(f"lifecycle_script must be a file name of 1 to 128 characters under lifecycle_prefix "
                              f"(LifeCycleConfig.OnInitComplete), got {script!r}")
        v.text("lifecycle_prefix", self.lifecycle_prefix, optional=False)
        if not self.prefix:
            raise ConfigError("lifecycle_prefix must name a prefix in the job bucket (the role reads only it), got "
                              f"{self.lifecycle_prefix!r}")
        v.require("lifecycle_bucket", self.lifecycle_bucket, "IBucket")
        if self.lifecycle_bucket is not None and script is None:
            raise ConfigError("lifecycle_bucket was given without lifecycle_script: name the script it holds")

    @property
    def prefix(self) -> str:
        return self.lifecycle_prefix.strip("/")


@known_fields
@dataclass(frozen=True)
class Updates:
    """How a group's scheduled AMI update (``InstanceGroup.update_schedule``) is rolled back (``updates=``).

    :param update_rollback_alarms: CloudWatch alarms (or their names, at most 10) whose alarm rolls back
        a group's scheduled AMI update (``DeploymentConfig.AutoRollbackConfiguration``). Default: none.
    """

    update_rollback_alarms: Sequence["cloudwatch.IAlarm | str"] = field(default=(), hash=False)

    def __post_init__(self) -> None:
        _alarm_names("update_rollback_alarms", self.update_rollback_alarms)

    @property
    def alarm_names(self) -> list[str]:
        return _alarm_names("update_rollback_alarms", self.update_rollback_alarms)


@known_fields
@dataclass(frozen=True)
class Roles:
    """Roles the platform already owns, used as given: nothing is attached to them (``roles=``).

    :param role: the instance groups' role. Default: a new :class:`HyperPodClusterRole`, scoped to
        this cluster.
    :param autoscaling_role: the ``ClusterRole`` HyperPod assumes to add and delete nodes (with
        ``provisioning.autoscaling``). Default: with autoscaling, a new :class:`HyperPodAutoscalingRole`
        (scoped to this account and Region); none without.
    """

    role: Optional[iam.IRole] = None
    autoscaling_role: Optional[iam.IRole] = None

    def __post_init__(self) -> None:
        v.require("role", self.role, "IRole")
        v.require("autoscaling_role", self.autoscaling_role, "IRole")


_G = TypeVar("_G")


def _group(name: str, value: Optional[_G], kind: type[_G], old: Optional[Mapping[str, Any]]) -> _G:
    """A group prop: built from the old flat keywords, the defaults (None), or an instance of its class."""
    if old is not None:
        return kind(**old)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise PropTypeError(f"{name} must be a {kind.__name__}(...), got {type(value).__name__}")
    return value


#: The group props and their classes, in ``_Options``' order: each old flat keyword is a field of one.
_GROUPS: dict[str, type] = {"orchestration": Orchestration, "provisioning": Provisioning, "lifecycle": Lifecycle,
                            "nodes": Nodes, "updates": Updates, "roles": Roles}


@dataclass(frozen=True)
class _Options:
    """The groups a cluster was given (or built from the old flat keywords), and the old network parts."""

    orchestration: Orchestration
    provisioning: Provisioning
    lifecycle: Lifecycle
    nodes: Nodes
    updates: Updates
    roles: Roles
    parts: Mapping[str, Any]

    @staticmethod
    def of(legacy: Mapping[str, Any], network: Any, groups: Mapping[str, Any]) -> "_Options":
        old = hyperpod_legacy(legacy, {"network": network, **groups}, _GROUPS)
        options = _Options(**{prop: _group(prop, groups[prop], kind, old.get(prop)) for prop, kind in _GROUPS.items()},
                           parts=old.get("network", {}))
        if network is not None and not isinstance(network, ITrainingNetwork):
            raise PropTypeError(f"network must be an ITrainingNetwork (a TrainingNetwork, or "
                                f"TrainingNetwork.from_attributes(...)), got {type(network).__name__}")
        if network is None:
            check_hyperpod_parts(options.parts)
        return options

    def check_across(self) -> None:
        """The rules between groups: what needs EKS, what autoscaling needs."""
        orchestrator, given = self.orchestration.orchestrator, self.provisioning
        hv.check_continuous_provisioning("continuous_provisioning", orchestrator, given.continuous_provisioning)
        hv.check_autoscaling_orchestrator("autoscaling", orchestrator, given.autoscaling)
        hv.check_autoscaling_needs_continuous("autoscaling", given.autoscaling, given.continuous_provisioning)
        hv.check_autoscaling_needs_node_recovery("autoscaling", given.autoscaling, given.node_recovery)
        hv.check_autoscaling_role("autoscaling_role", given.autoscaling, self.roles.autoscaling_role)
        hv.check_tiered_checkpointing_orchestrator("tiered_checkpointing_memory_percent", orchestrator,
                                                   given.tiered_checkpointing_memory_percent)


class HyperPodCluster(Construct):
    """A SageMaker HyperPod cluster in the network's training subnet, with its own scoped role.

    Attributes: ``cluster`` (the ``CfnCluster``), ``cluster_name``, ``cluster_arn``, ``role``
    (``iam.IRole``), ``execution_role`` (:class:`HyperPodClusterRole`, None when ``roles.role`` was
    passed), ``instance_groups``, ``orchestrator``, ``mount_path``, ``lifecycle_s3_uri``,
    ``interface_endpoints`` (the endpoints this construct added to the network), ``home_directories``
    (:class:`~smddp_infra.constructs.hyperpod_home.HomeDirectoriesFileSystem`, None without ``nodes.home_directories``),
    ``eks_cluster_arn`` (the EKS cluster the nodes join, built here or given; None on Slurm).
    """

    def __init__(self, scope: Construct, id: str, *, instance_groups: Sequence[InstanceGroup],
                 network: Optional[ITrainingNetwork] = None, cluster_name: Optional[str] = None,
                 orchestration: Optional[Orchestration] = None, provisioning: Optional[Provisioning] = None,
                 lifecycle: Optional[Lifecycle] = None, nodes: Optional[Nodes] = None, updates: Optional[Updates] = None,
                 roles: Optional[Roles] = None, **legacy: Unpack[HyperPodClusterLegacyProps]) -> None:
        """
        :param instance_groups: the groups (:class:`~smddp_infra.hyperpod.InstanceGroup`). A Slurm
            cluster has exactly one ``Controller`` group; every Slurm group names its node type.
        :param network: the :class:`~smddp_infra.constructs.network_interface.ITrainingNetwork` the
            cluster joins (a ``TrainingNetwork``, or ``TrainingNetwork.from_attributes(...)`` for one
            built elsewhere): its training subnet, security groups, file system, job bucket and
            checkpoint prefix. Default: none, which only the deprecated parts keywords allow.
        :param cluster_name: ``ClusterName`` (create-only: a new name replaces the cluster).
            Default: derived from the construct's path, unique in the account and region.
        :param orchestration: :class:`Orchestration`: ``orchestrator`` (Slurm or EKS), ``eks_cluster_arn``,
            ``eks_settings``, ``eks_cluster``, ``eks_kubectl_layer``. Default: HyperPod's Slurm.
        :param provisioning: :class:`~smddp_infra.hyperpod.options.Provisioning`: ``node_recovery``,
            ``continuous_provisioning``, ``autoscaling``, ``tiered_checkpointing_memory_percent``.
            Default: node recovery on, the rest off.
        :param lifecycle: :class:`Lifecycle`: ``lifecycle_script``, ``lifecycle_prefix``, ``lifecycle_bucket``,
            a script of yours on every node. Default: none (HyperPod's bootstrap alone).
        :param nodes: :class:`~smddp_infra.hyperpod.options.Nodes`: ``mount_path``, ``ips_per_node``,
            ``interface_endpoints``, ``home_directories`` (FSx for OpenZFS at ``/home``). Default: ``/fsx``,
            the planned IPs and endpoints described there, no home directories.
        :param updates: :class:`Updates`: ``update_rollback_alarms``, which roll back a scheduled AMI
            update. Default: none.
        :param roles: :class:`Roles`: ``role``, ``autoscaling_role``, used as given (nothing is attached).
            Default: scoped roles are created.
        :param legacy: the old flat keywords, each the same-named field of a group (or, for the
            network's parts, of ``TrainingNetwork.from_attributes``); for one minor release, with one
            DeprecationWarning naming where they go (:mod:`smddp_infra.constructs.deprecated`).
        """
        given = _Options.of(legacy, network, {"orchestration": orchestration, "provisioning": provisioning,
                                              "lifecycle": lifecycle, "nodes": nodes, "updates": updates,
                                              "roles": roles})
        orchestrator = given.orchestration.orchestrator
        groups = hv.check_group_list("instance_groups", instance_groups)
        notes = hv.check_groups("instance_groups", orchestrator, groups)
        given.check_across()
        if cluster_name is not None:
            hv.check_cluster_name("cluster_name", cluster_name)
        super().__init__(scope, id)
        if network is None:
            network = TrainingNetwork.from_attributes(self, "Network", **given.parts)
        v.stack_of(self)  # one line, not a jsii trace, when created outside a stack
        _refuse_absent_in_partition(self)
        self._annotate(groups, notes)
        # HyperPod nodes mount the file system themselves and can use an EFA-enabled file
        # system's EFA path (with the EFA Lustre client): the network's "training jobs only,
        # over TCP" warning does not apply once a cluster joins (docs/sizing.md, EFA).
        network.add_efa_client(f"HyperPod cluster {self.node.path}")
        _refuse_unvalidatable_release_version(self, groups)
        for index, group in enumerate(groups):
            hv.check_root_volume_key(f"instance_groups[{index}].ebs_root_volume", group.ebs_root_volume,
                                     group.ebs_kms_key_id, network.encryption_key is not None)
        self.orchestrator, self.instance_groups, self.mount_path = orchestrator, groups, given.nodes.mount_path
        self.cluster_name = cluster_name or _default_name(self)

        endpoints = given.nodes.endpoints
        self._check_subnet(network, network.training_subnet, groups, given.nodes.ips_per_node, endpoints,
                           eks=given.orchestration.eks_wanted, orchestrator=orchestrator)
        #: The endpoints HyperPod nodes use without a NAT gateway that the network lacked, placed as
        #: the network places its own: the training subnet, private DNS, HTTPS from that subnet.
        self.interface_endpoints = add_missing_endpoints(network, endpoints)
        eks_cluster_arn = self._eks(given.orchestration, network)
        life = given.lifecycle
        script_bucket = life.lifecycle_bucket or network.job_bucket
        self.lifecycle_s3_uri: Optional[str] = (
            f"s3://{script_bucket.bucket_name}/{life.prefix}/" if life.lifecycle_script else None)
        if life.lifecycle_script:
            _warn_lifecycle_bucket(self, script_bucket.bucket_name)
        self.role: iam.IRole = self._execution_role(given, network, eks_cluster_arn)
        self.home_directories = self._home(given.nodes, network)
        self.cluster = self._cluster(given, network, groups, eks_cluster_arn)
        # Stateful: jobs and their nodes live in it. RETAIN keeps a deleted or replaced cluster
        # (and its running jobs) alive instead of ending them with the stack change.
        self.cluster.apply_removal_policy(RemovalPolicy.RETAIN)
        for needed in self._waits_for():
            self.cluster.node.add_dependency(needed)
        self.cluster_arn: str = self.cluster.attr_cluster_arn
        self._eks_cluster_arn = eks_cluster_arn if orchestrator == "eks" else None

    @property
    def eks_cluster_arn(self) -> Optional[str]:
        """The EKS cluster an EKS-orchestrated cluster's nodes join (``Orchestrator.Eks.ClusterArn``:
        HyperPod creates no EKS cluster, so a platform's task governance, access entries and add-ons
        name this one), a token when the cluster is built here; None on Slurm, which has no EKS cluster."""
        return self._eks_cluster_arn

    def _annotate(self, groups: Sequence[InstanceGroup], notes: Sequence[str]) -> None:
        """Infos for checks not evaluated, the training plans' Regions, Spot beside a plan."""
        for note in notes:
            Annotations.of(self).add_info(note)
        self._check_plan_regions(groups)
        for index, group in enumerate(groups):
            warning = hv.spot_with_plan_warning(f"instance_groups[{index}]", group)
            if warning:
                Annotations.of(self).add_warning_v2(WARN_SPOT_WITH_PLAN, warning)

    def _eks(self, given: Orchestration, network: ITrainingNetwork) -> Optional[str]:
        """The EKS cluster (built here or imported) and what HyperPod needs on it; its ARN."""
        self.eks_cluster: Optional[Union[eks.ICluster, "eks_v1.ICluster"]] = given.eks_cluster
        self.eks: Optional[Any] = None
        if not given.eks_wanted:
            return given.eks_cluster_arn
        from smddp_infra.constructs.hyperpod_eks import HyperPodEksCluster

        self.eks = HyperPodEksCluster(
            self, "Eks", settings=given.eks_settings or hyperpod_eks.HyperPodEks(), network=network,
            imported=given.eks_cluster, imported_arn=given.eks_cluster_arn, kubectl_layer=given.eks_kubectl_layer)
        self.eks_cluster = self.eks.cluster
        return self.eks.cluster_arn  # type: ignore[no-any-return]

    def _execution_role(self, given: _Options, network: ITrainingNetwork, eks_cluster_arn: Optional[str]) -> iam.IRole:
        """The role given (used as is), or a :class:`HyperPodClusterRole` scoped to this cluster."""
        self.execution_role: Optional[HyperPodClusterRole] = None
        if given.roles.role is not None:
            return given.roles.role
        life = given.lifecycle
        self.execution_role = HyperPodClusterRole(
            self,
            "Role",
            cluster_name=self.cluster_name,
            job_bucket=network.job_bucket,
            lifecycle_bucket=life.lifecycle_bucket,
            lifecycle_prefix=life.prefix if life.lifecycle_script else None,
            checkpoint_prefix=network.checkpoint_prefix,
            training_subnet=network.training_subnet,
            security_groups=list(network.security_groups),
            file_system_id=network.file_system_id,
            encryption_keys=[network.encryption_key] if network.encryption_key else [],
            eks_cluster_arn=eks_cluster_arn if given.orchestration.orchestrator == "eks" else None,
        )
        return self.execution_role.role

    def _cluster(self, given: _Options, network: ITrainingNetwork, groups: Sequence[InstanceGroup],
                 eks_cluster_arn: Optional[str]) -> sagemaker.CfnCluster:
        """The ``CfnCluster``: the groups rendered, the network's subnet and groups, the options."""
        mount, life, provisioning = network.file_system_mount, given.lifecycle, given.provisioning
        storage: list[Any] = []
        if mount is not None:
            storage.append(sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty(
                fsx_lustre_config=sagemaker.CfnCluster.ClusterFsxLustreConfigProperty(
                    dns_name=mount.dns_name, mount_name=mount.mount_name, mount_path=self.mount_path)))
        life_cycle = (sagemaker.CfnCluster.ClusterLifeCycleConfigProperty(
            source_s3_uri=self.lifecycle_s3_uri, on_init_complete=life.lifecycle_script) if life.lifecycle_script else None)
        alarms = given.updates.alarm_names
        key = network.encryption_key.key_arn if network.encryption_key is not None else None
        home = [self.home_directories.storage_config] if self.home_directories is not None else []
        rendered = [self._group(g, self.role, (storage if g.mount_file_system else []) + home, life_cycle, alarms, key)
                    for g in groups]
        self.autoscaling_role: Optional[HyperPodAutoscalingRole] = None
        autoscaling_role = given.roles.autoscaling_role
        if provisioning.autoscaling and autoscaling_role is None:
            self.autoscaling_role = HyperPodAutoscalingRole(self, "AutoscalingRole")
            autoscaling_role = self.autoscaling_role.role
        self.cluster_role: Optional[iam.IRole] = autoscaling_role
        eks_orchestrated = given.orchestration.orchestrator == "eks"
        memory_percent = provisioning.tiered_checkpointing_memory_percent
        return sagemaker.CfnCluster(
            self,
            "Cluster",
            cluster_name=self.cluster_name,
            instance_groups=rendered,
            vpc_config=sagemaker.CfnCluster.VpcConfigProperty(
                security_group_ids=[g.security_group_id for g in network.security_groups],
                subnets=[network.training_subnet.subnet_id],
            ),
            orchestrator=sagemaker.CfnCluster.OrchestratorProperty(
                eks=sagemaker.CfnCluster.ClusterOrchestratorEksConfigProperty(cluster_arn=eks_cluster_arn),
            ) if eks_orchestrated else sagemaker.CfnCluster.OrchestratorProperty(
                slurm=sagemaker.CfnCluster.ClusterOrchestratorSlurmConfigProperty(
                    slurm_config_strategy=given.orchestration.slurm_config_strategy),
            ),
            node_recovery="Automatic" if provisioning.node_recovery else "None",
            node_provisioning_mode="Continuous" if provisioning.continuous_provisioning else None,
            auto_scaling=sagemaker.CfnCluster.ClusterAutoScalingConfigProperty(
                mode="Enable", auto_scaler_type="Karpenter") if provisioning.autoscaling else None,
            cluster_role=autoscaling_role.role_arn if autoscaling_role is not None else None,
            tiered_storage_config=sagemaker.CfnCluster.TieredStorageConfigProperty(
                mode="Enable", instance_memory_allocation_percentage=memory_percent,
            ) if memory_percent is not None else None,
        )

    def _home(self, nodes: Nodes, network: ITrainingNetwork) -> Optional[HomeDirectoriesFileSystem]:
        """The home directories' file system and its NFS rules; the cluster waits for them (and for
        the rules on the nodes' groups), as its nodes mount it when they start."""
        self._home_needs: list[Any] = []
        if nodes.home_directories is None:
            return None
        home = HomeDirectoriesFileSystem(
            self, "HomeDirectories", settings=nodes.home_directories, network=network,
            lustre_mount_path=nodes.mount_path if network.file_system_mount is not None else None)
        self._home_needs = list(home.rules)  # the file system and the groups: by reference already
        return home

    def _waits_for(self) -> list[Any]:
        """What must exist before HyperPod creates the cluster: the roles' policies (HyperPod starts
        nodes that use them), HyperPod's EKS prerequisites (add-ons, chart), the home directories."""
        needed: list[Any] = list(self._home_needs)
        if self.execution_role is not None:
            needed.append(self.execution_role.policy)
        if self.autoscaling_role is not None:
            needed.append(self.autoscaling_role.policy)
        if self.eks is not None:
            needed.extend(self.eks.dependencies)
        return needed

    @staticmethod
    def _group(group: InstanceGroup, role: iam.IRole, storage: list[Any], life_cycle: Any, alarms: Sequence[str],
               network_key: Optional[str]) -> Any:
        configs = list(storage)
        # A customer key only when the group asks for one (ebs_kms_key_id, or ebs_root_volume with the
        # network's key): a group with ebs_volume_gib alone keeps today's template (an AWS owned key).
        key = group.ebs_kms_key_id or (network_key if group.ebs_root_volume else None)
        if group.ebs_root_volume:
            configs.append(sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty(
                ebs_volume_config=sagemaker.CfnCluster.ClusterEbsVolumeConfigProperty(root_volume=True, volume_kms_key_id=key)))
        if group.ebs_volume_gib is not None:
            configs.append(sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty(
                ebs_volume_config=sagemaker.CfnCluster.ClusterEbsVolumeConfigProperty(
                    volume_size_in_gb=group.ebs_volume_gib, volume_kms_key_id=key)))
        checks = hv.health_checks(group)
        slurm = (sagemaker.CfnCluster.ClusterSlurmConfigProperty(
            node_type=group.slurm_node_type, partition_names=[group.partition] if group.partition else None)
            if group.slurm_node_type else None)
        return sagemaker.CfnCluster.ClusterInstanceGroupProperty(
            execution_role=role.role_arn,
            instance_count=group.count,
            instance_group_name=group.name,
            instance_type=group.instance_type,
            threads_per_core=group.threads_per_core,
            instance_storage_configs=configs or None,
            on_start_deep_health_checks=list(checks) or None,
            training_plan_arn=group.training_plan_arn,
            slurm_config=slurm,
            life_cycle_config=life_cycle,
            min_instance_count=group.min_count,
            # ClusterSpotOptions has no members (botocore): {} asks for Spot capacity.
            capacity_requirements=sagemaker.CfnCluster.ClusterCapacityRequirementsProperty(spot={}) if group.spot else None,
            kubernetes_config=sagemaker.CfnCluster.ClusterKubernetesConfigProperty(
                labels=dict(group.kubernetes_labels) or None,
                taints=[sagemaker.CfnCluster.ClusterKubernetesTaintProperty(key=t.key, value=t.value, effect=t.effect)
                        for t in group.kubernetes_taints] or None,
            ) if group.kubernetes_labels or group.kubernetes_taints else None,
            scheduled_update_config=_scheduled_update(group.update_schedule, alarms) if group.update_schedule else None,
            image_id=group.image_id,
            instance_requirements=sagemaker.CfnCluster.InstanceRequirementsProperty(
                instance_types=list(group.instance_types)) if group.instance_types else None,
            network_interface=sagemaker.CfnCluster.ClusterNetworkInterfaceProperty(
                interface_type=group.network_interface) if group.network_interface else None,
            image_release_version=group.image_release_version,
            auto_patch_config=sagemaker.CfnCluster.AutoPatchConfigProperty(
                patching_strategy=group.auto_patch) if group.auto_patch else None,
        )

    def _check_plan_regions(self, groups: Sequence[InstanceGroup]) -> None:
        """A training plan from another Region or partition than the stack's, when the Region is known."""
        from smddp_infra.partitions import partition_of

        region = v.concrete_region(self)
        if region is None:
            return
        for index, group in enumerate(groups):
            hv.check_training_plan_region(f"instance_groups[{index}].training_plan_arn", group.training_plan_arn,
                                          region, partition_of(region))

    def _check_subnet(self, network: ITrainingNetwork, subnet: ec2.ISubnet, groups: Sequence[InstanceGroup],
                      ips_per_node: Optional[int], endpoints: Sequence[str], *, eks: bool, orchestrator: str) -> None:
        """The nodes' addresses must fit the training subnet beside the file system and the
        endpoints: the network's, the ones HyperPod adds, and on EKS the ones its nodes need
        (``EKS_INTERFACE_ENDPOINTS``, added by :class:`HyperPodEksCluster`), one address each. A
        node's addresses follow its type and the orchestrator (on EKS its pods take VPC addresses:
        :func:`smddp_infra.facts.addresses.addresses_per_node`); ``ips_per_node`` overrides them."""
        mask = network.training_subnet_mask
        if mask is not None:  # planned by the network: its endpoints are known
            adding = set(missing_endpoints(network, endpoints))
            if eks:
                adding |= set(missing_endpoints(network, hyperpod_eks.EKS_INTERFACE_ENDPOINTS))
            other = FILE_SYSTEM_IPS + len(network.endpoint_services() or ()) + len(adding)
            where = f"the training subnet of {network.node.path}"
        else:
            cidr = v.subnet_cidr(subnet)
            if cidr is None:
                Annotations.of(self).add_info(
                    f"training_subnet {subnet.node.path}: its CIDR is not known at synth (import it with "
                    "ipv4_cidr_block=...), so whether it holds the cluster's nodes is not evaluated")
                return
            mask, other, where = int(cidr.rsplit("/", 1)[1]), FILE_SYSTEM_IPS, f"training_subnet {subnet.node.path} ({cidr})"
        hv.check_fits_subnet("instance_groups", groups, ips_override=ips_per_node, subnet_mask=mask, other_ips=other,
                             orchestrator=orchestrator, subnet=where)


def _check_eks_props(orchestrator: str, arn: Optional[str], settings: Any, cluster: Any, layer: Any) -> None:
    """The EKS props go with ``orchestrator='eks'`` and the cluster is named once."""
    given = [n for n, x in (("eks_settings", settings), ("eks_cluster", cluster), ("eks_kubectl_layer", layer)) if x is not None]
    if orchestrator != "eks" and given:
        raise ConfigError(f"{', '.join(given)} are for orchestrator='eks' only, got orchestrator={orchestrator!r}")
    if arn is not None and cluster is not None:
        raise ConfigError("pass eks_cluster or eks_cluster_arn, not both")
    v.require("eks_cluster", cluster, "ICluster")
    v.require("eks_kubectl_layer", layer, "ILayerVersion")
    if layer is not None and (cluster is not None or arn is not None):
        raise ConfigError("eks_kubectl_layer is for the control plane this construct builds; an imported eks_cluster "
                          "brings its own kubectl_provider")


#: Synth-warning id of a lifecycle bucket not named ``sagemaker-*`` (or not known at synth).
WARN_LIFECYCLE_BUCKET = "smddp:hyperpodLifecycleBucket"
#: Synth-warning id: Spot and a training plan on one group.
WARN_SPOT_WITH_PLAN = "smddp:hyperpodSpotWithPlan"


def _scheduled_update(expression: str, alarms: Sequence[str]) -> Any:
    """``ScheduledUpdateConfig`` with the rolling update a platform would choose (values.py,
    :data:`DEFAULT_UPDATE_BATCH_PERCENT`): batches of a fifth of the group, rolled back the same way, a
    wait between batches, and auto-rollback on the cluster's alarms when it was given any."""
    batch = sagemaker.CfnCluster.CapacitySizeConfigProperty(type="CAPACITY_PERCENTAGE", value=DEFAULT_UPDATE_BATCH_PERCENT)
    return sagemaker.CfnCluster.ScheduledUpdateConfigProperty(
        schedule_expression=expression,
        deployment_config=sagemaker.CfnCluster.DeploymentConfigProperty(
            rolling_update_policy=sagemaker.CfnCluster.RollingUpdatePolicyProperty(
                maximum_batch_size=batch, rollback_maximum_batch_size=batch),
            wait_interval_in_seconds=DEFAULT_UPDATE_WAIT_SECONDS,
            auto_rollback_configuration=[sagemaker.CfnCluster.AlarmDetailsProperty(alarm_name=name) for name in alarms] or None,
        ),
    )


def _alarm_names(prop: str, alarms: Any) -> list[str]:
    """Alarm names from alarms or names (one line for anything else)."""
    hv.check_rollback_alarms(prop, alarms)
    names = []
    for index, alarm in enumerate(alarms):
        if isinstance(alarm, str):
            names.append(alarm)
        elif hasattr(alarm, "alarm_name") and hasattr(alarm, "alarm_arn"):
            names.append(alarm.alarm_name)
        else:
            raise ConfigError(f"{prop}[{index}] must be a CloudWatch alarm (cloudwatch.IAlarm) or its name, got "
                              f"{type(alarm).__name__}")
    return names


def _warn_lifecycle_bucket(scope: Construct, name: str) -> None:
    """May fail: the CreateCluster reference (ClusterLifeCycleConfig.SourceS3Uri) asks for a path that
    starts with ``s3://sagemaker-``, because the AWS managed instance policy reads only such buckets.
    This role reads the bucket it is given; whether CreateCluster itself refuses another name is
    UNCONFIRMED (moto 5.2.5 refuses it)."""
    if not Token.is_unresolved(name) and name.startswith("sagemaker-"):
        return
    shown = "a name chosen at deploy" if Token.is_unresolved(name) else repr(name)
    Annotations.of(scope).add_warning_v2(
        WARN_LIFECYCLE_BUCKET,
        f"lifecycle_script: the script's bucket has {shown}, not one starting with 'sagemaker-'; the CreateCluster "
        "reference asks for s3://sagemaker-... lifecycle paths (for the AWS managed policy, which this role replaces); "
        "if CreateCluster refuses it (UNCONFIRMED), pass lifecycle_bucket=<a bucket named sagemaker-...>")


def _default_name(scope: Construct) -> str:
    """A ClusterName from the construct's path (stack name + path + hash), at most 63 characters."""
    name = Names.unique_resource_name(scope, max_length=63, separator="-")
    name = re.sub(r"[^a-zA-Z0-9-]", "", name).strip("-")
    name = re.sub(r"-{2,}", "-", name)
    return name[:63].rstrip("-")


__all__ = ["HomeDirectories", "HyperPodCluster", "InstanceGroup", "Lifecycle", "Nodes", "Orchestration", "Provisioning",
           "Roles", "Updates"]


def _refuse_absent_in_partition(cluster: Construct) -> None:
    """One line at synth where the stack's partition has no ``AWS::SageMaker::Cluster``."""
    from smddp_infra.partitions import absent_in, partition_of

    region = Stack.of(cluster).region
    why = None if Token.is_unresolved(region) else absent_in(region, "AWS::SageMaker::Cluster")
    if why is not None:
        raise ConfigError(f"HyperPodCluster cannot be created in the stack's region {region} (partition "
                          f"{partition_of(region)}): {why}")


#: aws-cdk-lib's feature flag that makes its built-in CloudFormation validation fail the synth.
VALIDATE_FLAG = "@aws-cdk/core:validateAgainstDefaultRules"


def _refuse_unvalidatable_release_version(cluster: Construct, groups: Sequence[InstanceGroup]) -> None:
    """aws-cdk-lib 2.275's built-in CloudFormation validation carries an ``AWS::SageMaker::Cluster``
    schema without ``ImageReleaseVersion`` (F3002 "Additional properties are not allowed"), though its
    L1, botocore and the installed cfn-lint schema have it; with :data:`VALIDATE_FLAG` true that
    fails the synth with a jsii trace, so it is refused here in one line with the way out."""
    found = next((i for i, g in enumerate(groups) if g.image_release_version is not None), None)
    if found is not None and cluster.node.try_get_context(VALIDATE_FLAG) in (True, "true"):
        raise ConfigError(f"instance_groups[{found}].image_release_version: aws-cdk-lib's built-in CloudFormation validation "
                          f"does not know ImageReleaseVersion yet (F3002), and {VALIDATE_FLAG} is true here, so the synth "
                          "would fail: set that flag to false in cdk.json (its findings become warnings) or leave "
                          "image_release_version out")
