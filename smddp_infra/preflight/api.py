"""SageMaker API JSON: a ``CreateTrainingJob`` request or a ``DescribeTrainingJob`` response.

The post-mortem path ("my job stalled at init, why?"): ``aws sagemaker describe-training-job``
prints what SageMaker really ran, whatever SDK built it. Recognised by its keys (both
documents carry ``AlgorithmSpecification`` and ``ResourceConfig``; only a response carries
``TrainingJobStatus`` / ``TrainingJobArn`` / ``CreationTime``), and read as the API means it:

* ``DebugHookConfig`` present = the Debugger is on; absent = off (the API has no default
  hook: the SDK v2 default is a ``DebugHookConfig {S3OutputPath}`` it adds to the request).
* SMDDP = hyperparameter ``sagemaker_distributed_dataparallel_enabled`` "true" (what SDK v2
  writes for ``distribution={"smdistributed": {"dataparallel": ...}}``); SDK v2 JSON-encodes
  hyperparameter values (``"\\"train.py\\""``), so they are decoded when they are JSON.
* ``sagemaker_program`` is the entry point; ``sagemaker_submit_directory`` the uploaded
  ``sourcedir.tar.gz`` (an S3 archive preflight does not download: pass the scripts).
* the framework version comes from ``AlgorithmSpecification.TrainingImage``'s tag.

The document is checked against botocore's service model when botocore is installed
(``CreateTrainingJob`` input shape for a request, ``DescribeTrainingJob`` output shape for
a response; botocore checks required keys, unknown keys and types, not enums or patterns).
botocore is not a dependency of smddp-infra (``pip install smddp-infra[api]`` adds it);
without it the report says the shape check was not evaluated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from smddp_infra.preflight.job import JobDescription, framework_from_image

CREATE = "create_training_job"
DESCRIBE = "describe_training_job"
_RESPONSE_ONLY = ("TrainingJobStatus", "TrainingJobArn", "CreationTime", "SecondaryStatus", "ModelArtifacts")
#: SDK v2 ``_distribution_configuration`` puts this key in the hyperparameters, which SageMaker
#: passes to the container in ``SM_FRAMEWORK_PARAMS``; transformers' ``is_sagemaker_dp_enabled()``
#: reads it there (and needs ``smdistributed`` importable, which the smddprun launcher needs too).
SMDDP_HYPERPARAMETER = "sagemaker_distributed_dataparallel_enabled"


@dataclass(frozen=True)
class ShapeProblem:
    """One thing botocore's validator reports, in its words."""

    message: str


_REQUEST_MEMBERS = frozenset({
    "AlgorithmSpecification", "ResourceConfig", "VpcConfig", "CheckpointConfig", "InputDataConfig",
    "HyperParameters", "DebugHookConfig", "RoleArn", "OutputDataConfig", "TrainingJobName", "StoppingCondition",
})


def api_kind(document: Any) -> Optional[str]:
    """CREATE / DESCRIBE, or None for a job file (whose keys are snake_case SDK arguments).

    A document whose keys are all API members (PascalCase) is API JSON even without
    ``AlgorithmSpecification``: ``smddp-infra job-config --format boto3`` prints such a
    fragment of a ``CreateTrainingJob`` request, to be merged into a full one."""
    if not isinstance(document, Mapping) or not document:
        return None
    if "AlgorithmSpecification" in document and "ResourceConfig" in document:
        return DESCRIBE if any(k in document for k in _RESPONSE_ONLY) else CREATE
    keys = [k for k in document if k != "ResponseMetadata"]
    if keys and all(isinstance(k, str) and k[:1].isupper() for k in keys) and _REQUEST_MEMBERS & set(keys):
        return DESCRIBE if any(k in document for k in _RESPONSE_ONLY) else CREATE
    return None


def is_fragment(document: Mapping[str, Any]) -> bool:
    """A request without the members every CreateTrainingJob has (a job-config fragment)."""
    return not {"AlgorithmSpecification", "TrainingJobName"} <= set(document)


def hyperparameter(document: Mapping[str, Any], name: str) -> Any:
    values = document.get("HyperParameters") or {}
    if not isinstance(values, Mapping) or name not in values:
        return None
    raw = values[name]
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:  # not JSON (or an int past Python's 4,300 digits): the text as written
            return raw
    return raw


