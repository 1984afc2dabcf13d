"""The checkpoint bucket (and its access-log bucket): where SageMaker syncs /opt/ml/checkpoints.

Secure by default, in the manner of aws-solutions-constructs: SSE (S3-managed, or KMS with
the key you pass), versioned, BLOCK_ALL, TLS enforced by bucket policy, server access logs
to a separate log bucket, RETAIN. Versioning keeps an overwritten checkpoint recoverable;
the lifecycle expires old versions so a long run does not pay for every epoch forever.
"""

from __future__ import annotations

from typing import Optional

from aws_cdk import Annotations, Duration, RemovalPolicy, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.constructs.acknowledgements import acknowledge
from smddp_infra.contract import checkpoint_s3_uri

#: Default prefixes inside the bucket: checkpoints (read/write by the job), model artifacts
#: (written by SageMaker) and training code (uploaded by the SDK, read by the job).
CHECKPOINT_PREFIX = "checkpoints"
OUTPUT_PREFIX = "output"
CODE_PREFIX = "code"
#: Where the checkpoint bucket's server access logs go in the log bucket.
ACCESS_LOG_PREFIX = "checkpoint-bucket/"


def _private_bucket(scope: Construct, id: str, lifecycle_rule: s3.LifecycleRule,
                    encryption_key: Optional[kms.IKey] = None) -> s3.Bucket:
    """What every bucket this library creates is: SSE-KMS with ``encryption_key`` (and a bucket
    key), else SSE-S3; versioned, BLOCK_ALL, TLS only, retained, and without ACLs whatever the app's
    feature flags (S3 server access logs are granted by a bucket-policy statement for
    logging.s3.amazonaws.com, :func:`grant_access_log_delivery`; VPC flow logs by one for
    delivery.logs.amazonaws.com, TrainingVpc pins that flag on)."""
    return s3.Bucket(scope, id, encryption=s3.BucketEncryption.KMS if encryption_key else s3.BucketEncryption.S3_MANAGED,
                     encryption_key=encryption_key, bucket_key_enabled=True if encryption_key else None,
                     versioned=True, block_public_access=s3.BlockPublicAccess.BLOCK_ALL, enforce_ssl=True,
                     object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED, removal_policy=RemovalPolicy.RETAIN,
                     lifecycle_rules=[lifecycle_rule])


def secure_log_bucket(scope: Construct, id: str, *, retention_days: int = 365) -> s3.Bucket:
    """A bucket for S3 server access logs and VPC flow logs (SSE-S3: log delivery needs it)."""
    bucket = _private_bucket(scope, id, s3.LifecycleRule(
        id="ExpireLogs",
        expiration=Duration.days(retention_days),
        noncurrent_version_expiration=Duration.days(30),
        abort_incomplete_multipart_upload_after=Duration.days(7),
    ))
    acknowledge(bucket, "log-replication")
    acknowledge(bucket, "log-bucket-kms")
    return bucket


def grant_access_log_delivery(log_bucket: s3.IBucket, source: s3.Bucket, prefix: str) -> bool:
    """Let S3 server access logging write ``source``'s logs under ``prefix`` in ``log_bucket``.

    The statement aws-cdk-lib writes with ``@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy`` on
    (PutObject for logging.s3.amazonaws.com, scoped to the source bucket and account), written
    here explicitly: without the flag CDK would instead switch the log bucket to the
    LogDeliveryWrite ACL and ObjectWriter ownership. False when ``log_bucket`` is imported (its
    policy is not ours to change).
    """
    from aws_cdk import Stack, aws_iam as iam

    statement = iam.PolicyStatement(
        effect=iam.Effect.ALLOW,
        principals=[iam.ServicePrincipal("logging.s3.amazonaws.com")],
        actions=["s3:PutObject"],
        resources=[log_bucket.arn_for_objects(f"{prefix}*" if prefix else "*")],
        conditions={"ArnLike": {"aws:SourceArn": source.bucket_arn},
                    "StringEquals": {"aws:SourceAccount": Stack.of(source).account}},
    )
    return bool(log_bucket.add_to_resource_policy(statement).statement_added)


