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


#: Where the SMDDP library runs (REFERENCE section 8; AWS: "The SMDDP library supports P4 and
#: P4de instances"; last release v2.5.0, 2024-10, PyTorch 2.4.1). job-config offers SMDDP only
#: here; preflight errors on SMDDP requested anywhere else.
SMDDP_INSTANCE_TYPES: frozenset[str] = frozenset({"ml.p4d.24xlarge", "ml.p4de.24xlarge"})
#: Still accepted by SMDDP and SDK v2 but without new optimisations (legacy).
SMDDP_LEGACY_INSTANCE_TYPES: frozenset[str] = frozenset({"ml.p3dn.24xlarge"})
#: In SDK v2's allow-list (``SM_DATAPARALLEL_SUPPORTED_INSTANCE_TYPES``) but served only by
#: older SMDDP releases.
SMDDP_OLDER_RELEASE_INSTANCE_TYPES: frozenset[str] = frozenset({"ml.p3.16xlarge"})


def efa_instance(name: str, *, setting: str = "instance type") -> InstanceType:
    """Look up an EFA training instance, or raise naming the setting and the known types."""
    try:
        return EFA_INSTANCE_TYPES[name]
    except (KeyError, TypeError):
        known = ", ".join(EFA_INSTANCE_TYPES)
        raise ConfigError(f"{setting} must be a SageMaker EFA training instance type ({known}), got {name!r}") from None
