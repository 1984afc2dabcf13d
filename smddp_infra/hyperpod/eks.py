"""HyperPod on EKS: the facts and the validators (pure: no aws_cdk).

What a HyperPod cluster orchestrated by EKS needs from its EKS cluster, one place per fact:

- **Authentication mode** ``API`` or ``API_AND_CONFIG_MAP`` (SageMaker developer guide, "Getting
  started with Amazon EKS support in SageMaker HyperPod", Requirements). CreateCluster's default,
  when the request (or an ``AWS::EKS::Cluster`` without ``AccessConfig``) names none, is
  ``CONFIG_MAP`` (botocore 1.44.8 ``eks`` model, ``CreateAccessConfigRequest.authenticationMode``).
- **Kubernetes versions** HyperPod supports: 1.28 to 1.33 (same page; the English page lists to
  1.32, its localized copies of 2026 to 1.33, one to 1.34: 1.34 is UNCONFIRMED and not offered).
- **Access entries**: HyperPod creates the EKS access entries of its execution roles and of its
  service-linked role itself (SageMaker API reference, ``ClusterMetadata``: ``EksRoleAccessEntries``
  and ``SlrAccessEntry``, "created by HyperPod on your behalf"), so an app creates entries only for
  the people and pipelines that administer the cluster; an entry of ours for the execution role
  would collide with HyperPod's (CreateAccessEntry refuses a principal that has one: UNCONFIRMED).
- **Add-ons**: the HyperPod training operator needs cert-manager and the EKS Pod Identity Agent
  (``eks-pod-identity-agent``) ("Installing the training operator", Prerequisites); the
  operator's add-on name, its service account, the cert-manager add-on name and the observability
  add-on name are UNCONFIRMED here (no page we could read names them) and every one is a setting.
- **Endpoints for private nodes**: ``sagemaker.api`` and ``eks-auth`` ("Installing the training
  operator": nodes in a private VPC need both); the cluster's private API endpoint ("Deploy private
  clusters with limited internet access": "Your cluster must have endpoint private access
  enabled ... for nodes to register"); ``eks`` and ``ec2`` (the nodes' bootstrap and the VPC CNI
  call those APIs) are UNCONFIRMED.
- **The dependencies chart** (health-monitoring agent, deep health check, job auto-restart, device
  plugins, training operators) is installed before the HyperPod cluster is created, release
  ``hyperpod-dependencies`` in ``kube-system`` ("Installing packages on the Amazon EKS cluster using
  Helm"). AWS publishes it as source in the HyperPod CLI repository, not in a chart repository: the
  platform packages it once into a repository it owns (an ECR OCI repository) and pins the version.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from smddp_infra.errors import ConfigError, PropTypeError
from smddp_infra.facts.arns import is_role_arn

#: HyperPod's supported authentication modes (prerequisites page) and EKS's API enum.
HYPERPOD_AUTHENTICATION_MODES: tuple[str, ...] = ("API", "API_AND_CONFIG_MAP")
EKS_AUTHENTICATION_MODES: tuple[str, ...] = ("API", "API_AND_CONFIG_MAP", "CONFIG_MAP")
#: Kubernetes versions HyperPod supports (prerequisites page, 2026 copies).
HYPERPOD_KUBERNETES_VERSIONS: tuple[str, ...] = ("1.28", "1.29", "1.30", "1.31", "1.32", "1.33")
#: The pinned default: the newest version HyperPod lists (older versions leave EKS standard
#: support sooner and then bill extended support). Changing it later is an in-place upgrade of
#: one minor version at a time (EKS does not skip versions), never a replacement.
DEFAULT_KUBERNETES_VERSION = "1.33"

POD_IDENTITY_AGENT_ADDON = "eks-pod-identity-agent"
#: The Amazon VPC CNI's EKS add-on, and the oldest version HyperPod supports (SageMaker developer
#: guide, "Getting started with Amazon EKS support in SageMaker HyperPod", Networking: "SageMaker
#: HyperPod requires the Amazon VPC Container Network Interface (CNI) plugin version 1.18.3 or later").
VPC_CNI_ADDON = "vpc-cni"
VPC_CNI_MINIMUM = (1, 18, 3)
#: UNCONFIRMED names (see the module docstring); each is a setting of :class:`HyperPodEks`.
TRAINING_OPERATOR_ADDON = "amazon-sagemaker-hyperpod-training-operator"
TRAINING_OPERATOR_SERVICE_ACCOUNT = "hp-training-operator-controller-manager"
CERT_MANAGER_ADDON = "cert-manager"
OBSERVABILITY_ADDON = "amazon-sagemaker-hyperpod-observability"

#: Interface endpoints HyperPod nodes on EKS use without a NAT gateway, beyond the network's
#: (which already has sagemaker.api): eks-auth (cited), eks and ec2 (UNCONFIRMED).
EKS_INTERFACE_ENDPOINTS: tuple[str, ...] = ("eks-auth", "eks", "ec2")
#: Release and namespace AWS's Helm page installs the chart as.
CHART_RELEASE = "hyperpod-dependencies"
CHART_NAMESPACE = "kube-system"
#: The control-plane subnet's default size: EKS puts up to four cross-account interfaces in each
#: control-plane subnet and asks for at least six free addresses (EKS User Guide, "VPC and subnet
#: requirements"; the figure is UNCONFIRMED here); a /28 leaves 11 after AWS's five.
CONTROL_PLANE_SUBNET_MASK = 28
#: EKS access policy the admin entries get (EKS User Guide, access policies: cluster-admin).
CLUSTER_ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"

_CHART_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_VERSION = re.compile(r"v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?")


@dataclass(frozen=True)
class DependenciesChart:
    """Where the HyperPod dependencies chart comes from, pinned.

    :param repository: the chart repository the platform owns: ``oci://<account>.dkr.ecr.<region>.
        amazonaws.com/<path>`` (the chart pushed there with ``helm push``) or an ``https://`` repository.
    :param version: the chart version, exact (semantic version): what was reviewed is what is installed.
    :param chart: the chart's name in the repository. Default: ``hyperpod-dependencies``.
    :param values: Helm values (JSON-serializable). Default: none, the chart's own.
    """

    repository: str
    version: str
    chart: str = "hyperpod-dependencies"
    values: Optional[dict[str, Any]] = None


@dataclass(frozen=True)
class HyperPodEks:
    """The EKS side of an EKS-orchestrated HyperPod cluster.

    Control plane (only when this app builds it, ``orchestrator="eks"`` without an EKS cluster):

    :param control_plane_availability_zone: the second AZ of the control plane (EKS needs subnets in
        two AZs; training stays in one). A /28 subnet is added there at the END of the VPC's range, so
        the training subnet's CIDR never changes. Default: none (required when the control plane is built).
    :param control_plane_subnet_cidr: that subnet's CIDR instead. Default: the VPC's last /28.
    :param kubernetes_version: pinned, one HyperPod supports. Default: ``1.33``.
    :param admin_role_arns: IAM roles that get an access entry with cluster-admin
        (``AmazonEKSClusterAdminPolicy``) on the cluster. Default: none.

    On any cluster, built or imported:

    :param authentication_mode: the imported cluster's mode when known (``CONFIG_MAP`` is refused).
        Default: none (not known at synth; ``diagnose`` reads it).
    :param training_operator: install the HyperPod training operator add-on with its pod identity
        role, cert-manager and the Pod Identity Agent. Default: True.
    :param observability: install the HyperPod observability add-on. Default: False.
    :param cert_manager_addon: the cert-manager add-on's name, or none when the platform installs
        cert-manager itself. Default: ``cert-manager`` (UNCONFIRMED).
    :param training_operator_addon: the operator add-on's name. Default (UNCONFIRMED):
        ``amazon-sagemaker-hyperpod-training-operator``.
    :param training_operator_service_account: its service account (namespace ``aws-hyperpod``).
        Default (UNCONFIRMED): ``hp-training-operator-controller-manager``.
    :param addon_versions: add-on name -> pinned ``addonVersion``. Default: none, EKS's default
        version for the cluster's Kubernetes version at create time.
    :param dependencies_chart: the chart, installed through the cluster's kubectl provider before the
        HyperPod cluster. Default: none (install it yourself first: docs/hyperpod.md; a synth warning).
    """

    control_plane_availability_zone: Optional[str] = None
    control_plane_subnet_cidr: Optional[str] = None
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    admin_role_arns: tuple[str, ...] = ()
    authentication_mode: Optional[str] = None
    training_operator: bool = True
    observability: bool = False
    cert_manager_addon: Optional[str] = CERT_MANAGER_ADDON
    training_operator_addon: str = TRAINING_OPERATOR_ADDON
    training_operator_service_account: str = TRAINING_OPERATOR_SERVICE_ACCOUNT
    addon_versions: dict[str, str] = field(default_factory=dict)
    dependencies_chart: Optional[DependenciesChart] = None

    def addons(self) -> tuple[str, ...]:
        """The add-ons written, in install order (the agent and cert-manager before the operator)."""
        names = [POD_IDENTITY_AGENT_ADDON]
        if self.training_operator:
            if self.cert_manager_addon:
                names.append(self.cert_manager_addon)
            names.append(self.training_operator_addon)
        if self.observability:
            names.append(OBSERVABILITY_ADDON)
        return tuple(names)


def check_eks(prop: str, value: Any, *, building: bool) -> HyperPodEks:
    """Every field of :class:`HyperPodEks`, one line per problem; ``building`` when this app makes
    the control plane (then its second AZ is required and the version is checked)."""
    if value is None:
        value = HyperPodEks()
    if not isinstance(value, HyperPodEks):
        raise PropTypeError(f"{prop} must be a HyperPodEks(...), got {type(value).__name__}")
    check_kubernetes_version(f"{prop}.kubernetes_version", value.kubernetes_version)
    check_authentication_mode(f"{prop}.authentication_mode", value.authentication_mode)
    if building and value.authentication_mode not in (None, "API"):
        raise ConfigError(f"{prop}.authentication_mode is for an imported cluster; the control plane this app builds "
                          f"is in API mode (aws_eks_v2 writes it), got {value.authentication_mode!r}")
    if not isinstance(value.admin_role_arns, (tuple, list)):
        raise PropTypeError(f"{prop}.admin_role_arns must be a list of IAM role ARNs, got {type(value.admin_role_arns).__name__}")
    for i, arn in enumerate(value.admin_role_arns):
        if not isinstance(arn, str) or not (is_role_arn(arn) or arn.startswith("${Token[")):
            raise ConfigError(f"{prop}.admin_role_arns[{i}] must be an IAM role ARN (arn:aws:iam::<account>:role/<name>), got {arn!r}")
    if building and not value.control_plane_availability_zone:
        raise ConfigError(f"{prop}.control_plane_availability_zone is required when this app builds the EKS control plane "
                          "(EKS needs subnets in two AZs; training stays in one), got none: name a second AZ, or pass "
                          "eks_cluster / eks_cluster_arn")
    for name in ("training_operator", "observability"):
        if not isinstance(getattr(value, name), bool):
            raise PropTypeError(f"{prop}.{name} must be True or False, got {getattr(value, name)!r}")
    for name, addon in value.addon_versions.items():
        if not isinstance(addon, str) or not addon.startswith("v"):
            raise ConfigError(f"{prop}.addon_versions[{name!r}] must be an EKS add-on version like 'v1.3.4-eksbuild.1', got {addon!r}")
    if value.dependencies_chart is not None:
        check_chart(f"{prop}.dependencies_chart", value.dependencies_chart)
    return value


def check_kubernetes_version(prop: str, version: Any) -> str:
    """One of the versions HyperPod supports, written ``1.NN``."""
    if version not in HYPERPOD_KUBERNETES_VERSIONS:
        raise ConfigError(f"{prop} must be a Kubernetes version SageMaker HyperPod supports "
                          f"({', '.join(HYPERPOD_KUBERNETES_VERSIONS)}), got {version!r}")
    return str(version)


def check_authentication_mode(prop: str, mode: Any) -> Optional[str]:
    """None (unknown), ``API`` or ``API_AND_CONFIG_MAP``; ``CONFIG_MAP`` is refused: HyperPod does not
    support it (prerequisites page)."""
    if mode is None:
        return None
    if mode not in EKS_AUTHENTICATION_MODES:
        raise ConfigError(f"{prop} must be one of {', '.join(EKS_AUTHENTICATION_MODES)}, got {mode!r}")
    if mode not in HYPERPOD_AUTHENTICATION_MODES:
        raise ConfigError(f"{prop} is {mode!r}: SageMaker HyperPod needs an EKS cluster in API or API_AND_CONFIG_MAP "
                          "mode (switch it with aws eks update-cluster-config --access-config authenticationMode=API_AND_CONFIG_MAP)")
    return str(mode)


def check_chart(prop: str, chart: Any) -> DependenciesChart:
    """A pinned chart in a repository: ``oci://`` or ``https://``, an exact semantic version."""
    if not isinstance(chart, DependenciesChart):
        raise PropTypeError(f"{prop} must be a DependenciesChart(repository=..., version=...), got {type(chart).__name__}")
    if not isinstance(chart.repository, str) or not re.fullmatch(r"(oci|https)://[^\s]+", chart.repository):
        raise ConfigError(f"{prop}.repository must be an oci:// or https:// chart repository, got {chart.repository!r}")
    if not isinstance(chart.version, str) or not _VERSION.fullmatch(chart.version):
        raise ConfigError(f"{prop}.version must be an exact chart version like 1.2.3 (pinned: what was reviewed is what "
                          f"is installed), got {chart.version!r}")
    if not isinstance(chart.chart, str) or not _CHART_NAME.fullmatch(chart.chart):
        raise ConfigError(f"{prop}.chart must be a chart name (lowercase letters, digits, hyphens), got {chart.chart!r}")
    return chart


