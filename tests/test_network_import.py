"""TrainingNetwork.from_job_document: a network known only by its SSM job document.

An SSM context lookup: on the first pass aws-cdk-lib returns a dummy value and records the
lookup as missing (the CDK CLI performs it and runs the app again); with the value in the
context (cdk.context.json), the network is the document's.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from smddp_infra.contract import FileSystemRef, JobDocument

pytestmark = pytest.mark.slow

KEY = "ssm:account=111122223333:parameterName=/ml/net:region=us-east-1"
DOC = JobDocument(subnets=("subnet-0aa11bb22cc33dd44",), security_group_ids=("sg-0123456789abcdef0", "sg-0fedcba9876543210"),
                  role_arn="arn:aws:iam::111122223333:role/r", checkpoint_s3_uri="s3://acme-jobs/checkpoints/",
                  file_system=FileSystemRef("fs-0123456789abcdef0", "abcdefgh", "/abcdefgh"),
                  instance_type="ml.p5.48xlarge", instance_count=2, region="us-east-1", availability_zone="us-east-1a",
                  kms_key_arn="arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab")


def _network(context: dict[str, Any]) -> Any:
    from aws_cdk import App, Environment, Stack, aws_sns as sns

    from smddp_infra import TrainingNetwork

    app = App(context=context)
    stack = Stack(app, "Consumer", env=Environment(account="111122223333", region="us-east-1"))
    sns.Topic(stack, "Something")  # a stack with no resource does not synthesize
    return app, TrainingNetwork.from_job_document(stack, "Net", parameter_name="/ml/net")


def test_the_first_pass_is_a_placeholder_and_asks_for_the_lookup() -> None:
    app, network = _network({})
    assert network.training_subnet.subnet_id == "p-12345"  # aws-cdk-lib's own lookup placeholder
    manifest = json.load(open(os.path.join(app.synth().directory, "manifest.json")))
    assert [m["key"] for m in manifest["missing"]] == [KEY]


def test_with_the_looked_up_document_the_network_is_the_documents() -> None:
    _, network = _network({KEY: json.dumps(DOC.to_json())})
    assert network.training_subnet.subnet_id == "subnet-0aa11bb22cc33dd44"
    assert network.training_subnet.availability_zone == "us-east-1a"
    assert [g.security_group_id for g in network.security_groups] == list(DOC.security_group_ids)
    assert network.job_bucket.bucket_name == "acme-jobs" and network.checkpoint_prefix == "checkpoints"
    assert network.file_system_mount.mount_name == "abcdefgh" and network.file_system_id == "fs-0123456789abcdef0"
    assert network.encryption_key.key_arn == DOC.kms_key_arn


def test_an_environment_agnostic_stack_is_one_line() -> None:
    from aws_cdk import App, Stack

    from smddp_infra import TrainingNetwork
    from smddp_infra.errors import ConfigError

    with pytest.raises(ConfigError, match="needs the stack's env=Environment\\(account=..., region=...\\)"):
        TrainingNetwork.from_job_document(Stack(App(), "Agnostic"), "Net", parameter_name="/ml/net")


# --- TrainingLaunchPolicy reads the network through ITrainingNetwork ---------------------------

def _policy_document(policy: Any) -> dict[str, Any]:
    from aws_cdk import Stack

    cfn = policy.policy.node.default_child
    return Stack.of(policy).resolve(cfn.policy_document)


def test_a_launch_policy_given_the_network_is_the_networks_own() -> None:
    """``TrainingLaunchPolicy(network=net)`` states exactly what ``net.launch_policy()`` states:
    one reading of the network (its job document, subnet, groups, bucket, prefixes, key)."""
    from aws_cdk import App, Environment, Stack

    from smddp_infra import TrainingLaunchPolicy, TrainingNetwork
    from smddp_infra.schema import Placement, Workload

    stack = Stack(App(), "Net", env=Environment(region="us-east-1"))
    network = TrainingNetwork(stack, "Net", workload=Workload(read_mbps_per_gpu=100),
                              placement=Placement(availability_zone="us-east-1a"))
    own = _policy_document(network.launch_policy())
    given = _policy_document(TrainingLaunchPolicy(stack, "Given", network=network))
    assert given == own
    text = json.dumps(given)
    assert "ml.p4d.24xlarge" in text and "iam:PassRole" in text and "code/" in text


def test_a_network_imported_by_its_job_document_grants_launch() -> None:
    """The platform stack that only knows the parameter name grants launch from the document."""
    import dataclasses

    from aws_cdk import aws_iam as iam

    doc = dataclasses.replace(DOC, code_s3_uri="s3://acme-jobs/code/", output_s3_uri="s3://acme-jobs/output/")
    _, network = _network({KEY: json.dumps(doc.to_json())})
    assert (network.code_prefix, network.output_prefix) == ("code/", "output/")
    role = iam.Role(network, "Launcher", assumed_by=iam.AccountRootPrincipal())
    document = _policy_document(network.grant_launch(role))
    text = json.dumps(document)
    for fact in (DOC.role_arn, "ml.p5.48xlarge", "subnet-0aa11bb22cc33dd44", "sg-0123456789abcdef0", "fs-0123456789abcdef0",
                 "acme-jobs/code/*", DOC.kms_key_arn):
        assert fact in text, fact


def test_a_network_imported_by_its_parts_needs_the_role_in_one_line() -> None:
    from aws_cdk import App, Stack, aws_ec2 as ec2, aws_s3 as s3

    from smddp_infra import TrainingLaunchPolicy, TrainingNetwork
    from smddp_infra.errors import ConfigError

    stack = Stack(App(), "Parts")
    network = TrainingNetwork.from_attributes(
        stack, "Net", training_subnet=ec2.Subnet.from_subnet_id(stack, "S", "subnet-0aa11bb22cc33dd44"),
        security_groups=[ec2.SecurityGroup.from_security_group_id(stack, "G", "sg-0123456789abcdef0")],
        job_bucket=s3.Bucket.from_bucket_name(stack, "B", "acme-jobs"))
    with pytest.raises(ConfigError, match=r"^role: the execution role jobs pass is required"):
        TrainingLaunchPolicy(stack, "Policy", network=network)
    from aws_cdk import aws_iam as iam

    from smddp_infra import LaunchJobs

    policy = TrainingLaunchPolicy(stack, "Policy2", network=network, jobs=LaunchJobs(
        instance_types=["ml.p5.48xlarge"], role=iam.Role.from_role_arn(stack, "R", "arn:aws:iam::111122223333:role/r")))
    assert "subnet-0aa11bb22cc33dd44" in json.dumps(_policy_document(policy))
