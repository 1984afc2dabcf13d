"""grant_launch to a principal in another stack writes the attachment in the GRANTEE's stack.

A managed policy that lists a role of another stack makes the policy's stack depend on the
role's; when the role's stack also uses the network (its subnet, say), the two stacks depend on
each other and synth stops with a DependencyCycle. aws-cdk-lib's grants avoid that by writing in
the grantee's stack (``iam.Grant.addToPrincipal``): here the role lists the policy's ARN among
its ``ManagedPolicyArns``, so only the role's stack depends on the network's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from conftest import ROOT, cdk_context
from smddp_infra.contract import FileSystemRef, JobDocument

pytestmark = pytest.mark.slow

#: How a template reads another stack's value: an export, or (cdk.json's
#: ``@aws-cdk/core:defaultCrossStackReferences: weak``) the other stack's output.
CROSS_STACK = ("Fn::ImportValue", "Fn::GetStackOutput")

APP = textwrap.dedent('''
    from aws_cdk import App, CfnOutput, Environment, Stack, aws_iam as iam

    from smddp_infra import TrainingNetwork
    from smddp_infra.schema import Placement, Workload

    app = App()
    env = Environment(region="us-east-1")  # no account: nothing to look up, no credentials needed
    network = TrainingNetwork(Stack(app, "NetworkStack", env=env), "Net", workload=Workload(read_mbps_per_gpu=50),
                              placement=Placement(availability_zone="us-east-1a"))
    team = Stack(app, "TeamStack", env=env)
    network.grant_launch(iam.Role(team, "Launcher", assumed_by=iam.AccountRootPrincipal()))
    CfnOutput(team, "TrainingSubnet", value=network.training_subnet.subnet_id)  # the team's stack uses the network
    network.grant_launch(iam.Role(network, "Local", assumed_by=iam.AccountRootPrincipal()))
    app.synth()
''')


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The two-stack app under the real cdk CLI: its templates and manifest."""
    work = tmp_path_factory.mktemp("grant")
    (work / "app.py").write_text(APP)
    (work / "cdk.json").write_text(json.dumps({"app": f"{sys.executable} app.py", "context": cdk_context()}))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "CDK_DISABLE_CLI_TELEMETRY": "true"}
    done = subprocess.run([str(ROOT / "node_modules" / ".bin" / "cdk"), "synth", "--no-notices", "--quiet",
                           "--output", str(work / "cdk.out")], cwd=work, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    out = work / "cdk.out"
    return {"stderr": done.stderr, "manifest": json.loads((out / "manifest.json").read_text()),
            **{name: json.loads((out / f"{name}.template.json").read_text()) for name in ("NetworkStack", "TeamStack")}}


def _of_type(template: dict[str, Any], kind: str) -> dict[str, Any]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == kind}


def test_a_role_in_a_stack_that_uses_the_network_synthesizes_without_a_cycle(assembly: dict[str, Any]) -> None:
    assert "DependencyCycle" not in assembly["stderr"]
    artifacts = assembly["manifest"]["artifacts"]
    assert "NetworkStack" in artifacts["TeamStack"]["dependencies"]
    assert "TeamStack" not in artifacts["NetworkStack"].get("dependencies", [])


def test_the_policy_stays_in_the_network_stack_and_the_team_role_attaches_it(assembly: dict[str, Any]) -> None:
    (policy,) = (r for k, r in _of_type(assembly["NetworkStack"], "AWS::IAM::ManagedPolicy").items()
                 if "LaunchPolicy" in k)
    assert not _of_type(assembly["TeamStack"], "AWS::IAM::ManagedPolicy")
    (launcher,) = _of_type(assembly["TeamStack"], "AWS::IAM::Role").values()
    (arn,) = launcher["Properties"]["ManagedPolicyArns"]
    assert list(arn)[0] in CROSS_STACK and "NetworkStack" in json.dumps(arn) and "LaunchPolicy" in json.dumps(arn)
    assert "TeamStack" not in json.dumps(policy)


def test_a_role_in_the_network_stack_is_attached_by_the_policy_as_before(assembly: dict[str, Any]) -> None:
    (policy,) = (r for k, r in _of_type(assembly["NetworkStack"], "AWS::IAM::ManagedPolicy").items() if "LaunchPolicy" in k)
    (local_id,) = (k for k in _of_type(assembly["NetworkStack"], "AWS::IAM::Role") if k.startswith("NetLocal"))
    assert policy["Properties"]["Roles"] == [{"Ref": local_id}]
    assert "ManagedPolicyArns" not in assembly["NetworkStack"]["Resources"][local_id]["Properties"]


def test_a_network_imported_by_its_document_grants_a_role_of_another_stack_from_that_stack() -> None:
    """The same for ImportedTrainingNetwork: its policy lives in the importing stack, and a role in a
    stack that reads that stack is attached from the role's side."""
    from aws_cdk import App, CfnOutput, Environment, Stack, aws_iam as iam, aws_sns as sns

    from smddp_infra import TrainingNetwork

    document = JobDocument(subnets=("subnet-0aa11bb22cc33dd44",), security_group_ids=("sg-0123456789abcdef0",),
                           role_arn="arn:aws:iam::111122223333:role/r", checkpoint_s3_uri="s3://acme-jobs/checkpoints/",
                           file_system=FileSystemRef("fs-0123456789abcdef0", "abcdefgh", "/abcdefgh"),
                           instance_type="ml.p5.48xlarge", instance_count=2, region="us-east-1",
                           availability_zone="us-east-1a")
    key = "ssm:account=111122223333:parameterName=/ml/net:region=us-east-1"
    app = App(context={**cdk_context(), key: json.dumps(document.to_json())})
    env = Environment(account="111122223333", region="us-east-1")
    platform = Stack(app, "Platform", env=env)
    network = TrainingNetwork.from_job_document(platform, "Net", parameter_name="/ml/net")
    topic = sns.Topic(platform, "Alarms")
    team = Stack(app, "Team", env=env)
    CfnOutput(team, "Alarms", value=topic.topic_arn)  # the team's stack reads the platform's
    network.grant_launch(iam.Role(team, "Launcher", assumed_by=iam.AccountRootPrincipal()))
    assembly = app.synth()
    (launcher,) = _of_type(assembly.get_stack_by_name("Team").template, "AWS::IAM::Role").values()
    (arn,) = launcher["Properties"]["ManagedPolicyArns"]
    assert list(arn)[0] in CROSS_STACK and "Platform" in json.dumps(arn) and "LaunchPolicy" in json.dumps(arn)
    (policy,) = _of_type(assembly.get_stack_by_name("Platform").template, "AWS::IAM::ManagedPolicy").values()
    assert "Roles" not in policy["Properties"]

