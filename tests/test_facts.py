"""The AWS facts floor: each fact says yes to what AWS takes and no to what it refuses.

Pure: no aws_cdk here, except the one construct helper that reads an imported bucket's name.
"""

from __future__ import annotations

from typing import Optional

import pytest

from smddp_infra.errors import ConfigError
from smddp_infra.facts import arns, eks, regions, s3, subnets

ACCOUNT = "123456789012"


# --- ARNs ---------------------------------------------------------------------------------------


def test_an_arn_parses_into_its_five_parts_and_the_resource_keeps_its_colons() -> None:
    assert arns.parse_arn(f"arn:aws-cn:logs:cn-north-1:{ACCOUNT}:log-group:/aws/x:*") == arns.Arn(
        "aws-cn", "logs", "cn-north-1", ACCOUNT, "log-group:/aws/x:*")
    assert arns.parse_arn("arn:aws:s3:::bucket/key") == arns.Arn("aws", "s3", "", "", "bucket/key")


@pytest.mark.parametrize("value", [None, 12, "", "arn:aws:sns", f"arn:gcp:sns:us-east-1:{ACCOUNT}:t",
                                   "arn:aws:sns:us-east-1:1234:t", f"arn:aws:sns:us-east-1:{ACCOUNT}:"])
def test_what_is_not_an_arn_parses_to_none(value: object) -> None:
    assert arns.parse_arn(value) is None


def test_an_arn_elsewhere_names_its_region_and_partition() -> None:
    here = arns.parse_arn(f"arn:aws:sns:us-east-1:{ACCOUNT}:t")
    other = arns.parse_arn(f"arn:aws:sns:us-west-2:{ACCOUNT}:t")
    gov = arns.parse_arn(f"arn:aws-us-gov:iam::{ACCOUNT}:role/r")
    assert here is not None and other is not None and gov is not None
    assert (here.elsewhere("us-east-1"), other.elsewhere("us-east-1")) == (None, "us-west-2 (aws)")
    assert (gov.elsewhere("us-gov-west-1"), gov.elsewhere("us-east-1")) == (None, "no Region (aws-us-gov)")


@pytest.mark.parametrize("check, good, bad", [
    (arns.is_role_arn, [f"arn:aws:iam::{ACCOUNT}:role/train", f"arn:aws-cn:iam::{ACCOUNT}:role/service-role/a.b@c"],
     [f"arn:aws:iam::{ACCOUNT}:user/train", f"arn:aws:iam:us-east-1:{ACCOUNT}:role/r", f"arn:aws:iam::{ACCOUNT}:role/é",
      f"arn:aws:iam::{ACCOUNT}:role/" + "r" * 2048]),
    (arns.is_kms_key_arn, [f"arn:aws:kms:us-east-1:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab",
                           f"arn:aws:kms:us-east-1:{ACCOUNT}:key/mrk-1234abcd12ab34cd56ef1234567890ab"],
     [f"arn:aws:kms:us-east-1:{ACCOUNT}:alias/mine", f"arn:aws:kms::{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab",
      f"arn:aws:kms:us-east-1:{ACCOUNT}:key/not-a-key-id"]),
    (arns.is_sns_topic_arn, [f"arn:aws:sns:us-east-1:{ACCOUNT}:alarms", f"arn:aws:sns:us-east-1:{ACCOUNT}:a_b-c.fifo",
                             f"arn:aws:sns:us-east-1:{ACCOUNT}:" + "t" * 256],
     [f"arn:aws:sns:us-east-1:{ACCOUNT}:" + "t" * 257, f"arn:aws:sns:us-east-1:{ACCOUNT}:a.b",
      f"arn:aws:sqs:us-east-1:{ACCOUNT}:alarms", f"arn:aws:sns::{ACCOUNT}:alarms"]),
    (arns.is_training_plan_arn, [f"arn:aws:sagemaker:us-east-1:{ACCOUNT}:training-plan/p5-16-node-2027"],
     [f"arn:aws:sagemaker:us-east-1:{ACCOUNT}:training-plans/p5", f"arn:aws:sagemaker::{ACCOUNT}:training-plan/p",
      "arn:aws:sagemaker:us-east-1:1234:training-plan/p5-16-node-reserved-2027"]),
    (arns.is_eks_cluster_arn, [f"arn:aws:eks:us-east-1:{ACCOUNT}:cluster/ml-platform"],
     [f"arn:aws:eks:us-east-1:{ACCOUNT}:cluster/-ml", f"arn:aws:eks:us-east-1:{ACCOUNT}:nodegroup/ml/x/y",
      f"arn:aws:eks:us-east-1:{ACCOUNT}:cluster/" + "c" * 101]),
])
def test_each_arn_shape_takes_its_own_and_refuses_the_near_misses(check, good: list[str], bad: list[object]) -> None:
    assert [value for value in good if not check(value)] == []
    assert [value for value in [*bad, None, 7] if check(value)] == []


