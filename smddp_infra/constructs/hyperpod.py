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

Construct ids ("Role", "Cluster") are part of the contract: ``ClusterName``, ``VpcConfig`` and
``Orchestrator.Eks`` are create-only, so a changed id or name replaces the cluster and ends
every running job; the cluster is RETAINed and ``smddp-infra guard`` refuses such updates.
"""

from __future__ import annotations

import re
import warnings
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union, cast

from aws_cdk import Annotations, Names, RemovalPolicy, Stack, Token, aws_cloudwatch as cloudwatch, aws_ec2 as ec2, aws_iam as iam, aws_s3 as s3
from aws_cdk import aws_eks_v2 as eks, aws_lambda as lambda_, aws_sagemaker as sagemaker
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.constructs.hyperpod_role import HyperPodAutoscalingRole, HyperPodClusterRole
from smddp_infra.constructs.network_interface import ITrainingNetwork, add_missing_endpoints, missing_endpoints
from smddp_infra.constructs.training_network import TrainingNetwork
from smddp_infra.errors import ConfigError
from smddp_infra.hyperpod import eks as hyperpod_eks, validation as hv
from smddp_infra.hyperpod.values import (
    DEFAULT_LIFECYCLE_PREFIX,
    DEFAULT_MOUNT_PATH,
    DEFAULT_UPDATE_BATCH_PERCENT,
    DEFAULT_UPDATE_WAIT_SECONDS,
    HYPERPOD_INTERFACE_ENDPOINTS,
    InstanceGroup,
)
from smddp_infra.facts.subnets import FILE_SYSTEM_IPS

if TYPE_CHECKING:
    from aws_cdk import aws_eks as eks_v1

_MOUNT_PATH = re.compile(r"/[a-zA-Z0-9._/-]+")


class HyperPodCluster(Construct):
    """A SageMaker HyperPod cluster in the network's training subnet, with its own scoped role.

    Attributes: ``cluster`` (the ``CfnCluster``), ``cluster_name``, ``cluster_arn``, ``role``
    (``iam.IRole``), ``execution_role`` (:class:`HyperPodClusterRole`, None when ``role`` was
    passed), ``instance_groups``, ``orchestrator``, ``mount_path``, ``lifecycle_s3_uri``,
    ``interface_endpoints`` (the endpoints this construct added to the network).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        instance_groups: Sequence[InstanceGroup],
        network: Optional[ITrainingNetwork] = None,
        orchestrator: str = "slurm",
        eks_cluster_arn: Optional[str] = None,
        cluster_name: Optional[str] = None,
        node_recovery: bool = True,
        continuous_provisioning: bool = False,
        autoscaling: bool = False,
        autoscaling_role: Optional[iam.IRole] = None,
        tiered_checkpointing_memory_percent: Optional[int] = None,
        update_rollback_alarms: Sequence["cloudwatch.IAlarm | str"] = (),
        lifecycle_script: Optional[str] = None,
        lifecycle_prefix: str = DEFAULT_LIFECYCLE_PREFIX,
        lifecycle_bucket: Optional[s3.IBucket] = None,
        mount_path: str = DEFAULT_MOUNT_PATH,
        ips_per_node: Optional[int] = None,
        interface_endpoints: Optional[Sequence[str]] = None,
        role: Optional[iam.IRole] = None,
        training_subnet: Optional[ec2.ISubnet] = None,
        security_groups: Optional[Sequence[ec2.ISecurityGroup]] = None,
        job_bucket: Optional[s3.IBucket] = None,
        checkpoint_prefix: Optional[str] = None,
        file_system_id: Optional[str] = None,
        file_system_dns_name: Optional[str] = None,
        file_system_mount_name: Optional[str] = None,
        eks_settings: Optional[hyperpod_eks.HyperPodEks] = None,
        eks_cluster: Optional[Union[eks.ICluster, "eks_v1.ICluster"]] = None,
        eks_kubectl_layer: Optional[lambda_.ILayerVersion] = None,
    ) -> None:
        """
        :param instance_groups: the groups (:class:`~smddp_infra.hyperpod.InstanceGroup`). A Slurm
            cluster has exactly one ``Controller`` group; every Slurm group names its node type.
        :param network: the :class:`~smddp_infra.constructs.network_interface.ITrainingNetwork` the
            cluster joins (a ``TrainingNetwork``, or ``TrainingNetwork.from_attributes(...)`` for one
            built elsewhere): its training subnet, security groups, file system, job bucket and
            checkpoint prefix. Default: none, then the deprecated parts props below are required.
        :param orchestrator: ``slurm`` (HyperPod's Slurm, node types per group) or ``eks``.
            Default: ``slurm``.
        :param eks_cluster_arn: the platform's EKS cluster by ARN (HyperPod does not create one).
            Default: none; with ``eks`` and neither this nor ``eks_cluster``, this construct builds the
            EKS control plane on the network (:mod:`smddp_infra.constructs.hyperpod_eks`).
        :param cluster_name: ``ClusterName`` (create-only: a new name replaces the cluster).
            Default: derived from the construct's path, unique in the account and region.
        :param node_recovery: HyperPod replaces faulty nodes on its own (``NodeRecovery: Automatic``).
            Default: True.
        :param continuous_provisioning: ``NodeProvisioningMode: Continuous`` (EKS only, botocore
            CreateCluster): HyperPod provisions what it can, retries the rest in the background and keeps
            the groups InService while scaling. Default: False (HyperPod's standard provisioning).
        :param autoscaling: HyperPod's managed Karpenter autoscaling (``AutoScaling {Mode: Enable,
            AutoScalerType: Karpenter}``); needs EKS, ``continuous_provisioning`` and ``node_recovery``
            (SageMaker developer guide, "Autoscaling on SageMaker HyperPod EKS", Prerequisites), and a
            ``ClusterRole``. Default: False.
        :param autoscaling_role: the ``ClusterRole`` HyperPod assumes to add and delete nodes, used as
            given. Default: with ``autoscaling``, a new :class:`HyperPodAutoscalingRole` (scoped to this
            account and Region); none without.
        :param tiered_checkpointing_memory_percent: managed tiered checkpointing on (``TieredStorageConfig
            {Mode: Enable, InstanceMemoryAllocationPercentage}``), with this share of each instance's
            memory (0 to 100) for checkpoints; EKS only. Default: none (off, nothing written).
        :param update_rollback_alarms: CloudWatch alarms (or their names, at most 10) whose alarm rolls back
            a group's scheduled AMI update (``DeploymentConfig.AutoRollbackConfiguration``). Default: none.
        :param lifecycle_script: file name of a script under ``lifecycle_prefix`` that runs on every
            node after HyperPod's own set-up (``LifeCycleConfig.OnInitComplete``); the role may read
            that prefix. Default: none (HyperPod's bootstrap alone).
        :param lifecycle_prefix: key prefix of the script in the job bucket. Default: ``hyperpod-lifecycle``.
        :param lifecycle_bucket: the bucket of the script instead of the job bucket, e.g. one named
            ``sagemaker-...`` (the CreateCluster reference asks for ``s3://sagemaker-`` paths; see
            docs/hyperpod.md). Default: the job bucket.
        :param mount_path: where every group mounts the file system. Default: ``/fsx``.
        :param ips_per_node: private IPs planned per node when checking that the subnet holds the
            cluster. Default: none, 5 per node of an EFA type and 1 otherwise (UNCONFIRMED: AWS
            documents no figure for HyperPod; 5 is SageMaker's minimum for an EFA training instance).
        :param interface_endpoints: interface endpoints to add to a network that has no NAT gateway,
            beyond the ones it has. Default: ``ssm``, ``ssmmessages``, ``ec2messages`` (UNCONFIRMED:
            Systems Manager access to nodes; see docs/hyperpod.md); none with a NAT gateway or a
            network given as parts.
        :param role: escape hatch: an existing role for the instance groups, used as given (nothing
            is attached to it). Default: a new :class:`HyperPodClusterRole`.
        :param training_subnet: (parts, deprecated: ``network=TrainingNetwork.from_attributes(...)``
            takes the same seven) the subnet, in one AZ. Default: the network's.
        :param security_groups: (parts) 1 to 5 groups; the first must allow all traffic to and from
            itself (EFA). Default: the network's.
        :param job_bucket: (parts) the bucket of the lifecycle script and checkpoints. Default: the network's.
        :param checkpoint_prefix: (parts) the checkpoint prefix the role may write. Default: the network's.
        :param file_system_id: (parts) the FSx for Lustre file system. Default: the network's.
        :param file_system_dns_name: (parts) its DNS name. Default: the network's.
        :param file_system_mount_name: (parts) its mount name. Default: the network's.
        :param eks_settings: the EKS side (:class:`~smddp_infra.hyperpod.eks.HyperPodEks`): the control
            plane's second AZ and version, admin roles, add-ons, the dependencies chart. Default: none
            (with ``eks_cluster_arn``: nothing on EKS, as before; otherwise HyperPodEks() defaults).
        :param eks_cluster: an imported EKS cluster to attach to (``aws_eks_v2.ICluster``, or the older
            ``aws_eks.ICluster`` many platforms import with); its add-ons and chart are
            installed as on a built one, and a VPC other than the network's is refused. Default: none.
        :param eks_kubectl_layer: a kubectl Lambda layer for the control plane's kubectl provider,
            which installs ``eks_settings.dependencies_chart``. Default: none.
        """
        orchestrator = hv.check_orchestrator("orchestrator", orchestrator)
        if orchestrator != "eks" or eks_cluster_arn is not None:
            hv.check_eks_cluster_arn("eks_cluster_arn", orchestrator, eks_cluster_arn)
        eks_wanted = orchestrator == "eks" and (eks_settings is not None or eks_cluster_arn is None)
        _check_eks_props(orchestrator, eks_cluster_arn, eks_settings, eks_cluster, eks_kubectl_layer)
        if eks_wanted:
            eks_settings = hyperpod_eks.check_eks("eks_settings", eks_settings,
                                                  building=eks_cluster is None and eks_cluster_arn is None)
        groups = hv.check_group_list("instance_groups", instance_groups)
        notes = hv.check_groups("instance_groups", orchestrator, groups)
        hv.check_ips_per_node("ips_per_node", ips_per_node)
        v.flag("node_recovery", node_recovery)
        hv.check_continuous_provisioning("continuous_provisioning", orchestrator, continuous_provisioning)
        hv.check_autoscaling_orchestrator("autoscaling", orchestrator, autoscaling)
        hv.check_autoscaling_needs_continuous("autoscaling", autoscaling, continuous_provisioning)
        hv.check_autoscaling_needs_node_recovery("autoscaling", autoscaling, node_recovery)
        v.require("autoscaling_role", autoscaling_role, "IRole")
        hv.check_autoscaling_role("autoscaling_role", autoscaling, autoscaling_role)
        hv.check_memory_percent("tiered_checkpointing_memory_percent", tiered_checkpointing_memory_percent)
        hv.check_tiered_checkpointing_orchestrator("tiered_checkpointing_memory_percent", orchestrator,
                                                   tiered_checkpointing_memory_percent)
        alarm_names = _alarm_names("update_rollback_alarms", update_rollback_alarms)
        if cluster_name is not None:
            hv.check_cluster_name("cluster_name", cluster_name)
        if lifecycle_script is not None and (not isinstance(lifecycle_script, str) or not 1 <= len(lifecycle_script) <= 128
                                             or "/" in lifecycle_script):
            raise ConfigError(f"lifecycle_script must be a file name of 1 to 128 characters under lifecycle_prefix "
                              f"(LifeCycleConfig.OnInitComplete), got {lifecycle_script!r}")
        v.text("lifecycle_prefix", lifecycle_prefix, optional=False)
        if not lifecycle_prefix.strip("/"):
            raise ConfigError("lifecycle_prefix must name a prefix in the job bucket (the role reads only it), got "
                              f"{lifecycle_prefix!r}")
        if not isinstance(mount_path, str) or not _MOUNT_PATH.fullmatch(mount_path):
            raise ConfigError(f"mount_path must be an absolute path like /fsx (FsxLustreConfig.MountPath), got {mount_path!r}")
        v.text_list("interface_endpoints", interface_endpoints)
        endpoints = HYPERPOD_INTERFACE_ENDPOINTS if interface_endpoints is None else tuple(interface_endpoints)
        v.require("role", role, "IRole")
        v.require("lifecycle_bucket", lifecycle_bucket, "IBucket")
        if lifecycle_bucket is not None and lifecycle_script is None:
            raise ConfigError("lifecycle_bucket was given without lifecycle_script: name the script it holds")
        parts = {"training_subnet": training_subnet, "security_groups": security_groups, "job_bucket": job_bucket,
                 "checkpoint_prefix": checkpoint_prefix, "file_system_id": file_system_id,
                 "file_system_dns_name": file_system_dns_name, "file_system_mount_name": file_system_mount_name}
        given = sorted(k for k, value in parts.items() if value is not None)
        if network is not None and given:
            raise ConfigError(f"pass network, or its parts ({', '.join(given)}), not both")
        if network is None:
            v.require("training_subnet", training_subnet, "ISubnet", optional=False)
            groups_given = v.require_each("security_groups", security_groups if security_groups is not None else [], "ISecurityGroup")
            if not 1 <= len(groups_given) <= 5:
                raise ConfigError(f"security_groups must list 1 to 5 groups (VpcConfig.SecurityGroupIds), got {len(groups_given)}")
            v.require("job_bucket", job_bucket, "IBucket", optional=False)
            fs = [file_system_dns_name, file_system_mount_name]
            if any(x is not None for x in fs) and not all(x is not None for x in fs):
                raise ConfigError("file_system_dns_name and file_system_mount_name go together (FsxLustreConfig needs "
                                  f"both), got dns name {file_system_dns_name!r} and mount name {file_system_mount_name!r}")
        elif not isinstance(network, ITrainingNetwork):
            raise ConfigError(f"network must be an ITrainingNetwork (a TrainingNetwork, or "
                              f"TrainingNetwork.from_attributes(...)), got {type(network).__name__}")
        super().__init__(scope, id)
        if network is None:
            warnings.warn("HyperPodCluster's network parts props are deprecated: pass network=TrainingNetwork."
                          f"from_attributes(scope, id, {', '.join(given)})", DeprecationWarning, stacklevel=3)
            network = TrainingNetwork.from_attributes(
                self, "Network", training_subnet=cast(ec2.ISubnet, training_subnet), security_groups=groups_given,
                job_bucket=cast(s3.IBucket, job_bucket), checkpoint_prefix=checkpoint_prefix,
                file_system_id=file_system_id, file_system_dns_name=file_system_dns_name,
                file_system_mount_name=file_system_mount_name)
        v.stack_of(self)  # one line, not a jsii trace, when created outside a stack
        _refuse_absent_in_partition(self)
        for note in notes:
            Annotations.of(self).add_info(note)
        self._check_plan_regions(groups)
        for index, group in enumerate(groups):
            warning = hv.spot_with_plan_warning(f"instance_groups[{index}]", group)
            if warning:
                Annotations.of(self).add_warning_v2(WARN_SPOT_WITH_PLAN, warning)

        training_subnet, security_groups = network.training_subnet, list(network.security_groups)
        job_bucket, checkpoint_prefix = network.job_bucket, network.checkpoint_prefix
        mount = network.file_system_mount
        # HyperPod nodes mount the file system themselves and can use an EFA-enabled file
        # system's EFA path (with the EFA Lustre client): the network's "training jobs only,
        # over TCP" warning does not apply once a cluster joins (docs/sizing.md, EFA).
        network.add_efa_client(f"HyperPod cluster {self.node.path}")
        self.orchestrator = orchestrator
        self.instance_groups = groups
        self.mount_path = mount_path
        self.cluster_name = cluster_name or _default_name(self)

        self._check_subnet(network, training_subnet, groups, ips_per_node, endpoints, eks=eks_wanted)
        #: The endpoints HyperPod nodes use without a NAT gateway that the network lacked, placed as
        #: the network places its own: the training subnet, private DNS, HTTPS from that subnet.
        self.interface_endpoints = add_missing_endpoints(network, endpoints)
        #: The EKS cluster (built here or imported), and what HyperPod needs on it.
        self.eks_cluster: Optional[Union[eks.ICluster, "eks_v1.ICluster"]] = eks_cluster
        self.eks: Optional[Any] = None
        if eks_wanted:
            from smddp_infra.constructs.hyperpod_eks import HyperPodEksCluster

            assert eks_settings is not None
            self.eks = HyperPodEksCluster(
                self, "Eks", settings=eks_settings, network=network, imported=eks_cluster, imported_arn=eks_cluster_arn, kubectl_layer=eks_kubectl_layer)
            self.eks_cluster = self.eks.cluster
            eks_cluster_arn = self.eks.cluster_arn

        prefix = lifecycle_prefix.strip("/")
        script_bucket = lifecycle_bucket or job_bucket
        self.lifecycle_s3_uri: Optional[str] = (f"s3://{script_bucket.bucket_name}/{prefix}/" if lifecycle_script else None)
        if lifecycle_script:
            _warn_lifecycle_bucket(self, script_bucket.bucket_name)
        self.execution_role: Optional[HyperPodClusterRole] = None
        if role is None:
            self.execution_role = HyperPodClusterRole(
                self,
                "Role",
                cluster_name=self.cluster_name,
                job_bucket=job_bucket,
                lifecycle_bucket=lifecycle_bucket,
                lifecycle_prefix=prefix if lifecycle_script else None,
                checkpoint_prefix=checkpoint_prefix,
                training_subnet=training_subnet,
                security_groups=security_groups,
                file_system_id=network.file_system_id,
                encryption_keys=[network.encryption_key] if network.encryption_key else [],
                eks_cluster_arn=eks_cluster_arn if orchestrator == "eks" else None,
            )
            role = self.execution_role.role
        self.role: iam.IRole = role

        storage: list[Any] = []
        if mount is not None:
            storage.append(sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty(
                fsx_lustre_config=sagemaker.CfnCluster.ClusterFsxLustreConfigProperty(
                    dns_name=mount.dns_name, mount_name=mount.mount_name, mount_path=mount_path)))
        life_cycle = (sagemaker.CfnCluster.ClusterLifeCycleConfigProperty(
            source_s3_uri=self.lifecycle_s3_uri, on_init_complete=lifecycle_script) if lifecycle_script else None)
        rendered = [self._group(g, role, storage if g.mount_file_system else [], life_cycle, alarm_names) for g in groups]
        self.autoscaling_role: Optional[HyperPodAutoscalingRole] = None
        if autoscaling and autoscaling_role is None:
            self.autoscaling_role = HyperPodAutoscalingRole(self, "AutoscalingRole")
            autoscaling_role = self.autoscaling_role.role
        self.cluster_role: Optional[iam.IRole] = autoscaling_role
        self.cluster = sagemaker.CfnCluster(
            self,
            "Cluster",
            cluster_name=self.cluster_name,
            instance_groups=rendered,
            vpc_config=sagemaker.CfnCluster.VpcConfigProperty(
                security_group_ids=[g.security_group_id for g in security_groups],
                subnets=[training_subnet.subnet_id],
            ),
            orchestrator=sagemaker.CfnCluster.OrchestratorProperty(
                eks=sagemaker.CfnCluster.ClusterOrchestratorEksConfigProperty(cluster_arn=eks_cluster_arn),
            ) if orchestrator == "eks" else sagemaker.CfnCluster.OrchestratorProperty(
                slurm=sagemaker.CfnCluster.ClusterOrchestratorSlurmConfigProperty(),
            ),
            node_recovery="Automatic" if node_recovery else "None",
            node_provisioning_mode="Continuous" if continuous_provisioning else None,
            auto_scaling=sagemaker.CfnCluster.ClusterAutoScalingConfigProperty(
                mode="Enable", auto_scaler_type="Karpenter") if autoscaling else None,
            cluster_role=autoscaling_role.role_arn if autoscaling_role is not None else None,
            tiered_storage_config=sagemaker.CfnCluster.TieredStorageConfigProperty(
                mode="Enable", instance_memory_allocation_percentage=tiered_checkpointing_memory_percent,
            ) if tiered_checkpointing_memory_percent is not None else None,
        )
        # Stateful: jobs and their nodes live in it. RETAIN keeps a deleted or replaced cluster
        # (and its running jobs) alive instead of ending them with the stack change.
        self.cluster.apply_removal_policy(RemovalPolicy.RETAIN)
        if self.execution_role is not None:
            # The role's policy must exist before HyperPod starts nodes that use it.
            self.cluster.node.add_dependency(self.execution_role.policy)
        if self.autoscaling_role is not None:
            self.cluster.node.add_dependency(self.autoscaling_role.policy)
        if self.eks is not None:
            # HyperPod's EKS prerequisites (add-ons, chart) exist before the cluster is created.
            for needed in self.eks.dependencies:
                self.cluster.node.add_dependency(needed)
        self.cluster_arn: str = self.cluster.attr_cluster_arn

    @staticmethod
    def _group(group: InstanceGroup, role: iam.IRole, storage: list[Any], life_cycle: Any, alarms: Sequence[str]) -> Any:
        configs = list(storage)
        if group.ebs_volume_gib is not None:
            configs.append(sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty(
                ebs_volume_config=sagemaker.CfnCluster.ClusterEbsVolumeConfigProperty(volume_size_in_gb=group.ebs_volume_gib)))
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
        )

    def _check_plan_regions(self, groups: Sequence[InstanceGroup]) -> None:
        """A training plan from another Region or partition than the stack's, when the Region is known."""
        from smddp_infra.partitions import partition_of

        region = Stack.of(self).region
        if Token.is_unresolved(region):
            return
        for index, group in enumerate(groups):
            hv.check_training_plan_region(f"instance_groups[{index}].training_plan_arn", group.training_plan_arn,
                                          region, partition_of(region))

    def _check_subnet(self, network: ITrainingNetwork, subnet: ec2.ISubnet, groups: Sequence[InstanceGroup],
                      ips_per_node: Optional[int], endpoints: Sequence[str], *, eks: bool) -> None:
        """The nodes' addresses must fit the training subnet beside the file system and the
        endpoints: the network's, the ones HyperPod adds, and on EKS the ones its nodes need
        (``EKS_INTERFACE_ENDPOINTS``, added by :class:`HyperPodEksCluster`), one address each."""
        mask = network.training_subnet_mask
        if mask is not None:
            adding = set(missing_endpoints(network, endpoints))
            if eks:
                adding |= set(missing_endpoints(network, hyperpod_eks.EKS_INTERFACE_ENDPOINTS))
            other = FILE_SYSTEM_IPS + len(network.endpoint_services() or ()) + len(adding)
            hv.check_fits_subnet("instance_groups", groups, ips_override=ips_per_node, subnet_mask=mask,
                                 other_ips=other, subnet=f"the training subnet of {network.node.path}")
            return
        cidr = v.subnet_cidr(subnet)
        if cidr is None:
            Annotations.of(self).add_info(
                f"training_subnet {subnet.node.path}: its CIDR is not known at synth (import it with ipv4_cidr_block=...), "
                "so whether it holds the cluster's nodes is not evaluated")
            return
        hv.check_fits_subnet("instance_groups", groups, ips_override=ips_per_node, subnet_mask=int(cidr.rsplit("/", 1)[1]),
                             other_ips=FILE_SYSTEM_IPS, subnet=f"training_subnet {subnet.node.path} ({cidr})")


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


__all__ = ["HyperPodCluster", "InstanceGroup"]


def _refuse_absent_in_partition(cluster: Construct) -> None:
    """One line at synth where the stack's partition has no ``AWS::SageMaker::Cluster``."""
    from smddp_infra.partitions import absent_in, partition_of

    region = Stack.of(cluster).region
    why = None if Token.is_unresolved(region) else absent_in(region, "AWS::SageMaker::Cluster")
    if why is not None:
        raise ConfigError(f"HyperPodCluster cannot be created in the stack's region {region} (partition "
                          f"{partition_of(region)}): {why}")
