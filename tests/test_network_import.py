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
