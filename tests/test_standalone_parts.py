"""Each part of the network used alone, in a small stack of its own (issue 9, section 9).

A platform team may take only the EFA group, or only the file system. Each part below is the
only construct of its stack (beside imported attributes), the five stacks live in ONE App
synthesized once with the rule packs on, and each template is checked for what the part
promises on its own. Then each part's props are validated like the L3's: one line naming
the prop, before any jsii call.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from conftest import cdk_context

ENV = {"account": "111122223333", "region": "us-east-1"}
GROUP = "sg-0123456789abcdef0"
SUBNET = "subnet-0aa11bb22cc33dd44"


def _imports(stack: Any) -> dict[str, Any]:
    from aws_cdk import aws_ec2 as ec2, aws_s3 as s3

    return {
        "vpc": ec2.Vpc.from_vpc_attributes(stack, "Vpc", vpc_id="vpc-0a1b2c3d4e5f67890", availability_zones=["us-east-1a"],
                                           private_subnet_ids=[SUBNET], private_subnet_route_table_ids=["rtb-0aa11bb22cc33dd44"]),
        "subnet": ec2.Subnet.from_subnet_attributes(stack, "Subnet", subnet_id=SUBNET, availability_zone="us-east-1a",
                                                    route_table_id="rtb-0aa11bb22cc33dd44"),
        "group": ec2.SecurityGroup.from_security_group_id(stack, "Group", GROUP, allow_all_outbound=False),
        "bucket": s3.Bucket.from_bucket_name(stack, "Bucket", "acme-ml-checkpoints"),
    }


def _plan() -> Any:
    from smddp_infra.sizing import plan_lustre

    return plan_lustre(1600, 2000)


BUILDERS: dict[str, Callable[[Any, dict[str, Any]], Any]] = {}


def part(name: str):
    def register(fn):
        BUILDERS[name] = fn
        return fn
    return register


@part("Vpc")
def _vpc(stack, _):
    from smddp_infra.constructs.network import TrainingVpc

    return TrainingVpc(stack, "Training", availability_zone="us-east-1a", max_instance_count=8)


@part("Efa")
def _efa(stack, imports):
    from smddp_infra.constructs.efa import EfaSecurityGroup

    return EfaSecurityGroup(stack, "Efa", vpc=imports["vpc"], s3_prefix_list_id="pl-63a5400a")


@part("FileSystem")
def _file_system(stack, imports):
    from smddp_infra.constructs.filesystem import LustreFileSystem

    return LustreFileSystem(stack, "Lustre", plan=_plan(), vpc=imports["vpc"], subnet=imports["subnet"],
                            security_group=imports["group"])


@part("Checkpoints")
def _checkpoints(stack, _):
    from smddp_infra.constructs.checkpoints import CheckpointBucket

    return CheckpointBucket(stack, "Checkpoints")


@part("Role")
def _role(stack, imports):
    from smddp_infra.constructs.role import TrainingExecutionRole

    return TrainingExecutionRole(stack, "ExecutionRole", training_subnet=imports["subnet"], security_groups=[imports["group"]],
                                 checkpoint_bucket=imports["bucket"], checkpoint_prefix="checkpoints", file_system_id="fs-0123456789abcdef0")


@pytest.fixture(scope="module")
def templates() -> dict[str, dict[str, Any]]:
    from aws_cdk import App, Environment, Stack, Validations
    from cdk_nag import AwsSolutionsChecks

    from smddp_infra.checks import SmddpChecks

    app = App(context=cdk_context())
    stacks = {}
    for name, build in BUILDERS.items():
        stack = Stack(app, f"Only{name}", env=Environment(**ENV))
        build(stack, _imports(stack))
        stacks[name] = stack
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), SmddpChecks(app))
    assembly = app.synth()  # a rule-pack finding in any part fails here
    return {name: assembly.get_stack_by_name(stack.stack_name).template for name, stack in stacks.items()}


def _of_type(template: dict, type_name: str) -> dict[str, dict]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == type_name}


def _types(template: dict) -> set[str]:
    return {v["Type"] for v in template["Resources"].values()}


def test_training_vpc_alone_has_one_subnet_endpoints_and_its_own_flow_log_bucket(templates):
    t = templates["Vpc"]
    (subnet,) = _of_type(t, "AWS::EC2::Subnet").values()
    assert subnet["Properties"]["AvailabilityZone"] == "us-east-1a"
    (flow_log,) = _of_type(t, "AWS::EC2::FlowLog").values()
    assert flow_log["Properties"]["TrafficType"] == "ALL" and flow_log["Properties"]["LogDestinationType"] == "s3"
    (bucket_id, bucket), = _of_type(t, "AWS::S3::Bucket").items()
    assert bucket["Properties"]["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    (policy,) = _of_type(t, "AWS::S3::BucketPolicy").values()
    principals = {json_principal(s) for s in policy["Properties"]["PolicyDocument"]["Statement"]}
    assert "delivery.logs.amazonaws.com" in principals and policy["Properties"]["Bucket"] == {"Ref": bucket_id}
    assert len(_of_type(t, "AWS::EC2::VPCEndpoint")) == 7  # S3 gateway + 6 interface endpoints


def json_principal(statement: dict) -> str:
    principal = statement.get("Principal")
    return principal.get("Service", "") if isinstance(principal, dict) else str(principal)


def test_efa_group_alone_has_both_self_rules_and_https_to_s3_only(templates):
    t = templates["Efa"]
    (group_id, group), = _of_type(t, "AWS::EC2::SecurityGroup").items()
    ref = {"Fn::GetAtt": [group_id, "GroupId"]}
    assert {"Key": "smddp:role", "Value": "training"} in group["Properties"]["Tags"]
    (ingress,) = _of_type(t, "AWS::EC2::SecurityGroupIngress").values()
    assert ingress["Properties"]["SourceSecurityGroupId"] == ref and ingress["Properties"]["IpProtocol"] == "-1"
    egress = [e["Properties"] for e in _of_type(t, "AWS::EC2::SecurityGroupEgress").values()]
    egress += group["Properties"].get("SecurityGroupEgress", [])
    assert any(e.get("DestinationSecurityGroupId") == ref and e["IpProtocol"] == "-1" for e in egress)
    https = [e for e in egress if e["IpProtocol"] == "tcp"]
    assert [(e.get("DestinationPrefixListId"), e["FromPort"], e["ToPort"]) for e in https] == [("pl-63a5400a", 443, 443)]
    assert not [e for e in egress if e.get("CidrIp") == "0.0.0.0/0"]


def test_file_system_alone_is_the_plan_in_the_given_subnet_and_group(templates):
    t = templates["FileSystem"]
    # + its monitoring (issue 20): two alarms, a dashboard, an encrypted topic and its key
    monitoring = {"AWS::CloudWatch::Alarm", "AWS::CloudWatch::Dashboard", "AWS::SNS::Topic", "AWS::SNS::TopicPolicy",
                  "AWS::KMS::Key"}
    assert _types(t) == {"AWS::FSx::FileSystem", "AWS::EC2::SecurityGroupIngress", *monitoring}
    (lustre_ports,) = _of_type(t, "AWS::EC2::SecurityGroupIngress").values()  # aws-cdk-lib's L2 adds it
    assert {k: lustre_ports["Properties"][k] for k in ("GroupId", "SourceSecurityGroupId", "FromPort", "ToPort")} == {
        "GroupId": GROUP, "SourceSecurityGroupId": GROUP, "FromPort": 988, "ToPort": 1023}
    (fs,) = _of_type(t, "AWS::FSx::FileSystem").values()
    plan = _plan()
    props = fs["Properties"]
    assert props["SubnetIds"] == [SUBNET] and props["SecurityGroupIds"] == [GROUP]
    assert props["StorageCapacity"] == plan.storage_capacity_gib
    assert props["LustreConfiguration"]["DeploymentType"] == plan.deployment_type
    assert {"Key": "smddp:requiredThroughputMBps", "Value": "1600"} in props["Tags"]


def test_checkpoint_bucket_alone_logs_to_its_own_bucket_by_policy(templates):
    t = templates["Checkpoints"]
    buckets = _of_type(t, "AWS::S3::Bucket")
    assert len(buckets) == 2
    (source_id,) = [k for k, v in buckets.items() if "LoggingConfiguration" in v["Properties"]]
    logging = buckets[source_id]["Properties"]["LoggingConfiguration"]
    assert logging["LogFilePrefix"] == "checkpoint-bucket/"
    log_bucket = logging["DestinationBucketName"]["Ref"]
    grants = [s for p in _of_type(t, "AWS::S3::BucketPolicy").values() if p["Properties"]["Bucket"] == {"Ref": log_bucket}
              for s in p["Properties"]["PolicyDocument"]["Statement"] if json_principal(s) == "logging.s3.amazonaws.com"]
    assert len(grants) == 1 and grants[0]["Condition"]["ArnLike"] == {"aws:SourceArn": {"Fn::GetAtt": [source_id, "Arn"]}}
    for bucket in buckets.values():
        assert bucket["Properties"]["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}


def test_role_alone_is_a_role_and_its_managed_policy(templates):
    t = templates["Role"]
    assert _types(t) == {"AWS::IAM::Role", "AWS::IAM::ManagedPolicy"}
    (policy,) = _of_type(t, "AWS::IAM::ManagedPolicy").values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    actions = {a for st in statements for a in ([st["Action"]] if isinstance(st["Action"], str) else st["Action"])}
    assert {"ec2:CreateNetworkInterface", "s3:PutObject", "fsx:DescribeFileSystems"} <= actions
    assert policy["Properties"]["Roles"] == [{"Ref": next(iter(_of_type(t, "AWS::IAM::Role")))}]


# --- each part validates its own props ----------------------------------------------------------

BAD: list[tuple[str, dict[str, Any], type, str]] = [
    ("Vpc", {"availability_zone": "eu-west-1a"}, ValueError, "availability_zone must be an Availability Zone of us-east-1"),
    ("Vpc", {"availability_zone": None, "availability_zone_id": "euw1-az1"}, ValueError, "availability_zone_id must be an AZ ID of us-east-1"),
    ("Vpc", {"max_instance_count": 0}, ValueError, "max_instance_count must be a whole number >= 1 or None, got 0"),
    ("Vpc", {"ips_per_instance": 1}, ValueError, "ips_per_instance must be a whole number >= 5"),
    ("Vpc", {"cidr": "10.0.0.0/8"}, ValueError, "cidr must be an IPv4 CIDR block from /16 to /24"),
    ("Vpc", {"cidr": "10.0.0.0/24", "max_instance_count": 16, "ips_per_instance": 8}, ValueError, "cidr 10.0.0.0/24 is too small"),
    ("Vpc", {"interface_endpoints": "sts"}, TypeError, "interface_endpoints must be a list of str"),
    ("Vpc", {"flow_log_bucket": "my-logs"}, TypeError, "flow_log_bucket must be an aws_s3.IBucket"),
    ("Efa", {"vpc": "vpc-0a1b2c3d4e5f67890"}, TypeError, "vpc must be an aws_ec2.IVpc"),
    ("Efa", {"s3_prefix_list_id": "pl-nothex"}, ValueError, "s3_prefix_list_id must be a managed prefix list id"),
    ("Efa", {"security_group": "frozen"}, ValueError, "security_group 'sg-0ffffffffffffffff' cannot take rules (imported with mutable=False)"),
    ("Efa", {"description": "café"}, ValueError, "description must be 1-255 characters"),
    ("FileSystem", {"plan": {"deployment_type": "SCRATCH_2"}}, TypeError, "plan must be a LustrePlan"),
    ("FileSystem", {"subnet": SUBNET}, TypeError, "subnet must be an aws_ec2.ISubnet"),
    ("FileSystem", {"subnet": "foreign"}, ValueError, "subnet Bad/Foreign is not a subnet of vpc Bad/Vpc"),
    ("FileSystem", {"backup_retention_days": 120, "plan": "persistent"}, ValueError, "backup_retention_days must be a whole number from 1 to 90"),
    ("FileSystem", {"monthly_cost_warning_usd": -1}, ValueError, "monthly_cost_warning_usd must be a number > 0"),
    ("Checkpoints", {"noncurrent_version_expiration_days": 0}, ValueError, "noncurrent_version_expiration_days must be a whole number >= 1, got 0"),
    ("Checkpoints", {"encryption_key": "alias/ml"}, TypeError, "encryption_key must be an aws_kms.IKey"),
    ("Checkpoints", {"prefix": None}, TypeError, "prefix must be a str"),
    ("Role", {"security_groups": []}, ValueError, "security_groups must list 1 to 5 groups"),
    ("Role", {"checkpoint_bucket": "acme"}, TypeError, "checkpoint_bucket must be an aws_s3.IBucket"),
    ("Role", {"role": "arn:aws:iam::111122223333:role/x"}, TypeError, "role must be an aws_iam.IRole"),
    ("Role", {"encryption_keys": "alias/ml"}, TypeError, "encryption_keys must be a list of aws_kms.IKey"),
]


def _construct_with(name: str, overrides: dict[str, Any]) -> None:
    from aws_cdk import App, Environment, Stack, aws_ec2 as ec2

    from smddp_infra.constructs.checkpoints import CheckpointBucket
    from smddp_infra.constructs.efa import EfaSecurityGroup
    from smddp_infra.constructs.filesystem import LustreFileSystem
    from smddp_infra.constructs.network import TrainingVpc
    from smddp_infra.constructs.role import TrainingExecutionRole
    from smddp_infra.sizing import plan_lustre

    stack = Stack(App(context=cdk_context()), "Bad", env=Environment(**ENV))
    imports = _imports(stack)
    if overrides.get("security_group") == "frozen":
        overrides["security_group"] = ec2.SecurityGroup.from_security_group_id(stack, "Frozen", "sg-0ffffffffffffffff", mutable=False)
    if overrides.get("subnet") == "foreign":
        overrides["subnet"] = ec2.Subnet.from_subnet_attributes(stack, "Foreign", subnet_id="subnet-0ffffffffffffffff",
                                                                availability_zone="us-east-1a")
    if overrides.get("plan") == "persistent":
        overrides["plan"] = plan_lustre(1600, 2000, deployment_types=["PERSISTENT_2"])
    cls, base = {
        "Vpc": (TrainingVpc, {"availability_zone": "us-east-1a"}),
        "Efa": (EfaSecurityGroup, {"vpc": imports["vpc"]}),
        "FileSystem": (LustreFileSystem, {"plan": _plan(), "vpc": imports["vpc"], "subnet": imports["subnet"],
                                          "security_group": imports["group"]}),
        "Checkpoints": (CheckpointBucket, {}),
        "Role": (TrainingExecutionRole, {"training_subnet": imports["subnet"], "security_groups": [imports["group"]],
                                         "checkpoint_bucket": imports["bucket"], "checkpoint_prefix": "checkpoints"}),
    }[name]
    cls(stack, "Part", **{**base, **overrides})


@pytest.mark.parametrize(("name", "props", "kind", "start"), BAD, ids=[f"{b[0]}-{next(iter(b[1]))}" for b in BAD])
def test_each_part_names_the_bad_prop(name, props, kind, start):
    from smddp_infra.errors import SmddpError

    with pytest.raises(kind) as info:
        _construct_with(name, dict(props))
    assert isinstance(info.value, SmddpError)
    assert str(info.value).startswith(start), str(info.value)


def test_training_vpc_takes_the_az_id_prefix_from_context_too():
    from aws_cdk import App, Environment, Stack

    from smddp_infra.constructs.network import TrainingVpc

    stack = Stack(App(context=cdk_context(**{"smddp:availabilityZoneIdPrefix": "xyz9"})), "Ctx", env=Environment(**ENV))
    vpc = TrainingVpc(stack, "Training", availability_zone_id="xyz9-az2")
    assert vpc.training_subnet is not None


@pytest.mark.parametrize("name", ["Vpc", "Efa", "FileSystem", "Checkpoints", "Role"])
def test_each_part_created_outside_a_stack_is_one_line(name):
    from aws_cdk import App, Environment, Stack

    from smddp_infra.errors import ConfigError

    app = App(context=cdk_context())
    imports = _imports(Stack(app, "Imports", env=Environment(**ENV)))
    with pytest.raises(ConfigError, match=r"is not inside a Stack: pass a Stack"):
        BUILDERS[name](app, imports)
