"""Subnet arithmetic of the training network: reserved IPs, the training subnet's mask, and
the one check that a cluster fits it (PURE: no aws_cdk).

Read by the app's settings (context keys), the L3's spec (props), TrainingVpc and HyperPod,
each naming the setting its user wrote: ``smddp:vpcCidr`` for the app, ``vpc_cidr`` for the
construct. AWS reserves five addresses in every subnet (VPC User Guide, "Subnet CIDR blocks":
the first four and the last); a subnet's ``CidrBlock`` is create-only, so the mask is sized for
the largest cluster, never for today's count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from smddp_infra.errors import ConfigError

#: Interface endpoints a training job in a subnet without NAT needs (REFERENCE: the S3
#: gateway endpoint plus these, private DNS on). ``kms`` is added when a KMS key is used.
DEFAULT_INTERFACE_ENDPOINTS: tuple[str, ...] = ("sagemaker.api", "sts", "logs", "monitoring", "ecr.api", "ecr.dkr")

#: IPs planned for the FSx for Lustre file system's interfaces in the training subnet
#: (UNCONFIRMED estimate: one per file server; TrainingVpc's ``file_system_ips``).
FILE_SYSTEM_IPS = 8

#: IPs AWS reserves in every subnet.
AWS_RESERVED_IPS = 5
#: A created training subnet holds the largest cluster twice over: SageMaker may still hold the
#: network interfaces of a finished job while the next one starts.
HEADROOM = 2.0
#: Largest training subnet we plan (a /16 VPC holds it).
MIN_SUBNET_MASK = 18


#: The default training subnet takes 1/16 of the VPC CIDR (2**4 blocks): a /20 of the default
#: /16, 4,091 usable addresses, 406 instances at 5 IPs each with the twice-over headroom below
#: (815 without it). Sized for the largest cluster the VPC comfortably holds, NOT for today's
#: instance count: a subnet's ``CidrBlock`` is create-only, so a subnet sized from the count
#: would be replaced (and the file system in it with it) when the cluster grows.
DEFAULT_SUBNET_SPLIT_BITS = 4
#: The smallest default training subnet (a small VPC gets one subnet this size, or the whole VPC).
DEFAULT_MAX_SUBNET_MASK = 24
#: The NAT gateway's public subnet (TrainingVpc's ``Public`` group).
NAT_SUBNET_MASK = 28


def default_subnet_mask(vpc_prefix: int, *, nat: bool = False) -> int:
    """The training subnet's mask when no ``max_instance_count`` is given: 1/16 of the VPC.

    /16 -> /20, /20 -> /24; never smaller than a /24, and never the whole VPC when the NAT
    gateway's /28 public subnet must fit beside it (a /24 VPC with NAT gets a /25).
    """
    return max(min(vpc_prefix + DEFAULT_SUBNET_SPLIT_BITS, DEFAULT_MAX_SUBNET_MASK), vpc_prefix + (1 if nat else 0))


def usable_addresses(mask: int) -> int:
    """The addresses a /``mask`` subnet gives to network interfaces: all but AWS's five."""
    return int(2 ** (32 - mask)) - AWS_RESERVED_IPS


def smallest_mask_for(addresses: float) -> int:
    """The mask of the smallest subnet whose usable addresses hold ``addresses``."""
    return 32 - math.ceil(math.log2(addresses + AWS_RESERVED_IPS))


