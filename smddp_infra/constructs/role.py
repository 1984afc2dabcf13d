"""The SageMaker execution role for VPC training jobs: exactly what the job needs.

Permissions (REFERENCE section 5, SageMaker's "CreateTrainingJob API: Execution Role
Permissions" for VPC jobs): the EC2 network-interface actions SageMaker uses to attach the
job to the training subnet, ``fsx:DescribeFileSystems`` (without it Lustre over EFA silently
falls back to TCP), read on the dataset bucket, read/write on the checkpoint prefix, the
job's CloudWatch log group, ECR pulls, and ``cloudwatch:PutMetricData`` (training metrics).
No AWS managed policies (AwsSolutions-IAM4).

SDK v3's ModelTrainer checks the role before it submits: it simulates its "smoke-test" actions
(``sagemaker.core.helper.iam_role_resolver._get_smoke_test_actions("training")``: the EC2
network-interface actions, PutMetricData, ecr:GetAuthorizationToken) with no resource and no
context, and refuses the role on an implicit deny. Those actions are therefore granted on ``*``
without conditions (docs/security.md weighs what the earlier subnet/group scoping protected;
the binding of jobs to this network belongs on the caller's CreateTrainingJob). Other
wildcards remain only where the API has no resource-level permissions or names are per job;
each is acknowledged on this construct with the reason.
"""

from __future__ import annotations

import json
import weakref
from typing import Any, Mapping, Optional, Sequence

from aws_cdk import Annotations, ArnFormat, Aws, CfnMapping, Fn, Stack, Token, aws_ec2 as ec2, aws_iam as iam, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.constructs.acknowledgements import WILDCARD_REASONS, acknowledge_statement_wildcards, nag_text
from smddp_infra.errors import ConfigError
from smddp_infra.guardrails import objects_under
from smddp_infra.partitions import DLC_ACCOUNTS, DLC_ACCOUNTS_SOURCE

#: The stack-level mapping (region -> DLC account) an environment-agnostic stack reads with
#: ``Fn::FindInMap`` on ``AWS::Region``.
DLC_MAPPING_ID = "SmddpDlcAccounts"


def scoped_arn(stack: Stack, service: str, resource: str, name: str = "*", *, sep: str = "/",
               account: Optional[str] = None) -> str:
    """``arn:<partition>:<service>:<region>:<account>:<resource><sep><name>`` in ``stack``'s Region and
    account (or ``account``): the ARN every role here scopes a grant with."""
    return stack.format_arn(service=service, resource=resource, resource_name=name, account=account,
                            arn_format=ArnFormat.COLON_RESOURCE_NAME if sep == ":" else ArnFormat.SLASH_RESOURCE_NAME)


#: What SageMaker and HyperPod read to attach an interface to the subnet (no resource-level permissions).
DESCRIBE_NETWORK_ACTIONS = ["ec2:DescribeNetworkInterfaces", "ec2:DescribeVpcs", "ec2:DescribeDhcpOptions",
                            "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups"]
#: What a role needs to encrypt and decrypt with the network's keys.
KEY_USE_ACTIONS = ["kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey"]


#: The sid and resources each statement :func:`allow` built was given: read back here, not through jsii
#: (two round trips to the node process a statement; the default app builds 13).
_WRITTEN: "weakref.WeakKeyDictionary[iam.PolicyStatement, tuple[str, list[str]]]" = weakref.WeakKeyDictionary()


def allow(sid: str, actions: Sequence[str], resources: Sequence[str], **extra: Any) -> iam.PolicyStatement:
    """One statement of a role's policy (``extra``: ``conditions``, ``effect``)."""
    statement = iam.PolicyStatement(sid=sid, actions=list(actions), resources=list(resources), **extra)
    _WRITTEN[statement] = (sid, list(resources))
    return statement


def managed_policy(scope: Construct, statements: Sequence[iam.PolicyStatement], role: iam.IRole, description: str,
                   reasons: Mapping[str, str]) -> iam.ManagedPolicy:
    """The customer managed policy ``Policy`` on ``role`` (AwsSolutions-IAM4: no AWS managed ones), each
    wildcard resource acknowledged with the reason ``reasons`` gives its statement's sid."""
    policy = iam.ManagedPolicy(scope, "Policy", statements=list(statements), roles=[role], description=description)
    acknowledge_statement_wildcards(policy, [_WRITTEN.get(s) or (s.sid, s.resources) for s in statements], reasons)
    return policy


