"""Training-job settings emitted by the stack, and their round trip through cdk-outputs.json.

The stack writes one JSON document (output ``TrainingJobConfig`` and an SSM parameter) built
by :meth:`TrainingJobSettings.to_document`; ``smddp-infra job-config`` reads it back with
:meth:`TrainingJobSettings.from_outputs`. Pure Python: the construct calls ``to_document``
with CDK tokens (they are strings and numbers to this code), the CLI with real ids.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from smddp_infra.errors import ConfigError
from smddp_infra.sizing.catalog import efa_instance

#: The only local path SageMaker syncs to CheckpointConfig.S3Uri.
CHECKPOINT_LOCAL_PATH = "/opt/ml/checkpoints"
FILE_SYSTEM_TYPE = "FSxLustre"

#: Stack output keys (also the keys of cdk-outputs.json for the stack).
OUTPUT_KEYS = (
    "TrainingSubnetIds",
    "SecurityGroupIds",
    "RoleArn",
    "CheckpointS3Uri",
    "OutputS3Uri",
    "CodeS3Uri",
    "FileSystemId",
    "FileSystemMountName",
    "FileSystemDirectoryPath",
    "TrainingJobConfig",
)


#: The per-stack output that holds the whole document (a JSON string in cdk-outputs.json).
DOCUMENT_OUTPUT = "TrainingJobConfig"
#: Where model artifacts go (OutputDataConfig.S3OutputPath) and where the SDK uploads the
#: training script: prefixes of the job bucket the execution role can use. Stacks deployed
#: before these existed lack them, so they are optional everywhere.
LOCATION_OUTPUT_KEYS = ("OutputS3Uri", "CodeS3Uri")
#: The outputs needed to rebuild the document when ``TrainingJobConfig`` is absent.
INDIVIDUAL_OUTPUT_KEYS = tuple(k for k in OUTPUT_KEYS if k != DOCUMENT_OUTPUT and k not in LOCATION_OUTPUT_KEYS)
#: Highest document ``version`` this code understands.
DOCUMENT_VERSION = 1

#: The channel name the FSx input is offered under (``/opt/ml/input/data/training``,
#: ``SM_CHANNEL_TRAINING`` inside the container).
DEFAULT_CHANNEL = "training"
#: SDK v2's switch for the SMDDP launcher (mpirun + smddprun), as the PyTorch estimator reads it.
SMDDP_DISTRIBUTION: Mapping[str, Any] = {"smdistributed": {"dataparallel": {"enabled": True}}}
#: SDK v2's torchrun launcher. SageMaker documents it as an SMDDP launcher too (the script then
#: calls ``init_process_group(backend="smddp")``), and SDK v2 (2.257.7) REFUSES the
#: ``smdistributed`` launcher on ml.p5.48xlarge ("SMModelParallel and SMDataParallel currently
#: do not support p5 instances") unless torch_distributed is on.
TORCHRUN_DISTRIBUTION: Mapping[str, Any] = {"torch_distributed": {"enabled": True}}
#: File systems are mounted on the training instances, not copied or streamed: SageMaker's
#: SDKs send ``File`` for a FileSystemDataSource channel (Pipe and FastFile are S3 modes).
FILE_SYSTEM_INPUT_MODE = "File"
#: The job-config output formats and what each one is for.
FORMATS = {
    "v2": "SageMaker Python SDK v2: {\"estimator\": PyTorch keyword arguments, \"fit\": {\"inputs\": "
          "FileSystemInput arguments per channel}}",
    "v3": "SageMaker Python SDK v3 ModelTrainer pieces (Compute, Networking, CheckpointConfig, "
          "OutputDataConfig, InputData)",
    "boto3": "CreateTrainingJob request fragment (VpcConfig, CheckpointConfig, OutputDataConfig, "
             "InputDataConfig, ...)",
}

# Limits of the CreateTrainingJob API (botocore's sagemaker model), checked here so that a bad
# stack output fails in the CLI with one line instead of at job submission.
MAX_SECURITY_GROUPS = 5  # VpcConfig.SecurityGroupIds: 1-5
MAX_SUBNETS = 16  # VpcConfig.Subnets: 1-16
_SUBNET_RE = re.compile(r"subnet-[0-9a-f]{8,17}")
_SECURITY_GROUP_RE = re.compile(r"sg-[0-9a-f]{8,17}")
_FILE_SYSTEM_ID_RE = re.compile(r"fs-[0-9a-f]{8,17}")  # API: (fs-[0-9a-f]{8,}), length 11-21
_ROLE_ARN_RE = re.compile(r"arn:aws[a-z\-]*:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+")
_S3_URI_RE = re.compile(r"s3://([a-z0-9][a-z0-9.\-]{1,61}[a-z0-9])/(.*)")
MAX_S3_URI = 1024  # CheckpointConfig.S3Uri and OutputDataConfig.S3OutputPath: at most 1024
_CHANNEL_RE = re.compile(r"[A-Za-z0-9.\-_]{1,64}")
_MOUNT_NAME_RE = re.compile(r"[A-Za-z0-9]+")
FILE_SYSTEM_ACCESS_MODES = ("ro", "rw")


@dataclass(frozen=True)
class TrainingJobSettings:
    """Everything a training job needs from the network, in one plain value."""

    subnets: tuple[str, ...]
    security_group_ids: tuple[str, ...]
    role_arn: str
    checkpoint_s3_uri: str
    file_system_id: str
    file_system_mount_name: str
    file_system_directory_path: str
    instance_type: str
    instance_count: int
    region: str
    availability_zone: str
    checkpoint_local_path: str = CHECKPOINT_LOCAL_PATH
    file_system_type: str = FILE_SYSTEM_TYPE
    file_system_access_mode: str = "ro"
    #: Where SageMaker writes model artifacts (OutputDataConfig.S3OutputPath) and where the SDK
    #: uploads the training script (code_location): prefixes the execution role can use.
    output_s3_uri: Optional[str] = None
    code_s3_uri: Optional[str] = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_document(self) -> dict[str, Any]:
        """The JSON document stored in the ``TrainingJobConfig`` output and SSM parameter."""
        document = {
            "version": 1,
            "region": self.region,
            "availabilityZone": self.availability_zone,
            "instanceType": self.instance_type,
            "instanceCount": self.instance_count,
            "subnets": list(self.subnets),
            "securityGroupIds": list(self.security_group_ids),
            "roleArn": self.role_arn,
            "checkpoint": {"s3Uri": self.checkpoint_s3_uri, "localPath": self.checkpoint_local_path},
            "fileSystem": {
                "id": self.file_system_id,
                "type": self.file_system_type,
                "mountName": self.file_system_mount_name,
                "directoryPath": self.file_system_directory_path,
                "accessMode": self.file_system_access_mode,
            },
            **dict(self.extra),
        }
        if self.output_s3_uri is not None:
            document["output"] = {"s3Uri": self.output_s3_uri}
        if self.code_s3_uri is not None:
            document["code"] = {"s3Uri": self.code_s3_uri}
        return document

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> "TrainingJobSettings":
        checkpoint = doc["checkpoint"]
        fs = doc["fileSystem"]
        known = {"version", "region", "availabilityZone", "instanceType", "instanceCount", "subnets",
                 "securityGroupIds", "roleArn", "checkpoint", "fileSystem", "output", "code"}
        return cls(
            subnets=tuple(doc["subnets"]),
            security_group_ids=tuple(doc["securityGroupIds"]),
            role_arn=doc["roleArn"],
            checkpoint_s3_uri=checkpoint["s3Uri"],
            checkpoint_local_path=checkpoint.get("localPath", CHECKPOINT_LOCAL_PATH),
            file_system_id=fs["id"],
            file_system_type=fs.get("type", FILE_SYSTEM_TYPE),
            file_system_mount_name=fs["mountName"],
            file_system_directory_path=fs["directoryPath"],
            file_system_access_mode=fs.get("accessMode", "ro"),
            instance_type=doc["instanceType"],
            instance_count=int(doc["instanceCount"]),
            region=doc["region"],
            availability_zone=doc["availabilityZone"],
            output_s3_uri=(doc.get("output") or {}).get("s3Uri"),
            code_s3_uri=(doc.get("code") or {}).get("s3Uri"),
            extra={k: v for k, v in doc.items() if k not in known},
        )

    @classmethod
    def from_outputs(
        cls,
        outputs: Mapping[str, Any],
        *,
        stack: str = "stack",
        instance_type: Optional[str] = None,
        instance_count: Optional[int] = None,
    ) -> "TrainingJobSettings":
        """Settings from one stack's entry of cdk-outputs.json, validated.

        ``TrainingJobConfig`` (the whole document) wins when present; the individual outputs
        must then agree with it, because a disagreement means a hand-edited or stale file.
        Without it the settings are rebuilt from the individual outputs, which do not carry
        the cluster shape: ``instance_type`` and ``instance_count`` must then be given.
        ``instance_type``/``instance_count`` always override the document.
        """
        if not isinstance(outputs, Mapping):
            raise ConfigError(f"stack {stack!r} in cdk-outputs.json must map output names to values, "
                              f"got {type(outputs).__name__}")
        if DOCUMENT_OUTPUT in outputs:
            settings = cls._from_document_output(outputs[DOCUMENT_OUTPUT], stack=stack)
            _check_outputs_agree(settings, outputs, stack=stack)
        else:
            settings = cls._from_individual_outputs(outputs, stack=stack, instance_type=instance_type,
                                                    instance_count=instance_count)
        overrides: dict[str, Any] = {}
        if instance_type is not None:
            overrides["instance_type"] = instance_type
        if instance_count is not None:
            overrides["instance_count"] = instance_count
        return replace(settings, **overrides).validate(stack=stack)

    @classmethod
    def _from_document_output(cls, raw: Any, *, stack: str) -> "TrainingJobSettings":
        if isinstance(raw, str):
            try:
                doc = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"stack {stack!r}: output {DOCUMENT_OUTPUT} must be a JSON document, "
                                  f"got invalid JSON ({exc.msg} at character {exc.pos})") from None
        else:
            doc = raw
        if not isinstance(doc, Mapping):
            raise ConfigError(f"stack {stack!r}: output {DOCUMENT_OUTPUT} must be a JSON object, "
                              f"got {type(doc).__name__}")
        version = doc.get("version", DOCUMENT_VERSION)
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= DOCUMENT_VERSION:
            raise ConfigError(f"stack {stack!r}: {DOCUMENT_OUTPUT}.version must be 1..{DOCUMENT_VERSION} "
                              f"(this smddp-infra reads up to {DOCUMENT_VERSION}), got {version!r}")
        for key in ("subnets", "securityGroupIds"):
            if key in doc and not isinstance(doc[key], list):
                raise ConfigError(f"stack {stack!r}: {DOCUMENT_OUTPUT}.{key} must be a JSON list of ids, "
                                  f"got {doc[key]!r}")
        count = doc.get("instanceCount", 1)
        if isinstance(count, bool) or not isinstance(count, int):
            raise ConfigError(f"stack {stack!r}: {DOCUMENT_OUTPUT}.instanceCount must be a whole number >= 1, "
                              f"got {count!r}")
        try:
            return cls.from_document(doc)
        except KeyError as exc:
            raise ConfigError(f"stack {stack!r}: {DOCUMENT_OUTPUT} is missing the key {exc.args[0]!r} "
                              "(it must hold subnets, securityGroupIds, roleArn, checkpoint, fileSystem, "
                              "instanceType, instanceCount, region and availabilityZone)") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"stack {stack!r}: {DOCUMENT_OUTPUT} has a value of the wrong type ({exc})") from None

    @classmethod
    def _from_individual_outputs(cls, outputs: Mapping[str, Any], *, stack: str,
                                 instance_type: Optional[str],
                                 instance_count: Optional[int]) -> "TrainingJobSettings":
        missing = [k for k in INDIVIDUAL_OUTPUT_KEYS if k not in outputs]  # OutputS3Uri/CodeS3Uri: optional
        if missing:
            raise ConfigError(f"stack {stack!r} has no {DOCUMENT_OUTPUT} output and is missing "
                              f"{', '.join(missing)}; it has: {', '.join(sorted(outputs)) or 'no outputs'}")
        if instance_type is None or instance_count is None:
            raise ConfigError(f"stack {stack!r} has no {DOCUMENT_OUTPUT} output, so the cluster shape is "
                              "unknown: pass --instance-type and --instance-count")
        return cls(
            subnets=_split_ids(outputs["TrainingSubnetIds"], key="TrainingSubnetIds", stack=stack),
            security_group_ids=_split_ids(outputs["SecurityGroupIds"], key="SecurityGroupIds", stack=stack),
            role_arn=_text(outputs["RoleArn"], key="RoleArn", stack=stack),
            checkpoint_s3_uri=_text(outputs["CheckpointS3Uri"], key="CheckpointS3Uri", stack=stack),
            file_system_id=_text(outputs["FileSystemId"], key="FileSystemId", stack=stack),
            file_system_mount_name=_text(outputs["FileSystemMountName"], key="FileSystemMountName", stack=stack),
            file_system_directory_path=_text(outputs["FileSystemDirectoryPath"], key="FileSystemDirectoryPath",
                                             stack=stack),
            instance_type=instance_type,
            instance_count=instance_count,
            # Not in the individual outputs; nothing rendered below needs them.
            region="",
            availability_zone="",
            output_s3_uri=_optional_text(outputs, "OutputS3Uri", stack=stack),
            code_s3_uri=_optional_text(outputs, "CodeS3Uri", stack=stack),
        )

    def validate(self, *, stack: str = "stack") -> "TrainingJobSettings":
        """Raise :class:`ConfigError` unless CreateTrainingJob would accept these values.

        Mirrors the API's own limits (VpcConfig 1-5 groups and 1-16 subnets, id and ARN
        patterns, FileSystemDataSource enums) plus this project's rules: an EFA instance type,
        S3 checkpoint/output/code prefixes ending in "/" (the role's grants are on
        ``<prefix>/*``, and a prefix without the slash also matches ``checkpoints-old/``) and
        a Lustre DirectoryPath under ``/<mount name>``. Not called by :meth:`to_document`,
        which the construct feeds with unresolved CDK tokens.
        """
        where = f"stack {stack!r}: "
        _check_ids(self.subnets, "subnets", _SUBNET_RE, "subnet-<8-17 hex digits>", MAX_SUBNETS, where)
        _check_ids(self.security_group_ids, "securityGroupIds", _SECURITY_GROUP_RE, "sg-<8-17 hex digits>",
                   MAX_SECURITY_GROUPS, where)
        if not isinstance(self.role_arn, str) or not _ROLE_ARN_RE.fullmatch(self.role_arn):
            raise ConfigError(f"{where}roleArn must be an IAM role ARN (arn:aws:iam::<12 digits>:role/<name>), "
                              f"got {self.role_arn!r}")
        _check_prefix_uri(self.checkpoint_s3_uri, "checkpoint.s3Uri (output CheckpointS3Uri)", where)
        if self.output_s3_uri is not None:
            _check_prefix_uri(self.output_s3_uri, "output.s3Uri (output OutputS3Uri)", where)
        if self.code_s3_uri is not None:
            _check_prefix_uri(self.code_s3_uri, "code.s3Uri (output CodeS3Uri)", where)
        if not isinstance(self.checkpoint_local_path, str) or not self.checkpoint_local_path.startswith("/"):
            raise ConfigError(f"{where}checkpoint.localPath must be an absolute path "
                              f"(SageMaker syncs {CHECKPOINT_LOCAL_PATH} by default), got {self.checkpoint_local_path!r}")
        if not isinstance(self.file_system_id, str) or not _FILE_SYSTEM_ID_RE.fullmatch(self.file_system_id):
            raise ConfigError(f"{where}fileSystem.id must be an FSx file system id (fs-<8-17 hex digits>), "
                              f"got {self.file_system_id!r}")
        if self.file_system_type != FILE_SYSTEM_TYPE:
            raise ConfigError(f"{where}fileSystem.type must be {FILE_SYSTEM_TYPE!r} (the stack provisions "
                              f"FSx for Lustre), got {self.file_system_type!r}")
        if self.file_system_access_mode not in FILE_SYSTEM_ACCESS_MODES:
            raise ConfigError(f"{where}fileSystem.accessMode must be one of {', '.join(FILE_SYSTEM_ACCESS_MODES)}, "
                              f"got {self.file_system_access_mode!r}")
        mount = self.file_system_mount_name
        if not isinstance(mount, str) or not _MOUNT_NAME_RE.fullmatch(mount):
            raise ConfigError(f"{where}fileSystem.mountName must be the Lustre mount name (letters and digits), "
                              f"got {mount!r}")
        path = self.file_system_directory_path
        if not isinstance(path, str) or not (path == f"/{mount}" or path.startswith(f"/{mount}/")) \
                or len(path) > 4096:
            raise ConfigError(f"{where}fileSystem.directoryPath must start with /{mount} (the Lustre mount name: "
                              f"SageMaker mounts /<mount name>/<path>), got {path!r}")
        efa_instance(self.instance_type, setting=f"{where}instanceType")
        count = self.instance_count
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ConfigError(f"{where}instanceCount must be a whole number >= 1, got {count!r}")
        for key in ("encryptInterContainerTraffic", "enableNetworkIsolation"):
            if key in self.extra and not isinstance(self.extra[key], bool):
                raise ConfigError(f"{where}{key} must be true or false, got {self.extra[key]!r}")
        return self

    @property
    def encrypt_inter_container_traffic(self) -> bool:
        """On unless the document says otherwise: SMDDP traffic between hosts stays encrypted
        (costs some speed; a stack can opt out with ``encryptInterContainerTraffic: false``)."""
        return bool(self.extra.get("encryptInterContainerTraffic", True))

    @property
    def enable_network_isolation(self) -> Optional[bool]:
        """Only sent when the document asks: isolation also blocks the script's own calls out."""
        value = self.extra.get("enableNetworkIsolation")
        return None if value is None else bool(value)

    def sdk_v2_kwargs(self, *, channel: str = DEFAULT_CHANNEL) -> dict[str, Any]:
        """Arguments for SDK v2: ``{"estimator": {...}, "fit": {"inputs": {...}}}``.

        Two sections because the Estimator's constructor and its ``fit`` take different
        arguments: ``PyTorch(entry_point=..., **cfg["estimator"])`` then
        ``fit(inputs={name: FileSystemInput(**args) for name, args in cfg["fit"]["inputs"].items()})``
        (JSON cannot hold a ``FileSystemInput``, and v2 refuses a plain dict per channel).

        ``debugger_hook_config=False`` always: SMDebug does not support distributed training
        with checkpointing, and v2 disables the hook by itself only when BOTH checkpoint
        arguments are given. ``distribution`` picks the SMDDP launcher for the instance family
        (:func:`v2_distribution`). ``output_path`` and ``code_location`` name the job bucket's
        prefixes the execution role can use; without them v2 writes the model and uploads the
        script to ``s3://sagemaker-<region>-<account>/``, where the role has no access.
        """
        estimator: dict[str, Any] = {
            "role": self.role_arn,
            "instance_type": self.instance_type,
            "instance_count": self.instance_count,
            "subnets": list(self.subnets),
            "security_group_ids": list(self.security_group_ids),
            "checkpoint_s3_uri": self.checkpoint_s3_uri,
            "checkpoint_local_path": self.checkpoint_local_path,
        }
        if self.output_s3_uri is not None:
            estimator["output_path"] = self.output_s3_uri
        if self.code_s3_uri is not None:
            estimator["code_location"] = self.code_s3_uri
        estimator.update({
            "debugger_hook_config": False,
            "disable_profiler": True,
            "encrypt_inter_container_traffic": self.encrypt_inter_container_traffic,
            "distribution": v2_distribution(self.instance_type),
        })
        if self.enable_network_isolation is not None:
            estimator["enable_network_isolation"] = self.enable_network_isolation
        inputs = {
            _channel(channel): {
                "file_system_id": self.file_system_id,
                "file_system_type": self.file_system_type,
                "directory_path": self.file_system_directory_path,
                "file_system_access_mode": self.file_system_access_mode,
            }
        }
        return {"estimator": estimator, "fit": {"inputs": inputs}}

    def sdk_v3_pieces(self, *, channel: str = DEFAULT_CHANNEL) -> dict[str, Any]:
        """Arguments for SDK v3 ``ModelTrainer`` and its configs in ``sagemaker.core.training.configs``.

        Field names are those of sagemaker-core's generated shapes (snake_case of the API
        members). v3 has no SMDDP distribution switch and sends no Debugger config: use
        ``Torchrun`` and let the script call ``init_process_group(backend="smddp")``.
        ``output_data_config`` (``OutputDataConfig(s3_output_path=...)``) points model
        artifacts at the prefix the role can write; v3 has no ``code_location`` (it stages
        code in the session's default bucket), so the code prefix has no piece here.
        """
        networking: dict[str, Any] = {
            "subnets": list(self.subnets),
            "security_group_ids": list(self.security_group_ids),
            "enable_inter_container_traffic_encryption": self.encrypt_inter_container_traffic,
        }
        if self.enable_network_isolation is not None:
            networking["enable_network_isolation"] = self.enable_network_isolation
        pieces: dict[str, Any] = {
            "role": self.role_arn,
            "compute": {"instance_type": self.instance_type, "instance_count": self.instance_count},
            "networking": networking,
            "checkpoint_config": {"s3_uri": self.checkpoint_s3_uri, "local_path": self.checkpoint_local_path},
        }
        if self.output_s3_uri is not None:
            pieces["output_data_config"] = {"s3_output_path": self.output_s3_uri}
        pieces.update({
            "training_input_mode": FILE_SYSTEM_INPUT_MODE,
            "input_data_config": [{
                "channel_name": _channel(channel),
                "data_source": {
                    "file_system_id": self.file_system_id,
                    "file_system_type": self.file_system_type,
                    "directory_path": self.file_system_directory_path,
                    "file_system_access_mode": self.file_system_access_mode,
                },
            }],
            "distributed": {"Torchrun": {}},
            "notes": list(SDK_V3_NOTES),
        })
        return pieces

    def create_training_job_fragment(self, *, channel: str = DEFAULT_CHANNEL) -> dict[str, Any]:
        """The CreateTrainingJob request members this network decides; add TrainingJobName,
        AlgorithmSpecification and StoppingCondition to make a request (and OutputDataConfig
        for a stack without an output prefix).

        ResourceConfig carries no VolumeSizeInGB: every EFA type in the catalog has NVMe
        instance storage, and SageMaker provisions no EBS volume for such instances.
        """
        request: dict[str, Any] = {
            "RoleArn": self.role_arn,
            "ResourceConfig": {"InstanceType": self.instance_type, "InstanceCount": self.instance_count},
            "VpcConfig": {"SecurityGroupIds": list(self.security_group_ids), "Subnets": list(self.subnets)},
            "CheckpointConfig": {"S3Uri": self.checkpoint_s3_uri, "LocalPath": self.checkpoint_local_path},
        }
        if self.output_s3_uri is not None:
            request["OutputDataConfig"] = {"S3OutputPath": self.output_s3_uri}
        request.update({
            "InputDataConfig": [{
                "ChannelName": _channel(channel),
                "DataSource": {"FileSystemDataSource": {
                    "FileSystemId": self.file_system_id,
                    "FileSystemType": self.file_system_type,
                    "FileSystemAccessMode": self.file_system_access_mode,
                    "DirectoryPath": self.file_system_directory_path,
                }},
                "InputMode": FILE_SYSTEM_INPUT_MODE,
            }],
            "EnableInterContainerTrafficEncryption": self.encrypt_inter_container_traffic,
        })
        if self.enable_network_isolation is not None:
            request["EnableNetworkIsolation"] = self.enable_network_isolation
        return request

    def render(self, fmt: str, *, channel: str = DEFAULT_CHANNEL) -> dict[str, Any]:
        """One of :data:`FORMATS` as a JSON-ready dict."""
        renderers: dict[str, Callable[..., dict[str, Any]]] = {
            "v2": self.sdk_v2_kwargs,
            "v3": self.sdk_v3_pieces,
            "boto3": self.create_training_job_fragment,
        }
        try:
            renderer = renderers[fmt]
        except KeyError:
            raise ConfigError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}") from None
        return renderer(channel=channel)

    def missing_locations_warning(self, fmt: str, *, stack: str = "stack") -> Optional[str]:
        """One line for stderr when ``fmt`` needs S3 locations this stack does not publish.

        Stacks deployed before ``OutputS3Uri``/``CodeS3Uri`` existed still render (the keys
        are left out), but the job would fail late: the SDKs then write the model and upload
        the script to their default bucket, and the execution role may use only its own job
        bucket. v2 needs both locations; v3 and boto3 only the output one (v3 has no
        code_location; boto3 sends no code).
        """
        needed = {"v2": (("OutputS3Uri", "output_path", self.output_s3_uri),
                         ("CodeS3Uri", "code_location", self.code_s3_uri)),
                  "v3": (("OutputS3Uri", "output_data_config", self.output_s3_uri),),
                  "boto3": (("OutputS3Uri", "OutputDataConfig", self.output_s3_uri),)}.get(fmt, ())
        missing = [(output, arg) for output, arg, value in needed if value is None]
        if not missing:
            return None
        outputs = "/".join(output for output, _ in missing)
        args = " and ".join(arg for _, arg in missing)
        left_out = f"{args} {'is' if len(missing) == 1 else 'are'} left out"
        if fmt == "boto3":
            consequence = (f"{left_out}; CreateTrainingJob requires one: give it a prefix the execution role "
                           "can write, or redeploy the stack")
        else:
            consequence = (f"{left_out} and the SDK will fall back to its default bucket "
                           "sagemaker-<region>-<account>, which the execution role cannot write; redeploy the "
                           f"stack or set {'it' if len(missing) == 1 else 'them'} yourself")
        return f"stack {stack!r} publishes no {outputs} (deployed before smddp-infra added them), so {consequence}"


def checkpoint_s3_uri(bucket_name: str, prefix: Optional[str]) -> str:
    """``s3://<bucket>/<prefix>/``: SageMaker treats the URI as a prefix; the slash keeps
    ``checkpoints`` from also matching ``checkpoints-old``."""
    prefix = (prefix or "").strip("/")
    return f"s3://{bucket_name}/{prefix}/" if prefix else f"s3://{bucket_name}/"


#: What a v3 user must know that the pieces cannot say.
SDK_V3_NOTES = (
    "from sagemaker.core.training.configs import Compute, Networking, CheckpointConfig, OutputDataConfig, "
    "InputData, FileSystemDataSource; from sagemaker.train import ModelTrainer; "
    "from sagemaker.train.distributed import Torchrun",
    "input_data_config: InputData(channel_name=..., data_source=FileSystemDataSource(**data_source))",
    "SMDDP in v3: distributed=Torchrun() and, in the script, "
    "import smdistributed.dataparallel.torch.torch_smddp; "
    "torch.distributed.init_process_group(backend=\"smddp\")",
    "v3 sends no Debugger hook config, so nothing needs switching off",
    "output_data_config: OutputDataConfig(**output_data_config), the prefix the execution role can write",
    "v3 has no code_location: ModelTrainer uploads source code and its drivers to the Session's default "
    "bucket, which the execution role may not read; see docs/job-config.md",
)


def v2_distribution(instance_type: str) -> dict[str, Any]:
    """The SDK v2 ``distribution`` that starts SMDDP on ``instance_type`` (a fresh dict).

    ml.p4d/ml.p4de: the ``smdistributed`` launcher (mpirun + smddprun). The p5 family:
    ``torch_distributed`` (torchrun), because SDK v2 rejects ``smdistributed`` on p5 and
    torchrun is a documented SMDDP launcher; the script selects SMDDP with
    ``backend="smddp"``. Trainium: ``torch_distributed`` is the only strategy SDK v2 allows
    there, and SMDDP itself is a GPU library (the script uses the Neuron/XLA backend).
    """
    family = instance_type.split(".")[1] if instance_type.count(".") >= 2 else instance_type
    chosen = TORCHRUN_DISTRIBUTION if family.startswith(("p5", "trn")) else SMDDP_DISTRIBUTION
    return json.loads(json.dumps(chosen))


def load_outputs_file(path: "str | Path") -> dict[str, Any]:
    """The parsed cdk-outputs.json: ``{stack name: {output name: value}}``."""
    path = Path(path)
    try:
        # utf-8-sig: cdk writes plain UTF-8, editors on Windows add a byte-order mark.
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"--outputs file {str(path)!r} does not exist "
                          "(write it with `cdk deploy --outputs-file cdk-outputs.json`)") from None
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
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"--outputs file {str(path)!r} must be a JSON object of stacks "
                          f"({{\"<StackName>\": {{\"<Output>\": \"<value>\"}}}}), got "
                          f"{'an empty object' if data == {} else type(data).__name__}")
    return data


def select_stack(outputs_by_stack: Mapping[str, Any], stack: Optional[str] = None) -> tuple[str, Mapping[str, Any]]:
    """The one stack to read: the only one in the file, or the one named by ``--stack``."""
    names = sorted(outputs_by_stack)
    if stack is not None:
        if stack not in outputs_by_stack:
            raise ConfigError(f"--stack {stack!r} is not in the outputs file; stacks: {', '.join(names)}")
        return stack, outputs_by_stack[stack]
    if len(names) > 1:
        ours = [n for n in names if isinstance(outputs_by_stack[n], Mapping)
                and (DOCUMENT_OUTPUT in outputs_by_stack[n] or "FileSystemId" in outputs_by_stack[n])]
        hint = f" (with training outputs: {', '.join(ours)})" if ours else ""
        raise ConfigError(f"the outputs file holds {len(names)} stacks, pass --stack NAME; "
                          f"stacks: {', '.join(names)}{hint}")
    return names[0], outputs_by_stack[names[0]]


def settings_from_outputs_file(path: "str | Path", *, stack: Optional[str] = None,
                               instance_type: Optional[str] = None,
                               instance_count: Optional[int] = None) -> TrainingJobSettings:
    """Read cdk-outputs.json, pick the stack and return its validated settings."""
    name, outputs = select_stack(load_outputs_file(path), stack)
    return TrainingJobSettings.from_outputs(outputs, stack=name, instance_type=instance_type,
                                            instance_count=instance_count)


def _channel(name: str) -> str:
    if not isinstance(name, str) or not _CHANNEL_RE.fullmatch(name):
        raise ConfigError(f"channel must be 1-64 letters, digits, '.', '-' or '_' (a SageMaker ChannelName), "
                          f"got {name!r}")
    return name


def _text(value: Any, *, key: str, stack: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"stack {stack!r}: output {key} must be a non-empty string, got {value!r}")
    return value.strip()


def _optional_text(outputs: Mapping[str, Any], key: str, *, stack: str) -> Optional[str]:
    """An output older stacks do not have: absent means None, present must be text."""
    return _text(outputs[key], key=key, stack=stack) if key in outputs else None


def _check_prefix_uri(uri: Any, name: str, where: str) -> None:
    """An S3 prefix ending in "/": the role's grants are on ``<prefix>/*`` and SageMaker
    treats the URI as a key prefix (``checkpoints`` would also match ``checkpoints-old/``)."""
    if not isinstance(uri, str) or not _S3_URI_RE.fullmatch(uri) or not uri.endswith("/") \
            or len(uri) > MAX_S3_URI:
        raise ConfigError(f"{where}{name} must be s3://<bucket>/<prefix>/ ending in '/' "
                          f"(at most {MAX_S3_URI} characters), got {uri!r}")


def _split_ids(value: Any, *, key: str, stack: str) -> tuple[str, ...]:
    """CDK joins list outputs with commas (``Fn::Join``); accept a JSON list too."""
    if isinstance(value, (list, tuple)):
        parts = [str(v).strip() for v in value]
    else:
        parts = [p.strip() for p in _text(value, key=key, stack=stack).split(",")]
    ids = tuple(p for p in parts if p)
    if not ids:
        raise ConfigError(f"stack {stack!r}: output {key} must list at least one id, got {value!r}")
    return ids


def _check_ids(ids: Sequence[str], name: str, pattern: "re.Pattern[str]", shape: str, most: int,
               where: str) -> None:
    if isinstance(ids, str) or not 1 <= len(ids) <= most:
        count = "a string" if isinstance(ids, str) else f"{len(ids)} entries"
        raise ConfigError(f"{where}{name} must list 1 to {most} ids (CreateTrainingJob VpcConfig limit), "
                          f"got {count}")
    for value in ids:
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise ConfigError(f"{where}{name} entries must look like {shape}, got {value!r}")
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{where}{name} must not repeat an id, got {', '.join(ids)}")


def _check_outputs_agree(settings: TrainingJobSettings, outputs: Mapping[str, Any], *, stack: str) -> None:
    """The individual outputs and the document come from the same construct; a difference
    means the file was edited or mixes two deployments."""
    pairs = {
        "TrainingSubnetIds": (lambda v: _split_ids(v, key="TrainingSubnetIds", stack=stack), settings.subnets),
        "SecurityGroupIds": (lambda v: _split_ids(v, key="SecurityGroupIds", stack=stack),
                             settings.security_group_ids),
        "RoleArn": (lambda v: _text(v, key="RoleArn", stack=stack), settings.role_arn),
        "CheckpointS3Uri": (lambda v: _text(v, key="CheckpointS3Uri", stack=stack), settings.checkpoint_s3_uri),
        "FileSystemId": (lambda v: _text(v, key="FileSystemId", stack=stack), settings.file_system_id),
        "FileSystemMountName": (lambda v: _text(v, key="FileSystemMountName", stack=stack),
                                settings.file_system_mount_name),
        "FileSystemDirectoryPath": (lambda v: _text(v, key="FileSystemDirectoryPath", stack=stack),
                                    settings.file_system_directory_path),
        "OutputS3Uri": (lambda v: _text(v, key="OutputS3Uri", stack=stack), settings.output_s3_uri),
        "CodeS3Uri": (lambda v: _text(v, key="CodeS3Uri", stack=stack), settings.code_s3_uri),
    }
    for key, (parse, expected) in pairs.items():
        if key in outputs:
            actual = parse(outputs[key])
            if actual != expected:
                said = ("nothing (it has no " + {"OutputS3Uri": "output", "CodeS3Uri": "code"}[key] + ".s3Uri)"
                        if expected is None else
                        ",".join(expected) if isinstance(expected, tuple) else repr(expected))
                raise ConfigError(f"stack {stack!r}: output {key} is {outputs[key]!r} but {DOCUMENT_OUTPUT} says "
                                  f"{said}; the outputs file mixes two deployments or was edited")
