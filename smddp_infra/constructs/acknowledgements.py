"""Every rule-pack acknowledgement this project makes, with its reason, in ONE table.

Each entry is applied on the narrowest construct (the CfnResource) by :func:`acknowledge`,
and docs/security.md is checked against this table by the test suite, so the list a
security reviewer reads is the list the code applies.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Acknowledgment, CfnResource, Validations
from constructs import IConstruct


@dataclass(frozen=True)
class Exception_:
    rule_ids: tuple[str, ...]
    resource: str
    reason: str


ACKNOWLEDGEMENTS: dict[str, Exception_] = {
    "efa-self-ingress": Exception_(
        ("NIST.800.53.R5-EC2RestrictedCommonPorts", "HIPAA.Security-EC2RestrictedCommonPorts"),
        "EFA security group self ingress",
        "The rule's only source is the security group itself (no CIDR range): EFA and NCCL need all "
        "traffic between the training instances (SageMaker SMDDP troubleshooting guide); nothing outside "
        "the group can reach any port.",
    ),
    "default-security-group": Exception_(
        ("NIST.800.53.R5-VPCDefaultSecurityGroupClosed", "HIPAA.Security-VPCDefaultSecurityGroupClosed"),
        "VPC",
        "Jobs, endpoints and the file system name their own groups; nothing is ever placed in the default "
        "group. Closing it takes a custom-resource Lambda this network-only stack avoids; set "
        "restrict_default_security_group=True on TrainingVpc where policy requires it.",
    ),
    "nat-igw-route": Exception_(
        ("NIST.800.53.R5-VPCNoUnrestrictedRouteToIGW", "HIPAA.Security-VPCNoUnrestrictedRouteToIGW"),
        "public subnet default route (smddp:natGateway=true only)",
        "The route exists only in the public subnet that holds the NAT gateway (natGateway=true); the "
        "training subnet has no route to the internet gateway and no public IPs.",
    ),
    "checkpoint-replication": Exception_(
        ("NIST.800.53.R5-S3BucketReplicationEnabled", "HIPAA.Security-S3BucketReplicationEnabled"),
        "checkpoint bucket",
        "Checkpoints are intermediate training state, versioned and retained in the training Region; "
        "cross-Region replication is an account-level decision (pass your own bucket to add it).",
    ),
    "log-replication": Exception_(
        ("NIST.800.53.R5-S3BucketReplicationEnabled", "HIPAA.Security-S3BucketReplicationEnabled"),
        "log bucket",
        "Access and flow logs are collected into the organisation's log archive by the platform, not "
        "replicated bucket by bucket.",
    ),
    "log-bucket-kms": Exception_(
        ("NIST.800.53.R5-S3DefaultEncryptionKMS", "HIPAA.Security-S3DefaultEncryptionKMS"),
        "log bucket",
        "S3 server access log delivery only supports SSE-S3 on the target bucket; logs are encrypted at rest "
        "with S3-managed keys.",
    ),
    "checkpoint-bucket-sse-s3": Exception_(
        ("NIST.800.53.R5-S3DefaultEncryptionKMS", "HIPAA.Security-S3DefaultEncryptionKMS"),
        "checkpoint bucket (default configuration only)",
        "Encrypted with S3-managed keys by default; set smddp:kmsKey (or encryption_key) for SSE-KMS, which "
        "removes this acknowledgement.",
    ),
}


def acknowledge(construct: IConstruct, key: str) -> None:
    """Apply the table entry ``key`` on ``construct``'s CfnResource (the narrowest construct)."""
    entry = ACKNOWLEDGEMENTS[key]
    target = construct if CfnResource.is_cfn_resource(construct) else construct.node.default_child
    assert target is not None and CfnResource.is_cfn_resource(target), f"{key}: no CfnResource under {construct.node.path}"
    Validations.of(target).acknowledge(*(Acknowledgment(id=rule_id, reason=entry.reason) for rule_id in entry.rule_ids))
