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

from typing import Any

from smddp_infra.contract import JobDocument
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


def hyperpod_settings(doc: JobDocument, *, channel: str = "training") -> dict[str, Any]:
    """The settings of a Slurm job on the network's HyperPod cluster, as a JSON-ready dict."""
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
    return {
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
