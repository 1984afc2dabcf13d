"""Job document -> what a user needs on a HyperPod cluster of the network (``--format hyperpod``).

On HyperPod there is no CreateTrainingJob: the nodes are the cluster's, and a job is a Slurm
``srun`` (or a pod on EKS). What carries over from the network is where the file system is
mounted (every group mounts it at ``/fsx``, :data:`~smddp_infra.hyperpod.values.DEFAULT_MOUNT_PATH`),
where the dataset sits in it, the checkpoint prefix, and the launcher of the instance family
(:func:`~smddp_infra.jobconfig.launcher.launcher_for`: SMDDP only on ml.p4d/p4de with the SMP
image; torchrun + NCCL on p5/p6; Neuron on Trainium). SMDDP on HyperPod: SMP v2 documents a
HyperPod path, an AWS page saying SMDDP is supported there was not found (UNCONFIRMED).
"""

from __future__ import annotations

from typing import Any, Optional

from smddp_infra.contract import JobDocument
from smddp_infra.errors import ConfigError
from smddp_infra.hyperpod.template import ClusterView, GroupView
from smddp_infra.hyperpod.values import DEFAULT_MOUNT_PATH
from smddp_infra.jobconfig.launcher import launcher_for
from smddp_infra.sizing.catalog import efa_instance

#: SMDDP ships in the SageMaker model parallelism (SMP) image only (v2.5.0 was its last release).
SMDDP_IMAGE = "the SageMaker model parallelism (SMP) v2 PyTorch image (SMDDP is not in current PyTorch DLCs)"
#: Rendezvous port torchrun uses on the first node of the allocation (any free port works).
RDZV_PORT = 29500


def data_path(doc: JobDocument, mount_path: str = DEFAULT_MOUNT_PATH) -> str:
    """The dataset's path on a node: FileSystemDataSource's ``/<mount name>/<path>`` under the mount path."""
    directory = doc.file_system.directory_path
    prefix = f"/{doc.file_system.mount_name}"
    rest = directory[len(prefix):] if directory.startswith(prefix) else ""
    return mount_path.rstrip("/") + rest


def hyperpod_settings(doc: JobDocument, *, channel: str = "training", cluster: Optional[ClusterView] = None) -> dict[str, Any]:
    """The settings of a Slurm job on the network's HyperPod cluster, as a JSON-ready dict; with
    ``cluster`` (read from its template), where the job may land: per group its partitions (Slurm) or
    the ``nodeSelector`` and ``tolerations`` its labels and taints ask for (EKS), its capacity, and
    what Spot and managed tiered checkpointing mean for the job."""
    del channel  # SageMaker channels do not exist on HyperPod: the data is a path on the node
    launcher = launcher_for(doc.instance_type)
    instance = efa_instance(doc.instance_type, setting="instanceType")
    per_node = instance.accelerators
    torchrun = ("srun --nodes=$SLURM_JOB_NUM_NODES --ntasks-per-node=1 torchrun "
                f"--nnodes=$SLURM_JOB_NUM_NODES --nproc_per_node={per_node} --rdzv_backend=c10d "
                f"--rdzv_endpoint=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1):{RDZV_PORT} train.py")
    reason = launcher.reason
    if launcher.backend == "smddp":
        reason = (f"{instance.name} runs SMDDP: the script imports smdistributed.dataparallel.torch.torch_smddp and "
                  "calls torch.distributed.init_process_group(backend=\"smddp\"); under torchrun SMDDP serves "
                  "AllGather, its AllReduce needs an mpirun-based launcher (AWS, \"Use the PyTorch framework estimators\")")
    notes = [reason,
             f"the FSx for Lustre file system {doc.file_system.id} is mounted at {DEFAULT_MOUNT_PATH} on every node "
             "(HyperPod FsxLustreConfig); read the dataset there, not through a SageMaker channel",
             "checkpoints: write them to the file system for speed and copy them to the checkpoint prefix "
             "(the cluster role may read and write only there)"]
    image = None
    if launcher.backend == "smddp":
        image = SMDDP_IMAGE
        notes.append("SMDDP on HyperPod is UNCONFIRMED (SMP v2 documents a HyperPod path; no AWS page says SMDDP "
                     "is supported there): NCCL (backend=\"nccl\") runs on the same network if it is not")
    settings: dict[str, Any] = {
        "format": "hyperpod",
        "instanceType": doc.instance_type,
        "nodes": doc.instance_count,
        "processesPerNode": per_node,
        "region": doc.region,
        "availabilityZone": doc.availability_zone,
        "fileSystem": {"id": doc.file_system.id, "mountPath": DEFAULT_MOUNT_PATH, "dataPath": data_path(doc)},
        "checkpoints": {"s3Uri": doc.checkpoint_s3_uri},
        "launcher": {"name": "torchrun", "backend": launcher.backend, "command": torchrun, "image": image},
        "notes": notes,
    }
    if cluster is not None:
        settings["cluster"] = _cluster_settings(cluster, doc.instance_type)
        notes += _cluster_notes(cluster, doc.instance_type)
    return settings


