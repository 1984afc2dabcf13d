"""Job settings for any stack (issue 9 section 5): the network publishes its own document.

An embedding stack built as docs/embedding.md shows, and a stack with two networks, are
synthesized once; their outputs are written as `cdk deploy --outputs-file` would write them
(_deployed_outputs.py gives each Ref/GetAtt a physical id of the right shape), and the real
`smddp-infra job-config` CLI turns them into requests that SageMaker's API model accepts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _deployed_outputs import write_outputs_file
from _jobconfig_helpers import complete_request
from _sagemaker_shape_walker import all_problems
from conftest import cdk_context
from smddp_infra.cli import main


@pytest.fixture(scope="module")
def platform_outputs(tmp_path_factory, doc_example) -> Path:
    template = doc_example["assembly"].get_stack_by_name("PlatformTraining").template
    path = tmp_path_factory.mktemp("platform") / "cdk-outputs.json"
    write_outputs_file(path, {"PlatformTraining": template})
    return path


@pytest.fixture(scope="module")
def two_network_outputs(tmp_path_factory) -> tuple[Path, dict]:
    from aws_cdk import App, Environment, Stack
    from constructs import Construct

    from smddp_infra.constructs.training_network import SmddpTrainingNetwork

    app = App(context=cdk_context())
    stack = Stack(app, "Platform", env=Environment(region="us-east-1"))
    team_b = Construct(stack, "TeamB")
    SmddpTrainingNetwork(stack, "P4d", instance_type="ml.p4d.24xlarge", instance_count=4, read_mbps_per_gpu=50,
                         availability_zone="us-east-1a", vpc_cidr="10.0.0.0/16")
    SmddpTrainingNetwork(team_b, "P5", instance_type="ml.p5.48xlarge", instance_count=16, read_mbps_per_gpu=200,
                         availability_zone_id="use1-az4", vpc_cidr="10.1.0.0/16", max_runtime_seconds=5 * 86400)
    template = app.synth().get_stack_by_name("Platform").template
    path = tmp_path_factory.mktemp("two") / "cdk-outputs.json"
    write_outputs_file(path, {"Platform": template})
    return path, template


def job_config(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["job-config", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_embedded_network_publishes_its_document_under_an_id_from_its_path(platform_outputs):
    outputs = json.loads(platform_outputs.read_text())["PlatformTraining"]
    assert "TrainingTrainingJobConfig" in outputs
    doc = json.loads(outputs["TrainingTrainingJobConfig"])
    assert (doc["network"], doc["instanceType"], doc["subnets"]) == ("Training", "ml.p5.48xlarge",
                                                                     ["subnet-0aa11bb22cc33dd44"])
    assert doc["kmsKeyArn"] == "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"


@pytest.mark.parametrize("fmt", ["v2", "v3", "boto3"])
def test_job_config_reads_the_embedding_stack_with_no_hand_written_outputs(platform_outputs, capsys, fmt):
    code, out, err = job_config(capsys, "--outputs", str(platform_outputs), "--format", fmt)
    assert (code, err) == (0, "")
    rendered = json.loads(out)
    if fmt == "boto3":
        assert all_problems(complete_request(rendered)) == []
        assert rendered["VpcConfig"]["Subnets"] == ["subnet-0aa11bb22cc33dd44"]
        assert len(rendered["VpcConfig"]["SecurityGroupIds"]) == 2  # the EFA group + the platform's
    elif fmt == "v2":
        assert rendered["estimator"]["distribution"] == {"torch_distributed": {"enabled": True}}  # p5: NCCL
    else:
        assert rendered["distributed"] == {"Torchrun": {}}


def test_two_networks_in_one_stack_have_their_own_outputs(two_network_outputs):
    _, template = two_network_outputs
    documents = {k for k in template["Outputs"] if k.endswith("TrainingJobConfig")}
    assert documents == {"P4dTrainingJobConfig", "TeamBP5TrainingJobConfig"}


def test_two_networks_are_listed_and_selectable(two_network_outputs, capsys):
    path, _ = two_network_outputs
    code, out, err = job_config(capsys, "--outputs", str(path), "--format", "boto3")
    assert (code, out) == (2, "")
    assert err.strip() == ("smddp-infra job-config: error: the outputs file holds 2 training networks, pass "
                           "--network NAME; networks: Platform/P4d, Platform/TeamB/P5")
    for name, instance in (("P4d", "ml.p4d.24xlarge"), ("TeamB/P5", "ml.p5.48xlarge"),
                           ("Platform/TeamB/P5", "ml.p5.48xlarge")):
        code, out, err = job_config(capsys, "--outputs", str(path), "--format", "boto3", "--network", name)
        assert (code, err) == (0, ""), err
        request = json.loads(out)
        assert request["ResourceConfig"]["InstanceType"] == instance
        assert all_problems(complete_request(request)) == []


def test_a_second_network_with_the_same_output_id_is_refused():
    from aws_cdk import App, Environment, Stack

    from smddp_infra.constructs.training_network import SmddpTrainingNetwork
    from smddp_infra.errors import ConfigError

    app = App(context=cdk_context())
    stack = Stack(app, "Dup", env=Environment(region="us-east-1"))
    common = dict(instance_type="ml.p4d.24xlarge", instance_count=2, read_mbps_per_gpu=50,
                  availability_zone="us-east-1a", job_config_output_id="Jobs")
    SmddpTrainingNetwork(stack, "A", vpc_cidr="10.0.0.0/16", **common)
    with pytest.raises(ConfigError, match="job_config_output_id 'Jobs' of Dup/B is already used by Dup/A"):
        SmddpTrainingNetwork(stack, "B", vpc_cidr="10.1.0.0/16", **common)


def test_the_max_runtime_prop_reaches_every_format_and_the_default_fills_the_other(two_network_outputs, capsys):
    """One network sets max_runtime_seconds (5 days), the other does not: each format carries
    the network's own value, and 24 h where none was set (never SDK v3's one-hour default)."""
    path, _ = two_network_outputs
    for name, seconds in (("P4d", 86400), ("TeamB/P5", 432000)):
        emitted = {}
        for fmt in ("v2", "v3", "boto3"):
            code, out, err = job_config(capsys, "--outputs", str(path), "--format", fmt, "--network", name)
            assert (code, err) == (0, ""), err
            emitted[fmt] = json.loads(out)
        assert (emitted["v2"]["estimator"]["max_run"], emitted["v3"]["stopping_condition"],
                emitted["boto3"]["StoppingCondition"]) == (
            seconds, {"max_runtime_in_seconds": seconds}, {"MaxRuntimeInSeconds": seconds}), name
    outputs = json.loads(path.read_text())["Platform"]
    p5_doc, p4d_doc = (json.loads(outputs[k]) for k in ("TeamBP5TrainingJobConfig", "P4dTrainingJobConfig"))
    assert p5_doc["maxRuntimeInSeconds"] == 432000
    assert "maxRuntimeInSeconds" not in p4d_doc  # unset: the document (and cdk diff) unchanged


@pytest.mark.parametrize("value, expected", [
    (0, "max_runtime_seconds must be a whole number of seconds from 1 to 2,419,200 (28 days, the CreateTrainingJob "
        "StoppingCondition.MaxRuntimeInSeconds limit), got 0"),
    (28 * 86400 + 1, "got 2419201"),
    ("86400", "max_runtime_seconds must be a whole number of seconds from 1 to 2,419,200"),
])
def test_a_bad_max_runtime_prop_is_one_line_naming_the_prop(value, expected):
    from aws_cdk import App, Environment, Stack

    from smddp_infra.constructs.training_network import SmddpTrainingNetwork
    from smddp_infra.errors import ConfigError

    stack = Stack(App(context=cdk_context()), "Bad", env=Environment(region="us-east-1"))
    with pytest.raises(ConfigError) as caught:
        SmddpTrainingNetwork(stack, "Net", read_mbps_per_gpu=50, availability_zone="us-east-1a",
                             max_runtime_seconds=value)
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)