def control_plane_subnet_cidr(prop: str, vpc_cidr: str, taken: Sequence[str], wanted: Optional[str]) -> str:
    """The control-plane subnet's CIDR: ``wanted``, else the VPC's last /28; inside the VPC and clear
    of every subnet it has, so adding it moves none of them (a subnet's CIDR is create-only)."""
    network = ipaddress.IPv4Network(vpc_cidr)
    cidr: ipaddress.IPv4Network
    if wanted is None:
        cidr = list(network.subnets(new_prefix=CONTROL_PLANE_SUBNET_MASK))[-1]
    else:
        try:
            cidr = ipaddress.IPv4Network(wanted)
        except ValueError:
            raise ConfigError(f"{prop} must be a CIDR like 10.0.255.240/28, got {wanted!r}") from None
        if not (16 <= cidr.prefixlen <= 28):
            raise ConfigError(f"{prop} must be a /16 to /28 (VPC subnet sizes), got {wanted!r}")
    if not cidr.subnet_of(network):
        raise ConfigError(f"{prop} {cidr} is not inside the VPC's CIDR {vpc_cidr}")
    for other in taken:
        if cidr.overlaps(ipaddress.IPv4Network(other)):
            raise ConfigError(f"{prop} {cidr} overlaps the VPC's subnet {other}: choose a free range "
                              "(existing subnets never move: their CIDR is create-only)")
    return str(cidr)