def job_from_api(document: Mapping[str, Any], *, path: Path, kind: str) -> JobDescription:
    resource, checkpoint = _section(document, "ResourceConfig"), _section(document, "CheckpointConfig")
    vpc, algorithm = _section(document, "VpcConfig"), _section(document, "AlgorithmSpecification")
    unknown: dict[str, str] = {}
    instance_type = resource.get("InstanceType") if isinstance(resource.get("InstanceType"), str) else None
    instance_count = resource.get("InstanceCount") if isinstance(resource.get("InstanceCount"), int) else None
    if instance_type is None and resource.get("InstanceGroups"):
        unknown["instance_type"] = "ResourceConfig.InstanceGroups is used (heterogeneous cluster)"
    smddp = hyperparameter(document, SMDDP_HYPERPARAMETER)
    smddp_on = smddp is True or (isinstance(smddp, str) and smddp.lower() == "true")
    program = hyperparameter(document, "sagemaker_program")
    submit = hyperparameter(document, "sagemaker_submit_directory")
    image = algorithm.get("TrainingImage")
    region = None
    arn = document.get("TrainingJobArn")
    if isinstance(arn, str) and arn.count(":") >= 4:
        region = arn.split(":")[3] or None
    elif isinstance(image, str) and ".dkr.ecr." in image:
        region = image.split(".dkr.ecr.", 1)[1].split(".", 1)[0] or None
    subnets = vpc.get("Subnets")
    s3_uri = checkpoint.get("S3Uri") if isinstance(checkpoint.get("S3Uri"), str) else None
    local = checkpoint.get("LocalPath") if isinstance(checkpoint.get("LocalPath"), str) and checkpoint.get("LocalPath") else None
    name = document.get("TrainingJobName")
    return JobDescription(
        path=path,
        shape="api",
        estimator="CreateTrainingJob",
        entry_point=program if isinstance(program, str) and program else None,
        source_dir=submit if isinstance(submit, str) and submit else None,
        instance_type=instance_type,
        instance_count=instance_count,
        checkpoint_s3_uri=s3_uri if s3_uri and s3_uri.startswith("s3://") else None,
        checkpoint_local_path=local,
        debugger_hook="configured" if document.get("DebugHookConfig") else "false",
        region=region,
        subnets=tuple(s for s in subnets if isinstance(s, str)) if isinstance(subnets, list) else (),
        kind=kind,
        label=f"training job {name}" if isinstance(name, str) else None,
        unknown=unknown,
        smddp_setting=f'HyperParameters.{SMDDP_HYPERPARAMETER}="{str(smddp).lower()}"' if smddp_on else None,
        framework=framework_from_image(image) if isinstance(image, str) else None,
        base_dir=path.parent,
        hyperparameters=_user_hyperparameters(document),
    )


def _user_hyperparameters(document: Mapping[str, Any]) -> dict[str, Any]:
    """The hyperparameters the script receives (SDK v2 JSON-encodes each value)."""
    values = document.get("HyperParameters") or {}
    if not isinstance(values, Mapping):
        return {}
    return {k: hyperparameter(document, k) for k in values if isinstance(k, str) and not k.startswith("sagemaker_")}


def _section(document: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = document.get(key)
    return value if isinstance(value, Mapping) else {}


def shape_problems(document: Mapping[str, Any], kind: str) -> Optional[tuple[ShapeProblem, ...]]:
    """botocore's findings on the document, or None when botocore is not installed."""
    from smddp_infra.facts.service_models import service_model

    model = service_model("sagemaker")
    if model is None:
        return None
    from botocore.validate import ParamValidator
    if kind == CREATE:
        shape = model.operation_model("CreateTrainingJob").input_shape
    else:
        shape = model.operation_model("DescribeTrainingJob").output_shape
    params = {k: v for k, v in document.items() if k != "ResponseMetadata"}
    report = ParamValidator().validate(params, shape)
    if not report.has_errors():
        return ()
    lines = [line.strip() for line in report.generate_report().splitlines() if line.strip()]
    if kind == DESCRIBE or is_fragment(document):
        # A response of a job still running lacks ModelArtifacts, TrainingEndTime...; a fragment
        # lacks what it will be merged with: neither is a problem.
        lines = [line for line in lines if not line.startswith("Missing required parameter")]
    return tuple(ShapeProblem(line) for line in lines)
