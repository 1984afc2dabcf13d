"""TrainingLaunchPolicy: the customer-managed policy for the people and roles that start jobs.

It allows ``sagemaker:CreateTrainingJob`` only for jobs inside the network (its subnet, its
groups with the EFA group among them, the instance types it was sized for, encrypted
inter-container traffic, its file system and key), ``iam:PassRole`` of the execution role to
SageMaker only, and what launching needs besides (describe/stop/tag the jobs, the job bucket's
code and output prefixes, the training log group). The statements come from the pure builder
:mod:`smddp_infra.guardrails`, which ``smddp-infra guardrails`` also renders from
``cdk-outputs.json``: one place for them.

The policy is attached to nothing by default (a network stack does not know who launches);
attach it with :meth:`grant` / ``TrainingNetwork.grant_launch(principal)``, or by its ARN.

It reads the network through :class:`~smddp_infra.constructs.network_interface.ITrainingNetwork`
(``network=``): a network built here, or imported by its job document or its parts. Three groups
change what the network says, each value given overriding the network's: :class:`NetworkParts`
(for a network known to no ``ITrainingNetwork``), :class:`LaunchJobs` (what its job document
says) and :class:`LaunchConditions` (the tuning of the launch statement). The flat keywords of
earlier releases are translated in :mod:`smddp_infra.constructs.deprecated`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, TypedDict

from aws_cdk import Aws, Stack, Token, aws_ec2 as ec2, aws_iam as iam, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.constructs.acknowledgements import LAUNCH_WILDCARD_REASONS, acknowledge_statement_wildcards
from smddp_infra.constructs.network_interface import ITrainingNetwork, check_parts
from smddp_infra.contract import FILE_SYSTEM_ACCESS_MODES
from smddp_infra.errors import ConfigError
from smddp_infra.guardrails import LaunchScope, launch_policy_document
from smddp_infra.schema.fields import choice, flag, group, text, value
from smddp_infra.sizing.catalog import efa_instance

if TYPE_CHECKING:
    from typing import Unpack


@dataclass(frozen=True)
class NetworkParts:
    """The parts of a network known to no :class:`ITrainingNetwork` (or that replace its values).

    Each given one is checked when the group is built, by the check ``TrainingNetwork.from_attributes``
    runs (:func:`~smddp_infra.constructs.network_interface.check_parts`).
    """

    #: The subnet(s) jobs may use (``sagemaker:VpcSubnets``).
    training_subnets: Optional[Sequence[ec2.ISubnet]] = None
    #: The groups jobs may carry; the FIRST is the EFA group, which every job must carry
    #: (``sagemaker:VpcSecurityGroupIds``).
    security_groups: Optional[Sequence[ec2.ISecurityGroup]] = None
    #: The only FSx file system a channel may mount (none: no file-system conditions).
    file_system_id: Optional[str] = None
    #: Lustre mount name: FSx channels' DirectoryPath must be under ``/<mount name>``.
    file_system_mount_name: Optional[str] = None
    #: The KMS key: a job naming a volume or output key must name this one.
    encryption_key: Optional[kms.IKey] = None
    #: The bucket holding the code and output prefixes.
    job_bucket: Optional[s3.IBucket] = None
    #: Where the SDK uploads the script (write + read).
    code_prefix: Optional[str] = None
    #: Where SageMaker writes model artifacts (read).
    output_prefix: Optional[str] = None

    def __post_init__(self) -> None:
        check_parts({f.name: getattr(self, f.name) for f in fields(self)})


@group
@dataclass(frozen=True)
class LaunchJobs:
    """What a job must be: the network's job document says it (one imported by its parts has none)."""

    #: The execution role, the only one ``iam:PassRole`` allows.
    role: Optional[iam.IRole] = None
    #: The EFA types the network was sized for (``sagemaker:InstanceTypes``).
    instance_types: Optional[Sequence[str]] = None
    #: Require ``EnableInterContainerTrafficEncryption=true`` (None: the network's, else True).
    encrypt_inter_container_traffic: Optional[bool] = value(None, flag(optional=True))
    #: ``ro`` allows read-only channels; ``rw`` allows both (None: the network's, else ``ro``).
    file_system_access_mode: Optional[str] = value(None, choice(FILE_SYSTEM_ACCESS_MODES, optional=True))
    #: SageMaker training plans jobs may run on (CreateTrainingJob is then also authorized on the
    #: plan; UNCONFIRMED).
    training_plan_arns: Optional[Sequence[str]] = None

    def __post_init__(self) -> None:
        v.require("role", self.role, "IRole")
        for name in v.text_list("instance_types", self.instance_types) or ():
            efa_instance(name, setting="instance_types")
        v.text_list("training_plan_arns", self.training_plan_arns)