__all__ = [
    "CERT_MANAGER_ADDON", "DEFAULT_KUBERNETES_VERSION", "DependenciesChart", "EKS_INTERFACE_ENDPOINTS",
    "HYPERPOD_AUTHENTICATION_MODES", "HYPERPOD_KUBERNETES_VERSIONS", "HyperPodEks", "OBSERVABILITY_ADDON",
    "POD_IDENTITY_AGENT_ADDON", "TRAINING_OPERATOR_ADDON", "VPC_CNI_ADDON", "VPC_CNI_MINIMUM", "check_authentication_mode",
    "check_eks",
]


# --- the EKS requests a template's resources stand for ------------------------------------------

#: CloudFormation type -> (EKS operation, template-only properties the API does not take).
EKS_OPERATIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "AWS::EKS::Cluster": ("CreateCluster", ()),
    "AWS::EKS::Addon": ("CreateAddon", ("PreserveOnDelete",)),
    # Access policies are associated by a second call (AssociateAccessPolicy), not CreateAccessEntry.
    "AWS::EKS::AccessEntry": ("CreateAccessEntry", ("AccessPolicies",)),
}


def eks_request(resource_type: str, properties: dict[str, Any], resolve: Any) -> tuple[str, dict[str, Any]]:
    """The EKS API request an ``AWS::EKS::*`` resource stands for: the same fields in camelCase
    (CloudFormation ``ResourcesVpcConfig.SubnetIds`` is the API's ``resourcesVpcConfig.subnetIds``),
    tags as a map, template-only fields dropped; intrinsics resolved by ``resolve``
    (:func:`smddp_infra.hyperpod.request.placeholder_resolver` offline)."""
    from smddp_infra.hyperpod.request import resolved

    operation, dropped = EKS_OPERATIONS[resource_type]
    props = {k: v for k, v in resolved(dict(properties), resolve).items() if k not in dropped}
    request = _camel(props)
    if isinstance(request.get("tags"), list):
        request["tags"] = {t["key"]: t["value"] for t in request["tags"]}
    if operation == "CreateCluster":
        request.setdefault("name", "cluster")  # CloudFormation generates one when the template has none
    return operation, request


def validate_eks_request(operation: str, request: dict[str, Any]) -> Optional[str]:
    """botocore's validator over an EKS request: its report, '' when valid, None without botocore."""
    from smddp_infra.hyperpod.api import validate_request

    from smddp_infra.facts.service_models import service_model

    return validate_request(service_model("eks"), operation, request)


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {k[:1].lower() + k[1:]: _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value
