"""The app's settings: cdk.json / ``-c`` context keys parsed and checked in ONE place.

Pure Python (no aws_cdk) so every bad value is reported before jsii starts, as one line that
names the key, the value and what is allowed. The network facts it checks against (subnet
arithmetic, AZ IDs, S3 prefix lists) live in :mod:`smddp_infra.spec`, which owns them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from smddp_infra.errors import ConfigError
from smddp_infra.jobconfig.validation import check_az_id, check_max_runtime, check_training_plan_arn, plan_zone_problem
from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES, efa_instance
from smddp_infra.spec.names import is_sagemaker_name
from smddp_infra.spec.regions import REGION, check_availability_zone_id, is_prefix_list_id
from smddp_infra.spec.subnets import CONTEXT_NAMES, DEFAULT_INTERFACE_ENDPOINTS, check_subnet_fits

DEPLOYMENT_TYPE_CHOICES = ("SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2", "PERSISTENT_1_HDD")

@dataclass(frozen=True)
class NetworkSettings:
    """What ``app.py`` builds, from the ``smddp:*`` context keys (defaults in cdk.json)."""

    region: str = "us-east-1"
    availability_zone: Optional[str] = "us-east-1a"
    availability_zone_id: Optional[str] = None
    instance_type: str = "ml.p4d.24xlarge"
    instance_count: int = 4
    dataset_gib: float = 0.0
    read_mbps_per_gpu: Optional[float] = None
    required_throughput_mbps: Optional[float] = None
    deployment_type: Optional[str] = None
    efa_file_system: bool = False
    nat_gateway: bool = False
    dataset_bucket: Optional[str] = None
    checkpoint_noncurrent_days: int = 30
    kms_key: Optional[str] = None  # None, "create", or a key ARN
    s3_prefix_list_id: Optional[str] = None
    vpc_cidr: str = "10.0.0.0/16"
    max_capacity_gib: Optional[float] = None
    #: the largest cluster the training subnet is sized for (None: 1/16 of the VPC, see
    #: :func:`default_subnet_mask`); changing it changes the subnet's CIDR (a replacement).
    max_instance_count: Optional[int] = None
    #: pin the file system's PerUnitStorageThroughput (MB/s/TiB) as deployed: a change replaces it.
    per_unit_storage_throughput: Optional[int] = None
    #: ``smddp-infra guard`` lets a replacing update through (recorded in the cloud assembly).
    allow_replacement: bool = False
    #: Checked here; the constructs read the same two context keys themselves (so an embedding
    #: app's cdk.json works too), with the prop winning when both are set.
    availability_zone_id_prefix: Optional[str] = None
    monthly_cost_warning_usd: Optional[float] = None
    #: The file system's alarms, dashboard and topic (docs/observe.md).
    monitoring: bool = True
    checkpoint_gib: Optional[float] = None
    training_job_name_prefix: Optional[str] = None
    alarm_topic_arn: Optional[str] = None
    #: StoppingCondition.MaxRuntimeInSeconds for jobs on the network (written into the job
    #: document; None: job-config's default, 24 h).
    max_runtime_seconds: Optional[int] = None
    #: A SageMaker HyperPod Slurm cluster on the same network (docs/hyperpod.md): one controller
    #: and ``instance_count`` compute nodes of ``instance_type``.
    hyperpod: bool = False
    #: ResourceConfig.TrainingPlanArn for jobs on the network, and the AZ ID of the plan's
    #: reserved capacity (refused against a subnet placed by another AZ ID).
    training_plan_arn: Optional[str] = None
    training_plan_availability_zone_id: Optional[str] = None

    @classmethod
    def from_context(cls, context: Mapping[str, Any]) -> "NetworkSettings":
        """Parse ``smddp:*`` keys; values may be JSON types (cdk.json) or strings (``-c``)."""
        ctx = {k: v for k, v in context.items() if k.startswith("smddp:")}
        known = {f"smddp:{_camel(name)}" for name in cls.__dataclass_fields__}
        unknown = sorted(set(ctx) - known)
        if unknown:
            raise ConfigError(f"unknown context key {unknown[0]}; known keys: {', '.join(sorted(known))}")

        def get(key: str, default: Any = None) -> Any:
            value = ctx.get(f"smddp:{key}")
            return default if value is None or value == "" else value

        region = _text("smddp:region", get("region", cls.region))
        if not REGION.match(region):
            raise ConfigError(f"smddp:region must be an AWS region name like us-east-1, got {region!r}")
        az_id = get("availabilityZoneId")
        az = None if az_id is not None else _text("smddp:availabilityZone", get("availabilityZone", f"{region}a"))
        if az is not None and not re.fullmatch(re.escape(region) + r"[a-z]", az):
            raise ConfigError(
                f"smddp:availabilityZone must be an Availability Zone of {region} ({region}a, {region}b, ...), got {az!r}"
                + (" (cdk.json's default: set smddp:availabilityZone or smddp:availabilityZoneId with smddp:region)"
                   if "smddp:region" in ctx and "smddp:availabilityZone" in ctx else "")
            )
        az_prefix = get("availabilityZoneIdPrefix")
        if az_prefix is not None and not re.fullmatch(r"[a-z]+\d+", _text("smddp:availabilityZoneIdPrefix", az_prefix)):
            raise ConfigError(f"smddp:availabilityZoneIdPrefix must be an AZ ID prefix like use1, got {az_prefix!r}")
        if az_id is not None:
            az_id = _text("smddp:availabilityZoneId", az_id)
            check_availability_zone_id("smddp:availabilityZoneId", az_id, region, prefix=az_prefix,
                                       prefix_setting="smddp:availabilityZoneIdPrefix")

        instance_type = _text("smddp:instanceType", get("instanceType", cls.instance_type))
        efa_instance(instance_type, setting="smddp:instanceType")
        instance_count = _whole("smddp:instanceCount", get("instanceCount", cls.instance_count), minimum=1)
        dataset_gib = _number("smddp:datasetGiB", get("datasetGiB", 0), minimum=0)
        read = get("readMBpsPerGpu")
        read_mbps = None if read is None else _number("smddp:readMBpsPerGpu", read, minimum=0, exclusive=True)
        req = get("requiredThroughputMBps")
        required = None if req is None else _number("smddp:requiredThroughputMBps", req, minimum=0, exclusive=True)
        if read_mbps is None and required is None:
            raise ConfigError("set smddp:readMBpsPerGpu or smddp:requiredThroughputMBps (MB/s the job reads), got neither")

        deployment_type = get("deploymentType")
        if deployment_type is not None and deployment_type not in DEPLOYMENT_TYPE_CHOICES:
            raise ConfigError(f"smddp:deploymentType must be one of {', '.join(DEPLOYMENT_TYPE_CHOICES)} (or unset to let the calculator choose), got {deployment_type!r}")

        bucket = get("datasetBucket")
        if bucket is not None and not re.fullmatch(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?", str(bucket).removeprefix("s3://")):
            raise ConfigError(f"smddp:datasetBucket must be an S3 bucket name or s3://bucket/prefix, got {bucket!r}")
        kms = get("kmsKey")
        if kms is not None and kms != "create" and not re.fullmatch(r"arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[0-9a-f-]{36}", str(kms)):
            raise ConfigError(f"smddp:kmsKey must be 'create' or a KMS key ARN, got {kms!r}")
        prefix_list = get("s3PrefixListId")
        if prefix_list is not None and not is_prefix_list_id(str(prefix_list)):
            raise ConfigError(f"smddp:s3PrefixListId must be a prefix list id like pl-63a5400a, got {prefix_list!r}")
        cidr = _text("smddp:vpcCidr", get("vpcCidr", cls.vpc_cidr))
        match = re.fullmatch(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})/(\d{1,2})", cidr)
        if not match or any(int(o) > 255 for o in match.groups()[:4]) or not 16 <= int(match.group(5)) <= 24:
            raise ConfigError(f"smddp:vpcCidr must be an IPv4 CIDR block from /16 to /24, got {cidr!r}")

        cap = get("maxCapacityGiB")
        max_capacity = None if cap is None else _number("smddp:maxCapacityGiB", cap, minimum=0, exclusive=True)
        cost = get("monthlyCostWarningUSD")
        cost_warning = None if cost is None else _number("smddp:monthlyCostWarningUSD", cost, minimum=0, exclusive=True)

        if kms is not None and kms != "create" and str(kms).split(":")[3] != region:
            raise ConfigError(f"smddp:kmsKey must be a key in smddp:region {region} (KMS keys are regional), got {kms!r}")
        nat = _bool("smddp:natGateway", get("natGateway", False))
        max_count = get("maxInstanceCount")
        max_instances = None if max_count is None else _whole("smddp:maxInstanceCount", max_count, minimum=1)
        check_subnet_fits(cidr, instance_count=instance_count, ips_per_instance=efa_instance(instance_type).private_ips,
                          nat=nat, endpoints=0 if nat else len(DEFAULT_INTERFACE_ENDPOINTS) + (1 if kms else 0),
                          max_instance_count=max_instances, names=CONTEXT_NAMES, what=f"{instance_type} instances")
        runtime = get("maxRuntimeSeconds")
        max_runtime = None if runtime is None else check_max_runtime(_integer(runtime), setting="smddp:maxRuntimeSeconds")
        plan = get("trainingPlanArn")
        plan_arn = None if plan is None else check_training_plan_arn(plan, setting="smddp:trainingPlanArn")
        plan_zone = get("trainingPlanAvailabilityZoneId")
        if plan_zone is not None:
            plan_zone = check_az_id(plan_zone, setting="smddp:trainingPlanAvailabilityZoneId")
            if plan_arn is None:
                raise ConfigError(f"smddp:trainingPlanAvailabilityZoneId={plan_zone!r} needs smddp:trainingPlanArn too, "
                                  "got no smddp:trainingPlanArn")
            problem = plan_zone_problem(az_id, plan_zone, subnet_zone=az or "")
            if problem is not None and problem.startswith("refused: "):
                raise ConfigError(f"smddp:trainingPlanAvailabilityZoneId {plan_zone!r}: {problem.removeprefix('refused: ')}")
        per_unit = get("perUnitStorageThroughput")
        per_unit_throughput = None if per_unit is None else _whole("smddp:perUnitStorageThroughput", per_unit, minimum=1)
        if per_unit_throughput is not None and deployment_type is None:
            raise ConfigError(
                f"smddp:perUnitStorageThroughput={per_unit_throughput} needs smddp:deploymentType too (the tier is a "
                "deployment type and its MB/s/TiB), got no smddp:deploymentType"
            )

        hyperpod = _bool("smddp:hyperpod", get("hyperpod", False))
        if hyperpod:
            from smddp_infra.hyperpod.validation import check_instance_type

            check_instance_type("smddp:instanceType (with smddp:hyperpod=true)", instance_type)
        return cls(
            region=region,
            availability_zone=az,
            availability_zone_id=az_id,
            instance_type=instance_type,
            instance_count=instance_count,
            dataset_gib=dataset_gib,
            read_mbps_per_gpu=read_mbps,
            required_throughput_mbps=required,
            deployment_type=deployment_type,
            efa_file_system=_bool("smddp:efaFileSystem", get("efaFileSystem", False)),
            nat_gateway=nat,
            dataset_bucket=bucket,
            checkpoint_noncurrent_days=_whole("smddp:checkpointNoncurrentDays", get("checkpointNoncurrentDays", cls.checkpoint_noncurrent_days), minimum=1),
            kms_key=kms,
            s3_prefix_list_id=prefix_list,
            vpc_cidr=cidr,
            max_capacity_gib=max_capacity,
            max_instance_count=max_instances,
            per_unit_storage_throughput=per_unit_throughput,
            allow_replacement=_bool("smddp:allowReplacement", get("allowReplacement", False)),
            availability_zone_id_prefix=az_prefix,
            monthly_cost_warning_usd=cost_warning,
            **_monitoring_settings(get, region),
            max_runtime_seconds=max_runtime,
            hyperpod=hyperpod,
            training_plan_arn=plan_arn,
            training_plan_availability_zone_id=plan_zone,
        )

    @property
    def requirement_mbps(self) -> float:
        """The read throughput the file system must sustain (explicit, or GPUs x per-GPU MB/s)."""
        if self.required_throughput_mbps is not None:
            return self.required_throughput_mbps
        instance = EFA_INSTANCE_TYPES[self.instance_type]
        return instance.accelerators * self.instance_count * float(self.read_mbps_per_gpu or 0)


def _monitoring_settings(get: Any, region: str) -> dict[str, Any]:
    """``smddp:monitoring``, ``smddp:checkpointGiB``, ``smddp:trainingJobNamePrefix``, ``smddp:alarmTopicArn``."""
    checkpoint = get("checkpointGiB")
    prefix = get("trainingJobNamePrefix")
    if prefix is not None and not is_sagemaker_name(str(prefix)):
        raise ConfigError(f"smddp:trainingJobNamePrefix must be the start of a SageMaker training job name (letters, "
                          f"digits and hyphens, at most 63), got {prefix!r}")
    topic = get("alarmTopicArn")
    if topic is not None and not re.fullmatch(r"arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}", str(topic)):
        raise ConfigError(f"smddp:alarmTopicArn must be an SNS topic ARN (arn:aws:sns:{region}:<account>:<name>), got {topic!r}")
    return {
        "monitoring": _bool("smddp:monitoring", get("monitoring", True)),
        "checkpoint_gib": None if checkpoint is None else _number("smddp:checkpointGiB", checkpoint, minimum=0, exclusive=True),
        "training_job_name_prefix": None if prefix is None else str(prefix),
        "alarm_topic_arn": None if topic is None else str(topic),
    }


def _camel(name: str) -> str:
    special = {"dataset_gib": "datasetGiB", "read_mbps_per_gpu": "readMBpsPerGpu", "checkpoint_gib": "checkpointGiB",
               "required_throughput_mbps": "requiredThroughputMBps",
               "max_capacity_gib": "maxCapacityGiB", "monthly_cost_warning_usd": "monthlyCostWarningUSD"}
    if name in special:
        return special[name]
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _text(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a string, got {value!r}")
    return value


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ConfigError(f"{key} must be true or false, got {value!r}")


def _number(key: str, value: Any, *, minimum: float, exclusive: bool = False) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or math.isnan(number) or math.isinf(number) or number < minimum or (exclusive and number == minimum):
        relation = ">" if exclusive else ">="
        raise ConfigError(f"{key} must be a number {relation} {minimum:g}, got {value!r}")
    return number


def context_number(key: str, value: Any, *, minimum: float, exclusive: bool = False) -> float:
    """A context value (JSON number or the string ``-c`` gives) as a number, checked like the rest."""
    return _number(key, value, minimum=minimum, exclusive=exclusive)


def _integer(value: Any) -> Any:
    """``-c`` gives strings: ``"86400"`` -> 86400; anything else is returned as written."""
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return value


def _whole(key: str, value: Any, *, minimum: int) -> int:
    try:
        number = int(str(value))
    except ValueError:
        number = None
    if isinstance(value, bool) or number is None or number < minimum:
        raise ConfigError(f"{key} must be a whole number >= {minimum}, got {value!r}")
    return number
