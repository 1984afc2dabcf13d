"""SageMaker training instance types that support EFA, with their accelerator counts.

SMDDP's collectives are built for EFA; the guide's stall-at-init failure is about these
types. Accelerator counts are firm; network bandwidth figures come from secondary tables
(UNCONFIRMED) and are informational only: nothing is computed from them.
"""

from __future__ import annotations

from dataclasses import dataclass

from smddp_infra.errors import ConfigError


@dataclass(frozen=True)
class InstanceType:
    name: str
    accelerators: int
    accelerator: str
    network_gbps: int  # UNCONFIRMED, informational
    #: Private IPs one instance takes in the training subnet (EFA: at least 5).
    private_ips: int = 5


EFA_INSTANCE_TYPES: dict[str, InstanceType] = {
    i.name: i
    for i in (
        InstanceType("ml.p4d.24xlarge", 8, "NVIDIA A100", 400),
        InstanceType("ml.p4de.24xlarge", 8, "NVIDIA A100 80GB", 400),
        InstanceType("ml.p5.48xlarge", 8, "NVIDIA H100", 3200),
        InstanceType("ml.p5e.48xlarge", 8, "NVIDIA H200", 3200),
        InstanceType("ml.p5en.48xlarge", 8, "NVIDIA H200", 3200),
        InstanceType("ml.trn1.32xlarge", 16, "AWS Trainium", 800),
        InstanceType("ml.trn1n.32xlarge", 16, "AWS Trainium", 1600),
    )
}


def efa_instance(name: str, *, setting: str = "instance type") -> InstanceType:
    """Look up an EFA training instance, or raise naming the setting and the known types."""
    try:
        return EFA_INSTANCE_TYPES[name]
    except (KeyError, TypeError):
        known = ", ".join(EFA_INSTANCE_TYPES)
        raise ConfigError(f"{setting} must be a SageMaker EFA training instance type ({known}), got {name!r}") from None
