"""The IAM policy ``diagnose`` needs: read-only, every action it calls, nothing else.

EC2 ``Describe*``, ``fsx:DescribeFileSystems`` and ``cloudwatch:GetMetricData`` support no
resource-level permissions (the Service Authorization Reference lists no resource type for
them), so they are granted on ``*``; the SageMaker and CloudWatch Logs reads are scoped to
training jobs, HyperPod clusters (and their nodes), EKS clusters (an EKS-orchestrated HyperPod
cluster's) and the training-job and HyperPod log groups. ``--stack`` adds
CloudFormation's two reads, scoped to stacks.
"""

from __future__ import annotations

from typing import Any

#: Actions that take no resource ARN.
UNSCOPED_ACTIONS = (
    "cloudwatch:GetMetricData",
    "ec2:DescribeNetworkAcls",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeRouteTables",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSubnets",
    "ec2:DescribeVpcEndpoints",
    "ec2:DescribeVpcs",
    "fsx:DescribeFileSystems",
)
SCOPED = (
    (("sagemaker:DescribeTrainingJob",), "arn:${partition}:sagemaker:*:${account}:training-job/*"),
    (("sagemaker:DescribeCluster", "sagemaker:DescribeClusterNode", "sagemaker:ListClusterNodes"),
     "arn:${partition}:sagemaker:*:${account}:cluster/*"),
    (("ec2:DescribeVpcAttribute",), "arn:${partition}:ec2:*:${account}:vpc/*"),
    (("eks:DescribeCluster", "eks:ListAddons"), "arn:${partition}:eks:*:${account}:cluster/*"),
    (("eks:DescribeAddon",), "arn:${partition}:eks:*:${account}:addon/*"),
    (("logs:FilterLogEvents",), "arn:${partition}:logs:*:${account}:log-group:/aws/sagemaker/TrainingJobs:*"),
    (("logs:FilterLogEvents",), "arn:${partition}:logs:*:${account}:log-group:/aws/sagemaker/Clusters/*"),
    (("cloudformation:DescribeStackResources", "cloudformation:GetTemplate"), "arn:${partition}:cloudformation:*:${account}:stack/*/*"),
)


def all_actions() -> tuple[str, ...]:
    return tuple(sorted(set(UNSCOPED_ACTIONS) | {a for actions, _ in SCOPED for a in actions}))


def policy_document(*, account: str = "*", partition: str = "aws") -> dict[str, Any]:
    statements: list[dict[str, Any]] = [
        {"Sid": "DescribeNetworkAndMetrics", "Effect": "Allow", "Action": list(UNSCOPED_ACTIONS), "Resource": "*"}]
    for index, (actions, arn) in enumerate(SCOPED):
        statements.append({"Sid": f"Read{index}", "Effect": "Allow", "Action": list(actions),
                           "Resource": arn.replace("${partition}", partition).replace("${account}", account)})
    return {"Version": "2012-10-17", "Statement": statements}
