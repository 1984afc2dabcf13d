"""Job document -> SDK v2 Estimator arguments, SDK v3 ModelTrainer pieces, boto3 fragment.

One function per format over a validated :class:`~smddp_infra.contract.JobDocument`. The
launcher follows the instance family (:func:`launcher_for`): SMDDP only where SMDDP runs
(ml.p4d / ml.p4de); NCCL through torchrun on the same EFA network elsewhere.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional

from smddp_infra.contract import MAX_RUNTIME_LIMIT_SECONDS, SDK_V3_DEFAULT_MAX_RUNTIME, JobDocument
from smddp_infra.errors import ConfigError
from smddp_infra.jobconfig.hyperpod import hyperpod_settings
from smddp_infra.jobconfig.launcher import launcher_for

#: The channel name the FSx input is offered under (``/opt/ml/input/data/training``,
#: ``SM_CHANNEL_TRAINING`` inside the container).
DEFAULT_CHANNEL = "training"
#: File systems are mounted on the training instances, not copied or streamed: SageMaker's
#: SDKs send ``File`` for a FileSystemDataSource channel (Pipe and FastFile are S3 modes).
FILE_SYSTEM_INPUT_MODE = "File"
#: The job-config output formats and what each one is for.
FORMATS = {
    "v2": "SageMaker Python SDK v2: {\"estimator\": PyTorch keyword arguments, \"fit\": {\"inputs\": "
          "FileSystemInput arguments per channel}, \"notes\": [...]}",
    "v3": "SageMaker Python SDK v3 ModelTrainer pieces (Compute, Networking, CheckpointConfig, "
          "OutputDataConfig, InputData, Session)",
    "boto3": "CreateTrainingJob request fragment (VpcConfig, CheckpointConfig, OutputDataConfig, "
             "InputDataConfig, ...)",
    "hyperpod": "a Slurm job on the network's HyperPod cluster: mount path, data path, checkpoint prefix, "
                "launcher (torchrun + backend per instance family)",
}
_CHANNEL_RE = re.compile(r"[A-Za-z0-9.\-_]{1,64}")


def v2_distribution(instance_type: str) -> dict[str, Any]:
    """The SDK v2 ``distribution`` for ``instance_type`` (a fresh dict)."""
    chosen: dict[str, Any] = json.loads(json.dumps(launcher_for(instance_type).v2_distribution))
    return chosen


def sdk_v2_kwargs(doc: JobDocument, *, channel: str = DEFAULT_CHANNEL) -> dict[str, Any]:
    """Arguments for SDK v2: ``{"estimator": {...}, "fit": {"inputs": {...}}, "notes": [...]}``.

    Two sections because the Estimator's constructor and its ``fit`` take different
    arguments: ``PyTorch(entry_point=..., **cfg["estimator"])`` then
    ``fit(inputs={name: FileSystemInput(**args) for name, args in cfg["fit"]["inputs"].items()})``
    (JSON cannot hold a ``FileSystemInput``, and v2 refuses a plain dict per channel).

    ``debugger_hook_config=False`` always: SMDebug does not support distributed training
    with checkpointing, and v2 disables the hook by itself only when BOTH checkpoint
    arguments are given. ``output_path`` and ``code_location`` name the job bucket's
    prefixes the execution role can use; without them v2 writes the model and uploads the
    script to ``s3://sagemaker-<region>-<account>/``, where the role has no access.
    """
    launcher = launcher_for(doc.instance_type)
    estimator: dict[str, Any] = {
        "role": doc.role_arn,
        "instance_type": doc.instance_type,
        "instance_count": doc.instance_count,
        "max_run": doc.max_runtime,
        "subnets": list(doc.subnets),
        "security_group_ids": list(doc.security_group_ids),
        "checkpoint_s3_uri": doc.checkpoint_s3_uri,
        "checkpoint_local_path": doc.checkpoint_local_path,
    }
    if doc.training_plan_arn is not None:
        estimator["training_plan"] = doc.training_plan_arn
    if doc.output_s3_uri is not None:
        estimator["output_path"] = doc.output_s3_uri
    if doc.code_s3_uri is not None:
        estimator["code_location"] = doc.code_s3_uri
    estimator.update({
        "debugger_hook_config": False,
        "disable_profiler": True,
        "encrypt_inter_container_traffic": doc.encrypt_inter_container_traffic,
        "distribution": v2_distribution(doc.instance_type),
    })
    if doc.enable_network_isolation is not None:
        estimator["enable_network_isolation"] = doc.enable_network_isolation
    inputs = {_channel(channel): _file_system_source(doc)}
    return {"estimator": estimator, "fit": {"inputs": inputs},
            "notes": [launcher.reason, runtime_note(doc), icte_note(doc), *plan_notes(doc)]}


def sdk_v3_pieces(doc: JobDocument, *, channel: str = DEFAULT_CHANNEL) -> dict[str, Any]:
    """Arguments for SDK v3 ``ModelTrainer`` and its configs in ``sagemaker.core.training.configs``.

    Field names are those of sagemaker-core's generated shapes (snake_case of the API
    members). v3 has no SMDDP distribution switch and sends no Debugger config: ``distributed``
    names the launcher class (``Torchrun``) and the script picks the backend (:func:`launcher_for`).
    ``output_data_config`` points model artifacts at the prefix the role can write.

    ``session`` (``Session(boto_session=..., **cfg["session"])``): v3 has no ``code_location``;
    ModelTrainer stages the source and its drivers (channels ``code`` and ``sm_drivers``) at
    ``s3://<default_bucket>/<default_bucket_prefix>/<base job name>/<job>/input/...``, so the
    session's bucket and prefix are the network's CodeS3Uri, which the role may read. When the
    launching identity may call iam:SimulatePrincipalPolicy, sagemaker-train 1.27 asks whether
    the ROLE can write the whole bucket and, as it cannot, stages under the output prefix
    instead (``<OutputS3Uri><code prefix>/...``); the execution role reads that path too.
    """
    launcher = launcher_for(doc.instance_type)
    networking: dict[str, Any] = {
        "subnets": list(doc.subnets),
        "security_group_ids": list(doc.security_group_ids),
        "enable_inter_container_traffic_encryption": doc.encrypt_inter_container_traffic,
    }
    if doc.enable_network_isolation is not None:
        networking["enable_network_isolation"] = doc.enable_network_isolation
    compute: dict[str, Any] = {"instance_type": doc.instance_type, "instance_count": doc.instance_count}
    if doc.training_plan_arn is not None:
        compute["training_plan_arn"] = doc.training_plan_arn
    pieces: dict[str, Any] = {
        "role": doc.role_arn,
        "compute": compute,
        "stopping_condition": {"max_runtime_in_seconds": doc.max_runtime},
        "networking": networking,
        "checkpoint_config": {"s3_uri": doc.checkpoint_s3_uri, "local_path": doc.checkpoint_local_path},
    }
    if doc.output_s3_uri is not None:
        pieces["output_data_config"] = {"s3_output_path": doc.output_s3_uri}
    if doc.code_s3_uri is not None:
        pieces["session"] = v3_session(doc.code_s3_uri)
    pieces.update({
        "training_input_mode": FILE_SYSTEM_INPUT_MODE,
        "input_data_config": [{
            "channel_name": _channel(channel),
            "data_source": _file_system_source(doc),
        }],
        "distributed": {launcher.v3_distributed: {}},
        "notes": [*SDK_V3_NOTES, launcher.reason, runtime_note(doc, sdk_default=SDK_V3_DEFAULT_MAX_RUNTIME),
                  icte_note(doc), *plan_notes(doc)],
    })
    return pieces


def _file_system_source(doc: JobDocument) -> dict[str, Any]:
    """The FSx channel in both SDKs' snake_case (v2 ``FileSystemInput`` arguments, v3
    ``FileSystemDataSource`` fields: the same four names)."""
    fs = doc.file_system
    return {"file_system_id": fs.id, "file_system_type": fs.type, "directory_path": fs.directory_path,
            "file_system_access_mode": fs.access_mode}


def v3_session(code_s3_uri: str) -> dict[str, Any]:
    """``Session`` arguments that stage ModelTrainer's uploads under ``code_s3_uri``
    (``s3://bucket/code/`` -> ``{"default_bucket": "bucket", "default_bucket_prefix": "code"}``;
    no prefix -> ``None``, the SDK's "no prefix")."""
    bucket, _, prefix = code_s3_uri.removeprefix("s3://").partition("/")
    return {"default_bucket": bucket, "default_bucket_prefix": prefix.strip("/") or None}


def create_training_job_fragment(doc: JobDocument, *, channel: str = DEFAULT_CHANNEL) -> dict[str, Any]:
    """The CreateTrainingJob request members this network decides; add TrainingJobName and
    AlgorithmSpecification to make a request (and OutputDataConfig for a stack without an
    output prefix). StoppingCondition is emitted: the API's own default is 1 day, and a
    request that states it means the same job under every format.

    ResourceConfig carries no VolumeSizeInGB: every EFA type in the catalog has NVMe
    instance storage, and SageMaker provisions no EBS volume for such instances.
    """
    fs = doc.file_system
    resources: dict[str, Any] = {"InstanceType": doc.instance_type, "InstanceCount": doc.instance_count}
    if doc.training_plan_arn is not None:
        resources["TrainingPlanArn"] = doc.training_plan_arn
    request: dict[str, Any] = {
        "RoleArn": doc.role_arn,
        "ResourceConfig": resources,
        "StoppingCondition": {"MaxRuntimeInSeconds": doc.max_runtime},
        "VpcConfig": {"SecurityGroupIds": list(doc.security_group_ids), "Subnets": list(doc.subnets)},
        "CheckpointConfig": {"S3Uri": doc.checkpoint_s3_uri, "LocalPath": doc.checkpoint_local_path},
    }
    if doc.output_s3_uri is not None:
        request["OutputDataConfig"] = {"S3OutputPath": doc.output_s3_uri}
    request.update({
        "InputDataConfig": [{
            "ChannelName": _channel(channel),
            "DataSource": {"FileSystemDataSource": {
                "FileSystemId": fs.id,
                "FileSystemType": fs.type,
                "FileSystemAccessMode": fs.access_mode,
                "DirectoryPath": fs.directory_path,
            }},
            "InputMode": FILE_SYSTEM_INPUT_MODE,
        }],
        "EnableInterContainerTrafficEncryption": doc.encrypt_inter_container_traffic,
    })
    if doc.enable_network_isolation is not None:
        request["EnableNetworkIsolation"] = doc.enable_network_isolation
    return request


_RENDERERS: dict[str, Callable[..., dict[str, Any]]] = {
    "v2": sdk_v2_kwargs,
    "v3": sdk_v3_pieces,
    "boto3": create_training_job_fragment,
    "hyperpod": hyperpod_settings,
}


def render(doc: JobDocument, fmt: str, *, channel: str = DEFAULT_CHANNEL, cluster: Any = None) -> dict[str, Any]:
    """One of :data:`FORMATS` as a JSON-ready dict. ``cluster``: the HyperPod cluster the job runs
    on (:class:`~smddp_infra.hyperpod.template.ClusterView`), ``hyperpod`` only."""
    try:
        renderer = _RENDERERS[fmt]
    except KeyError:
        raise ConfigError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}") from None
    if cluster is not None:
        if fmt != "hyperpod":
            raise ConfigError(f"--cluster-template is for --format hyperpod (a job on the cluster), got --format {fmt}")
        return hyperpod_settings(doc, channel=channel, cluster=cluster)
    return renderer(doc, channel=channel)


