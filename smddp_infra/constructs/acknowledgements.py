"""Every rule-pack acknowledgement this project makes, with its reason, in ONE table.

Each entry is applied on the narrowest construct (the CfnResource) by :func:`acknowledge`,
and docs/security.md is checked against this table by the test suite, so the list a
security reviewer reads is the list the code applies.

Written twice, so that both cdk-nag majors see it and neither needs importing: cdk-nag 3 is
a validation plugin and reads ``Validations.of(x).acknowledge`` (rule ids such as
``AwsSolutions-IAM5[Resource::...]``); cdk-nag 2 is an Aspect and reads the resource's
``cdk_nag`` template Metadata (``rules_to_suppress``: ``id``, ``reason``, and ``applies_to``
for a granular finding), which is what its ``NagSuppressions.add_resource_suppressions``
writes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from aws_cdk import Acknowledgment, CfnResource, Stack, Validations
from constructs import IConstruct

from smddp_infra.constructs._validation import may_hold_token


@dataclass(frozen=True)
class Acknowledged:
    rule_ids: tuple[str, ...]
    resource: str
    reason: str


ACKNOWLEDGEMENTS: dict[str, Acknowledged] = {
    "efa-self-ingress": Acknowledged(
        ("NIST.800.53.R5-EC2RestrictedCommonPorts", "HIPAA.Security-EC2RestrictedCommonPorts"),
        "EFA security group self ingress",
        "The rule's only source is the security group itself (no CIDR range): EFA and NCCL need all "
        "traffic between the training instances (SageMaker SMDDP troubleshooting guide); nothing outside "
        "the group can reach any port.",
    ),
    "default-security-group": Acknowledged(
        ("NIST.800.53.R5-VPCDefaultSecurityGroupClosed", "HIPAA.Security-VPCDefaultSecurityGroupClosed"),
        "VPC",
        "Jobs, endpoints and the file system name their own groups; nothing is ever placed in the default "
        "group. Closing it takes a custom-resource Lambda this network-only stack avoids; set "
        "restrict_default_security_group=True on TrainingVpc where policy requires it.",
    ),
    "nat-igw-route": Acknowledged(
        ("NIST.800.53.R5-VPCNoUnrestrictedRouteToIGW", "HIPAA.Security-VPCNoUnrestrictedRouteToIGW"),
        "public subnet default route (smddp:natGateway=true only)",
        "The route exists only in the public subnet that holds the NAT gateway (natGateway=true); the "
        "training subnet has no route to the internet gateway and no public IPs.",
    ),
    "checkpoint-replication": Acknowledged(
        ("NIST.800.53.R5-S3BucketReplicationEnabled", "HIPAA.Security-S3BucketReplicationEnabled"),
        "checkpoint bucket",
        "Checkpoints are intermediate training state, versioned and retained in the training Region; "
        "cross-Region replication is an account-level decision (pass your own bucket to add it).",
    ),
    "log-replication": Acknowledged(
        ("NIST.800.53.R5-S3BucketReplicationEnabled", "HIPAA.Security-S3BucketReplicationEnabled"),
        "log bucket",
        "Access and flow logs are collected into the organisation's log archive by the platform, not "
        "replicated bucket by bucket.",
    ),
    "log-bucket-kms": Acknowledged(
        ("NIST.800.53.R5-S3DefaultEncryptionKMS", "HIPAA.Security-S3DefaultEncryptionKMS"),
        "log bucket",
        "S3 server access log delivery only supports SSE-S3 on the target bucket; logs are encrypted at rest "
        "with S3-managed keys.",
    ),
    "flow-log-bucket-access-logs": Acknowledged(
        ("AwsSolutions-S1", "NIST.800.53.R5-S3BucketLoggingEnabled", "HIPAA.Security-S3BucketLoggingEnabled"),
        "flow-log bucket (TrainingVpc alone, or a network given an existing checkpoint bucket)",
        "The bucket only receives VPC flow logs (a log bucket); server access logs of a log bucket would need "
        "yet another bucket. When the network also creates the checkpoint bucket, the same log bucket "
        "receives its access logs and this acknowledgement is not made.",
    ),
    "eks-cluster-role": Acknowledged(
        ("AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AmazonEKSClusterPolicy]",),
        "EKS control plane role (HyperPodCluster with orchestrator='eks' and no EKS cluster given)",
        "AmazonEKSClusterPolicy is the policy the EKS User Guide names for the cluster IAM role (\"Amazon EKS "
        "cluster IAM role\"); EKS itself assumes the role, and AWS updates the policy as EKS needs; "
        "aws_eks_v2 attaches it.",
    ),
    "eks-kubectl-lambda": Acknowledged(
        ("AwsSolutions-L1", "NIST.800.53.R5-LambdaConcurrency", "HIPAA.Security-LambdaConcurrency",
         "NIST.800.53.R5-LambdaDLQ", "HIPAA.Security-LambdaDLQ"),
        "kubectl provider functions of the EKS control plane (only with eks_kubectl_layer)",
        "aws-cdk-lib's kubectl handler and its provider framework (aws_eks_v2) install the HyperPod dependencies "
        "chart: CloudFormation invokes them, one request per custom resource, only during a deploy, and a "
        "failed call fails that deploy where CloudFormation reports it (nothing for a dead-letter queue to "
        "keep); the runtime is the one aws-cdk-lib pins for the handler and its kubectl layer.",
    ),
    "eks-kubectl-roles": Acknowledged(
        ("AwsSolutions-IAM4", "AwsSolutions-IAM5", "NIST.800.53.R5-IAMNoInlinePolicy", "HIPAA.Security-IAMNoInlinePolicy"),
        "kubectl provider roles of the EKS control plane (only with eks_kubectl_layer)",
        "Written by aws-cdk-lib (aws_eks_v2): the handler runs in the training subnet "
        "(AWSLambdaVPCAccessExecutionRole), logs (AWSLambdaBasicExecutionRole) and pulls the chart from the "
        "platform's ECR repository (AmazonEC2ContainerRegistryReadOnly); the framework may invoke only the "
        "handler, any of its versions (<handler arn>:*), through the inline policy aws-cdk-lib writes.",
    ),
    "hyperpod-training-operator-role": Acknowledged(
        ("AwsSolutions-IAM5",),
        "HyperPod training operator policy (EKS Pod Identity)",
        "Read-only SageMaker actions on HyperPod clusters of this account and Region: a cluster's ARN ends in "
        "its cluster id, which SageMaker assigns at creation.",
    ),
    "compute-quota-type": Acknowledged(
        ("CloudFormation-Validate::F3006",),
        "task governance compute quota (AWS::SageMaker::ComputeQuota)",
        "aws-cdk-lib 2.275's own type list predates AWS::SageMaker::ComputeQuota (its L1 arrives in 2.276); the "
        "CloudFormation registry has the type and cfn-lint 1.58 validates the resource against its schema.",
    ),
    "checkpoint-bucket-sse-s3": Acknowledged(
        ("NIST.800.53.R5-S3DefaultEncryptionKMS", "HIPAA.Security-S3DefaultEncryptionKMS"),
        "checkpoint bucket (default configuration only)",
        "Encrypted with S3-managed keys by default; set smddp:kmsKey (or encryption_key) for SSE-KMS, which "
        "removes this acknowledgement.",
    ),
}


#: Why each wildcard resource is as narrow as IAM allows (statement sid -> reason).
WILDCARD_REASONS = {
    "DescribeNetwork": "EC2 Describe* actions do not support resource-level permissions.",
    "TrainingMetrics": "cloudwatch:PutMetricData has no resource-level permissions; no namespace condition, because SageMaker Python SDK v3 validates the role by simulating this action with an empty context, where a condition is a definitive deny.",
    "DescribeFileSystem": "fsx:DescribeFileSystems is read-only; the Lustre EFA client may call it without a file system id filter (UNCONFIRMED), and a denied call makes Lustre over EFA fall back to TCP silently.",
    "EcrAuth": "ecr:GetAuthorizationToken does not support resource-level permissions.",
    "JobNetworkInterfaces": "SageMaker creates, shares and deletes one network interface per job instance; SageMaker Python SDK v3 validates the role by simulating these actions without a resource, so only the resource `*` passes. The job's subnet and groups are bound on the caller's CreateTrainingJob (sagemaker:VpcSubnets, sagemaker:VpcSecurityGroupIds), not here.",
    "TrainingLogs": "Log streams are named per training job under the /aws/sagemaker/TrainingJobs log group.",
    "EcrPull": "AWS Deep Learning Container images are separate repositories per framework in the DLC account.",
    "CheckpointReadWrite": "SageMaker writes checkpoint objects under the checkpoint prefix with names chosen by the training script.",
    "ModelOutputWrite": "SageMaker writes model artifacts under the output prefix with names it chooses per job.",
    "TrainingCodeRead": "The SDK uploads each job's script under the code prefix with a per-job name.",
    "StagedCodeRead": "SageMaker Python SDK v3 stages code and drivers under <output prefix>/<code prefix>/ with per-job names when the launching caller can simulate policies; read-only (an explicit deny stops writes there).",
    "DatasetRead": "Training reads every object under the dataset prefix (read-only).",
}

#: Why each wildcard resource of the launch policy (``TrainingLaunchPolicy``) is as narrow as IAM
#: allows (statement sid -> reason). Sids are those of :mod:`smddp_infra.guardrails`.
LAUNCH_WILDCARD_REASONS = {
    "LaunchTrainingInNetwork": "Job names are chosen at each launch, so the ARN ends in training-job/*; the conditions "
    "(subnet, security groups, instance types, encryption, file system, key) scope what may start.",
    "ManageTrainingJobs": "Describe, stop and tag apply to the jobs the principal starts, whose names are chosen per launch.",
    "TrainingCodeUpload": "The SDK uploads each job's script under the code prefix with a per-job name.",
    "ModelOutputRead": "SageMaker writes each job's model artifacts under the output prefix with a per-job name.",
    "StagedCodeUpload": "SageMaker Python SDK v3 stages each job's code and drivers under <output prefix>/<code prefix>/ with per-job names.",
    "TrainingLogsRead": "SageMaker names one log stream per job instance under the /aws/sagemaker/TrainingJobs log group.",
}

#: Why each wildcard resource of the HyperPod cluster role (``HyperPodClusterRole``) is as narrow as
#: IAM allows (statement sid -> reason).
HYPERPOD_WILDCARD_REASONS = {
    "ClusterLogGroup": "HyperPod creates the cluster's log group under /aws/sagemaker/Clusters/<cluster name>/ with a suffix it chooses (the cluster id), unknown at synth.",
    "ClusterLogStreams": "HyperPod names one log stream per node under the cluster's log group.",
    "ClusterMetrics": "cloudwatch:PutMetricData has no resource-level permissions; the grant is limited to the namespace /aws/sagemaker/Clusters by condition.",
    "NodeSessions": "The ssmmessages channel actions (Systems Manager access to the nodes) have no resource-level permissions.",
    "DescribeNetwork": "EC2 Describe* actions do not support resource-level permissions.",
    "NodeNetworkInterfaces": "HyperPod creates one network interface per node with ids chosen at launch; the subnet and security groups are named exactly.",
    "ManageNodeInterfaces": "HyperPod manages the nodes' network interfaces, whose ids are chosen at launch, in this account and Region only.",
    "DetachNodeInterfaces": "HyperPod detaches its nodes' network interfaces, whose ids and instances are chosen at launch; IAM authorizes the detach on both.",
    "DescribeFileSystem": "fsx:DescribeFileSystems takes no resource-level permission; read-only.",
    "TagNodeInterfaces": "Tags only on network interfaces being created (ec2:CreateAction condition), whose ids are chosen at launch.",
    "LifecycleScriptRead": "The nodes read the lifecycle script and whatever it sources under the lifecycle prefix (read-only).",
    "ClusterCheckpoints": "Training on the cluster writes checkpoint objects under the checkpoint prefix with names the script chooses.",
    "EksNodeDescribe": "The VPC CNI's EC2 Describe* calls on the nodes do not support resource-level permissions.",
    "EksPodInterfaces": "The VPC CNI manages the pods' network interfaces and addresses, whose ids are chosen at launch, in this account and Region only.",
    "EksAttachPodInterfaces": "The VPC CNI attaches pod network interfaces, whose ids and instances are chosen at launch; IAM authorizes the attach on both.",
    "EksImageRegistryToken": "ecr:GetAuthorizationToken has no resource-level permissions.",
    "EksImagePull": "The EKS add-ons' images are in AWS-owned accounts' ECR repositories of this Region (and the platform's own); read-only.",
    "AutoscaleClusterNodes": "A HyperPod cluster's ARN ends in an id chosen at creation, after the autoscaling role must exist; the grant is this account's clusters in this Region.",
}


#: cdk-nag 2 reads suppressions from this template Metadata key of the resource.
CDK_NAG_METADATA = "cdk_nag"
_GRANULAR = re.compile(r"(?P<rule>[^\[]+)\[(?P<finding>.+)\]")


def acknowledge(construct: IConstruct, key: str) -> None:
    """Apply the table entry ``key`` on ``construct``'s CfnResource (the narrowest construct)."""
    entry = ACKNOWLEDGEMENTS[key]
    acknowledge_rules(construct, [(rule_id, entry.reason) for rule_id in entry.rule_ids])