@group
@dataclass(frozen=True)
class LaunchConditions:
    """The tuning of the launch statement's conditions."""

    #: Also require ``OutputDataConfig.KmsKeyId`` = the key (``smddp-infra job-config`` does not
    #: render one yet).
    require_output_kms_key: bool = value(False, flag())
    #: Also allow ``CreateHyperParameterTuningJob`` under the same conditions.
    include_tuning_jobs: bool = value(False, flag())
    #: Job names the principal may use (``""``: any).
    job_name_prefix: str = value("", text("a str", tokens=True))
    #: Escape hatch for an UNCONFIRMED key that refuses real jobs, e.g.
    #: ``["sagemaker:FileSystemDirectoryPath"]``.
    omit_condition_keys: Sequence[str] = ()
    #: More conditions for the launch statement (``{"Bool": {"sagemaker:NetworkIsolation": "true"}}``).
    extra_conditions: Optional[Mapping[str, Mapping[str, Any]]] = None

    def __post_init__(self) -> None:
        v.text_list("omit_condition_keys", self.omit_condition_keys, optional=False)


class FlatLaunchKeywords(TypedDict, total=False):
    """``TrainingLaunchPolicy``'s flat keywords of earlier releases, typed for their deprecation
    release: each is the same-named field of :class:`NetworkParts`, :class:`LaunchJobs` or
    :class:`LaunchConditions`, translated by :mod:`smddp_infra.constructs.deprecated`."""

    training_subnets: Optional[Sequence[ec2.ISubnet]]
    security_groups: Optional[Sequence[ec2.ISecurityGroup]]
    file_system_id: Optional[str]
    file_system_mount_name: Optional[str]
    encryption_key: Optional[kms.IKey]
    job_bucket: Optional[s3.IBucket]
    code_prefix: Optional[str]
    output_prefix: Optional[str]
    role: Optional[iam.IRole]
    instance_types: Optional[Sequence[str]]
    encrypt_inter_container_traffic: Optional[bool]
    file_system_access_mode: Optional[str]
    training_plan_arns: Optional[Sequence[str]]
    require_output_kms_key: bool
    include_tuning_jobs: bool
    job_name_prefix: str
    omit_condition_keys: Sequence[str]
    extra_conditions: Optional[Mapping[str, Mapping[str, Any]]]


