"""The HyperPod test apps (tests/test_hyperpod.py, the benchmark): written once, built by each.

- ``HyperPodSlurm``: a p5 network and a Slurm cluster of controller + login + two compute groups,
  one of them on a training plan, with a lifecycle script (no NAT: HyperPod's endpoints added);
- ``HyperPodEks``: a NAT network and an EKS-orchestrated cluster (no endpoints added);
- the default app with ``smddp:hyperpod=true`` (``TrainingNetworkStack``).
"""

from __future__ import annotations

from typing import Any

PLAN_ARN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/hyperpod-p5-two-nodes"
EKS_ARN = "arn:aws:eks:us-east-1:123456789012:cluster/ml-platform"


def slurm_groups() -> list[Any]:
    from smddp_infra import InstanceGroup

    return [
        InstanceGroup(name="controller", instance_type="ml.m5.2xlarge", count=1, slurm_node_type="Controller"),
        InstanceGroup(name="login", instance_type="ml.m5.xlarge", count=1, slurm_node_type="Login", mount_file_system=True),
        InstanceGroup(name="train", instance_type="ml.p5.48xlarge", count=4, slurm_node_type="Compute", partition="train",
                      threads_per_core=1, ebs_volume_gib=500),
        InstanceGroup(name="reserved", instance_type="ml.p5.48xlarge", count=2, slurm_node_type="Compute",
                      partition="reserved", training_plan_arn=PLAN_ARN),
    ]


def add_slurm_stack(app: Any, name: str = "HyperPodSlurm") -> Any:
    from aws_cdk import Environment, Stack

    from smddp_infra import HyperPodCluster, SmddpTrainingNetwork

    stack = Stack(app, name, env=Environment(region="us-east-1"))
    network = SmddpTrainingNetwork(stack, "Network", instance_type="ml.p5.48xlarge", instance_count=6,
                                   availability_zone_id="use1-az4", read_mbps_per_gpu=100)
    HyperPodCluster(stack, "HyperPod", network=network, instance_groups=slurm_groups(), lifecycle_script="on_init_complete.sh")
    return stack


def add_eks_stack(app: Any, name: str = "HyperPodEks") -> Any:
    from aws_cdk import Environment, Stack

    from smddp_infra import HyperPodCluster, InstanceGroup, SmddpTrainingNetwork

    stack = Stack(app, name, env=Environment(region="us-east-1"))
    network = SmddpTrainingNetwork(stack, "Network", instance_type="ml.p4d.24xlarge", instance_count=2,
                                   availability_zone="us-east-1b", read_mbps_per_gpu=50, nat_gateway=True)
    HyperPodCluster(stack, "HyperPod", network=network, orchestrator="eks", eks_cluster_arn=EKS_ARN,
                    instance_groups=[InstanceGroup(name="gpu", instance_type="ml.p4d.24xlarge", count=2)])
    return stack


#: The platform shapes issue 34 added (tests/test_hyperpod_platform.py, docs/hyperpod.md's examples).
EKS_VPC_ID = "vpc-0a1b2c3d4e5f60718"
ROLLBACK_ALARM = "hyperpod-node-health"


def platform_eks_groups() -> list[Any]:
    """A system group, an on-demand GPU group with a floor, and a Spot GPU group, labelled and tainted."""
    from smddp_infra import InstanceGroup, KubernetesTaint

    gpu_taint = KubernetesTaint("nvidia.com/gpu", "true", "NoSchedule")
    return [
        InstanceGroup(name="system", instance_type="ml.m5.2xlarge", count=2, kubernetes_labels={"role": "system"},
                      update_schedule="cron(0 3 ? * SUN *)"),
        InstanceGroup(name="train", instance_type="ml.p5.48xlarge", count=4, min_count=2, image_id="ami-0123456789abcdef0",
                      kubernetes_labels={"role": "train", "example.com/team": "foundation"}, kubernetes_taints=[gpu_taint],
                      update_schedule="cron(30 4 ? * SAT *)"),
        InstanceGroup(name="spot", instance_type="ml.p5.48xlarge", count=2, spot=True,
                      kubernetes_labels={"role": "burst"},
                      kubernetes_taints=[gpu_taint, KubernetesTaint("example.com/capacity", "spot", "PreferNoSchedule")]),
    ]


def add_eks_platform_stack(app: Any, name: str = "HyperPodEksPlatform") -> Any:
    """An EKS cluster with continuous provisioning, Karpenter autoscaling (role built), tiered
    checkpointing and the groups above; a NAT network."""
    from aws_cdk import Environment, Stack

    from smddp_infra import HyperPodCluster, SmddpTrainingNetwork

    stack = Stack(app, name, env=Environment(region="us-east-1"))
    network = SmddpTrainingNetwork(stack, "Network", instance_type="ml.p5.48xlarge", instance_count=8,
                                   availability_zone_id="use1-az4", read_mbps_per_gpu=50, nat_gateway=True)
    HyperPodCluster(stack, "HyperPod", network=network, orchestrator="eks", eks_cluster_arn=EKS_ARN,
                    continuous_provisioning=True, autoscaling=True, tiered_checkpointing_memory_percent=20,
                    update_rollback_alarms=[ROLLBACK_ALARM], instance_groups=platform_eks_groups())
    return stack


