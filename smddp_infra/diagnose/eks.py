"""What an EKS-orchestrated HyperPod cluster needs from its EKS cluster, read from the account.

The live half of SMDDP-EKS1/EKS2 (:mod:`smddp_infra.rules.eks_rules` judges a template): given an
EKS cluster ARN (``DescribeCluster``'s ``Orchestrator.Eks.ClusterArn``), two read-only calls,
``eks:DescribeCluster`` and ``eks:ListAddons``, and findings in diagnose's format
(:class:`~smddp_infra.diagnose.report.Item`). Facts and their sources: :mod:`smddp_infra.hyperpod.eks`.

- SMDDP-EKS1 (error): authentication mode ``CONFIG_MAP`` (HyperPod supports API and API_AND_CONFIG_MAP).
- SMDDP-EKS2 (warning): the private API endpoint is off (nodes without a NAT cannot register).
- SMDDP-EKS3 (warning): the HyperPod training operator add-on without an add-on it needs (the Pod
  Identity Agent; cert-manager, which may also be installed by Helm: then say so and ignore it).
- SMDDP-EKS4 (info): an add-on HyperPod's features use is not installed, or a value was not reported.
Not wired into the CLI here (``diagnose --cluster`` calls :func:`diagnose_eks_cluster`).
"""

from __future__ import annotations

from typing import Any, Optional

from smddp_infra.account.session import Account, NotFoundError
from smddp_infra.diagnose.report import Item
from smddp_infra.errors import ConfigError
from smddp_infra.hyperpod import eks as facts

#: The read-only actions this reader calls (for diagnose's policy).
ACTIONS = ("eks:DescribeCluster", "eks:ListAddons")
SOURCE = "eks"


def diagnose_eks_cluster(account: Account, cluster_arn: str, *, what: str = "eks cluster",
                         training_operator_addon: str = facts.TRAINING_OPERATOR_ADDON,
                         cert_manager_addon: str = facts.CERT_MANAGER_ADDON) -> list[Item]:
    """Findings about the EKS cluster ``cluster_arn`` orchestrating a HyperPod cluster (read-only)."""
    name = facts.cluster_name_of_arn(cluster_arn) if isinstance(cluster_arn, str) else None
    if name is None:
        raise ConfigError(f"{what} must be an EKS cluster ARN (arn:aws:eks:<region>:<account>:cluster/<name>), got {cluster_arn!r}")
    try:
        cluster: dict[str, Any] = account.call("eks", "DescribeCluster", what, name=name)["cluster"]
    except NotFoundError:
        return [Item("SMDDP-EKS1", "error", cluster_arn, f"EKS cluster {name} does not exist in {account.region}: the "
                     "HyperPod cluster's orchestrator is gone; HyperPod cannot schedule on it", SOURCE)]
    items = _authentication(cluster, cluster_arn) + _endpoint(cluster, cluster_arn)
    try:
        addons = set(account.pages("eks", "ListAddons", "addons", what, clusterName=name))
    except NotFoundError:  # the cluster was just described: the endpoint does not answer ListAddons
        return items + [Item("SMDDP-EKS4", "info", cluster_arn, f"eks:ListAddons on {name} answered 'not found': its add-ons "
                             "(Pod Identity Agent, cert-manager, training operator) are not evaluated", SOURCE)]
    items += _addons(addons, cluster_arn, name, training_operator_addon, cert_manager_addon)
    return items


def _authentication(cluster: dict[str, Any], arn: str) -> list[Item]:
    mode: Optional[str] = (cluster.get("accessConfig") or {}).get("authenticationMode")
    if mode is None:
        return [Item("SMDDP-EKS4", "info", arn, "DescribeCluster reported no accessConfig.authenticationMode: whether "
                     "HyperPod can use the cluster (API or API_AND_CONFIG_MAP) is not evaluated", SOURCE)]
    if mode in facts.HYPERPOD_AUTHENTICATION_MODES:
        return []
    return [Item("SMDDP-EKS1", "error", arn,
                 f"EKS cluster {cluster.get('name')} is in authentication mode {mode}: SageMaker HyperPod supports API and "
                 "API_AND_CONFIG_MAP only", SOURCE,
                 console="EKS console > the cluster > Access > Manage access > API and ConfigMap",
                 cli=f"aws eks update-cluster-config --name {cluster.get('name')} "
                     "--access-config authenticationMode=API_AND_CONFIG_MAP",
                 evidence=(f"accessConfig.authenticationMode={mode}",))]


def _endpoint(cluster: dict[str, Any], arn: str) -> list[Item]:
    vpc = cluster.get("resourcesVpcConfig") or {}
    if vpc.get("endpointPrivateAccess") is not False:
        return []
    return [Item("SMDDP-EKS2", "warning", arn,
                 f"EKS cluster {cluster.get('name')} has its private API endpoint off: HyperPod nodes in a private subnet "
                 "register only through the public endpoint, which needs a NAT gateway admitted by publicAccessCidrs",
                 SOURCE, cli=f"aws eks update-cluster-config --name {cluster.get('name')} "
                             "--resources-vpc-config endpointPrivateAccess=true",
                 evidence=("resourcesVpcConfig.endpointPrivateAccess=false",))]


def _addons(addons: set[str], arn: str, name: str, operator: str, cert_manager: str) -> list[Item]:
    items: list[Item] = []
    evidence = (f"add-ons: {', '.join(sorted(addons)) or 'none'}",)
    if operator in addons:
        if facts.POD_IDENTITY_AGENT_ADDON not in addons:
            items.append(Item("SMDDP-EKS3", "warning", arn,
                              f"EKS cluster {name} has the HyperPod training operator add-on without "
                              f"{facts.POD_IDENTITY_AGENT_ADDON}: the operator's pod identity role is never issued "
                              "credentials (\"Installing the training operator\", prerequisites)", SOURCE,
                              cli=f"aws eks create-addon --cluster-name {name} --addon-name {facts.POD_IDENTITY_AGENT_ADDON}",
                              evidence=evidence))
        if cert_manager not in addons:
            items.append(Item("SMDDP-EKS3", "warning", arn,
                              f"EKS cluster {name} has the HyperPod training operator add-on and no {cert_manager} add-on: "
                              "the operator needs cert-manager; ignore this if cert-manager is installed with Helm "
                              "(not evaluated: diagnose reads add-ons only)", SOURCE, evidence=evidence))
    else:
        items.append(Item("SMDDP-EKS4", "info", arn,
                          f"EKS cluster {name} has no HyperPod training operator add-on ({operator}): optional; jobs "
                          "run with the training operators of HyperPod's dependencies chart", SOURCE, evidence=evidence))
    return items


__all__ = ["ACTIONS", "diagnose_eks_cluster"]
