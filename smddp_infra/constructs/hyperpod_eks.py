"""HyperPodEksCluster: what an EKS-orchestrated HyperPod cluster needs on its EKS cluster.

Built by :class:`~smddp_infra.constructs.hyperpod.HyperPodCluster` with ``orchestrator="eks"``:

- **The control plane, when the platform has none** (no ``eks_cluster`` / ``eks_cluster_arn``):
  aws-cdk-lib's ``aws_eks_v2.Cluster``. Why v2 and not ``aws_eks``: v2 writes the native
  ``AWS::EKS::Cluster`` (CloudFormation owns it: drift detection, ``cdk diff`` shows real property
  changes, create-only properties are known to the guard, RETAIN works as on any resource), and
  needs no Lambda to exist; ``aws_eks`` creates the cluster through a custom resource (a Lambda
  provider framework with a kubectl layer in every stack, the cluster invisible to CloudFormation's
  own replacement rules). v2 writes authentication mode ``API`` (it hard-codes it): access entries,
  not the ``aws-auth`` ConfigMap, which HyperPod accepts (it creates its own entries) and which
  leaves no second, unaudited path to cluster-admin. Endpoint: private only (nodes register through
  it; nothing public). Subnets: the training subnet plus a /28 in a second AZ that the platform
  names, placed at the end of the VPC's range so no existing subnet moves (EKS needs two AZs, EFA
  training stays in one). No node group, no Auto Mode: HyperPod's instance groups are the nodes.
- **On any cluster, built or imported**: the add-ons (``AWS::EKS::Addon``: the Pod Identity Agent,
  cert-manager and the HyperPod training operator with a pod identity role; observability when
  asked), access entries for the platform's admin roles, the interface endpoints private nodes use,
  and the HyperPod dependencies chart through the cluster's kubectl provider, which the HyperPod
  cluster depends on. The chart is never vendored or fetched at synth: the platform pins a
  repository and version (:class:`~smddp_infra.hyperpod.eks.DependenciesChart`); without one a
  synth warning names the step to run before deploy.

Facts and validators: :mod:`smddp_infra.hyperpod.eks`. The EKS cluster is RETAINed; construct ids
are pinned by tests (a new id replaces the cluster and everything on it).
"""

from __future__ import annotations

from typing import Any, Optional

from aws_cdk import Annotations, Aws, RemovalPolicy, Stack, Token, aws_ec2 as ec2, aws_eks as eks_l1, aws_eks_v2 as eks
from aws_cdk import aws_iam as iam, aws_lambda as lambda_
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.constructs.acknowledgements import (acknowledge, acknowledge_generated_role,
                                                      acknowledge_wildcard_resources)
from smddp_infra.constructs.network import pin_subnet_zone
from smddp_infra.constructs.network_interface import ITrainingNetwork, add_missing_endpoints
from smddp_infra.errors import ConfigError
from smddp_infra.facts.arns import eks_cluster_name
from smddp_infra.facts.eks import check_control_plane_zone
from smddp_infra.facts.regions import is_az_id, is_az_name
from smddp_infra.hyperpod import eks as facts

#: Synth-warning id when the dependencies chart is left to the platform.
WARN_CHART = "smddp:hyperpodEksChart"


