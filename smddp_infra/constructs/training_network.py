"""TrainingNetwork: the L3 that composes the training network, and the interface others attach to.

VPC (one training subnet, endpoints, flow logs) + EFA security group (self ingress AND self
egress) + FSx for Lustre sized by the calculator + checkpoint bucket + execution role, and
the training-job settings a job needs. It takes the grouped values of :mod:`smddp_infra.schema`
(checked there, one validator per rule, before jsii starts) and one group of escape hatches,
:class:`Existing`: pass your own VPC and subnet, security group, bucket, key, role or file system
and it is used instead.

Consumers (HyperPodCluster, the launch policy, job settings) take an :class:`ITrainingNetwork`:
this network, or one built elsewhere (:meth:`TrainingNetwork.from_attributes`).

Construct IDs below ("Network", "Efa", "Lustre", "Checkpoints", "ExecutionRole", ...) are part
of the public contract: they feed logical IDs, and changing one replaces a stateful resource.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Optional, Sequence, cast

from aws_cdk import Annotations, CfnOutput, RemovalPolicy, Stack, Token, aws_ec2 as ec2, aws_iam as iam, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.constructs import _training_network_validation as _validation_l3
from smddp_infra.constructs._efa_clients import add_efa_client, efa_clients, watch_efa_clients
from smddp_infra.constructs._nested import warn_unless_exported
from smddp_infra.constructs._retention import watch_retention
from smddp_infra.constructs._validation import concrete_region
from smddp_infra.constructs.acknowledgements import acknowledge
from smddp_infra.constructs.checkpoints import CheckpointBucket, secure_log_bucket
from smddp_infra.constructs.efa import EfaSecurityGroup
from smddp_infra.constructs.existing_filesystem import AttachedFileSystem, ExistingFileSystem, check_existing, check_same_zone
from smddp_infra.constructs.filesystem import LustreFileSystem
from smddp_infra.constructs.monitoring import monitoring_options
from smddp_infra.constructs.network import TrainingVpc
from smddp_infra.constructs.imported_network import ImportedTrainingNetwork, network_from_parameter
from smddp_infra.constructs.network_interface import FileSystemMount, ITrainingNetwork
from smddp_infra.constructs.role import TrainingExecutionRole
from smddp_infra.contract import FileSystemRef, JobDocument, document_output_id
from smddp_infra.errors import ConfigError, PropTypeError, unknown_field
from smddp_infra.schema.network import (
    Jobs,
    NetworkSpec,
    Placement,
    Security,
    Storage,
    Workload,
    file_system_plan,
    training_plan_zone_problem,
)
from smddp_infra.sizing.catalog import InstanceType, efa_instance
from smddp_infra.sizing.planner import LustrePlan
from smddp_infra.sizing.tiering import TieringPlan
from smddp_infra.facts.regions import S3_PREFIX_LISTS
from smddp_infra.facts.subnets import DEFAULT_INTERFACE_ENDPOINTS

if TYPE_CHECKING:
    from smddp_infra.constructs.launch_policy import TrainingLaunchPolicy
    from smddp_infra.constructs.monitoring import MonitoringOptions


@dataclass(frozen=True)
class Existing:
    """Escape hatches: resources the platform already owns, used instead of created ones.

    CDK objects, so this group lives on the construct side (the pure spec only learns which are
    given). Each is checked against the app in ``TrainingNetwork``'s validate step.
    """

    #: An existing VPC in the stack's region (then ``training_subnet`` is required).
    vpc: Optional[ec2.IVpc] = None
    #: One of ``vpc``'s private subnets, imported with its AZ.
    training_subnet: Optional[ec2.ISubnet] = None
    #: A group to use as the EFA group (it must take rules: ``mutable=False`` is refused).
    security_group: Optional[ec2.ISecurityGroup] = None
    #: More groups jobs carry, left as given (groups are a union per interface). At most 4.
    additional_security_groups: Sequence[ec2.ISecurityGroup] = ()
    #: With an existing VPC: its interface endpoints' groups (HTTPS egress to each).
    endpoint_security_groups: Sequence[ec2.ISecurityGroup] = ()
    #: The checkpoint bucket (default: a new, secure bucket).
    checkpoint_bucket: Optional[s3.IBucket] = None
    #: The dataset bucket, linked into FSx and readable by the role.
    dataset_bucket: Optional[s3.IBucket] = None
    #: A KMS key for the bucket and file system (its ARN is written).
    encryption_key: Optional[kms.IKey] = None
    #: An execution role; the policy is attached to it (left alone when imported immutable).
    role: Optional[iam.IRole] = None
    #: An existing FSx for Lustre file system instead of a created one.
    file_system: Optional[ExistingFileSystem] = None

    def __post_init__(self) -> None:
        """Each hatch is the CDK object its field names (one line otherwise, never a jsii error)."""
        _validation_l3.check_existing(self)
        check_existing(self.file_system)

    def given(self) -> frozenset[str]:
        return frozenset(f.name for f in fields(self) if getattr(self, f.name) not in (None, ()))


class _KnownProps(type(Construct)):  # type: ignore[misc]
    """A keyword the constructor does not take is one line naming its place (the old flat
    ``instance_count=4``, the likeliest slip while upgrading, names ``workload=Workload(...)``),
    not Python's TypeError trace. The signature stays typed: this only reads it."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        parameters = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
        known = [name for name in parameters if name not in ("self", "scope", "id")]
        unknown = [name for name in kwargs if name not in known]
        if unknown and not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
            raise unknown_field(cls.__name__, unknown[0], known, moved=_moved_keywords())
        return super().__call__(*args, **kwargs)


