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
def doc_example() -> dict:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 1, "docs/embedding.md has exactly one python example"
    namespace: dict = {"__name__": "docs_embedding_example"}
    exec(compile(blocks[0], str(DOC), "exec"), namespace)  # noqa: S102 - our own documentation
    return namespace


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
    assert fs["Properties"]["KmsKeyId"] == "1234abcd-12ab-34cd-56ef-1234567890ab"  # the L2 passes the key id of the ARN
    (dra,) = _resources(platform_template, "AWS::FSx::DataRepositoryAssociation").values()
    assert dra["Properties"]["DataRepositoryPath"] == "s3://acme-ml-datasets/imagenet/"


def test_platform_group_and_efa_group_both_carry_the_self_rules(platform_template):
    (efa_group,) = _resources(platform_template, "AWS::EC2::SecurityGroup")
    efa_ref = {"Fn::GetAtt": [efa_group, "GroupId"]}
    for group in (efa_ref, "sg-0123456789abcdef0"):
        ingress = [r["Properties"] for r in _resources(platform_template, "AWS::EC2::SecurityGroupIngress").values()]
        egress = [r["Properties"] for r in _resources(platform_template, "AWS::EC2::SecurityGroupEgress").values()]
        assert any(p["GroupId"] == group and p["IpProtocol"] == "-1" and p["SourceSecurityGroupId"] == group for p in ingress), group
        assert any(p["GroupId"] == group and p["IpProtocol"] == "-1" and p.get("DestinationSecurityGroupId") == group for p in egress), group


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
