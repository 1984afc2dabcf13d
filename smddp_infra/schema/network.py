"""The training network's spec: grouped, frozen values and one validator per rule (PURE).

The groups are what :class:`~smddp_infra.constructs.training_network.TrainingNetwork` takes
(``workload=``, ``placement=``, ``storage=``, ``security=``, ``jobs=``); the resources a
platform already owns (a VPC, subnet, groups, buckets, key, role, file system) are CDK objects
and travel in the construct's ``existing=`` group (:class:`~smddp_infra.constructs.training_network.Existing`):
the spec only needs to know WHICH of them are given (:attr:`NetworkSpec.given`), so it stays
importable without aws_cdk and every rule here runs before jsii starts.

Each field keeps the name the flat ``SmddpTrainingNetwork`` keyword had, so an error names the
field the user wrote in either API (``instance_count``, ``vpc_cidr``); the app's context reader
(:mod:`smddp_infra.settings`) builds the same spec with :attr:`NetworkSpec.names`, so the same
rules name its context keys (``smddp:instanceCount``). A check that needs the construct tree
(tokens, an imported subnet's AZ, the stack's region) is not here: it is the construct's
``validate`` step.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, Union

from smddp_infra.contract import FILE_SYSTEM_ACCESS_MODES, MAX_RUNTIME_LIMIT_SECONDS
from smddp_infra.errors import ConfigError, PropTypeError, SizingError
from smddp_infra.partitions import absent_in, partition_of
from smddp_infra.facts.regions import check_availability_zone, check_availability_zone_id, is_az_id, is_az_id_prefix, is_az_name, is_prefix_list_id, vpc_cidr as vpc_cidr_block
from smddp_infra.facts.subnets import DEFAULT_INTERFACE_ENDPOINTS, SubnetNames, check_subnet_fits
from smddp_infra.facts.arns import TRAINING_PLAN_ARN_LENGTH, is_training_plan_arn
from smddp_infra.facts.training_jobs import MAX_SECURITY_GROUPS as MAX_JOB_SECURITY_GROUPS, plan_zone_problem
from smddp_infra.schema.fields import LOOKUP_PLACEHOLDER_AZS, TOKEN_MARK, Rule, is_token, choice, flag, group, number, text, texts, value, whole
from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES, EXCLUDED_EFA_TYPES, InstanceType, efa_instance
from smddp_infra.sizing.lustre_rules import MAX_STORAGE_CAPACITY_GIB, PERSISTENT_2, SCRATCH_TYPES
from smddp_infra.sizing.planner import (
    CUSTOMER_KEY_DEPLOYMENT_TYPES,
    CUSTOMER_KEY_WHY,
    DEFAULT_DEPLOYMENT_TYPES,
    TIER_GROUPS,
    LustrePlan,
    plan_lustre,
)
from smddp_infra.sizing.workload import throughput_from_cluster

if TYPE_CHECKING:
    from smddp_infra.sizing.tiering import TieringPlan

# A rule's hint reads only a value of the rule's kind (a str here): Rule.check checks the type first.
def _efa_type_hint(name: str) -> str:
    why = EXCLUDED_EFA_TYPES.get(name)
    return f" ({name} is left out on purpose: {why})" if why else ""


def _az_id_given(value: str) -> str:
    return ": an AZ ID, pass it as availability_zone_id" if is_az_id(value) else ""


def _az_name_given(value: str) -> str:
    return ": an AZ name, pass it as availability_zone" if is_az_name(value) else ""


def _is_plan(value: Any) -> bool:
    from smddp_infra.sizing.tiering import TieringPlan  # an Intelligent-Tiering plan is a plan too

    return isinstance(value, (LustrePlan, TieringPlan))


_EFA_TYPE = Rule(f"a SageMaker EFA training instance type ({', '.join(EFA_INSTANCE_TYPES)})", str,
                 lambda v: v in EFA_INSTANCE_TYPES, key="smddp:instanceType", hint=_efa_type_hint)
_PLAN = Rule("a LustrePlan (from smddp_infra.sizing.plan_lustre(...)) or a TieringPlan", object, _is_plan,
             optional=True)


@group
@dataclass(frozen=True)
class Workload:
    """What the jobs read: it sizes the file system (never the subnet)."""

    #: SageMaker EFA training instance type. Default: ml.p4d.24xlarge (SMDDP runs on p4d/p4de).
    instance_type: str = value("ml.p4d.24xlarge", _EFA_TYPE)
    #: Instances per job. Default: 4. Sizes the file system's throughput, not the subnet: a
    #: subnet's CidrBlock is create-only, so it is sized by ``Placement.max_instance_count``.
    instance_count: int = value(4, whole(1, key="smddp:instanceCount"))
    #: MB/s each accelerator reads. One of this, ``required_throughput_mbps`` or
    #: ``Storage.lustre_plan`` is required (unless ``existing.file_system`` is given).
    read_mbps_per_gpu: Optional[float] = value(None, number(0, exclusive=True, unit="MB/s per accelerator",
                                                            key="smddp:readMBpsPerGpu", optional=True))
    #: The cluster's total read MB/s instead. Default: ``read_mbps_per_gpu`` x accelerators.
    required_throughput_mbps: Optional[float] = value(None, number(0, exclusive=True, unit="MB/s",
                                                                   key="smddp:requiredThroughputMBps", optional=True))
    #: GiB the file system must hold. Default: 0 (FSx's smallest StorageCapacity).
    dataset_gib: float = value(0, number(0, unit="GiB", key="smddp:datasetGiB"))


@group
@dataclass(frozen=True)
class Placement:
    """Where the training subnet is and how jobs reach AWS APIs."""

    #: AZ name of a created training subnet (``us-east-1a``). One of this or
    #: ``availability_zone_id`` is required when the network creates the VPC.
    availability_zone: Optional[str] = value(None, text(
        "an Availability Zone name like us-east-1a", lambda v: is_az_name(v) or v in LOOKUP_PLACEHOLDER_AZS,
        key="smddp:availabilityZone", optional=True, tokens=True, hint=_az_id_given))
    #: AZ ID instead (``use1-az4``): capacity reservations and training plans name AZ IDs, the
    #: same in every account (AZ names map to different IDs per account). Default: none.
    availability_zone_id: Optional[str] = value(None, text(
        "an AZ ID like use1-az4", is_az_id, key="smddp:availabilityZoneId", optional=True, tokens=True,
        hint=_az_name_given))
    #: The stack region's AZ ID prefix (``use1``) ``availability_zone_id`` is checked against
    #: (the app's ``smddp:availabilityZoneIdPrefix``). Default: a built-in table (UNCONFIRMED).
    availability_zone_id_prefix: Optional[str] = value(None, text(
        "an AZ ID prefix like use1", is_az_id_prefix, key="smddp:availabilityZoneIdPrefix", optional=True))
    #: CIDR of a created VPC, /16 to /24. Default: 10.0.0.0/16.
    vpc_cidr: str = value("10.0.0.0/16", text("an IPv4 CIDR block from /16 to /24 like 10.0.0.0/16",
                                              lambda v: vpc_cidr_block(v) is not None, key="smddp:vpcCidr"))
    #: The largest cluster a created training subnet is sized for. Default: none, 1/16 of
    #: ``vpc_cidr`` (a /20 of a /16: 406 instances at 5 IPs, twice over for a second job's ENIs).
    max_instance_count: Optional[int] = value(None, whole(1, key="smddp:maxInstanceCount", optional=True))
    #: A public subnet + NAT gateway instead of interface endpoints. Default: False.
    nat_gateway: bool = value(False, flag(key="smddp:natGateway"))
    #: Private IPs planned per instance. Default: the catalog's (5: SageMaker's documented
    #: minimum for an EFA training instance; UNCONFIRMED for types with many EFA interfaces).
    ips_per_instance: Optional[int] = value(None, whole(
        5, optional=True, why=" (SageMaker: a training instance that uses EFA needs at least 5 private IPs)"))
    #: The region's S3 prefix list (com.amazonaws.<region>.s3) for HTTPS egress to the S3
    #: gateway endpoint. Default: a built-in table of regions (UNCONFIRMED outside it).
    s3_prefix_list_id: Optional[str] = value(None, text("a prefix list id like pl-63a5400a", is_prefix_list_id,
                                                        key="smddp:s3PrefixListId", optional=True))
    #: HTTPS egress to 0.0.0.0/0 (AWS APIs through a NAT gateway or proxy). Default: the value
    #: of ``nat_gateway``; with an existing VPC, this or ``existing.endpoint_security_groups``.
    allow_https_egress: Optional[bool] = value(None, flag(optional=True))
    #: Strip a created VPC's default group of its rules (CDK's custom-resource Lambda). Default: False.
    restrict_default_security_group: bool = value(False, flag())


@group
@dataclass(frozen=True)
class Storage:
    """The file system the network creates (or, with ``existing.file_system``, nothing here)."""

    #: The file system's sizing (a TieringPlan builds Intelligent-Tiering). Default:
    #: plan_lustre over the Workload, called once (:func:`size_file_system`).
    lustre_plan: "Optional[Union[LustrePlan, TieringPlan]]" = value(None, _PLAN)
    #: Restrict the calculator's choice. Default: the calculator's (PERSISTENT_2, PERSISTENT_1,
    #: SCRATCH_2; PERSISTENT only with a customer KMS key, which FSx uses on PERSISTENT types only).
    deployment_types: Optional[Sequence[str]] = value(None, texts(
        f"FSx for Lustre deployment types among {', '.join(TIER_GROUPS)}", lambda v: v in TIER_GROUPS,
        key="smddp:deploymentType", optional=True, one=True, nonempty=True))
    #: The largest file system the calculator may choose (a spend cap). Default: no cap.
    max_capacity_gib: Optional[float] = value(None, number(0, exclusive=True, unit="GiB", key="smddp:maxCapacityGiB",
                                                           optional=True))
    #: Keep the tier of a deployed file system: PerUnitStorageThroughput (MB/s/TiB) of the one
    #: type in ``deployment_types`` (changing either replaces the file system). Default: the
    #: calculator's choice.
    per_unit_storage_throughput: Optional[int] = value(None, whole(1, key="smddp:perUnitStorageThroughput",
                                                                   optional=True))
    #: An EFA-enabled PERSISTENT_2 file system (FSx supports EFA on PERSISTENT_2 only). Default: False.
    efa_file_system: bool = value(False, flag(key="smddp:efaFileSystem"))
    #: Key prefix of ``existing.dataset_bucket`` linked into the file system. Default: the root.
    dataset_prefix: str = value("", text())
    #: ``ro`` or ``rw`` for the job's FileSystemDataSource channel. Default: ``ro``.
    file_system_access_mode: str = value("ro", choice(FILE_SYSTEM_ACCESS_MODES))
    #: Days old checkpoint versions are kept (S3 NoncurrentVersionExpiration). Default: 30.
    checkpoint_noncurrent_days: int = value(30, whole(1, key="smddp:checkpointNoncurrentDays"))
    #: A file system costing more per month is a synth warning (the app's
    #: ``smddp:monthlyCostWarningUSD``). Default: 20,000.
    monthly_cost_warning_usd: Optional[float] = value(None, number(
        0, exclusive=True, unit="USD per month", key="smddp:monthlyCostWarningUSD", optional=True))


@group
@dataclass(frozen=True)
class Security:
    """Keys and image access (a given key or role is a CDK object: ``existing=``)."""

    #: Create a KMS key (rotation on) for the bucket and file system when none is given; the
    #: file system is then PERSISTENT (FSx uses a customer key on PERSISTENT types only). Default: False.
    create_encryption_key: bool = value(False, flag())
    #: The ECR registry account of the job's images. Default: the AWS Deep Learning Containers
    #: account of the stack's region (smddp_infra.partitions.DLC_ACCOUNTS).
    image_account: Optional[str] = value(None, text(optional=True, tokens=True))
    #: The exact ECR repositories jobs may pull from, instead of every repository of
    #: ``image_account``. Default: none.
    ecr_repository_arns: Optional[Sequence[str]] = value(None, texts("a list of ECR repository ARNs", optional=True))


@group
@dataclass(frozen=True)
class Jobs:
    """What the job document tells every job on the network."""

    #: EnableInterContainerTrafficEncryption (IPsec between instances). Default: True.
    encrypt_inter_container_traffic: bool = value(True, flag())
    #: Publish the job document as a stack output (``job-config --outputs`` reads it). Default: True.
    publish_job_config: bool = value(True, flag())
    #: The output's id. Default: the construct's path, letters and digits, + TrainingJobConfig.
    job_config_output_id: Optional[str] = value(None, text(optional=True))
    #: StoppingCondition.MaxRuntimeInSeconds, 1 to 2,419,200 (28 days, the API's limit).
    #: Default: none (job-config's 86,400, the API's and SDK v2's default).
    max_runtime_seconds: Optional[int] = value(None, whole(
        1, MAX_RUNTIME_LIMIT_SECONDS, key="smddp:maxRuntimeSeconds", optional=True, unit="seconds",
        why=" (28 days, the CreateTrainingJob StoppingCondition.MaxRuntimeInSeconds limit)"))
    #: A SageMaker training plan whose reserved capacity jobs run on (ResourceConfig.TrainingPlanArn).
    training_plan_arn: Optional[str] = value(None, text(
        "a SageMaker training plan ARN (arn:aws:sagemaker:<region>:<12-digit account>:training-plan/<name>, "
        f"{TRAINING_PLAN_ARN_LENGTH[0]} to {TRAINING_PLAN_ARN_LENGTH[1]} characters: CreateTrainingJob's "
        "ResourceConfig.TrainingPlanArn)", is_training_plan_arn,
        key="smddp:trainingPlanArn", optional=True, tokens=True))
    #: The AZ ID of the plan's reserved capacity; another AZ than a subnet placed by
    #: ``Placement.availability_zone_id`` is refused. Default: none.
    training_plan_availability_zone_id: Optional[str] = value(None, text(
        "an AZ ID like use1-az4 (DescribeTrainingPlan's ReservedCapacitySummaries[].AvailabilityZoneId)", is_az_id,
        key="smddp:trainingPlanAvailabilityZoneId", optional=True))


@dataclass(frozen=True)
class NetworkSpec:
    """The groups, plus which escape hatches (``existing=`` fields) the construct holds and the
    stack's region. Its cross-field rules (:data:`VALIDATORS`) run when it is built: a spec that
    exists is a valid one, so whoever built it (the app's settings, the construct) built it once.
    """

    workload: Workload = field(default_factory=Workload)
    placement: Placement = field(default_factory=Placement)
    storage: Storage = field(default_factory=Storage)
    security: Security = field(default_factory=Security)
    jobs: Jobs = field(default_factory=Jobs)
    #: Names of the ``existing=`` fields that are given (``"vpc"``, ``"encryption_key"``, ...).
    given: frozenset[str] = frozenset()
    #: How many ``existing.additional_security_groups`` the job carries.
    additional_groups: int = 0
    #: How the user wrote each field, when not by its name (the app's context keys:
    #: ``{"instance_count": "smddp:instanceCount", ...}``); "" for a field the input cannot set.
    names: Mapping[str, str] = field(default_factory=dict)
    #: The stack's region (None: environment-agnostic; the regional rules are then not evaluated).
    region: Optional[str] = None

    def __post_init__(self) -> None:
        for name, cls in (("workload", Workload), ("placement", Placement), ("storage", Storage),
                          ("security", Security), ("jobs", Jobs)):
            if not isinstance(getattr(self, name), cls):
                raise PropTypeError(f"{name} must be a {cls.__name__}(...), got {type(getattr(self, name)).__name__}")
        validate(self)

    def groups(self) -> tuple[Any, ...]:
        return (self.workload, self.placement, self.storage, self.security, self.jobs)

    def name(self, field_name: str) -> str:
        """The field as the user wrote it: what an error names."""
        return self.names.get(field_name, field_name)

    @property
    def creates_vpc(self) -> bool:
        return "vpc" not in self.given

    @property
    def key_prop(self) -> str:
        """The field that gives the file system a customer KMS key ('' when none does)."""
        return (self.name("encryption_key") if "encryption_key" in self.given
                else self.names.get("create_encryption_key", "create_encryption_key=True")
                if self.security.create_encryption_key else "")


# --- one validator per rule ------------------------------------------------------------------------

def _set_fields(spec: NetworkSpec, names: Sequence[str]) -> list[str]:
    """Those of ``names`` the user set, in their order: a workload or storage field whose value is
    not its default, or an ``existing=`` field given."""
    set_ = {f.name for group in (spec.workload, spec.storage) for f in fields(group)
            if getattr(group, f.name) != f.default} | spec.given
    return [name for name in names if name in set_]


def check_existing_file_system_alone(spec: NetworkSpec) -> None:
    """Fields that size or link a file system the network creates mean nothing with ``file_system``."""
    if "file_system" not in spec.given:
        return
    sizing = _set_fields(spec, ("lustre_plan", "deployment_types", "max_capacity_gib", "efa_file_system",
                                "per_unit_storage_throughput", "dataset_bucket"))
    if sizing:
        raise ConfigError(f"file_system= was given with {', '.join(sizing)}: those size or link a file system the "
                          "network creates; with an existing one, drop them (link datasets on your file system)")


def check_one_encryption_key(spec: NetworkSpec) -> None:
    if "encryption_key" in spec.given and spec.security.create_encryption_key:
        raise ConfigError("create_encryption_key=True was given with encryption_key: pass one (the given key is used)")


def check_lustre_plan_accepted(spec: NetworkSpec) -> None:
    """A hand-made plan must be a file system CloudFormation accepts (the plan's own rule table)."""
    plan = spec.storage.lustre_plan
    problems = plan.problems() if plan is not None else []
    if problems:
        raise ConfigError("lustre_plan is not a file system CloudFormation accepts: " + "; ".join(problems))


def check_plan_or_workload(spec: NetworkSpec) -> None:
    """A plan fixes the size; the workload fields would be silently ignored next to it."""
    if spec.storage.lustre_plan is None:
        return
    given = _set_fields(spec, ("read_mbps_per_gpu", "required_throughput_mbps", "deployment_types", "max_capacity_gib",
                               "per_unit_storage_throughput", "dataset_gib"))
    if given:
        raise ConfigError(f"lustre_plan was given with {', '.join(given)}: the plan fixes the file system's size "
                          "already; pass the plan or the workload props, not both")


def check_plan_efa(spec: NetworkSpec) -> None:
    plan = spec.storage.lustre_plan
    if plan is not None and spec.storage.efa_file_system and not plan.efa_enabled:
        raise ConfigError("efa_file_system=True contradicts lustre_plan, which is not EFA-enabled")


def check_read_rate_given(spec: NetworkSpec) -> None:
    """The file system is sized from a read rate, unless a plan or an existing file system is given."""
    w = spec.workload
    if spec.storage.lustre_plan is None and "file_system" not in spec.given and \
            w.read_mbps_per_gpu is None and w.required_throughput_mbps is None:
        given = [n for n in map(spec.name, ("lustre_plan", "read_mbps_per_gpu", "required_throughput_mbps")) if n]
        raise ConfigError(f"TrainingNetwork needs {', '.join(given[:-1])} or {given[-1]} (the MB/s the jobs read "
                          "size the file system), got none")


def check_one_read_rate(spec: NetworkSpec) -> None:
    w = spec.workload
    if spec.storage.lustre_plan is None and w.read_mbps_per_gpu is not None and w.required_throughput_mbps is not None:
        raise ConfigError(
            f"{spec.name('read_mbps_per_gpu')}={w.read_mbps_per_gpu!r} and {spec.name('required_throughput_mbps')}="
            f"{w.required_throughput_mbps!r} both state the read rate: pass one (per accelerator, or the cluster's total)"
        )


def _names(types: Any) -> list[str]:
    return [types] if isinstance(types, str) else list(types or ())


def check_deployment_types(spec: NetworkSpec) -> None:
    """With EFA, PERSISTENT_2 only (FSx supports EFA on PERSISTENT_2 only); the names themselves
    are the field's rule (:class:`Storage`)."""
    if spec.storage.lustre_plan is not None or not spec.storage.efa_file_system:
        return
    for name in _names(spec.storage.deployment_types):
        if name != PERSISTENT_2:
            raise ConfigError(f"{spec.name('deployment_types')} contains {name!r}, but {spec.name('efa_file_system')}=True "
                              "allows only PERSISTENT_2 (FSx for Lustre supports EFA on PERSISTENT_2 only)")


def check_tier_pinned(spec: NetworkSpec) -> None:
    """A tier is a deployment type and its MB/s/TiB: pinning the rate names the one type it is of."""
    rate, types = spec.storage.per_unit_storage_throughput, _names(spec.storage.deployment_types)
    sized_here = spec.storage.lustre_plan is None and "file_system" not in spec.given
    if rate is not None and sized_here and len(types) != 1:
        raise ConfigError(
            f"{spec.name('per_unit_storage_throughput')}={rate} needs {spec.name('deployment_types')} too, naming one "
            f"type (the tier is a deployment type and its MB/s/TiB), got {', '.join(types) or 'none'}")


def check_key_on_persistent(spec: NetworkSpec) -> None:
    """A customer key and a SCRATCH type contradict each other: FSx would not use the key."""
    key, plan = spec.key_prop, spec.storage.lustre_plan
    if not key:
        return
    if plan is not None and plan.deployment_type in SCRATCH_TYPES:
        raise ConfigError(f"lustre_plan is {plan.deployment_type} but {key} is given: {CUSTOMER_KEY_WHY}; "
                          "plan a PERSISTENT type (plan_lustre(..., customer_key=True)) or drop the key")
    scratch = [name for name in _names(spec.storage.deployment_types) if name in SCRATCH_TYPES]
    if plan is None and scratch:
        raise ConfigError(f"{spec.name('deployment_types')} contains {scratch[0]!r} but {key} is given: "
                          f"{CUSTOMER_KEY_WHY}; name PERSISTENT types only, or drop the key")


def check_vpc_with_subnet(spec: NetworkSpec) -> None:
    """An existing VPC comes with its training subnet, and a subnet only with its VPC."""
    if spec.creates_vpc and "training_subnet" in spec.given:
        raise ConfigError("training_subnet was given without vpc: pass both, or neither to create them")
    if not spec.creates_vpc and "training_subnet" not in spec.given:
        raise ConfigError("vpc was given without training_subnet: pass the private subnet (one AZ) for jobs and FSx")


def check_one_placement(spec: NetworkSpec) -> None:
    """A created subnet is placed by exactly one of an AZ name or an AZ ID."""
    p = spec.placement
    if not spec.creates_vpc:
        return
    if p.availability_zone is None and p.availability_zone_id is None:
        raise ConfigError("TrainingNetwork needs availability_zone or availability_zone_id to place the training subnet")
    if p.availability_zone is not None and p.availability_zone_id is not None:
        raise ConfigError(f"availability_zone={p.availability_zone!r} and availability_zone_id="
                          f"{p.availability_zone_id!r} both place the training subnet: pass one")


def check_zone_in_region(spec: NetworkSpec) -> None:
    """A created subnet's AZ name and AZ ID belong to the stack's region (when it is known)."""
    p = spec.placement
    if spec.region is None or not spec.creates_vpc:
        return
    if p.availability_zone is not None and not is_token(p.availability_zone) and \
            p.availability_zone not in LOOKUP_PLACEHOLDER_AZS:
        check_availability_zone(spec.name("availability_zone"), p.availability_zone, spec.region)
    if p.availability_zone_id is not None and not is_token(p.availability_zone_id):
        prefix_name = spec.name("availability_zone_id_prefix")
        check_availability_zone_id(spec.name("availability_zone_id"), p.availability_zone_id, spec.region,
                                   prefix=p.availability_zone_id_prefix, prefix_setting=prefix_name)


def check_job_group_count(spec: NetworkSpec) -> None:
    """VpcConfig.SecurityGroupIds: at most 5 groups, the EFA group and up to 4 more."""
    if 1 + spec.additional_groups > MAX_JOB_SECURITY_GROUPS:
        raise ConfigError(f"additional_security_groups has {spec.additional_groups} groups: a training job takes at "
                          f"most {MAX_JOB_SECURITY_GROUPS} security groups (VpcConfig.SecurityGroupIds), the EFA group "
                          f"and up to {MAX_JOB_SECURITY_GROUPS - 1} more")


def check_created_subnet_fits(spec: NetworkSpec) -> None:
    """The created training subnet (and the NAT's /28) fit ``vpc_cidr``, and the cluster fits the subnet."""
    if not spec.creates_vpc:
        return
    p, w = spec.placement, spec.workload
    endpoints = 0 if p.nat_gateway else len(DEFAULT_INTERFACE_ENDPOINTS) + (1 if spec.key_prop else 0)
    check_subnet_fits(p.vpc_cidr, instance_count=w.instance_count, nat=p.nat_gateway, endpoints=endpoints,
                      ips_per_instance=p.ips_per_instance or efa_instance(w.instance_type).private_ips,
                      max_instance_count=p.max_instance_count, what=f"{w.instance_type} instances",
                      names=SubnetNames(*map(spec.name, ("vpc_cidr", "instance_count", "max_instance_count"))))


def check_training_plan(spec: NetworkSpec) -> None:
    """A plan's capacity AZ ID comes with the plan and is refused when the network placed its
    subnet in another AZ ID (a plan's reserved capacity sits in one AZ per block, and a job runs
    in its subnet's AZ). The ARN's and the AZ ID's shapes are their fields' rules (:class:`Jobs`)."""
    j = spec.jobs
    if j.training_plan_availability_zone_id is None:
        return
    zone_name = spec.name("training_plan_availability_zone_id")
    if j.training_plan_arn is None:
        raise ConfigError(f"{zone_name}={j.training_plan_availability_zone_id!r} was given without "
                          f"{spec.name('training_plan_arn')}: pass the plan too (or drop the AZ ID)")
    problem = training_plan_zone_problem(spec)
    if problem is not None and problem.startswith("refused: "):
        raise ConfigError(f"{zone_name} {j.training_plan_availability_zone_id!r}: {problem.removeprefix('refused: ')}")


def training_plan_zone_problem(spec: NetworkSpec) -> Optional[str]:
    """Whether the plan's capacity AZ serves the training subnet ("refused: ...", "not evaluated:
    ...", or None): certain only when the network placed the subnet by AZ ID (an AZ name maps to
    different AZ IDs in different accounts)."""
    zone_id, p = spec.jobs.training_plan_availability_zone_id, spec.placement
    if zone_id is None:
        return None
    known = p.availability_zone_id if spec.creates_vpc and p.availability_zone_id and \
        TOKEN_MARK not in p.availability_zone_id else None
    return plan_zone_problem(known, zone_id, subnet_zone=p.availability_zone or "")


#: Every rule, in the order a user fixes them (what is contradictory before what does not fit).
VALIDATORS: tuple[Callable[[NetworkSpec], None], ...] = (
    check_existing_file_system_alone,
    check_one_encryption_key,
    check_lustre_plan_accepted,
    check_plan_or_workload,
    check_plan_efa,
    check_read_rate_given,
    check_one_read_rate,
    check_deployment_types,
    check_tier_pinned,
    check_key_on_persistent,
    check_vpc_with_subnet,
    check_one_placement,
    check_zone_in_region,
    check_job_group_count,
    check_created_subnet_fits,
    check_training_plan,
)


def validate(spec: NetworkSpec) -> None:
    """Run every rule; the first broken one raises one line naming the field."""
    for check in VALIDATORS:
        check(spec)


def file_system_plan(spec: NetworkSpec) -> "Optional[Union[LustrePlan, TieringPlan]]":
    """The file system's plan: the given one, or the ONE sizing call (None with an existing file
    system: the network did not size it); refused when the stack's partition lacks its type."""
    plan = spec.storage.lustre_plan
    if plan is None and "file_system" not in spec.given:
        plan = size_file_system(spec)
    if plan is not None and spec.region is not None:
        why = absent_in(spec.region, plan.deployment_type)
        if why is not None:
            setting = (spec.name("lustre_plan") if spec.storage.lustre_plan is not None else
                       f"{spec.name('efa_file_system')}=True" if spec.storage.efa_file_system else
                       spec.name("deployment_types"))
            raise ConfigError(f"{setting} asks for a {plan.deployment_type} file system, which the "
                              f"{partition_of(spec.region)} partition (region {spec.region}) does not have: {why}")
    return plan


def _deployment_types(spec: NetworkSpec) -> Optional[Sequence[str]]:
    """The types the calculator may choose: the user's, else its defaults less those the stack's
    partition does not have (GovCloud has no PERSISTENT_2), so a partition never gets a plan it
    cannot deploy when the choice was left to the calculator."""
    s = spec.storage
    if s.deployment_types is not None or s.efa_file_system or spec.region is None:
        return s.deployment_types
    choices = CUSTOMER_KEY_DEPLOYMENT_TYPES if spec.key_prop else DEFAULT_DEPLOYMENT_TYPES
    kept = tuple(t for t in choices if absent_in(spec.region, t) is None)
    return None if kept == tuple(choices) else kept


def size_file_system(spec: NetworkSpec, instance: Optional[InstanceType] = None) -> LustrePlan:
    """The ONE sizing call: plan_lustre over the workload; failures told in the fields' names
    (:meth:`NetworkSpec.name`: the prop or context key the user wrote)."""
    w, s, n = spec.workload, spec.storage, spec.name
    instance = instance or efa_instance(w.instance_type)
    dataset = float(w.dataset_gib)
    if w.required_throughput_mbps is not None:
        need = float(w.required_throughput_mbps)
        stated = f"{n('required_throughput_mbps')}={need:,g} MB/s"
    else:
        need = throughput_from_cluster(w.instance_type, w.instance_count, w.read_mbps_per_gpu or 0.0)  # given: validated
        stated = (f"{n('read_mbps_per_gpu')}={w.read_mbps_per_gpu:,g} ({instance.accelerators} accelerators x "
                  f"{w.instance_count} instances = {need:,g} MB/s)")
    stated += f" with {n('dataset_gib')}={dataset:,g}"
    types = _deployment_types(spec)
    try:
        return plan_lustre(need, dataset, efa_enabled=s.efa_file_system, deployment_types=types,
                           max_capacity_gib=s.max_capacity_gib, customer_key=bool(spec.key_prop),
                           per_unit_storage_throughput=s.per_unit_storage_throughput)
    except SizingError as exc:
        if "more than any FSx for Lustre file system can deliver" in str(exc):
            raise SizingError(
                f"{stated} is more than one FSx for Lustre file system can serve: it needs more than "
                f"{MAX_STORAGE_CAPACITY_GIB:,} GiB, the largest StorageCapacity CloudFormation accepts; read less per "
                "GPU or split the dataset across file systems"
            ) from None
        default = ((PERSISTENT_2,) if s.efa_file_system else
                   CUSTOMER_KEY_DEPLOYMENT_TYPES if spec.key_prop else DEFAULT_DEPLOYMENT_TYPES)
        considered = ", ".join(_names(types) or list(default))
        # plan_lustre names its own parameters; the keys the user wrote for them, when other names
        limits = "".join(f", {n(name)}={limit:,g}" for name, limit in (
            ("max_capacity_gib", s.max_capacity_gib), ("per_unit_storage_throughput", s.per_unit_storage_throughput))
            if limit is not None and n(name) != name)
        raise SizingError(f"no FSx for Lustre file system ({considered}) fits {stated}{limits}: {exc}") from None


__all__ = ["VALIDATORS", "Jobs", "NetworkSpec", "Placement", "Security", "Storage", "Workload",
           "file_system_plan", "size_file_system", "training_plan_zone_problem", "validate"]