class CheckpointBucket(Construct):
    """A versioned, encrypted, TLS-only bucket for SageMaker checkpoints.

    The same bucket holds the job's model artifacts (``output/``) and the training code the SDK
    uploads (``code/``), so the execution role needs no access to SageMaker's default bucket.

    Attributes: ``bucket``, ``log_bucket`` (None when ``bucket`` was passed in),
    ``prefix``, ``output_prefix``, ``code_prefix``, and :meth:`s3_uri` for a job's
    ``checkpoint_s3_uri`` (``output_s3_uri``/``code_s3_uri`` for the other two).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        bucket: Optional[s3.IBucket] = None,
        log_bucket: Optional[s3.IBucket] = None,
        encryption_key: Optional[kms.IKey] = None,
        noncurrent_version_expiration_days: int = 30,
        prefix: str = CHECKPOINT_PREFIX,
        output_prefix: str = OUTPUT_PREFIX,
        code_prefix: str = CODE_PREFIX,
    ) -> None:
        """
        :param bucket: escape hatch: an existing bucket to use. Default: a new bucket.
        :param log_bucket: where server access logs go. Default: a new log bucket
            (``LogBucket``) is created when the checkpoint bucket is created here.
        :param encryption_key: KMS key for SSE-KMS. Default: S3-managed keys (SSE-S3).
        :param noncurrent_version_expiration_days: days before an overwritten checkpoint
            version expires. Default: 30.
        :param prefix: key prefix for checkpoints. Default: ``checkpoints``.
        :param output_prefix: key prefix for model artifacts. Default: ``output``.
        :param code_prefix: key prefix for uploaded training code. Default: ``code``.
        """
        v.require("bucket", bucket, "IBucket")
        v.require("log_bucket", log_bucket, "IBucket")
        v.require("encryption_key", encryption_key, "IKey")
        v.whole("noncurrent_version_expiration_days", noncurrent_version_expiration_days, minimum=1)
        for name, value in (("prefix", prefix), ("output_prefix", output_prefix), ("code_prefix", code_prefix)):
            v.text(name, value, optional=False)
        super().__init__(scope, id)
        v.stack_of(self)  # one line, not a jsii trace, when created outside a stack
        self.prefix = prefix.strip("/")
        self.output_prefix = output_prefix.strip("/")
        self.code_prefix = code_prefix.strip("/")
        self.log_bucket: Optional[s3.IBucket] = None
        if bucket is None:
            self.log_bucket = log_bucket or secure_log_bucket(self, "LogBucket")
            # Server access logs are wired below, not through server_access_logs_bucket: that prop's
            # grant depends on a feature flag (ACLs without it).
            bucket = _private_bucket(self, "Bucket", s3.LifecycleRule(
                id="ExpireOldCheckpointVersions",
                noncurrent_version_expiration=Duration.days(noncurrent_version_expiration_days),
                abort_incomplete_multipart_upload_after=Duration.days(7),
            ), encryption_key)
            cfn = bucket.node.default_child
            assert isinstance(cfn, s3.CfnBucket)
            cfn.logging_configuration = s3.CfnBucket.LoggingConfigurationProperty(
                destination_bucket_name=self.log_bucket.bucket_name, log_file_prefix=ACCESS_LOG_PREFIX
            )
            if not grant_access_log_delivery(self.log_bucket, bucket, ACCESS_LOG_PREFIX):
                Annotations.of(self).add_warning_v2(
                    "smddp:accessLogsPolicyNotAdded",
                    f"log_bucket {self.log_bucket.bucket_name} is imported: grant logging.s3.amazonaws.com s3:PutObject on "
                    f"{ACCESS_LOG_PREFIX}* in its bucket policy, or server access logs will not arrive",
                )
            acknowledge(bucket, "checkpoint-replication")
            if encryption_key is None:
                acknowledge(bucket, "checkpoint-bucket-sse-s3")
        self.bucket: s3.IBucket = bucket

    def s3_uri(self, prefix: Optional[str] = None) -> str:
        """``s3://<bucket>/<prefix>/`` with the trailing slash SageMaker's CheckpointConfig wants."""
        return checkpoint_s3_uri(self.bucket.bucket_name, self.prefix if prefix is None else prefix)

    def output_s3_uri(self) -> str:
        """``s3://<bucket>/output/``: the job's OutputDataConfig.S3OutputPath / SDK ``output_path``."""
        return checkpoint_s3_uri(self.bucket.bucket_name, self.output_prefix)

    def code_s3_uri(self) -> str:
        """``s3://<bucket>/code/``: the SDK's ``code_location``."""
        return checkpoint_s3_uri(self.bucket.bucket_name, self.code_prefix)
