"""Which launcher and collective backend a job uses, by instance family.

Its own module because both renderers need it: the SageMaker job formats
(:mod:`.render`) and the HyperPod Slurm settings (:mod:`.hyperpod`), which render offers too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from smddp_infra.sizing.catalog import SMDDP_INSTANCE_TYPES, efa_instance

#: SDK v2's switch for the SMDDP launcher (mpirun + smddprun), as the PyTorch estimator reads it.
SMDDP_DISTRIBUTION: Mapping[str, Any] = {"smdistributed": {"dataparallel": {"enabled": True}}}
#: SDK v2's torchrun launcher.
TORCHRUN_DISTRIBUTION: Mapping[str, Any] = {"torch_distributed": {"enabled": True}}


@dataclass(frozen=True)
class Launcher:
    """How a job on one instance family starts its ranks and which collective backend it uses."""

    #: SDK v2 ``distribution``.
    v2_distribution: Mapping[str, Any]
    #: SDK v3 ``distributed`` (the class name in ``sagemaker.train.distributed``).
    v3_distributed: str
    #: What the training script passes to ``init_process_group`` (or the framework equivalent).
    backend: str
    #: Why, for the notes.
    reason: str


def launcher_for(instance_type: str) -> Launcher:
    """SMDDP where it runs, NCCL (or Neuron) on the same EFA network elsewhere.

    SMDDP supports ml.p4d.24xlarge and ml.p4de.24xlarge (AWS: "The SMDDP library supports P4
    and P4de instances"; last release v2.5.0, 2024-10, PyTorch 2.4.1); the p5 and p6 families
    run NCCL over EFA with torchrun. Trainium uses the Neuron backend (``xla``) with torchrun,
    the only strategy SDK v2 allows there.
    """
    instance = efa_instance(instance_type, setting="instanceType")
    if instance.name in SMDDP_INSTANCE_TYPES:
        return Launcher(SMDDP_DISTRIBUTION, "Torchrun", "smddp",
                        f"{instance.name} runs SMDDP: SDK v2 uses the smdistributed launcher (mpirun + "
                        "smddprun), SDK v3 torchrun; the script imports "
                        "smdistributed.dataparallel.torch.torch_smddp and calls "
                        "torch.distributed.init_process_group(backend=\"smddp\") (an SMDDP image: the SMP "
                        "image or a PyTorch DLC <= 2.4.1)")
    if instance.accelerator.startswith("AWS Trainium"):
        return Launcher(TORCHRUN_DISTRIBUTION, "Torchrun", "xla",
                        f"{instance.name} is Trainium: SMDDP is a GPU library; torchrun with the Neuron "
                        "backend (torch_xla, init_process_group(backend=\"xla\")) on the same EFA network")
    supported = " and ".join(sorted(SMDDP_INSTANCE_TYPES))
    return Launcher(TORCHRUN_DISTRIBUTION, "Torchrun", "nccl",
                    f"SMDDP runs only on {supported}; on {instance.name} use torchrun with "
                    "torch.distributed.init_process_group(backend=\"nccl\"): NCCL uses EFA through the "
                    "aws-ofi-nccl plugin on the same network, security group and subnet")


__all__ = ["SMDDP_DISTRIBUTION", "TORCHRUN_DISTRIBUTION", "Launcher", "launcher_for"]
