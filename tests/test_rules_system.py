"""The rules judge the system, not one file (issue 24).

* launch targets: a group or subnet a template hands to training started outside it (an
  Output, an export, an SSM parameter) AND says is for training: SG4 / NET5 warnings;
* several templates as one system: exports and imports, nested stacks (local files and CDK
  assets), SSM-typed parameters; findings land on their own file and name the other;
* ParallelCluster's custom resource as EFA compute;
* the VPC's default group is "not evaluated", never a silent pass.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from smddp_infra.commands.check import judge
from smddp_infra.rules import Severity, check_template
from smddp_infra.rules.handoff import launch_targets, purpose_word
from smddp_infra.rules.loader import load_template_file, load_template_text
from smddp_infra.rules.model import TemplateModel
from smddp_infra.rules.system import link_templates

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "corpus"


def _findings(name: str) -> list:
    return check_template(load_template_file(str(CORPUS / name)))


def _by_rule(findings: list) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in findings:
        out.setdefault(f.rule_id, []).append(f)
    return out


def _system(directory: Path) -> dict[str, list]:
    templates = {str(p): load_template_file(str(p)) for p in sorted(directory.glob("*.yaml"))}
    found, _ = judge(templates)
    return {Path(p).name: fs for p, fs in found.items()}


# ------------------------------------------------------------------ launch targets


def test_a_group_exported_for_sagemaker_jobs_without_self_rules_is_a_warning_naming_the_output():
    findings = _findings("sagemaker_jobs_handout.yaml")
    sg4 = [f for f in findings if f.rule_id == "SMDDP-SG4"]
    assert [(f.resource, f.severity) for f in sg4] == [("LustreGroup", Severity.WARNING)]
    message = sg4[0].message
    assert "output SecurityGroupId" in message
    assert "use in SageMaker networking config" in message
    assert "ingress from itself" in message and "egress to itself" in message
    assert not [f for f in findings if f.severity is Severity.ERROR]  # no resource carries it: never an error


def test_ssm_hand_outs_are_launch_targets_and_their_subnet_gets_the_s3_route_warning():
    by_rule = _by_rule(_findings("sagemaker_jobs_handout_ssm.yaml"))
    assert [f.resource for f in by_rule["SMDDP-SG4"]] == ["JobsGroup"]
    assert "SSM parameter /ml-platform/training/security-group-id" in by_rule["SMDDP-SG4"][0].message
    assert "egress to itself" in by_rule["SMDDP-SG4"][0].message and "ingress from itself" not in by_rule["SMDDP-SG4"][0].message
    assert [(f.resource, f.severity) for f in by_rule["SMDDP-NET5"]] == [("TrainSubnet", Severity.WARNING)]


@pytest.mark.parametrize("name", ["sagemaker_handout_generic.yaml", "sagemaker_handout_studio.yaml", "sagemaker_jobs_handout_ok.yaml"])
def test_hand_outs_without_training_words_or_with_self_rules_give_nothing(name):
    assert [f for f in _findings(name) if f.severity is not Severity.INFO] == []


def test_a_group_carried_by_a_training_resource_is_judged_by_sg1_sg2_not_sg4():
    template = load_template_file(str(CORPUS / "sagemaker_jobs_handout.yaml"))
    template["Resources"]["Cluster"] = {
        "Type": "AWS::SageMaker::Cluster",
        "Properties": {
            "VpcConfig": {"SecurityGroupIds": [{"Ref": "LustreGroup"}], "Subnets": [{"Ref": "PrivateSubnet"}]},
            "InstanceGroups": [{"InstanceGroupName": "w", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 2,
                                "ExecutionRole": "arn:aws:iam::111122223333:role/r"}],
        },
    }
    rules = _by_rule(check_template(template))
    assert "SMDDP-SG4" not in rules
    assert {f.resource for f in rules["SMDDP-SG1"] + rules["SMDDP-SG2"]} == {"Cluster"}


def test_an_exported_group_named_for_efa_is_one_warning_not_a_warning_and_a_note():
    rules = _by_rule(_findings("named_groups_only.yaml"))
    assert [f.resource for f in rules["SMDDP-SG4"]] == ["EfaSecurityGroup"]
    assert "SMDDP-SG3" not in rules


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("Security group id, use in SageMaker networking config", "sagemaker"),
        ("SageMakerTrainingSecurityGroup", "training"),
        ("SageMakerSecurityGroupId", "sagemaker"),
        ("EFASecurityGroup", "efa"),
        ("/ml/training/sg-id", "training"),
        ("hyperpod-cluster-sg", "hyperpod"),
        ("Security group for the SageMaker Studio domain", None),
        ("Security group for SageMaker notebook instances and training jobs", "training"),
        ("VPC endpoints for SageMaker training", None),
        ("SageMakerVpcEndpointSG", None),
        ("application tier", None),
        ("refactor", None),
    ],
)
def test_purpose_words_are_whole_words_and_other_roles_win(text, word):
    assert purpose_word(text) == word


def test_a_conditional_output_that_is_off_hands_nothing_out():
    template = load_template_text(
        """
