"""The contract between what the constructs write and what the CLI reads.

One place for: the job document (a versioned, typed value), the stack output names and tag
keys, and the one reader of the file ``cdk deploy --outputs-file`` writes. The construct
writes through :meth:`JobDocument.to_json`; ``smddp-infra job-config``, ``preflight`` and
``guardrails`` read through :func:`read_outputs_file`. Pure Python (no ``aws_cdk``): the
construct calls ``to_json`` with CDK tokens, which are strings and numbers to this code.

Compatibility: ``version`` is the document's schema version. Optional keys are added
without a bump (a reader ignores keys it does not know, and every key added after version 1
is optional); an incompatible change bumps it, and a reader refuses versions newer than
:data:`DOCUMENT_VERSION` rather than misreading them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from smddp_infra.errors import ConfigError

#: Highest document ``version`` this code writes and reads.
DOCUMENT_VERSION = 2
#: The first version whose keys a reader must not ignore: ``trainingPlanArn``. A version-1
#: reader would drop the plan and render a job that runs on on-demand capacity instead of the
#: reserved one, so a document with a plan says version 2 (an older smddp-infra then refuses it
#: with "upgrade"); a document without one still says 1 (:attr:`JobDocument.schema_version`).
TRAINING_PLAN_VERSION = 2

#: The only local path SageMaker syncs to CheckpointConfig.S3Uri.
CHECKPOINT_LOCAL_PATH = "/opt/ml/checkpoints"
FILE_SYSTEM_TYPE = "FSxLustre"
FILE_SYSTEM_ACCESS_MODES = ("ro", "rw")

# --- the job's maximum runtime (StoppingCondition.MaxRuntimeInSeconds) ---------------------
#: The upper limit of CreateTrainingJob's ``StoppingCondition.MaxRuntimeInSeconds``: 28 days
#: (botocore's sagemaker model, StoppingCondition: "The default value is 1 day. The maximum
#: value is 28 days."; the shape itself only says ``min: 1``).
MAX_RUNTIME_LIMIT_SECONDS = 28 * 24 * 3600
#: What job-config emits when the network sets no maximum runtime: 24 hours, the API's own
#: default ("The default value is 1 day") and SDK v2's ``max_run``, so a job started from any
#: of the three formats stops at the same time. Emitted explicitly because SDK v3's
#: ModelTrainer otherwise sends its own default, one hour (sagemaker-train 1.27.0,
#: ``DEFAULT_MAX_RUNTIME_IN_SECONDS = 3600``), which stops a multi-node run long before it is
#: done. Not longer by default: a multi-node job that hangs (the EFA stalls and uneven-batch
#: hangs this project guards against) holds every instance until this limit, and a job
#: stopped at it can resume from its checkpoint prefix (when the script reloads it). Longer
#: runs are a choice: the ``max_runtime_seconds`` prop, ``smddp:maxRuntimeSeconds`` or
#: ``--max-runtime-seconds``.
DEFAULT_MAX_RUNTIME_SECONDS = 24 * 3600
#: sagemaker-train 1.27.0 (``sagemaker/train/defaults.py``, ``DEFAULT_MAX_RUNTIME_IN_SECONDS``):
#: what ModelTrainer sends when it is given no ``stopping_condition`` (job-config's v3 note and
#: preflight's PF-STOPPING-CONDITION both name it; tests/test_sagemaker_sdk_v3.py checks the SDK).
SDK_V3_DEFAULT_MAX_RUNTIME = 3600

# --- stack outputs --------------------------------------------------------------------------
#: Suffix of every output that holds a job document. The default stack's output is exactly
#: this; an embedded network's is ``<its construct path, letters and digits>`` + this, so two
#: networks in one stack never collide (see :func:`document_output_id`).
DOCUMENT_OUTPUT = "TrainingJobConfig"
#: The default stack's individual outputs (kept for people who read single values).
OUTPUT_SUBNETS = "TrainingSubnetIds"
OUTPUT_SECURITY_GROUPS = "SecurityGroupIds"
OUTPUT_ROLE = "RoleArn"
OUTPUT_CHECKPOINT = "CheckpointS3Uri"
OUTPUT_OUTPUT = "OutputS3Uri"
OUTPUT_CODE = "CodeS3Uri"
OUTPUT_FILE_SYSTEM_ID = "FileSystemId"
OUTPUT_MOUNT_NAME = "FileSystemMountName"
OUTPUT_DIRECTORY_PATH = "FileSystemDirectoryPath"
OUTPUT_PARAMETER_NAME = "TrainingJobConfigParameterName"
#: The launch policy's ARN (issue 12's guardrail), when the stack creates one.
OUTPUT_LAUNCH_POLICY = "LaunchPolicyArn"
#: The HyperPod cluster's ARN, when the default stack has one (smddp:hyperpod=true; not in STACK_OUTPUTS).
OUTPUT_HYPERPOD_CLUSTER = "HyperPodClusterArn"
#: Every individual output of the default stack, in template order.
STACK_OUTPUTS = (
    OUTPUT_SUBNETS, OUTPUT_SECURITY_GROUPS, OUTPUT_ROLE, OUTPUT_CHECKPOINT, OUTPUT_OUTPUT, OUTPUT_CODE,
    OUTPUT_FILE_SYSTEM_ID, OUTPUT_MOUNT_NAME, OUTPUT_DIRECTORY_PATH,
)
#: Outputs a stack deployed before they existed lacks; optional everywhere.
LOCATION_OUTPUTS = (OUTPUT_OUTPUT, OUTPUT_CODE)
#: The outputs needed to rebuild a document when a stack has no document output.
REQUIRED_INDIVIDUAL_OUTPUTS = tuple(k for k in STACK_OUTPUTS if k not in LOCATION_OUTPUTS)

# --- tags -----------------------------------------------------------------------------------
#: On the training subnet and the EFA group: what the rules and the review pack recognise as
#: this project's training network (``smddp:role`` = ``training``).
TAG_ROLE = "smddp:role"
TAG_ROLE_TRAINING = "training"
#: ... and on a HyperPod cluster's home-directories file system (FSx for OpenZFS).
TAG_ROLE_HOME_DIRECTORIES = "home-directories"
#: On the file system: the MB/s it was sized for (the sizing calculator's input).
TAG_REQUIRED_THROUGHPUT = "smddp:requiredThroughputMBps"
#: Template Metadata on the file system: the calculator's record (what it was asked and
#: chose), which the replacement guard reads to suggest the in-place plan.
METADATA_SIZING = "smddp:sizing"

_ALNUM = re.compile(r"[^A-Za-z0-9]")


def document_output_id(construct_path: str) -> str:
    """The output id of an embedded network's document: its path in the stack, letters and
    digits only, + ``TrainingJobConfig`` (``Platform/Cluster`` -> ``PlatformClusterTrainingJobConfig``).

    Derived from the path, not the id alone, so that two networks with the same id under
    different parents do not collide; CloudFormation output ids are alphanumeric, at most 255.
    """
    stem = _ALNUM.sub("", construct_path)
    output_id = f"{stem}{DOCUMENT_OUTPUT}"
    if len(output_id) > 255:
        raise ConfigError(f"construct path {construct_path!r} makes an output id of {len(output_id)} characters; "
                          "CloudFormation allows 255: pass a shorter job_config_output_id")
    return output_id


@dataclass(frozen=True)
class FileSystemRef:
    """The FSx for Lustre file system as a SageMaker FileSystemDataSource names it."""

    id: str
    mount_name: str
    directory_path: str
    type: str = FILE_SYSTEM_TYPE
    access_mode: str = "ro"


@dataclass(frozen=True)
class JobDocument:
    """Everything a training job needs from one network, as the construct publishes it.

    A value: no parsing, validation or rendering here (see :func:`parse_document`,
    :mod:`smddp_infra.jobconfig.validation` and :mod:`smddp_infra.jobconfig.render`).
    """

    subnets: tuple[str, ...]
    #: The network's EFA group first (the one with the all-traffic self rules; the launch
    #: guardrail requires it on every job), then any additional groups.
    security_group_ids: tuple[str, ...]
    role_arn: str
    checkpoint_s3_uri: str
    file_system: FileSystemRef
    instance_type: str
    instance_count: int
    region: str
    availability_zone: str
    checkpoint_local_path: str = CHECKPOINT_LOCAL_PATH
    #: Where SageMaker writes model artifacts (OutputDataConfig.S3OutputPath) and where the SDK
    #: uploads the training script: prefixes the execution role can use. None for stacks
    #: deployed before they existed.
    output_s3_uri: Optional[str] = None
    code_s3_uri: Optional[str] = None
    #: One AZ per subnet, same order; empty means every subnet is in ``availability_zone``.
    subnet_availability_zones: tuple[str, ...] = ()
    #: EnableInterContainerTrafficEncryption for jobs on this network (see docs/job-config.md).
    encrypt_inter_container_traffic: bool = True
    #: EnableNetworkIsolation; None means "not sent" (isolation also blocks the script's calls out).
    enable_network_isolation: Optional[bool] = None
    #: The cluster read MB/s the file system was sized for.
    required_throughput_mbps: Optional[float] = None
    #: The KMS key of the buckets and file system, when one is used.
    kms_key_arn: Optional[str] = None
    #: The network's construct path in its stack ("" for documents written before it existed).
    network: str = ""
    #: What the calculator chose (the file system's ``smddp:sizing`` record), when known.
    sizing: Optional["SizingRecord"] = None
    #: What the network's alarms watch (None: monitoring off, or a document written before it).
    monitoring: Optional["MonitoringSettings"] = None
    #: StoppingCondition.MaxRuntimeInSeconds the network asks for; None: the network sets none
    #: and job-config emits :data:`DEFAULT_MAX_RUNTIME_SECONDS` (see :attr:`max_runtime`).
    max_runtime_seconds: Optional[int] = None
    #: The training subnet's AZ ID, when the network was placed by AZ ID (an AZ name maps to
    #: different AZ IDs in different accounts, so a name alone does not say which ID it is).
    availability_zone_id: Optional[str] = None
    #: ResourceConfig.TrainingPlanArn: the SageMaker training plan whose reserved capacity jobs run on.
    training_plan_arn: Optional[str] = None
    #: The AZ ID of the plan's reserved capacity (DescribeTrainingPlan ->
    #: ReservedCapacitySummaries[].AvailabilityZoneId), when the network was told it.
    training_plan_availability_zone_id: Optional[str] = None
    #: The version the document was read as (1 for documents built in code without a plan);
    #: :attr:`schema_version` is what :meth:`to_json` writes.
    version: int = 1

    @property
    def schema_version(self) -> int:
        """The lowest version that holds this document: :data:`TRAINING_PLAN_VERSION` with a plan, else 1."""
        return max(self.version, TRAINING_PLAN_VERSION if self.training_plan_arn is not None else 1)

    @property
    def max_runtime(self) -> int:
        """The maximum runtime every format emits: the document's, else the default."""
        return DEFAULT_MAX_RUNTIME_SECONDS if self.max_runtime_seconds is None else self.max_runtime_seconds

    def to_json(self) -> dict[str, Any]:
        """The JSON object stored in the document output (and the SSM parameter)."""
        doc: dict[str, Any] = {
            "version": self.schema_version,
            "region": self.region,
            "availabilityZone": self.availability_zone,
            "instanceType": self.instance_type,
            "instanceCount": self.instance_count,
            "subnets": list(self.subnets),
            "securityGroupIds": list(self.security_group_ids),
            "roleArn": self.role_arn,
            "checkpoint": {"s3Uri": self.checkpoint_s3_uri, "localPath": self.checkpoint_local_path},
            "fileSystem": _write(self.file_system, _FILE_SYSTEM_KEYS),
        }
        if self.network:
            doc["network"] = self.network
        if self.subnet_availability_zones:
            doc["subnetAvailabilityZones"] = list(self.subnet_availability_zones)
        doc["encryptInterContainerTraffic"] = self.encrypt_inter_container_traffic
        optional = {
            "enableNetworkIsolation": self.enable_network_isolation,
            "requiredThroughputMBps": self.required_throughput_mbps,
            "output": None if self.output_s3_uri is None else {"s3Uri": self.output_s3_uri},
            "code": None if self.code_s3_uri is None else {"s3Uri": self.code_s3_uri},
            "kmsKeyArn": self.kms_key_arn,
            "sizing": None if self.sizing is None else self.sizing.to_json(),
            "monitoring": None if self.monitoring is None else self.monitoring.to_json(),
            "maxRuntimeInSeconds": self.max_runtime_seconds,
            "availabilityZoneId": self.availability_zone_id,
            "trainingPlanArn": self.training_plan_arn,
            "trainingPlanAvailabilityZoneId": self.training_plan_availability_zone_id,
        }
        doc.update({key: value for key, value in optional.items() if value is not None})
        return doc

    def zone_of(self, subnet: str) -> str:
        """The AZ of one of the document's subnets."""
        zones = dict(zip(self.subnets, self.subnet_availability_zones)) if self.subnet_availability_zones else {}
        return zones.get(subnet, self.availability_zone)