def acknowledge_wildcards(construct: IConstruct, reasons: Mapping[str, Sequence[str]]) -> None:
    """``AwsSolutions-IAM5`` acknowledged one wildcard resource at a time (finding -> reasons)."""
    acknowledge_rules(construct, [(f"AwsSolutions-IAM5[Resource::{finding}]", " ".join(why))
                                  for finding, why in reasons.items()])


def acknowledge_statement_wildcards(policy: IConstruct, statements: Iterable[tuple[Optional[str], Sequence[str]]],
                                    reasons: Mapping[str, str]) -> None:
    """``AwsSolutions-IAM5`` on each wildcard resource of ``policy``'s ``(sid, resources)`` statements,
    with the reason :data:`reasons` gives the sid (a resource several statements share gets each
    reason once); the one loop the execution role, the HyperPod roles and the launch policy share."""
    stack = Stack.of(policy)
    found: dict[str, list[str]] = {}
    for sid, resources in statements:
        reason = reasons.get(sid or "")
        for resource in resources:
            finding = nag_text(stack.resolve(resource) if may_hold_token(resource) else resource)
            if "*" in finding and reason and reason not in found.setdefault(finding, []):
                found[finding].append(reason)
    acknowledge_wildcards(policy, found)


def acknowledge_rules(construct: IConstruct, pairs: Iterable[tuple[str, str]]) -> None:
    """Acknowledge ``(rule id, reason)`` pairs on the CfnResource for both cdk-nag majors."""
    # isinstance, not CfnResource.is_cfn_resource: a round trip to the node process each, and jsii
    # hands back every aws-cdk-lib L1 as its Python class
    target = construct if isinstance(construct, CfnResource) else construct.node.default_child
    assert isinstance(target, CfnResource), f"no CfnResource under {construct.node.path}"
    pairs = list(pairs)
    Validations.of(target).acknowledge(*(Acknowledgment(id=rule_id, reason=reason) for rule_id, reason in pairs))
    existing = target.get_metadata(CDK_NAG_METADATA) or {}
    rules = list(existing.get("rules_to_suppress", []))
    for rule_id, reason in pairs:
        match = _GRANULAR.fullmatch(rule_id)
        entry = ({"id": match["rule"], "reason": reason, "applies_to": [match["finding"]]} if match
                 else {"id": rule_id, "reason": reason})
        if entry not in rules:
            rules.append(entry)
    target.add_metadata(CDK_NAG_METADATA, {**existing, "rules_to_suppress": rules})


