"""The values a HyperPod cluster is written from: typed, frozen, checked elsewhere.

An :class:`InstanceGroup` is a plain value (no construct, no token): the construct checks
each with :mod:`smddp_infra.hyperpod.validation` before any jsii call and renders it into
``AWS::SageMaker::Cluster`` ``InstanceGroups[]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

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
#: Private IPs planned per HyperPod node of an EFA type. UNCONFIRMED: AWS documents no figure for
#: HyperPod; this is SageMaker's documented minimum for a training instance that uses EFA.
#: Override with ``HyperPodCluster(ips_per_node=...)``.
DEFAULT_IPS_PER_EFA_NODE = 5
#: ... and per node of a type without EFA (one network interface, one address). UNCONFIRMED.
DEFAULT_IPS_PER_NODE = 1
#: Key prefix in the job bucket under which the optional lifecycle script lives.
DEFAULT_LIFECYCLE_PREFIX = "hyperpod-lifecycle"


@dataclass(frozen=True)
class InstanceGroup:
    """One HyperPod instance group.

    :param name: ``InstanceGroupName`` (letters, digits, hyphens; at most 63), unique in the cluster.
    :param instance_type: a HyperPod instance type (botocore's ``ClusterInstanceType`` enum), e.g.
        ``ml.p5.48xlarge``.
    :param count: instances in the group (``InstanceCount``; changing it updates the cluster in place).
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
    """

    name: str
    instance_type: str
    count: int
    threads_per_core: Optional[int] = None
    ebs_volume_gib: Optional[int] = None
    training_plan_arn: Optional[str] = None
    slurm_node_type: Optional[str] = None
    partition: Optional[str] = None
    deep_health_checks: Optional[tuple[str, ...]] = None
    mount_file_system: bool = True


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
