"""A documented double of deploying the cluster: CreateCluster from the synthesized properties,
read back with DescribeCluster, on moto's local endpoint (127.0.0.1, AWS_ENDPOINT_URL).

Why a double: moto 5.2.5's CloudFormation has no handler for ``AWS::SageMaker::Cluster`` (it
skips unknown types and still reports CREATE_COMPLETE), so ``make deploy-local`` cannot create
the cluster. Instead this module creates what the cluster refers to through the real APIs
(VPC, subnet, security group, FSx for Lustre, IAM role, bucket), resolves the template's
``Ref``/``Fn::GetAtt`` to those physical ids, sends the CreateCluster request the resource
stands for (:func:`smddp_infra.hyperpod.request.create_cluster_request`) and reads it back.

moto's model of CreateCluster predates Bootstrap mode: it requires ``LifeCycleConfig`` on every
group with a ``SourceS3Uri`` starting with ``s3://sagemaker-`` and ``ThreadsPerCore`` on every
group, and it keeps no orchestrator or node recovery. So the cluster deployed here is the Slurm stack with its lifecycle script in a
``sagemaker-*`` bucket (a configuration users can write, ``lifecycle_bucket=``) and threads per
core stated on each group, and
``test_moto_still_refuses_bootstrap_mode`` pins the gap for the default app's cluster (no
lifecycle script): when a moto upgrade accepts it, that test fails and the default app can be
deployed here too.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Iterator

import pytest

from conftest import cdk_context

pytestmark = pytest.mark.slow

LIFECYCLE_BUCKET = "sagemaker-hyperpod-lifecycle-123456789012"
REGION = "us-east-1"


@pytest.fixture(scope="module")
def templates() -> dict[str, dict[str, Any]]:
    from aws_cdk import App, Environment, Stack, aws_s3 as s3

    from _hyperpod_apps import slurm_groups
    from smddp_infra import HyperPodCluster, SmddpTrainingNetwork
    from smddp_infra.app_builder import build_app

    app = App(context=cdk_context(**{"smddp:hyperpod": "true"}))
    default = build_app(app)
    stack = Stack(app, "HyperPodMoto", env=Environment(region=REGION))
    network = SmddpTrainingNetwork(stack, "Network", instance_type="ml.p5.48xlarge", instance_count=6,
                                   availability_zone="us-east-1a", read_mbps_per_gpu=100)
    # moto reads ThreadsPerCore of every group (the API does not require it): state it on each.
    groups = [dataclasses.replace(g, threads_per_core=g.threads_per_core or 2) for g in slurm_groups()]
    HyperPodCluster(stack, "HyperPod", network=network, instance_groups=groups, lifecycle_script="on_init_complete.sh",
                    lifecycle_bucket=s3.Bucket.from_bucket_name(stack, "LifecycleBucket", LIFECYCLE_BUCKET))
    assembly = app.synth()
    return {name: assembly.get_stack_artifact(s.artifact_id).template for name, s in
            (("default", default), ("slurm", stack))}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    from _moto_server import moto_server

    with moto_server() as url:
        yield url


@pytest.fixture
def aws(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """boto3 clients for the local endpoint, reached through the standard AWS_ENDPOINT_URL."""
    import boto3

    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    from botocore.config import Config

    session = boto3.session.Session(region_name=REGION)
    return lambda service: session.client(service, config=Config(retries={"max_attempts": 1, "mode": "standard"}))


def _deploy_references(aws: Any, template: dict[str, Any], cluster: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Create what the cluster refers to through the service APIs: logical id -> {Ref, attributes}."""
    resources = template["Resources"]
    props = cluster["Properties"]
    subnet_id = props["VpcConfig"]["Subnets"][0]["Ref"]
    group_id = props["VpcConfig"]["SecurityGroupIds"][0]["Fn::GetAtt"][0]
    role_id = props["InstanceGroups"][0]["ExecutionRole"]["Fn::GetAtt"][0]
    fsx_id = props["InstanceGroups"][0]["InstanceStorageConfigs"][0]["FsxLustreConfig"]["MountName"]["Fn::GetAtt"][0]

    ec2 = aws("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=resources[subnet_id]["Properties"]["CidrBlock"],
                               AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="efa", Description=resources[group_id]["Properties"]["GroupDescription"],
                                      VpcId=vpc)["GroupId"]
    file_system = aws("fsx").create_file_system(
        FileSystemType="LUSTRE", StorageCapacity=1200, SubnetIds=[subnet], SecurityGroupIds=[group],
        LustreConfiguration={"DeploymentType": "SCRATCH_2"})["FileSystem"]
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
    role = aws("iam").create_role(RoleName="hyperpod-instances", AssumeRolePolicyDocument=trust)["Role"]
    return {
        subnet_id: {"Ref": subnet},
        group_id: {"Ref": group, "GroupId": group},
        role_id: {"Ref": role["RoleName"], "Arn": role["Arn"]},
        # moto's FSx keeps no Lustre mount name: the one stand-in here (pinned below)
        fsx_id: {"Ref": file_system["FileSystemId"], "DNSName": file_system["DNSName"],
                 "LustreMountName": file_system.get("LustreConfiguration", {}).get("MountName") or "abcdefgh"},
    }


