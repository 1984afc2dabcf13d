"""Launch guardrails: IAM that lets a principal start training jobs only inside the network.

PURE (no ``aws_cdk``): the one place the statements are written. The construct
(:class:`smddp_infra.constructs.launch_policy.TrainingLaunchPolicy`) passes CDK tokens, the CLI
(``smddp-infra guardrails``) passes the real ids from ``cdk-outputs.json``; both get the same
statements from :func:`launch_policy_document` (allow style, attach to the people and roles
that start jobs) or :func:`deny_policy_document` (deny style, for an SCP or a permissions
boundary).

Why IAM: every other part of this project makes the SMDDP guide's failures impossible for
jobs that use our settings. A job started with its own subnets in two AZs, the account's
default security group (no EFA self rules) or another role stalls again. SageMaker's
``CreateTrainingJob`` exposes the request's network as condition keys (AWS's service
authorization reference, as carried by parliament's IAM database):

- ``sagemaker:VpcSubnets``, ``sagemaker:VpcSecurityGroupIds`` and ``sagemaker:InstanceTypes`` are
  MULTI-valued (ArrayOfString): they need a set operator. ``ForAllValues:`` is true when every
  value in the request is in the policy's list, and VACUOUSLY true when the key is missing (a
  request without ``VpcConfig``); so each ``ForAllValues`` on a required key is paired with
  ``Null: false``. ``ForAnyValue:`` is false when the key is missing.
- The ``sagemaker:FileSystem*`` keys are single-valued Strings in the database (a job may have
  several channels: how SageMaker fills a single-valued key from two FSx channels is
  UNCONFIRMED), so they take ``StringEqualsIfExists``: an FSx channel must be ours, a job
  without one is not refused.
- ``sagemaker:InterContainerTrafficEncryption`` is a Bool; ``sagemaker:VolumeKmsKey`` and
  ``sagemaker:OutputKmsKey`` are single-valued ARNs.

What IAM cannot express (so the policy does not pretend to): the instance count (no
condition key; the training subnet's size bounds it), and which role a ``iam:PassRole`` is
for (PassRole carries no training-job context, so the deny style leaves it out; the allow
style grants PassRole of the execution role only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from smddp_infra.contract import JobDocument
from smddp_infra.errors import ConfigError

#: Service principal the execution role may be passed to (``iam:PassedToService``).
SAGEMAKER_SERVICE = "sagemaker.amazonaws.com"
#: CloudWatch Logs group SageMaker writes training-job logs to.
TRAINING_LOG_GROUP = "/aws/sagemaker/TrainingJobs"

#: Statement ids: the construct, the CLI, the review pack and the tests name statements by these.
SID_LAUNCH = "LaunchTrainingInNetwork"
SID_PASS_ROLE = "PassExecutionRole"
SID_MANAGE = "ManageTrainingJobs"
SID_BUCKET_LIST = "JobBucketList"
SID_CODE = "TrainingCodeUpload"
SID_OUTPUT = "ModelOutputRead"
SID_STAGED = "StagedCodeUpload"
SID_SIMULATE = "ValidateExecutionRole"
SID_KEY = "JobBucketKey"
SID_LOGS = "TrainingLogsRead"

LAUNCH_ACTIONS = ("sagemaker:CreateTrainingJob",)
TUNING_ACTIONS = ("sagemaker:CreateHyperParameterTuningJob",)
FSX_LUSTRE = "FSxLustre"


@dataclass(frozen=True)
class LaunchScope:
    """Everything the launch policy is scoped to, as strings (CDK tokens or real ids).

    ``security_group_ids[0]`` is the network's EFA group: a job must carry it (the file system
    shares it), and may carry the network's other groups (every one has the EFA self rules).
    """

    partition: str
    region: str
    account: str
    subnet_ids: tuple[str, ...]
    security_group_ids: tuple[str, ...]
    role_arn: str
    instance_types: tuple[str, ...]
    encrypt_inter_container_traffic: bool = True
    file_system_id: Optional[str] = None
    file_system_mount_name: Optional[str] = None
    file_system_access_mode: str = "ro"
    kms_key_arn: Optional[str] = None
    #: Also require ``OutputDataConfig.KmsKeyId`` = the key (not only "if given, this key").
    #: Off by default: ``smddp-infra job-config`` does not render a KmsKeyId yet.
    require_output_kms_key: bool = False
    bucket_name: Optional[str] = None
    code_prefix: Optional[str] = None
    output_prefix: Optional[str] = None
    include_tuning_jobs: bool = False
    #: Training plans jobs may run on (``ResourceConfig.TrainingPlanArn``): CreateTrainingJob is
    #: then also authorized on the plan's ARN (AWS's service authorization reference, as carried
    #: by parliament 1.6.4's database, lists ``training-plan`` among CreateTrainingJob's resource
    #: types; that SageMaker refuses a plan not granted here: UNCONFIRMED), so list them here. A
    #: deployed network's document names its one plan, and ``scope_from_document`` allows exactly it.
    training_plan_arns: tuple[str, ...] = ()
    #: Job names the principal may use: ``""`` means any (``training-job/*``).
    job_name_prefix: str = ""
    #: Escape hatch for UNCONFIRMED keys: condition keys to leave out of every statement.
    omit_condition_keys: tuple[str, ...] = ()
    #: More conditions for the launch statement, ``{operator: {key: value}}``, merged in.
    extra_conditions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: The partition's DNS suffix (``amazonaws.com.cn`` in China; a CDK token such as
    #: ``AWS::URLSuffix``). Default: the suffix of ``partition`` when it is a known partition name.
    url_suffix: Optional[str] = None

    def __post_init__(self) -> None:
        if not self.subnet_ids:
            raise ConfigError("the launch policy needs at least one training subnet id, got none")
        if not self.security_group_ids:
            raise ConfigError("the launch policy needs at least one security group id, got none")
        if not self.instance_types:
            raise ConfigError("the launch policy needs at least one instance type, got none")
        if self.file_system_access_mode not in ("ro", "rw"):
            raise ConfigError(f"file_system_access_mode must be 'ro' or 'rw', got {self.file_system_access_mode!r}")
        for key in self.omit_condition_keys:
            if not isinstance(key, str) or ":" not in key:
                raise ConfigError(f"omit_condition_keys entries must be condition keys like 'sagemaker:FileSystemId', got {key!r}")

    # --- ARNs -------------------------------------------------------------------------------
    def arn(self, service: str, resource: str, *, region: Optional[str] = None, account: Optional[str] = None) -> str:
        r = self.region if region is None else region
        a = self.account if account is None else account
        return f"arn:{self.partition}:{service}:{r}:{a}:{resource}"

    @property
    def s3_via_service(self) -> str:
        """``kms:ViaService`` for S3 in this region: ``s3.<region>.<the partition's URL suffix>``."""
        from smddp_infra.partitions import URL_SUFFIXES

        suffix = self.url_suffix if self.url_suffix is not None else URL_SUFFIXES.get(self.partition)
        if suffix is None:
            raise ConfigError(f"the launch policy's partition {self.partition!r} is not a known partition name: pass "
                              "url_suffix (the partition's DNS suffix, e.g. amazonaws.com.cn)")
        return f"s3.{self.region}.{suffix}"

    @property
    def job_arns(self) -> list[str]:
        arns = [self.arn("sagemaker", f"training-job/{self.job_name_prefix}*")]
        if self.include_tuning_jobs:
            arns.append(self.arn("sagemaker", f"hyper-parameter-tuning-job/{self.job_name_prefix}*"))
        return arns

    @property
    def launch_actions(self) -> list[str]:
        return list(LAUNCH_ACTIONS + (TUNING_ACTIONS if self.include_tuning_jobs else ()))

    @property
    def access_modes(self) -> list[str]:
        """``rw`` includes ``ro``: a read-only channel is never less safe than a read-write one."""
        return ["ro", "rw"] if self.file_system_access_mode == "rw" else ["ro"]


