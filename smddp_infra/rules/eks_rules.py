"""SMDDP-EKS1 / EKS2: a HyperPod cluster orchestrated by an EKS cluster of the same template.

HyperPod joins its nodes to the EKS cluster named in ``Orchestrator.Eks.ClusterArn``. When that
ARN is the ``Fn::GetAtt ... Arn`` of an ``AWS::EKS::Cluster`` in the template, what the template
writes decides two things HyperPod needs (facts in :mod:`smddp_infra.hyperpod.eks`):

* EKS1 (error): the EKS cluster's authentication mode is ``CONFIG_MAP``, written or by default
  (no ``AccessConfig.AuthenticationMode``: CreateCluster's default when created by
  CloudFormation, botocore's ``eks`` model). HyperPod supports ``API`` and ``API_AND_CONFIG_MAP``
  only (SageMaker developer guide, "Getting started with Amazon EKS support in SageMaker
  HyperPod"), and CreateCluster of the HyperPod cluster cannot create its access entries.
* EKS2 (warning): the EKS cluster's private API endpoint is off (``EndpointPrivateAccess`` false or
  absent, the API's default): the nodes in HyperPod's private subnet reach the API server only
  through the public endpoint, i.e. only with a NAT gateway and public-access CIDRs that admit
  its address ("Deploy private clusters with limited internet access": private access is required
  for nodes to register without outbound internet). Depends on the network's egress, so a warning.

An EKS cluster named by a literal ARN (the platform's) is not judged here: ``diagnose`` reads its
mode and add-ons from the account (:mod:`smddp_infra.diagnose.eks`).
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.model import NO_VALUE, Resource, World, is_known

HYPERPOD = "AWS::SageMaker::Cluster"
EKS = "AWS::EKS::Cluster"


def _pairs(world: World) -> Iterable[tuple[Resource, Resource]]:
    """(HyperPod cluster, the template's EKS cluster it is orchestrated by)."""
    for hyperpod in world.of_type(HYPERPOD):
        arn = world.raw(hyperpod, "Orchestrator", "Eks", "ClusterArn")
        eks = _eks_of(world, arn)
        if eks is not None:
            yield hyperpod, eks


def _eks_of(world: World, arn: Any) -> Optional[Resource]:
    if isinstance(arn, dict) and "Fn::GetAtt" in arn:
        target = arn["Fn::GetAtt"]
        name = target[0] if isinstance(target, list) and target else str(target).split(".", 1)[0]
        resource = world.resources.get(str(name))
        if resource is not None and resource.type == EKS:
            return resource
    return None


def check_config_map(world: World) -> list[Finding]:
    findings = []
    for hyperpod, eks in _pairs(world):
        mode = world.get(eks, "AccessConfig", "AuthenticationMode")
        written = mode is not NO_VALUE
        if written and (not is_known(mode) or mode != "CONFIG_MAP"):
            continue
        how = "AuthenticationMode CONFIG_MAP" if written else "no AccessConfig.AuthenticationMode (CONFIG_MAP, the API's default)"
        findings.append(EKS_CONFIG_MAP.finding(
            eks.logical_id,
            f"{eks.logical_id} orchestrates HyperPod cluster {hyperpod.logical_id} and has {how}: HyperPod needs API or "
            "API_AND_CONFIG_MAP; write AccessConfig.AuthenticationMode API",
            "AccessConfig", "AuthenticationMode"))
    return findings


def check_private_endpoint(world: World) -> list[Finding]:
    findings = []
    for hyperpod, eks in _pairs(world):
        private = world.get(eks, "ResourcesVpcConfig", "EndpointPrivateAccess")
        if private is not NO_VALUE and (not is_known(private) or private in (True, "true", "True")):
            continue
        findings.append(EKS_NO_PRIVATE_ENDPOINT.finding(
            eks.logical_id,
            f"{eks.logical_id} orchestrates HyperPod cluster {hyperpod.logical_id} with its private API endpoint off: "
            "the nodes register only through the public endpoint, which a private subnet reaches only through a NAT "
            "gateway admitted by PublicAccessCidrs; write ResourcesVpcConfig.EndpointPrivateAccess true",
            "ResourcesVpcConfig", "EndpointPrivateAccess"))
    return findings


EKS_CONFIG_MAP = Rule(
    id="SMDDP-EKS1",
    severity=Severity.ERROR,
    cfn_lint_id="E9501",
    title="The EKS cluster of a HyperPod cluster is in CONFIG_MAP authentication mode (written, or by default)",
    explanation="Write AccessConfig.AuthenticationMode API (or API_AND_CONFIG_MAP) on the AWS::EKS::Cluster.",
    symptom="HyperPod cannot use the EKS cluster: its cluster creation fails",
    check=check_config_map,
    source=("SageMaker developer guide, 'Getting started with Amazon EKS support in SageMaker HyperPod', Requirements: "
            "the authentication modes of an Amazon EKS cluster supported by SageMaker HyperPod are API and "
            "API_AND_CONFIG_MAP. botocore eks model, CreateAccessConfigRequest.authenticationMode: the default is "
            "CONFIG_MAP when the cluster is created with the EKS API, the SDKs or CloudFormation."),
)

EKS_NO_PRIVATE_ENDPOINT = Rule(
    id="SMDDP-EKS2",
    severity=Severity.WARNING,
    cfn_lint_id="W9502",
    title="The EKS cluster of a HyperPod cluster has no private API endpoint",
    explanation="Write ResourcesVpcConfig.EndpointPrivateAccess true on the AWS::EKS::Cluster.",
    symptom="HyperPod nodes in a private subnet without a NAT gateway cannot register with the cluster",
    check=check_private_endpoint,
    source=("Amazon EKS User Guide, 'Deploy private clusters with limited internet access': the cluster must have "
            "endpoint private access enabled for nodes to register with the cluster endpoint. botocore eks model, "
            "VpcConfigRequest.endpointPrivateAccess: the default is false; with private access disabled, "
            "publicAccessCidrs must include the nodes' addresses."),
)

RULES = (EKS_CONFIG_MAP, EKS_NO_PRIVATE_ENDPOINT)