Conditions: {Never: !Equals [a, b]}
Resources:
  Sg: {Type: AWS::EC2::SecurityGroup, Properties: {GroupDescription: SageMaker training}}
Outputs:
  Sg: {Condition: Never, Value: !Ref Sg, Description: for SageMaker training jobs}
"""
    )
    assert launch_targets(TemplateModel(template).world()) == {}


# ------------------------------------------------------------------ several templates


def test_an_import_joins_the_cluster_to_the_group_its_network_stack_creates():
    found = _system(CORPUS / "system_hyperpod_exports")
    errors = [f for f in found["cluster.yaml"] if f.severity is Severity.ERROR]
    assert [(f.rule_id, f.resource) for f in errors] == [("SMDDP-SG2", "Cluster")]
    assert "ClusterGroup from network.yaml" in errors[0].message
    assert found["network.yaml"] == []


def test_alone_the_cluster_stack_is_only_not_evaluated():
    findings = _findings("system_hyperpod_exports/cluster.yaml")
    assert {f.severity for f in findings} == {Severity.INFO}
    assert any("ImportValue" in f.message for f in findings)


def test_a_nested_stack_gets_its_parents_parameters():
    found = _system(CORPUS / "system_fsx_nested")
    assert [(f.rule_id, f.resource) for f in found["fsx.yaml"] if f.severity is Severity.ERROR] == [("SMDDP-FSX3", "FileSystem")]
    assert any("StorageGroup from network.yaml" in f.message for f in found["fsx.yaml"])


def test_an_ssm_typed_parameter_reads_what_another_template_writes():
    found = _system(CORPUS / "system_ssm_handoff")
    assert [f for fs in found.values() for f in fs] == []  # both self rules, seen through SSM
    alone = _findings("system_ssm_handoff/workload.yaml")
    assert alone and {f.severity for f in alone} == {Severity.INFO}


def test_an_export_two_templates_could_satisfy_is_not_guessed(tmp_path):
    for name in ("a", "b"):
        shutil.copy(CORPUS / "system_hyperpod_exports" / "network.yaml", tmp_path / f"network_{name}.yaml")
    shutil.copy(CORPUS / "system_hyperpod_exports" / "cluster.yaml", tmp_path / "cluster.yaml")
    templates = {str(p): load_template_file(str(p)) for p in sorted(tmp_path.glob("*.yaml"))}
    systems, alone = link_templates(templates)
    assert systems == []
    assert len(alone) == 3


def test_logical_ids_two_templates_share_are_kept_apart_and_mapped_back(tmp_path):
    network = (CORPUS / "system_hyperpod_exports" / "network.yaml").read_text()
    cluster = (CORPUS / "system_hyperpod_exports" / "cluster.yaml").read_text()
    # both templates now have a resource called ClusterGroup; the cluster's own one is unrelated
    cluster += "  ClusterGroup:\n    Type: AWS::EC2::SecurityGroup\n    Properties: {GroupDescription: unrelated}\n"
    (tmp_path / "network.yaml").write_text(network)
    (tmp_path / "cluster.yaml").write_text(cluster)
    found = _system(tmp_path)
    errors = [f for f in found["cluster.yaml"] if f.severity is Severity.ERROR]
    assert [(f.rule_id, f.resource) for f in errors] == [("SMDDP-SG2", "Cluster")]
    assert "network_ClusterGroup" not in errors[0].message  # the reader sees its own logical id
    assert "ClusterGroup from network.yaml" in errors[0].message


@pytest.fixture(scope="module")
def cdk_two_stacks(tmp_path_factory) -> Path:
    """A CDK app of our own: a network stack, a training stack with a HyperPod cluster that
    uses the network's group (self ingress only) across stacks, and a nested FSx stack."""
    from aws_cdk import App, Environment, NestedStack, Stack
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_fsx as fsx
    from aws_cdk import aws_sagemaker as sagemaker

    outdir = tmp_path_factory.mktemp("cdk") / "cdk.out"
    app = App(outdir=str(outdir))
    env = Environment(account="111122223333", region="us-east-1")
    network = Stack(app, "NetworkStack", env=env)
    vpc = ec2.Vpc(network, "Vpc", max_azs=1, nat_gateways=0,
                  subnet_configuration=[ec2.SubnetConfiguration(name="train", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)])
    vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)
    group = ec2.SecurityGroup(network, "Efa", vpc=vpc, allow_all_outbound=False)
    group.add_ingress_rule(group, ec2.Port.all_traffic())
    training = Stack(app, "TrainingStack", env=env)
    subnet = vpc.isolated_subnets[0].subnet_id
    sagemaker.CfnCluster(
        training, "Cluster", cluster_name="c",
        vpc_config=sagemaker.CfnCluster.VpcConfigProperty(security_group_ids=[group.security_group_id], subnets=[subnet]),
        instance_groups=[sagemaker.CfnCluster.ClusterInstanceGroupProperty(
            instance_group_name="workers", instance_type="ml.p5.48xlarge", instance_count=2,
            execution_role="arn:aws:iam::111122223333:role/cluster",
            life_cycle_config=sagemaker.CfnCluster.ClusterLifeCycleConfigProperty(source_s3_uri="s3://b/lc", on_create="x.sh"))],
    )
    storage = NestedStack(training, "Storage")
    fsx.CfnFileSystem(storage, "Fs", file_system_type="LUSTRE", storage_capacity=1200, subnet_ids=[subnet],
                      security_group_ids=[group.security_group_id],
                      lustre_configuration=fsx.CfnFileSystem.LustreConfigurationProperty(deployment_type="SCRATCH_2"))
    app.synth()
    return outdir