# --- the file system's sizing and monitoring, as published in the document -------------------

#: CloudWatch namespace and dimension of FSx metrics (REFERENCE: FSx "Monitoring with CloudWatch").
FSX_NAMESPACE = "AWS/FSx"
FSX_DIMENSION = "FileSystemId"


@dataclass(frozen=True)
class SizingRecord:
    """The calculator's record of one file system (template Metadata ``smddp:sizing`` and the
    document's ``sizing``): what it was asked and what it chose.

    ``baseline_throughput_mbps`` is the plan's baseline disk throughput, the value behind the
    ``smddp:requiredThroughputMBps`` tag's requirement: the alarms and ``smddp-infra observe``
    read it from here rather than computing it again.
    """

    deployment_type: str
    storage_type: str
    storage_capacity_gib: int
    per_unit_storage_throughput: Optional[int]
    efa_enabled: bool
    required_throughput_mbps: float
    baseline_throughput_mbps: float
    min_capacity_gib: float = 0
    max_capacity_gib: Optional[float] = None
    chosen_from: tuple[str, ...] = ()
    chosen_by: str = "given"

    def to_json(self) -> dict[str, Any]:
        return _write(self, _SIZING_KEYS)

    @classmethod
    def parse(cls, raw: Any, *, where: str) -> "SizingRecord":
        return cls(**_read(raw, where, _SIZING_KEYS))


