"""TrainingLaunchPolicy's props: five, in groups; the flat keywords of earlier releases give the
same template with one DeprecationWarning; a network's parts get one check on every path
(``TrainingNetwork.from_attributes``, ``NetworkParts``, the flat keywords), one line each."""

from __future__ import annotations

import inspect
import json
import warnings
from typing import Any, Callable

import pytest

from conftest import cdk_context
from smddp_infra.contract import FileSystemRef, JobDocument

pytestmark = pytest.mark.slow

ENV = {"account": "111122223333", "region": "us-east-1"}
KEY = "ssm:account=111122223333:parameterName=/ml/net:region=us-east-1"
DOC = JobDocument(subnets=("subnet-0aa11bb22cc33dd44",), security_group_ids=("sg-0123456789abcdef0",),
                  role_arn="arn:aws:iam::111122223333:role/r", checkpoint_s3_uri="s3://acme-jobs/checkpoints/",
                  code_s3_uri="s3://acme-jobs/code/", output_s3_uri="s3://acme-jobs/output/",
                  file_system=FileSystemRef("fs-0123456789abcdef0", "abcdefgh", "/abcdefgh"),
                  instance_type="ml.p5.48xlarge", instance_count=2, region="us-east-1", availability_zone="us-east-1a")
PLAN = "arn:aws:sagemaker:us-east-1:111122223333:training-plan/team-a"
GROUPS_MESSAGE = "security_groups must name 1 to 5 security groups (a training job's VpcConfig.SecurityGroupIds), got none"


def _stack() -> Any:
    from aws_cdk import App, Environment, Stack

    app = App(context={**cdk_context(), KEY: json.dumps(DOC.to_json())})
    return app, Stack(app, "Launch", env=Environment(**ENV))


def _parts(stack: Any) -> dict[str, Any]:
    from aws_cdk import aws_ec2 as ec2, aws_iam as iam, aws_kms as kms, aws_s3 as s3

    return {
        "training_subnets": [ec2.Subnet.from_subnet_id(stack, "S", "subnet-0aa11bb22cc33dd44")],
        "security_groups": [ec2.SecurityGroup.from_security_group_id(stack, f"G{i}", g)
                            for i, g in enumerate(("sg-0123456789abcdef0", "sg-0fedcba9876543210"))],
        "file_system_id": "fs-0123456789abcdef0", "file_system_mount_name": "abcdefgh",
        "encryption_key": kms.Key.from_key_arn(stack, "K", "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab"),
        "job_bucket": s3.Bucket.from_bucket_name(stack, "B", "acme-jobs"), "code_prefix": "code/", "output_prefix": "out/",
        "role": iam.Role.from_role_arn(stack, "R", "arn:aws:iam::111122223333:role/r"),
        "instance_types": ["ml.p5.48xlarge"],
    }


# Each configuration: (the flat keywords, the groups) over a stack, a network or none.
CONFIGURATIONS: dict[str, Callable[[Any, Any], tuple[dict[str, Any], dict[str, Any]]]] = {
    "conditions tuned": lambda stack, network: (
        {"include_tuning_jobs": True, "job_name_prefix": "team-a-", "require_output_kms_key": True,
         "omit_condition_keys": ["sagemaker:FileSystemDirectoryPath"],
         "extra_conditions": {"Bool": {"sagemaker:NetworkIsolation": "true"}}},
        {"conditions": _conditions()(include_tuning_jobs=True, job_name_prefix="team-a-", require_output_kms_key=True,
                                     omit_condition_keys=["sagemaker:FileSystemDirectoryPath"],
                                     extra_conditions={"Bool": {"sagemaker:NetworkIsolation": "true"}})}),
    "job document overridden": lambda stack, network: (
        {"instance_types": ["ml.p4d.24xlarge", "ml.p5.48xlarge"], "encrypt_inter_container_traffic": False,
         "file_system_access_mode": "rw", "training_plan_arns": [PLAN]},
        {"jobs": _jobs()(instance_types=["ml.p4d.24xlarge", "ml.p5.48xlarge"], encrypt_inter_container_traffic=False,
                         file_system_access_mode="rw", training_plan_arns=[PLAN])}),
    "parts only": lambda stack, network: _split(_parts(stack)),
}