def test_the_eks_cluster_name_is_read_from_its_arn() -> None:
    assert arns.eks_cluster_name(f"arn:aws:eks:us-east-1:{ACCOUNT}:cluster/ml_platform-1") == "ml_platform-1"
    assert arns.eks_cluster_name(f"arn:aws:eks:us-east-1:{ACCOUNT}:fargateprofile/ml/x") is None


def test_an_alarm_topic_in_another_region_or_partition_is_named_and_one_here_is_not() -> None:
    why = ": CloudWatch alarm actions must be in the alarm's Region; pass a topic of the stack's Region"
    assert arns.alarm_topic_problem(f"arn:aws:sns:us-west-2:{ACCOUNT}:t", "us-east-1") == (
        "is in us-west-2 (aws), the stack in us-east-1 (aws)" + why)
    assert arns.alarm_topic_problem(f"arn:aws-us-gov:sns:us-gov-west-1:{ACCOUNT}:t", "us-east-1") == (
        "is in us-gov-west-1 (aws-us-gov), the stack in us-east-1 (aws)" + why)
    assert arns.alarm_topic_problem(f"arn:aws:sns:us-east-1:{ACCOUNT}:t", "us-east-1") is None
    assert arns.alarm_topic_problem("not-an-arn", "us-east-1") is None


def test_the_arn_length_limits_take_their_bounds() -> None:
    """botocore's RoleArn (max 2048) and TrainingPlanArn (50 to 2048) lengths, both ends inclusive."""
    role = f"arn:aws:iam::{ACCOUNT}:role/"
    assert [arns.is_role_arn(role + "r" * (n - len(role))) for n in (2048, 2049)] == [True, False]
    plan = f"arn:aws:sagemaker::{ACCOUNT}:training-plan/"
    assert [arns.is_training_plan_arn(plan + "p" * (n - len(plan))) for n in (49, 50, 2048, 2049)] == [
        False, True, True, False]


# --- S3 bucket names ----------------------------------------------------------------------------


@pytest.mark.parametrize("name, problem", [
    ("ab", "is 2 characters; an S3 bucket name has 3 to 63"),
    ("a" * 64, "is 64 characters; an S3 bucket name has 3 to 63"),
    *((name, "may hold only lowercase letters, digits, dots and hyphens, and must start and end with a letter or digit")
      for name in ("My-Data", "my_data", "-data", "data.")),
    ("my..data", "has two adjacent dots, which an S3 bucket name may not"),
    ("192.168.5.4", "is formatted as an IP address, which an S3 bucket name may not be"),
    ("xn--data", "starts with 'xn--', a prefix S3 reserves"),
    ("sthree-data", "starts with 'sthree-', a prefix S3 reserves"),
    ("data-s3alias", "ends with '-s3alias', a suffix S3 reserves for access point aliases"),
    ("data--ol-s3", "ends with '--ol-s3', a suffix S3 reserves for access point aliases"),
    (7, "must be an S3 bucket name (a str), got int"),
])
def test_a_bucket_name_s3_refuses_says_which_rule(name: object, problem: str) -> None:
    assert s3.bucket_name_problem(name) == problem
    assert not s3.is_bucket_name(name)