@dataclass(frozen=True)
class MonitoringSettings:
    """What a network's alarms watch, as the construct created them; ``smddp-infra observe``
    reads the same metrics at the same period and judges with the same fraction.

    Metric names are kept here (not only in code) because they are overridable per network:
    a name FSx does not publish for a deployment type is changed in the construct and
    observe follows. Names of the alarms, dashboard and topic are CloudFormation's.
    """

    period_seconds: int
    throughput_fraction: float
    datapoints_to_alarm: int
    evaluation_periods: int
    free_capacity_threshold_gib: float
    read_metric: str = "DataReadBytes"
    write_metric: str = "DataWriteBytes"
    free_capacity_metric: str = "FreeDataStorageCapacity"
    metadata_metric: str = "MetadataOperations"
    namespace: str = FSX_NAMESPACE
    throughput_alarm: Optional[str] = None
    capacity_alarm: Optional[str] = None
    dashboard: Optional[str] = None
    alarm_topic_arn: Optional[str] = None
    training_job_name_prefix: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "namespace": self.namespace,
            "metrics": {key: getattr(self, name) for key, name in _METRIC_FIELDS.items()},
            "periodSeconds": self.period_seconds,
            "throughputFraction": self.throughput_fraction,
            "datapointsToAlarm": self.datapoints_to_alarm,
            "evaluationPeriods": self.evaluation_periods,
            "freeCapacityThresholdGiB": self.free_capacity_threshold_gib,
        }
        doc.update({key: getattr(self, name) for key, name in _OPTIONAL_FIELDS.items() if getattr(self, name) is not None})
        return doc

    @classmethod
    def parse(cls, raw: Any, *, where: str) -> "MonitoringSettings":
        doc = _object(raw, where, ("periodSeconds", "throughputFraction", "datapointsToAlarm", "evaluationPeriods",
                                   "freeCapacityThresholdGiB"))
        metrics = _object(doc.get("metrics", {}), f"{where}.metrics", ())
        names = {name: _str(metrics[key], f"{where}.metrics.{key}") for key, name in _METRIC_FIELDS.items() if key in metrics}
        return cls(
            period_seconds=_whole(doc["periodSeconds"], f"{where}.periodSeconds", positive=True),
            throughput_fraction=_num(doc["throughputFraction"], f"{where}.throughputFraction", positive=True),
            datapoints_to_alarm=_whole(doc["datapointsToAlarm"], f"{where}.datapointsToAlarm", positive=True),
            evaluation_periods=_whole(doc["evaluationPeriods"], f"{where}.evaluationPeriods", positive=True),
            free_capacity_threshold_gib=_num(doc["freeCapacityThresholdGiB"], f"{where}.freeCapacityThresholdGiB"),
            namespace=_str(doc.get("namespace", FSX_NAMESPACE), f"{where}.namespace"),
            **names,  # a metric not in the document keeps its default
            **{name: _opt_str(doc, key, where) for key, name in _OPTIONAL_FIELDS.items()},  # type: ignore[arg-type]  # each an Optional[str] field
        )


