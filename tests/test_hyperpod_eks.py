"""HyperPod on EKS: the control plane this app builds, what HyperPod needs on any EKS cluster, and
the one-line refusals. ONE app is synthesized for the module (tests/_hyperpod_apps.py): the built
control plane, the same network before it (the guard's old template) and an imported cluster,
under AwsSolutions, NIST 800-53 r5, HIPAA and SmddpChecks (a synth that finishes is a clean synth
under all four; what is acknowledged, and why, is in smddp_infra/constructs/acknowledgements.py)."""

from __future__ import annotations

import copy
import ipaddress
import json
from typing import Any

import pytest

from _hyperpod_apps import (ADMIN_ROLE_ARN, CHART_REPOSITORY, add_eks_built_stack, add_eks_imported_stack,
                            add_eks_network_only_stack, eks_network)

pytestmark = pytest.mark.slow

STACKS = ("HyperPodEksBuilt", "HyperPodEksBefore", "HyperPodEksImported")


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from aws_cdk import App, Validations
    from cdk_nag import AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks

    from smddp_infra.checks import SmddpChecks

    out = tmp_path_factory.mktemp("hyperpod-eks")
    app = App(outdir=str(out))
    stacks = {"HyperPodEksBuilt": add_eks_built_stack(app), "HyperPodEksBefore": add_eks_network_only_stack(app),
              "HyperPodEksImported": add_eks_imported_stack(app)}
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), SmddpChecks(app), NIST80053R5Checks(app), HIPAASecurityChecks(app))
    assembly = app.synth()
    templates = {name: assembly.get_stack_artifact(stack.artifact_id).template for name, stack in stacks.items()}
    messages = {name: assembly.get_stack_artifact(stack.artifact_id).messages for name, stack in stacks.items()}
    return {"templates": templates, "messages": messages, "out": out}


