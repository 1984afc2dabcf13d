"""SMDDP-EKS1/EKS2 over hand-written templates of the patterns platforms write: a HyperPod cluster
on an EKS cluster of the same template (API mode and private endpoint: no finding; CONFIG_MAP
written or by default: an error; private endpoint off: a warning), and one on a literal ARN (not
judged here). Our own synthesized template is judged in tests/test_hyperpod_eks.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from smddp_infra.rules import check_template

BASE: dict[str, Any] = {
    "Resources": {
        "Subnet": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": "vpc-0123456789abcdef0", "CidrBlock": "10.0.0.0/20",
                                                                "AvailabilityZone": "us-east-1a"}},
        "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "nodes", "VpcId": "vpc-0123456789abcdef0"}},
        "EksRole": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {}}},
        "Eks": {"Type": "AWS::EKS::Cluster", "Properties": {
            "RoleArn": {"Fn::GetAtt": ["EksRole", "Arn"]},
            "AccessConfig": {"AuthenticationMode": "API"},
            "ResourcesVpcConfig": {"SubnetIds": [{"Ref": "Subnet"}, "subnet-0fedcba9876543210"],
                                   "EndpointPrivateAccess": True, "EndpointPublicAccess": False}}},
        "HyperPod": {"Type": "AWS::SageMaker::Cluster", "Properties": {
            "InstanceGroups": [{"InstanceGroupName": "gpu", "InstanceType": "ml.g5.8xlarge", "InstanceCount": 1,
                                "ExecutionRole": "arn:aws:iam::123456789012:role/hp"}],
            "Orchestrator": {"Eks": {"ClusterArn": {"Fn::GetAtt": ["Eks", "Arn"]}}},
            "VpcConfig": {"Subnets": [{"Ref": "Subnet"}], "SecurityGroupIds": [{"Ref": "Group"}]}}},
    }
}


def _eks_findings(template: dict[str, Any]) -> list[Any]:
    return [f for f in check_template(template) if f.rule_id.startswith("SMDDP-EKS")]


def _with(**changes: Any) -> dict[str, Any]:
    template = copy.deepcopy(BASE)
    props = template["Resources"]["Eks"]["Properties"]
    for key, value in changes.items():
        if value is None:
            props.pop(key, None)
        else:
            props[key] = value
    return template


def test_api_mode_and_a_private_endpoint_draw_no_finding() -> None:
    assert _eks_findings(BASE) == []


@pytest.mark.parametrize("access", [{"AuthenticationMode": "CONFIG_MAP"}, None, {"BootstrapClusterCreatorAdminPermissions": True}])
def test_config_map_written_or_by_default_is_an_error_on_the_eks_cluster(access: Any) -> None:
    [finding] = _eks_findings(_with(AccessConfig=access))
    assert (finding.rule_id, finding.severity.value, finding.resource) == ("SMDDP-EKS1", "error", "Eks")
    assert "HyperPod cluster HyperPod" in finding.message and "API" in finding.message


def test_api_and_config_map_is_accepted() -> None:
    assert _eks_findings(_with(AccessConfig={"AuthenticationMode": "API_AND_CONFIG_MAP"})) == []


@pytest.mark.parametrize("private", [False, None])
def test_no_private_endpoint_is_a_warning(private: Any) -> None:
    vpc = copy.deepcopy(BASE["Resources"]["Eks"]["Properties"]["ResourcesVpcConfig"])
    if private is None:
        del vpc["EndpointPrivateAccess"]
    else:
        vpc["EndpointPrivateAccess"] = private
    [finding] = _eks_findings(_with(ResourcesVpcConfig=vpc))
    assert (finding.rule_id, finding.severity.value) == ("SMDDP-EKS2", "warning")


def test_a_mode_from_a_parameter_is_judged_per_assignment() -> None:
    template = _with(AccessConfig={"AuthenticationMode": {"Ref": "Mode"}})
    template["Parameters"] = {"Mode": {"Type": "String", "Default": "API", "AllowedValues": ["API", "CONFIG_MAP"]}}
    [finding] = _eks_findings(template)
    assert finding.rule_id == "SMDDP-EKS1" and {"Mode": "CONFIG_MAP"} in [dict(w) for w in finding.when]


def test_an_eks_cluster_named_by_a_literal_arn_is_not_judged_here() -> None:
    template = _with(AccessConfig={"AuthenticationMode": "CONFIG_MAP"})
    template["Resources"]["HyperPod"]["Properties"]["Orchestrator"] = {
        "Eks": {"ClusterArn": "arn:aws:eks:us-east-1:123456789012:cluster/ml-platform"}}
    assert _eks_findings(template) == []


def test_an_eks_cluster_no_hyperpod_uses_is_not_judged() -> None:
    template = _with(AccessConfig={"AuthenticationMode": "CONFIG_MAP"})
    del template["Resources"]["HyperPod"]
    assert _eks_findings(template) == []
