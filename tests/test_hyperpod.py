"""HyperPodCluster: the synthesized clusters, what checks them, and its one-line errors.

ONE app is synthesized for the module (about 40 s): the default app with ``smddp:hyperpod=true``
(build_app: AwsSolutions + SmddpChecks) plus a Slurm and an EKS stack (tests/_hyperpod_apps.py),
with the NIST 800-53 r5 and HIPAA packs added. A synth that finishes is a clean synth under
all four packs (an unacknowledged finding raises ValidationFailed).
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from _hyperpod_apps import (
    EKS_ARN,
    PLAN_ARN,
    add_eks_platform_stack,
    add_eks_stack,
    add_slurm_options_stack,
    add_slurm_stack,
    slurm_groups,
)
from conftest import cdk_context
from test_default_app_quality import masked

pytestmark = pytest.mark.slow

SNAPSHOTS = Path(__file__).parent / "snapshots" / "hyperpod"
UPDATE = os.environ.get("SMDDP_UPDATE_SNAPSHOTS") == "1"
CLUSTER = "AWS::SageMaker::Cluster"
STACKS = ("TrainingNetworkStack", "HyperPodSlurm", "HyperPodEks", "HyperPodEksPlatform", "HyperPodSlurmOptions")


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from aws_cdk import App, Validations
    from cdk_nag import HIPAASecurityChecks, NIST80053R5Checks

    from smddp_infra.app_builder import build_app

    out = tmp_path_factory.mktemp("hyperpod")
    app = App(context=cdk_context(**{"smddp:hyperpod": "true"}), outdir=str(out))
    stacks = {"TrainingNetworkStack": build_app(app), "HyperPodSlurm": add_slurm_stack(app), "HyperPodEks": add_eks_stack(app),
              "HyperPodEksPlatform": add_eks_platform_stack(app), "HyperPodSlurmOptions": add_slurm_options_stack(app)}
    Validations.of(app).add_plugins(NIST80053R5Checks(app), HIPAASecurityChecks(app))
    assembly = app.synth()
    templates = {name: assembly.get_stack_artifact(stack.artifact_id).template for name, stack in stacks.items()}
    return {"app": app, "stacks": stacks, "templates": templates, "out": out}


def _clusters(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == CLUSTER}


def _one_cluster(template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    clusters = _clusters(template)
    assert len(clusters) == 1, sorted(clusters)
    return next(iter(clusters.items()))


# --- snapshots and pinned ids -------------------------------------------------------------------


@pytest.mark.parametrize("name", STACKS)
def test_template_matches_the_reviewed_snapshot(synth: dict[str, Any], name: str) -> None:
    current = masked(synth["templates"][name])
    path = SNAPSHOTS / f"{name}.template.json"
    if UPDATE:
        path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    assert path.exists(), f"{path} is missing: review the template, then write it with SMDDP_UPDATE_SNAPSHOTS=1"
    expected = json.loads(path.read_text())
    changed = sorted(k for k in set(expected["Resources"]) | set(current["Resources"])
                     if expected["Resources"].get(k) != current["Resources"].get(k))
    assert not changed, f"resources changed against {path.name}: {changed}"
    assert current == expected


def test_logical_ids_of_the_cluster_and_its_role_are_pinned(synth: dict[str, Any]) -> None:
    """Construct ids feed ClusterName and logical ids: a change replaces the cluster (ends every job)."""
    ids = {name: sorted(k for k, v in synth["templates"][name]["Resources"].items()
                        if v["Type"] in (CLUSTER, "AWS::IAM::Role", "AWS::IAM::ManagedPolicy") and k.startswith("HyperPod"))
           for name in STACKS}
    assert ids["TrainingNetworkStack"] == ["HyperPodCluster11759092", "HyperPodRoleC36875F8", "HyperPodRolePolicy0C0A6E8B"]
    assert ids["HyperPodSlurm"] == ids["TrainingNetworkStack"] == ids["HyperPodEks"]
    names = {name: _one_cluster(synth["templates"][name])[1]["Properties"]["ClusterName"] for name in STACKS}
    assert names == {"TrainingNetworkStack": "TrainingNetworkStack-HyperPod-AB33D574",
                     "HyperPodSlurm": "HyperPodSlurm-HyperPod-7C72FF7D", "HyperPodEks": "HyperPodEks-HyperPod-E405574E",
                     "HyperPodEksPlatform": "HyperPodEksPlatform-HyperPod-61A66627",
                     "HyperPodSlurmOptions": "HyperPodSlurmOptions-HyperPod-502F1045"}
    # the autoscaling role sits beside the instance role, under ids of its own
    assert sorted(set(ids["HyperPodEksPlatform"]) - set(ids["HyperPodEks"])) == [
        "HyperPodAutoscalingRole2425D0D0", "HyperPodAutoscalingRolePolicyB7797186"]


def test_the_default_app_without_the_context_key_has_no_cluster(default_app: Any) -> None:
    """smddp:hyperpod is off by default (and the default snapshot test pins the rest)."""
    assert not _clusters(default_app.json)
    assert not any("HyperPod" in k for k in default_app.json["Resources"])


# --- what the cluster is ------------------------------------------------------------------------


def test_cluster_is_retained_on_delete_and_replace(synth: dict[str, Any]) -> None:
    for name in STACKS:
        _, cluster = _one_cluster(synth["templates"][name])
        assert cluster["DeletionPolicy"] == cluster["UpdateReplacePolicy"] == "Retain", name


def test_cluster_sits_in_the_training_subnet_with_the_efa_group(synth: dict[str, Any]) -> None:
    for name in STACKS:
        template = synth["templates"][name]
        _, cluster = _one_cluster(template)
        vpc = cluster["Properties"]["VpcConfig"]
        [subnet] = vpc["Subnets"]
        assert template["Resources"][subnet["Ref"]]["Type"] == "AWS::EC2::Subnet"
        tags = {t["Key"]: t["Value"] for t in template["Resources"][subnet["Ref"]]["Properties"]["Tags"]}
        assert tags.get("smddp:role") == "training", tags
        [group] = vpc["SecurityGroupIds"]
        group_id = group["Fn::GetAtt"][0]
        ingress = [r for r in template["Resources"].values() if r["Type"] == "AWS::EC2::SecurityGroupIngress"
                   and r["Properties"].get("IpProtocol") == "-1"
                   and r["Properties"]["GroupId"]["Fn::GetAtt"][0] == group_id
                   and r["Properties"]["SourceSecurityGroupId"]["Fn::GetAtt"][0] == group_id]
        egress = [r for r in template["Resources"].values() if r["Type"] == "AWS::EC2::SecurityGroupEgress"
                  and r["Properties"].get("IpProtocol") == "-1"
                  and r["Properties"]["GroupId"]["Fn::GetAtt"][0] == group_id
                  and r["Properties"]["DestinationSecurityGroupId"]["Fn::GetAtt"][0] == group_id]
        assert ingress and egress, name


def test_every_group_mounts_the_network_file_system_at_fsx(synth: dict[str, Any]) -> None:
    for name in STACKS:
        template = synth["templates"][name]
        _, cluster = _one_cluster(template)
        file_system = next(k for k, v in template["Resources"].items() if v["Type"] == "AWS::FSx::FileSystem")
        for group in cluster["Properties"]["InstanceGroups"]:
            [fsx] = [c["FsxLustreConfig"] for c in group["InstanceStorageConfigs"] if "FsxLustreConfig" in c]
            assert fsx["MountPath"] == "/fsx"
            assert fsx["MountName"] == {"Fn::GetAtt": [file_system, "LustreMountName"]}
            assert {"Ref": file_system} in fsx["DnsName"]["Fn::Join"][1]


def test_slurm_groups_carry_node_types_partitions_plan_and_health_checks(synth: dict[str, Any]) -> None:
    _, cluster = _one_cluster(synth["templates"]["HyperPodSlurm"])
    props = cluster["Properties"]
    assert props["Orchestrator"] == {"Slurm": {}}
    assert props["NodeRecovery"] == "Automatic"
    groups = {g["InstanceGroupName"]: g for g in props["InstanceGroups"]}
    assert {n: g["SlurmConfig"] for n, g in groups.items()} == {
        "controller": {"NodeType": "Controller"}, "login": {"NodeType": "Login"},
        "train": {"NodeType": "Compute", "PartitionNames": ["train"]},
        "reserved": {"NodeType": "Compute", "PartitionNames": ["reserved"]}}
    assert groups["reserved"]["TrainingPlanArn"] == PLAN_ARN and "TrainingPlanArn" not in groups["train"]
    # GPU groups: both single-node deep health checks; CPU groups: none.
    assert groups["train"]["OnStartDeepHealthChecks"] == groups["reserved"]["OnStartDeepHealthChecks"] == [
        "InstanceStress", "InstanceConnectivity"]
    assert "OnStartDeepHealthChecks" not in groups["controller"] and "OnStartDeepHealthChecks" not in groups["login"]
    assert {"EbsVolumeConfig": {"VolumeSizeInGB": 500}} in groups["train"]["InstanceStorageConfigs"]
    assert groups["train"]["ThreadsPerCore"] == 1


def test_lifecycle_script_runs_on_init_complete_from_the_job_buckets_own_prefix(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodSlurm"]
    _, cluster = _one_cluster(template)
    bucket = next(k for k, v in template["Resources"].items() if v["Type"] == "AWS::S3::Bucket" and "Checkpoints" in k)
    for group in cluster["Properties"]["InstanceGroups"]:
        life = group["LifeCycleConfig"]
        assert life["OnInitComplete"] == "on_init_complete.sh" and "OnCreate" not in life
        assert life["SourceS3Uri"] == {"Fn::Join": ["", ["s3://", {"Ref": bucket}, "/hyperpod-lifecycle/"]]}
    statements = _policy(template)["Statement"]
    read = next(s for s in statements if s["Sid"] == "LifecycleScriptRead")
    assert read["Action"] == "s3:GetObject"
    assert read["Resource"] == {"Fn::Join": ["", [{"Fn::GetAtt": [bucket, "Arn"]}, "/hyperpod-lifecycle/*"]]}
    # without a script: HyperPod's bootstrap alone, and no read grant on the prefix
    _, default_cluster = _one_cluster(synth["templates"]["TrainingNetworkStack"])
    assert all("LifeCycleConfig" not in g for g in default_cluster["Properties"]["InstanceGroups"])
    assert not any(s["Sid"] == "LifecycleScriptRead" for s in _policy(synth["templates"]["TrainingNetworkStack"])["Statement"])


def test_eks_cluster_names_the_platforms_eks_cluster_and_no_slurm(synth: dict[str, Any]) -> None:
    _, cluster = _one_cluster(synth["templates"]["HyperPodEks"])
    assert cluster["Properties"]["Orchestrator"] == {"Eks": {"ClusterArn": EKS_ARN}}
    assert all("SlurmConfig" not in g for g in cluster["Properties"]["InstanceGroups"])


def test_the_default_app_builds_one_controller_and_the_networks_compute_nodes(synth: dict[str, Any]) -> None:
    _, cluster = _one_cluster(synth["templates"]["TrainingNetworkStack"])
    groups = [(g["InstanceGroupName"], g["InstanceType"], g["InstanceCount"], g["SlurmConfig"]["NodeType"])
              for g in cluster["Properties"]["InstanceGroups"]]
    assert groups == [("controller", "ml.m5.2xlarge", 1, "Controller"), ("compute", "ml.p4d.24xlarge", 4, "Compute")]
    assert "HyperPodClusterArn" in synth["templates"]["TrainingNetworkStack"]["Outputs"]


def test_hyperpod_endpoints_are_added_without_nat_and_not_with_it(synth: dict[str, Any]) -> None:
    def services(template: dict[str, Any]) -> set[str]:
        found = set()
        for r in template["Resources"].values():
            if r["Type"] == "AWS::EC2::VPCEndpoint" and r["Properties"].get("VpcEndpointType") == "Interface":
                found.add(str(r["Properties"]["ServiceName"]).rsplit(".", 1)[-1] if "messages" in str(
                    r["Properties"]["ServiceName"]) else ".".join(str(r["Properties"]["ServiceName"]).split(".")[3:]))
        return found

    slurm = services(synth["templates"]["HyperPodSlurm"])
    assert {"ssm", "ssmmessages", "ec2messages", "logs", "sts", "monitoring", "ecr.api", "ecr.dkr"} <= slurm
    assert services(synth["templates"]["HyperPodEks"]) == set()


# --- the role -----------------------------------------------------------------------------------


def _policy(template: dict[str, Any]) -> dict[str, Any]:
    [policy] = [v for k, v in template["Resources"].items() if v["Type"] == "AWS::IAM::ManagedPolicy" and k.startswith("HyperPodRole")]
    return dict(policy["Properties"]["PolicyDocument"])


def test_role_is_the_managed_instance_policy_scoped_to_this_cluster(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodSlurm"]
    _, cluster = _one_cluster(template)
    name = cluster["Properties"]["ClusterName"]
    statements = {s["Sid"]: s for s in _policy(template)["Statement"]}
    logs = json.dumps(statements["ClusterLogStreams"]["Resource"])
    assert f"/aws/sagemaker/Clusters/{name}/*:log-stream:*" in logs
    assert statements["ClusterMetrics"]["Condition"] == {"StringEquals": {"cloudwatch:namespace": "/aws/sagemaker/Clusters"}}
    assert "sagemaker-*" not in json.dumps(statements)  # not every sagemaker-* bucket, as the managed policy reads
    roles = [v for k, v in template["Resources"].items() if v["Type"] == "AWS::IAM::Role" and k.startswith("HyperPodRole")]
    assert all("ManagedPolicyArns" not in r["Properties"] for r in roles)  # no AWS managed policies


def test_parliament_finds_nothing_in_the_cluster_role_policy(synth: dict[str, Any]) -> None:
    from parliament import analyze_policy_string

    from smddp_infra.hyperpod.request import placeholder_resolver, resolved

    for name in STACKS:
        template = synth["templates"][name]
        document = resolved(_policy(template), placeholder_resolver(template))
        findings = analyze_policy_string(json.dumps(document)).findings
        assert [(f.issue, f.detail) for f in findings] == [], name


def test_iam5_acknowledgements_sit_on_the_role_policy_with_their_reasons(synth: dict[str, Any]) -> None:
    from aws_cdk import Validations

    stack = synth["stacks"]["HyperPodSlurm"]
    key = Validations.ACKNOWLEDGED_RULES_METADATA_KEY
    found = {}
    for construct in stack.node.find_all():
        if "/HyperPod/" in construct.node.path:
            for entry in construct.node.metadata:
                if entry.type == key:
                    found.update({rule: (construct.node.path, reason) for rule, reason in entry.data.items()})
    assert found and all("AwsSolutions-IAM5[Resource::" in rule for rule in found), sorted(found)
    assert all(path.endswith("/HyperPod/Role/Policy/Resource") and len(reason) >= 40 for path, reason in found.values())


# --- the checks that read it ----------------------------------------------------------------------


def test_packs_report_no_failure(synth: dict[str, Any]) -> None:
    report_file = Path(synth["out"]) / "validation-report.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else {"pluginReports": []}
    assert all(r.get("summary", {}).get("status") != "failure" for r in report["pluginReports"])


def test_templates_are_clean_under_cfn_lint(synth: dict[str, Any]) -> None:
    from cfnlint.api import ManualArgs, lint

    for name in STACKS:
        matches = lint(json.dumps(synth["templates"][name]), config=ManualArgs(regions=["us-east-1"]))
        assert [str(m) for m in matches] == [], name


def test_create_cluster_request_from_the_template_passes_botocores_validator(synth: dict[str, Any]) -> None:
    from smddp_infra.hyperpod.api import validate_create_cluster
    from smddp_infra.hyperpod.request import create_cluster_request, placeholder_resolver

    for name in STACKS:
        template = synth["templates"][name]
        _, cluster = _one_cluster(template)
        request = create_cluster_request(cluster["Properties"], placeholder_resolver(template))
        assert validate_create_cluster(request) == "", (name, validate_create_cluster(request))
        # and the validator is not a rubber stamp: a group without its role is refused
        broken = copy.deepcopy(request)
        del broken["InstanceGroups"][0]["ExecutionRole"]
        assert "ExecutionRole" in str(validate_create_cluster(broken))


def test_the_rules_give_no_finding_on_our_cluster_templates(synth: dict[str, Any], tmp_path: Path, capsys: Any) -> None:
    from smddp_infra.cli import main

    for name in STACKS:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(synth["templates"][name]))
        code = main(["check", "--json", str(path)])
        out = json.loads(capsys.readouterr().out)
        assert code == 0, out
        findings = [f for doc in (out if isinstance(out, list) else [out]) for f in _findings(doc)]
        assert [f for f in findings if f.get("severity") in ("error", "warning")] == [], (name, findings)


def _findings(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, dict):
        if "findings" in doc:
            return list(doc["findings"])
        return [f for v in doc.values() for f in _findings(v)]
    if isinstance(doc, list):
        return [f for v in doc for f in _findings(v)]
    return []


# --- the guard --------------------------------------------------------------------------------------


def test_guard_refuses_a_vpc_config_change(synth: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    old = synth["templates"]["HyperPodSlurm"]
    new = copy.deepcopy(old)
    logical_id, cluster = _one_cluster(new)
    cluster["Properties"]["VpcConfig"]["Subnets"] = ["subnet-0fedcba9876543210"]
    report = guard(old, new)
    assert report.blocked and report.exit_code == 1
    [finding] = [f for f in report.findings if f.first.logical_id == logical_id]
    assert finding.first.property == "VpcConfig" and "every running job" in finding.meaning
    assert "retained" in finding.meaning  # RETAIN: the old cluster stays, billed
    assert guard(old, new, accepted=True).exit_code == 0


def test_guard_refuses_an_orchestrator_change_to_eks(synth: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    old = synth["templates"]["HyperPodSlurm"]
    new = copy.deepcopy(old)
    _, cluster = _one_cluster(new)
    cluster["Properties"]["Orchestrator"] = {"Eks": {"ClusterArn": EKS_ARN}}
    report = guard(old, new)
    assert report.blocked and any(r.property == "Orchestrator.Eks" for f in report.findings for r in f.replacements)


def test_guard_lets_an_instance_count_change_through(synth: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    old = synth["templates"]["HyperPodSlurm"]
    new = copy.deepcopy(old)
    _, cluster = _one_cluster(new)
    for group in cluster["Properties"]["InstanceGroups"]:
        group["InstanceCount"] += 4
    report = guard(old, new)
    assert not report.findings and report.exit_code == 0


def test_guard_follows_a_replaced_subnet_to_the_cluster(synth: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    old = synth["templates"]["HyperPodSlurm"]
    new = copy.deepcopy(old)
    subnet = next(k for k, v in new["Resources"].items() if v["Type"] == "AWS::EC2::Subnet")
    new["Resources"][subnet]["Properties"]["CidrBlock"] = "10.0.64.0/20"
    logical_id, _ = _one_cluster(new)
    report = guard(old, new)
    assert any(f.first.logical_id == logical_id and f.first.caused_by for f in report.findings)


# --- one-line errors ----------------------------------------------------------------------------------


def _group(**kw: Any) -> Any:
    from smddp_infra import InstanceGroup

    base: dict[str, Any] = {"name": "gpu", "instance_type": "ml.p5.48xlarge", "count": 2, "slurm_node_type": "Compute"}
    base.update(kw)
    return InstanceGroup(**base)


def _controller() -> Any:
    from smddp_infra import InstanceGroup

    return InstanceGroup(name="controller", instance_type="ml.m5.2xlarge", count=1, slurm_node_type="Controller")


BAD = [
    # 64 characters that match ClusterName's pattern: its max of 63 is checked too (not a jsii ValidationFailed)
    ({"instance_groups": [_controller(), _group()], "cluster_name": "a-" * 31 + "bc"},
     "cluster_name must be 1 to 63 letters, digits and hyphens"),
    ({"instance_groups": [_controller(), _group(instance_type="ml.p5.24xlarge")]},
     "instance_groups[1].instance_type 'ml.p5.24xlarge' is not a HyperPod instance type (botocore"),
    ({"instance_groups": [_group()]},
     "instance_groups must hold exactly one group with slurm_node_type='Controller' (the Slurm head node), got 0: none"),
    ({"instance_groups": [_controller(), _group(name="c2", slurm_node_type="Controller")]},
     "got 2: instance_groups[0] 'controller', instance_groups[1] 'c2'"),
    # a p5 node takes 32 addresses on Slurm (one per network card): 8 of them and the controller
    # are 257, past the /24's 251 usable addresses (test_a_cluster_that_fits_the_small_subnet...: 7 fit)
    ({"instance_groups": [_controller(), _group(count=8)]},
     "instance_groups: 9 nodes need 257 private IPs"),
    ({"instance_groups": [_controller(), _group(training_plan_arn="arn:aws:sagemaker:us-east-1:123456789012:training-job/plan-abcdefgh")]},
     "instance_groups[1].training_plan_arn must be a SageMaker training plan ARN"),
    ({"orchestrator": "eks", "instance_groups": [_group(slurm_node_type=None)]},
     "eks_settings.control_plane_availability_zone is required when this app builds the EKS control plane"),
    ({"orchestrator": "eks", "eks_cluster_arn": EKS_ARN, "instance_groups": [_group()]},
     "instance_groups[0].slurm_node_type is for orchestrator='slurm' only"),
    ({"orchestrator": "k8s", "instance_groups": [_group()]}, "orchestrator must be 'slurm' or 'eks', got 'k8s'"),
    ({"instance_groups": [_controller(), _group(name="gpu_1")]}, "instance_groups[1].name must be 1 to 63 letters"),
    ({"instance_groups": [_controller(), _group(name="controller")]}, "instance_groups[1].name 'controller' is already"),
    ({"instance_groups": [_controller(), _group(threads_per_core=4)]}, "instance_groups[1].threads_per_core must be 1"),
    ({"instance_groups": [_controller(), _group(deep_health_checks=("Burn",))]}, "instance_groups[1].deep_health_checks must be"),
    ({"instance_groups": [_controller(), _group()], "mount_path": "fsx"}, "mount_path must be an absolute path"),
    ({"instance_groups": [_controller(), _group()], "lifecycle_script": "scripts/on_init.sh"}, "lifecycle_script must be a file name"),
    ({"instance_groups": _controller()}, "instance_groups must be a list of InstanceGroup, got one InstanceGroup"),
]


@pytest.fixture(scope="module")
def small_network() -> Any:
    from aws_cdk import App, Environment, Stack

    from smddp_infra import SmddpTrainingNetwork

    stack = Stack(App(context=cdk_context()), "Errors", env=Environment(region="us-east-1"))
    # a /24 VPC: its training subnet is a /24, 251 usable addresses
    return SmddpTrainingNetwork(stack, "Network", availability_zone="us-east-1a", read_mbps_per_gpu=10,
                                instance_type="ml.p5.48xlarge", instance_count=2, vpc_cidr="10.1.0.0/24")


@pytest.mark.parametrize(("props", "message"), BAD, ids=[m[:40] for _, m in BAD])
def test_bad_props_raise_one_line_naming_the_prop(small_network: Any, props: dict[str, Any], message: str) -> None:
    from smddp_infra import HyperPodCluster
    from smddp_infra.errors import ConfigError

    scope = small_network.node.scope
    with pytest.raises(ConfigError) as caught:
        HyperPodCluster(scope, f"Bad{abs(hash(message))}", network=small_network, **props)
    text = str(caught.value)
    assert message in text and "\n" not in text, text


def test_a_cluster_that_fits_the_small_subnet_is_accepted(small_network: Any) -> None:
    from smddp_infra import HyperPodCluster

    # 7 p5 nodes x 32 addresses + the controller's 1 + 17 for the file system and endpoints: 242 of 251
    cluster = HyperPodCluster(small_network.node.scope, "Fits", network=small_network, instance_groups=[_controller(), _group(count=7)])
    assert cluster.cluster_name.startswith("Errors-Fits-")


def test_network_and_parts_together_are_refused(small_network: Any) -> None:
    from smddp_infra import HyperPodCluster
    from smddp_infra.errors import ConfigError

    with pytest.raises(ConfigError, match="pass network, or its parts \\(job_bucket\\), not both"):
        HyperPodCluster(small_network.node.scope, "Both", network=small_network, job_bucket=small_network.checkpoint_bucket,
                        instance_groups=[_controller()])


def test_parts_for_embedders_build_the_same_cluster_shape(small_network: Any) -> None:
    from smddp_infra import HyperPodCluster

    cluster = HyperPodCluster(
        small_network.node.scope, "Parts", instance_groups=slurm_groups()[:3],
        training_subnet=small_network.training_subnet, security_groups=list(small_network.security_groups),
        job_bucket=small_network.checkpoint_bucket, checkpoint_prefix="checkpoints",
        file_system_dns_name="fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com", file_system_mount_name="abcdefgh")
    assert cluster.execution_role is not None and not cluster.interface_endpoints


def test_parts_map_onto_from_attributes_with_one_deprecation_warning() -> None:
    """The seven parts props and TrainingNetwork.from_attributes build the same cluster (same template)."""
    import warnings

    from aws_cdk import App, Environment, Stack, assertions, aws_ec2 as ec2, aws_s3 as s3

    from smddp_infra import HyperPodCluster, TrainingNetwork

    def build(parts: bool) -> dict[str, Any]:
        stack = Stack(App(context=cdk_context()), "Imported", env=Environment(region="us-east-1"))
        subnet = ec2.Subnet.from_subnet_attributes(stack, "Subnet", subnet_id="subnet-0aa11bb22cc33dd44",
                                                   availability_zone="us-east-1a", ipv4_cidr_block="10.0.0.0/22",
                                                   route_table_id="rtb-0aa11bb22cc33dd44")
        group = ec2.SecurityGroup.from_security_group_id(stack, "Efa", "sg-0123456789abcdef0")
        bucket = s3.Bucket.from_bucket_name(stack, "Jobs", "acme-jobs")
        given = dict(training_subnet=subnet, security_groups=[group], job_bucket=bucket, checkpoint_prefix="checkpoints",
                     file_system_id="fs-0123456789abcdef0", file_system_dns_name="fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com",
                     file_system_mount_name="abcdefgh")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if parts:
                HyperPodCluster(stack, "HyperPod", instance_groups=slurm_groups()[:3], **given)  # type: ignore[arg-type]
            else:
                network = TrainingNetwork.from_attributes(stack, "Network", **given)  # type: ignore[arg-type]
                HyperPodCluster(stack, "HyperPod", instance_groups=slurm_groups()[:3], network=network)
        deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
        assert len(deprecations) == (1 if parts else 0)
        return assertions.Template.from_stack(stack).to_json()  # type: ignore[no-any-return]

    assert build(parts=True) == build(parts=False)


def test_a_network_that_is_not_an_itrainingnetwork_is_one_line(small_network: Any) -> None:
    from smddp_infra import HyperPodCluster
    from smddp_infra.errors import ConfigError

    with pytest.raises(ConfigError, match="network must be an ITrainingNetwork .*got VpcLike"):
        HyperPodCluster(small_network.node.scope, "NotANetwork", network=type("VpcLike", (), {})(),  # type: ignore[arg-type]
                        instance_groups=[_controller()])


def test_settings_parse_the_hyperpod_key() -> None:
    from smddp_infra.errors import ConfigError
    from smddp_infra.settings import NetworkSettings

    assert NetworkSettings.from_context(cdk_context()).hyperpod is False
    assert NetworkSettings.from_context(cdk_context(**{"smddp:hyperpod": "true"})).hyperpod is True
    with pytest.raises(ConfigError, match="smddp:hyperpod must be true or false, got 'yes'"):
        NetworkSettings.from_context(cdk_context(**{"smddp:hyperpod": "yes"}))


def test_a_lifecycle_script_outside_a_sagemaker_bucket_is_a_warning_naming_the_fix(synth: dict[str, Any]) -> None:
    """May fail, so a warning (not an error): the CreateCluster reference asks for s3://sagemaker- paths."""
    from smddp_infra.constructs.hyperpod import WARN_LIFECYCLE_BUCKET

    def warnings(name: str) -> list[str]:
        stack = synth["stacks"][name]
        return [str(e.data) for c in stack.node.find_all() for e in c.node.metadata
                if e.type == "aws:cdk:warning" and WARN_LIFECYCLE_BUCKET in str(e.data)]

    [warning] = warnings("HyperPodSlurm")
    assert "lifecycle_bucket=" in warning and "UNCONFIRMED" in warning
    assert warnings("TrainingNetworkStack") == []  # no script, no warning


def test_on_eks_the_node_role_lets_the_cni_kubelet_and_pod_identity_work_and_on_slurm_not(synth: dict[str, Any]) -> None:
    """EKS nodes' agents use the instance role: the VPC CNI's interface actions, image pulls from
    ECR, and Pod Identity on the ONE EKS cluster (not "*"); a Slurm cluster gets none of it."""
    def sids(name: str) -> dict[str, Any]:
        return {s["Sid"]: s for s in _policy(synth["templates"][name])["Statement"]}

    eks, slurm = sids("HyperPodEks"), sids("HyperPodSlurm")
    wanted = {"EksNodeDescribe", "EksPodInterfaces", "EksAttachPodInterfaces", "EksImageRegistryToken", "EksImagePull",
              "EksPodIdentity"}
    assert wanted <= set(eks) and not wanted & set(slurm)
    identity = eks["EksPodIdentity"]
    assert identity["Action"] == "eks-auth:AssumeRoleForPodIdentity" and "cluster/" in json.dumps(identity["Resource"])
    assert "ecr:BatchGetImage" in eks["EksImagePull"]["Action"] and ":repository/*" in json.dumps(eks["EksImagePull"]["Resource"])
