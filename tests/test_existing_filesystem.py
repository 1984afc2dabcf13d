"""``file_system=``: an existing FSx for Lustre file system (issue 27 item 4).

No file system is created; the job document, `job-config` over the deployed outputs, the launch
policy and the job's groups name the given one; alarms follow a baseline the user states (or are
off, said once); a file system in another AZ than the training subnet is refused. One App with
two networks, synthesized once for the module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _deployed_outputs import write_outputs_file
from conftest import cdk_context
from smddp_infra.cli import main

FS_ID = "fs-0123456789abcdef0"
FS_GROUP = "sg-0aaaaaaaaaaaaaaaa"


def _existing(stack: Any, **overrides: Any) -> Any:
    from aws_cdk import aws_ec2 as ec2

    from smddp_infra import ExistingFileSystem

    props: dict[str, Any] = dict(
        file_system_id=FS_ID, dns_name=f"{FS_ID}.fsx.us-east-1.amazonaws.com", mount_name="abcdefgh",
        security_group=ec2.SecurityGroup.from_security_group_id(stack, "SharedFsGroup", FS_GROUP, mutable=False),
        availability_zone="us-east-1a")
    props.update(overrides)
    return ExistingFileSystem(**props)


def _network(stack: Any, **props: Any) -> Any:
    from smddp_infra import SmddpTrainingNetwork

    network = SmddpTrainingNetwork(stack, "Net", availability_zone="us-east-1a", instance_count=2,
                                   job_config_output_id="TrainingJobConfig", **props)
    network.launch_policy()
    return network


@pytest.fixture(scope="module")
def synthesized() -> dict[str, Any]:
    from aws_cdk import App, Environment, Stack

    app = App(context=cdk_context())
    env = Environment(region="us-east-1")
    stacks = {name: Stack(app, name, env=env) for name in ("Baseline", "NoBaseline")}
    _network(stacks["Baseline"], file_system=_existing(stacks["Baseline"], deployment_type="PERSISTENT_2",
                                                        storage_capacity_gib=4800, baseline_throughput_mbps=6000))
    _network(stacks["NoBaseline"], file_system=_existing(stacks["NoBaseline"], directory_path="/abcdefgh/datasets"))
    assembly = app.synth()
    return {name: assembly.get_stack_artifact(stack.artifact_id) for name, stack in stacks.items()}


def _of_type(template: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for r in template["Resources"].values() if r["Type"] == kind]


@pytest.mark.parametrize("name", ["Baseline", "NoBaseline"])
def test_no_file_system_is_created(synthesized: dict[str, Any], name: str) -> None:
    template = synthesized[name].template
    assert _of_type(template, "AWS::FSx::FileSystem") == [] and _of_type(template, "AWS::FSx::DataRepositoryAssociation") == []


def test_the_file_systems_group_is_carried_and_left_alone(synthesized: dict[str, Any]) -> None:
    template = synthesized["Baseline"].template
    assert FS_GROUP in json.dumps(template["Outputs"]["TrainingJobConfig"])
    rules = _of_type(template, "AWS::EC2::SecurityGroupIngress") + _of_type(template, "AWS::EC2::SecurityGroupEgress")
    assert not [r for r in rules if r["Properties"].get("GroupId") == FS_GROUP]


def test_the_launch_policy_binds_jobs_to_that_file_system(synthesized: dict[str, Any]) -> None:
    (launch,) = [p for p in _of_type(synthesized["Baseline"].template, "AWS::IAM::ManagedPolicy")
                 if "sagemaker:CreateTrainingJob" in json.dumps(p)]
    assert FS_ID in json.dumps(launch)


def test_alarms_follow_the_stated_baseline(synthesized: dict[str, Any]) -> None:
    alarms = _of_type(synthesized["Baseline"].template, "AWS::CloudWatch::Alarm")
    assert alarms and all(FS_ID in json.dumps(a) for a in alarms)


def test_without_a_baseline_monitoring_is_off_and_said_once(synthesized: dict[str, Any]) -> None:
    artifact = synthesized["NoBaseline"]
    assert _of_type(artifact.template, "AWS::CloudWatch::Alarm") == []
    notes = [m for m in artifact.messages if "monitoring is off for the existing file system" in str(m.entry.data)]
    assert len(notes) == 1


def test_job_config_from_the_deployed_outputs_names_the_existing_file_system(
        synthesized: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cdk-outputs.json"
    write_outputs_file(path, {"NoBaseline": synthesized["NoBaseline"].template})
    assert main(["job-config", "--outputs", str(path), "--format", "boto3"]) == 0
    request = json.loads(capsys.readouterr().out)
    (channel,) = [c for c in request["InputDataConfig"] if "FileSystemDataSource" in c["DataSource"]]
    assert channel["DataSource"]["FileSystemDataSource"]["FileSystemId"] == FS_ID
    assert channel["DataSource"]["FileSystemDataSource"]["DirectoryPath"] == "/abcdefgh/datasets"
    assert FS_GROUP in request["VpcConfig"]["SecurityGroupIds"]


def _refusal(**overrides: Any) -> str:
    from aws_cdk import App, Environment, Stack

    from smddp_infra.errors import ConfigError

    stack = Stack(App(context=cdk_context()), "Bad", env=Environment(region="us-east-1"))
    extra = overrides.pop("extra", {})
    with pytest.raises(ConfigError) as caught:
        _network(stack, file_system=_existing(stack, **overrides), **extra)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_a_file_system_in_another_az_is_refused() -> None:
    message = _refusal(availability_zone="us-east-1b")
    assert message.startswith("file_system.availability_zone 'us-east-1b' is not the training subnet's 'us-east-1a'")


def test_props_that_size_a_created_file_system_are_refused() -> None:
    assert _refusal(extra={"efa_file_system": True}).startswith("file_system= was given with efa_file_system")


def test_a_directory_outside_the_mount_is_refused() -> None:
    assert "file_system.directory_path must be /abcdefgh" in _refusal(directory_path="/elsewhere")


def test_a_hyperpod_cluster_mounts_the_existing_file_system() -> None:
    from aws_cdk import App, Environment, Stack, assertions

    from _hyperpod_apps import slurm_groups
    from smddp_infra import HyperPodCluster

    stack = Stack(App(context=cdk_context()), "Hp", env=Environment(region="us-east-1"))
    network = _network(stack, file_system=_existing(stack))
    HyperPodCluster(stack, "HyperPod", network=network, instance_groups=slurm_groups(), lifecycle_script="on_init_complete.sh")
    text = json.dumps(assertions.Template.from_stack(stack).to_json())
    assert f"{FS_ID}.fsx.us-east-1.amazonaws.com" in text and '"MountName": "abcdefgh"' in text
