"""Every limit a message states is checked by the validator that states it.

SageMaker names (botocore ClusterName, TrainingJobName): the pattern lets hyphens make a name
of any length, and ``max: 63`` is a separate constraint. Each case is a name the pattern
accepts and the length refuses, so it fails if the length check is removed.
"""

from __future__ import annotations

import pytest

from smddp_infra.errors import ConfigError
from smddp_infra.settings import NetworkSettings
from smddp_infra.facts.names import MAX_NAME_LENGTH, is_sagemaker_name

LONG = "a-" * 31 + "bc"  # 64 characters, ClusterName's pattern holds


def test_sagemaker_names_are_checked_for_pattern_and_length() -> None:
    assert len(LONG) == MAX_NAME_LENGTH + 1
    assert is_sagemaker_name(LONG[:-1]) and is_sagemaker_name("a") and is_sagemaker_name("a" * 63)
    assert not is_sagemaker_name(LONG) and not is_sagemaker_name("") and not is_sagemaker_name("-a")
    assert not is_sagemaker_name("a-") and not is_sagemaker_name(None)


def test_a_64_character_job_name_prefix_is_one_line_naming_the_key() -> None:
    base = {"smddp:readMBpsPerGpu": "50"}
    NetworkSettings.from_context({**base, "smddp:trainingJobNamePrefix": LONG[:-1]})
    with pytest.raises(ConfigError, match="smddp:trainingJobNamePrefix must be the start of a SageMaker training job "
                                          r"name \(letters, digits and hyphens, at most 63\)"):
        NetworkSettings.from_context({**base, "smddp:trainingJobNamePrefix": LONG})


def test_a_64_character_monitoring_prefix_is_one_line_naming_the_field() -> None:
    from smddp_infra.constructs.monitoring import MonitoringOptions, validate_options

    validate_options(MonitoringOptions(training_job_name_prefix=LONG[:-1]), capacity_gib=1200)
    with pytest.raises(ConfigError, match="monitoring.training_job_name_prefix must be the start"):
        validate_options(MonitoringOptions(training_job_name_prefix=LONG), capacity_gib=1200)


def test_the_largest_training_subnet_is_an_18_exactly() -> None:
    """plan_subnet_mask states "more than a /18 training subnet holds": 1,637 instances need
    2 x 1,637 x 5 + 5 = 16,375 of a /18's 16,384 addresses; 1,638 need 16,385."""
    from smddp_infra.facts.subnets import MIN_SUBNET_MASK, plan_subnet_mask

    assert MIN_SUBNET_MASK == 18 and 2 * 1637 * 5 + 5 <= 2 ** 14 < 2 * 1638 * 5 + 5
    assert plan_subnet_mask(instances=1637) == 18
    with pytest.raises(ConfigError) as caught:
        plan_subnet_mask(instances=1638)
    assert str(caught.value) == "a cluster of 1638 instances needs 16385 IPs, more than a /18 training subnet holds"


def test_a_job_takes_the_efa_group_and_four_more() -> None:
    """check_job_group_count states "at most 5 security groups (VpcConfig.SecurityGroupIds)"."""
    from dataclasses import replace

    from smddp_infra.schema.network import NetworkSpec, Placement, Workload, check_job_group_count

    spec = NetworkSpec(workload=Workload(read_mbps_per_gpu=50), placement=Placement(availability_zone="us-east-1a"))
    check_job_group_count(replace(spec, additional_groups=4))
    with pytest.raises(ConfigError, match=r"additional_security_groups has 5 groups: a training job takes at most 5 "):
        check_job_group_count(replace(spec, additional_groups=5))