#: MonitoringSettings' document keys -> fields: the metric names (under "metrics") and the optional names.
_METRIC_FIELDS = {"read": "read_metric", "write": "write_metric", "freeCapacity": "free_capacity_metric",
                  "metadata": "metadata_metric"}
_OPTIONAL_FIELDS = {"throughputAlarm": "throughput_alarm", "capacityAlarm": "capacity_alarm", "dashboard": "dashboard",
                    "alarmTopicArn": "alarm_topic_arn", "trainingJobNamePrefix": "training_job_name_prefix"}


def _num(value: Any, where: str, *, whole: bool = False, positive: bool = False) -> float:
    """A JSON number (a whole one when asked); ``positive``: > 0, else >= 0."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and abs(value) != float("inf")
    if ok and whole:
        ok = float(value).is_integer()
    if ok:
        ok = value > 0 if positive else value >= 0
    if not ok:
        kind = "a whole number" if whole else "a number"
        raise ConfigError(f"{where} must be {kind} {'> 0' if positive else '>= 0'}, got {value!r}")
    return float(value)


def _whole(value: Any, where: str, *, positive: bool = False) -> int:
    return int(_num(value, where, whole=True, positive=positive))


# --- parsing ----------------------------------------------------------------------------------

def parse_document(raw: Any, *, where: str) -> JobDocument:
    """A :class:`JobDocument` from the output's value (a JSON string, or an already parsed object).

    Checks structure and types, not API limits (that is :mod:`smddp_infra.jobconfig.validation`).
    ``where`` names the place for messages (``stack 'X': output TrainingJobConfig``).
    """
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where} must be a JSON document, got invalid JSON ({exc.msg} at character {exc.pos})") from None
        except (RecursionError, ValueError) as exc:  # nested too deeply; an int past Python's 4,300 digits
            raise ConfigError(f"{where} must be a JSON document CloudFormation could hold, got one that cannot be "
                              f"read ({str(exc).split(';')[0]})") from None
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a JSON object, got {type(raw).__name__}")
    doc = raw
    version = doc.get("version", DOCUMENT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= DOCUMENT_VERSION:
        raise ConfigError(f"{where}: version must be 1..{DOCUMENT_VERSION} (this smddp-infra reads up to "
                          f"{DOCUMENT_VERSION}; upgrade it for newer stacks), got {version!r}")
    required = ("subnets", "securityGroupIds", "roleArn", "checkpoint", "fileSystem", "instanceType",
                "instanceCount", "region", "availabilityZone")
    missing = [k for k in required if k not in doc]
    if missing:
        raise ConfigError(f"{where} is missing {', '.join(repr(k) for k in missing)} "
                          f"(a document holds {', '.join(required)})")
    checkpoint = _object(doc["checkpoint"], f"{where}: checkpoint", ("s3Uri",))
    count = doc["instanceCount"]
    if isinstance(count, bool) or not isinstance(count, int):
        raise ConfigError(f"{where}: instanceCount must be a whole number >= 1, got {count!r}")
    runtime = doc.get("maxRuntimeInSeconds")
    if runtime is not None and (isinstance(runtime, bool) or not isinstance(runtime, int)):
        raise ConfigError(f"{where}: maxRuntimeInSeconds must be a whole number of seconds, got {runtime!r}")
    throughput = doc.get("requiredThroughputMBps")
    if throughput is not None and (isinstance(throughput, bool) or not isinstance(throughput, (int, float))):
        raise ConfigError(f"{where}: requiredThroughputMBps must be a number, got {throughput!r}")
    subnets = _str_list(doc["subnets"], f"{where}: subnets")
    zones = _str_list(doc.get("subnetAvailabilityZones", []), f"{where}: subnetAvailabilityZones")
    if zones and len(zones) != len(subnets):  # same order as subnets: zone_of(subnet) pairs them
        raise ConfigError(f"{where}: subnetAvailabilityZones must list one AZ per subnet ({len(subnets)}), "
                          f"got {list(zones)!r}")
    return JobDocument(
        version=version,
        network=_opt_str(doc, "network", where) or "",
        region=_str(doc["region"], f"{where}: region", empty_ok=True),
        availability_zone=_str(doc["availabilityZone"], f"{where}: availabilityZone", empty_ok=True),
        instance_type=_str(doc["instanceType"], f"{where}: instanceType"),
        instance_count=count,
        subnets=subnets,
        security_group_ids=_str_list(doc["securityGroupIds"], f"{where}: securityGroupIds"),
        subnet_availability_zones=zones,
        role_arn=_str(doc["roleArn"], f"{where}: roleArn"),
        checkpoint_s3_uri=_str(checkpoint["s3Uri"], f"{where}: checkpoint.s3Uri"),
        checkpoint_local_path=_str(checkpoint.get("localPath", CHECKPOINT_LOCAL_PATH), f"{where}: checkpoint.localPath"),
        file_system=FileSystemRef(**_read(doc["fileSystem"], f"{where}: fileSystem", _FILE_SYSTEM_KEYS)),
        output_s3_uri=_location(doc, "output", where),
        code_s3_uri=_location(doc, "code", where),
        encrypt_inter_container_traffic=_bool(doc.get("encryptInterContainerTraffic", True),
                                              f"{where}: encryptInterContainerTraffic"),
        enable_network_isolation=(None if doc.get("enableNetworkIsolation") is None else
                                  _bool(doc["enableNetworkIsolation"], f"{where}: enableNetworkIsolation")),
        required_throughput_mbps=None if throughput is None else float(throughput),
        kms_key_arn=_opt_str(doc, "kmsKeyArn", where),
        sizing=None if doc.get("sizing") is None else SizingRecord.parse(doc["sizing"], where=f"{where}: sizing"),
        monitoring=(None if doc.get("monitoring") is None
                    else MonitoringSettings.parse(doc["monitoring"], where=f"{where}: monitoring")),
        max_runtime_seconds=runtime,
        availability_zone_id=_opt_str(doc, "availabilityZoneId", where),
        training_plan_arn=_opt_str(doc, "trainingPlanArn", where),
        training_plan_availability_zone_id=_opt_str(doc, "trainingPlanAvailabilityZoneId", where),
    )


def _object(value: Any, where: str, required: Sequence[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a JSON object, got {value!r}")
    missing = [k for k in required if k not in value]
    if missing:
        raise ConfigError(f"{where} is missing {', '.join(repr(k) for k in missing)}")
    return value


def _str(value: Any, where: str, *, empty_ok: bool = False) -> str:
    if not isinstance(value, str) or (not empty_ok and not value.strip()):
        raise ConfigError(f"{where} must be a non-empty string, got {value!r}")
    return value.strip()


def _opt_str(doc: Mapping[str, Any], key: str, where: str) -> Optional[str]:
    return None if doc.get(key) is None else _str(doc[key], f"{where}: {key}")


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where} must be true or false, got {value!r}")
    return value


def _str_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ConfigError(f"{where} must be a JSON list of strings, got {value!r}")
    for item in value:
        if not isinstance(item, str):
            raise ConfigError(f"{where} entries must be strings, got {item!r}")
    return tuple(value)


def _location(doc: Mapping[str, Any], key: str, where: str) -> Optional[str]:
    value = doc.get(key)
    if value is None:
        return None
    return _str(_object(value, f"{where}: {key}", ("s3Uri",))["s3Uri"], f"{where}: {key}.s3Uri")


#: What a missing key of a record means: it must be written.
_REQUIRED = object()


@dataclass(frozen=True)
class _Key:
    """One key of a record's JSON object: the field it holds, how a written value is read (``where``
    names the key in messages), and what a missing key reads as: ``_REQUIRED`` (an error), None (the
    field is None, for a null too) or a value read like a written one (a null is then an error)."""

    name: str
    field: str
    read: Callable[[Any, str], Any] = _str
    absent: Any = _REQUIRED

    def value(self, record: Mapping[str, Any], where: str) -> Any:
        value = record.get(self.name, self.absent)
        return None if value is None and self.absent is None else self.read(value, f"{where}.{self.name}")


def _write(record: Any, keys: Sequence[_Key]) -> dict[str, Any]:
    """``record`` as its JSON object, every key written (None too), in the table's order."""
    values = {key.name: getattr(record, key.field) for key in keys}
    return {name: list(value) if isinstance(value, tuple) else value for name, value in values.items()}