def subnet_instance_capacity(mask: int, *, ips_per_instance: int = 5, other_ips: int = 0,
                             headroom: float = HEADROOM) -> int:
    """How many training instances a subnet of ``mask`` holds under :func:`plan_subnet_mask`'s rule."""
    return max(0, int((usable_addresses(mask) / headroom - other_ips) // ips_per_instance))


def training_subnet_mask(*, vpc_prefix: int, nat: bool, max_instance_count: Optional[int], ips_per_instance: int,
                         other_ips: int) -> int:
    """The mask TrainingVpc gives the training subnet: from ``max_instance_count`` when set,
    else :func:`default_subnet_mask`. The instance count of today's job never enters."""
    if max_instance_count is None:
        return default_subnet_mask(vpc_prefix, nat=nat)
    return plan_subnet_mask(instances=max_instance_count, ips_per_instance=ips_per_instance, other_ips=other_ips)


def plan_subnet_mask(*, instances: int, ips_per_instance: int = 5, other_ips: int = 0,
                     headroom: float = HEADROOM) -> int:
    """The CIDR mask of a subnet that holds the largest cluster twice over (:data:`HEADROOM`),
    /24 at least."""
    needed = (instances * ips_per_instance + other_ips) * headroom
    mask = smallest_mask_for(needed)
    if mask < MIN_SUBNET_MASK:
        raise ConfigError(
            f"a cluster of {instances} instances needs {math.ceil(needed + AWS_RESERVED_IPS)} IPs, more than a "
            f"/{MIN_SUBNET_MASK} training subnet holds"
        )
    return min(mask, 24)


def fitting_training_subnet_mask(cidr: str, *, vpc_prefix: int, nat: bool, max_instance_count: Optional[int],
                                 ips_per_instance: int, other_ips: int, cidr_name: str, max_name: str) -> int:
    """The training subnet's mask, or one line naming the setting the user wrote (a context key
    for the app, a prop for the construct) when the subnet, plus the NAT's /28, cannot fit."""
    try:
        mask = training_subnet_mask(vpc_prefix=vpc_prefix, nat=nat, max_instance_count=max_instance_count,
                                    ips_per_instance=ips_per_instance, other_ips=other_ips)
    except ConfigError as exc:
        raise ConfigError(f"{max_name}={max_instance_count} is too large for one training subnet: {exc}") from None
    needed = 2 ** (32 - mask) + (2 ** (32 - NAT_SUBNET_MASK) if nat else 0)
    if needed > 2 ** (32 - vpc_prefix):
        parts = f"a /{mask} training subnet" + (f" and a /{NAT_SUBNET_MASK} NAT subnet" if nat else "")
        why = f" ({max_name}={max_instance_count})" if max_instance_count is not None else ""
        raise ConfigError(f"{cidr_name} {cidr} is too small for {parts}{why}; "
                          f"use a CIDR of /{32 - math.ceil(math.log2(needed))} or larger")
    return mask


@dataclass(frozen=True)
class SubnetNames:
    """How the user named the three settings a subnet-fit failure is about."""

    cidr: str = "vpc_cidr"
    count: str = "instance_count"
    largest: str = "max_instance_count"


PROP_NAMES = SubnetNames()
CONTEXT_NAMES = SubnetNames("smddp:vpcCidr", "smddp:instanceCount", "smddp:maxInstanceCount")


def check_subnet_fits(cidr: str, *, instance_count: int, ips_per_instance: int, nat: bool, endpoints: int,
                      what: str, max_instance_count: Optional[int] = None, names: SubnetNames = PROP_NAMES) -> int:
    """The training subnet (and the NAT's /28) must fit the VPC CIDR, and today's cluster must fit
    the training subnet: one line before jsii. Returns the training subnet's mask.

    ``endpoints``: the interface endpoints placed in the subnet (an IP each); the file system's
    :data:`FILE_SYSTEM_IPS` are added here. ``what``: the instances, as the message counts them
    (``"ml.p4d.24xlarge instances"``).
    """
    other = endpoints + FILE_SYSTEM_IPS
    vpc_prefix = int(cidr.rsplit("/", 1)[1])
    mask = fitting_training_subnet_mask(cidr, vpc_prefix=vpc_prefix, nat=nat, max_instance_count=max_instance_count,
                                        ips_per_instance=ips_per_instance, other_ips=other, cidr_name=names.cidr,
                                        max_name=names.largest)
    capacity = subnet_instance_capacity(mask, ips_per_instance=ips_per_instance, other_ips=other)
    if instance_count > capacity:
        sized_by = (f"{names.largest}={max_instance_count}" if max_instance_count is not None
                    else f"the default, 1/16 of {names.cidr} {cidr}")
        raise ConfigError(
            f"{names.count}={instance_count} does not fit the /{mask} training subnet ({sized_by}), which holds "
            f"{capacity} {what} with room for a second job's interfaces; set {names.largest}={instance_count} or "
            "more (a new subnet CIDR: it replaces the subnet and the file system of a deployed network)"
        )
    return mask

__all__ = ["AWS_RESERVED_IPS", "CONTEXT_NAMES", "DEFAULT_INTERFACE_ENDPOINTS", "FILE_SYSTEM_IPS", "HEADROOM",
           "NAT_SUBNET_MASK", "PROP_NAMES", "SubnetNames", "check_subnet_fits", "default_subnet_mask",
           "fitting_training_subnet_mask", "plan_subnet_mask", "smallest_mask_for", "subnet_instance_capacity",
           "training_subnet_mask", "usable_addresses"]
