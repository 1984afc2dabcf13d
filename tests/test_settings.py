"""Bad context values stop the synth with one line naming the key, the value and what is allowed."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from conftest import ROOT, cdk_context
from smddp_infra.errors import ConfigError
from smddp_infra.facts.subnets import plan_subnet_mask
from smddp_infra.facts.regions import az_id_prefix
from smddp_infra.schema import size_file_system
from smddp_infra.settings import NetworkSettings


def parse(**overrides: object) -> NetworkSettings:
    return NetworkSettings.from_context(cdk_context(**overrides))


def plan_for(settings: NetworkSettings) -> Any:
    """The plan TrainingNetwork sizes for these keys: the schema's one sizing call over their spec."""
    return size_file_system(settings.spec)


def test_defaults_come_from_cdk_json() -> None:
    settings = parse()
    assert (settings.region, settings.availability_zone, settings.instance_type, settings.instance_count) == (
        "us-east-1", "us-east-1a", "ml.p4d.24xlarge", 4)
    assert (settings.spec.workload.read_mbps_per_gpu, settings.spec.workload.required_throughput_mbps) == (50, None)
    assert settings.nat_gateway is False and settings.efa_file_system is False
    assert settings.checkpoint_noncurrent_days == 30


def test_command_line_strings_are_parsed_like_json_values() -> None:
    settings = parse(**{"smddp:instanceCount": "16", "smddp:natGateway": "true", "smddp:datasetGiB": "1200.5",
                        "smddp:availabilityZoneId": "use1-az4", "smddp:deploymentType": "PERSISTENT_2"})
    assert settings.instance_count == 16 and settings.nat_gateway is True and settings.dataset_gib == 1200.5
    assert settings.availability_zone_id == "use1-az4" and settings.availability_zone is None


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("smddp:instanceType", "ml.g5.48xlarge", "EFA training instance type (ml.p4d.24xlarge"),
        ("smddp:instanceCount", "0", "whole number >= 1"),
        ("smddp:instanceCount", 0, "whole number >= 1"),
        ("smddp:instanceCount", "two", "whole number >= 1"),
        ("smddp:availabilityZone", "us-west-2a", "Availability Zone of us-east-1"),
        ("smddp:availabilityZoneId", "usw2-az1", "AZ ID of us-east-1 like use1-az1"),
        ("smddp:region", "mars-1", "AWS region name"),
        ("smddp:datasetGiB", "-5", "number >= 0"),
        ("smddp:datasetGiB", "nan", "number >= 0"),
        ("smddp:readMBpsPerGpu", "0", "number > 0"),
        ("smddp:requiredThroughputMBps", "-1", "number > 0"),
        ("smddp:deploymentType", "SCRATCH_3", "deployment types among SCRATCH_1, SCRATCH_2, PERSISTENT_1"),
        ("smddp:efaFileSystem", "yes", "true or false"),
        ("smddp:natGateway", "1", "true or false"),
        ("smddp:checkpointNoncurrentDays", "0", "whole number >= 1"),
        ("smddp:datasetBucket", "Not_A_Bucket", "S3 bucket name"),
        ("smddp:kmsKey", "my-key", "'create' or a KMS key ARN"),
        ("smddp:s3PrefixListId", "prefix", "prefix list id"),
        ("smddp:vpcCidr", "10.0.0.0/8", "CIDR block from /16 to /24"),
        ("smddp:maxCapacityGiB", "-1", "number > 0"),
        ("smddp:instanceCount", "5000", "does not fit the /20 training subnet"),
        ("smddp:maxInstanceCount", "5000", "too large for one training subnet"),
        ("smddp:maxInstanceCount", "0", "whole number >= 1"),
        ("smddp:perUnitStorageThroughput", "fast", "whole number >= 1"),
        ("smddp:allowReplacement", "yes", "true or false"),
        ("smddp:instanceCuont", "4", "unknown context key"),
    ],
)
def test_bad_context_value_names_key_value_and_what_is_allowed(key: str, value: object, allowed: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        parse(**{key: value})
    message = str(excinfo.value)
    assert key in message and allowed in message
    if "unknown" not in allowed:
        assert repr(value) in message or str(value) in message
    assert "\n" not in message


@pytest.mark.parametrize(("overrides", "expected"), [
    ({"smddp:vpcCidr": "10.0.0.0/24", "smddp:natGateway": "true", "smddp:maxInstanceCount": "16"},
     "smddp:vpcCidr 10.0.0.0/24 is too small for a /24 training subnet and a /28 NAT subnet (smddp:maxInstanceCount=16)"),
    ({"smddp:vpcCidr": "10.0.0.0/24", "smddp:maxInstanceCount": "64"}, "smddp:vpcCidr 10.0.0.0/24 is too small for a /22 training subnet"),
    ({"smddp:vpcCidr": "10.0.0.0/24", "smddp:instanceCount": "64"},
     "smddp:instanceCount=64 does not fit the /24 training subnet (the default, 1/16 of smddp:vpcCidr 10.0.0.0/24), which holds 22"),
    ({"smddp:instanceCount": "30", "smddp:maxInstanceCount": "4"},
     "smddp:instanceCount=30 does not fit the /24 training subnet (smddp:maxInstanceCount=4), which holds 22"),
])
def test_subnets_that_do_not_fit_the_vpc_cidr_are_reported_before_jsii(overrides: dict, expected: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        parse(**overrides)
    assert expected in str(excinfo.value)


def test_throughput_no_file_system_can_reach_is_a_clear_error_naming_the_keys() -> None:
    from smddp_infra.errors import SizingError

    with pytest.raises(SizingError) as excinfo:
        plan_for(parse(**{"smddp:requiredThroughputMBps": "1e12"}))
    message = str(excinfo.value)
    assert message == ("smddp:requiredThroughputMBps=1e+12 MB/s with smddp:datasetGiB=2,000 is more than one FSx for Lustre "
                       "file system can serve: it needs more than 2,147,483,647 GiB, the largest StorageCapacity "
                       "CloudFormation accepts; read less per GPU or split the dataset across file systems")


def test_az_id_prefix_follows_aws_naming() -> None:
    assert [az_id_prefix(r) for r in ("us-east-1", "eu-west-2", "ap-southeast-1", "ap-northeast-3", "ca-central-1")] == [
        "use1", "euw2", "apse1", "apne3", "cac1"]


@pytest.mark.parametrize(("instances", "mask"), [(1, 24), (4, 24), (16, 24), (64, 22), (256, 20)])
def test_training_subnet_holds_the_largest_cluster_twice(instances: int, mask: int) -> None:
    assert plan_subnet_mask(instances=instances, other_ips=15) == mask
    assert 2 ** (32 - mask) >= (instances * 5 + 15) * 2 + 5


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-c", "smddp:instanceCount=0"], "smddp:instanceCount must be a whole number >= 1, got '0'"),
        (["-c", "smddp:instanceType=ml.m5.large"], "smddp:instanceType must be a SageMaker EFA training instance type"),
        (["-c", "smddp:requiredThroughputMBps=50000", "-c", "smddp:maxCapacityGiB=9600"],
         "no FSx for Lustre file system (SCRATCH_2, PERSISTENT_1, PERSISTENT_2) fits smddp:requiredThroughputMBps=50,000 "
         "MB/s with smddp:datasetGiB=2,000, smddp:maxCapacityGiB=9,600:"),
        (["-c", "smddp:requiredThroughputMBps=1e12"], "is more than one FSx for Lustre file system can serve"),
    ],
)
def test_app_exits_2_with_one_line_on_bad_context(args: list[str], expected: str) -> None:
    """The real app under the real cdk CLI: no traceback, one line, non-zero exit."""
    cdk = ROOT / "node_modules" / ".bin" / "cdk"
    result = subprocess.run(
        [str(cdk), "synth", "--no-notices", "--quiet", "--output", str(ROOT / "cdk.out.bad-input"), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("smddp_infra: error:")]
    assert len(lines) == 1, result.stderr


def test_per_unit_throughput_pins_a_tier_only_with_its_deployment_type() -> None:
    from smddp_infra.errors import SizingError

    with pytest.raises(ConfigError, match="smddp:perUnitStorageThroughput=250 needs smddp:deploymentType too"):
        parse(**{"smddp:perUnitStorageThroughput": "250"})
    plan = plan_for(parse(**{"smddp:deploymentType": "PERSISTENT_2", "smddp:perUnitStorageThroughput": "125"}))
    assert (plan.deployment_type, plan.per_unit_storage_throughput, plan.pinned) == ("PERSISTENT_2", 125, True)
    with pytest.raises(SizingError) as excinfo:
        plan_for(parse(**{"smddp:deploymentType": "PERSISTENT_2", "smddp:perUnitStorageThroughput": "300"}))
    assert "smddp:perUnitStorageThroughput" in str(excinfo.value) and "125, 250, 500, 1000" in str(excinfo.value)


def test_default_training_subnet_is_a_sixteenth_of_the_vpc_and_holds_406_instances() -> None:
    """Sized from the VPC (or smddp:maxInstanceCount), never from today's count (test_deploy_local proves
    that growing 4 -> 64 instances keeps the subnet's id)."""
    from smddp_infra.facts.subnets import default_subnet_mask, subnet_instance_capacity, training_subnet_mask

    assert training_subnet_mask(vpc_prefix=16, nat=False, max_instance_count=None, ips_per_instance=5, other_ips=14) == 20
    assert training_subnet_mask(vpc_prefix=16, nat=False, max_instance_count=64, ips_per_instance=5, other_ips=14) == 22
    assert subnet_instance_capacity(20, other_ips=14) == 406  # (4,091 / 2 - 14) / 5
    assert subnet_instance_capacity(20, other_ips=14, headroom=1) == 815
    assert [default_subnet_mask(p, nat=n) for p, n in ((20, False), (24, False), (24, True))] == [24, 24, 25]
    assert parse(**{"smddp:instanceCount": "406"}).instance_count == 406
    with pytest.raises(ConfigError, match="smddp:instanceCount=407 does not fit the /20 training subnet"):
        parse(**{"smddp:instanceCount": "407"})


def test_az_id_prefix_table_covers_the_regions_of_the_s3_prefix_list_table() -> None:
    from smddp_infra.facts.regions import AZ_ID_PREFIXES, S3_PREFIX_LISTS

    assert set(S3_PREFIX_LISTS) <= set(AZ_ID_PREFIXES)
    assert AZ_ID_PREFIXES["us-gov-west-1"] == "usgw1" and az_id_prefix("xx-nowhere-9") is None
    assert az_id_prefix("us-east-1", {"us-east-1": "abc1"}) == "abc1"


def test_an_az_id_of_another_region_names_the_key_and_the_override() -> None:
    with pytest.raises(ConfigError, match=r"smddp:availabilityZoneId must be an AZ ID of us-east-1 like use1-az1, got 'usw2-az1'.*"
                                          r"set smddp:availabilityZoneIdPrefix"):
        parse(**{"smddp:availabilityZoneId": "usw2-az1"})
    settings = parse(**{"smddp:availabilityZoneId": "xyz9-az1", "smddp:availabilityZoneIdPrefix": "xyz9"})
    assert settings.availability_zone_id == "xyz9-az1" and settings.availability_zone_id_prefix == "xyz9"


def test_the_monthly_cost_warning_context_key_is_parsed_and_checked() -> None:
    assert parse(**{"smddp:monthlyCostWarningUSD": "5000"}).monthly_cost_warning_usd == 5000
    with pytest.raises(ConfigError, match=r"smddp:monthlyCostWarningUSD must be a number > 0 USD per month, got '-1'"):
        parse(**{"smddp:monthlyCostWarningUSD": "-1"})
    with pytest.raises(ConfigError, match=r"smddp:availabilityZoneIdPrefix must be an AZ ID prefix like use1"):
        parse(**{"smddp:availabilityZoneIdPrefix": "use-1"})


def test_the_key_table_names_every_setting_once() -> None:
    from smddp_infra.settings import KEYS

    fields = [(group.__name__, field) for group, field in KEYS.values()]
    assert len(set(fields)) == len(fields) == len(KEYS)
    assert all(key.startswith("smddp:") for key in KEYS)
    # every key reaches a field of its group, read through that field's own rule
    assert all(field in group.__dataclass_fields__ for group, field in KEYS.values())


def test_the_old_flat_settings_still_build_the_same_spec_with_one_warning() -> None:
    """NetworkSettings(region=..., instance_count=...), its form before the schema walk, for one minor
    release: read as the context keys the fields stand for, one DeprecationWarning naming them."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = NetworkSettings(region="us-east-1", availability_zone="us-east-1a", instance_count=8,
                              read_mbps_per_gpu=50, deployment_type="PERSISTENT_2")
    assert [w.category for w in caught] == [DeprecationWarning]
    assert "instance_count -> smddp:instanceCount" in str(caught[0].message)
    new = NetworkSettings.from_context({"smddp:region": "us-east-1", "smddp:availabilityZone": "us-east-1a",
                                        "smddp:instanceCount": 8, "smddp:readMBpsPerGpu": 50,
                                        "smddp:deploymentType": "PERSISTENT_2"})
    assert old == new
    with pytest.raises(TypeError, match=r"^NetworkSettings has no field 'instnace_count': did you mean 'instance_count'\?$"):
        NetworkSettings(instnace_count=8)
