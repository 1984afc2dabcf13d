"""Region facts of the training network: AZ names and IDs, AZ-ID prefixes, S3 prefix lists,
and the one pattern each for a region, a VPC CIDR and a prefix list id (PURE: no aws_cdk).
"""

from __future__ import annotations

import ipaddress
import re
from types import MappingProxyType
from typing import Any, Mapping, Optional

from smddp_infra.errors import ConfigError

REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d+$")
#: An AZ name (``us-east-1a``): a Region name and one letter.
AZ_NAME = re.compile(REGION.pattern.strip("^$") + "[a-z]")
#: An AZ ID (``use1-az4``): the Region's AZ-ID prefix (:data:`AZ_ID_PREFIX`), ``-az`` and a
#: number. What DescribeAvailabilityZones' ``ZoneId`` and DescribeTrainingPlan's
#: ``ReservedCapacitySummaries[].AvailabilityZoneId`` hold; Local and Wavelength Zone IDs
#: (``use1-bos1-az1``) do not match: SageMaker training does not run in them.
AZ_ID = re.compile(r"^[a-z]{2,}\d+-az\d+$")
#: The part of an AZ ID before ``-az`` (``use1``).
AZ_ID_PREFIX = re.compile(r"[a-z]{2,}\d+")

#: AWS-managed S3 prefix lists (``com.amazonaws.<region>.s3``) for the HTTPS egress rule to
#: the S3 gateway endpoint. UNCONFIRMED for regions we could not check: override with the
#: ``smddp:s3PrefixListId`` context key / ``s3_prefix_list_id`` prop.
S3_PREFIX_LISTS: dict[str, str] = {
    "us-east-1": "pl-63a5400a",
    "us-east-2": "pl-7ba54012",
    "us-west-1": "pl-6ba54002",
    "us-west-2": "pl-68a54001",
    "eu-west-1": "pl-6da54004",
    "eu-central-1": "pl-6ea54007",
    "ap-northeast-1": "pl-61a54008",
    "ap-southeast-1": "pl-6fa54006",
    "ap-southeast-2": "pl-6ca54005",
}

#: A managed prefix list id (``pl-63a5400a``): EC2's ``PrefixListId`` shape.
PREFIX_LIST_ID = re.compile(r"pl-[0-9a-f]{8,17}")


def is_prefix_list_id(value: str) -> bool:
    """``pl-63a5400a``."""
    return bool(PREFIX_LIST_ID.fullmatch(value))


def vpc_cidr(value: str) -> Optional[ipaddress.IPv4Network]:
    """An IPv4 network block from /16 to /24 (host bits clear), else None: the VPC CIDR rule.
    A VPC's IPv4 block is /16 to /28 (VPC User Guide, "VPC CIDR blocks"); /24 is the smallest that
    holds the planned training subnet."""
    try:
        network = ipaddress.IPv4Network(value, strict=True)
    except ValueError:
        return None
    return network if 16 <= network.prefixlen <= 24 else None


#: The prefix of each region's AZ IDs (``use1-az4`` is an AZ of us-east-1). AZ IDs, unlike AZ
#: names, are the same in every account, which is why capacity reservations and training
#: plans use them. UNCONFIRMED for regions we could not check; a region missing here is
#: simply not checked, and a wrong entry is overridden with the ``availability_zone_id_prefix``
#: prop / ``smddp:availabilityZoneIdPrefix`` context key.
AZ_ID_PREFIXES: Mapping[str, str] = MappingProxyType({
    "us-east-1": "use1", "us-east-2": "use2", "us-west-1": "usw1", "us-west-2": "usw2",
    "ca-central-1": "cac1", "ca-west-1": "caw1", "sa-east-1": "sae1", "mx-central-1": "mxc1",
    "eu-west-1": "euw1", "eu-west-2": "euw2", "eu-west-3": "euw3", "eu-central-1": "euc1",
    "eu-central-2": "euc2", "eu-north-1": "eun1", "eu-south-1": "eus1", "eu-south-2": "eus2",
    "ap-northeast-1": "apne1", "ap-northeast-2": "apne2", "ap-northeast-3": "apne3",
    "ap-southeast-1": "apse1", "ap-southeast-2": "apse2", "ap-southeast-3": "apse3",
    "ap-southeast-4": "apse4", "ap-southeast-5": "apse5", "ap-southeast-7": "apse7",
    "ap-south-1": "aps1", "ap-south-2": "aps2", "ap-east-1": "ape1",
    "me-south-1": "mes1", "me-central-1": "mec1", "il-central-1": "ilc1", "af-south-1": "afs1",
    "us-gov-west-1": "usgw1", "us-gov-east-1": "usge1", "cn-north-1": "cnn1", "cn-northwest-1": "cnnw1",
})


def az_id_prefix(region: str, overrides: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """``us-east-1`` -> ``use1``: the prefix of the region's AZ IDs (None when unknown)."""
    if overrides and region in overrides:
        return overrides[region]
    return AZ_ID_PREFIXES.get(region)


def is_az_name(value: Any) -> bool:
    """``us-east-1a`` (a region name plus one letter); Local/Wavelength Zones do not qualify:
    SageMaker training does not run in them."""
    return isinstance(value, str) and bool(AZ_NAME.fullmatch(value))


def is_az_id(value: Any) -> bool:
    """``use1-az4``."""
    return isinstance(value, str) and bool(AZ_ID.fullmatch(value))


def is_az_id_prefix(value: Any) -> bool:
    """``use1`` (the part of ``use1-az4`` before ``-az``)."""
    return isinstance(value, str) and bool(AZ_ID_PREFIX.fullmatch(value))


def check_az_id(value: Any, *, setting: str) -> str:
    """``value`` if it looks like an AZ ID (``use1-az4``), else one line naming ``setting``."""
    if not is_az_id(value):
        raise ConfigError(f"{setting} must be an AZ ID like use1-az4 (DescribeTrainingPlan's "
                          f"ReservedCapacitySummaries[].AvailabilityZoneId), got {value!r}")
    checked: str = value
    return checked


def check_availability_zone(name: str, value: str, region: str) -> None:
    """An AZ name must be one of ``region``'s (``us-east-1a``); ``name`` is the setting/prop."""
    if not re.fullmatch(re.escape(region) + r"[a-z]", value):
        raise ConfigError(f"{name} must be an Availability Zone of {region} ({region}a, {region}b, ...), got {value!r}")


def check_availability_zone_id(name: str, value: str, region: str, *, prefix: Optional[str] = None,
                               prefix_setting: str = "availability_zone_id_prefix") -> None:
    """An AZ ID must look like ``use1-az4`` and, when the region's prefix is known, carry it."""
    prefix = prefix or az_id_prefix(region)
    if not is_az_id(value) or (prefix is not None and not value.startswith(prefix + "-az")):
        example = f"{prefix}-az1" if prefix else "use1-az4"
        hint = (f" (prefix {prefix!r} from the built-in table, UNCONFIRMED: set {prefix_setting} if AWS names "
                f"{region}'s AZ IDs otherwise)" if prefix is not None and is_az_id(value) else "")
        raise ConfigError(f"{name} must be an AZ ID of {region} like {example}, got {value!r}{hint}")

__all__ = ["AZ_ID", "AZ_ID_PREFIX", "AZ_ID_PREFIXES", "AZ_NAME", "PREFIX_LIST_ID", "REGION", "S3_PREFIX_LISTS",
           "az_id_prefix", "check_availability_zone", "check_availability_zone_id", "check_az_id", "is_az_id",
           "is_az_id_prefix", "is_az_name", "is_prefix_list_id", "vpc_cidr"]