def _read(raw: Any, where: str, keys: Sequence[_Key]) -> dict[str, Any]:
    """A record's fields from its JSON object, each key read in the table's order (``where.key`` in messages)."""
    record = _object(raw, where, [key.name for key in keys if key.absent is _REQUIRED])
    return {key.field: key.value(record, where) for key in keys}


#: FileSystemRef's keys, in the order the document writes them.
_FILE_SYSTEM_KEYS = (_Key("id", "id"), _Key("type", "type", absent=FILE_SYSTEM_TYPE), _Key("mountName", "mount_name"),
                     _Key("directoryPath", "directory_path"), _Key("accessMode", "access_mode", absent="ro"))
#: SizingRecord's keys, in the order the record writes them.
_SIZING_KEYS = (
    _Key("deploymentType", "deployment_type"),
    _Key("perUnitStorageThroughput", "per_unit_storage_throughput", _whole, absent=None),
    _Key("storageType", "storage_type", absent="SSD"),
    _Key("efaEnabled", "efa_enabled", _bool, absent=False),
    _Key("storageCapacityGiB", "storage_capacity_gib", _whole),
    _Key("requiredThroughputMBps", "required_throughput_mbps", _num),
    _Key("baselineThroughputMBps", "baseline_throughput_mbps", _num),
    # `or 0`: a null (or another false value) reads as 0, as it always has
    _Key("minCapacityGiB", "min_capacity_gib", lambda value, where: _num(value or 0, where), absent=0),
    _Key("maxCapacityGiB", "max_capacity_gib", _num, absent=None),
    _Key("chosenFrom", "chosen_from", _str_list, absent=[]),
    _Key("chosenBy", "chosen_by", absent="given"),
)