def _conditions() -> Any:
    from smddp_infra import LaunchConditions

    return LaunchConditions


def _jobs() -> Any:
    from smddp_infra import LaunchJobs

    return LaunchJobs


def _split(flat: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    from smddp_infra import LaunchJobs, NetworkParts

    jobs = {k: flat[k] for k in ("role", "instance_types")}
    parts = {k: value for k, value in flat.items() if k not in jobs}
    return flat, {"parts": NetworkParts(**parts), "jobs": LaunchJobs(**jobs)}


def _template(name: str, old: bool) -> tuple[str, list[warnings.WarningMessage], list[str]]:
    from smddp_infra import TrainingLaunchPolicy, TrainingNetwork

    app, stack = _stack()
    network = None if name == "parts only" else TrainingNetwork.from_job_document(stack, "Net", parameter_name="/ml/net")
    flat, groups = CONFIGURATIONS[name](stack, network)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        TrainingLaunchPolicy(stack, "Launch", network=network, managed_policy_name="launch",
                             **(flat if old else groups))
    return json.dumps(app.synth().get_stack_by_name("Launch").template), caught, sorted(flat)


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_the_flat_keywords_give_the_groups_template_byte_for_byte(name: str) -> None:
    old, warned, keywords = _template(name, old=True)
    new, quiet, _ = _template(name, old=False)
    assert old == new
    assert [w.category for w in warned] == [DeprecationWarning] and not quiet
    assert all(f"{keyword} -> " in str(warned[0].message) for keyword in keywords)


def test_the_warning_names_each_keywords_new_place_and_the_users_line() -> None:
    from smddp_infra import TrainingLaunchPolicy

    _, stack = _stack()
    parts = _parts(stack)
    with pytest.warns(DeprecationWarning) as caught:
        TrainingLaunchPolicy(stack, "Launch", **parts)
    (warning,) = caught
    text = str(warning.message)
    assert "include_tuning_jobs" not in text
    assert "training_subnets -> parts=NetworkParts(training_subnets=...)" in text
    assert "role -> jobs=LaunchJobs(role=...)" in text
    assert warning.filename == __file__


def test_the_policy_takes_at_most_ten_props() -> None:
    from smddp_infra import TrainingLaunchPolicy

    props = [p for p in inspect.signature(TrainingLaunchPolicy.__init__).parameters.values()
             if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert [p.name for p in props] == ["network", "parts", "jobs", "conditions", "managed_policy_name"]


def test_a_network_that_is_no_training_network_is_one_line_naming_network() -> None:
    from aws_cdk import aws_s3 as s3

    from smddp_infra import TrainingLaunchPolicy
    from smddp_infra.errors import PropTypeError

    _, stack = _stack()
    with pytest.raises(PropTypeError, match=r"^network must be a ITrainingNetwork \(a TrainingNetwork, .*got IBucket Launch/Jobs$"):
        TrainingLaunchPolicy(stack, "Launch", network=s3.Bucket(stack, "Jobs"))


def test_an_unknown_keyword_and_a_keyword_beside_its_group_are_one_line() -> None:
    from smddp_infra import LaunchConditions, TrainingLaunchPolicy
    from smddp_infra.errors import ConfigError, PropTypeError

    _, stack = _stack()
    with pytest.raises(PropTypeError, match=r"^TrainingLaunchPolicy got an unexpected keyword 'include_tuning_job'"):
        TrainingLaunchPolicy(stack, "A", include_tuning_job=True)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"^job_name_prefix: pass it inside conditions=LaunchConditions\(...\), not beside it$"):
        TrainingLaunchPolicy(stack, "B", conditions=LaunchConditions(include_tuning_jobs=True), job_name_prefix="a-")


# --- one check of a network's parts, on every path -------------------------------------------------

def _from_attributes(stack: Any, **change: Any) -> Any:
    from aws_cdk import aws_ec2 as ec2, aws_s3 as s3

    from smddp_infra import TrainingNetwork

    props = {"training_subnet": ec2.Subnet.from_subnet_id(stack, "Sub", "subnet-0aa11bb22cc33dd44"),
             "security_groups": [ec2.SecurityGroup.from_security_group_id(stack, "Efa", "sg-0123456789abcdef0")],
             "job_bucket": s3.Bucket.from_bucket_name(stack, "Bucket", "acme-jobs"), **change}
    return TrainingNetwork.from_attributes(stack, "Net", **props)


def _one_line(excinfo: Any) -> str:
    text = str(excinfo.value)
    assert "\n" not in text
    return text


def test_no_security_groups_is_the_same_line_through_from_attributes_the_group_and_the_flat_keyword() -> None:
    from smddp_infra import NetworkParts, TrainingLaunchPolicy
    from smddp_infra.errors import ConfigError

    _, stack = _stack()
    with pytest.raises(ConfigError) as imported:
        _from_attributes(stack, security_groups=[])
    with pytest.raises(ConfigError) as grouped:
        NetworkParts(security_groups=[])
    with pytest.raises(ConfigError) as flat:  # refused when its group is built, before the deprecation is said
        TrainingLaunchPolicy(stack, "Launch", security_groups=[])
    assert _one_line(imported) == _one_line(grouped) == _one_line(flat) == GROUPS_MESSAGE


def test_six_security_groups_are_refused_by_count() -> None:
    from aws_cdk import aws_ec2 as ec2

    from smddp_infra.errors import ConfigError

    _, stack = _stack()
    groups = [ec2.SecurityGroup.from_security_group_id(stack, f"G{i}", f"sg-0123456789abcdef{i}") for i in range(6)]
    with pytest.raises(ConfigError, match=r"security_groups must name 1 to 5 security groups .*, got 6$"):
        _from_attributes(stack, security_groups=groups)


def test_a_dns_name_without_a_mount_name_is_refused_not_dropped() -> None:
    from smddp_infra.errors import ConfigError

    _, stack = _stack()
    with pytest.raises(ConfigError) as excinfo:
        _from_attributes(stack, file_system_id="fs-0123456789abcdef0",
                         file_system_dns_name="fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com")
    assert _one_line(excinfo) == (
        "file_system_dns_name and file_system_mount_name come together (a client mounts <dns name>@tcp:/<mount name>), "
        "got dns name 'fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com' and mount name None")
    both = _from_attributes(_stack()[1], file_system_dns_name="fs.example", file_system_mount_name="abcdefgh")
    assert (both.file_system_mount.dns_name, both.file_system_mount.mount_name) == ("fs.example", "abcdefgh")


@pytest.mark.parametrize("prop", ["training_subnet", "job_bucket"])
def test_a_string_for_a_cdk_part_is_a_type_error_naming_the_prop(prop: str) -> None:
    from smddp_infra.errors import PropTypeError

    _, stack = _stack()
    with pytest.raises(PropTypeError, match=rf"^{prop} must be an aws_[a-z0-9]+\.I[A-Za-z]+, e\.g\. .*, got str 'subnet-123'$"):
        _from_attributes(stack, **{prop: "subnet-123"})


def test_the_groups_refuse_a_wrong_type_when_built() -> None:
    from smddp_infra import LaunchConditions, LaunchJobs, NetworkParts
    from smddp_infra.errors import ConfigError, PropTypeError

    with pytest.raises(PropTypeError, match=r"^training_subnets must be a list of aws_ec2.ISubnet, got str 'subnet-123'$"):
        NetworkParts(training_subnets="subnet-123")  # type: ignore[arg-type]
    with pytest.raises(PropTypeError, match=r"^role must be an aws_iam.IRole"):
        LaunchJobs(role="arn:aws:iam::111122223333:role/r")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"^file_system_access_mode must be 'ro' or 'rw', got 'rx'$"):
        LaunchJobs(file_system_access_mode="rx")
    with pytest.raises(PropTypeError, match=r"^include_tuning_jobs must be True or False, got str 'yes'$"):
        LaunchConditions(include_tuning_jobs="yes")  # type: ignore[arg-type]
