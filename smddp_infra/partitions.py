"""What differs between AWS partitions (aws, aws-cn, aws-us-gov, ...): ONE place for those facts.

Pure Python (no aws_cdk): the constructs read it at synth, and a rule or a command may read it
without jsii. What aws-cdk-lib already keeps well (interface endpoint service names, the
``AWS::Partition`` and ``AWS::URLSuffix`` tokens) is NOT repeated here: the constructs take
those from aws-cdk-lib. What it does not keep, or keeps incompletely, is here with its source:

- the AWS Deep Learning Containers registry account per region (the PyTorch training images
  SMDDP runs in). aws-cdk-lib's ``RegionInfo.dlc_repository_account`` has no value for
  us-gov-west-1, af-south-1, ap-northeast-3 and others where the images exist, so it is not
  used;
- the partition's URL suffix for a concrete region (``kms:ViaService`` values such as
  ``s3.<region>.amazonaws.com.cn``);
- resource types and features a partition does not have.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, Optional

#: Region-name prefixes of the partitions other than ``aws`` (longest first: ``us-isob-``
#: before ``us-iso-``). Source: aws-cdk-lib 2.275.0 ``region_info.RegionInfo.regions`` (each
#: region's ``partition``).
_PARTITION_PREFIXES: tuple[tuple[str, str], ...] = (
    ("cn-", "aws-cn"),
    ("us-gov-", "aws-us-gov"),
    ("us-isob-", "aws-iso-b"),
    ("us-isof-", "aws-iso-f"),
    ("us-iso-", "aws-iso"),
    ("eu-isoe-", "aws-iso-e"),
    ("eusc-", "aws-eusc"),
)

#: The partition's DNS suffix (``AWS::URLSuffix``). Source: aws-cdk-lib 2.275.0
#: ``RegionInfo.domain_suffix`` of the partition's regions.
URL_SUFFIXES: Mapping[str, str] = MappingProxyType({
    "aws": "amazonaws.com",
    "aws-cn": "amazonaws.com.cn",
    "aws-us-gov": "amazonaws.com",
    "aws-iso": "c2s.ic.gov",
    "aws-iso-b": "sc2s.sgov.gov",
    "aws-iso-f": "csp.hci.ic.gov",
    "aws-iso-e": "cloud.adc-e.uk",
    "aws-eusc": "amazonaws.eu",
})

#: Where :data:`DLC_ACCOUNTS` comes from (tests/test_partitions.py compares the table with it).
DLC_ACCOUNTS_SOURCE = ("SageMaker Python SDK v2 (sagemaker 2.257.7) image_uri_config/pytorch.json: the "
                       "'training' registries of the PyTorch 2.x images; China's two also in "
                       "aws/deep-learning-containers available_images.md")

#: The AWS Deep Learning Containers account (ECR registry) per region: the execution role's
#: ``EcrPull`` grant names ``arn:<partition>:ecr:<region>:<account>:repository/*``. A region not
#: listed has no known account: pass ``image_account`` or ``ecr_repository_arns``.
DLC_ACCOUNTS: Mapping[str, str] = MappingProxyType({
    "af-south-1": "626614931356",
    "ap-east-1": "871362719292",
    "ap-east-2": "975050140332",
    "ap-northeast-1": "763104351884",
    "ap-northeast-2": "763104351884",
    "ap-northeast-3": "364406365360",
    "ap-south-1": "763104351884",
    "ap-south-2": "772153158452",
    "ap-southeast-1": "763104351884",
    "ap-southeast-2": "763104351884",
    "ap-southeast-3": "907027046896",
    "ap-southeast-4": "457447274322",
    "ap-southeast-5": "550225433462",
    "ap-southeast-6": "633930458069",
    "ap-southeast-7": "590183813437",
    "ca-central-1": "763104351884",
    "ca-west-1": "204538143572",
    "cn-north-1": "727897471807",
    "cn-northwest-1": "727897471807",
    "eu-central-1": "763104351884",
    "eu-central-2": "380420809688",
    "eu-north-1": "763104351884",
    "eu-south-1": "692866216735",
    "eu-south-2": "503227376785",
    "eu-west-1": "763104351884",
    "eu-west-2": "763104351884",
    "eu-west-3": "763104351884",
    "il-central-1": "780543022126",
    "me-central-1": "914824155844",
    "me-south-1": "217643126080",
    "mx-central-1": "637423239942",
    "sa-east-1": "763104351884",
    "us-east-1": "763104351884",
    "us-east-2": "763104351884",
    "us-gov-east-1": "446045086412",
    "us-gov-west-1": "442386744353",
    "us-west-1": "763104351884",
    "us-west-2": "763104351884",
})

#: What a partition does not have, and the source that says so: ``{partition: {thing: why}}``.
#: ``thing`` is a CloudFormation resource type or an FSx for Lustre deployment type.
ABSENT: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "aws-cn": MappingProxyType({
        "AWS::SageMaker::Cluster": "cfn-lint 1.58.0's region schemas have no AWS::SageMaker::Cluster in cn-* regions",
    }),
    "aws-us-gov": MappingProxyType({
        "AWS::SageMaker::Cluster": "cfn-lint 1.58.0's region schemas have no AWS::SageMaker::Cluster in us-gov-* regions",
        "PERSISTENT_2": ("FSx for Lustre PERSISTENT_2 (and so an EFA-enabled file system) is not available in AWS "
                         "GovCloud (US) (FSx for Lustre User Guide, deployment options)"),
    }),
})


def partition_of(region: str) -> str:
    """``cn-north-1`` -> ``aws-cn``; any region without a known prefix -> ``aws``."""
    for prefix, partition in _PARTITION_PREFIXES:
        if region.startswith(prefix):
            return partition
    return "aws"


def url_suffix(region: str) -> str:
    """The DNS suffix of ``region``'s partition (what ``AWS::URLSuffix`` resolves to there)."""
    return URL_SUFFIXES[partition_of(region)]


def dlc_account(region: str) -> Optional[str]:
    """The Deep Learning Containers account of ``region``, or None where none is known."""
    return DLC_ACCOUNTS.get(region)


def absent_in(region: str, thing: str) -> Optional[str]:
    """Why ``thing`` (a resource type or FSx deployment type) does not exist in ``region``'s
    partition, or None when nothing says it is absent."""
    return ABSENT.get(partition_of(region), {}).get(thing)


__all__ = ["ABSENT", "DLC_ACCOUNTS", "DLC_ACCOUNTS_SOURCE", "URL_SUFFIXES", "absent_in", "dlc_account",
           "partition_of", "url_suffix"]