def add_slurm_options_stack(app: Any, name: str = "HyperPodSlurmOptions") -> Any:
    """A Slurm cluster with what Slurm takes of the new options: a floor, a pinned image, a scheduled update."""
    from aws_cdk import Environment, Stack

    from smddp_infra import HyperPodCluster, InstanceGroup, SmddpTrainingNetwork

    stack = Stack(app, name, env=Environment(region="us-east-1"))
    network = SmddpTrainingNetwork(stack, "Network", instance_type="ml.p5.48xlarge", instance_count=4,
                                   availability_zone_id="use1-az4", read_mbps_per_gpu=50, nat_gateway=True)
    HyperPodCluster(stack, "HyperPod", network=network, instance_groups=[
        InstanceGroup(name="controller", instance_type="ml.m5.2xlarge", count=1, slurm_node_type="Controller",
                      image_id="ami-0123456789abcdef0"),
        InstanceGroup(name="train", instance_type="ml.p5.48xlarge", count=4, min_count=3, slurm_node_type="Compute",
                      update_schedule="cron(0 2 ? * SUN *)"),
    ])
    return stack


KUBECTL_LAYER_ARN = "arn:aws:lambda:us-east-1:123456789012:layer:kubectl-v33:1"
ADMIN_ROLE_ARN = "arn:aws:iam::123456789012:role/PlatformAdmin"
CHART_REPOSITORY = "oci://123456789012.dkr.ecr.us-east-1.amazonaws.com/hyperpod"


def eks_network(stack: Any, **extra: Any) -> Any:
    from smddp_infra import SmddpTrainingNetwork

    return SmddpTrainingNetwork(stack, "Network", instance_type="ml.p5.48xlarge", instance_count=4,
                                availability_zone_id="use1-az4", read_mbps_per_gpu=100, **extra)


def add_eks_built_stack(app: Any, name: str = "HyperPodEksBuilt") -> Any:
    """A network without NAT and a HyperPod cluster whose EKS control plane this app builds, with an
    admin role, the add-ons and the dependencies chart through a kubectl layer the platform publishes."""
    from aws_cdk import Environment, Stack, aws_lambda as lambda_

    from smddp_infra import HyperPodCluster, InstanceGroup
    from smddp_infra.hyperpod.eks import DependenciesChart, HyperPodEks

    stack = Stack(app, name, env=Environment(region="us-east-1"))
    network = eks_network(stack)
    layer = lambda_.LayerVersion.from_layer_version_arn(stack, "KubectlLayer", KUBECTL_LAYER_ARN)
    HyperPodCluster(stack, "HyperPod", network=network, orchestrator="eks",
                    instance_groups=[InstanceGroup(name="gpu", instance_type="ml.p5.48xlarge", count=4)],
                    eks_settings=HyperPodEks(control_plane_availability_zone="use1-az6", admin_role_arns=(ADMIN_ROLE_ARN,),
                                             dependencies_chart=DependenciesChart(repository=CHART_REPOSITORY, version="1.4.0")),
                    eks_kubectl_layer=layer)
    return stack


def add_eks_network_only_stack(app: Any, name: str = "HyperPodEksBefore") -> Any:
    """The same network as ``add_eks_built_stack``'s before the EKS path was added (the guard's 'old')."""
    from aws_cdk import Environment, Stack

    stack = Stack(app, name, env=Environment(region="us-east-1"))
    eks_network(stack)
    return stack


def add_eks_imported_stack(app: Any, name: str = "HyperPodEksImported") -> Any:
    """A NAT network and the platform's EKS cluster imported (in the network's VPC): add-ons only."""
    from aws_cdk import Environment, Stack, aws_eks_v2 as eks

    from smddp_infra import HyperPodCluster, InstanceGroup
    from smddp_infra.hyperpod.eks import HyperPodEks

    stack = Stack(app, name, env=Environment(region="us-east-1"))
    network = eks_network(stack, nat_gateway=True)
    platform = eks.Cluster.from_cluster_attributes(stack, "Platform", cluster_name="ml-platform", vpc=network.vpc)
    HyperPodCluster(stack, "HyperPod", network=network, orchestrator="eks", eks_cluster=platform,
                    instance_groups=[InstanceGroup(name="gpu", instance_type="ml.p5.48xlarge", count=4)],
                    eks_settings=HyperPodEks(authentication_mode="API_AND_CONFIG_MAP", observability=True))
    return stack
