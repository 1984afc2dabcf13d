"""Platform apps with looked-up and imported VPCs (issue 19, items 1 and 5), through the user's
own app: ``Vpc.from_lookup`` before and after the CLI's lookup, imported subnets whose size is
known or not, and tokens for the counts.

Before the lookup, aws-cdk-lib hands out placeholders (AZs ``dummy1a``.., subnet ``p-12345``,
VPC ``vpc-12345``); the construct must let that first pass through so the CLI can perform the
lookup, and check for real on the second pass (tests/fixtures/lookup/cdk.context.json holds a
looked-up VPC written for these tests).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "lookup"
ACCOUNT, REGION = "111122223333", "us-east-1"
VPC_ID = "vpc-0a1b2c3d4e5f67890"


def _stack(context: dict[str, Any] | None = None) -> Any:
    from aws_cdk import App, Environment, Stack

    app = App(context=context or {})
    return Stack(app, "Platform", env=Environment(account=ACCOUNT, region=REGION))


def _looked_up(context: dict[str, Any] | None = None) -> tuple[Any, Any]:
    from aws_cdk import aws_ec2 as ec2

    stack = _stack(context)
    return stack, ec2.Vpc.from_lookup(stack, "Vpc", vpc_id=VPC_ID)


def _network(stack: Any, **props: Any) -> Any:
    from smddp_infra import SmddpTrainingNetwork

    props.setdefault("read_mbps_per_gpu", 50)
    props.setdefault("allow_https_egress", True)
    return SmddpTrainingNetwork(stack, "Training", **props)


def _messages(construct: Any, kind: str) -> list[str]:
    return [str(entry.data) for entry in construct.node.metadata if entry.type == kind]


@pytest.fixture(scope="module")
def context() -> dict[str, Any]:
    return json.loads((FIXTURE / "cdk.context.json").read_text())


# --- before the lookup: the first pass must get through ------------------------------------------


def test_a_vpc_from_lookup_passes_the_first_synth_with_an_info_saying_the_checks_wait():
    stack, vpc = _looked_up()
    network = _network(stack, vpc=vpc, training_subnet=vpc.private_subnets[0], availability_zone="us-east-1a")
    (info,) = [m for m in _messages(network, "aws:cdk:info") if "context lookup" in m]
    assert "'dummy1a'" in info and "after the lookup" in info
    assert not _messages(network, "aws:cdk:error")


def test_the_stacks_own_availability_zones_before_their_lookup_pass_the_first_synth():
    stack = _stack()
    zone = stack.availability_zones[0]
    assert zone == "dummy1a"  # aws-cdk-lib's placeholder until the CLI looks the AZs up
    network = _network(stack, availability_zone=zone, allow_https_egress=None)
    assert any("placeholder of a context lookup" in m for m in _messages(network, "aws:cdk:info"))


def test_after_the_lookup_the_stacks_availability_zone_is_checked_for_real():
    from smddp_infra.errors import ConfigError

    key = f"availability-zones:account={ACCOUNT}:region={REGION}"
    stack = _stack({key: ["us-east-1a", "us-east-1b"]})
    assert _network(stack, availability_zone=stack.availability_zones[1], allow_https_egress=None).availability_zone == "us-east-1b"
    with pytest.raises(ConfigError, match=r"^availability_zone must be an Availability Zone of us-east-1"):
        _network(_stack({key: ["us-west-2a"]}), availability_zone=_stack({key: ["us-west-2a"]}).availability_zones[0])


@pytest.mark.slow
def test_the_pinned_cli_reaches_its_lookup_step_instead_of_our_error(tmp_path):
    app_dir = tmp_path / "platform"
    app_dir.mkdir()
    shutil.copy(FIXTURE / "app.py", app_dir / "app.py")
    (app_dir / "cdk.json").write_text(json.dumps({"app": "python3 app.py"}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(PYTHONPATH=str(ROOT), AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=str(tmp_path / "none"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"), CDK_DISABLE_CLI_TELEMETRY="true")
    result = subprocess.run(["cdk", "synth", "--no-notices", "--no-version-reporting", "--ci", "--quiet"], cwd=app_dir,
                            env=env, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert "Need to perform AWS calls for account 111122223333" in output, output[-2000:]
    assert "ConfigError" not in output and "must be an Availability Zone" not in output and "Traceback" not in output
    missing = json.loads((app_dir / "cdk.out" / "manifest.json").read_text())["missing"]
    assert [m["provider"] for m in missing] == ["vpc-provider"]


# --- after the lookup: the checks apply ---------------------------------------------------------


@pytest.mark.slow
def test_a_looked_up_vpc_synthesizes_with_its_context_and_the_real_subnet(context):
    stack, vpc = _looked_up(context)
    network = _network(stack, vpc=vpc, training_subnet=vpc.private_subnets[0], availability_zone="us-east-1a")
    assert not [m for m in _messages(network, "aws:cdk:info") if "context lookup" in m]
    template = stack.node.root.synth().get_stack_by_name("Platform").template
    (fs,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::FSx::FileSystem"]
    assert fs["Properties"]["SubnetIds"] == ["subnet-0aa11bb22cc33dd44"]
    assert network.job_settings().availability_zone == "us-east-1a"


def test_a_wrong_availability_zone_is_still_refused_after_the_lookup(context):
    from smddp_infra.errors import ConfigError

    stack, vpc = _looked_up(context)
    with pytest.raises(ConfigError, match=r"^availability_zone 'us-east-1b' contradicts training_subnet, which is in 'us-east-1a'"):
        _network(stack, vpc=vpc, training_subnet=vpc.private_subnets[0], availability_zone="us-east-1b")


def test_a_looked_up_subnet_too_small_for_the_cluster_is_refused(context):
    from smddp_infra.errors import ConfigError

    stack, vpc = _looked_up(context)
    with pytest.raises(ConfigError, match=r"^instance_count=64 does not fit training_subnet .*10\.20\.32\.0/26"):
        _network(stack, vpc=vpc, training_subnet=vpc.isolated_subnets[0], instance_count=64)


# --- imported subnets ---------------------------------------------------------------------------


def _imported(stack: Any, cidr: str | None) -> tuple[Any, Any]:
    from aws_cdk import aws_ec2 as ec2

    vpc = ec2.Vpc.from_vpc_attributes(stack, "Vpc", vpc_id=VPC_ID, availability_zones=["us-east-1a"],
                                      private_subnet_ids=["subnet-0aa11bb22cc33dd44"])
    extra = {"ipv4_cidr_block": cidr} if cidr else {}
    subnet = ec2.Subnet.from_subnet_attributes(stack, "Subnet", subnet_id="subnet-0aa11bb22cc33dd44",
                                               availability_zone="us-east-1a", **extra)
    return vpc, subnet


def test_an_imported_subnet_of_26_is_refused_for_64_instances_like_a_created_one():
    from smddp_infra.errors import ConfigError

    stack = _stack()
    vpc, subnet = _imported(stack, "10.20.0.0/26")
    with pytest.raises(ConfigError) as caught:
        _network(stack, vpc=vpc, training_subnet=subnet, instance_count=64)
    message = str(caught.value)
    assert message.startswith("instance_count=64 does not fit training_subnet") and "\n" not in message
    assert "10.20.0.0/26, 59 usable addresses" in message and "64 instances x 5 private IPs" in message


def test_an_imported_subnet_that_holds_the_cluster_once_but_not_twice_gets_a_warning():
    stack = _stack()
    vpc, subnet = _imported(stack, "10.20.0.0/26")
    network = _network(stack, vpc=vpc, training_subnet=subnet, instance_count=6)  # 38 of 59 addresses
    assert any("not twice over" in m for m in _messages(network, "aws:cdk:warning"))


def test_an_imported_subnet_without_its_cidr_gets_an_info_not_a_verdict():
    stack = _stack()
    vpc, subnet = _imported(stack, None)
    network = _network(stack, vpc=vpc, training_subnet=subnet, instance_count=64)
    assert any("CIDR is not known at synth" in m and "not evaluated" in m for m in _messages(network, "aws:cdk:info"))


# --- tokens for the counts ----------------------------------------------------------------------


@pytest.mark.parametrize("prop", ["instance_count", "max_instance_count"])
def test_a_token_for_a_count_must_be_known_at_synth(prop):
    from aws_cdk import CfnParameter, Token

    from smddp_infra.errors import ConfigError

    stack = _stack()
    count = Token.as_number(CfnParameter(stack, "Count", type="Number").value_as_number)
    with pytest.raises(ConfigError, match=rf"^{prop} must be known at synth \(a literal number\)"):
        _network(stack, availability_zone="us-east-1a", allow_https_egress=None, **{prop: count})
