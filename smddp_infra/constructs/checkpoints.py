"""The checkpoint bucket (and its access-log bucket): where SageMaker syncs /opt/ml/checkpoints.

Secure by default, in the manner of aws-solutions-constructs: SSE (S3-managed, or KMS with
the key you pass), versioned, BLOCK_ALL, TLS enforced by bucket policy, server access logs
to a separate log bucket, RETAIN. Versioning keeps an overwritten checkpoint recoverable;
the lifecycle expires old versions so a long run does not pay for every epoch forever.
"""

from __future__ import annotations

from typing import Optional

from aws_cdk import Duration, RemovalPolicy, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.constructs.acknowledgements import acknowledge
from smddp_infra.contract import checkpoint_s3_uri

#: Default prefixes inside the bucket: checkpoints (read/write by the job), model artifacts
#: (written by SageMaker) and training code (uploaded by the SDK, read by the job).
CHECKPOINT_PREFIX = "checkpoints"
OUTPUT_PREFIX = "output"
CODE_PREFIX = "code"


def secure_log_bucket(scope: Construct, id: str, *, retention_days: int = 365) -> s3.Bucket:
    """A bucket for S3 server access logs and VPC flow logs (SSE-S3: log delivery needs it)."""
    bucket = s3.Bucket(
        scope,
        id,
        encryption=s3.BucketEncryption.S3_MANAGED,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        enforce_ssl=True,
        versioned=True,
        # object ownership left to CDK: with the serverAccessLogsUseBucketPolicy flag (recommended)
        # logs are delivered under a bucket policy; without it, by the LogDeliveryWrite ACL, which
        # needs ObjectWriter. Forcing BUCKET_OWNER_ENFORCED breaks apps without the flag.
        removal_policy=RemovalPolicy.RETAIN,
        lifecycle_rules=[
            s3.LifecycleRule(
                id="ExpireLogs",
                expiration=Duration.days(retention_days),
                noncurrent_version_expiration=Duration.days(30),
                abort_incomplete_multipart_upload_after=Duration.days(7),
            )
        ],
    )
    acknowledge(bucket, "log-replication")
    acknowledge(bucket, "log-bucket-kms")
    return bucket


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
        super().__init__(scope, id)
        if isinstance(noncurrent_version_expiration_days, bool) or not isinstance(noncurrent_version_expiration_days, int) or noncurrent_version_expiration_days < 1:
            from smddp_infra.errors import ConfigError

            raise ConfigError(
                f"noncurrent_version_expiration_days must be a whole number >= 1, got {noncurrent_version_expiration_days!r}"
            )
        self.prefix = prefix.strip("/")
        self.output_prefix = output_prefix.strip("/")
        self.code_prefix = code_prefix.strip("/")
        self.log_bucket: Optional[s3.IBucket] = None
        if bucket is None:
            self.log_bucket = log_bucket or secure_log_bucket(self, "LogBucket")
            bucket = s3.Bucket(
                self,
                "Bucket",
                encryption=s3.BucketEncryption.KMS if encryption_key else s3.BucketEncryption.S3_MANAGED,
                encryption_key=encryption_key,
                bucket_key_enabled=True if encryption_key else None,
                versioned=True,
                block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
                enforce_ssl=True,
                object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
                server_access_logs_bucket=self.log_bucket,
                server_access_logs_prefix="checkpoint-bucket/",
                removal_policy=RemovalPolicy.RETAIN,
                lifecycle_rules=[
                    s3.LifecycleRule(
                        id="ExpireOldCheckpointVersions",
                        noncurrent_version_expiration=Duration.days(noncurrent_version_expiration_days),
                        abort_incomplete_multipart_upload_after=Duration.days(7),
                    )
                ],
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