class TrainingLaunchPolicy(Construct):
    """A customer-managed IAM policy: start training jobs only inside one network.

    Attributes: ``policy`` (``iam.ManagedPolicy``), ``managed_policy_arn``, ``scope``
    (the :class:`~smddp_infra.guardrails.LaunchScope` with CDK tokens); :meth:`grant`.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        network: Optional[ITrainingNetwork] = None,
        parts: Optional[NetworkParts] = None,
        jobs: Optional[LaunchJobs] = None,
        conditions: Optional[LaunchConditions] = None,
        managed_policy_name: Optional[str] = None,
        **flat: Unpack[FlatLaunchKeywords],
    ) -> None:
        """
        :param network: the network jobs must run in: every value below defaults to its value (its
            job document's role, instance type, file system and training plan; its subnet, groups,
            key, job bucket and prefixes). Default: none (give ``parts`` and ``jobs``).
        :param parts: the network's parts (:class:`NetworkParts`), each given one overriding the
            network's; ``training_subnets`` and ``security_groups`` are required without ``network``.
            Default: the network's.
        :param jobs: what a job must be (:class:`LaunchJobs`), each given value overriding the job
            document's; ``role`` and ``instance_types`` are required when the network has no job
            document. Default: the job document's.
        :param conditions: the launch statement's tuning (:class:`LaunchConditions`). Default:
            ``LaunchConditions()``, no tuning jobs, any job name, every condition key.
        :param managed_policy_name: the policy's name. Default: generated by CloudFormation.
        :param flat: deprecated: the flat keywords of earlier releases (``training_subnets=``,
            ``include_tuning_jobs=``, ...), each the same-named field of a group
            (docs/upgrading.md). Default: none.
        """
        v.instance("network", network, ITrainingNetwork, "a TrainingNetwork, or TrainingNetwork.from_attributes(...)")
        for prop, given, cls in (("parts", parts, NetworkParts), ("jobs", jobs, LaunchJobs),
                                 ("conditions", conditions, LaunchConditions)):
            v.instance(prop, given, cls, f"{cls.__name__}(...)")
        if flat:  # deprecated.py sits above this module (it fronts TrainingNetwork too): reached by name
            translate = importlib.import_module("smddp_infra.constructs.deprecated").launch_policy_groups
            parts, jobs, conditions = translate(dict(flat), parts=parts, jobs=jobs, conditions=conditions)
        super().__init__(scope, id)
        self.scope = _launch_scope(Stack.of(self), network, parts or NetworkParts(), jobs or LaunchJobs(),
                                   conditions or LaunchConditions())
        document = launch_policy_document(self.scope)
        self.policy = iam.ManagedPolicy(
            self,
            "Policy",
            managed_policy_name=managed_policy_name,
            description="Start SageMaker training jobs only inside the SMDDP training network (smddp_infra guardrail)",
            document=iam.PolicyDocument.from_json(document),
        )
        acknowledge_statement_wildcards(
            self.policy, [(st["Sid"], st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]])
                          for st in document["Statement"]], LAUNCH_WILDCARD_REASONS)

    @property
    def managed_policy_arn(self) -> str:
        return self.policy.managed_policy_arn

    def grant(self, principal: Any) -> None:
        """Attach the policy to an IAM role, user or group (imported ones too).

        A role, user or group created in another stack lists the policy's ARN among its own
        ``ManagedPolicyArns``: the attachment is written in the grantee's stack, as aws-cdk-lib's
        grants do (``iam.Grant.addToPrincipal``), so that stack depends on this one and not the
        reverse; the policy naming the grantee would make this stack depend on the grantee's,
        a cycle as soon as that stack uses the network. An imported principal is named by a
        literal and attached from here, as is one in this stack.
        """
        kinds = (("role_name", iam.Role, self.policy.attach_to_role), ("user_name", iam.User, self.policy.attach_to_user),
                 ("group_name", iam.Group, self.policy.attach_to_group))
        for attribute, owned, attach in kinds:
            if hasattr(principal, attribute):
                if isinstance(principal, owned) and Stack.of(principal) is not Stack.of(self):
                    principal.add_managed_policy(self.policy)
                else:
                    attach(principal)
                return
        raise ConfigError(
            "grant_launch needs an IAM role, user or group (a managed policy attaches only to those), "
            f"got {type(principal).__name__}"
        )


def _launch_scope(stack: Stack, network: Optional[ITrainingNetwork], parts: NetworkParts, jobs: LaunchJobs,
                  conditions: LaunchConditions) -> LaunchScope:
    """The groups' values over the network's (its parts, its job document's), as the policy states them."""
    doc = network.job_document if network is not None else None
    mount = network.file_system_mount if network is not None else None

    def given(value: Any, otherwise: Any) -> Any:
        return value if value is not None else otherwise

    def part(name: str) -> Any:
        """The part ``parts`` gives, else the network's own (NetworkParts names them as ITrainingNetwork does)."""
        return given(getattr(parts, name), getattr(network, name) if network is not None else None)

    subnets = given(parts.training_subnets, [network.training_subnet] if network is not None else None)
    groups = given(parts.security_groups, list(network.security_groups) if network is not None else None)
    role_arn = jobs.role.role_arn if jobs.role is not None else doc.role_arn if doc is not None else None
    instance_types = given(jobs.instance_types, [doc.instance_type] if doc is not None else None)
    key, bucket = part("encryption_key"), part("job_bucket")
    if not subnets:
        raise ConfigError("training_subnets must name at least one subnet (or pass network=), got none")
    if not groups:
        raise ConfigError("security_groups must name at least one group (the EFA group first), got none")
    if role_arn is None:
        raise ConfigError("role: the execution role jobs pass is required (network= gives it when the network "
                          "has a job document; one imported by its parts has none)")
    if not instance_types:
        raise ConfigError("instance_types must name at least one EFA instance type (network= gives the network's "
                          "when it has a job document), got none")
    return LaunchScope(
        partition=Aws.PARTITION,
        region=stack.region,
        account=stack.account,
        subnet_ids=tuple(s.subnet_id for s in subnets),
        security_group_ids=tuple(g.security_group_id for g in groups),
        role_arn=role_arn,
        instance_types=tuple(instance_types),
        encrypt_inter_container_traffic=given(jobs.encrypt_inter_container_traffic,
                                              doc.encrypt_inter_container_traffic if doc is not None else True),
        file_system_id=part("file_system_id"),
        file_system_mount_name=given(parts.file_system_mount_name, mount.mount_name if mount is not None else None),
        file_system_access_mode=given(jobs.file_system_access_mode, doc.file_system.access_mode if doc is not None else "ro"),
        kms_key_arn=key.key_arn if key is not None else None,
        require_output_kms_key=conditions.require_output_kms_key,
        bucket_name=bucket.bucket_name if bucket is not None else None,
        code_prefix=part("code_prefix") if bucket is not None else None,
        output_prefix=part("output_prefix") if bucket is not None else None,
        include_tuning_jobs=conditions.include_tuning_jobs,
        training_plan_arns=tuple(given(jobs.training_plan_arns, [doc.training_plan_arn] if doc is not None
                                       and doc.training_plan_arn is not None else ())),
        job_name_prefix=conditions.job_name_prefix,
        omit_condition_keys=tuple(conditions.omit_condition_keys),
        extra_conditions=dict(conditions.extra_conditions or {}),
        url_suffix=_url_suffix(stack),
    )


def _url_suffix(stack: Stack) -> str:
    """The partition's DNS suffix: from :mod:`smddp_infra.partitions` for a concrete region (a
    literal, as the template had before), ``AWS::URLSuffix`` in an environment-agnostic stack."""
    from smddp_infra.partitions import url_suffix

    return Aws.URL_SUFFIX if Token.is_unresolved(stack.region) else url_suffix(stack.region)