def _cli_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "smddp_infra.cli", "check", *args], capture_output=True, text=True, cwd=ROOT)


def test_a_cdk_app_with_two_stacks_and_a_nested_stack_is_one_system(cdk_two_stacks):
    result = _cli_check("--json", str(cdk_two_stacks))
    assert result.returncode == 1, result.stderr
    payload = json.loads(result.stdout)
    errors = {(Path(t["template"]).name, f["rule"], f["resource"]) for t in payload["templates"] for f in t["findings"]
              if f["severity"] == "error"}
    nested = next(Path(t["template"]).name for t in payload["templates"] if t["template"].endswith(".nested.template.json"))
    assert errors == {("TrainingStack.template.json", "SMDDP-SG2", "Cluster"), (nested, "SMDDP-FSX3", "Fs")}
    assert len(payload["systems"]) == 1 and len(payload["systems"][0]["templates"]) == 3
    assert any("nests stack" in link for link in payload["systems"][0]["links"])


def test_each_cdk_template_alone_says_not_evaluated(cdk_two_stacks):
    result = _cli_check(str(cdk_two_stacks / "TrainingStack.template.json"))
    assert result.returncode == 0, result.stdout
    assert "SMDDP-INFO1" in result.stdout and " error:" not in result.stdout


# ------------------------------------------------------------------ ParallelCluster


