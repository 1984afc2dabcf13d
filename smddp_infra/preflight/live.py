"""A live SDK object as a :class:`JobDescription`: attributes only, no AWS calls.

SDK v2 estimators keep their constructor arguments as attributes (``est.instance_type``,
``est.checkpoint_s3_uri``, ``est.debugger_hook_config`` -- ``None`` until ``fit()`` adds the
default hook, which the rule reads as "default hook on"). ``ModelTrainer`` keeps its pydantic
config objects (``trainer.compute.instance_type``...). The SDK is never imported here: the
object's class name and module say what it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from smddp_infra.preflight.errors import PreflightInputError
from smddp_infra.preflight.extract import V2_ESTIMATORS
from smddp_infra.preflight.job import JobDescription, debugger_hook_state, framework_from_image


def job_from_object(obj: Any) -> JobDescription:
    cls = type(obj).__name__
    module = type(obj).__module__ or ""
    if not module.startswith("sagemaker"):
        raise PreflightInputError(
            f"check_estimator() takes a SageMaker SDK estimator or ModelTrainer, got {module}.{cls}")
    if cls == "ModelTrainer":
        return _trainer(obj)
    if cls in V2_ESTIMATORS or hasattr(obj, "debugger_hook_config"):
        return _estimator(obj, cls)
    raise PreflightInputError(f"check_estimator() takes a SageMaker SDK estimator or ModelTrainer, got {module}.{cls}")


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) and value else None


def _estimator(obj: Any, cls: str) -> JobDescription:
    source_dir = _text(getattr(obj, "source_dir", None))
    image = _text(getattr(obj, "image_uri", None))
    version = _text(getattr(obj, "framework_version", None))
    framework = framework_from_image(image) if image else (cls.lower(), version) if version and cls in ("PyTorch", "TensorFlow", "MXNet") else None
    subnets = getattr(obj, "subnets", None) or []
    distribution = getattr(obj, "distribution", None)
    count = getattr(obj, "instance_count", None)
    return JobDescription(
        path=Path(source_dir or ".") / (_text(getattr(obj, "entry_point", None)) or "estimator"),
        shape="estimator",
        estimator=cls,
        entry_point=_text(getattr(obj, "entry_point", None)),
        source_dir=source_dir,
        instance_type=_text(getattr(obj, "instance_type", None)),
        instance_count=count if isinstance(count, int) and not isinstance(count, bool) else None,
        distribution=distribution if isinstance(distribution, dict) else None,
        checkpoint_s3_uri=_text(getattr(obj, "checkpoint_s3_uri", None)),
        checkpoint_local_path=_text(getattr(obj, "checkpoint_local_path", None)),
        debugger_hook=debugger_hook_state(getattr(obj, "debugger_hook_config", None)),
        subnets=tuple(s for s in subnets if isinstance(s, str)),
        kind="live",
        label=f"{cls} object",
        framework=framework,
        base_dir=Path.cwd(),
        hyperparameters=_mapping(getattr(obj, "_hyperparameters", None) or getattr(obj, "hyperparameters", None)),
        environment=_mapping(getattr(obj, "environment", None)),
        git_config=bool(getattr(obj, "git_config", None)),
    )


def _trainer(obj: Any) -> JobDescription:
    compute = getattr(obj, "compute", None)
    source = getattr(obj, "source_code", None)
    checkpoint = getattr(obj, "checkpoint_config", None)
    networking = getattr(obj, "networking", None)
    count = getattr(compute, "instance_count", None)
    image = _text(getattr(obj, "training_image", None))
    source_dir = _text(getattr(source, "source_dir", None))
    return JobDescription(
        path=Path(source_dir or ".") / "ModelTrainer",
        shape="model_trainer",
        estimator="ModelTrainer",
        entry_point=_text(getattr(source, "entry_script", None)),
        source_dir=source_dir,
        command=_text(getattr(source, "command", None)),
        instance_type=_text(getattr(compute, "instance_type", None)),
        instance_count=count if isinstance(count, int) and not isinstance(count, bool) else None,
        checkpoint_s3_uri=_text(getattr(checkpoint, "s3_uri", None)),
        checkpoint_local_path=_text(getattr(checkpoint, "local_path", None)),
        debugger_hook="false",
        subnets=tuple(s for s in (getattr(networking, "subnets", None) or []) if isinstance(s, str)),
        kind="live",
        label="ModelTrainer object",
        framework=framework_from_image(image) if image else None,
        base_dir=Path.cwd(),
        hyperparameters=_mapping(getattr(obj, "hyperparameters", None)),
        environment=_mapping(getattr(obj, "environment", None)),
        distributed=type(getattr(obj, "distributed", None)).__name__ if getattr(obj, "distributed", None) is not None else None,
        stopping_condition=getattr(obj, "stopping_condition", None) is not None,
    )


def _mapping(value: Any) -> dict[str, Any]:
    return {k: v for k, v in value.items() if isinstance(k, str)} if isinstance(value, dict) else {}
