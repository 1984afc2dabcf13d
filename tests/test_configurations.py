"""Other configurations and escape hatches, all in ONE app synthesized once for this module.

The rule packs (AwsSolutions, NIST 800-53 rev 5, HIPAA Security, SmddpChecks) run on the whole app, so a
successful synth also proves every configuration is free of unacknowledged findings.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Environment, Stack, Validations, aws_ec2 as ec2, aws_iam as iam, aws_kms as kms, aws_s3 as s3

from conftest import ROOT, cdk_context
from smddp_infra.constructs.training_network import SmddpTrainingNetwork
from smddp_infra.errors import ConfigError
from smddp_infra.settings import NetworkSettings
from smddp_infra.stack import TrainingNetworkStack

CONFIGS: dict[str, dict[str, Any]] = {
    "Default": {},
    "Nat": {"smddp:natGateway": True},
    "AzId": {"smddp:availabilityZoneId": "use1-az4"},
    "EfaFs": {"smddp:efaFileSystem": True, "smddp:instanceType": "ml.p5.48xlarge", "smddp:instanceCount": 16,
              "smddp:readMBpsPerGpu": 200},
    "Kms": {"smddp:kmsKey": "create", "smddp:deploymentType": "PERSISTENT_2"},
    "Dataset": {"smddp:datasetBucket": "s3://my-training-data/imagenet", "smddp:deploymentType": "PERSISTENT_2"},
    "AzIdNat": {"smddp:availabilityZoneId": "use1-az6", "smddp:natGateway": True},
    "Small": {"smddp:instanceType": "ml.p5.48xlarge", "smddp:instanceCount": 2, "smddp:readMBpsPerGpu": 100},
    "Big": {"smddp:instanceType": "ml.p5.48xlarge", "smddp:instanceCount": 64, "smddp:readMBpsPerGpu": 100,
            "smddp:datasetGiB": 50000, "smddp:maxInstanceCount": 64},
}


class PlatformStack(Stack):
    """A platform that already has a VPC, subnet, key, bucket and its own security group."""

    def __init__(self, scope: App, id: str) -> None:
        super().__init__(scope, id, env=Environment(account="123456789012", region="us-east-1"))
        vpc = ec2.Vpc.from_vpc_attributes(self, "Vpc", vpc_id="vpc-0123456789abcdef0", availability_zones=["us-east-1b"],
                                          private_subnet_ids=["subnet-0123456789abcdef0"],
                                          private_subnet_route_table_ids=["rtb-0123456789abcdef0"])
        subnet = ec2.Subnet.from_subnet_attributes(self, "Subnet", subnet_id="subnet-0123456789abcdef0",
                                                   availability_zone="us-east-1b", ipv4_cidr_block="10.1.0.0/22",
                                                   route_table_id="rtb-0123456789abcdef0")
        platform_group = ec2.SecurityGroup.from_security_group_id(self, "PlatformGroup", "sg-0fedcba9876543210")
        key = kms.Key.from_key_arn(self, "Key", "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555")
        bucket = s3.Bucket.from_bucket_name(self, "Data", "platform-datasets")
        self.network = SmddpTrainingNetwork(
            self, "Training", vpc=vpc, training_subnet=subnet, additional_security_groups=[platform_group],
            endpoint_security_groups=[ec2.SecurityGroup.from_security_group_id(self, "Endpoints", "sg-0aaaabbbbccccdddd")],
            encryption_key=key, dataset_bucket=bucket, dataset_prefix="llm/", required_throughput_mbps=4000,
            dataset_gib=10_000, deployment_types=["PERSISTENT_2"],
        )
        # The platform's launcher role and a team group may start jobs, only inside the first network.
        self.launchers = iam.Role.from_role_arn(self, "Launchers", "arn:aws:iam::123456789012:role/ml-platform/JobLaunchers")
        self.network.grant_launch(self.launchers)
        self.network.grant_launch(iam.Group.from_group_name(self, "Team", "ml-team-a"))
        self.second = SmddpTrainingNetwork(
            self, "SecondCluster", vpc=vpc, training_subnet=subnet, instance_type="ml.trn1.32xlarge", allow_https_egress=True,
            instance_count=2, read_mbps_per_gpu=25,
        )


@pytest.fixture(scope="module")
def app() -> tuple[App, dict[str, dict[str, Any]]]:
    from cdk_nag import AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks

    app = App(context=cdk_context())
    stacks: dict[str, Stack] = {}
    for name, overrides in CONFIGS.items():
        settings = NetworkSettings.from_context(cdk_context(**overrides))
        stacks[name] = TrainingNetworkStack(app, f"Config{name}", settings=settings)
    stacks["Platform"] = PlatformStack(app, "Platform")
    from smddp_infra.checks import SmddpChecks

    Validations.of(app).add_plugins(AwsSolutionsChecks(app), NIST80053R5Checks(app), HIPAASecurityChecks(app), SmddpChecks(app))
    assembly = app.synth()
    templates = {name: assembly.get_stack_artifact(stack.artifact_id).template for name, stack in stacks.items()}
    return app, templates


@pytest.fixture(scope="module")
def template_dir(app, tmp_path_factory) -> Path:
    """Every configuration's template, plus the default app's, as files for the linters."""
    out = tmp_path_factory.mktemp("matrix")
    for name, template in app[1].items():
        (out / f"{name}.template.json").write_text(json.dumps(template, indent=1))
    return out


def test_matrix_covers_at_least_nine_configurations(app) -> None:
    assert len(app[1]) >= 9


def test_every_configuration_is_clean_under_cfn_lint(template_dir: Path) -> None:
    from cfnlint.api import ManualArgs, lint

    problems = []
    for path in sorted(template_dir.glob("*.json")):
        problems += [f"{path.name}: {m}" for m in lint(path.read_text(), config=ManualArgs(regions=["us-east-1"]))]
    assert problems == []


CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"


def test_every_checkov_failure_is_fixed_or_listed_with_its_reason_in_security_md(template_dir: Path) -> None:
    """checkov runs in its own venv (make test installs it); failures must be documented exceptions."""
    assert CHECKOV.exists(), "checkov is missing: run `make test` (it installs .venv-checkov)"
    result = subprocess.run(
        [str(CHECKOV), "-d", str(template_dir), "--framework", "cloudformation", "-o", "json", "--skip-download", "--quiet"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "BC_SKIP_MAPPING": "TRUE"},
    )
    report = json.loads(result.stdout)
    reports = report if isinstance(report, list) else [report]
    failed = {(c["check_id"], c["resource"].split(".")[0]) for r in reports for c in r["results"].get("failed_checks", [])}
    passed = sum(r["summary"]["passed"] for r in reports)
    assert passed > 100, "checkov did not really run"
    documented = set(re.findall(r"^\| (CKV_\w+) \| (AWS::[\w:]+) \|", SECURITY_MD.read_text(), flags=re.M))
    assert failed <= documented, f"undocumented checkov failures: {sorted(failed - documented)}"
    assert documented <= failed, f"docs/security.md lists checkov exceptions that no longer fail: {sorted(documented - failed)}"


SECURITY_MD = ROOT / "docs" / "security.md"


def test_security_md_lists_exactly_the_acknowledgements_the_code_applies() -> None:
    from smddp_infra.constructs.acknowledgements import markdown_table

    text = SECURITY_MD.read_text()
    assert markdown_table() in text, "docs/security.md is stale: paste smddp_infra.constructs.acknowledgements.markdown_table()"


def of_type(template: dict[str, Any], type_name: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == type_name}


def test_nat_configuration_has_public_subnet_nat_and_https_egress(app) -> None:
    t = app[1]["Nat"]
    assert len(of_type(t, "AWS::EC2::NatGateway")) == 1
    assert len(of_type(t, "AWS::EC2::Subnet")) == 2
    endpoints = of_type(t, "AWS::EC2::VPCEndpoint").values()
    assert [e["Properties"].get("VpcEndpointType") for e in endpoints] == ["Gateway"]
    (efa,) = [g for g in of_type(t, "AWS::EC2::SecurityGroup").values() if "EFA" in g["Properties"]["GroupDescription"]]
    assert {"CidrIp": "0.0.0.0/0", "FromPort": 443, "ToPort": 443, "IpProtocol": "tcp",
            "Description": "HTTPS to AWS APIs through the NAT gateway"} in efa["Properties"]["SecurityGroupEgress"]


def test_az_id_configuration_places_the_subnet_by_az_id(app) -> None:
    (subnet,) = [s for s in of_type(app[1]["AzId"], "AWS::EC2::Subnet").values()]
    assert subnet["Properties"]["AvailabilityZoneId"] == "use1-az4"
    assert "AvailabilityZone" not in subnet["Properties"]


def test_az_id_with_nat_places_every_subnet_by_az_id(app) -> None:
    subnets = of_type(app[1]["AzIdNat"], "AWS::EC2::Subnet").values()
    assert len(subnets) == 2
    for subnet in subnets:
        assert subnet["Properties"]["AvailabilityZoneId"] == "use1-az6"
        assert "AvailabilityZone" not in subnet["Properties"]


def test_existing_vpc_gets_https_egress_to_the_platform_endpoints_or_explicitly_anywhere(app) -> None:
    t = app[1]["Platform"]
    egress = [r["Properties"] for r in of_type(t, "AWS::EC2::SecurityGroupEgress").values()]
    assert any(e.get("DestinationSecurityGroupId") == "sg-0aaaabbbbccccdddd" and e["FromPort"] == 443 for e in egress)
    groups = list(of_type(t, "AWS::EC2::SecurityGroup").values())
    anywhere = [g for g in groups if any(r.get("CidrIp") == "0.0.0.0/0" for r in g["Properties"].get("SecurityGroupEgress", []))]
    assert len(anywhere) == 1  # only SecondCluster, which asked for allow_https_egress=True


def test_efa_file_system_is_persistent_2_with_metadata_configuration(app) -> None:
    (fs,) = of_type(app[1]["EfaFs"], "AWS::FSx::FileSystem").values()
    lustre = fs["Properties"]["LustreConfiguration"]
    assert lustre["DeploymentType"] == "PERSISTENT_2" and lustre["EfaEnabled"] is True
    assert lustre["MetadataConfiguration"] == {"Mode": "AUTOMATIC"}
    assert fs["Properties"]["FileSystemTypeVersion"] == "2.15"
    assert lustre["AutomaticBackupRetentionDays"] == 7


def test_kms_configuration_encrypts_bucket_and_file_system_and_adds_the_kms_endpoint(app) -> None:
    t = app[1]["Kms"]
    (key_id, key), = of_type(t, "AWS::KMS::Key").items()
    assert key["Properties"]["EnableKeyRotation"] is True and key["DeletionPolicy"] == "Retain"
    (fs,) = of_type(t, "AWS::FSx::FileSystem").values()
    assert fs["Properties"]["KmsKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}  # the ARN: a bare id is looked up in the caller's account
    assert fs["Properties"]["LustreConfiguration"]["DeploymentType"].startswith("PERSISTENT")  # a customer key: PERSISTENT only
    sse = [b["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"][0] for b in of_type(t, "AWS::S3::Bucket").values()]
    assert {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": {"Fn::GetAtt": [key_id, "Arn"]}} in [s["ServerSideEncryptionByDefault"] for s in sse]
    services = [str(e["Properties"]["ServiceName"]) for e in of_type(t, "AWS::EC2::VPCEndpoint").values()]
    assert any(s.endswith(".kms") for s in services)


def test_dataset_bucket_is_linked_and_readable(app) -> None:
    t = app[1]["Dataset"]
    (dra,) = of_type(t, "AWS::FSx::DataRepositoryAssociation").values()
    assert dra["Properties"]["DataRepositoryPath"] == "s3://my-training-data/imagenet/"
    assert dra["Properties"]["FileSystemPath"] == "/dataset"
    (policy,) = [p for p in of_type(t, "AWS::IAM::ManagedPolicy").values()
                 if "Roles" in p["Properties"] and "guardrail" not in p["Properties"]["Description"]]  # the role's
    sids = {s["Sid"]: s for s in policy["Properties"]["PolicyDocument"]["Statement"]}
    assert sids["DatasetRead"]["Action"] == "s3:GetObject"
    assert "imagenet/*" in str(sids["DatasetRead"]["Resource"])


def test_large_cluster_gets_a_larger_subnet_and_a_faster_file_system(app) -> None:
    t = app[1]["Big"]
    (subnet,) = of_type(t, "AWS::EC2::Subnet").values()
    # smddp:maxInstanceCount=64 sizes the subnet (64 x 5 IPs + endpoints + FSx, twice over);
    # without it every configuration gets the /20 sized for growth.
    assert subnet["Properties"]["CidrBlock"].endswith("/22")
    (default_subnet,) = of_type(app[1]["Default"], "AWS::EC2::Subnet").values()
    assert default_subnet["Properties"]["CidrBlock"] == "10.0.0.0/20"
    (fs,) = of_type(t, "AWS::FSx::FileSystem").values()
    assert fs["Properties"]["StorageCapacity"] >= 50000
    tags = {tag["Key"]: tag["Value"] for tag in fs["Properties"]["Tags"]}
    assert tags["smddp:requiredThroughputMBps"] == str(64 * 8 * 100)


def test_platform_groups_beside_the_efa_group_are_left_as_given(app) -> None:
    # Security groups are a union per interface: the EFA group's self rules are enough, and a
    # group the platform owns is not ours to change (issue 9, "change only what you own").
    t = app[1]["Platform"]
    rules = [*of_type(t, "AWS::EC2::SecurityGroupIngress").values(), *of_type(t, "AWS::EC2::SecurityGroupEgress").values()]
    assert rules and not [r for r in rules if r["Properties"]["GroupId"] == "sg-0fedcba9876543210"]


def test_platform_stack_uses_the_existing_vpc_subnet_and_key(app) -> None:
    t = app[1]["Platform"]
    assert not of_type(t, "AWS::EC2::VPC") and not of_type(t, "AWS::EC2::Subnet")
    filesystems = of_type(t, "AWS::FSx::FileSystem")
    assert len(filesystems) == 2
    for fs in filesystems.values():
        assert fs["Properties"]["SubnetIds"] == ["subnet-0123456789abcdef0"]
    assert sum(1 for fs in filesystems.values() if fs["Properties"].get("KmsKeyId")) == 1


def test_two_networks_in_one_stack_do_not_collide(app) -> None:
    t = app[1]["Platform"]
    assert len(of_type(t, "AWS::IAM::Role")) == 2
    assert len(of_type(t, "AWS::EC2::SecurityGroup")) == 2
    assert len(of_type(t, "AWS::S3::Bucket")) == 4  # checkpoints + access logs, per network


def test_job_settings_can_be_handed_to_another_construct(app) -> None:
    stack = app[0].node.find_child("Platform")
    settings = stack.network.job_settings()
    assert len(settings.security_group_ids) == 2 and settings.availability_zone == "us-east-1b"
    assert settings.checkpoint_s3_uri.endswith("/checkpoints/")


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"instance_count": 0}, "instance_count must be a whole number >= 1, got 0"),
        ({"instance_type": "ml.g5.12xlarge"}, "instance_type must be a SageMaker EFA training instance type"),
        ({"availability_zone": None}, "needs availability_zone or availability_zone_id"),
        ({"read_mbps_per_gpu": None}, "needs lustre_plan, read_mbps_per_gpu or required_throughput_mbps"),
        ({"file_system_access_mode": "rx"}, "file_system_access_mode must be 'ro' or 'rw', got 'rx'"),
        ({"checkpoint_noncurrent_days": 0}, "checkpoint_noncurrent_days must be a whole number >= 1, got 0"),
        ({"vpc": "EXISTING", "training_subnet": "EXISTING"}, "with an existing vpc, say how jobs reach AWS APIs"),
        ({"instance_count": 500}, "instance_count=500 does not fit the /20 training subnet (the default, 1/16 of "
                                  "vpc_cidr 10.0.0.0/16), which holds 406 ml.p4d.24xlarge instances"),
        ({"max_instance_count": 0}, "max_instance_count must be a whole number >= 1 or None, got 0"),
    ],
)
def test_bad_construct_props_raise_a_config_error_naming_the_prop(props: dict[str, Any], message: str) -> None:
    stack = Stack(App(), "Bad", env=Environment(region="us-east-1"))
    kwargs: dict[str, Any] = {"availability_zone": "us-east-1a", "read_mbps_per_gpu": 50}
    kwargs.update(props)
    if kwargs.get("vpc") == "EXISTING":
        kwargs["vpc"] = ec2.Vpc.from_vpc_attributes(stack, "Vpc", vpc_id="vpc-1", availability_zones=["us-east-1a"])
        kwargs["training_subnet"] = ec2.Subnet.from_subnet_attributes(stack, "Subnet", subnet_id="subnet-1",
                                                                       availability_zone="us-east-1a")
    with pytest.raises(ConfigError) as excinfo:
        SmddpTrainingNetwork(stack, "Net", **kwargs)
    assert message in str(excinfo.value)


# --- the launch guardrail across configurations -------------------------------------------------

def launch_policies(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    from smddp_infra.guardrails import SID_LAUNCH

    return {k: v for k, v in of_type(template, "AWS::IAM::ManagedPolicy").items()
            if any(s.get("Sid") == SID_LAUNCH for s in v["Properties"]["PolicyDocument"]["Statement"])}


def test_every_default_stack_configuration_carries_one_launch_policy(app) -> None:
    for name in CONFIGS:
        assert len(launch_policies(app[1][name])) == 1, name


def test_grant_launch_attaches_one_policy_to_the_role_and_the_group(app) -> None:
    (policy,) = launch_policies(app[1]["Platform"]).values()
    assert policy["Properties"]["Roles"] == ["JobLaunchers"]
    assert policy["Properties"]["Groups"] == ["ml-team-a"]
    statements = {s["Sid"]: s for s in policy["Properties"]["PolicyDocument"]["Statement"]}
    groups = statements["LaunchTrainingInNetwork"]["Condition"]["ForAllValues:StringEquals"]["sagemaker:VpcSecurityGroupIds"]
    assert len(groups) == 2 and "sg-0fedcba9876543210" in groups  # the EFA group and the platform's group
    # the platform's imported key: a job naming another volume/output key is refused, and the
    # SDK may use the key for the code upload through S3 only
    key = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555"
    assert statements["LaunchTrainingInNetwork"]["Condition"]["ArnEqualsIfExists"] == {
        "sagemaker:VolumeKmsKey": key, "sagemaker:OutputKmsKey": key}
    assert statements["JobBucketKey"]["Resource"] == key


def test_created_key_configuration_scopes_the_launch_to_that_key(app) -> None:
    t = app[1]["Kms"]
    (key_id,) = of_type(t, "AWS::KMS::Key")
    (policy,) = launch_policies(t).values()
    launch = policy["Properties"]["PolicyDocument"]["Statement"][0]
    assert launch["Condition"]["ArnEqualsIfExists"]["sagemaker:OutputKmsKey"] == {"Fn::GetAtt": [key_id, "Arn"]}


def test_grant_launch_refuses_a_principal_a_managed_policy_cannot_attach_to() -> None:
    stack = Stack(App(), "Grant", env=Environment(region="us-east-1"))
    network = SmddpTrainingNetwork(stack, "Net", availability_zone="us-east-1a", read_mbps_per_gpu=50)
    with pytest.raises(ConfigError, match="grant_launch needs an IAM role, user or group"):
        network.grant_launch(iam.ServicePrincipal("lambda.amazonaws.com"))
    assert network.launch_policy() is network.launch_policy()
    with pytest.raises(ConfigError, match="already created"):
        network.launch_policy(include_tuning_jobs=True)



def test_launch_policy_refuses_a_non_efa_instance_type_prop() -> None:
    stack = Stack(App(), "Types", env=Environment(region="us-east-1"))
    network = SmddpTrainingNetwork(stack, "Net", availability_zone="us-east-1a", read_mbps_per_gpu=50)
    with pytest.raises(ConfigError, match="instance_types must be a SageMaker EFA training instance type.*got 'ml.g5.48xlarge'"):
        network.launch_policy(instance_types=["ml.g5.48xlarge"])