def _cluster_settings(cluster: ClusterView, instance_type: str) -> dict[str, Any]:
    """Only the groups of the job's instance type, a flexible group's among them: a job lands where
    its instances are, so a cluster without one is refused (naming the types it has, each type of a
    flexible group too), never answered with another group."""
    groups = [g for g in cluster.groups if instance_type in g.types]
    if not groups:
        have = ", ".join(f"{g.name} ({_types(g)})" for g in cluster.groups) or "none"
        raise ConfigError(f"the cluster {cluster.logical_id} has no instance group of the job's instance type "
                          f"{instance_type}, so the job cannot land on it; its groups: {have}")
    return {
        "orchestrator": cluster.orchestrator,
        "nodeProvisioning": "Continuous" if cluster.continuous_provisioning else "standard",
        "autoscaling": cluster.autoscaler,
        "tieredCheckpointingMemoryPercent": cluster.tiered_checkpointing_percent,
        "groups": [_group_settings(g, cluster.orchestrator) for g in groups],
    }


def _types(group: GroupView) -> str:
    if group.instance_types:
        return "flexible: " + ", ".join(group.instance_types)
    return group.instance_type or "no InstanceType"


def _group_settings(group: GroupView, orchestrator: str) -> dict[str, Any]:
    found: dict[str, Any] = {"name": group.name, "instanceType": group.instance_type or None, "nodes": group.nodes,
                             "capacity": group.capacity}
    if group.instance_types:
        found["instanceTypes"] = list(group.instance_types)
    if orchestrator == "eks":
        # A pod lands on the group when it selects the group's labels and tolerates its taints
        # (Kubernetes documentation, "Assigning Pods to Nodes", "Taints and Tolerations").
        found["nodeSelector"] = dict(group.labels)
        found["tolerations"] = [{"key": key, "operator": "Equal" if value else "Exists",
                                 **({"value": value} if value else {}), "effect": effect}
                                for key, value, effect in group.taints]
    else:
        found["partitions"] = list(group.partitions)
    return found


def _cluster_notes(cluster: ClusterView, instance_type: str) -> list[str]:
    notes = []
    if cluster.orchestrator == "eks":
        notes.append("EKS cluster: the job is a pod (e.g. a PyTorchJob) per node with the group's nodeSelector and "
                     "tolerations; the srun line is for Slurm clusters")
    flexible = [g for g in cluster.groups if len(g.instance_types) > 1 and instance_type in g.instance_types]
    for g in flexible:
        notes.append(f"{g.name} is a flexible group ({', '.join(g.instance_types)}): HyperPod provisions its first type "
                     "and falls back to the next when capacity is short (botocore ClusterInstanceRequirements), so its "
                     f"nodes may be of another type than {instance_type}; place the job on nodes of that type")
    spot = [g.name for g in cluster.groups if g.spot and instance_type in g.types]
    if spot:
        notes.append(f"Spot capacity in {', '.join(spot)}: EC2 can reclaim those nodes (SageMaker developer guide, "
                     "\"Spot instances in Amazon SageMaker HyperPod\"); checkpoint often and resume from the last one")
    if cluster.tiered_checkpointing_percent is not None:
        notes.append(f"managed tiered checkpointing is on ({cluster.tiered_checkpointing_percent} % of each node's memory): "
                     "checkpoints saved through it go to memory first and are persisted to durable storage such as S3 "
                     "(botocore ClusterTieredStorageConfig; SageMaker developer guide, \"Set up managed tiered "
                     "checkpointing\"): point that at the checkpoint prefix")
    return notes
