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
(``network=``): a network built here, or imported by its job document or its parts. The parts
props remain for a network known to no ``ITrainingNetwork``; each one given overrides the
network's value.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from aws_cdk import Aws, Stack, Token, aws_ec2 as ec2, aws_iam as iam, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.constructs.acknowledgements import LAUNCH_WILDCARD_REASONS, acknowledge_statement_wildcards
from smddp_infra.constructs.network_interface import ITrainingNetwork
from smddp_infra.errors import ConfigError
from smddp_infra.guardrails import LaunchScope, launch_policy_document
from smddp_infra.sizing.catalog import efa_instance


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
        training_subnets: Optional[Sequence[ec2.ISubnet]] = None,
        security_groups: Optional[Sequence[ec2.ISecurityGroup]] = None,
        role: Optional[iam.IRole] = None,
        instance_types: Optional[Sequence[str]] = None,
        encrypt_inter_container_traffic: Optional[bool] = None,
        file_system_id: Optional[str] = None,
        file_system_mount_name: Optional[str] = None,
        file_system_access_mode: Optional[str] = None,
        encryption_key: Optional[kms.IKey] = None,
        require_output_kms_key: bool = False,
        job_bucket: Optional[s3.IBucket] = None,
        code_prefix: Optional[str] = None,
        output_prefix: Optional[str] = None,
        include_tuning_jobs: bool = False,
        training_plan_arns: Optional[Sequence[str]] = None,
        job_name_prefix: str = "",
        omit_condition_keys: Sequence[str] = (),
        extra_conditions: Optional[Mapping[str, Mapping[str, Any]]] = None,
        managed_policy_name: Optional[str] = None,
    ) -> None:
        """
        :param network: the network jobs must run in: every part below defaults to its value (its
            job document's role, instance type, file system and training plan; its subnet, groups,
            key, job bucket and prefixes). Default: none (give the parts).
        :param training_subnets: the subnet(s) jobs may use (``sagemaker:VpcSubnets``). Default:
            the network's training subnet.
        :param security_groups: the groups jobs may carry; the FIRST is the EFA group, which every
            job must carry (``sagemaker:VpcSecurityGroupIds``). Default: the network's.
        :param role: the execution role, the only one ``iam:PassRole`` allows. Default: the
            network's (its job document's role ARN).
        :param instance_types: the EFA types the network was sized for (``sagemaker:InstanceTypes``).
            Default: the network's instance type.
        :param encrypt_inter_container_traffic: require
            ``EnableInterContainerTrafficEncryption=true``. Default: the network's setting, else True.
        :param file_system_id: the only FSx file system a channel may mount. Default: the
            network's; none means no file-system conditions.
        :param file_system_mount_name: Lustre mount name: FSx channels' DirectoryPath must be
            under ``/<mount name>``. Default: the network's; none means no directory condition.
        :param file_system_access_mode: ``ro`` allows read-only channels; ``rw`` allows both.
            Default: the network's, else ``ro``.
        :param encryption_key: the network's KMS key: a job naming a volume or output key must
            name this one. Default: the network's; none.
        :param require_output_kms_key: also require ``OutputDataConfig.KmsKeyId`` = the key.
            Default: False (``smddp-infra job-config`` does not render one yet).
        :param job_bucket: the bucket holding the code and output prefixes. Default: the
            network's; none.
        :param code_prefix: where the SDK uploads the script (write + read). Default: the network's.
        :param output_prefix: where SageMaker writes model artifacts (read). Default: the network's.
        :param include_tuning_jobs: also allow ``CreateHyperParameterTuningJob`` under the same
            conditions. Default: False.
        :param training_plan_arns: SageMaker training plans jobs may run on (CreateTrainingJob is
            then also authorized on the plan; UNCONFIRMED). Default: the network's plan; none.
        :param job_name_prefix: job names the principal may use. Default: any.
        :param omit_condition_keys: escape hatch for an UNCONFIRMED key that refuses real jobs,
            e.g. ``["sagemaker:FileSystemDirectoryPath"]``. Default: none.
        :param extra_conditions: more conditions for the launch statement
            (``{"Bool": {"sagemaker:NetworkIsolation": "true"}}``). Default: none.
        :param managed_policy_name: the policy's name. Default: generated by CloudFormation.
        """
        super().__init__(scope, id)
        stack = Stack.of(self)
        doc = network.job_document if network is not None else None
        if training_subnets is None and network is not None:
            training_subnets = [network.training_subnet]
        if security_groups is None and network is not None:
            security_groups = list(network.security_groups)
        role_arn = role.role_arn if role is not None else doc.role_arn if doc is not None else None
        if instance_types is None and doc is not None:
            instance_types = [doc.instance_type]
        if network is not None:
            file_system_id = file_system_id if file_system_id is not None else network.file_system_id
            mount = network.file_system_mount
            if file_system_mount_name is None and mount is not None:
                file_system_mount_name = mount.mount_name
            encryption_key = encryption_key if encryption_key is not None else network.encryption_key
            job_bucket = job_bucket if job_bucket is not None else network.job_bucket
            code_prefix = code_prefix if code_prefix is not None else network.code_prefix
            output_prefix = output_prefix if output_prefix is not None else network.output_prefix
        if doc is not None:
            if encrypt_inter_container_traffic is None:
                encrypt_inter_container_traffic = doc.encrypt_inter_container_traffic
            if file_system_access_mode is None:
                file_system_access_mode = doc.file_system.access_mode
            if training_plan_arns is None and doc.training_plan_arn is not None:
                training_plan_arns = [doc.training_plan_arn]
        if not training_subnets:
            raise ConfigError("training_subnets must name at least one subnet (or pass network=), got none")
        if not security_groups:
            raise ConfigError("security_groups must name at least one group (the EFA group first), got none")
        if role_arn is None:
            raise ConfigError("role: the execution role jobs pass is required (network= gives it when the network "
                              "has a job document; one imported by its parts has none)")
        if not instance_types:
            raise ConfigError("instance_types must name at least one EFA instance type (network= gives the network's "
                              "when it has a job document), got none")
        for name in instance_types:
            efa_instance(name, setting="instance_types")
        self.scope = LaunchScope(
            partition=Aws.PARTITION,
            region=stack.region,
            account=stack.account,
            subnet_ids=tuple(s.subnet_id for s in training_subnets),
            security_group_ids=tuple(g.security_group_id for g in security_groups),
            role_arn=role_arn,
            instance_types=tuple(instance_types),
            encrypt_inter_container_traffic=True if encrypt_inter_container_traffic is None else encrypt_inter_container_traffic,
            file_system_id=file_system_id,
            file_system_mount_name=file_system_mount_name,
            file_system_access_mode=file_system_access_mode or "ro",
            kms_key_arn=encryption_key.key_arn if encryption_key is not None else None,
            require_output_kms_key=require_output_kms_key,
            bucket_name=job_bucket.bucket_name if job_bucket is not None else None,
            code_prefix=code_prefix if job_bucket is not None else None,
            output_prefix=output_prefix if job_bucket is not None else None,
            include_tuning_jobs=include_tuning_jobs,
            training_plan_arns=tuple(training_plan_arns or ()),
            job_name_prefix=job_name_prefix,
            omit_condition_keys=tuple(omit_condition_keys),
            extra_conditions=dict(extra_conditions or {}),
            url_suffix=_url_suffix(stack),
        )
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
        """Attach the policy to an IAM role, user or group (imported ones too)."""
        if hasattr(principal, "role_name"):
            self.policy.attach_to_role(principal)
        elif hasattr(principal, "user_name"):
            self.policy.attach_to_user(principal)
        elif hasattr(principal, "group_name"):
            self.policy.attach_to_group(principal)
        else:
            raise ConfigError(
                "grant_launch needs an IAM role, user or group (a managed policy attaches only to those), "
                f"got {type(principal).__name__}"
            )


def _url_suffix(stack: Stack) -> str:
    """The partition's DNS suffix: from :mod:`smddp_infra.partitions` for a concrete region (a
    literal, as the template had before), ``AWS::URLSuffix`` in an environment-agnostic stack."""
    from smddp_infra.partitions import url_suffix

    return Aws.URL_SUFFIX if Token.is_unresolved(stack.region) else url_suffix(stack.region)