#: The group props and their classes: each flat keyword of earlier releases is a field of one.
GROUPS: tuple[tuple[str, type], ...] = (("workload", Workload), ("placement", Placement), ("storage", Storage),
                                        ("security", Security), ("jobs", Jobs), ("existing", Existing))


def _moved_keywords() -> dict[str, str]:
    """Each group field, as the flat keyword it was: ``instance_count`` -> ``workload=Workload(instance_count=...)``."""
    return {f.name: f"{prop}={cls.__name__}({f.name}=...)" for prop, cls in GROUPS for f in fields(cls)}


class TrainingNetwork(Construct, ITrainingNetwork, metaclass=_KnownProps):
    """A complete network for SageMaker SMDDP training jobs.

    Attributes: ``vpc``, ``training_subnet``, ``efa_security_group`` (ISecurityGroup),
    ``security_groups`` (all groups a job uses), ``file_system`` (:class:`LustreFileSystem`),
    ``checkpoint_bucket`` (IBucket), ``checkpoints`` (:class:`CheckpointBucket`), ``role``
    (IRole), ``lustre_plan``, ``encryption_key``, ``availability_zone``, ``spec``; :meth:`job_settings`.
    """

    def __init__(self, scope: Construct, id: str, *, workload: Optional[Workload] = None,
                 placement: Optional[Placement] = None, storage: Optional[Storage] = None,
                 security: Optional[Security] = None, jobs: Optional[Jobs] = None,
                 monitoring: "bool | MonitoringOptions" = True, existing: Optional[Existing] = None,
                 spec: Optional[NetworkSpec] = None) -> None:
        """
        :param workload: what the jobs read (:class:`~smddp_infra.schema.Workload`). Default: 4 x
            ml.p4d.24xlarge, and a read rate or a plan is required unless ``existing.file_system``.
        :param placement: the training subnet and how jobs reach AWS APIs
            (:class:`~smddp_infra.schema.Placement`; ``availability_zone`` or ``availability_zone_id``
            is required when the network creates the VPC). Default: ``Placement()``.
        :param storage: the file system and checkpoints (:class:`~smddp_infra.schema.Storage`).
            Default: ``Storage()``, a file system sized by the calculator.
        :param security: keys and images (:class:`~smddp_infra.schema.Security`). Default:
            ``Security()``, service-managed keys and the region's DLC image account.
        :param jobs: what the job document tells every job (:class:`~smddp_infra.schema.Jobs`).
            Default: ``Jobs()``, encrypted inter-container traffic, the document published.
        :param monitoring: the file system's alarms, dashboard and topic; ``MonitoringOptions``
            to tune them, False for none. Default: True.
        :param existing: escape hatches (:class:`Existing`). Default: everything is created.
        :param spec: the five value groups as one :class:`~smddp_infra.schema.NetworkSpec`,
            instead of ``workload`` ... ``jobs``: what a reader of another input builds (the app's
            settings), so errors name what its user wrote (``spec.names``). Default: none.
        """
        existing = existing if existing is not None else Existing()
        if not isinstance(existing, Existing):
            raise PropTypeError(f"existing must be an Existing(...), got {type(existing).__name__}")
        spec = _spec_for(scope, f"{type(self).__name__} {id!r}", spec, (workload, placement, storage, security, jobs),
                         existing)
        monitoring_options(monitoring)  # its type now; its values against the plan in LustreFileSystem
        self.spec, self.existing = spec, existing
        self.max_runtime_seconds = spec.jobs.max_runtime_seconds
        self.training_plan_arn = spec.jobs.training_plan_arn
        self.training_plan_availability_zone_id = spec.jobs.training_plan_availability_zone_id
        #: The training subnet's AZ ID when the network placed it by AZ ID (None otherwise).
        self.availability_zone_id = spec.placement.availability_zone_id if spec.creates_vpc else None
        super().__init__(scope, id)
        self.validate_in_app()
        self.instance_type, self.instance_count = spec.workload.instance_type, spec.workload.instance_count
        self.file_system_access_mode = spec.storage.file_system_access_mode
        self.encrypt_inter_container_traffic = spec.jobs.encrypt_inter_container_traffic
        #: The file system's sizing (None with ``existing.file_system``: the network did not size it).
        self.lustre_plan: "Optional[LustrePlan | TieringPlan]" = file_system_plan(spec)
        self.encryption_key: Optional[kms.IKey] = existing.encryption_key or (kms.Key(
            self, "Key", description="SMDDP training network: checkpoints and file system",
            enable_key_rotation=True, removal_policy=RemovalPolicy.RETAIN) if spec.security.create_encryption_key else None)
        # the logs bucket: access logs of a created checkpoint bucket, flow logs of a created VPC
        log_bucket = secure_log_bucket(self, "Logs") if existing.checkpoint_bucket is None or existing.vpc is None else None
        if log_bucket is not None and existing.checkpoint_bucket is not None:
            acknowledge(log_bucket, "flow-log-bucket-access-logs")  # flow logs only: nothing logs into it
        endpoint_groups = self._build_vpc(efa_instance(spec.workload.instance_type), log_bucket)
        self._build_security_groups(endpoint_groups)
        self._build_file_system(monitoring)
        self._build_checkpoints_and_role(log_bucket)
        # A removal-policy aspect that turns these to Delete is a synth warning (constructs/_retention.py).
        watch_retention(self)
        self.job_config_output: Optional[CfnOutput] = None
        self.exported_job_config: Optional[CfnOutput] = None
        if spec.jobs.publish_job_config:
            self.job_config_output = self._publish_job_config(spec.jobs.job_config_output_id)
            if Stack.of(self).nested_stack_parent is not None:
                warn_unless_exported(self)

    def validate_in_app(self) -> None:
        """The checks that need the construct tree (tokens, an imported subnet's AZ, a group's
        mutability), in the manner of aws-cdk-lib's ``validateProps()``: all before any resource
        is created (:mod:`smddp_infra.constructs._training_network_validation`)."""
        plan_zone = training_plan_zone_problem(self.spec)
        if plan_zone is not None:  # a refusal was raised by the spec's check_training_plan
            Annotations.of(self).add_info(f"{self.spec.name('training_plan_availability_zone_id')} {plan_zone}")
        _validation_l3.check_against_app(self, self.spec, self.existing)

    def _build_vpc(self, instance: InstanceType, log_bucket: Optional[s3.IBucket]) -> list[ec2.ISecurityGroup]:
        """The created VPC and training subnet, or the given ones; returns the endpoints' groups."""
        p, e = self.spec.placement, self.existing
        self.network: Optional[TrainingVpc] = None
        groups: list[ec2.ISecurityGroup] = []
        if e.vpc is None:
            self.network = TrainingVpc(
                self,
                "Network",
                availability_zone=p.availability_zone,
                availability_zone_id=p.availability_zone_id,
                max_instance_count=p.max_instance_count,
                ips_per_instance=instance.private_ips if p.ips_per_instance is None else p.ips_per_instance,
                restrict_default_security_group=p.restrict_default_security_group,
                availability_zone_id_prefix=p.availability_zone_id_prefix,
                cidr=p.vpc_cidr,
                nat_gateway=p.nat_gateway,
                interface_endpoints=() if p.nat_gateway else DEFAULT_INTERFACE_ENDPOINTS + (
                    ("kms",) if self.encryption_key else ()),
                flow_log_bucket=log_bucket,
            )
            self.vpc: ec2.IVpc = self.network.vpc
            self.training_subnet: ec2.ISubnet = self.network.training_subnet
            self.availability_zone = self.network.availability_zone
            if self.network.endpoint_security_group is not None:
                groups.append(self.network.endpoint_security_group)
        else:  # checked in validate_in_app: the subnet has an AZ and availability_zone (if given) is it
            self.vpc, self.training_subnet = e.vpc, cast(ec2.ISubnet, e.training_subnet)
            self.availability_zone = self.training_subnet.availability_zone
        self.training_subnet_mask = self.network.training_subnet_mask if self.network is not None else None
        return groups + list(e.endpoint_security_groups)

    def _build_security_groups(self, endpoint_groups: list[ec2.ISecurityGroup]) -> None:
        """The EFA group (self rules, HTTPS to the endpoints / S3 / anywhere) and the job's groups."""
        p, stack = self.spec.placement, Stack.of(self)
        allow_https_egress = p.allow_https_egress
        if allow_https_egress is None:
            if self.network is None and not self.existing.endpoint_security_groups:
                raise ConfigError(
                    "with an existing vpc, say how jobs reach AWS APIs (sts, logs, sagemaker.api, ecr): pass "
                    "endpoint_security_groups=[<your interface endpoints' groups>] for HTTPS egress to them, or "
                    "allow_https_egress=True for HTTPS to 0.0.0.0/0 through your NAT or proxy; got neither"
                )
            allow_https_egress = p.nat_gateway
        s3_prefix_list_id = p.s3_prefix_list_id
        if s3_prefix_list_id is None and not Token.is_unresolved(stack.region):
            s3_prefix_list_id = S3_PREFIX_LISTS.get(stack.region)
        if s3_prefix_list_id is None and not allow_https_egress and Token.is_unresolved(stack.region):
            raise ConfigError(
                "s3_prefix_list_id is needed in an environment-agnostic stack (no region): the training group's "
                "HTTPS egress to the S3 gateway endpoint names the region's S3 prefix list (com.amazonaws.<region>.s3), "
                "which cannot be looked up without a region; pass s3_prefix_list_id='pl-...', or give the stack "
                "env=Environment(region=...), or use nat_gateway=True"
            )
        if s3_prefix_list_id is None and not allow_https_egress:
            raise ConfigError(
                f"{self.spec.name('s3_prefix_list_id')} is needed for HTTPS egress to the S3 gateway endpoint in region "
                f"{stack.region!r} (its com.amazonaws.{stack.region}.s3 prefix list, `aws ec2 describe-prefix-lists`); "
                f"built-in regions: {', '.join(S3_PREFIX_LISTS)}; or use {self.spec.name('nat_gateway')}=true"
            )
        self.efa = EfaSecurityGroup(
            self,
            "Efa",
            vpc=self.vpc,
            security_group=self.existing.security_group,
            endpoint_security_groups=endpoint_groups,
            s3_prefix_list_id=s3_prefix_list_id,
            allow_https_to_anywhere=allow_https_egress,
        )
        self.efa_security_group: ec2.ISecurityGroup = self.efa.security_group
        # Groups in additional_security_groups are left exactly as given: security groups are
        # evaluated as a union per interface, so the EFA group's self rules admit the EFA
        # traffic whatever else the job carries (docs/embedding.md, "Change only what you own").
        self.security_groups: tuple[ec2.ISecurityGroup, ...] = (self.efa_security_group,
                                                                 *self.existing.additional_security_groups)

    def _build_file_system(self, monitoring: "bool | MonitoringOptions") -> None:
        """The created file system, or the existing one attached (its group joins the job's)."""
        e, s = self.existing, self.spec.storage
        self.file_system: Any = None
        if e.file_system is not None:
            self.security_groups = _attach_existing(self, e.file_system, e.additional_security_groups)
            self.file_system = AttachedFileSystem(self, "ExistingFileSystem", existing=e.file_system, monitoring=monitoring)
        self.file_system = self.file_system or LustreFileSystem(
            self,
            "Lustre",
            plan=cast(LustrePlan, self.lustre_plan),  # not None: no existing file system
            vpc=self.vpc,
            subnet=self.training_subnet,
            security_group=self.efa_security_group,
            dataset_bucket=e.dataset_bucket,
            dataset_prefix=s.dataset_prefix,
            kms_key=self.encryption_key,
            monthly_cost_warning_usd=s.monthly_cost_warning_usd,
            monitoring=monitoring,
        )
        self.file_system_id = self.file_system.file_system_id
        self.file_system_mount = FileSystemMount(self.file_system_id, self.file_system.file_system.dns_name,
                                                 self.file_system.mount_name)
        if self.lustre_plan is not None and self.lustre_plan.efa_enabled:
            # Training jobs mount it over TCP: a synth warning unless an EFA client is attached.
            watch_efa_clients(self)

    def _build_checkpoints_and_role(self, log_bucket: Optional[s3.IBucket]) -> None:
        e, s, sec = self.existing, self.spec.storage, self.spec.security
        self.checkpoints = CheckpointBucket(
            self,
            "Checkpoints",
            bucket=e.checkpoint_bucket,
            log_bucket=log_bucket,
            encryption_key=self.encryption_key,
            noncurrent_version_expiration_days=s.checkpoint_noncurrent_days,
        )
        self.checkpoint_bucket: s3.IBucket = self.checkpoints.bucket
        self.job_bucket = self.checkpoint_bucket
        self.checkpoint_prefix, self.code_prefix = self.checkpoints.prefix, self.checkpoints.code_prefix
        self.output_prefix = self.checkpoints.output_prefix
        self.log_bucket = log_bucket
        self.execution_role = TrainingExecutionRole(
            self,
            "ExecutionRole",
            training_subnet=self.training_subnet,
            security_groups=self.security_groups,
            checkpoint_bucket=self.checkpoint_bucket,
            checkpoint_prefix=self.checkpoints.prefix,
            output_prefix=self.checkpoints.output_prefix,
            code_prefix=self.checkpoints.code_prefix,
            file_system_id=self.file_system.file_system_id,
            dataset_bucket=e.dataset_bucket,
            dataset_prefix=s.dataset_prefix,
            encryption_keys=[self.encryption_key] if self.encryption_key else [],
            role=e.role,
            image_account=sec.image_account,
            ecr_repository_arns=sec.ecr_repository_arns,
        )
        self.role: iam.IRole = self.execution_role.role

    # --- ITrainingNetwork ----------------------------------------------------------------------

    @property
    def job_document(self) -> Optional[JobDocument]:  # type: ignore[override]
        return self.job_settings()

    def endpoint_services(self) -> Optional[tuple[str, ...]]:
        if self.network is None or self.network.endpoint_security_group is None:
            return None
        return tuple(self.network.interface_endpoints)

    def add_interface_endpoint(self, service: str) -> ec2.InterfaceVpcEndpoint:
        if self.network is None:
            raise ConfigError(f"{self.node.path} uses a VPC the platform owns: add the {service} endpoint there")
        return self.network.add_interface_endpoint(service)

    @staticmethod
    def from_job_document(scope: Construct, id: str, *, parameter_name: str) -> ITrainingNetwork:
        """A network built in another app, known by the SSM parameter holding its job document
        (TrainingNetworkStack's ``TrainingJobConfigParameter``): a context lookup at synth, so
        the stack needs ``env=Environment(account=..., region=...)``.

        :param parameter_name: the parameter's name.
        """
        return network_from_parameter(scope, id, parameter_name=parameter_name)

    @staticmethod
    def from_attributes(scope: Construct, id: str, *, training_subnet: ec2.ISubnet,
                        security_groups: Sequence[ec2.ISecurityGroup], job_bucket: s3.IBucket,
                        checkpoint_prefix: Optional[str] = None, file_system_id: Optional[str] = None,
                        file_system_dns_name: Optional[str] = None, file_system_mount_name: Optional[str] = None,
                        encryption_key: Optional[kms.IKey] = None) -> ITrainingNetwork:
        """A network built in another stack or app, from its parts (nothing is created).

        :param training_subnet: the subnet, in one AZ.
        :param security_groups: the groups nodes and jobs carry, the EFA group first (1 to 5,
            VpcConfig.SecurityGroupIds).
        :param job_bucket: the bucket of checkpoints and lifecycle scripts.
        :param checkpoint_prefix: the checkpoint prefix. Default: none (the whole bucket).
        :param file_system_id: the FSx for Lustre file system. Default: none.
        :param file_system_dns_name: its DNS name (with ``file_system_mount_name``). Default: none.
        :param file_system_mount_name: its mount name. Default: none.
        :param encryption_key: the key of the bucket and file system. Default: none.
        """
        return ImportedTrainingNetwork(scope, id, training_subnet=training_subnet, security_groups=security_groups,
                                       job_bucket=job_bucket, checkpoint_prefix=checkpoint_prefix,
                                       file_system_id=file_system_id, file_system_dns_name=file_system_dns_name,
                                       file_system_mount_name=file_system_mount_name, encryption_key=encryption_key)

    @property
    def network_name(self) -> str:
        """The construct's path inside its stack: how ``job-config --network`` names it."""
        stack_path = Stack.of(self).node.path
        path = self.node.path
        return path[len(stack_path) + 1:] if path.startswith(stack_path + "/") else path

    def add_efa_client(self, description: str) -> None:
        """Say that a client that mounts the file system over EFA uses this network (a HyperPod
        cluster, EC2 instances with the EFA Lustre client): the synth warning that an EFA-enabled
        file system serves only training jobs, which mount it over TCP, is then not emitted.

        :param description: who the client is, e.g. ``"HyperPod cluster Cluster"``.
        """
        add_efa_client(self, description)

    @property
    def efa_clients(self) -> tuple[str, ...]:
        """The EFA clients attached with :meth:`add_efa_client` (empty: training jobs only)."""
        return efa_clients(self)

    def launch_policy(self, **overrides: Any) -> "TrainingLaunchPolicy":
        """The network's launch guardrail (created once, as ``LaunchPolicy``): a customer-managed
        policy that lets its holders start training jobs only inside this network.

        :param overrides: :class:`TrainingLaunchPolicy` props to change on first creation
            (e.g. ``conditions=LaunchConditions(include_tuning_jobs=True)``).
        """
        from smddp_infra.constructs.launch_policy import TrainingLaunchPolicy

        existing = self.node.try_find_child("LaunchPolicy")
        if existing is not None:
            if overrides:
                raise ConfigError("launch_policy() was already created; pass its overrides on the first call only")
            assert isinstance(existing, TrainingLaunchPolicy)
            return existing
        return TrainingLaunchPolicy(self, "LaunchPolicy", network=self, **overrides)

    def grant_launch(self, principal: Any) -> "TrainingLaunchPolicy":
        """Let ``principal`` (an IAM role, user or group) start training jobs, only inside this network;
        one created in another stack attaches the policy from its own side (:meth:`TrainingLaunchPolicy.grant`)."""
        policy = self.launch_policy()
        policy.grant(principal)
        return policy

    def job_settings(self) -> JobDocument:
        """The job document (tokens until deploy) for outputs, SSM or another construct. Read once:
        every value is fixed when the constructor ends, and each read is a round trip to jsii's node
        process (the default app asked for it four times)."""
        document: Optional[JobDocument] = getattr(self, "_job_settings", None)
        if document is None:
            document = self._job_settings = self._read_job_settings()
        return document

    def _read_job_settings(self) -> JobDocument:
        stack = Stack.of(self)
        return JobDocument(
            network=self.network_name,
            subnets=(self.training_subnet.subnet_id,),
            subnet_availability_zones=(self.availability_zone,),
            security_group_ids=tuple(g.security_group_id for g in self.security_groups),
            role_arn=self.role.role_arn,
            checkpoint_s3_uri=self.checkpoints.s3_uri(),
            output_s3_uri=self.checkpoints.output_s3_uri(),
            code_s3_uri=self.checkpoints.code_s3_uri(),
            file_system=FileSystemRef(
                id=self.file_system.file_system_id,
                mount_name=self.file_system.mount_name,
                directory_path=self.file_system.directory_path,
                access_mode=self.file_system_access_mode,
            ),
            instance_type=self.instance_type,
            instance_count=self.instance_count,
            region=stack.region,
            availability_zone=self.availability_zone,
            encrypt_inter_container_traffic=self.encrypt_inter_container_traffic,
            required_throughput_mbps=self.lustre_plan.required_throughput_mbps if self.lustre_plan is not None else None,
            kms_key_arn=self.encryption_key.key_arn if self.encryption_key is not None else None,
            sizing=self.lustre_plan.sizing_record() if self.lustre_plan is not None else None,
            monitoring=self.file_system.monitoring.settings() if self.file_system.monitoring is not None else None,
            max_runtime_seconds=self.max_runtime_seconds,
            availability_zone_id=self.availability_zone_id,
            training_plan_arn=self.training_plan_arn,
            training_plan_availability_zone_id=self.training_plan_availability_zone_id,
        )

    def job_config_json(self) -> str:
        """The job document as the JSON string (a token until deploy) the output carries."""
        return Stack.of(self).to_json_string(self.job_settings().to_json())

    def export_job_config(self, output_id: Optional[str] = None) -> CfnOutput:
        """Re-export the job document from the top-level stack: for a network in a ``NestedStack``.

        ``cdk deploy --outputs-file`` writes the outputs of top-level stacks only, so the
        document output of a network inside a nested stack never reaches cdk-outputs.json (and
        ``smddp-infra job-config`` finds nothing). CDK turns this output's references into the
        nested stack's outputs and ``Fn::GetAtt``s on it.

        :param output_id: the output's id in the top-level stack. Default: the id of the
            nested stack's document output (:func:`document_output_id` of the network's path).
        """
        top = Stack.of(self)
        while top.nested_stack_parent is not None:
            top = top.nested_stack_parent
        if self.exported_job_config is not None:
            raise ConfigError(f"export_job_config() was already called for {self.node.path}")
        wanted = output_id or getattr(self, "_job_config_output_id", None) or document_output_id(self.network_name)
        if top.node.try_find_child(wanted) is not None:
            raise ConfigError(f"export_job_config: {wanted!r} is already taken in stack {top.node.path}; pass output_id")
        output = CfnOutput(top, wanted, value=self.job_config_json(),
                           description=f"SMDDP training-job settings of {self.node.path} (smddp-infra job-config)")
        output.override_logical_id(wanted)
        self.exported_job_config = output
        return output

    def _publish_job_config(self, output_id: Optional[str]) -> CfnOutput:
        """The document as a stack output, with an id no other network in the stack shares."""
        stack = Stack.of(self)
        wanted = output_id if output_id is not None else document_output_id(self.network_name)
        for other in stack.node.find_all():
            if other is not self and getattr(other, "_job_config_output_id", None) == wanted:
                raise ConfigError(f"job_config_output_id {wanted!r} of {self.node.path} is already used by "
                                  f"{other.node.path} in the same stack; pass another job_config_output_id")
        self._job_config_output_id = wanted
        output = CfnOutput(self, "JobConfig", value=self.job_config_json(),
                           description=f"SMDDP training-job settings of {self.network_name} (smddp-infra job-config)")
        output.override_logical_id(wanted)
        return output