# --- cdk-outputs.json ---------------------------------------------------------------------------

@dataclass(frozen=True)
class DeployedNetwork:
    """One network found in a cdk-outputs.json: where it is and what it published."""

    stack: str
    #: The network's name: its construct path, or the output key's stem, or the stack name.
    name: str
    #: The output that holds its document (None: rebuilt from the individual outputs).
    output_key: Optional[str]
    #: None when the stack has only individual outputs, which do not carry the cluster shape.
    document: Optional[JobDocument]
    outputs: Mapping[str, Any] = field(repr=False, default_factory=dict)

    @property
    def label(self) -> str:
        """``Stack/Name`` (just ``Stack`` when the network is the stack's only one and unnamed)."""
        return self.stack if self.name == self.stack else f"{self.stack}/{self.name}"

    @property
    def where(self) -> str:
        """How messages name this network."""
        return f"stack {self.stack!r}" if self.name == self.stack or self.output_key in (None, DOCUMENT_OUTPUT) \
            else f"network {self.label!r}"

    def job_document(self, *, instance_type: Optional[str] = None, instance_count: Optional[int] = None,
                     max_runtime_seconds: Optional[int] = None, training_plan_arn: Optional[str] = None,
                     training_plan_availability_zone_id: Optional[str] = None) -> JobDocument:
        """The document, with the cluster shape overridden when asked.

        A stack without a document output is rebuilt from its individual outputs, which do not
        carry the cluster shape: ``instance_type`` and ``instance_count`` must then be given.
        """
        doc = self.document
        if doc is None:
            if instance_type is None or instance_count is None:
                raise ConfigError(f"{self.where} has no {DOCUMENT_OUTPUT} output, so the cluster shape is "
                                  "unknown: pass --instance-type and --instance-count")
            doc = _from_individual_outputs(self.outputs, stack=self.stack, instance_type=instance_type,
                                           instance_count=instance_count)
        overrides: dict[str, Any] = {"instance_type": instance_type, "instance_count": instance_count,
                                     "max_runtime_seconds": max_runtime_seconds, "training_plan_arn": training_plan_arn,
                                     "training_plan_availability_zone_id": training_plan_availability_zone_id}
        return replace(doc, **{name: value for name, value in overrides.items() if value is not None})


