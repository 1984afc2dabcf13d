"""The IAM role HyperPod cluster instances assume: the managed instance policy, written out and scoped.

HyperPod's reference stacks attach the AWS managed ``AmazonSageMakerClusterInstanceRolePolicy``.
What it grants (SageMaker developer guide, "AWS managed policy:
AmazonSageMakerClusterInstanceRolePolicy"): CloudWatch Logs streams and group creation under
``/aws/sagemaker/Clusters/*``; ``cloudwatch:PutMetricData`` in the namespace
``/aws/sagemaker/Clusters``; ``s3:ListBucket``/``s3:GetObject`` on buckets named ``sagemaker-*``
in the account (the lifecycle scripts); and the four ``ssmmessages`` channel actions (Systems
Manager access to the nodes). Here each is scoped to THIS cluster: its log group prefix (from
the cluster's name), the lifecycle prefix of the job bucket instead of every ``sagemaker-*``
bucket. Added, because the cluster runs in the customer's VPC: the EC2 network-interface
actions HyperPod uses to attach nodes to the training subnet (the HyperPod prerequisites page's
VPC section; the exact list is UNCONFIRMED), read/write on the checkpoint prefix, and
``fsx:DescribeFileSystems`` (read-only; UNCONFIRMED that the nodes call it). On EKS, what the
nodes' kubelet, the Amazon VPC CNI (``aws-node``) and the Pod Identity Agent do with the
instance's credentials (SageMaker developer guide, "IAM role for SageMaker HyperPod", EKS; EKS
User Guide, "Amazon EKS node IAM role" and the ``AmazonEKS_CNI_Policy``,
``AmazonEC2ContainerRegistryReadOnly`` and ``AmazonEKSWorkerNodePolicy`` managed policies): the CNI's
describe and interface actions, image pulls from ECR in the Region (the add-ons' images live in
AWS-owned repositories), and ``eks-auth:AssumeRoleForPodIdentity`` on the one EKS cluster; the
exact list HyperPod needs is UNCONFIRMED, scoped as the Slurm part is.
No AWS managed policies (AwsSolutions-IAM4); each remaining wildcard is acknowledged with its
reason through :data:`~smddp_infra.constructs.acknowledgements.HYPERPOD_WILDCARD_REASONS`.
"""

from __future__ import annotations

from typing import Optional, Sequence

from aws_cdk import Stack, aws_ec2 as ec2, aws_iam as iam, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.constructs.acknowledgements import HYPERPOD_WILDCARD_REASONS
from smddp_infra.constructs.role import DESCRIBE_NETWORK_ACTIONS, KEY_USE_ACTIONS, allow, managed_policy, scoped_arn, service_role
from smddp_infra.guardrails import objects_under

#: CloudWatch namespace and log group prefix HyperPod writes under (managed instance policy).
CLUSTER_LOG_PREFIX = "/aws/sagemaker/Clusters"
CLUSTER_METRIC_NAMESPACE = "/aws/sagemaker/Clusters"


