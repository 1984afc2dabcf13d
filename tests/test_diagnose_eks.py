"""diagnose's EKS reader: moto's server for what it implements (DescribeCluster, a missing cluster),
botocore's Stubber for what moto 5 lacks (accessConfig in DescribeCluster, ListAddons)."""

from __future__ import annotations

from typing import Any

import pytest

from _moto_server import moto_server
from smddp_infra.account.session import Account
from smddp_infra.diagnose.eks import diagnose_eks_cluster

REGION = "us-east-1"
ARN = "arn:aws:eks:us-east-1:123456789012:cluster/ml-platform"


def _stubbed(cluster: dict[str, Any], addons: list[str], cni_version: str = "v1.19.2-eksbuild.1") -> tuple[Account, Any]:
    import botocore.session
    from botocore.stub import Stubber

    client = botocore.session.get_session().create_client("eks", region_name=REGION, aws_access_key_id="x",
                                                           aws_secret_access_key="x")
    stub = Stubber(client)
    stub.add_response("describe_cluster", {"cluster": {"name": "ml-platform", "arn": ARN, **cluster}},
                      {"name": "ml-platform"})
    stub.add_response("list_addons", {"addons": addons}, {"clusterName": "ml-platform"})
    if "vpc-cni" in addons:
        stub.add_response("describe_addon", {"addon": {"addonName": "vpc-cni", "clusterName": "ml-platform",
                                                       "addonVersion": cni_version}},
                          {"clusterName": "ml-platform", "addonName": "vpc-cni"})
    stub.activate()
    return Account(region=REGION, clients={"eks": client}), stub


def _rules(items: list[Any]) -> list[tuple[str, str]]:
    return [(i.rule_id, i.severity) for i in items]


def test_an_api_mode_private_cluster_with_the_operator_and_its_addons_has_only_no_findings() -> None:
    account, stub = _stubbed({"accessConfig": {"authenticationMode": "API"},
                              "resourcesVpcConfig": {"endpointPrivateAccess": True}},
                             ["eks-pod-identity-agent", "cert-manager", "amazon-sagemaker-hyperpod-training-operator", "vpc-cni"])
    assert diagnose_eks_cluster(account, ARN) == []
    stub.assert_no_pending_responses()
    assert account.calls == ["eks:DescribeCluster", "eks:ListAddons", "eks:DescribeAddon"]


@pytest.mark.parametrize(("version", "expected"), [
    ("v1.18.2-eksbuild.1", [("SMDDP-EKS5", "error")]),   # one patch below HyperPod's minimum
    ("v1.18.3-eksbuild.1", []),                          # the minimum itself
    ("v1.9.0-eksbuild.1", [("SMDDP-EKS5", "error")]),    # compared as numbers, not text
    ("v1.20.0", []),
    ("latest", [("SMDDP-EKS4", "info")]),                # not a version: not evaluated
])
def test_the_vpc_cni_add_on_below_1_18_3_is_an_error_naming_the_version(version: str, expected: list[Any]) -> None:
    account, stub = _stubbed({"accessConfig": {"authenticationMode": "API"}, "resourcesVpcConfig": {"endpointPrivateAccess": True}},
                             ["eks-pod-identity-agent", "cert-manager", "amazon-sagemaker-hyperpod-training-operator", "vpc-cni"],
                             cni_version=version)
    items = diagnose_eks_cluster(account, ARN)
    assert _rules(items) == expected
    if expected == [("SMDDP-EKS5", "error")]:
        assert version in items[0].message and "1.18.3 or later" in items[0].message and "update-addon" in str(items[0].cli)


def test_a_self_managed_vpc_cni_is_not_evaluated_and_not_read() -> None:
    account, stub = _stubbed({"accessConfig": {"authenticationMode": "API"}, "resourcesVpcConfig": {"endpointPrivateAccess": True}},
                             ["eks-pod-identity-agent", "cert-manager", "amazon-sagemaker-hyperpod-training-operator"])
    items = diagnose_eks_cluster(account, ARN)
    assert _rules(items) == [("SMDDP-EKS4", "info")] and "vpc-cni" in items[0].message
    assert "eks:DescribeAddon" not in account.calls


def test_config_map_is_an_error_with_the_command_that_fixes_it() -> None:
    account, _ = _stubbed({"accessConfig": {"authenticationMode": "CONFIG_MAP"},
                           "resourcesVpcConfig": {"endpointPrivateAccess": True}}, [])
    items = diagnose_eks_cluster(account, ARN)
    assert _rules(items) == [("SMDDP-EKS1", "error"), ("SMDDP-EKS4", "info"), ("SMDDP-EKS4", "info")]
    assert "authenticationMode=API_AND_CONFIG_MAP" in str(items[0].cli)


def test_operator_without_the_pod_identity_agent_and_cert_manager_is_two_warnings() -> None:
    account, _ = _stubbed({"accessConfig": {"authenticationMode": "API_AND_CONFIG_MAP"},
                           "resourcesVpcConfig": {"endpointPrivateAccess": False}},
                          ["amazon-sagemaker-hyperpod-training-operator"])
    items = diagnose_eks_cluster(account, ARN)
    assert _rules(items) == [("SMDDP-EKS2", "warning"), ("SMDDP-EKS3", "warning"), ("SMDDP-EKS3", "warning"),
                             ("SMDDP-EKS4", "info")]
    assert "eks-pod-identity-agent" in items[1].message and "cert-manager" in items[2].message


def test_against_motos_server_a_cluster_without_access_config_is_not_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto 5's DescribeCluster reports no accessConfig and its server answers ListAddons with a 404:
    the mode and the add-ons are 'not evaluated' (info), never guessed."""
    import boto3

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with moto_server(reset=True) as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        boto3.client("eks", region_name=REGION).create_cluster(
            name="ml-platform", roleArn="arn:aws:iam::123456789012:role/eks",
            resourcesVpcConfig={"subnetIds": ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"]})
        account = Account(region=REGION)
        items = diagnose_eks_cluster(account, ARN)
        assert account.calls == ["eks:DescribeCluster", "eks:ListAddons"]
        assert _rules(items) == [("SMDDP-EKS4", "info"), ("SMDDP-EKS4", "info")]
        assert "authenticationMode" in items[0].message and "add-ons" in items[1].message
        assert all("\n" not in i.message for i in items)
        missing = diagnose_eks_cluster(Account(region=REGION), "arn:aws:eks:us-east-1:123456789012:cluster/gone")
        assert _rules(missing) == [("SMDDP-EKS1", "error")] and "does not exist" in missing[0].message


def test_a_bad_arn_is_one_line() -> None:
    from smddp_infra.errors import ConfigError

    with pytest.raises(ConfigError, match=r"must be an EKS cluster ARN .*got 'ml-platform'$"):
        diagnose_eks_cluster(Account(region=REGION), "ml-platform")
