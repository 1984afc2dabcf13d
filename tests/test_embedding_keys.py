"""KMS keys on the network (issue 19, item 4), through the user's own app: KmsKeyId is the key
ARN, a key of another account warns with the grants its key policy must hold, a customer key
makes the calculator choose among PERSISTENT types only (FSx for Lustre uses a customer key on
PERSISTENT_1/PERSISTENT_2 only), and a SCRATCH type beside a key is one clear error."""

from __future__ import annotations

from typing import Any

import pytest

from smddp_infra.errors import ConfigError

OTHER_ACCOUNT_KEY = "arn:aws:kms:us-east-1:444455556666:key/1234abcd-12ab-34cd-56ef-1234567890ab"
OWN_ACCOUNT_KEY = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def _stack() -> Any:
    from aws_cdk import App, Environment, Stack

    return Stack(App(), "Platform", env=Environment(account="111122223333", region="us-east-1"))


def _network(stack: Any, key_arn: str | None = None, **props: Any) -> Any:
    from aws_cdk import aws_kms as kms

    from smddp_infra import SmddpTrainingNetwork

    if key_arn:
        props["encryption_key"] = kms.Key.from_key_arn(stack, "Key", key_arn)
    props.setdefault("read_mbps_per_gpu", 50)
    props.setdefault("dataset_gib", 2000)
    return SmddpTrainingNetwork(stack, "Training", availability_zone="us-east-1a", **props)


def _warnings(construct: Any) -> list[str]:
    return [str(e.data) for e in construct.node.metadata if e.type == "aws:cdk:warning"]


@pytest.fixture(scope="module")
def other_account() -> Any:
    stack = _stack()
    return stack, _network(stack, OTHER_ACCOUNT_KEY)


def test_kms_key_id_is_the_key_arn_so_a_key_of_another_account_is_found(other_account):
    stack, network = other_account
    assert stack.resolve(network.file_system.cfn_file_system.kms_key_id) == OTHER_ACCOUNT_KEY


def test_a_key_of_another_account_warns_with_the_grants_its_key_policy_must_hold(other_account):
    _, network = other_account
    (warning,) = [w for w in _warnings(network) if "belongs to account 444455556666" in w]
    for grant in ("kms:Decrypt", "kms:GenerateDataKey", "kms:CreateGrant", "execution role", "FSx for Lustre"):
        assert grant in warning


def test_a_key_of_the_stacks_own_account_gives_no_such_warning():
    stack = _stack()
    network = _network(stack, OWN_ACCOUNT_KEY)
    assert not [w for w in _warnings(network) if "belongs to account" in w]


def test_a_customer_key_makes_the_calculator_choose_persistent_and_say_why(other_account):
    _, network = other_account
    plan = network.lustre_plan
    assert plan.deployment_type.startswith("PERSISTENT")
    assert "PERSISTENT types only" in plan.explanation and "FSx service key" in plan.explanation
    assert "SCRATCH_2" not in plan.record()["chosenFrom"]


def test_the_same_workload_without_a_key_still_plans_scratch_2():
    stack = _stack()
    assert _network(stack).lustre_plan.deployment_type == "SCRATCH_2"  # the default is unchanged


def test_a_created_key_also_plans_persistent():
    stack = _stack()
    network = _network(stack, create_encryption_key=True)
    assert network.lustre_plan.deployment_type.startswith("PERSISTENT")
    assert stack.resolve(network.file_system.cfn_file_system.kms_key_id) == {"Fn::GetAtt": [stack.get_logical_id(
        network.encryption_key.node.default_child), "Arn"]}


@pytest.mark.parametrize("types", [["SCRATCH_2"], ["SCRATCH_2", "PERSISTENT_2"], "SCRATCH_1"])
def test_a_scratch_type_with_a_key_is_one_line_naming_the_props(types):
    stack = _stack()
    with pytest.raises(ConfigError) as caught:
        _network(stack, OWN_ACCOUNT_KEY, deployment_types=types)
    message = str(caught.value)
    assert message.startswith("deployment_types contains 'SCRATCH_") and "but encryption_key is given" in message
    assert "PERSISTENT_1 and PERSISTENT_2" in message and "\n" not in message


def test_a_scratch_lustre_plan_with_a_created_key_names_lustre_plan():
    from smddp_infra.sizing.planner import plan_lustre

    stack = _stack()
    with pytest.raises(ConfigError, match=r"^lustre_plan is SCRATCH_2 but create_encryption_key=True is given"):
        _network(stack, lustre_plan=plan_lustre(1600, 2000), read_mbps_per_gpu=None, dataset_gib=0,
                 create_encryption_key=True)


def test_the_standalone_file_system_refuses_kms_key_on_a_scratch_plan():
    from aws_cdk import aws_ec2 as ec2, aws_kms as kms

    from smddp_infra import LustreFileSystem
    from smddp_infra.sizing.planner import plan_lustre

    stack = _stack()
    vpc = ec2.Vpc(stack, "Vpc", max_azs=1)
    group = ec2.SecurityGroup(stack, "Group", vpc=vpc)
    with pytest.raises(ConfigError, match=r"^kms_key was given with a SCRATCH_2 plan"):
        LustreFileSystem(stack, "Lustre", plan=plan_lustre(1600, 2000), vpc=vpc, subnet=vpc.private_subnets[0],
                         security_group=group, kms_key=kms.Key.from_key_arn(stack, "Key", OWN_ACCOUNT_KEY))


def test_the_default_apps_context_names_both_keys():
    from smddp_infra.schema import size_file_system as plan_for
    from smddp_infra.settings import NetworkSettings

    from conftest import cdk_context

    with pytest.raises(ConfigError, match=r"^smddp:deploymentType contains 'SCRATCH_2' but smddp:kmsKey is given"):
        NetworkSettings.from_context(cdk_context(**{"smddp:kmsKey": OWN_ACCOUNT_KEY, "smddp:deploymentType": "SCRATCH_2"}))
    plain = NetworkSettings.from_context(cdk_context(**{"smddp:kmsKey": OWN_ACCOUNT_KEY}))
    assert plan_for(plain.spec).deployment_type.startswith("PERSISTENT")


def test_the_planner_keeps_persistent_types_for_a_customer_key():
    from smddp_infra.errors import SizingError
    from smddp_infra.sizing.planner import plan_lustre

    assert plan_lustre(1600, 2000).deployment_type == "SCRATCH_2"
    assert plan_lustre(1600, 2000, customer_key=True).deployment_type in ("PERSISTENT_1", "PERSISTENT_2")
    with pytest.raises(SizingError, match="deployment_types contains 'SCRATCH_2', but the file system is to use a customer KMS key"):
        plan_lustre(1600, 2000, customer_key=True, deployment_types=["SCRATCH_2"])
