"""Is a job document one that CreateTrainingJob would accept? One validator per rule.

Mirrors the API's own limits (botocore's sagemaker model: VpcConfig 1-5 groups and 1-16
subnets, id and ARN patterns, FileSystemDataSource enums) plus this project's rules: an EFA
instance type, S3 checkpoint/output/code prefixes ending in "/" (the role's grants are on
``<prefix>/*``, and a prefix without the slash also matches ``checkpoints-old/``) and a
Lustre DirectoryPath under ``/<mount name>``. Not applied by the construct, which writes the
document with unresolved CDK tokens; applied to every document the CLI reads.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence

from smddp_infra.contract import FILE_SYSTEM_ACCESS_MODES, FILE_SYSTEM_TYPE, MAX_RUNTIME_LIMIT_SECONDS, JobDocument
from smddp_infra.errors import ConfigError
from smddp_infra.facts.arns import SECURITY_GROUP_ID, TRAINING_PLAN_ARN, is_role_arn, is_training_plan_arn
from smddp_infra.facts.arns import TRAINING_PLAN_ARN_LENGTH as TRAINING_PLAN_ARN_LENGTH
from smddp_infra.facts.regions import check_az_id as check_az_id  # the schema, settings and job-config read it here
from smddp_infra.facts.s3 import split_s3_uri
from smddp_infra.facts.training_jobs import MAX_SECURITY_GROUPS, MAX_SUBNETS, plan_zone_problem  # read here by job-config
from smddp_infra.sizing.catalog import efa_instance

MAX_S3_URI = 1024  # CheckpointConfig.S3Uri and OutputDataConfig.S3OutputPath: at most 1024
_SUBNET_RE = re.compile(r"subnet-[0-9a-f]{8,17}")
_SECURITY_GROUP_RE = SECURITY_GROUP_ID
_FILE_SYSTEM_ID_RE = re.compile(r"fs-[0-9a-f]{8,17}")  # API: (fs-[0-9a-f]{8,}), length 11-21
_MOUNT_NAME_RE = re.compile(r"[A-Za-z0-9]+")
#: botocore's ResourceConfig.TrainingPlanArn pattern (:mod:`smddp_infra.facts.arns`), by its name here.
TRAINING_PLAN_ARN_RE = TRAINING_PLAN_ARN


def validate_document(doc: JobDocument, *, where: str = "stack 'stack'") -> JobDocument:
    """``doc`` unchanged, or :class:`ConfigError` naming the first value the API would refuse."""
    prefix = f"{where}: "
    _check_ids(doc.subnets, "subnets", _SUBNET_RE, "subnet-<8-17 hex digits>", MAX_SUBNETS, prefix)
    _check_ids(doc.security_group_ids, "securityGroupIds", _SECURITY_GROUP_RE, "sg-<8-17 hex digits>",
               MAX_SECURITY_GROUPS, prefix)
    if not is_role_arn(doc.role_arn):
        raise ConfigError(f"{prefix}roleArn must be an IAM role ARN (arn:aws:iam::<12 digits>:role/<name>), "
                          f"got {doc.role_arn!r}")
    _check_prefix_uri(doc.checkpoint_s3_uri, "checkpoint.s3Uri (output CheckpointS3Uri)", prefix)
    if doc.output_s3_uri is not None:
        _check_prefix_uri(doc.output_s3_uri, "output.s3Uri (output OutputS3Uri)", prefix)
    if doc.code_s3_uri is not None:
        _check_prefix_uri(doc.code_s3_uri, "code.s3Uri (output CodeS3Uri)", prefix)
    if not isinstance(doc.checkpoint_local_path, str) or not doc.checkpoint_local_path.startswith("/"):
        raise ConfigError(f"{prefix}checkpoint.localPath must be an absolute path "
                          f"(SageMaker syncs /opt/ml/checkpoints by default), got {doc.checkpoint_local_path!r}")
    _check_file_system(doc, prefix)
    efa_instance(doc.instance_type, setting=f"{prefix}instanceType")
    if isinstance(doc.instance_count, bool) or not isinstance(doc.instance_count, int) or doc.instance_count < 1:
        raise ConfigError(f"{prefix}instanceCount must be a whole number >= 1, got {doc.instance_count!r}")
    if doc.max_runtime_seconds is not None:
        check_max_runtime(doc.max_runtime_seconds, setting=f"{prefix}maxRuntimeInSeconds")
    if doc.training_plan_arn is not None:
        check_training_plan_arn(doc.training_plan_arn, setting=f"{prefix}trainingPlanArn")
    if doc.training_plan_availability_zone_id is not None:
        check_az_id(doc.training_plan_availability_zone_id, setting=f"{prefix}trainingPlanAvailabilityZoneId")
        check_plan_zone(doc, setting=f"{prefix}trainingPlanAvailabilityZoneId")
    return doc


def training_plan_arn_problem(value: Any) -> Optional[str]:
    """What is wrong with ``value`` as ResourceConfig.TrainingPlanArn (None: nothing)."""
    low, high = TRAINING_PLAN_ARN_LENGTH
    if not is_training_plan_arn(value):
        return (f"must be a SageMaker training plan ARN (arn:aws:sagemaker:<region>:<12-digit account>:"
                f"training-plan/<name>, {low} to {high} characters: CreateTrainingJob's "
                f"ResourceConfig.TrainingPlanArn), got {value!r}")
    return None


def check_training_plan_arn(value: Any, *, setting: str) -> str:
    """``value``, or one line naming ``setting`` and botocore's pattern."""
    _refuse(training_plan_arn_problem(value), setting)
    return str(value)