def _spec_for(scope: Construct, what: str, spec: Optional[NetworkSpec], groups: tuple[Any, ...],
              existing: Existing) -> NetworkSpec:
    """The one spec: the reader's (``spec=``) or the groups', with the escape hatches the construct
    holds and the stack's region (None when environment-agnostic). Building it runs its rules, once:
    a reader's spec already holds the same hatches and region, so it is used as it is."""
    facts: dict[str, Any] = dict(given=existing.given(), additional_groups=len(existing.additional_security_groups),
                                 region=concrete_region(scope, what))  # one line, not a jsii trace, outside a stack
    if spec is not None:
        if any(g is not None for g in groups):
            raise ConfigError("spec= was given with workload, placement, storage, security or jobs: pass the groups "
                              "or the spec, not both")
        if not isinstance(spec, NetworkSpec):
            raise PropTypeError(f"spec must be a NetworkSpec(...), got {type(spec).__name__}")
        same = all(getattr(spec, name) == wanted for name, wanted in facts.items())
        return spec if same else replace(spec, **facts)
    workload, placement, storage, security, jobs = (g if g is not None else cls() for g, cls in zip(
        groups, (Workload, Placement, Storage, Security, Jobs)))
    return NetworkSpec(workload, placement, storage, security, jobs, **facts)


def _attach_existing(network: TrainingNetwork, existing: ExistingFileSystem,
                     additional: Sequence[ec2.ISecurityGroup]) -> tuple[ec2.ISecurityGroup, ...]:
    """The AZ check, and the job's groups: the EFA group, the file system's own group (its self rule
    for TCP 988, which FSx requires of a file system's groups, admits the jobs; it is not changed),
    then the additional groups."""
    check_same_zone(existing, network.availability_zone)
    groups = (network.efa_security_group, existing.security_group, *additional)
    if len(groups) > 5:
        raise ConfigError(f"with file_system, jobs carry the EFA group and the file system's group: "
                          f"additional_security_groups may name at most 3, got {len(additional)}")
    return groups


def __getattr__(name: str) -> Any:
    """``SmddpTrainingNetwork`` still imports from here; it lives in :mod:`smddp_infra.constructs.deprecated`,
    which sits above this module (it subclasses TrainingNetwork), so it is reached by name, as
    ``smddp_infra``'s lazy map reaches every construct."""
    if name == "SmddpTrainingNetwork":
        return getattr(importlib.import_module("smddp_infra.constructs.deprecated"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Existing", "FileSystemMount", "ITrainingNetwork", "TrainingNetwork"]