def missing_locations_warning(doc: JobDocument, fmt: str, *, where: str = "stack 'stack'") -> Optional[str]:
    """One line for stderr when ``fmt`` needs S3 locations this stack does not publish.

    Stacks deployed before ``OutputS3Uri``/``CodeS3Uri`` existed still render (the keys
    are left out), but the job would fail late: the SDKs then write the model and upload
    the script to their default bucket, and the execution role may use only its own job
    bucket. v2 and v3 need both locations (v3 stages code through ``session``); boto3 only the
    output one.
    """
    needed = {"v2": (("OutputS3Uri", "output_path", doc.output_s3_uri),
                     ("CodeS3Uri", "code_location", doc.code_s3_uri)),
              "v3": (("OutputS3Uri", "output_data_config", doc.output_s3_uri),
                     ("CodeS3Uri", "session", doc.code_s3_uri)),
              "boto3": (("OutputS3Uri", "OutputDataConfig", doc.output_s3_uri),)}.get(fmt, ())
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
    return f"{where} publishes no {outputs} (deployed before smddp-infra added them), so {consequence}"


#: What a v3 user must know that the pieces cannot say.
SDK_V3_NOTES = (
    "from sagemaker.core.training.configs import Compute, Networking, CheckpointConfig, OutputDataConfig, "
    "StoppingCondition, InputData, FileSystemDataSource; from sagemaker.train import ModelTrainer; "
    "from sagemaker.train.distributed import Torchrun",
    "input_data_config: InputData(channel_name=..., data_source=FileSystemDataSource(**data_source))",
    "distributed: Torchrun() (the key names the class in sagemaker.train.distributed)",
    "stopping_condition: StoppingCondition(**stopping_condition); without it ModelTrainer sends its own "
    "default, 3600 s",
    "v3 sends no Debugger hook config, so nothing needs switching off",
    "output_data_config: OutputDataConfig(**output_data_config), the prefix the execution role can write",
    "session: Session(boto_session=..., **session) from sagemaker.core.helper.session_helper, passed as "
    "ModelTrainer(sagemaker_session=...): v3 has no code_location, it stages the source and its drivers "
    "(channels code, sm_drivers) in the session's bucket under default_bucket_prefix, the code prefix the "
    "execution role reads (callers allowed iam:SimulatePrincipalPolicy get <output prefix>/<code prefix>/, "
    "which the role reads too); see docs/job-config.md",
)

