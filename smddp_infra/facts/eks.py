"""Where an EKS control plane may be placed (PURE).

EKS User Guide, "View Amazon EKS networking requirements for VPC and subnets": a cluster is
created with subnets in at least two Availability Zones, and EKS refuses cluster subnets in some
AZ IDs (``UnsupportedAvailabilityZoneException``, which lists the AZs it would take). The
project's HyperPod control plane takes the training subnet plus one subnet in a second AZ that
the platform names; the checks here say, before deploy, when that second AZ cannot serve.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, Optional

from smddp_infra.errors import ConfigError
from smddp_infra.facts.regions import check_availability_zone, check_availability_zone_id, is_az_id, is_az_name

#: EKS cluster subnets must span at least this many AZs.
MIN_CONTROL_PLANE_AZS = 2

#: AZ IDs that cannot host an EKS control plane's subnets, per Region. us-east-1's use1-az3: the
#: EKS User Guide page above. usw1-az2 and cac1-az3: the same page's table as other tools quote
#: it (eksctl and AWS samples exclude these three), UNCONFIRMED here. cn-north-1's cnn1-az4:
#: eksctl's own deny list (eksctl issue 3916), UNCONFIRMED in AWS documentation. A zone missing
#: here is not checked; EKS's own error then names the zones it takes.
CONTROL_PLANE_EXCLUDED_AZ_IDS: Mapping[str, frozenset[str]] = MappingProxyType({
    "us-east-1": frozenset({"use1-az3"}),
    "us-west-1": frozenset({"usw1-az2"}),
    "ca-central-1": frozenset({"cac1-az3"}),
    "cn-north-1": frozenset({"cnn1-az4"}),
})


def check_control_plane_zone(prop: str, zone: str, *, region: Optional[str], training_zone: Optional[str] = None,
                             training_zone_id: Optional[str] = None) -> None:
    """The control plane's second AZ (a name or an ID) must be an AZ of ``region``, not the
    training subnet's AZ (EKS needs two), and not an AZ ID EKS refuses. ``region`` None (an
    environment-agnostic stack) leaves the regional checks out; a training AZ of None is unknown."""
    if is_az_id(zone):
        if region is not None:
            check_availability_zone_id(prop, zone, region)
            if zone in CONTROL_PLANE_EXCLUDED_AZ_IDS.get(region, frozenset()):
                raise ConfigError(f"{prop} {zone!r} cannot host an EKS control plane (EKS User Guide, networking "
                                  f"requirements: EKS refuses cluster subnets in {zone}): name another AZ of {region}")
        same = training_zone_id
    elif is_az_name(zone):
        if region is not None:
            check_availability_zone(prop, zone, region)
        same = training_zone
    else:
        raise ConfigError(f"{prop} must be an Availability Zone name like us-east-1b or an AZ ID like use1-az6, "
                          f"got {zone!r}")
    if same is not None and zone == same:
        raise ConfigError(f"{prop} {zone!r} is the training subnet's AZ: an EKS control plane needs subnets in at "
                          f"least {MIN_CONTROL_PLANE_AZS} AZs (EKS User Guide, networking requirements); name another "
                          "AZ of the Region")


__all__ = ["CONTROL_PLANE_EXCLUDED_AZ_IDS", "MIN_CONTROL_PLANE_AZS", "check_control_plane_zone"]