def launch_conditions(scope: LaunchScope) -> dict[str, dict[str, Any]]:
    """The condition block of :data:`SID_LAUNCH`: operators AND together, keys AND together."""
    conditions: dict[str, dict[str, Any]] = {
        # ForAllValues below is vacuously true for a missing key: require the keys to exist.
        "Null": {"sagemaker:VpcSubnets": "false", "sagemaker:VpcSecurityGroupIds": "false",
                 "sagemaker:InstanceTypes": "false"},
        "ForAllValues:StringEquals": {
            "sagemaker:VpcSubnets": list(scope.subnet_ids),
            "sagemaker:VpcSecurityGroupIds": list(scope.security_group_ids),
            "sagemaker:InstanceTypes": list(scope.instance_types),
        },
        # The EFA group must be among them (the file system and the self rules live on it).
        "ForAnyValue:StringEquals": {"sagemaker:VpcSecurityGroupIds": [scope.security_group_ids[0]]},
    }
    if scope.encrypt_inter_container_traffic:
        # Bool on a missing key is false: the request must say EnableInterContainerTrafficEncryption=true.
        conditions["Bool"] = {"sagemaker:InterContainerTrafficEncryption": "true"}
    if scope.file_system_id is not None:
        # An FSx channel must be this file system; a job without an FSx channel is not refused.
        conditions["StringEqualsIfExists"] = {
            "sagemaker:FileSystemId": scope.file_system_id,
            "sagemaker:FileSystemType": FSX_LUSTRE,
            "sagemaker:FileSystemAccessMode": scope.access_modes,
        }
        if scope.file_system_mount_name is not None:
            mount = scope.file_system_mount_name
            conditions["StringLikeIfExists"] = {"sagemaker:FileSystemDirectoryPath": [f"/{mount}", f"/{mount}/*"]}
    if scope.kms_key_arn is not None:
        # VolumeKmsKey: every EFA type has NVMe instance storage, for which SageMaker refuses a
        # VolumeKmsKeyId; "if given, this key" costs nothing and survives a future EBS type.
        conditions["ArnEqualsIfExists"] = {"sagemaker:VolumeKmsKey": scope.kms_key_arn}
        if scope.require_output_kms_key:
            conditions["ArnEquals"] = {"sagemaker:OutputKmsKey": scope.kms_key_arn}
        else:
            conditions["ArnEqualsIfExists"]["sagemaker:OutputKmsKey"] = scope.kms_key_arn
    for operator, pairs in scope.extra_conditions.items():
        conditions.setdefault(operator, {}).update(dict(pairs))
    return _omit(conditions, scope.omit_condition_keys)