def service_role(scope: Construct, service: str, description: str) -> iam.Role:
    """The role ``Role`` under ``scope`` that ``service`` assumes for this account only (confused-deputy
    guard: ``aws:SourceAccount`` is the stack's account)."""
    return iam.Role(scope, "Role", description=description, assumed_by=iam.ServicePrincipal(
        service, conditions={"StringEquals": {"aws:SourceAccount": Stack.of(scope).account}}))


class TrainingExecutionRole(Construct):
    """An IAM role SageMaker assumes for the training job, scoped to this network's resources.

    Attributes: ``role`` (the ``iam.IRole``), ``role_arn``.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        training_subnet: ec2.ISubnet,
        security_groups: Sequence[ec2.ISecurityGroup],
        checkpoint_bucket: s3.IBucket,
        checkpoint_prefix: str,
        output_prefix: Optional[str] = None,
        code_prefix: Optional[str] = None,
        file_system_id: Optional[str] = None,
        dataset_bucket: Optional[s3.IBucket] = None,
        dataset_prefix: str = "",
        encryption_keys: Sequence[kms.IKey] = (),
        ecr_repository_arns: Optional[Sequence[str]] = None,
        role: Optional[iam.IRole] = None,
        image_account: Optional[str] = None,
    ) -> None:
        """
        :param training_subnet: the subnet jobs run in (kept on the construct as ``training_subnet``;
            the network-interface grant is not scoped to it, see docs/security.md).
        :param security_groups: the job's groups (kept as ``security_groups``; not a scope either).
        :param checkpoint_bucket: read/write under ``checkpoint_prefix``.
        :param checkpoint_prefix: key prefix of checkpoints (read/write).
        :param output_prefix: key prefix in the same bucket where SageMaker writes model
            artifacts (OutputDataConfig.S3OutputPath; write). Default: none.
        :param code_prefix: key prefix in the same bucket where the SDK uploads the training
            script (code_location; read). Default: none.
        :param file_system_id: FSx file system the job mounts: grants fsx:DescribeFileSystems.
            Default: no FSx permission.
        :param dataset_bucket: read-only dataset bucket. Default: none.
        :param dataset_prefix: key prefix in the dataset bucket. Default: the whole bucket.
        :param encryption_keys: KMS keys the job encrypts/decrypts with. Default: none.
        :param ecr_repository_arns: images the job may pull. Default: every repository of
            ``image_account``.
        :param image_account: the ECR registry account the job's images come from. Default: the
            AWS Deep Learning Containers account of the stack's region
            (:data:`smddp_infra.partitions.DLC_ACCOUNTS`; a region outside that table needs this
            prop or ``ecr_repository_arns``); in an environment-agnostic stack, the table as a
            ``Fn::FindInMap`` on ``AWS::Region``.
        :param role: escape hatch: an existing role; the policy is attached to it. A role imported
            with ``mutable=False`` (or from another account) is left alone: nothing is attached, and
            a synth warning (``smddp:roleImmutable``) lists the statements it must hold. Default: a
            new role.
        """
        v.require("training_subnet", training_subnet, "ISubnet", optional=False)
        groups = v.require_each("security_groups", security_groups, "ISecurityGroup")
        if not 1 <= len(groups) <= 5:
            raise ConfigError(f"security_groups must list 1 to 5 groups (VpcConfig.SecurityGroupIds), got {len(groups)}")
        v.require("checkpoint_bucket", checkpoint_bucket, "IBucket", optional=False)
        v.text("checkpoint_prefix", checkpoint_prefix, optional=False)
        v.text("output_prefix", output_prefix)
        v.text("code_prefix", code_prefix)
        v.text("file_system_id", file_system_id, allow_token=True)
        v.require("dataset_bucket", dataset_bucket, "IBucket")
        v.text("dataset_prefix", dataset_prefix, optional=False)
        v.require_each("encryption_keys", encryption_keys, "IKey")
        v.text_list("ecr_repository_arns", ecr_repository_arns)
        v.require("role", role, "IRole")
        _check_image_account(image_account, ecr_repository_arns)
        super().__init__(scope, id)
        stack = v.stack_of(self)
        if role is None:
            role = service_role(self, "sagemaker.amazonaws.com", "SageMaker SMDDP training jobs in the training subnet")
        self.role: iam.IRole = role
        self.training_subnet = training_subnet
        self.security_groups = tuple(security_groups)

        prefixes = [p for p in (checkpoint_prefix, output_prefix, code_prefix) if p is not None]
        statements = [
            allow("DescribeNetwork", DESCRIBE_NETWORK_ACTIONS, ["*"]),  # EC2 Describe* actions have no resource-level permissions
            # "*", not the subnet/group/ENI ARNs: SDK v3 checks the role by simulating these
            # actions with no resource, and a scoped grant is then a definitive deny. The job's
            # subnet and groups are bound where IAM can check them: the caller's
            # CreateTrainingJob (sagemaker:VpcSubnets, sagemaker:VpcSecurityGroupIds).
            allow("JobNetworkInterfaces", ["ec2:CreateNetworkInterface", "ec2:CreateNetworkInterfacePermission",
                                           "ec2:DeleteNetworkInterface", "ec2:DeleteNetworkInterfacePermission"], ["*"]),
            # the group itself (CreateLogGroup) and its streams
            allow("TrainingLogs", ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                  [scoped_arn(stack, "logs", "log-group", "/aws/sagemaker/TrainingJobs", sep=":"),
                   scoped_arn(stack, "logs", "log-group", "/aws/sagemaker/TrainingJobs:*", sep=":")]),
            # No resource-level permissions. No namespace condition either: SDK v3 simulates
            # the action with an empty context, where any condition fails.
            allow("TrainingMetrics", ["cloudwatch:PutMetricData"], ["*"]),
            allow("EcrAuth", ["ecr:GetAuthorizationToken"], ["*"]),
            allow("EcrPull", ["ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage"],
                  list(ecr_repository_arns) if ecr_repository_arns is not None
                  else [scoped_arn(stack, "ecr", "repository", account=_image_account(self, image_account))]),
            allow("CheckpointList", ["s3:ListBucket"], [checkpoint_bucket.bucket_arn],
                  conditions={"StringLike": {"s3:prefix": [p for prefix in prefixes for p in (prefix, objects_under(prefix))]}}),
            allow("CheckpointReadWrite", ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
                  [checkpoint_bucket.arn_for_objects(objects_under(checkpoint_prefix))]),
        ]
        if output_prefix is not None:
            statements.append(allow("ModelOutputWrite", ["s3:PutObject", "s3:AbortMultipartUpload"],
                                    [checkpoint_bucket.arn_for_objects(objects_under(output_prefix))]))
        if code_prefix is not None:
            statements.append(allow("TrainingCodeRead", ["s3:GetObject"],
                                    [checkpoint_bucket.arn_for_objects(objects_under(code_prefix))]))
        if output_prefix and output_prefix.strip("/") and code_prefix and code_prefix.strip("/"):
            # SDK v3 stages code and drivers under OutputDataConfig's prefix when the CALLER can
            # simulate and the role cannot write the whole session bucket (ModelTrainer's
            # _resolve_staging_bucket): <output>/<default_bucket_prefix = code prefix>/...
            staged = [checkpoint_bucket.arn_for_objects(
                objects_under(f"{output_prefix.strip('/')}/{code_prefix.strip('/')}".strip("/")))]
            # ...and read-only, like the code prefix: a job cannot rewrite what the next one runs.
            statements += [allow("StagedCodeRead", ["s3:GetObject"], staged),
                           allow("StagedCodeNoWrite", ["s3:PutObject", "s3:DeleteObject"], staged, effect=iam.Effect.DENY)]
        if file_system_id is not None:
            # Read-only. The Lustre EFA client may list without a FileSystemIds filter,
            # which a file-system ARN would not match (UNCONFIRMED), and a denied call
            # silently falls back to TCP: the wider grant is the safe one.
            statements.append(allow("DescribeFileSystem", ["fsx:DescribeFileSystems"], ["*"]))
        if dataset_bucket is not None:
            statements += [allow("DatasetList", ["s3:ListBucket"], [dataset_bucket.bucket_arn]),
                           allow("DatasetRead", ["s3:GetObject"], [dataset_bucket.arn_for_objects(objects_under(dataset_prefix))])]
        if encryption_keys:
            statements.append(allow("UseEncryptionKeys", KEY_USE_ACTIONS, [k.key_arn for k in encryption_keys]))
        #: The statements the job needs (attached, or listed in a warning for an immutable role).
        self.statements: tuple[iam.PolicyStatement, ...] = tuple(statements)
        self.policy: Optional[iam.ManagedPolicy] = None
        if role_is_immutable(role):
            # The platform owns it: nothing is attached (aws-cdk-lib would attach a ManagedPolicy to an
            # immutable import anyway, aws/aws-cdk#38103); the warning lists what to add.
            warn_immutable_role(self, role, statements)
            return
        # A customer managed policy, not an inline one (NIST/HIPAA IAMNoInlinePolicy), and not an
        # AWS managed one (AwsSolutions-IAM4).
        self.policy = managed_policy(self, statements, role, "SMDDP training job: network, FSx, checkpoints, logs, images",
                                     WILDCARD_REASONS)

    @property
    def role_arn(self) -> str:
        return self.role.role_arn


def _check_image_account(image_account: Any, ecr_repository_arns: Any) -> None:
    """``image_account``: 12 digits (or a token), and not together with ``ecr_repository_arns``."""
    v.text("image_account", image_account, allow_token=True)
    if image_account is None or Token.is_unresolved(image_account):
        return
    if not (len(image_account) == 12 and image_account.isdigit()):
        raise ConfigError(f"image_account must be a 12-digit AWS account id (the ECR registry of the job's images), "
                          f"got {image_account!r}")
    if ecr_repository_arns is not None:
        raise ConfigError("image_account and ecr_repository_arns were both given: ecr_repository_arns names the "
                          "repositories exactly; pass one of them")


def _image_account(role: Construct, image_account: Optional[str]) -> str:
    """The registry account for the ECR pull grant: the prop, else the region's Deep Learning
    Containers account, else (environment-agnostic stack) the table read at deploy time."""
    if image_account is not None:
        return image_account
    stack = Stack.of(role)
    if not Token.is_unresolved(stack.region):
        account = DLC_ACCOUNTS.get(stack.region)
        if account is None:
            raise ConfigError(
                f"no AWS Deep Learning Containers account is known for region {stack.region!r} ({DLC_ACCOUNTS_SOURCE} "
                "lists none): pass image_account='<12-digit account>' (the ECR registry of your training images) or "
                "ecr_repository_arns=[...]"
            )
        return account
    mapping = stack.node.try_find_child(DLC_MAPPING_ID)
    if mapping is None:
        mapping = CfnMapping(stack, DLC_MAPPING_ID,
                             mapping={region: {"account": account} for region, account in DLC_ACCOUNTS.items()})
    Annotations.of(role).add_info(
        f"environment-agnostic stack: the ECR pull grant names the Deep Learning Containers account of the region "
        f"it deploys to (Fn::FindInMap over {len(DLC_ACCOUNTS)} regions); a region outside that table fails the "
        "deploy: pass image_account or ecr_repository_arns to name the registry")
    return Fn.find_in_map(DLC_MAPPING_ID, Aws.REGION, "account")


IMMUTABLE_ROLE_WARNING = "smddp:roleImmutable"


def role_is_immutable(role: Any) -> bool:
    """Did the app import ``role`` so that nothing may be attached to it?

    aws-cdk-lib exposes no ``mutable`` attribute. ``Role.from_role_arn``/``from_role_name`` with
    ``mutable=False`` (or a role of another account) return an ``ImmutableRole`` wrapper next to a
    sibling ``MutableRole<id>`` import; ``Role.without_policy_updates()`` returns one with the id
    ``ImmutableRole<id>`` next to the role. Both are read from the construct tree (aws-cdk-lib
    2.275.0; tests/test_embedding_roles.py builds each with the real library).
    """
    if isinstance(role, iam.Role):
        return False
    node = role.node
    scope = node.scope
    if scope is None:
        return False
    if scope.node.try_find_child(f"MutableRole{node.id}") is not None:
        return True
    return node.id.startswith("ImmutableRole") and scope.node.try_find_child(node.id[len("ImmutableRole"):]) is not None


def _readable(value: Any) -> Any:
    """A resolved policy document with intrinsics written the way cdk-nag names them."""
    if isinstance(value, dict) and ({"Fn::Join", "Fn::GetAtt", "Ref"} & set(value)):
        return nag_text(value)
    if isinstance(value, dict):
        return {k: _readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_readable(v) for v in value]
    return value


def warn_immutable_role(scope: Construct, role: iam.IRole, statements: Sequence[iam.PolicyStatement]) -> None:
    """One synth warning naming the ``role`` prop and exactly the statements to add to it."""
    stack = Stack.of(scope)
    document = _readable(stack.resolve(iam.PolicyDocument(statements=list(statements)).to_json()))
    Annotations.of(scope).add_warning_v2(
        IMMUTABLE_ROLE_WARNING,
        f"role {role.node.path} was imported immutable (mutable=False): nothing is attached to it; training jobs need "
        f"these {len(statements)} statements on it (<X.Arn> is that resource's ARN in this stack): "
        + json.dumps(document, separators=(",", ":"), sort_keys=True),
    )
