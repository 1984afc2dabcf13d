"""ARNs: one parser, and the shapes of the ARNs the project is handed (PURE).

``arn:<partition>:<service>:<region>:<account>:<resource>`` (IAM User Guide, "IAM identifiers",
ARN format; the resource part may itself hold ``:`` or ``/``). The partition is ``aws`` or
``aws-*`` as botocore's patterns write it (``arn:aws[a-z\\-]*:``), so a partition AWS adds later
still parses; :mod:`smddp_infra.partitions` says which partition a Region is in.

The per-service shapes, each with its source:

* IAM role: ``arn:<p>:iam::<account>:role/<path/><name>``, no Region; 20 to 2048 characters
  (botocore ``RoleArn``: ``role/?[a-zA-Z_0-9+=,.@\\-_/]+``).
* KMS key: ``arn:<p>:kms:<region>:<account>:key/<key id>``; the key id is a UUID, or ``mrk-``
  and 32 hex digits for a multi-Region key (KMS Developer Guide, "Key identifiers (KeyId)").
* SNS topic: ``arn:<p>:sns:<region>:<account>:<name>``; 1 to 256 ASCII letters, digits, ``_``
  and ``-``, a FIFO topic's ending in ``.fifo`` (SNS API reference, CreateTopic ``Name``).
* SageMaker training plan: botocore ``TrainingPlanArn``
  (``arn:aws[a-z\\-]*:sagemaker:[a-z0-9\\-]*:[0-9]{12}:training-plan/.*``), 50 to 2048 characters.
* EKS cluster: botocore ``EksClusterArn``
  (``arn:aws[a-z\\-]*:eks:[a-z0-9\\-]*:[0-9]{12}:cluster\\/[0-9A-Za-z][A-Za-z0-9\\-_]{0,99}``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from smddp_infra.partitions import partition_of

_ARN = re.compile(r"arn:(aws[a-z-]*):([a-z0-9-]+):([a-z0-9-]*):([0-9]{12}|aws|):(.+)")
_ROLE = re.compile(r"role/[a-zA-Z0-9_+=,.@/-]+")
_KMS_KEY = re.compile(r"key/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32})")
_SNS_TOPIC = re.compile(r"[A-Za-z0-9_-]{1,256}|[A-Za-z0-9_-]{1,251}\.fifo")
#: botocore's ``TrainingPlanArn`` and ``EksClusterArn`` patterns, as written there
#: (tests/test_sagemaker_api_model.py compares the first with the installed botocore).
TRAINING_PLAN_ARN = re.compile(r"arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:training-plan/.*")
EKS_CLUSTER_ARN = re.compile(r"arn:aws[a-z\-]*:eks:[a-z0-9\-]*:[0-9]{12}:cluster\/[0-9A-Za-z][A-Za-z0-9\-_]{0,99}")
#: A security group id: ``sg-`` and 8 or 17 hex digits (EC2's two id lengths; botocore ``SecurityGroupId``
#: in the sagemaker model allows ``[-0-9a-zA-Z]+``), read where a group is named by its id.
SECURITY_GROUP_ID = re.compile(r"sg-[0-9a-f]{8,17}")
#: botocore ``RoleArn`` length.
ROLE_ARN_LENGTH = (20, 2048)
#: botocore ``TrainingPlanArn`` length.
TRAINING_PLAN_ARN_LENGTH = (50, 2048)


@dataclass(frozen=True)
class Arn:
    """The five parts of an ARN after ``arn:``; ``region`` and ``account`` may be empty (IAM and
    S3 ARNs have no Region, S3 bucket ARNs no account)."""

    partition: str
    service: str
    region: str
    account: str
    resource: str

    def elsewhere(self, region: str) -> Optional[str]:
        """``"us-west-2 (aws)"`` when this ARN's Region or partition is not ``region``'s (a
        concrete Region), else None. An ARN without a Region is compared by partition only."""
        partition = partition_of(region)
        if self.partition != partition or (self.region and self.region != region):
            return f"{self.region or 'no Region'} ({self.partition})"
        return None


def alarm_topic_problem(arn: str, region: str) -> Optional[str]:
    """What is wrong with an SNS topic ``arn`` as an alarm action of a stack in ``region`` (None:
    nothing, or not an ARN): CloudWatch alarm actions must be in the alarm's Region (CloudWatch
    User Guide, alarm actions; PutMetricAlarm refuses an SNS topic of another Region)."""
    parsed = parse_arn(arn)
    where = parsed.elsewhere(region) if parsed is not None else None
    if where is None:
        return None
    return (f"is in {where}, the stack in {region} ({partition_of(region)}): CloudWatch alarm actions must be in the "
            "alarm's Region; pass a topic of the stack's Region")


def parse_arn(value: Any) -> Optional[Arn]:
    """The parts of ``value``, or None when it is not an ARN (a token is not one: check
    ``Token.is_unresolved`` first where tokens can arrive)."""
    match = _ARN.fullmatch(value) if isinstance(value, str) else None
    return Arn(*match.groups()) if match else None


def _of(value: Any, service: str, *, regional: bool = True) -> Optional[Arn]:
    arn = parse_arn(value)
    if arn is None or arn.service != service or len(arn.account) != 12 or bool(arn.region) != regional:
        return None
    return arn


def is_role_arn(value: Any) -> bool:
    """``arn:aws:iam::123456789012:role/<path/>name``."""
    arn = _of(value, "iam", regional=False)
    low, high = ROLE_ARN_LENGTH
    return arn is not None and bool(_ROLE.fullmatch(arn.resource)) and low <= len(value) <= high


def is_kms_key_arn(value: Any) -> bool:
    """``arn:aws:kms:us-east-1:123456789012:key/<uuid or mrk-...>`` (a key, not an alias)."""
    arn = _of(value, "kms")
    return arn is not None and bool(_KMS_KEY.fullmatch(arn.resource))


def is_sns_topic_arn(value: Any) -> bool:
    """``arn:aws:sns:us-east-1:123456789012:<topic name>``."""
    arn = _of(value, "sns")
    return arn is not None and bool(_SNS_TOPIC.fullmatch(arn.resource))


def is_training_plan_arn(value: Any) -> bool:
    """``arn:aws:sagemaker:us-east-1:123456789012:training-plan/<name>``, 50 to 2048 characters
    (botocore's pattern lets the Region be empty)."""
    low, high = TRAINING_PLAN_ARN_LENGTH
    return isinstance(value, str) and bool(TRAINING_PLAN_ARN.fullmatch(value)) and low <= len(value) <= high


def eks_cluster_name(value: Any) -> Optional[str]:
    """``arn:aws:eks:<region>:<account>:cluster/<name>`` -> ``<name>``; None for anything else
    (botocore's pattern lets the Region be empty)."""
    if not isinstance(value, str) or not EKS_CLUSTER_ARN.fullmatch(value):
        return None
    return value.rpartition("/")[2]


def is_eks_cluster_arn(value: Any) -> bool:
    return eks_cluster_name(value) is not None


__all__ = ["alarm_topic_problem", "Arn", "EKS_CLUSTER_ARN", "ROLE_ARN_LENGTH", "SECURITY_GROUP_ID", "TRAINING_PLAN_ARN", "TRAINING_PLAN_ARN_LENGTH", "eks_cluster_name", "is_eks_cluster_arn",
           "is_kms_key_arn", "is_role_arn", "is_sns_topic_arn", "is_training_plan_arn", "parse_arn"]