def load_outputs_file(path: "str | Path") -> dict[str, Any]:
    """The parsed cdk-outputs.json: ``{stack name: {output name: value}}``."""
    path = Path(path)
    try:
        # utf-8-sig: cdk writes plain UTF-8, editors on Windows add a byte-order mark.
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"--outputs file {str(path)!r} does not exist "
                          "(write it with `cdk deploy --outputs-file cdk-outputs.json`)") from None
    except IsADirectoryError:
        raise ConfigError(f"--outputs file {str(path)!r} is a directory; pass the JSON file "
                          "`cdk deploy --outputs-file` wrote") from None
    except OSError as exc:
        raise ConfigError(f"--outputs file {str(path)!r} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"--outputs file {str(path)!r} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
                          f"offset {exc.start}); it must be the JSON `cdk deploy --outputs-file` writes") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--outputs file {str(path)!r} is not valid JSON: {exc.msg} at line {exc.lineno} "
                          f"column {exc.colno}") from None
    except RecursionError:
        raise ConfigError(f"--outputs file {str(path)!r} is nested too deeply to be a cdk-outputs.json") from None
    except ValueError as exc:  # an int past Python's 4,300 digits
        raise ConfigError(f"--outputs file {str(path)!r} cannot be read: {str(exc).split(';')[0]}") from None
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"--outputs file {str(path)!r} must be a JSON object of stacks "
                          f"({{\"<StackName>\": {{\"<Output>\": \"<value>\"}}}}), got "
                          f"{'an empty object' if data == {} else type(data).__name__}")
    return data


def networks_in_outputs(data: Mapping[str, Any]) -> tuple[DeployedNetwork, ...]:
    """Every network in a parsed cdk-outputs.json, in file order.

    A network is an output named ``TrainingJobConfig`` or ``<stem>TrainingJobConfig`` whose
    value is a job document, or (older or hand-made stacks) a stack with the individual
    outputs ``TrainingSubnetIds`` ... ``FileSystemDirectoryPath`` and no document. A document
    output that is malformed is an error (it is ours, and silently skipping it would pick
    another network), the same for a stack whose individual outputs disagree with its
    document.
    """
    found: list[DeployedNetwork] = []
    for stack, outputs in data.items():
        stack = str(stack)
        if not isinstance(outputs, Mapping):
            continue
        keys = [k for k in outputs if isinstance(k, str) and k.endswith(DOCUMENT_OUTPUT)]
        for key in keys:
            where = f"stack {stack!r}: output {key}"
            document = parse_document(outputs[key], where=where)
            stem = key[: -len(DOCUMENT_OUTPUT)]
            name = document.network or stem or stack
            network = DeployedNetwork(stack=stack, name=name, output_key=key, document=document, outputs=outputs)
            if key == DOCUMENT_OUTPUT:
                _check_outputs_agree(document, outputs, stack=stack)
            found.append(network)
        if not keys and any(k in outputs for k in REQUIRED_INDIVIDUAL_OUTPUTS):
            found.append(DeployedNetwork(stack=stack, name=stack, output_key=None, document=None, outputs=outputs))
    return tuple(found)


def read_outputs_file(path: "str | Path") -> tuple[DeployedNetwork, ...]:
    """Every network in the file ``cdk deploy --outputs-file`` wrote (at least one, else an error)."""
    data = load_outputs_file(path)
    networks = networks_in_outputs(data)
    if not networks:
        stacks = ", ".join(repr(s) for s in sorted(map(str, data)))
        raise ConfigError(f"--outputs file {str(path)!r} holds no training network: no stack has a "
                          f"{DOCUMENT_OUTPUT} output (stacks: {stacks}); deploy a TrainingNetworkStack or a stack "
                          "with a TrainingNetwork, with `cdk deploy --outputs-file`")
    return networks


def select_network(networks: Sequence[DeployedNetwork], *, network: Optional[str] = None,
                   stack: Optional[str] = None) -> DeployedNetwork:
    """The one network to use: the only one, or the one ``--network`` (and/or ``--stack``) names.

    ``--network`` matches a network's name or its ``Stack/Name`` label; ``--stack`` alone
    picks a stack that holds one network. Several candidates list them all, never guess.
    """
    candidates = list(networks)
    if stack is not None:
        stacks = sorted({n.stack for n in networks})
        candidates = [n for n in candidates if n.stack == stack]
        if not candidates:
            raise ConfigError(f"--stack {stack!r} holds no training network; stacks with one: {', '.join(stacks)}")
    if network is not None:
        matched = [n for n in candidates if network in (n.name, n.label, n.output_key)]
        if not matched:
            raise ConfigError(f"--network {network!r} is not in the outputs file; networks: "
                              f"{', '.join(sorted(n.label for n in candidates))}")
        candidates = matched
    if len(candidates) > 1:
        flag = "--network NAME" if len({n.stack for n in candidates}) == 1 or network else "--network NAME (or --stack NAME)"
        raise ConfigError(f"the outputs file holds {len(candidates)} training networks, pass {flag}; networks: "
                          f"{', '.join(sorted(n.label for n in candidates))}")
    return candidates[0]