@pytest.mark.parametrize("name", ["abc", "a" * 63, "my.data-2024", "192.168.5.4a", "data-xn--1", "s3alias-data"])
def test_a_bucket_name_s3_takes_has_no_problem(name: str) -> None:
    assert s3.bucket_name_problem(name) is None


@pytest.mark.parametrize("uri, parts", [
    ("s3://my-bucket/checkpoints/", ("my-bucket", "checkpoints/")),
    ("s3://my-bucket/", ("my-bucket", "")),
    ("s3://my-bucket", None),
    ("s3://My_Bucket/x/", None),
    ("https://my-bucket/x/", None),
    (None, None),
])
def test_an_s3_uri_splits_only_with_a_bucket_s3_takes(uri: Optional[str], parts: Optional[tuple[str, str]]) -> None:
    assert s3.split_s3_uri(uri) == parts


def test_an_imported_bucket_s3_could_not_have_named_is_one_line_a_created_one_is_not_read() -> None:
    from aws_cdk import App, Stack, aws_s3 as s3_cdk

    from smddp_infra.constructs._validation import check_bucket_name

    stack = Stack(App(), "S")
    with pytest.raises(ConfigError) as caught:
        check_bucket_name("dataset_bucket", s3_cdk.Bucket.from_bucket_name(stack, "Bad", "My_Data"))
    assert str(caught.value).startswith("dataset_bucket 'My_Data' may hold only lowercase letters")
    assert "\n" not in str(caught.value)
    check_bucket_name("dataset_bucket", s3_cdk.Bucket.from_bucket_name(stack, "Good", "my-data"))
    check_bucket_name("dataset_bucket", s3_cdk.Bucket(stack, "Created"))  # its name is a token
    check_bucket_name("dataset_bucket", None)


# --- AZs and AZ IDs -----------------------------------------------------------------------------


def test_az_names_and_az_ids_are_told_apart() -> None:
    assert [regions.is_az_id(v) for v in ("use1-az4", "usgw1-az1", "us-east-1a", "use1-bos1-az1", "u1-az1", None)] == [
        True, True, False, False, False, False]
    assert [regions.is_az_name(v) for v in ("us-east-1a", "us-gov-west-1b", "use1-az4", "us-east-1", None)] == [
        True, True, False, False, False]
    assert [regions.is_az_id_prefix(v) for v in ("use1", "apne1", "use1-az4", "use")] == [True, True, False, False]


def test_an_az_id_check_is_one_line_naming_the_setting() -> None:
    assert regions.check_az_id("use1-az4", setting="x") == "use1-az4"
    with pytest.raises(ConfigError, match=r"^trainingPlanAvailabilityZoneId must be an AZ ID like use1-az4 .* got 'us-east-1a'$"):
        regions.check_az_id("us-east-1a", setting="trainingPlanAvailabilityZoneId")


def test_a_vpc_cidr_is_a_network_block_from_16_to_24() -> None:
    import ipaddress

    assert regions.vpc_cidr("10.0.0.0/24") == ipaddress.IPv4Network("10.0.0.0/24")
    assert regions.vpc_cidr("10.0.0.0/16") == ipaddress.IPv4Network("10.0.0.0/16")
    assert [regions.vpc_cidr(v) for v in ("10.0.0.1/16", "10.0.0.0/25", "10.0.0.0/15", "ten")] == [None] * 4


def test_an_az_id_prefix_override_wins_only_for_its_region() -> None:
    assert regions.az_id_prefix("us-east-1", {"us-east-1": "xyz1"}) == "xyz1"
    assert regions.az_id_prefix("us-east-1", {"eu-west-1": "xyz1"}) == "use1"
    assert regions.az_id_prefix("xx-east-9") is None