def _resolver(physical: dict[str, dict[str, str]]) -> Any:
    pseudo = {"AWS::Region": REGION, "AWS::AccountId": "123456789012", "AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com"}

    def resolve(intrinsic: dict[str, Any]) -> Any:
        if "Ref" in intrinsic:
            return pseudo.get(intrinsic["Ref"]) or physical[intrinsic["Ref"]]["Ref"]
        name, attribute = intrinsic["Fn::GetAtt"]
        return physical[name][attribute]

    return resolve


def _cluster(template: dict[str, Any]) -> dict[str, Any]:
    [cluster] = [r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"]
    return dict(cluster)


def test_create_cluster_from_the_template_reads_back_with_subnet_group_and_fsx_mount(aws: Any, templates: Any) -> None:
    from smddp_infra.hyperpod.request import create_cluster_request

    template = templates["slurm"]
    cluster = _cluster(template)
    physical = _deploy_references(aws, template, cluster)
    request = create_cluster_request(cluster["Properties"], _resolver(physical))
    sagemaker = aws("sagemaker")
    arn = sagemaker.create_cluster(**request)["ClusterArn"]
    described = sagemaker.describe_cluster(ClusterName=request["ClusterName"])

    assert described["ClusterArn"] == arn and described["ClusterStatus"] == "InService"
    [subnet] = [v["Ref"] for k, v in physical.items() if v["Ref"].startswith("subnet-")]
    [group] = [v["Ref"] for k, v in physical.items() if v["Ref"].startswith("sg-")]
    [fsx] = [v for v in physical.values() if v["Ref"].startswith("fs-")]
    [role] = [v["Arn"] for v in physical.values() if "Arn" in v]
    assert described["VpcConfig"] == {"SecurityGroupIds": [group], "Subnets": [subnet]}
    groups = {g["InstanceGroupName"]: g for g in described["InstanceGroups"]}
    assert list(groups) == ["controller", "login", "train", "reserved"]
    assert {n: g["CurrentCount"] for n, g in groups.items()} == {"controller": 1, "login": 1, "train": 4, "reserved": 2}
    for group_ in groups.values():
        assert group_["ExecutionRole"] == role
        mounts = [c["FsxLustreConfig"] for c in group_["InstanceStorageConfigs"] if "FsxLustreConfig" in c]
        assert mounts == [{"DnsName": fsx["DNSName"], "MountName": fsx["LustreMountName"], "MountPath": "/fsx"}]
        assert group_["LifeCycleConfig"] == {"SourceS3Uri": f"s3://{LIFECYCLE_BUCKET}/hyperpod-lifecycle/",
                                             "OnInitComplete": "on_init_complete.sh"}
    assert groups["reserved"]["TrainingPlanArn"].endswith(":training-plan/hyperpod-p5-two-nodes")


def test_moto_still_refuses_bootstrap_mode(aws: Any, templates: Any) -> None:
    """The default app's cluster has no LifeCycleConfig (HyperPod's Bootstrap mode, which the
    CloudFormation schema documents); moto 5.2.5 requires one. When this fails, moto learned it."""
    from botocore.exceptions import ClientError

    from smddp_infra.hyperpod.api import validate_create_cluster
    from smddp_infra.hyperpod.request import create_cluster_request, placeholder_resolver

    template = templates["default"]
    request = create_cluster_request(_cluster(template)["Properties"], placeholder_resolver(template))
    assert all("LifeCycleConfig" not in g for g in request["InstanceGroups"])
    assert validate_create_cluster(request) == ""  # botocore's model accepts it
    with pytest.raises(ClientError):
        aws("sagemaker").create_cluster(**request)


def test_moto_fsx_still_has_no_lustre_mount_name(aws: Any) -> None:
    """The one stand-in above: when moto's FSx returns a MountName, read it instead."""
    ec2 = aws("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.0.0/24")["Subnet"]["SubnetId"]
    file_system = aws("fsx").create_file_system(FileSystemType="LUSTRE", StorageCapacity=1200, SubnetIds=[subnet],
                                                LustreConfiguration={"DeploymentType": "SCRATCH_2"})["FileSystem"]
    assert "MountName" not in file_system.get("LustreConfiguration", {})