# --- the individual outputs -------------------------------------------------------------------

def _text(outputs: Mapping[str, Any], key: str, stack: str) -> str:
    return _str(outputs[key], f"stack {stack!r}: output {key}")


def _split_ids(outputs: Mapping[str, Any], key: str, stack: str) -> tuple[str, ...]:
    """CDK joins list outputs with commas (``Fn::Join``); accept a JSON list too."""
    value = outputs[key]
    if isinstance(value, (list, tuple)):
        parts = [str(v).strip() for v in value]
    else:
        parts = [p.strip() for p in _text(outputs, key, stack).split(",")]
    ids = tuple(p for p in parts if p)
    if not ids:
        raise ConfigError(f"stack {stack!r}: output {key} must list at least one id, got {value!r}")
    return ids


def _from_individual_outputs(outputs: Mapping[str, Any], *, stack: str, instance_type: str,
                             instance_count: int) -> JobDocument:
    missing = [k for k in REQUIRED_INDIVIDUAL_OUTPUTS if k not in outputs]
    if missing:
        raise ConfigError(f"stack {stack!r} has no {DOCUMENT_OUTPUT} output and is missing "
                          f"{', '.join(missing)}; it has: {', '.join(sorted(outputs)) or 'no outputs'}")

    def text(key: str) -> str:
        return _text(outputs, key, stack)

    return JobDocument(
        subnets=_split_ids(outputs, OUTPUT_SUBNETS, stack),
        security_group_ids=_split_ids(outputs, OUTPUT_SECURITY_GROUPS, stack),
        role_arn=text(OUTPUT_ROLE),
        checkpoint_s3_uri=text(OUTPUT_CHECKPOINT),
        file_system=FileSystemRef(id=text(OUTPUT_FILE_SYSTEM_ID), mount_name=text(OUTPUT_MOUNT_NAME),
                                  directory_path=text(OUTPUT_DIRECTORY_PATH)),
        instance_type=instance_type,
        instance_count=instance_count,
        # Not in the individual outputs; nothing rendered from them needs these.
        region="",
        availability_zone="",
        output_s3_uri=text(OUTPUT_OUTPUT) if OUTPUT_OUTPUT in outputs else None,
        code_s3_uri=text(OUTPUT_CODE) if OUTPUT_CODE in outputs else None,
    )


def _check_outputs_agree(document: JobDocument, outputs: Mapping[str, Any], *, stack: str) -> None:
    """The default stack's individual outputs and its document come from one construct; a
    difference means the file was edited or mixes two deployments."""
    expected: dict[str, Optional[str]] = {
        OUTPUT_SUBNETS: ",".join(document.subnets),
        OUTPUT_SECURITY_GROUPS: ",".join(document.security_group_ids),
        OUTPUT_ROLE: document.role_arn,
        OUTPUT_CHECKPOINT: document.checkpoint_s3_uri,
        OUTPUT_FILE_SYSTEM_ID: document.file_system.id,
        OUTPUT_MOUNT_NAME: document.file_system.mount_name,
        OUTPUT_DIRECTORY_PATH: document.file_system.directory_path,
        OUTPUT_OUTPUT: document.output_s3_uri,
        OUTPUT_CODE: document.code_s3_uri,
    }
    for key, wanted in expected.items():
        if key not in outputs:
            continue
        listed = key in (OUTPUT_SUBNETS, OUTPUT_SECURITY_GROUPS)
        actual = ",".join(_split_ids(outputs, key, stack)) if listed else _text(outputs, key, stack)
        if actual != wanted:
            said = (f"nothing (it has no {'output' if key == OUTPUT_OUTPUT else 'code'}.s3Uri)" if wanted is None
                    else wanted if listed else repr(wanted))
            raise ConfigError(f"stack {stack!r}: output {key} is {outputs[key]!r} but {DOCUMENT_OUTPUT} says "
                              f"{said}; the outputs file mixes two deployments or was edited")


def checkpoint_s3_uri(bucket_name: str, prefix: Optional[str]) -> str:
    """``s3://<bucket>/<prefix>/``: SageMaker treats the URI as a prefix; the slash keeps
    ``checkpoints`` from also matching ``checkpoints-old``."""
    prefix = (prefix or "").strip("/")
    return f"s3://{bucket_name}/{prefix}/" if prefix else f"s3://{bucket_name}/"
