"""What CreateTrainingJob and training plans allow (PURE).

Read by the schema (the network's spec), job-config and the launch policy, each naming the
setting its user wrote.
"""

from __future__ import annotations

from typing import Optional

#: VpcConfig.SecurityGroupIds holds 1 to 5 groups (CreateTrainingJob API, botocore's VpcConfig shape).
MAX_SECURITY_GROUPS = 5
#: VpcConfig.Subnets holds 1 to 16 subnets (the same shape).
MAX_SUBNETS = 16


def plan_zone_problem(subnet_az_id: Optional[str], plan_az_id: str, *, subnet_zone: str = "") -> Optional[str]:
    """Whether a training plan's capacity AZ can serve the training subnet.

    ``"refused: ..."`` when the subnet's AZ ID is known and differs (a plan's reserved capacity
    sits in one AZ per block, and a job's instances are placed in its subnets' AZ), ``"not
    evaluated: ..."`` when only the subnet's AZ NAME is known (AZ names map to different AZ IDs
    in different accounts), None when they agree.
    """
    if subnet_az_id is None:
        named = f" {subnet_zone}" if subnet_zone else ""
        return (f"not evaluated: the training plan's capacity is in {plan_az_id}, and the training subnet's AZ"
                f"{named} is known by name only (an AZ name maps to different AZ IDs per account); compare with "
                "`aws ec2 describe-availability-zones --zone-names <az>` or place the network by "
                "availability_zone_id")
    if subnet_az_id != plan_az_id:
        return (f"refused: the training plan's reserved capacity is in {plan_az_id} but the training subnet is in "
                f"{subnet_az_id}; a job runs in its subnet's AZ, so it would never get the plan's instances: place "
                f"the network in {plan_az_id} (a new subnet replaces the file system) or use a plan in {subnet_az_id}")
    return None


__all__ = ["MAX_SECURITY_GROUPS", "MAX_SUBNETS", "plan_zone_problem"]