def acknowledge_generated_role(role: IConstruct, key: str) -> None:
    """``key``'s rules on a role aws-cdk-lib wrote (and its inline DefaultPolicy): cdk-nag 3 names each
    AWS managed policy and wildcard in the finding, so the role's own are listed here."""
    entry = ACKNOWLEDGEMENTS[key]
    cfn = role.node.default_child
    assert isinstance(cfn, CfnResource)
    arns = Stack.of(role).resolve(getattr(cfn, "managed_policy_arns", None)) or []
    pairs = [(f"AwsSolutions-IAM4[Policy::{nag_text(arn)}]", entry.reason) for arn in arns]
    pairs += [(r, entry.reason) for r in entry.rule_ids if not r.startswith(("AwsSolutions-IAM4", "AwsSolutions-IAM5"))]
    acknowledge_rules(cfn, [p for p in pairs if "IAMNoInlinePolicy" not in p[0]])
    policy = role.node.try_find_child("DefaultPolicy")
    if policy is not None:
        acknowledge_wildcard_resources(policy, key)


def acknowledge_wildcard_resources(policy: IConstruct, key: str) -> None:
    """``key``'s reason on each wildcard resource of a policy (cdk-nag 3 names each in its finding),
    plus ``key``'s inline-policy rules."""
    entry = ACKNOWLEDGEMENTS[key]
    cfn = policy if CfnResource.is_cfn_resource(policy) else policy.node.default_child
    document = Stack.of(policy).resolve(cfn.policy_document)  # type: ignore[union-attr]
    wildcards = sorted({nag_text(r) for st in document["Statement"] for r in _as_list(st.get("Resource"))
                        if "*" in nag_text(r)})
    acknowledge_rules(policy, [(f"AwsSolutions-IAM5[Resource::{w}]", entry.reason) for w in wildcards]
                      + [(r, entry.reason) for r in entry.rule_ids if "IAMNoInlinePolicy" in r])


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else [value]


