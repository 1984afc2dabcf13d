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
- SMDDP-EKS5 (error): the ``vpc-cni`` add-on is older than HyperPod's minimum, 1.18.3 (one more
  read, ``eks:DescribeAddon``, only when the add-on is installed; a self-managed CNI's version is
  not read: info).
Not wired into the CLI here (``diagnose --cluster`` calls :func:`diagnose_eks_cluster`).
"""

from __future__ import annotations

from typing import Any, Optional

from smddp_infra.account.session import Account, NotFoundError
from smddp_infra.diagnose.report import Item
from smddp_infra.errors import ConfigError
from smddp_infra.facts.arns import eks_cluster_name
from smddp_infra.hyperpod import eks as facts

#: The read-only actions this reader calls (for diagnose's policy).
ACTIONS = ("eks:DescribeCluster", "eks:ListAddons", "eks:DescribeAddon")
SOURCE = "eks"


def diagnose_eks_cluster(account: Account, cluster_arn: str, *, what: str = "eks cluster",
                         training_operator_addon: str = facts.TRAINING_OPERATOR_ADDON,
                         cert_manager_addon: str = facts.CERT_MANAGER_ADDON) -> list[Item]:
    """Findings about the EKS cluster ``cluster_arn`` orchestrating a HyperPod cluster (read-only)."""
    name = eks_cluster_name(cluster_arn) if isinstance(cluster_arn, str) else None
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
    return items + _vpc_cni(account, addons, cluster_arn, name, what)


def _version(text: str) -> Optional[tuple[int, ...]]:
    """(1, 18, 3) of an add-on version such as ``v1.18.3-eksbuild.1``; None when it is not one."""
    core = text.lstrip("v").split("-", 1)[0].split(".")
    return tuple(int(part) for part in core) if core and all(part.isdigit() for part in core) else None


def _vpc_cni(account: Account, addons: set[str], arn: str, name: str, what: str) -> list[Item]:
    minimum = ".".join(map(str, facts.VPC_CNI_MINIMUM))
    if facts.VPC_CNI_ADDON not in addons:
        return [Item("SMDDP-EKS4", "info", arn, f"EKS cluster {name} has no {facts.VPC_CNI_ADDON} add-on (a self-managed "
                     f"aws-node, or none): whether its VPC CNI is {minimum} or later, as HyperPod requires, is not evaluated",
                     SOURCE)]
    try:
        addon = account.call("eks", "DescribeAddon", what, clusterName=name, addonName=facts.VPC_CNI_ADDON)["addon"]
    except NotFoundError:
        return []  # listed a moment ago: gone between the calls
    reported = str(addon.get("addonVersion") or "")
    version = _version(reported)
    if version is None:
        return [Item("SMDDP-EKS4", "info", arn, f"the {facts.VPC_CNI_ADDON} add-on of EKS cluster {name} reported version "
                     f"{reported or 'none'}: whether it is {minimum} or later is not evaluated", SOURCE)]
    if version >= facts.VPC_CNI_MINIMUM:
        return []
    return [Item("SMDDP-EKS5", "error", arn,
                 f"EKS cluster {name} runs the {facts.VPC_CNI_ADDON} add-on {reported}: SageMaker HyperPod requires the "
                 f"Amazon VPC CNI {minimum} or later (SageMaker developer guide, \"Getting started with Amazon EKS support "
                 "in SageMaker HyperPod\", Networking)", SOURCE,
                 cli=f"aws eks describe-addon-versions --addon-name {facts.VPC_CNI_ADDON} --kubernetes-version "
                     f"{addon.get('kubernetesVersion') or '<the cluster version>'}; then aws eks update-addon --cluster-name "
                     f"{name} --addon-name {facts.VPC_CNI_ADDON} --addon-version <a version {minimum} or later>",
                 evidence=(f"addonVersion={reported}",))]


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