def runtime_note(doc: JobDocument, *, sdk_default: Optional[int] = None) -> str:
    """The maximum runtime, stated where it is emitted (and the SDK's default it replaces)."""
    seconds = doc.max_runtime
    days, rest = divmod(seconds, 86400)
    hours = f"{days} day{'s' if days > 1 else ''}" if days and not rest else f"{seconds / 3600:g} h"
    source = ("set by the network's max_runtime_seconds or --max-runtime-seconds" if doc.max_runtime_seconds is not None
              else "smddp-infra's default, the same as CreateTrainingJob's and SDK v2's")
    instead = f", instead of the SDK's own {sdk_default} s" if sdk_default is not None else ""
    return (f"maximum runtime {seconds:,} s ({hours}; {source}{instead}): SageMaker then stops the job "
            f"(SIGTERM, 120 s to save a checkpoint); change it with --max-runtime-seconds, at most "
            f"{MAX_RUNTIME_LIMIT_SECONDS:,} s (28 days)")


def icte_note(doc: JobDocument) -> str:
    """The inter-container traffic encryption trade-off, stated where the flag is emitted."""
    state = "on" if doc.encrypt_inter_container_traffic else "off"
    return (f"inter-container traffic encryption is {state} (the network's setting "
            "encrypt_inter_container_traffic): SageMaker encrypts the IP traffic between the job's instances "
            "(IPsec: UDP 500 + ESP, admitted by the EFA group's all-traffic self rules), which can slow "
            "IP-heavy jobs; see docs/job-config.md for what it covers on EFA")


def plan_notes(doc: JobDocument) -> list[str]:
    """What a training plan changes for the job, stated where the plan is emitted (none without one)."""
    if doc.training_plan_arn is None:
        return []
    return [f"training plan {doc.training_plan_arn}: the job runs on the plan's reserved capacity; it waits in "
            "Pending until the plan is Active and has capacity, and time before the plan starts or between "
            "two of its reservations does not count against MaxPendingTimeInSeconds (botocore's "
            "StoppingCondition); the plan must target training jobs and hold this instance type, in the "
            "training subnet's AZ; see docs/job-config.md for instance_count and the maximum runtime"]


def _channel(name: str) -> str:
    if not isinstance(name, str) or not _CHANNEL_RE.fullmatch(name):
        raise ConfigError(f"channel must be 1-64 letters, digits, '.', '-' or '_' (a SageMaker ChannelName), "
                          f"got {name!r}")
    return name