def _eks_node_statements(stack: Stack, eks_cluster_arn: str) -> list[iam.PolicyStatement]:
    """What an EKS node's agents call with the instance role: the VPC CNI (describe, attach and
    manage the pods' interfaces and addresses), the kubelet's image pulls, the Pod Identity Agent."""
    interface = scoped_arn(stack, "ec2", "network-interface")
    return [
        allow("EksNodeDescribe", ["ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "ec2:DescribeTags"], ["*"]),
        allow("EksPodInterfaces", ["ec2:ModifyNetworkInterfaceAttribute", "ec2:UnassignPrivateIpAddresses"], [interface]),
        # IAM authorizes an attach on the interface AND the instance it joins.
        allow("EksAttachPodInterfaces", ["ec2:AttachNetworkInterface"], [interface, scoped_arn(stack, "ec2", "instance")]),
        allow("EksImageRegistryToken", ["ecr:GetAuthorizationToken"], ["*"]),
        # the add-ons' images are in AWS-owned accounts' repositories of the Region
        allow("EksImagePull", ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"],
              [scoped_arn(stack, "ecr", "repository", account="*")]),
        allow("EksPodIdentity", ["eks-auth:AssumeRoleForPodIdentity"], [eks_cluster_arn]),
    ]


class HyperPodClusterRole(Construct):
    """The execution role of a HyperPod cluster's instance groups, scoped to one cluster.

    Attributes: ``role`` (``iam.IRole``), ``policy`` (the customer managed policy).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        cluster_name: str,
        job_bucket: s3.IBucket,
        lifecycle_prefix: Optional[str] = None,
        lifecycle_bucket: Optional[s3.IBucket] = None,
        checkpoint_prefix: Optional[str] = None,
        training_subnet: Optional[ec2.ISubnet] = None,
        security_groups: Sequence[ec2.ISecurityGroup] = (),
        file_system_id: Optional[str] = None,
        encryption_keys: Sequence[kms.IKey] = (),
        eks_cluster_arn: Optional[str] = None,
    ) -> None:
        """
        :param cluster_name: the cluster's ``ClusterName``: scopes its log groups.
        :param job_bucket: the network's job (checkpoint) bucket.
        :param lifecycle_prefix: key prefix of the lifecycle script (read). Default: none.
        :param lifecycle_bucket: the script's bucket. Default: ``job_bucket``.
        :param checkpoint_prefix: key prefix of checkpoints (read/write). Default: none.
        :param training_subnet: the subnet HyperPod attaches nodes to: scopes CreateNetworkInterface.
            Default: none (any subnet of the account and region).
        :param security_groups: the cluster's groups: scope CreateNetworkInterface. Default: none.
        :param file_system_id: the FSx for Lustre file system the nodes mount. Default: none.
        :param encryption_keys: KMS keys of the bucket. Default: none.
        :param eks_cluster_arn: the EKS cluster the nodes join (EKS orchestration): adds what the
            nodes' EKS agents need. Default: none (Slurm).
        """
        v.text("cluster_name", cluster_name, optional=False, allow_token=True)
        v.require("job_bucket", job_bucket, "IBucket", optional=False)
        v.text("lifecycle_prefix", lifecycle_prefix)
        v.require("lifecycle_bucket", lifecycle_bucket, "IBucket")
        v.text("checkpoint_prefix", checkpoint_prefix)
        v.require("training_subnet", training_subnet, "ISubnet")
        v.require_each("security_groups", security_groups, "ISecurityGroup")
        v.text("file_system_id", file_system_id, allow_token=True)
        v.require_each("encryption_keys", encryption_keys, "IKey")
        v.text("eks_cluster_arn", eks_cluster_arn, allow_token=True)
        super().__init__(scope, id)
        stack = v.stack_of(self)
        self.role: iam.IRole = service_role(self, "sagemaker.amazonaws.com", "SageMaker HyperPod cluster instances (one cluster)")

        group = f"{CLUSTER_LOG_PREFIX}/{cluster_name}"
        interface = scoped_arn(stack, "ec2", "network-interface")
        interface_scope = [interface]
        if training_subnet is not None:
            interface_scope.append(scoped_arn(stack, "ec2", "subnet", training_subnet.subnet_id))
        interface_scope += [scoped_arn(stack, "ec2", "security-group", g.security_group_id) for g in security_groups]
        statements = [
            allow("ClusterLogGroup", ["logs:CreateLogGroup"], [scoped_arn(stack, "logs", "log-group", f"{group}/*", sep=":")]),
            allow("ClusterLogStreams", ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                  [scoped_arn(stack, "logs", "log-group", f"{group}/*:log-stream:*", sep=":")]),
            allow("ClusterMetrics", ["cloudwatch:PutMetricData"], ["*"],
                  conditions={"StringEquals": {"cloudwatch:namespace": CLUSTER_METRIC_NAMESPACE}}),
            allow("NodeSessions", ["ssmmessages:CreateControlChannel", "ssmmessages:CreateDataChannel",
                                   "ssmmessages:OpenControlChannel", "ssmmessages:OpenDataChannel"], ["*"]),
            allow("DescribeNetwork", DESCRIBE_NETWORK_ACTIONS, ["*"]),
            allow("NodeNetworkInterfaces", ["ec2:CreateNetworkInterface"], interface_scope),
            allow("ManageNodeInterfaces", ["ec2:CreateNetworkInterfacePermission", "ec2:DeleteNetworkInterface",
                                           "ec2:DeleteNetworkInterfacePermission", "ec2:AssignPrivateIpAddresses"], [interface]),
            # IAM authorizes a detach on the interface AND the instance it leaves.
            allow("DetachNodeInterfaces", ["ec2:DetachNetworkInterface"], [interface, scoped_arn(stack, "ec2", "instance")]),
            allow("TagNodeInterfaces", ["ec2:CreateTags"], [interface],
                  conditions={"StringEquals": {"ec2:CreateAction": "CreateNetworkInterface"}}),
        ]
        if eks_cluster_arn is not None:
            statements += _eks_node_statements(stack, eks_cluster_arn)
        script_bucket = lifecycle_bucket or job_bucket
        listed = [(b, p) for b, p in ((script_bucket, lifecycle_prefix), (job_bucket, checkpoint_prefix)) if p is not None]
        for bucket in dict.fromkeys(b for b, _ in listed):
            prefixes = [p for b, p in listed if b is bucket]
            statements.append(allow("JobBucketList" if bucket is job_bucket else "LifecycleBucketList", ["s3:ListBucket"],
                                    [bucket.bucket_arn], conditions={"StringLike": {"s3:prefix": [
                                        x for p in prefixes for x in (p.strip("/"), objects_under(p))]}}))
        if lifecycle_prefix is not None:
            statements.append(allow("LifecycleScriptRead", ["s3:GetObject"],
                                    [script_bucket.arn_for_objects(objects_under(lifecycle_prefix))]))
        if checkpoint_prefix is not None:
            statements.append(allow("ClusterCheckpoints", ["s3:GetObject", "s3:PutObject", "s3:DeleteObject",
                                                           "s3:AbortMultipartUpload"],
                                    [job_bucket.arn_for_objects(objects_under(checkpoint_prefix))]))
        if file_system_id is not None:
            # DescribeFileSystems takes no resource-level permission (IAM's service
            # authorization reference, as parliament's database has it): read-only, on "*".
            statements.append(allow("DescribeFileSystem", ["fsx:DescribeFileSystems"], ["*"]))
        if encryption_keys:
            statements.append(allow("UseEncryptionKeys", KEY_USE_ACTIONS, [k.key_arn for k in encryption_keys]))
        self.policy = managed_policy(self, statements, self.role, "SageMaker HyperPod cluster instances: logs, metrics, node "
                                     "sessions, network interfaces, lifecycle script, checkpoints", HYPERPOD_WILDCARD_REASONS)

    @property
    def role_arn(self) -> str:
        return self.role.role_arn


class HyperPodAutoscalingRole(Construct):
    """The cluster role HyperPod assumes to autoscale with Karpenter (``ClusterRole``), scoped.

    botocore's CreateCluster ``ClusterRole``: "This role must have permissions for
    sagemaker:BatchAddClusterNodes and sagemaker:BatchDeleteClusterNodes", and it is "only required
    when autoscaling is enabled". The SageMaker developer guide ("Create an IAM role for HyperPod
    autoscaling with Karpenter") trusts ``hyperpod.sagemaker.amazonaws.com`` and grants those two
    actions on ``arn:aws:sagemaker:*:*:cluster/*`` in the caller's account. Here: the same two
    actions on clusters of THIS account and Region only (a cluster's ARN ends in an id HyperPod
    chooses at creation, so no narrower ARN exists before the role must), and the trust limited to
    this account (``aws:SourceAccount``, confused deputy). The guide's KMS grant statement is for
    volumes encrypted with a customer key; no group here uses one, so it is left out.

    Attributes: ``role`` (``iam.IRole``), ``policy``.
    """

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        stack = v.stack_of(self)
        self.role: iam.IRole = service_role(self, "hyperpod.sagemaker.amazonaws.com",
                                            "SageMaker HyperPod Karpenter autoscaling (one cluster)")
        statement = allow("AutoscaleClusterNodes", ["sagemaker:BatchAddClusterNodes", "sagemaker:BatchDeleteClusterNodes"],
                          [scoped_arn(stack, "sagemaker", "cluster")])
        self.policy = managed_policy(self, [statement], self.role, "SageMaker HyperPod autoscaling: add and delete this "
                                     "account's cluster nodes in this Region", HYPERPOD_WILDCARD_REASONS)

    @property
    def role_arn(self) -> str:
        return self.role.role_arn
