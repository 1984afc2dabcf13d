"""The values a HyperPod cluster is written from: typed, frozen, checked elsewhere.

An :class:`InstanceGroup` is a plain value (no construct, no token): the construct checks
each with :mod:`smddp_infra.hyperpod.validation` before any jsii call and renders it into
``AWS::SageMaker::Cluster`` ``InstanceGroups[]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence, cast

#: Orchestrators HyperPod offers (CreateCluster ``Orchestrator``: ``Slurm`` or ``Eks``).
ORCHESTRATORS: tuple[str, ...] = ("slurm", "eks")
#: Slurm node types of an instance group (botocore ``ClusterSlurmNodeType``).
SLURM_NODE_TYPES: tuple[str, ...] = ("Controller", "Login", "Compute")
#: Deep health checks run when a GPU/Trainium group's instances start (botocore
#: ``DeepHealthCheckType`` has a third, ``MultiNodeTrainingValidation``, which a group may name
#: explicitly; the default is the two single-node checks).
DEEP_HEALTH_CHECKS: tuple[str, ...] = ("InstanceStress", "InstanceConnectivity")
#: Where every group mounts the network's FSx for Lustre file system (``FsxLustreConfig.MountPath``);
#: the same path training scripts and job-config's ``--format hyperpod`` use.
DEFAULT_MOUNT_PATH = "/fsx"
#: Interface endpoints HyperPod nodes use in a subnet without a NAT gateway, beyond the training
#: network's (sagemaker.api, sts, logs, monitoring, ecr.api, ecr.dkr): Systems Manager for node
#: access (``ssm``, ``ssmmessages``; the managed instance policy grants ``ssmmessages:*Channel``)
#: and ``ec2messages``. UNCONFIRMED: AWS documents no list of endpoints for HyperPod nodes; with
#: a NAT gateway none is needed.
HYPERPOD_INTERFACE_ENDPOINTS: tuple[str, ...] = ("ssm", "ssmmessages", "ec2messages")
#: Key prefix in the job bucket under which the optional lifecycle script lives.
DEFAULT_LIFECYCLE_PREFIX = "hyperpod-lifecycle"
#: Kubernetes taint effects (botocore ``ClusterKubernetesTaintEffect``; Kubernetes' own three);
#: used when botocore is not installed.
TAINT_EFFECTS: tuple[str, ...] = ("NoSchedule", "PreferNoSchedule", "NoExecute")
#: The rolling update an ``update_schedule`` runs (``ScheduledUpdateConfig.DeploymentConfig``), a
#: platform's choice, not an AWS default: at most a fifth of the group's instances at a time
#: (``MaximumBatchSize {CAPACITY_PERCENTAGE, 20}``, the same for a rollback), five minutes between
#: batches (``WaitIntervalInSeconds``, the API allows 0 to 3,600), and auto-rollback on the alarms
#: the cluster is given (``update_rollback_alarms``; none, no ``AutoRollbackConfiguration``).
#: How HyperPod rounds a percentage of a small group (one node) is UNCONFIRMED.
DEFAULT_UPDATE_BATCH_PERCENT = 20
DEFAULT_UPDATE_WAIT_SECONDS = 300


@dataclass(frozen=True)
class KubernetesTaint:
    """A Kubernetes taint HyperPod puts on every node of an EKS group (``KubernetesConfig.Taints[]``).

    :param key: ``Key``: Kubernetes' qualified name, an optional DNS-subdomain prefix and ``/``,
        then up to 63 letters, digits, ``-``, ``_``, ``.`` (botocore ``ClusterKubernetesTaintKey``).
    :param value: ``Value``: up to 63 of the same characters. Default: none (a taint without a value).
    :param effect: ``NoSchedule``, ``PreferNoSchedule`` or ``NoExecute``. Default: ``NoSchedule``
        (pods without a toleration are not scheduled; running ones stay).
    """

    key: str
    value: Optional[str] = None
    effect: str = "NoSchedule"


@dataclass(frozen=True)
class InstanceGroup:
    """One HyperPod instance group.

    :param name: ``InstanceGroupName`` (letters, digits, hyphens; at most 63), unique in the cluster.
    :param instance_type: a HyperPod instance type (botocore's ``ClusterInstanceType`` enum), e.g.
        ``ml.p5.48xlarge``. Required unless ``instance_types`` is given (the two are exclusive).
    :param count: instances in the group (``InstanceCount``; changing it updates the cluster in place). Required.
    :param threads_per_core: 1 (hyperthreading off) or 2. Default: none, HyperPod's default for the type.
    :param ebs_volume_gib: an extra EBS volume per instance (``EbsVolumeConfig.VolumeSizeInGB``,
        1 to 16,384). Default: none.
    :param training_plan_arn: a SageMaker training plan reserved for HyperPod clusters
        (``arn:aws:sagemaker:<region>:<account>:training-plan/<name>``). Default: none (on-demand).
    :param slurm_node_type: ``Controller``, ``Login`` or ``Compute`` (Slurm only). Default: none,
        which the Slurm orchestrator refuses: every Slurm group says what it is.
    :param partition: the Slurm partition of a compute group. Default: none (HyperPod's default).
    :param deep_health_checks: checks run when instances start. Default: none, which means
        ``InstanceStress`` and ``InstanceConnectivity`` on GPU/Trainium EFA types and no checks on
        other types; ``()`` turns them off.
    :param mount_file_system: mount the network's FSx for Lustre file system at
        ``/fsx``. Default: True.
    :param min_count: ``MinInstanceCount``: the instances the group needs to become InService
        (at most ``count``; if HyperPod cannot reach it within 3 hours the group rolls back, botocore's
        ``ClusterInstanceGroupSpecification``). Default: none (every instance).
    :param spot: run the group on EC2 Spot capacity (``CapacityRequirements: {Spot: {}}``; SageMaker
        developer guide, "Spot instances in Amazon SageMaker HyperPod"). Default: False (on-demand or the
        training plan; nothing is written).
    :param kubernetes_labels: node labels on every node of an EKS group (``KubernetesConfig.Labels``,
        at most 50). Default: none.
    :param kubernetes_taints: :class:`KubernetesTaint` values on every node of an EKS group
        (``KubernetesConfig.Taints``, at most 50). Default: none.
    :param update_schedule: when HyperPod updates the group's AMI, a cron expression in the form the
        CloudFormation schema accepts, ``cron(<minute> <hour> <day-of-month> <month> <day-of-week> <year>)``,
        e.g. ``cron(0 3 ? * SUN *)`` (``ScheduledUpdateConfig.ScheduleExpression``); the update rolls in
        batches (:data:`DEFAULT_UPDATE_BATCH_PERCENT`). Default: none (no scheduled update).
    :param image_id: ``ImageId``: ``ami-...`` (a HyperPod public AMI or a custom one: unencrypted, owned by
        the account) or ``default``. Default: none (HyperPod's current image).
    :param network_interface: ``efa`` (EFA with ENA: IP traffic and an address per interface) or
        ``efa-only`` (the EFA device without ENA: no IP traffic and no private IP on the extra
        interfaces) (``NetworkInterface.InterfaceType``). Default: none (HyperPod's default; the
        address plan counts it as ``efa``).
    :param instance_types: a flexible group: 1 to 20 HyperPod instance types in priority order
        (``InstanceRequirements.InstanceTypes``; HyperPod tries the first, then falls back), instead of
        ``instance_type``. Subnet and EFA sizing take the most demanding type. Default: none.
    :param ebs_root_volume: encrypt the root EBS volume with a customer-managed key
        (``EbsVolumeConfig {RootVolume: true, VolumeKmsKeyId}``; the size is HyperPod's): the key is
        ``ebs_kms_key_id`` or the network's key, and the ``ebs_volume_gib`` volume takes it too. Default:
        False (an AWS owned key).
    :param ebs_kms_key_id: the KMS key (id or ARN) of the group's EBS volumes (``VolumeKmsKeyId``).
        Default: none (with ``ebs_root_volume``, the network's key).
    :param image_release_version: ``ImageReleaseVersion``, the HyperPod-managed AMI version
        ``MAJOR.MINOR.PATCH`` (EKS only; a change runs UpdateClusterSoftware on the group). Default: none
        (the latest when the group is created).
    :param auto_patch: ``AutoPatchConfig.PatchingStrategy``: ``WhenIdle`` (each node patched once idle)
        or ``WhenAllIdle`` (all nodes once all are idle). Default: none (no automatic patching).
    """

    name: str
    instance_type: Optional[str] = None
    #: Required: the default (None) exists only so that ``instance_type`` may be left out for
    #: ``instance_types``; the validator refuses a group without a count in one line.
    count: int = cast(int, None)
    threads_per_core: Optional[int] = None
    ebs_volume_gib: Optional[int] = None
    training_plan_arn: Optional[str] = None
    slurm_node_type: Optional[str] = None
    partition: Optional[str] = None
    deep_health_checks: Optional[tuple[str, ...]] = None
    mount_file_system: bool = True
    min_count: Optional[int] = None
    spot: bool = False
    kubernetes_labels: Mapping[str, str] = field(default_factory=dict, hash=False)
    kubernetes_taints: Sequence[KubernetesTaint] = field(default=(), hash=False)
    update_schedule: Optional[str] = None
    image_id: Optional[str] = None
    network_interface: Optional[str] = None
    instance_types: Optional[Sequence[str]] = field(default=None, hash=False)
    ebs_root_volume: bool = False
    ebs_kms_key_id: Optional[str] = None
    image_release_version: Optional[str] = None
    auto_patch: Optional[str] = None

    @property
    def types(self) -> tuple[str, ...]:
        """The group's instance types: ``instance_types`` in priority order, or ``instance_type``."""
        if self.instance_types:
            return tuple(self.instance_types)
        return (self.instance_type,) if self.instance_type else ()


#: The default app's controller (``smddp:hyperpod=true``): a general-purpose type HyperPod offers;
#: Slurm's controller schedules, it does not train. A sizing choice, not an AWS figure.
DEFAULT_CONTROLLER_TYPE = "ml.m5.2xlarge"


def default_hyperpod_groups(instance_type: str, instance_count: int) -> tuple[InstanceGroup, ...]:
    """What ``smddp:hyperpod=true`` builds: one ``controller`` node and ``instance_count``
    ``compute`` nodes of the network's instance type (deep health checks on by default)."""
    return (
        InstanceGroup(name="controller", instance_type=DEFAULT_CONTROLLER_TYPE, count=1, slurm_node_type="Controller"),
        InstanceGroup(name="compute", instance_type=instance_type, count=instance_count, slurm_node_type="Compute"),
    )
