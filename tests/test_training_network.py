"""The default training network, asserted resource by resource (one synth per session)."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Match

from conftest import Synthesized

STACK = "TrainingNetworkStack"

#: Logical IDs of stateful resources: a change here REPLACES the resource (data loss).
PINNED_LOGICAL_IDS = {
    "AWS::FSx::FileSystem": "TrainingNetworkLustreFileSystemBFD42804",
    "AWS::EC2::VPC": "TrainingNetworkVpcE9EBCA2D",
    "AWS::EC2::Subnet": "TrainingNetworkVpcTrainingSubnet1Subnet31BC44F6",
}
PINNED_BUCKETS = {"TrainingNetworkCheckpointsBucket3E916CD3", "TrainingNetworkLogs90EA73CB"}


def efa_group_id(t: Synthesized) -> str:
    groups = {k: v for k, v in t.resources("AWS::EC2::SecurityGroup").items()
              if {"Key": "smddp:role", "Value": "training"} in v["Properties"].get("Tags", [])}
    assert len(groups) == 1, groups
    return next(iter(groups))


def test_efa_group_allows_all_traffic_from_itself(default_app: Synthesized) -> None:
    group = efa_group_id(default_app)
    ref = {"Fn::GetAtt": [group, "GroupId"]}
    default_app.template.has_resource_properties(
        "AWS::EC2::SecurityGroupIngress",
        {"GroupId": ref, "SourceSecurityGroupId": ref, "IpProtocol": "-1"},
    )


def test_efa_group_allows_all_traffic_to_itself(default_app: Synthesized) -> None:
    group = efa_group_id(default_app)
    ref = {"Fn::GetAtt": [group, "GroupId"]}
    default_app.template.has_resource_properties(
        "AWS::EC2::SecurityGroupEgress",
        {"GroupId": ref, "DestinationSecurityGroupId": ref, "IpProtocol": "-1"},
    )


def test_efa_group_has_no_open_egress_without_nat(default_app: Synthesized) -> None:
    group = efa_group_id(default_app)
    props = default_app.json["Resources"][group]["Properties"]
    assert all(rule.get("CidrIp") != "0.0.0.0/0" for rule in props.get("SecurityGroupEgress", []))
    for egress in default_app.resources("AWS::EC2::SecurityGroupEgress").values():
        assert egress["Properties"].get("CidrIp") != "0.0.0.0/0"
        if egress["Properties"]["IpProtocol"] != "-1":
            assert (egress["Properties"]["FromPort"], egress["Properties"]["ToPort"]) == (443, 443)


def test_file_system_sits_in_the_training_subnet_with_the_efa_group(default_app: Synthesized) -> None:
    group = efa_group_id(default_app)
    (fs,) = default_app.resources("AWS::FSx::FileSystem").values()
    props = fs["Properties"]
    assert props["SubnetIds"] == [{"Ref": PINNED_LOGICAL_IDS["AWS::EC2::Subnet"]}]
    assert {"Fn::GetAtt": [group, "GroupId"]} in props["SecurityGroupIds"]
    assert props["FileSystemTypeVersion"] == "2.15"
    assert props["LustreConfiguration"]["DataCompressionType"] == "LZ4"
    assert fs["DeletionPolicy"] == "Retain" and fs["UpdateReplacePolicy"] == "Retain"


def test_file_system_is_sized_by_the_calculator_and_records_its_requirement(default_app: Synthesized) -> None:
    from smddp_infra.sizing.lustre_rules import find_tier
    from smddp_infra.sizing.planner import plan_lustre

    context = default_app.app.node
    gpus = 8 * int(context.try_get_context("smddp:instanceCount"))
    required = gpus * float(context.try_get_context("smddp:readMBpsPerGpu"))
    plan = plan_lustre(required, float(context.try_get_context("smddp:datasetGiB")))
    (fs,) = default_app.resources("AWS::FSx::FileSystem").values()
    props = fs["Properties"]
    assert props["StorageCapacity"] == plan.storage_capacity_gib
    assert props["LustreConfiguration"]["DeploymentType"] == plan.deployment_type
    assert props["LustreConfiguration"].get("PerUnitStorageThroughput") == plan.per_unit_storage_throughput
    assert {"Key": "smddp:requiredThroughputMBps", "Value": f"{required:.0f}"} in props["Tags"]
    tier = find_tier(plan.deployment_type, plan.per_unit_storage_throughput)
    assert tier is not None and tier.throughput_mbps(props["StorageCapacity"]) >= required


def test_training_subnet_is_one_private_subnet_in_the_pinned_az(default_app: Synthesized) -> None:
    subnets = default_app.resources("AWS::EC2::Subnet")
    assert list(subnets) == [PINNED_LOGICAL_IDS["AWS::EC2::Subnet"]]
    props = subnets[PINNED_LOGICAL_IDS["AWS::EC2::Subnet"]]["Properties"]
    assert props["AvailabilityZone"] == "us-east-1a"
    assert props["MapPublicIpOnLaunch"] is False
    # Sized for growth, not for today's 4 instances: 1/16 of the /16 VPC (406 instances twice over)
    assert props["CidrBlock"] == "10.0.0.0/20"
    assert not default_app.resources("AWS::EC2::InternetGateway")
    assert not default_app.resources("AWS::EC2::NatGateway")


def test_no_nat_network_has_s3_gateway_and_the_interface_endpoints_a_job_needs(default_app: Synthesized) -> None:
    endpoints = default_app.resources("AWS::EC2::VPCEndpoint").values()
    names = {}
    for endpoint in endpoints:
        name = endpoint["Properties"]["ServiceName"]
        name = name if isinstance(name, str) else json.dumps(name)
        names[name] = endpoint["Properties"]
    gateway = [p for n, p in names.items() if n.endswith(".s3") or "s3" in n and p.get("VpcEndpointType") == "Gateway"]
    assert len(gateway) == 1 and gateway[0]["RouteTableIds"]
    interface = {n.rsplit("us-east-1.", 1)[-1]: p for n, p in names.items() if p.get("VpcEndpointType") == "Interface"}
    assert set(interface) == {"sagemaker.api", "sts", "logs", "monitoring", "ecr.api", "ecr.dkr"}
    for props in interface.values():
        assert props["PrivateDnsEnabled"] is True
        assert props["SubnetIds"] == [{"Ref": PINNED_LOGICAL_IDS["AWS::EC2::Subnet"]}]


def test_endpoint_group_admits_https_from_the_training_subnet_only(default_app: Synthesized) -> None:
    groups = [g for g in default_app.resources("AWS::EC2::SecurityGroup").values()
              if "endpoint" in g["Properties"]["GroupDescription"].lower()]
    assert len(groups) == 1
    ingress = groups[0]["Properties"]["SecurityGroupIngress"]
    assert len(ingress) == 1
    assert (ingress[0]["FromPort"], ingress[0]["ToPort"], ingress[0]["IpProtocol"]) == (443, 443, "tcp")
    subnet_cidr = default_app.json["Resources"][PINNED_LOGICAL_IDS["AWS::EC2::Subnet"]]["Properties"]["CidrBlock"]
    assert ingress[0]["CidrIp"] == subnet_cidr


def test_vpc_flow_logs_are_on(default_app: Synthesized) -> None:
    default_app.template.has_resource_properties(
        "AWS::EC2::FlowLog",
        {"ResourceId": {"Ref": PINNED_LOGICAL_IDS["AWS::EC2::VPC"]}, "ResourceType": "VPC", "TrafficType": "ALL"},
    )


def test_checkpoint_bucket_is_versioned_encrypted_private_logged_and_retained(default_app: Synthesized) -> None:
    bucket = default_app.json["Resources"]["TrainingNetworkCheckpointsBucket3E916CD3"]
    props = bucket["Properties"]
    assert bucket["DeletionPolicy"] == "Retain"
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True,
    }
    sse = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert sse == {"SSEAlgorithm": "AES256"}
    assert props["LoggingConfiguration"]["DestinationBucketName"] == {"Ref": "TrainingNetworkLogs90EA73CB"}
    (rule,) = props["LifecycleConfiguration"]["Rules"]
    assert rule["NoncurrentVersionExpiration"] == {"NoncurrentDays": 30}
    assert rule["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 7}


@pytest.mark.parametrize("bucket", sorted(PINNED_BUCKETS))
def test_every_bucket_denies_requests_without_tls(default_app: Synthesized, bucket: str) -> None:
    default_app.template.has_resource_properties(
        "AWS::S3::BucketPolicy",
        {
            "Bucket": {"Ref": bucket},
            "PolicyDocument": {"Statement": Match.array_with([Match.object_like({
                "Effect": "Deny", "Action": "s3:*",
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            })])},
        },
    )


def test_role_trusts_only_sagemaker_for_this_account_and_has_no_managed_policies(default_app: Synthesized) -> None:
    (role,) = default_app.resources("AWS::IAM::Role").values()
    (statement,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "sagemaker.amazonaws.com"}
    assert statement["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}
    assert "ManagedPolicyArns" not in role["Properties"]  # no AWS managed policies
    (policy,) = [p for p in default_app.resources("AWS::IAM::ManagedPolicy").values() if "Roles" in p["Properties"]]
    assert policy["Properties"]["Roles"] == [{"Ref": next(iter(default_app.resources("AWS::IAM::Role")))}]


def test_role_policy_has_exactly_the_vpc_training_permissions(default_app: Synthesized) -> None:
    assert not default_app.resources("AWS::IAM::Policy"), "no inline policies"
    # the execution role's policy (the other managed policy is the launch guardrail, attached to nobody)
    (policy,) = [p for p in default_app.resources("AWS::IAM::ManagedPolicy").values() if "Roles" in p["Properties"]]
    statements = {s["Sid"]: s for s in policy["Properties"]["PolicyDocument"]["Statement"]}
    actions = {a for s in statements.values() for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
    assert actions == {
        "ec2:CreateNetworkInterface", "ec2:CreateNetworkInterfacePermission", "ec2:DeleteNetworkInterface",
        "ec2:DeleteNetworkInterfacePermission", "ec2:DescribeNetworkInterfaces", "ec2:DescribeVpcs",
        "ec2:DescribeDhcpOptions", "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups",
        "fsx:DescribeFileSystems", "cloudwatch:PutMetricData",
        "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams",
        "ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage",
        "s3:ListBucket", "s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload",
    }
    # the job bucket: checkpoints read/write, model artifacts write-only, uploaded code read-only
    def object_prefix(sid: str) -> str:
        return json.dumps(statements[sid]["Resource"]).split('"/', 1)[1].split('"', 1)[0]
    assert object_prefix("CheckpointReadWrite") == "checkpoints/*"
    assert (object_prefix("ModelOutputWrite"), statements["ModelOutputWrite"]["Action"]) == (
        "output/*", ["s3:AbortMultipartUpload", "s3:PutObject"])
    assert (object_prefix("TrainingCodeRead"), statements["TrainingCodeRead"]["Action"]) == ("code/*", "s3:GetObject")
    # SDK v3 stages code under <output>/<code>/ for callers that can simulate: read, never written
    assert (object_prefix("StagedCodeRead"), statements["StagedCodeRead"]["Action"]) == ("output/code/*", "s3:GetObject")
    assert (object_prefix("StagedCodeNoWrite"), statements["StagedCodeNoWrite"]["Effect"]) == ("output/code/*", "Deny")
    star = [sid for sid, s in statements.items() if s["Resource"] == "*"]
    # the SDK v3 smoke-test actions are granted as it simulates them (tests/test_sagemaker_sdk_v3.py)
    assert sorted(star) == ["DescribeFileSystem", "DescribeNetwork", "EcrAuth", "JobNetworkInterfaces", "TrainingMetrics"]
    assert not [sid for sid, s in statements.items() if s["Resource"] == "*" and "Condition" in s]
    assert [sid for sid, s in statements.items() if s["Effect"] != "Allow"] == ["StagedCodeNoWrite"]


def test_stack_outputs_the_job_config_and_stores_it_in_ssm(default_app: Synthesized) -> None:
    outputs = default_app.json["Outputs"]
    for key in ("TrainingSubnetIds", "SecurityGroupIds", "RoleArn", "CheckpointS3Uri", "FileSystemId",
                "FileSystemMountName", "FileSystemDirectoryPath", "TrainingJobConfig"):
        assert key in outputs, key
    (parameter,) = default_app.resources("AWS::SSM::Parameter").values()
    assert parameter["Properties"]["Value"] == outputs["TrainingJobConfig"]["Value"]
    uri = json.dumps(outputs["CheckpointS3Uri"]["Value"])
    assert uri.endswith('/checkpoints/"]]}')


def test_stateful_resources_keep_their_logical_ids(default_app: Synthesized) -> None:
    for type_name, logical_id in PINNED_LOGICAL_IDS.items():
        assert logical_id in default_app.resources(type_name), (type_name, logical_id)
    assert set(default_app.resources("AWS::S3::Bucket")) == PINNED_BUCKETS
    for logical_id in PINNED_BUCKETS | {PINNED_LOGICAL_IDS["AWS::FSx::FileSystem"]}:
        assert default_app.json["Resources"][logical_id]["DeletionPolicy"] == "Retain"