def test_a_parallelcluster_efa_queue_is_judged_like_any_efa_compute():
    rules = _by_rule(_findings("pcluster_custom_resource.yaml"))
    assert [(f.resource, f.severity) for f in rules["SMDDP-SG2"]] == [("Cluster", Severity.ERROR)]
    assert "ParallelCluster queue gpu" in rules["SMDDP-SG2"][0].message
    assert "SMDDP-SG1" not in rules  # the template group has its self ingress


def test_a_queue_on_parallelclusters_own_group_is_not_evaluated():
    findings = _findings("pcluster_custom_resource_managed.yaml")
    assert {f.severity for f in findings} == {Severity.INFO}
    assert {f.message.split(" not judged")[0] for f in findings} == {"SMDDP-SG1", "SMDDP-SG2"}


def test_a_configuration_written_as_a_yaml_string_is_read_and_one_we_cannot_read_is_said():
    text = (CORPUS / "pcluster_custom_resource.yaml").read_text()
    template = load_template_text(text)
    config = template["Resources"]["Cluster"]["Properties"]["ClusterConfiguration"]
    config["Scheduling"]["SlurmQueues"][0]["Networking"] = {"SubnetIds": ["subnet-0abc"], "SecurityGroups": ["sg-0abc"]}
    import yaml

    template["Resources"]["Cluster"]["Properties"]["ClusterConfiguration"] = yaml.safe_dump(config)
    infos = [f for f in check_template(template) if f.rule_id == "SMDDP-INFO1"]
    assert any("sg-0abc" in f.message for f in infos)
    template["Resources"]["Cluster"]["Properties"]["ClusterConfiguration"] = {"Fn::Sub": "Scheduling: ${Config}"}
    unread = [f for f in check_template(template) if f.rule_id == "SMDDP-INFO1"]
    assert unread and all("ClusterConfiguration" in f.message for f in unread)


def test_a_multi_az_efa_queue_spans_zones():
    template = load_template_file(str(CORPUS / "pcluster_custom_resource.yaml"))
    template["Resources"]["Other"] = {"Type": "AWS::EC2::Subnet",
                                      "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.30.16.0/20", "AvailabilityZone": "us-east-1c"}}
    queue = template["Resources"]["Cluster"]["Properties"]["ClusterConfiguration"]["Scheduling"]["SlurmQueues"][0]
    queue["Networking"]["SubnetIds"].append({"Ref": "Other"})
    assert [f.resource for f in check_template(template) if f.rule_id == "SMDDP-NET1"] == ["Cluster"]


# ------------------------------------------------------------------ the default group


def test_a_file_system_on_the_default_group_is_not_evaluated_never_passed():
    findings = _findings("fsx_default_group.yaml")
    assert sorted(f.message.split(" not judged")[0] for f in findings) == ["SMDDP-FSX3", "SMDDP-FSX4"]
    assert all(f.severity is Severity.INFO and "default security group" in f.message for f in findings)


def test_a_word_of_the_rules_own_text_is_not_taken_for_another_files_resource():
    from smddp_infra.rules.findings import Finding
    from smddp_infra.rules.system import System

    system = System(("a.yaml", "b.yaml"), {}, {"S3": ("a.yaml", "S3"), "Sg": ("a.yaml", "Sg"), "Sub": ("b.yaml", "Sub")}, ())
    finding = Finding("SMDDP-NET2", Severity.ERROR, "Sub", "training subnet Sub has no route to S3 (group Sg)")
    path, placed = system.place(finding)
    assert path == "b.yaml" and placed.resource == "Sub"
    assert placed.message.endswith("[judged with Sg from a.yaml]")  # a resource named S3 is not what "S3" means here