def check_plan_zone(doc: JobDocument, *, setting: str) -> Optional[str]:
    """:class:`ConfigError` (one line naming ``setting``) when the document's plan AZ ID and
    subnet AZ ID are both known and differ; the "not evaluated" line when the subnet's is not;
    None when they agree or no plan AZ is known."""
    if doc.training_plan_availability_zone_id is None:
        return None
    problem = plan_zone_problem(doc.availability_zone_id, doc.training_plan_availability_zone_id,
                                subnet_zone=doc.availability_zone)
    if problem is not None and problem.startswith("refused: "):
        raise ConfigError(f"{setting} {doc.training_plan_availability_zone_id!r}: {problem.removeprefix('refused: ')}")
    return problem


def max_runtime_problem(value: Any) -> Optional[str]:
    """What is wrong with ``value`` as StoppingCondition.MaxRuntimeInSeconds (None: nothing)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RUNTIME_LIMIT_SECONDS:
        return (f"must be a whole number of seconds from 1 to {MAX_RUNTIME_LIMIT_SECONDS:,} (28 days, the "
                f"CreateTrainingJob StoppingCondition.MaxRuntimeInSeconds limit), got {value!r}")
    return None


def check_max_runtime(value: Any, *, setting: str) -> int:
    """``value``, or one line naming ``setting`` (the context key, prop or document key the user
    wrote) and the API's range."""
    _refuse(max_runtime_problem(value), setting)
    return int(value)


def _refuse(problem: Optional[str], setting: str) -> None:
    if problem is not None:
        raise ConfigError(f"{setting} {problem}")


def _check_file_system(doc: JobDocument, prefix: str) -> None:
    fs = doc.file_system
    if not _FILE_SYSTEM_ID_RE.fullmatch(fs.id):
        raise ConfigError(f"{prefix}fileSystem.id must be an FSx file system id (fs-<8-17 hex digits>), got {fs.id!r}")
    if fs.type != FILE_SYSTEM_TYPE:
        raise ConfigError(f"{prefix}fileSystem.type must be {FILE_SYSTEM_TYPE!r} (the stack provisions "
                          f"FSx for Lustre), got {fs.type!r}")
    if fs.access_mode not in FILE_SYSTEM_ACCESS_MODES:
        raise ConfigError(f"{prefix}fileSystem.accessMode must be one of {', '.join(FILE_SYSTEM_ACCESS_MODES)}, "
                          f"got {fs.access_mode!r}")
    if not _MOUNT_NAME_RE.fullmatch(fs.mount_name):
        raise ConfigError(f"{prefix}fileSystem.mountName must be the Lustre mount name (letters and digits), "
                          f"got {fs.mount_name!r}")
    path = fs.directory_path
    if not (path == f"/{fs.mount_name}" or path.startswith(f"/{fs.mount_name}/")) or len(path) > 4096:
        raise ConfigError(f"{prefix}fileSystem.directoryPath must start with /{fs.mount_name} (the Lustre mount "
                          f"name: SageMaker mounts /<mount name>/<path>), got {path!r}")


def _check_prefix_uri(uri: Any, name: str, prefix: str) -> None:
    """An S3 prefix ending in "/": the role's grants are on ``<prefix>/*`` and SageMaker
    treats the URI as a key prefix (``checkpoints`` would also match ``checkpoints-old/``)."""
    if split_s3_uri(uri) is None or not uri.endswith("/") or len(uri) > MAX_S3_URI:
        raise ConfigError(f"{prefix}{name} must be s3://<bucket>/<prefix>/ ending in '/' "
                          f"(at most {MAX_S3_URI} characters), got {uri!r}")


def _check_ids(ids: Sequence[str], name: str, pattern: "re.Pattern[str]", shape: str, most: int,
               prefix: str) -> None:
    if isinstance(ids, str) or not 1 <= len(ids) <= most:
        count = "a string" if isinstance(ids, str) else f"{len(ids)} entries"
        raise ConfigError(f"{prefix}{name} must list 1 to {most} ids (CreateTrainingJob VpcConfig limit), got {count}")
    for value in ids:
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise ConfigError(f"{prefix}{name} entries must look like {shape}, got {value!r}")
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{prefix}{name} must not repeat an id, got {', '.join(ids)}")