class HyperPodEksCluster(Construct):
    """The EKS cluster side of a HyperPod cluster. Attributes: ``cluster`` (``eks.ICluster``; an
    ``eks.Cluster`` when built here), ``cluster_arn``, ``cluster_name``, ``built``,
    ``control_plane_subnet``, ``addons`` (name -> ``CfnAddon``), ``access_entries``,
    ``training_operator_role``, ``chart`` (the ``HelmChart`` or None), ``interface_endpoints``,
    ``dependencies`` (what the HyperPod cluster must wait for)."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: facts.HyperPodEks,
        network: ITrainingNetwork,
        imported: Optional[eks.ICluster] = None,
        imported_arn: Optional[str] = None,
        kubectl_layer: Optional[lambda_.ILayerVersion] = None,
    ) -> None:
        super().__init__(scope, id)
        vpc, training_subnet = network.vpc, network.training_subnet
        self.settings = settings
        self.built = imported is None and imported_arn is None
        self.control_plane_subnet: Optional[ec2.ISubnet] = None
        self.addons: dict[str, eks_l1.CfnAddon] = {}
        self.access_entries: list[eks_l1.CfnAccessEntry] = []
        self.training_operator_role: Optional[iam.Role] = None
        self.chart: Optional[eks.HelmChart] = None
        self.dependencies: list[Construct] = []
        if self.built:
            if vpc is None:
                raise ConfigError("orchestrator='eks' without eks_cluster or eks_cluster_arn builds the EKS control plane on "
                                  "the network's VPC, which an imported network does not name: pass the platform's EKS cluster")
            self.cluster: Optional[eks.ICluster] = self._control_plane(vpc, training_subnet, kubectl_layer)
            self.cluster_name: str = self.cluster.cluster_name
            self.cluster_arn: str = self.cluster.cluster_arn
        elif imported is not None:
            if vpc is not None:  # a network given as parts: its VPC is not known here
                _refuse_other_vpc(imported, vpc)
            self.cluster = imported
            self.cluster_name, self.cluster_arn = imported.cluster_name, imported.cluster_arn
        else:
            assert imported_arn is not None
            self.cluster = None
            name = eks_cluster_name(imported_arn)
            if name is None:
                raise ConfigError(f"eks_cluster_arn must be an EKS cluster ARN to install add-ons on it, got {imported_arn!r}")
            self.cluster_name, self.cluster_arn = name, imported_arn
        self.interface_endpoints: dict[str, ec2.InterfaceVpcEndpoint] = add_missing_endpoints(
            network, facts.EKS_INTERFACE_ENDPOINTS)
        self._access_entries()
        self._addons()
        self._chart()

    # --- the control plane --------------------------------------------------------------------

    def _control_plane(self, vpc: ec2.IVpc, training_subnet: ec2.ISubnet,
                       kubectl_layer: Optional[lambda_.ILayerVersion]) -> eks.Cluster:
        settings = self.settings
        cfn_vpc = vpc.node.default_child
        vpc_cidr = getattr(cfn_vpc, "cidr_block", None)
        if not isinstance(vpc_cidr, str) or Token.is_unresolved(vpc_cidr):
            raise ConfigError("HyperPodCluster builds an EKS control plane only on a network whose VPC CIDR is known at "
                              "synth (a TrainingVpc); pass eks_cluster or eks_cluster_arn for another network")
        taken = [s.ipv4_cidr_block for s in (*vpc.public_subnets, *vpc.private_subnets, *vpc.isolated_subnets)]
        cidr = facts.control_plane_subnet_cidr("eks.control_plane_subnet_cidr", vpc_cidr, taken,
                                               settings.control_plane_subnet_cidr)
        assert settings.control_plane_availability_zone is not None
        az = settings.control_plane_availability_zone
        _check_second_zone(self, az, training_subnet)
        subnet = ec2.PrivateSubnet(self, "ControlPlaneSubnet", vpc_id=vpc.vpc_id, cidr_block=cidr,
                                   availability_zone=az if "-az" not in az else "placeholder")
        pin_subnet_zone(subnet, az if "-az" in az else None)  # an AZ ID (use1-az6), as capacity is named
        self.control_plane_subnet = subnet
        options = None
        if kubectl_layer is not None:
            # The kubectl handler runs beside the nodes: the training subnet, whose endpoints reach
            # EKS, STS and the ECR repository of the chart.
            options = eks.KubectlProviderOptions(kubectl_layer=kubectl_layer, private_subnets=[training_subnet])
        cluster = eks.Cluster(
            self,
            "ControlPlane",
            version=eks.KubernetesVersion.of(settings.kubernetes_version),
            vpc=vpc,
            vpc_subnets=[ec2.SubnetSelection(subnets=[training_subnet, subnet])],
            endpoint_access=eks.EndpointAccess.PRIVATE,
            default_capacity=0,
            default_capacity_type=eks.DefaultCapacityType.NODEGROUP,
            removal_policy=RemovalPolicy.RETAIN,
            output_config_command=False,
            kubectl_provider_options=options,
        )
        # aws-cdk-lib writes DependsOn beside the Ref of the same subnets and roles (cfn-lint W3005,
        # "obsolete DependsOn"): harmless, and not ours to remove.
        _ignore_cfn_lint(cluster.node.default_child, "W3005")
        acknowledge(cluster.role, "eks-cluster-role")
        if kubectl_layer is not None:
            provider = cluster.node.find_child("KubectlProvider")
            handler = provider.node.find_child("Handler")
            framework = provider.node.find_child("Provider").node.find_child("framework-onEvent")
            for function in (handler, framework):
                _ignore_cfn_lint(function.node.default_child, "W3005")
                acknowledge(function, "eks-kubectl-lambda")
                acknowledge_generated_role(function.node.find_child("ServiceRole"), "eks-kubectl-roles")
        # Nodes in the training subnet register with the private API endpoint over HTTPS.
        cluster.connections.allow_from(ec2.Peer.ipv4(training_subnet.ipv4_cidr_block), ec2.Port.tcp(443),
                                       "HyperPod nodes (training subnet) to the Kubernetes API")
        return cluster

    # --- on any cluster -----------------------------------------------------------------------

    def _access_entries(self) -> None:
        """Cluster-admin entries for the platform's roles; HyperPod makes its own roles' entries."""
        for index, arn in enumerate(self.settings.admin_role_arns):
            entry = eks_l1.CfnAccessEntry(
                self, f"Admin{index}",
                cluster_name=self.cluster_name,
                principal_arn=arn,
                type="STANDARD",
                access_policies=[eks_l1.CfnAccessEntry.AccessPolicyProperty(
                    policy_arn=f"arn:{Aws.PARTITION}:eks::aws:cluster-access-policy/{facts.CLUSTER_ADMIN_POLICY}",
                    access_scope=eks_l1.CfnAccessEntry.AccessScopeProperty(type="cluster"))],
            )
            self.access_entries.append(entry)

    def _addons(self) -> None:
        settings = self.settings
        previous: list[eks_l1.CfnAddon] = []
        for name in settings.addons():
            associations = None
            if name == settings.training_operator_addon:
                self.training_operator_role = self._operator_role()
                associations = [eks_l1.CfnAddon.PodIdentityAssociationProperty(
                    role_arn=self.training_operator_role.role_arn,
                    service_account=settings.training_operator_service_account)]
            addon = eks_l1.CfnAddon(
                self, _addon_id(name),
                cluster_name=self.cluster_name,
                addon_name=name,
                addon_version=settings.addon_versions.get(name),
                pod_identity_associations=associations,
                # Keep the software running on the cluster when the stack lets go of the add-on.
                preserve_on_delete=True,
            )
            if name != facts.OBSERVABILITY_ADDON:
                for earlier in previous:  # the agent and cert-manager before the operator
                    addon.node.add_dependency(earlier)
                previous.append(addon)
            self.addons[name] = addon
            self.dependencies.append(addon)

    def _operator_role(self) -> iam.Role:
        """EKS Pod Identity's trust (``pods.eks.amazonaws.com``: ``sts:AssumeRole`` and
        ``sts:TagSession``, EKS User Guide, "Create a Pod Identity association"); the operator reads
        its HyperPod cluster's nodes (what it needs beyond that is UNCONFIRMED: widen it here)."""
        role = iam.Role(self, "TrainingOperatorRole",
                        assumed_by=iam.ServicePrincipal("pods.eks.amazonaws.com"),
                        description="HyperPod training operator (EKS Pod Identity)")
        assert role.assume_role_policy is not None
        role.assume_role_policy.add_statements(iam.PolicyStatement(
            actions=["sts:TagSession"], principals=[iam.ServicePrincipal("pods.eks.amazonaws.com")]))
        stack = Stack.of(self)
        # A customer managed policy, as the cluster role's (no inline policies, no AWS managed ones).
        policy = iam.ManagedPolicy(self, "TrainingOperatorPolicy", roles=[role], statements=[iam.PolicyStatement(
            sid="ReadHyperPodNodes",
            actions=["sagemaker:DescribeCluster", "sagemaker:DescribeClusterNode", "sagemaker:ListClusterNodes"],
            resources=[stack.format_arn(service="sagemaker", resource="cluster", resource_name="*")])])
        acknowledge_wildcard_resources(policy, "hyperpod-training-operator-role")
        return role

    def _chart(self) -> None:
        chart = self.settings.dependencies_chart
        if chart is None:
            Annotations.of(self).add_warning_v2(
                WARN_CHART,
                f"HyperPod's dependencies chart is not installed by this app (eks.dependencies_chart not given): install "
                f"it on EKS cluster {self.cluster_name if not Token.is_unresolved(self.cluster_name) else '(this stack)'} "
                f"before the HyperPod cluster is created (helm install {facts.CHART_RELEASE} ... --namespace "
                f"{facts.CHART_NAMESPACE}; docs/hyperpod.md), or HyperPod's creation may fail")
            return
        if self.cluster is None or not _has_kubectl(self.cluster):
            raise ConfigError("eks.dependencies_chart needs the EKS cluster's kubectl provider: pass eks_kubectl_layer "
                              "(a kubectl Lambda layer) when this app builds the cluster, or an eks_cluster imported with "
                              "kubectl_provider=...; or leave dependencies_chart out and install the chart yourself")
        self.chart = eks.HelmChart(
            self, "DependenciesChart",
            cluster=self.cluster,
            chart=chart.chart,
            repository=chart.repository,
            version=chart.version,
            release=facts.CHART_RELEASE,
            namespace=facts.CHART_NAMESPACE,
            values=chart.values,
            wait=True,
            # Uninstalling the chart under a running HyperPod cluster stops its health agents.
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.dependencies.append(self.chart)


def _check_second_zone(scope: Construct, zone: str, training_subnet: ec2.ISubnet) -> None:
    """The control plane's second AZ: of the stack's Region, not the training subnet's AZ (a name
    compared with a name, an ID with an ID; TrainingVpc's subnet holds the one it was placed by),
    and not an AZ ID EKS refuses (:mod:`smddp_infra.facts.eks`)."""
    try:
        training = training_subnet.availability_zone
    except RuntimeError:  # jsii: an imported subnet without its AZ
        training = None
    known = isinstance(training, str) and not Token.is_unresolved(training)
    check_control_plane_zone("eks_settings.control_plane_availability_zone", zone,
                             region=v.concrete_region(scope),
                             training_zone=training if known and is_az_name(training) else None,
                             training_zone_id=training if known and is_az_id(training) else None)


def _has_kubectl(cluster: eks.ICluster) -> bool:
    try:
        return cluster.kubectl_provider is not None
    except Exception:  # jsii: an imported cluster without one
        return False


def _refuse_other_vpc(cluster: eks.ICluster, vpc: ec2.IVpc) -> None:
    """One line when the imported cluster's VPC is known and is not the network's: HyperPod's
    nodes join the EKS cluster from the training subnet (VpcConfig), in the EKS cluster's VPC."""
    try:
        theirs = cluster.vpc
    except Exception:  # jsii: imported without vpc=...: not known at synth
        Annotations.of(cluster).add_info("eks_cluster was imported without vpc=...: whether it is in the training "
                                         "network's VPC is not evaluated")
        return
    if theirs is vpc or Token.as_string(theirs.vpc_id) == Token.as_string(vpc.vpc_id):
        return
    raise ConfigError(f"eks_cluster {cluster.node.path} is in VPC {_vpc_shown(theirs)}, not the training network's VPC "
                      f"{_vpc_shown(vpc)}: HyperPod's nodes join the EKS cluster from the training subnet")


def _vpc_shown(vpc: ec2.IVpc) -> str:
    return vpc.node.path if Token.is_unresolved(vpc.vpc_id) else vpc.vpc_id


def _ignore_cfn_lint(resource: Any, check: str) -> None:
    resource.add_metadata("cfn-lint", {"config": {"ignore_checks": [check]}})


def _addon_id(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-")) + "Addon"


__all__ = ["HyperPodEksCluster", "WARN_CHART"]
