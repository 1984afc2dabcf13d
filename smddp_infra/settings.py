"""The app's settings: cdk.json / ``-c`` context keys parsed and checked in ONE place.

A reader: a key table (:data:`KEYS`: context key -> field and parser), the rules between keys
that only the context has (:data:`RULES`: its region), and :attr:`NetworkSettings.spec`, the
network the keys describe as the construct's spec, named by context key, whose rules
(:mod:`smddp_infra.schema.network`) run last: one rule, one place, whoever wrote the value. Pure
Python (no aws_cdk) so every bad value is reported before jsii starts, as one line that names
the key, the value and what is allowed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from smddp_infra.errors import ConfigError
from smddp_infra.jobconfig.validation import check_az_id, check_max_runtime, check_training_plan_arn
from smddp_infra.sizing.catalog import efa_instance
from smddp_infra.facts.names import is_sagemaker_name
from smddp_infra.schema.network import Jobs, NetworkSpec, Placement, Security, Storage, Workload, validate
from smddp_infra.facts.regions import REGION, check_availability_zone_id, is_prefix_list_id, vpc_cidr

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
        """Parse ``smddp:*`` keys through :data:`KEYS`, then the rules between keys."""
        ctx = {k: v for k, v in context.items() if k.startswith("smddp:") and v is not None and v != ""}
        unknown = sorted(set(k for k in context if k.startswith("smddp:")) - set(KEYS))
        if unknown:
            raise ConfigError(f"unknown context key {unknown[0]}; known keys: {', '.join(sorted(KEYS))}")
        values: dict[str, Any] = {}
        for key, (field_name, parse) in KEYS.items():
            if key in ctx:
                values[field_name] = parse(key, ctx[key], values)
        if "availability_zone_id" in values:
            values["availability_zone"] = None
        else:  # the region's first AZ unless one is named (cdk.json names us-east-1a)
            values.setdefault("availability_zone", f"{values.get('region', cls.region)}a")
        settings = cls(**values)
        for rule in RULES:
            rule(settings, ctx)
        return settings

    @property
    def spec(self) -> NetworkSpec:
        """The network these keys describe, as the construct's spec (its errors name the keys).

        ``smddp:requiredThroughputMBps`` wins over ``smddp:readMBpsPerGpu`` (cdk.json may name one,
        ``-c`` the other)."""
        return NetworkSpec(
            workload=Workload(instance_type=self.instance_type, instance_count=self.instance_count,
                              read_mbps_per_gpu=None if self.required_throughput_mbps is not None else self.read_mbps_per_gpu,
                              required_throughput_mbps=self.required_throughput_mbps, dataset_gib=self.dataset_gib),
            placement=Placement(availability_zone=self.availability_zone, availability_zone_id=self.availability_zone_id,
                                vpc_cidr=self.vpc_cidr, max_instance_count=self.max_instance_count,
                                nat_gateway=self.nat_gateway, s3_prefix_list_id=self.s3_prefix_list_id),
            storage=Storage(deployment_types=(self.deployment_type,) if self.deployment_type else None,
                            max_capacity_gib=self.max_capacity_gib, efa_file_system=self.efa_file_system,
                            per_unit_storage_throughput=self.per_unit_storage_throughput,
                            checkpoint_noncurrent_days=self.checkpoint_noncurrent_days),
            security=Security(create_encryption_key=self.kms_key == "create"),
            jobs=Jobs(max_runtime_seconds=self.max_runtime_seconds, training_plan_arn=self.training_plan_arn,
                      training_plan_availability_zone_id=self.training_plan_availability_zone_id),
            given=frozenset(name for name, value in (("encryption_key", self.kms_key not in (None, "create")),
                                                     ("dataset_bucket", self.dataset_bucket)) if value),
            names=_SPEC_NAMES,
        )


# --- the rules between keys, one function each ---------------------------------------------------


def _zone_in_region(st: NetworkSettings, ctx: Mapping[str, Any]) -> None:
    if st.availability_zone is not None and not re.fullmatch(re.escape(st.region) + r"[a-z]", st.availability_zone):
        raise ConfigError(
            f"smddp:availabilityZone must be an Availability Zone of {st.region} ({st.region}a, {st.region}b, ...), "
            f"got {st.availability_zone!r}"
            + (" (cdk.json's default: set smddp:availabilityZone or smddp:availabilityZoneId with smddp:region)"
               if "smddp:region" in ctx and "smddp:availabilityZone" in ctx else "")
        )


def _zone_id_in_region(st: NetworkSettings, ctx: Mapping[str, Any]) -> None:
    if st.availability_zone_id is not None:
        check_availability_zone_id("smddp:availabilityZoneId", st.availability_zone_id, st.region,
                                   prefix=st.availability_zone_id_prefix, prefix_setting="smddp:availabilityZoneIdPrefix")


def _key_in_region(st: NetworkSettings, ctx: Mapping[str, Any]) -> None:
    if st.kms_key is not None and st.kms_key != "create" and st.kms_key.split(":")[3] != st.region:
        raise ConfigError(f"smddp:kmsKey must be a key in smddp:region {st.region} (KMS keys are regional), got {st.kms_key!r}")


def _hyperpod_type(st: NetworkSettings, ctx: Mapping[str, Any]) -> None:
    if st.hyperpod:
        from smddp_infra.hyperpod.validation import check_instance_type

        check_instance_type("smddp:instanceType (with smddp:hyperpod=true)", st.instance_type)


def _network_rules(st: NetworkSettings, ctx: Mapping[str, Any]) -> None:
    """The network's own rules (read rate, subnet fit, key and type, tier, training plan): the
    construct's, run over the keys' spec."""
    validate(st.spec)


#: Every rule between keys, in the order a user fixes them.
RULES: tuple[Callable[[NetworkSettings, Mapping[str, Any]], None], ...] = (
    _zone_in_region, _zone_id_in_region, _key_in_region, _hyperpod_type, _network_rules,
)


# --- parsers: (key, raw value, the fields parsed so far) -> value ----------------------------------

Parser = Callable[[str, Any, Mapping[str, Any]], Any]


def _pattern(pattern: str, what: str, *, after: Callable[[Any], Any] = str) -> Parser:
    def parse(key: str, value: Any, _: Mapping[str, Any]) -> Any:
        if not re.fullmatch(pattern, str(value)):
            raise ConfigError(f"{key} must be {what}, got {value!r}")
        return after(value)
    return parse


def _region(key: str, value: Any, _: Mapping[str, Any]) -> str:
    region = _text(key, value)
    if not REGION.match(region):
        raise ConfigError(f"{key} must be an AWS region name like us-east-1, got {region!r}")
    return region


def _instance_type(key: str, value: Any, _: Mapping[str, Any]) -> str:
    efa_instance(_text(key, value), setting=key)
    return str(value)


def _deployment_type(key: str, value: Any, _: Mapping[str, Any]) -> str:
    if value not in DEPLOYMENT_TYPE_CHOICES:
        raise ConfigError(f"{key} must be one of {', '.join(DEPLOYMENT_TYPE_CHOICES)} (or unset to let the calculator "
                          f"choose), got {value!r}")
    return str(value)


def _dataset_bucket(key: str, value: Any, _: Mapping[str, Any]) -> str:
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?", str(value).removeprefix("s3://")):
        raise ConfigError(f"{key} must be an S3 bucket name or s3://bucket/prefix, got {value!r}")
    return str(value)


def _kms_key(key: str, value: Any, _: Mapping[str, Any]) -> str:
    if value != "create" and not re.fullmatch(r"arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[0-9a-f-]{36}", str(value)):
        raise ConfigError(f"{key} must be 'create' or a KMS key ARN, got {value!r}")
    return str(value)


def _prefix_list(key: str, value: Any, _: Mapping[str, Any]) -> str:
    if not is_prefix_list_id(str(value)):
        raise ConfigError(f"{key} must be a prefix list id like pl-63a5400a, got {value!r}")
    return str(value)


def _vpc_cidr(key: str, value: Any, _: Mapping[str, Any]) -> str:
    cidr = _text(key, value)
    if vpc_cidr(cidr) is None:
        raise ConfigError(f"{key} must be an IPv4 CIDR block from /16 to /24, got {cidr!r}")
    return cidr


def _job_name_prefix(key: str, value: Any, _: Mapping[str, Any]) -> str:
    if not is_sagemaker_name(str(value)):
        raise ConfigError(f"{key} must be the start of a SageMaker training job name (letters, digits and hyphens, "
                          f"at most 63), got {value!r}")
    return str(value)


def _topic_arn(key: str, value: Any, parsed: Mapping[str, Any]) -> str:
    if not re.fullmatch(r"arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}", str(value)):
        region = parsed.get("region", NetworkSettings.region)
        raise ConfigError(f"{key} must be an SNS topic ARN (arn:aws:sns:{region}:<account>:<name>), got {value!r}")
    return str(value)


def _positive(key: str, value: Any, _: Mapping[str, Any]) -> float:
    return _number(key, value, minimum=0, exclusive=True)


def _at_least(minimum: int) -> Parser:
    return lambda key, value, _: _whole(key, value, minimum=minimum)


#: context key -> (NetworkSettings field, parser). ONE table: the known keys, their fields and
#: what each accepts; ``app.py`` builds from the result. Region first: later parsers read it.
KEYS: Mapping[str, tuple[str, Parser]] = {
    "smddp:region": ("region", _region),
    "smddp:availabilityZone": ("availability_zone", lambda k, v, _: _text(k, v)),
    "smddp:availabilityZoneIdPrefix": ("availability_zone_id_prefix", _pattern(
        r"[a-z]+\d+", "an AZ ID prefix like use1", after=str)),
    "smddp:availabilityZoneId": ("availability_zone_id", lambda k, v, _: _text(k, v)),
    "smddp:instanceType": ("instance_type", _instance_type),
    "smddp:instanceCount": ("instance_count", _at_least(1)),
    "smddp:datasetGiB": ("dataset_gib", lambda k, v, _: _number(k, v, minimum=0)),
    "smddp:readMBpsPerGpu": ("read_mbps_per_gpu", _positive),
    "smddp:requiredThroughputMBps": ("required_throughput_mbps", _positive),
    "smddp:deploymentType": ("deployment_type", _deployment_type),
    "smddp:efaFileSystem": ("efa_file_system", lambda k, v, _: _bool(k, v)),
    "smddp:natGateway": ("nat_gateway", lambda k, v, _: _bool(k, v)),
    "smddp:datasetBucket": ("dataset_bucket", _dataset_bucket),
    "smddp:checkpointNoncurrentDays": ("checkpoint_noncurrent_days", _at_least(1)),
    "smddp:kmsKey": ("kms_key", _kms_key),
    "smddp:s3PrefixListId": ("s3_prefix_list_id", _prefix_list),
    "smddp:vpcCidr": ("vpc_cidr", _vpc_cidr),
    "smddp:maxCapacityGiB": ("max_capacity_gib", _positive),
    "smddp:maxInstanceCount": ("max_instance_count", _at_least(1)),
    "smddp:perUnitStorageThroughput": ("per_unit_storage_throughput", _at_least(1)),
    "smddp:allowReplacement": ("allow_replacement", lambda k, v, _: _bool(k, v)),
    "smddp:monthlyCostWarningUSD": ("monthly_cost_warning_usd", _positive),
    "smddp:monitoring": ("monitoring", lambda k, v, _: _bool(k, v)),
    "smddp:checkpointGiB": ("checkpoint_gib", _positive),
    "smddp:trainingJobNamePrefix": ("training_job_name_prefix", _job_name_prefix),
    "smddp:alarmTopicArn": ("alarm_topic_arn", _topic_arn),
    "smddp:maxRuntimeSeconds": ("max_runtime_seconds", lambda k, v, _: check_max_runtime(_integer(v), setting=k)),
    "smddp:hyperpod": ("hyperpod", lambda k, v, _: _bool(k, v)),
    "smddp:trainingPlanArn": ("training_plan_arn", lambda k, v, _: check_training_plan_arn(v, setting=k)),
    "smddp:trainingPlanAvailabilityZoneId": ("training_plan_availability_zone_id", lambda k, v, _: check_az_id(v, setting=k)),
}


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


#: Each spec field as the app's user writes it (:attr:`NetworkSpec.names`): the key table's
#: fields, and the three keys whose field differs; "" where no key sets the field.
_SPEC_NAMES: Mapping[str, str] = {
    **{field_name: key for key, (field_name, _) in KEYS.items()},
    "deployment_types": "smddp:deploymentType", "encryption_key": "smddp:kmsKey",
    "create_encryption_key": "smddp:kmsKey=create", "lustre_plan": "",
}
