"""SageMaker training instance types that support EFA, with their accelerator counts.

SMDDP's collectives (and NCCL's, on the same network) are built for EFA; the guide's
stall-at-init failure is about these types. The catalog is checked against botocore's
``TrainingInstanceType`` enum (tests/test_instance_catalog.py): every EFA-capable training
type there is either here or in :data:`EXCLUDED_EFA_TYPES` with the reason.

Firmness of the figures: accelerator counts of p4d/p4de/p5/p5e/p5en/trn1/trn1n are firm;
the figures each entry lists in :attr:`InstanceType.unconfirmed` are UNCONFIRMED (secondary
sources, or SageMaker does not document them). Network bandwidth is informational only:
nothing is computed from it. ``private_ips`` sizes the training subnet: SageMaker documents
"at least 5 private IP addresses" for a training instance that uses EFA, and does not say
how many it takes on types with many EFA network cards (p5: 32), so 5 is the documented
floor, not a measurement; ``ips_per_instance`` / TrainingVpc overrides it.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from smddp_infra.errors import ConfigError

#: SageMaker's documented minimum of private IPs for a training instance that uses EFA.
EFA_MIN_PRIVATE_IPS = 5


@dataclass(frozen=True)
class InstanceType:
    """One EFA training instance type: what sizing and the subnet plan need to know."""

    name: str
    accelerators: int
    accelerator: str
    network_gbps: int  # UNCONFIRMED, informational
    #: Private IPs one instance takes in the training subnet (EFA: at least 5).
    private_ips: int = EFA_MIN_PRIVATE_IPS
    #: Names of the fields above whose value is UNCONFIRMED for this type.
    unconfirmed: frozenset[str] = frozenset({"network_gbps"})


_UNSURE_IPS = frozenset({"network_gbps", "private_ips"})

EFA_INSTANCE_TYPES: dict[str, InstanceType] = {
    i.name: i
    for i in (
        InstanceType("ml.p4d.24xlarge", 8, "NVIDIA A100", 400),
        InstanceType("ml.p4de.24xlarge", 8, "NVIDIA A100 80GB", 400),
        InstanceType("ml.p5.48xlarge", 8, "NVIDIA H100", 3200, unconfirmed=_UNSURE_IPS),
        InstanceType("ml.p5e.48xlarge", 8, "NVIDIA H200", 3200, unconfirmed=_UNSURE_IPS),
        InstanceType("ml.p5en.48xlarge", 8, "NVIDIA H200", 3200, unconfirmed=_UNSURE_IPS),
        InstanceType("ml.trn1.32xlarge", 16, "AWS Trainium", 800),
        InstanceType("ml.trn1n.32xlarge", 16, "AWS Trainium", 1600),
        # Added from botocore 1.44's TrainingInstanceType enum. Accelerator counts from AWS's
        # instance pages as recorded in the reference notes; bandwidth and IPs UNCONFIRMED.
        InstanceType("ml.p6-b200.48xlarge", 8, "NVIDIA B200", 3200, unconfirmed=_UNSURE_IPS),
        InstanceType("ml.p6-b300.48xlarge", 8, "NVIDIA B300", 6400,
                     unconfirmed=frozenset({"network_gbps", "private_ips", "accelerators"})),
        # One GB200 node of an UltraServer: 2 Grace CPUs with 4 Blackwell GPUs. On SageMaker it
        # is sold through training plans / UltraServers (capacity is named by AZ ID).
        InstanceType("ml.p6e-gb200.36xlarge", 4, "NVIDIA GB200 (Blackwell)", 1600,
                     unconfirmed=frozenset({"network_gbps", "private_ips", "accelerators"})),
        InstanceType("ml.trn2.48xlarge", 16, "AWS Trainium2", 3200, unconfirmed=_UNSURE_IPS),
    )
}

_CPU = ("CPU-only type: no accelerators, so no data-parallel GPU/Trainium training for this "
        "network to size (EFA on it, where EC2 offers it, is for HPC/MPI)")
_G = ("graphics/inference GPU family (one or few GPUs per EFA interface, PCIe): out of scope for "
      "the multi-node EFA training network; SageMaker documents EFA training for the P and Trn "
      "families. Add it here with its figures if you train on it over EFA")

#: EFA-capable SageMaker training types deliberately NOT in the catalog, with the reason.
#: "EFA-capable" means EC2 lists EFA support for the size (UNCONFIRMED for SageMaker training).
EXCLUDED_EFA_TYPES: Mapping[str, str] = MappingProxyType({
    "ml.p3dn.24xlarge": ("NVIDIA V100, one 100 Gbps EFA: SMDDP keeps it as legacy only (no new "
                         "optimisations) and current PyTorch images target A100 and newer"),
    "ml.p5.4xlarge": "a single H100: a one-GPU size is not a multi-node EFA training target (EFA support UNCONFIRMED)",
    **{f"ml.g4dn.{size}": _G for size in ("8xlarge", "12xlarge", "16xlarge")},
    **{f"ml.g5.{size}": _G for size in ("8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")},
    **{f"ml.g6.{size}": _G for size in ("8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")},
    **{f"ml.g6e.{size}": _G for size in ("8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")},
    # New GPU families whose EFA sizes are not confirmed for SageMaker training: listed so that
    # a size gaining EFA is a decision, not an accident.
    **{f"ml.{family}.{size}": _G + " (EFA support on these sizes UNCONFIRMED)"
       for family in ("g7", "g7e") for size in ("8xlarge", "12xlarge", "24xlarge", "48xlarge")},
    **{name: _CPU for name in (
        "ml.c5n.9xlarge", "ml.c5n.18xlarge", "ml.c6i.32xlarge", "ml.m6i.32xlarge", "ml.r6i.32xlarge",
        "ml.c7i.48xlarge", "ml.m7i.48xlarge", "ml.r7i.48xlarge",
        *(f"ml.{family}.{size}" for family in ("c8i", "m8i", "r8i") for size in ("48xlarge", "96xlarge")),
    )},
})


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
        why = f" ({name} is left out on purpose: {EXCLUDED_EFA_TYPES[name]})" if isinstance(name, str) and name in EXCLUDED_EFA_TYPES else ""
        raise ConfigError(f"{setting} must be a SageMaker EFA training instance type ({known}), got {name!r}{why}") from None


def smddp_support(instance_type: str) -> str | None:
    """How SMDDP runs on ``instance_type``, from the three sets above: ``current``
    (:data:`SMDDP_INSTANCE_TYPES`), ``legacy``, ``older-releases``; None where it has no SMDDP
    (p5, p6, g5, trn...: the same EFA network runs NCCL there)."""
    if instance_type in SMDDP_INSTANCE_TYPES:
        return "current"
    if instance_type in SMDDP_LEGACY_INSTANCE_TYPES:
        return "legacy"
    if instance_type in SMDDP_OLDER_RELEASE_INSTANCE_TYPES:
        return "older-releases"
    return None