def _of(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def _one(template: dict[str, Any], kind: str) -> tuple[str, dict[str, Any]]:
    found = _of(template, kind)
    assert len(found) == 1, sorted(found)
    return next(iter(found.items()))


# --- the control plane ----------------------------------------------------------------------------


def test_one_native_eks_cluster_in_api_mode_private_pinned_and_retained(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodEksBuilt"]
    logical_id, cluster = _one(template, "AWS::EKS::Cluster")
    props = cluster["Properties"]
    assert props["AccessConfig"]["AuthenticationMode"] == "API"
    assert props["Version"] == "1.33"
    assert props["ResourcesVpcConfig"]["EndpointPrivateAccess"] is True
    assert props["ResourcesVpcConfig"]["EndpointPublicAccess"] is False
    assert cluster["DeletionPolicy"] == cluster["UpdateReplacePolicy"] == "Retain"
    assert not _of(template, "AWS::CloudFormation::CustomResource") and not any(
        v["Type"].startswith("Custom::AWSCDK-EKS-Cluster") for v in template["Resources"].values())
    assert logical_id == "HyperPodEksControlPlaneC013C58D"  # pinned: a new id replaces the cluster


def test_control_plane_subnets_are_in_two_azs_and_the_training_subnet_is_one_of_them(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodEksBuilt"]
    _, cluster = _one(template, "AWS::EKS::Cluster")
    refs = [s["Ref"] for s in cluster["Properties"]["ResourcesVpcConfig"]["SubnetIds"]]
    subnets = [template["Resources"][r]["Properties"] for r in refs]
    zones = {s.get("AvailabilityZoneId") or s.get("AvailabilityZone") for s in subnets}
    assert len(refs) == 2 and zones == {"use1-az4", "use1-az6"}
    assert "NetworkVpcTrainingSubnet1Subnet6ACD4CEA" in refs


def test_hyperpod_points_at_the_eks_cluster_and_waits_for_addons_and_chart(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodEksBuilt"]
    eks_id, _ = _one(template, "AWS::EKS::Cluster")
    _, hyperpod = _one(template, "AWS::SageMaker::Cluster")
    assert hyperpod["Properties"]["Orchestrator"] == {"Eks": {"ClusterArn": {"Fn::GetAtt": [eks_id, "Arn"]}}}
    needs = set(hyperpod["DependsOn"])
    addons = _of(template, "AWS::EKS::Addon")
    charts = [k for k, v in template["Resources"].items() if v["Type"] == "Custom::AWSCDK-EKS-HelmChart"]
    assert len(charts) == 1 and charts[0] in needs
    assert set(addons) <= needs


def test_addons_pod_identity_agent_first_then_cert_manager_then_the_operator_with_its_role(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodEksBuilt"]
    addons = {v["Properties"]["AddonName"]: (k, v) for k, v in _of(template, "AWS::EKS::Addon").items()}
    assert set(addons) == {"eks-pod-identity-agent", "cert-manager", "amazon-sagemaker-hyperpod-training-operator"}
    agent_id, _ = addons["eks-pod-identity-agent"]
    cert_id, _ = addons["cert-manager"]
    _, operator = addons["amazon-sagemaker-hyperpod-training-operator"]
    assert {agent_id, cert_id} <= set(operator["DependsOn"])
    [association] = operator["Properties"]["PodIdentityAssociations"]
    role = template["Resources"][association["RoleArn"]["Fn::GetAtt"][0]]
    statement = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert {"pods.eks.amazonaws.com"} == {s["Principal"]["Service"] for s in statement}
    assert {"sts:AssumeRole", "sts:TagSession"} == {s["Action"] for s in statement}
    assert all(a["Properties"]["PreserveOnDelete"] is True for _, a in addons.values())


def test_admin_role_gets_a_cluster_admin_access_entry(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodEksBuilt"]
    entries = [v["Properties"] for v in _of(template, "AWS::EKS::AccessEntry").values()
               if v["Properties"]["PrincipalArn"] == ADMIN_ROLE_ARN]
    [entry] = entries
    [policy] = entry["AccessPolicies"]
    assert policy["AccessScope"] == {"Type": "cluster"}
    assert "cluster-access-policy/AmazonEKSClusterAdminPolicy" in json.dumps(policy["PolicyArn"])


def test_chart_is_pinned_in_the_platforms_repository_and_retained(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodEksBuilt"]
    [chart] = [v for v in template["Resources"].values() if v["Type"] == "Custom::AWSCDK-EKS-HelmChart"]
    props = chart["Properties"]
    assert (props["Repository"], props["Version"], props["Release"], props["Namespace"]) == (
        CHART_REPOSITORY, "1.4.0", "hyperpod-dependencies", "kube-system")
    assert chart["DeletionPolicy"] == "Retain"


def test_private_nodes_get_eks_auth_eks_and_ec2_endpoints(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodEksBuilt"]
    names = [json.dumps(v["Properties"]["ServiceName"]) for v in _of(template, "AWS::EC2::VPCEndpoint").values()]
    for service in ("eks-auth", "eks", "ec2", "sagemaker.api"):
        assert any(n.endswith(f'.{service}"') or f".{service}\"" in n for n in names), service


def test_nodes_reach_the_private_api_endpoint_over_https_from_the_training_subnet(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodEksBuilt"]
    ingress = [v["Properties"] for v in _of(template, "AWS::EC2::SecurityGroupIngress").values()
               if v["Properties"].get("FromPort") == 443 and "ControlPlane" in json.dumps(v["Properties"]["GroupId"])]
    training = template["Resources"]["NetworkVpcTrainingSubnet1Subnet6ACD4CEA"]["Properties"]["CidrBlock"]
    assert [i["CidrIp"] for i in ingress] == [training]


# --- adding it to a deployed network replaces nothing ---------------------------------------------


def test_adding_the_eks_path_to_a_deployed_network_replaces_nothing(synth: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    before, after = synth["templates"]["HyperPodEksBefore"], synth["templates"]["HyperPodEksBuilt"]
    report = guard(before, after)
    assert not report.blocked, report.lines()
    for logical_id, resource in before["Resources"].items():
        if resource["Type"] in ("AWS::EC2::Subnet", "AWS::EC2::VPC", "AWS::FSx::FileSystem"):
            def untagged(props: dict[str, Any]) -> dict[str, Any]:  # the Name tag carries the stack's name
                return {k: v for k, v in props.items() if k != "Tags"}
            assert untagged(after["Resources"][logical_id]["Properties"]) == untagged(resource["Properties"]), logical_id
    # the control-plane subnet is the VPC's last /28, clear of the training subnet
    [new] = [v["Properties"] for k, v in _of(after, "AWS::EC2::Subnet").items() if k not in before["Resources"]]
    assert new["CidrBlock"] == "10.0.255.240/28"
    training = before["Resources"]["NetworkVpcTrainingSubnet1Subnet6ACD4CEA"]["Properties"]["CidrBlock"]
    assert not ipaddress.ip_network(new["CidrBlock"]).overlaps(ipaddress.ip_network(training))
    # and the guard is not a rubber stamp: moving the training subnet is refused
    moved = copy.deepcopy(after)
    moved["Resources"]["NetworkVpcTrainingSubnet1Subnet6ACD4CEA"]["Properties"]["CidrBlock"] = "10.0.64.0/20"
    assert guard(after, moved).blocked


def test_guard_refuses_moving_the_control_plane_subnet_and_follows_it_to_both_clusters(synth: dict[str, Any]) -> None:
    """SubnetIds of an EKS cluster are create-only: a new control-plane subnet replaces the EKS cluster,
    and with it the HyperPod cluster (Orchestrator.Eks); RETAIN keeps the old ones, billed."""
    from smddp_infra.review.replacement import guard

    old = synth["templates"]["HyperPodEksBuilt"]
    new = copy.deepcopy(old)
    [subnet_id] = [k for k, v in _of(new, "AWS::EC2::Subnet").items() if v["Properties"]["CidrBlock"] == "10.0.255.240/28"]
    new["Resources"][subnet_id]["Properties"]["CidrBlock"] = "10.0.255.224/28"
    report = guard(old, new)
    eks_id, _ = _one(old, "AWS::EKS::Cluster")
    hyperpod_id, _ = _one(old, "AWS::SageMaker::Cluster")
    blocked = {f.first.logical_id: f for f in report.findings}
    assert report.blocked and {subnet_id, eks_id, hyperpod_id} <= set(blocked)
    assert "a new EKS cluster" in blocked[eks_id].meaning and "retained" in blocked[eks_id].meaning


# --- an imported cluster --------------------------------------------------------------------------


def test_imported_cluster_gets_the_addons_on_its_name_and_no_control_plane(synth: dict[str, Any]) -> None:
    template = synth["templates"]["HyperPodEksImported"]
    assert not _of(template, "AWS::EKS::Cluster")
    addons = {v["Properties"]["AddonName"]: v["Properties"] for v in _of(template, "AWS::EKS::Addon").values()}
    assert set(addons) == {"eks-pod-identity-agent", "cert-manager", "amazon-sagemaker-hyperpod-training-operator",
                           "amazon-sagemaker-hyperpod-observability"}
    assert {a["ClusterName"] for a in addons.values()} == {"ml-platform"}
    _, hyperpod = _one(template, "AWS::SageMaker::Cluster")
    assert "cluster/ml-platform" in json.dumps(hyperpod["Properties"]["Orchestrator"])


def test_without_a_chart_a_warning_names_the_step(synth: dict[str, Any]) -> None:
    messages = [str(m.entry.data) for m in synth["messages"]["HyperPodEksImported"]]
    assert any("smddp:hyperpodEksChart" in m and "helm install hyperpod-dependencies" in m for m in messages), messages


# --- the checks that read it ----------------------------------------------------------------------


def test_templates_are_clean_under_cfn_lint(synth: dict[str, Any]) -> None:
    from cfnlint.api import ManualArgs, lint

    for name in STACKS:
        matches = lint(json.dumps(synth["templates"][name]), config=ManualArgs(regions=["us-east-1"]))
        assert [str(m) for m in matches] == [], name


def test_eks_requests_from_the_template_pass_botocores_validator(synth: dict[str, Any]) -> None:
    from smddp_infra.hyperpod.eks import EKS_OPERATIONS, eks_request, validate_eks_request
    from smddp_infra.hyperpod.request import placeholder_resolver

    seen = set()
    for name in ("HyperPodEksBuilt", "HyperPodEksImported"):
        template = synth["templates"][name]
        resolve = placeholder_resolver(template)
        for resource in template["Resources"].values():
            if resource["Type"] in EKS_OPERATIONS:
                operation, request = eks_request(resource["Type"], resource["Properties"], resolve)
                assert validate_eks_request(operation, request) == "", (name, operation, request)
                seen.add(operation)
                broken = {k: v for k, v in request.items() if k not in ("clusterName", "roleArn")}
                assert "Missing required parameter" in str(validate_eks_request(operation, broken))
    assert seen == {"CreateCluster", "CreateAddon", "CreateAccessEntry"}


def test_the_rules_give_no_finding_on_ours_and_an_error_once_it_is_config_map(synth: dict[str, Any]) -> None:
    from smddp_infra.rules import check_template

    template = synth["templates"]["HyperPodEksBuilt"]
    assert [f for f in check_template(template) if f.severity.value in ("error", "warning")] == []
    config_map = copy.deepcopy(template)
    eks_id, cluster = _one(config_map, "AWS::EKS::Cluster")
    cluster["Properties"]["AccessConfig"]["AuthenticationMode"] = "CONFIG_MAP"
    cluster["Properties"]["ResourcesVpcConfig"]["EndpointPrivateAccess"] = False
    found = sorted((f.rule_id, f.resource) for f in check_template(config_map) if f.severity.value != "info")
    assert found == [("SMDDP-EKS1", eks_id), ("SMDDP-EKS2", eks_id)]


def test_packs_report_no_failure(synth: dict[str, Any]) -> None:
    report_file = synth["out"] / "validation-report.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else {"pluginReports": []}
    assert all(r.get("summary", {}).get("status") != "failure" for r in report["pluginReports"])


# --- one-line refusals ----------------------------------------------------------------------------


def _build(**kwargs: Any) -> Any:
    from aws_cdk import App, Environment, Stack

    from smddp_infra import HyperPodCluster, InstanceGroup

    stack = Stack(App(), "S", env=Environment(region="us-east-1"))
    network = eks_network(stack, **kwargs.pop("network_extra", {}))
    other = kwargs.pop("other", None)
    if other is not None:
        kwargs["eks_cluster"] = other(stack, network)
    return HyperPodCluster(stack, "HyperPod", network=network, orchestrator=kwargs.pop("orchestrator", "eks"),
                           instance_groups=[InstanceGroup(name="gpu", instance_type="ml.p5.48xlarge", count=2)], **kwargs)


def _other_vpc(stack: Any, network: Any) -> Any:
    from aws_cdk import aws_ec2 as ec2, aws_eks_v2 as eks

    vpc = ec2.Vpc.from_vpc_attributes(stack, "Other", vpc_id="vpc-0123456789abcdef0", availability_zones=["us-east-1a"])
    return eks.Cluster.from_cluster_attributes(stack, "Elsewhere", cluster_name="other", vpc=vpc)


def _other_vpc_v1(stack: Any, network: Any) -> Any:
    """The older ``aws_eks`` module's import, which many platform apps still write."""
    from aws_cdk import aws_ec2 as ec2, aws_eks as eks

    vpc = ec2.Vpc.from_vpc_attributes(stack, "Other", vpc_id="vpc-0123456789abcdef0", availability_zones=["us-east-1a"])
    return eks.Cluster.from_cluster_attributes(stack, "Elsewhere", cluster_name="other", vpc=vpc)


def _same_vpc_v1(stack: Any, network: Any) -> Any:
    from aws_cdk import aws_eks as eks

    return eks.Cluster.from_cluster_attributes(stack, "Platform", cluster_name="ml-platform", vpc=network.vpc)


def test_an_aws_eks_v1_import_in_the_networks_vpc_gets_the_addons() -> None:
    cluster = _build(other=_same_vpc_v1)
    assert cluster.eks is not None and not cluster.eks.built and cluster.eks.cluster_name == "ml-platform"
    assert "eks-pod-identity-agent" in cluster.eks.addons


def _settings(**kw: Any) -> Any:
    from smddp_infra.hyperpod.eks import HyperPodEks

    return HyperPodEks(**kw)


@pytest.mark.parametrize("kwargs, message", [
    ({"other": _other_vpc}, "eks_cluster S/Elsewhere is in VPC vpc-0123456789abcdef0, not the training network's VPC S/Network/Network/Vpc"),
    ({"other": _other_vpc_v1}, "eks_cluster S/Elsewhere is in VPC vpc-0123456789abcdef0, not the training network's VPC S/Network/Network/Vpc"),
    ({"eks_cluster_arn": "arn:aws:eks:us-east-1:123456789012:cluster/ml", "eks_settings": "x"},
     "eks_settings must be a HyperPodEks(...), got str"),
    ({"eks_cluster_arn": "arn:aws:eks:us-east-1:123456789012:cluster/ml",
      "eks_settings": _settings(authentication_mode="CONFIG_MAP")},
     "eks_settings.authentication_mode is 'CONFIG_MAP': SageMaker HyperPod needs an EKS cluster in API or API_AND_CONFIG_MAP"),
    ({"eks_settings": _settings(control_plane_availability_zone="use1-az6", kubernetes_version="1.27")},
     "eks_settings.kubernetes_version must be a Kubernetes version SageMaker HyperPod supports (1.28,"),
    ({"eks_settings": _settings()}, "eks_settings.control_plane_availability_zone is required"),
    ({"eks_settings": _settings(control_plane_availability_zone="use1-az6", control_plane_subnet_cidr="10.0.0.0/28")},
     "eks.control_plane_subnet_cidr 10.0.0.0/28 overlaps the VPC's subnet"),
    ({"eks_cluster_arn": "arn:aws:eks:us-east-1:123456789012:cluster/ml",
      "eks_settings": _settings(dependencies_chart=__import__("smddp_infra.hyperpod.eks", fromlist=["x"]).DependenciesChart(
          repository=CHART_REPOSITORY, version="latest"))},
     "eks_settings.dependencies_chart.version must be an exact chart version like 1.2.3"),
    ({"eks_cluster_arn": "arn:aws:eks:us-east-1:123456789012:cluster/ml",
      "eks_settings": _settings(dependencies_chart=__import__("smddp_infra.hyperpod.eks", fromlist=["x"]).DependenciesChart(
          repository=CHART_REPOSITORY, version="1.0.0"))},
     "eks.dependencies_chart needs the EKS cluster's kubectl provider"),
    ({"orchestrator": "slurm", "eks_settings": _settings()}, "eks_settings are for orchestrator='eks' only"),
    # the control plane's second AZ, against the stack (the network trains in use1-az4 of us-east-1)
    ({"eks_settings": _settings(control_plane_availability_zone="use1-az4")},
     "eks_settings.control_plane_availability_zone 'use1-az4' is the training subnet's AZ: an EKS control plane "
     "needs subnets in at least 2 AZs"),
    ({"eks_settings": _settings(control_plane_availability_zone="use1-az3")},
     "eks_settings.control_plane_availability_zone 'use1-az3' cannot host an EKS control plane"),
    ({"eks_settings": _settings(control_plane_availability_zone="usw2-az1")},
     "eks_settings.control_plane_availability_zone must be an AZ ID of us-east-1 like use1-az1, got 'usw2-az1'"),
    ({"eks_settings": _settings(control_plane_availability_zone="us-west-2b")},
     "eks_settings.control_plane_availability_zone must be an Availability Zone of us-east-1"),
    ({"eks_settings": _settings(control_plane_availability_zone="second")},
     "eks_settings.control_plane_availability_zone must be an Availability Zone name like us-east-1b or an AZ ID"),
])
def test_bad_eks_input_is_one_line(kwargs: dict[str, Any], message: str) -> None:
    from smddp_infra.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        _build(**kwargs)
    text = str(caught.value)
    assert message in text and "\n" not in text, text


def test_an_imported_cluster_with_a_network_given_as_parts_gets_its_addons() -> None:
    """Embedders without SmddpTrainingNetwork pass parts: the imported cluster's VPC cannot be
    compared (not known here), the add-ons are still written, nothing is built."""
    from aws_cdk import App, Environment, Stack, aws_ec2 as ec2, aws_eks_v2 as eks, aws_s3 as s3

    from smddp_infra import HyperPodCluster, InstanceGroup

    stack = Stack(App(), "Parts", env=Environment(region="us-east-1"))
    subnet = ec2.Subnet.from_subnet_attributes(stack, "Subnet", subnet_id="subnet-0123456789abcdef0",
                                               availability_zone="us-east-1a", ipv4_cidr_block="10.0.0.0/20")
    group = ec2.SecurityGroup.from_security_group_id(stack, "Efa", "sg-0123456789abcdef0")
    platform = eks.Cluster.from_cluster_attributes(stack, "Platform", cluster_name="ml-platform")
    cluster = HyperPodCluster(stack, "HyperPod", orchestrator="eks", eks_cluster=platform,
                              instance_groups=[InstanceGroup(name="gpu", instance_type="ml.p5.48xlarge", count=2)],
                              training_subnet=subnet, security_groups=[group],
                              job_bucket=s3.Bucket.from_bucket_name(stack, "Jobs", "sagemaker-jobs"))
    assert cluster.eks is not None and not cluster.eks.built and cluster.eks_cluster is platform
    assert list(cluster.eks.addons) == ["eks-pod-identity-agent", "cert-manager", "amazon-sagemaker-hyperpod-training-operator"]
    assert cluster.eks.interface_endpoints == {}


def _eks_on_small_network(count: int) -> Any:
    """A HyperPod EKS cluster (add-ons on the platform's cluster by ARN) on a /24 VPC."""
    from aws_cdk import App, Environment, Stack

    from smddp_infra import HyperPodCluster, InstanceGroup, Placement, TrainingNetwork, Workload

    stack = Stack(App(), "Small", env=Environment(region="us-east-1"))
    network = TrainingNetwork(stack, "Network", workload=Workload(instance_type="ml.p5.48xlarge", instance_count=2,
                                                                  read_mbps_per_gpu=10),
                              placement=Placement(availability_zone="us-east-1a", vpc_cidr="10.1.0.0/24"))
    return network, lambda: HyperPodCluster(
        stack, "HyperPod", network=network, orchestrator="eks", ips_per_node=1,
        eks_cluster_arn="arn:aws:eks:us-east-1:123456789012:cluster/ml", eks_settings=_settings(),
        instance_groups=[InstanceGroup(name="gpu", instance_type="ml.p5.48xlarge", count=count)])


def test_the_subnet_check_counts_the_endpoints_eks_nodes_need() -> None:
    """The eks, eks-auth and ec2 endpoints take an address each in the training subnet: a cluster
    that fits only without them is refused in one line (AWS reserves 5 addresses per subnet)."""
    from smddp_infra.hyperpod import HYPERPOD_INTERFACE_ENDPOINTS
    from smddp_infra.errors import ConfigError
    from smddp_infra.hyperpod.eks import EKS_INTERFACE_ENDPOINTS
    from smddp_infra.facts.subnets import FILE_SYSTEM_IPS

    network, _ = _eks_on_small_network(1)
    placed = set(network.endpoint_services())
    endpoints = placed | set(HYPERPOD_INTERFACE_ENDPOINTS) | set(EKS_INTERFACE_ENDPOINTS)
    assert set(EKS_INTERFACE_ENDPOINTS) - placed, "the network must lack some EKS endpoint for this test"
    room = 2 ** (32 - 24) - 5 - FILE_SYSTEM_IPS - len(endpoints)  # nodes at one address each
    with pytest.raises(ConfigError, match=f"^instance_groups: {room + 1} nodes need {room + 1} private IPs"):
        _eks_on_small_network(room + 1)[1]()
    cluster = _eks_on_small_network(room)[1]()
    assert set(EKS_INTERFACE_ENDPOINTS) <= set(network.endpoint_services() or ()) | set(cluster.eks.interface_endpoints)


def test_eks_cluster_arn_is_the_cluster_the_nodes_join_and_none_on_slurm() -> None:
    """The public attribute is what ``Orchestrator.Eks.ClusterArn`` says: an imported cluster's ARN
    (a token), the ARN given; a Slurm cluster joins no EKS cluster."""
    from aws_cdk import App, Environment, Stack

    from _hyperpod_apps import EKS_ARN, slurm_groups
    from smddp_infra import HyperPodCluster

    imported = _build(other=_same_vpc_v1)
    stack = Stack.of(imported)
    assert stack.resolve(imported.eks_cluster_arn) == stack.resolve(imported.cluster.orchestrator)["eks"]["clusterArn"]
    assert "cluster/ml-platform" in json.dumps(stack.resolve(imported.eks_cluster_arn))
    assert _build(eks_cluster_arn=EKS_ARN).eks_cluster_arn == EKS_ARN
    slurm_stack = Stack(App(), "Slurm", env=Environment(region="us-east-1"))
    slurm = HyperPodCluster(slurm_stack, "HyperPod", network=eks_network(slurm_stack), instance_groups=slurm_groups())
    assert slurm.orchestrator == "slurm" and slurm.eks_cluster_arn is None
    with pytest.raises(AttributeError):
        slurm.eks_cluster_arn = EKS_ARN  # type: ignore[misc]  # read-only: the template is what it says