def _omit(conditions: dict[str, dict[str, Any]], keys: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    out = {op: {k: v for k, v in pairs.items() if k not in keys} for op, pairs in conditions.items()}
    return {op: pairs for op, pairs in out.items() if pairs}


def objects_under(prefix: Optional[str]) -> str:
    """``checkpoints`` -> ``checkpoints/*``; an empty prefix (or none) means the whole bucket (``*``).
    The one spelling of "the objects under a prefix": the launch policy and the roles' grants."""
    prefix = (prefix or "").strip("/")
    return f"{prefix}/*" if prefix else "*"


def launch_statements(scope: LaunchScope) -> list[dict[str, Any]]:
    """Allow-style statements: what a principal needs to start, watch and stop jobs here."""
    statements: list[dict[str, Any]] = [
        {"Sid": SID_LAUNCH, "Effect": "Allow", "Action": scope.launch_actions,
         "Resource": scope.job_arns + list(scope.training_plan_arns),
         "Condition": launch_conditions(scope)},
        {"Sid": SID_PASS_ROLE, "Effect": "Allow", "Action": "iam:PassRole", "Resource": scope.role_arn,
         "Condition": {"StringEquals": {"iam:PassedToService": SAGEMAKER_SERVICE}}},
        # SDK v3 validates the execution role with iam:SimulatePrincipalPolicy before it starts a
        # job (read-only, this role only); without it v3 only warns and stages code elsewhere.
        {"Sid": SID_SIMULATE, "Effect": "Allow", "Action": "iam:SimulatePrincipalPolicy", "Resource": scope.role_arn},
        {"Sid": SID_MANAGE, "Effect": "Allow",
         "Action": ["sagemaker:AddTags", "sagemaker:DescribeTrainingJob", "sagemaker:StopTrainingJob"]
         + (["sagemaker:DescribeHyperParameterTuningJob", "sagemaker:StopHyperParameterTuningJob"]
            if scope.include_tuning_jobs else []),
         "Resource": scope.job_arns},
    ]
    if scope.bucket_name is not None:
        bucket = f"arn:{scope.partition}:s3:::{scope.bucket_name}"
        prefixes = [p.strip("/") for p in (scope.code_prefix, scope.output_prefix) if p is not None]
        if prefixes:
            statements.append({"Sid": SID_BUCKET_LIST, "Effect": "Allow", "Action": "s3:ListBucket", "Resource": bucket,
                               "Condition": {"StringLike": {"s3:prefix": [q for p in prefixes for q in (p, objects_under(p))]}}})
        if scope.code_prefix is not None:
            # The SDK tars the script and uploads it under code_location before CreateTrainingJob.
            statements.append({"Sid": SID_CODE, "Effect": "Allow",
                               "Action": ["s3:AbortMultipartUpload", "s3:GetObject", "s3:PutObject"],
                               "Resource": f"{bucket}/{objects_under(scope.code_prefix)}"})
        if scope.output_prefix is not None:
            statements.append({"Sid": SID_OUTPUT, "Effect": "Allow", "Action": "s3:GetObject",
                               "Resource": f"{bucket}/{objects_under(scope.output_prefix)}"})
        if scope.output_prefix and scope.output_prefix.strip("/") and scope.code_prefix and scope.code_prefix.strip("/"):
            # SDK v3's ModelTrainer stages code and drivers under <output>/<code>/ when the caller
            # can simulate the role (the execution role reads it there: StagedCodeRead).
            staged = f"{scope.output_prefix.strip('/')}/{scope.code_prefix.strip('/')}"
            statements.append({"Sid": SID_STAGED, "Effect": "Allow", "Action": ["s3:AbortMultipartUpload", "s3:PutObject"],
                               "Resource": f"{bucket}/{staged}/*"})
        if scope.kms_key_arn is not None and (scope.code_prefix is not None or scope.output_prefix is not None):
            # SSE-KMS bucket: uploading needs GenerateDataKey, reading needs Decrypt, on this key only.
            statements.append({"Sid": SID_KEY, "Effect": "Allow", "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
                               "Resource": scope.kms_key_arn,
                               "Condition": {"StringEquals": {"kms:ViaService": scope.s3_via_service}}})
    group = scope.arn("logs", f"log-group:{TRAINING_LOG_GROUP}")
    statements.append({"Sid": SID_LOGS, "Effect": "Allow",
                       "Action": ["logs:DescribeLogStreams", "logs:FilterLogEvents", "logs:GetLogEvents"],
                       "Resource": [group, f"{group}:log-stream:*"]})
    return statements


def launch_policy_document(scope: LaunchScope) -> dict[str, Any]:
    """The allow-style policy document (IAM JSON)."""
    return {"Version": "2012-10-17", "Statement": launch_statements(scope)}


def deny_statements(scope: LaunchScope) -> list[dict[str, Any]]:
    """Deny-style: "deny CreateTrainingJob unless ..." for an SCP or a permissions boundary.

    One statement per refused property, because a Deny's conditions AND together: "deny when
    the subnet is foreign OR the group is foreign" must be two statements. Tuning jobs are
    always covered: SageMaker starts a tuning job's training jobs itself, so leaving
    ``CreateHyperParameterTuningJob`` open would be a side door around the guardrail.
    """
    actions = list(LAUNCH_ACTIONS + TUNING_ACTIONS)
    jobs = [scope.arn("sagemaker", "training-job/*"), scope.arn("sagemaker", "hyper-parameter-tuning-job/*")]

    def deny(sid: str, operator: str, key: str, value: Any) -> dict[str, Any]:
        return {"Sid": sid, "Effect": "Deny", "Action": actions, "Resource": jobs, "Condition": {operator: {key: value}}}

    def present(statement: dict[str, Any]) -> dict[str, Any]:
        (key,) = {k for pairs in statement["Condition"].values() for k in pairs}
        return {**statement, "Condition": {**statement["Condition"], "Null": {key: "false"}}}

    statements = [
        deny("DenyTrainingWithoutSubnets", "Null", "sagemaker:VpcSubnets", "true"),
        deny("DenyTrainingWithoutSecurityGroups", "Null", "sagemaker:VpcSecurityGroupIds", "true"),
        deny("DenyForeignSubnets", "ForAnyValue:StringNotEquals", "sagemaker:VpcSubnets", list(scope.subnet_ids)),
        deny("DenyForeignSecurityGroups", "ForAnyValue:StringNotEquals", "sagemaker:VpcSecurityGroupIds",
             list(scope.security_group_ids)),
        # ForAllValues:StringNotEquals [efa]: no value in the request is the EFA group.
        deny("DenyWithoutEfaGroup", "ForAllValues:StringNotEquals", "sagemaker:VpcSecurityGroupIds",
             [scope.security_group_ids[0]]),
        deny("DenyOtherInstanceTypes", "ForAnyValue:StringNotEquals", "sagemaker:InstanceTypes", list(scope.instance_types)),
    ]
    if scope.encrypt_inter_container_traffic:
        # IfExists: a request that does not say true (missing or false) is refused.
        statements.append(deny("DenyUnencryptedInterContainerTraffic", "BoolIfExists",
                               "sagemaker:InterContainerTrafficEncryption", "false"))
    # A negated operator (StringNotEquals, ArnNotEquals) is TRUE when the key is missing, so
    # "deny a foreign file system/key" also says Null: false, or it would deny every job
    # without an FSx channel or a key.
    if scope.file_system_id is not None:
        statements.append(present(deny("DenyForeignFileSystems", "StringNotEquals", "sagemaker:FileSystemId",
                                       scope.file_system_id)))
    if scope.kms_key_arn is not None:
        statements.append(present(deny("DenyForeignVolumeKey", "ArnNotEquals", "sagemaker:VolumeKmsKey", scope.kms_key_arn)))
        output_key = deny("DenyForeignOutputKey", "ArnNotEquals", "sagemaker:OutputKmsKey", scope.kms_key_arn)
        statements.append(output_key if scope.require_output_kms_key else present(output_key))
    out = []
    for statement in statements:
        condition = _omit(statement["Condition"], scope.omit_condition_keys)
        if condition:
            out.append({**statement, "Condition": condition})
    return out


def deny_policy_document(scope: LaunchScope) -> dict[str, Any]:
    """The deny-style document: attach beside FullAWSAccess as an SCP, or add your allows for a boundary."""
    return {"Version": "2012-10-17", "Statement": deny_statements(scope)}


#: (operator, key) -> what a condition refuses, in words; ``{v}`` is the policy's value(s).
_REFUSALS: dict[tuple[str, str], str] = {
    ("Null", "sagemaker:VpcSubnets"): "a job without a VpcConfig (without this Null condition, ForAllValues would let the empty set through)",
    ("Null", "sagemaker:VpcSecurityGroupIds"): "a job without security groups",
    ("Null", "sagemaker:InstanceTypes"): "a request that names no instance type",
    ("ForAllValues:StringEquals", "sagemaker:VpcSubnets"): "a subnet other than {v} (e.g. a second AZ)",
    ("ForAllValues:StringEquals", "sagemaker:VpcSecurityGroupIds"): "a security group other than {v} (e.g. the VPC's default group)",
    ("ForAnyValue:StringEquals", "sagemaker:VpcSecurityGroupIds"): "a job without the EFA group {v}",
    ("ForAllValues:StringEquals", "sagemaker:InstanceTypes"): "an instance type other than {v}",
    ("Bool", "sagemaker:InterContainerTrafficEncryption"): "a job that does not set EnableInterContainerTrafficEncryption={v}",
    ("StringEqualsIfExists", "sagemaker:FileSystemId"): "an FSx channel on a file system other than {v}",
    ("StringEqualsIfExists", "sagemaker:FileSystemType"): "a file-system channel of a type other than {v}",
    ("StringEqualsIfExists", "sagemaker:FileSystemAccessMode"): "an FSx channel with an access mode other than {v}",
    ("StringLikeIfExists", "sagemaker:FileSystemDirectoryPath"): "an FSx directory outside {v}",
    ("ArnEqualsIfExists", "sagemaker:VolumeKmsKey"): "a volume KMS key other than {v}",
    ("ArnEqualsIfExists", "sagemaker:OutputKmsKey"): "an output KMS key other than {v}",
    ("ArnEquals", "sagemaker:OutputKmsKey"): "a job whose output KMS key is not {v}",
    ("StringEquals", "iam:PassedToService"): "passing the role to a service other than {v}",
}


def refusal(operator: str, key: str, values: str) -> str:
    """What one condition of an Allow refuses, in words (a generic line for conditions we did not write)."""
    template = _REFUSALS.get((operator, key))
    return template.format(v=values) if template else f"a request that fails {operator} {key} = {values}"


_ROLE_ARN = re.compile(r"arn:(?P<partition>aws[a-z-]*):iam::(?P<account>\d{12}):role/[\w+=,.@/-]+")


def _bucket_and_prefix(uri: str, setting: str) -> tuple[str, str]:
    if not uri.startswith("s3://") or len(uri) <= len("s3://"):
        raise ConfigError(f"{setting} must be an s3://bucket/prefix/ URI, got {uri!r}")
    bucket, _, prefix = uri[len("s3://"):].partition("/")
    return bucket, prefix.strip("/")


def scope_from_document(doc: JobDocument, *, where: str = "", instance_types: Sequence[str] = (),
                        include_tuning_jobs: bool = False) -> LaunchScope:
    """The launch scope of a deployed network (real ids from cdk-outputs.json).

    Partition and account come from the execution role's ARN (the document has no account);
    ``instance_types`` replaces the document's one type when given.
    """
    match = _ROLE_ARN.fullmatch(doc.role_arn)
    if match is None:
        raise ConfigError(f"{where}roleArn must be an IAM role ARN (arn:<partition>:iam::<12-digit account>:role/...), "
                          f"got {doc.role_arn!r}")
    bucket: Optional[str] = None
    prefixes: dict[str, str] = {}
    for name, uri in (("code.s3Uri", doc.code_s3_uri), ("output.s3Uri", doc.output_s3_uri)):
        if uri is None:
            continue
        this_bucket, prefixes[name] = _bucket_and_prefix(uri, f"{where}{name}")
        if bucket is not None and this_bucket != bucket:
            raise ConfigError(f"{where}code.s3Uri and output.s3Uri must be in one job bucket, got {bucket!r} and {this_bucket!r}")
        bucket = this_bucket
    return LaunchScope(
        partition=match["partition"],
        region=doc.region,
        account=match["account"],
        subnet_ids=tuple(doc.subnets),
        security_group_ids=tuple(doc.security_group_ids),
        role_arn=doc.role_arn,
        instance_types=tuple(instance_types) or (doc.instance_type,),
        encrypt_inter_container_traffic=doc.encrypt_inter_container_traffic,
        file_system_id=doc.file_system.id,
        file_system_mount_name=doc.file_system.mount_name,
        file_system_access_mode=doc.file_system.access_mode,
        kms_key_arn=doc.kms_key_arn,
        bucket_name=bucket,
        code_prefix=prefixes.get("code.s3Uri"),
        output_prefix=prefixes.get("output.s3Uri"),
        include_tuning_jobs=include_tuning_jobs,
        training_plan_arns=(doc.training_plan_arn,) if doc.training_plan_arn is not None else (),
    )