@pytest.mark.parametrize("value, region, kwargs, message", [
    ("usw2-az1", "us-east-1", {}, "p must be an AZ ID of us-east-1 like use1-az1, got 'usw2-az1' (prefix 'use1' from "
     "the built-in table, UNCONFIRMED: set availability_zone_id_prefix if AWS names us-east-1's AZ IDs otherwise)"),
    ("usw2-az1", "us-east-1", {"prefix_setting": "smddp:availabilityZoneIdPrefix"}, "p must be an AZ ID of us-east-1 "
     "like use1-az1, got 'usw2-az1' (prefix 'use1' from the built-in table, UNCONFIRMED: set "
     "smddp:availabilityZoneIdPrefix if AWS names us-east-1's AZ IDs otherwise)"),
    ("us-east-1a", "us-east-1", {}, "p must be an AZ ID of us-east-1 like use1-az1, got 'us-east-1a'"),
    ("bad", "xx-east-9", {}, "p must be an AZ ID of xx-east-9 like use1-az4, got 'bad'"),
])
def test_an_az_id_of_another_region_is_one_line_with_the_prefix_it_was_checked_against(
        value: str, region: str, kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        regions.check_availability_zone_id("p", value, region, **kwargs)
    assert str(caught.value) == message


def test_an_az_id_in_a_region_without_a_known_prefix_is_checked_by_shape_only() -> None:
    regions.check_availability_zone_id("p", "abc1-az1", "xx-east-9")
    regions.check_availability_zone_id("p", "abc1-az1", "us-east-1", prefix="abc1")


# --- subnet arithmetic --------------------------------------------------------------------------


def test_a_subnet_gives_all_but_five_addresses_and_the_smallest_mask_holds_what_is_asked() -> None:
    assert [subnets.usable_addresses(m) for m in (28, 24, 20)] == [11, 251, 4091]
    assert [subnets.smallest_mask_for(n) for n in (11, 12, 251, 252)] == [28, 27, 24, 23]
    for addresses in (1, 100, 251, 4000):
        mask = subnets.smallest_mask_for(addresses)
        assert subnets.usable_addresses(mask) >= addresses > subnets.usable_addresses(mask + 1)


def test_the_capacity_of_a_planned_subnet_holds_the_cluster_it_was_planned_for() -> None:
    for instances in (1, 16, 100, 400):
        mask = subnets.plan_subnet_mask(instances=instances, other_ips=14)
        assert subnets.subnet_instance_capacity(mask, other_ips=14) >= instances


def test_the_nat_subnet_is_a_28_beside_the_training_subnet_and_the_message_names_the_setting() -> None:
    """A /27 holds a /28 training subnet and the NAT's /28 exactly; a /28 cannot hold both."""
    def mask(cidr: str, largest: Optional[int] = None) -> int:
        return subnets.fitting_training_subnet_mask(
            cidr, vpc_prefix=int(cidr.rsplit("/", 1)[1]), nat=True, max_instance_count=largest, ips_per_instance=5,
            other_ips=14, cidr_name="smddp:vpcCidr", max_name="smddp:maxInstanceCount")

    assert [mask("10.0.0.0/27"), mask("10.0.0.0/25")] == [28, 26]
    with pytest.raises(ConfigError) as caught:
        mask("10.0.0.0/28")
    assert str(caught.value) == ("smddp:vpcCidr 10.0.0.0/28 is too small for a /29 training subnet and a /28 NAT "
                                 "subnet; use a CIDR of /27 or larger")
    with pytest.raises(ConfigError) as caught:
        mask("10.0.0.0/24", largest=10)  # (10 x 5 + 14) x 2 addresses: a /24, and no room for the NAT's /28
    assert str(caught.value) == ("smddp:vpcCidr 10.0.0.0/24 is too small for a /24 training subnet and a /28 NAT "
                                 "subnet (smddp:maxInstanceCount=10); use a CIDR of /23 or larger")


# --- EKS control-plane AZs ----------------------------------------------------------------------


_SAME_AZ = ("is the training subnet's AZ: an EKS control plane needs subnets in at least 2 AZs (EKS User Guide, "
            "networking requirements); name another AZ of the Region")


@pytest.mark.parametrize("zone, kwargs, message", [
    ("use1-az3", {}, "p 'use1-az3' cannot host an EKS control plane (EKS User Guide, networking requirements: EKS "
                     "refuses cluster subnets in use1-az3): name another AZ of us-east-1"),
    ("cac1-az3", {"region": "ca-central-1"}, "p 'cac1-az3' cannot host an EKS control plane (EKS User Guide, networking "
                                             "requirements: EKS refuses cluster subnets in cac1-az3): name another AZ of "
                                             "ca-central-1"),
    ("use1-az4", {"training_zone_id": "use1-az4"}, f"p 'use1-az4' {_SAME_AZ}"),
    ("us-east-1a", {"training_zone": "us-east-1a"}, f"p 'us-east-1a' {_SAME_AZ}"),
    ("usw2-az1", {}, "p must be an AZ ID of us-east-1 like use1-az1, got 'usw2-az1' (prefix 'use1' from the built-in "
                     "table, UNCONFIRMED: set availability_zone_id_prefix if AWS names us-east-1's AZ IDs otherwise)"),
    ("eu-west-1a", {}, "p must be an Availability Zone of us-east-1 (us-east-1a, us-east-1b, ...), got 'eu-west-1a'"),
    ("b", {}, "p must be an Availability Zone name like us-east-1b or an AZ ID like use1-az6, got 'b'"),
])
def test_a_control_plane_zone_eks_cannot_use_is_one_line(zone: str, kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        eks.check_control_plane_zone("p", zone, **{"region": "us-east-1", **kwargs})
    assert str(caught.value) == message


def test_a_control_plane_zone_that_serves_passes_and_an_unknown_region_is_not_evaluated() -> None:
    eks.check_control_plane_zone("p", "use1-az6", region="us-east-1", training_zone_id="use1-az4")
    eks.check_control_plane_zone("p", "us-east-1b", region="us-east-1", training_zone="us-east-1a")
    eks.check_control_plane_zone("p", "use1-az3", region=None)  # environment-agnostic: the Region is not known
    eks.check_control_plane_zone("p", "euw1-az2", region="eu-west-1")  # a Region without refused AZ IDs


# --- deployment types: one list -----------------------------------------------------------------


def test_the_deployment_type_names_are_the_planners_groups_and_every_fsx_type() -> None:
    from smddp_infra.sizing import DEPLOYMENT_TYPE_NAMES, PERSISTENT_1_HDD
    from smddp_infra.sizing.lustre_rules import DEPLOYMENT_TYPES
    from smddp_infra.sizing.planner import TIER_GROUPS

    assert DEPLOYMENT_TYPE_NAMES == tuple(TIER_GROUPS)
    assert set(DEPLOYMENT_TYPE_NAMES) == {*DEPLOYMENT_TYPES, PERSISTENT_1_HDD}


# --- training plans -----------------------------------------------------------------------------


def test_a_training_plan_zone_is_refused_only_against_a_known_az_id() -> None:
    from smddp_infra.facts.training_jobs import plan_zone_problem

    compare = ("is known by name only (an AZ name maps to different AZ IDs per account); compare with `aws ec2 "
               "describe-availability-zones --zone-names <az>` or place the network by availability_zone_id")
    assert plan_zone_problem(None, "use1-az4") == (
        f"not evaluated: the training plan's capacity is in use1-az4, and the training subnet's AZ {compare}")
    assert plan_zone_problem(None, "use1-az4", subnet_zone="us-east-1a") == (
        f"not evaluated: the training plan's capacity is in use1-az4, and the training subnet's AZ us-east-1a {compare}")
    assert plan_zone_problem("use1-az2", "use1-az4") == (
        "refused: the training plan's reserved capacity is in use1-az4 but the training subnet is in use1-az2; a job "
        "runs in its subnet's AZ, so it would never get the plan's instances: place the network in use1-az4 (a new "
        "subnet replaces the file system) or use a plan in use1-az2")
    assert plan_zone_problem("use1-az4", "use1-az4") is None