def nag_text(value: object) -> str:
    """How cdk-nag writes a resolved policy or resource in a finding: ``Fn::Join`` joined, ``Ref`` as
    ``<AWS::Partition>``/``<LogicalId>``, ``Fn::GetAtt`` as ``<Id.Attr>``, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if "Fn::Join" in value:
            sep, parts = value["Fn::Join"]
            return str(sep).join(nag_text(p) for p in parts)
        if "Ref" in value:
            return f"<{value['Ref']}>"
        if "Fn::GetAtt" in value:
            return f"<{'.'.join(value['Fn::GetAtt'])}>"
    return json.dumps(value, separators=(",", ":"))


def markdown_table() -> str:
    """The acknowledgement table of docs/security.md, rendered from :data:`ACKNOWLEDGEMENTS`."""
    rows = ["| rule | resource | reason |", "|---|---|---|"]
    for entry in ACKNOWLEDGEMENTS.values():
        for rule_id in entry.rule_ids:
            rows.append(f"| {rule_id} | {entry.resource} | {entry.reason} |")
    for sid, reason in WILDCARD_REASONS.items():
        rows.append(f"| AwsSolutions-IAM5[Resource::...] | execution role policy, statement {sid} | {reason} |")
    for sid, reason in LAUNCH_WILDCARD_REASONS.items():
        rows.append(f"| AwsSolutions-IAM5[Resource::...] | launch policy, statement {sid} | {reason} |")
    for sid, reason in HYPERPOD_WILDCARD_REASONS.items():
        rows.append(f"| AwsSolutions-IAM5[Resource::...] | HyperPod cluster role policy, statement {sid} | {reason} |")
    return "\n".join(rows) + "\n"
