"""The keys a job file may hold, and the nearest known key for one it should not.

Why preflight cares: SDK v2 estimators take ``**kwargs`` and silently drop any they do not
know (sagemaker 2.257 ``EstimatorBase.__init__`` only maps the old ``train_*`` names), and
preflight reads only the keys it knows. So ``dataset_size: 1001`` instead of
``num_samples`` skips PF-UNEVEN-BATCHES without a word, and the job hangs at the end of
training anyway. (ModelTrainer is a pydantic model with ``extra="forbid"``: the SDK
rejects an unknown key there, but only at submission.)

The SDK names are static tuples, not read from ``sagemaker`` at run time: the SDK is not a
runtime dependency of preflight (it runs in CI without it). tests/test_preflight.py compares
the v2 names with the installed SDK v2 (sagemaker 2.257.7), tests/test_sagemaker_sdk_v3.py the
v3 names with SDK v3 in .venv-sdkv3 (sagemaker-train 1.27.0), so they cannot drift silently.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

#: Parameters of ``__init__`` of sagemaker 2.257.7 ``estimator.EstimatorBase``, ``Framework``,
#: ``Estimator`` and of the framework estimators a job file may name with ``estimator``:
#: ``pytorch.PyTorch``, ``tensorflow.TensorFlow``, ``mxnet.MXNet``, ``huggingface.HuggingFace``.
SDK_V2_ESTIMATOR_ARGS = (
    "base_job_name", "checkpoint_local_path", "checkpoint_s3_uri", "code_location",
    "compiler_config", "container_arguments", "container_entry_point", "container_log_level",
    "debugger_hook_config", "dependencies", "disable_output_compression", "disable_profiler",
    "distribution", "enable_infra_check", "enable_network_isolation", "enable_remote_debug",
    "enable_sagemaker_metrics", "enable_session_tag_chaining",
    "encrypt_inter_container_traffic", "entry_point", "environment", "framework_version",
    "git_config", "hyperparameters", "image_uri", "input_mode", "instance_count",
    "instance_groups", "instance_placement_config", "instance_type",
    "keep_alive_period_in_seconds", "max_retry_attempts", "max_run", "max_wait",
    "metric_definitions", "model_channel_name", "model_dir", "model_uri", "output_kms_key",
    "output_path", "profiler_config", "py_version", "pytorch_version", "recipe_overrides",
    "role", "rules", "sagemaker_session", "security_group_ids", "source_dir", "subnets", "tags",
    "tensorboard_output_config", "tensorflow_version", "training_plan", "training_recipe",
    "training_repository_access_mode", "training_repository_credentials_provider_arn",
    "transformers_version", "use_spot_instances", "volume_kms_key", "volume_size",
)

#: Parameters of sagemaker 2.257.7 ``EstimatorBase.fit`` (``inputs`` is what
#: ``smddp-infra job-config --format v2`` writes for the FSx channel).
SDK_V2_FIT_ARGS = ("experiment_config", "inputs", "job_name", "logs", "wait")

#: Fields of sagemaker 2.257.7 ``sagemaker.modules.train.ModelTrainer`` (SDK v2's preview of
#: the class SDK v3 ships); tests/test_preflight.py compares them with the installed v2.
SDK_V2_MODEL_TRAINER_ARGS = (
    "algorithm_name", "base_job_name", "checkpoint_config", "compute", "distributed",
    "environment", "hyperparameters", "input_data_config", "local_container_root", "networking",
    "output_data_config", "role", "sagemaker_session", "source_code", "stopping_condition",
    "tags", "training_image", "training_image_config", "training_input_mode", "training_mode",
)

#: Fields of the sagemaker 2.257.7 ``sagemaker.modules.configs`` models behind the four
#: ModelTrainer sections preflight reads.
SDK_V2_MODEL_TRAINER_SECTIONS: Mapping[str, tuple[str, ...]] = {
    "compute": (
        "enable_managed_spot_training", "instance_count", "instance_groups",
        "instance_placement_config", "instance_type", "keep_alive_period_in_seconds",
        "training_plan_arn", "volume_kms_key_id", "volume_size_in_gb",
    ),
    "source_code": ("command", "entry_script", "ignore_patterns", "requirements", "source_dir"),
    "checkpoint_config": ("local_path", "s3_uri"),
    "networking": (
        "enable_inter_container_traffic_encryption", "enable_network_isolation",
        "security_group_ids", "subnets",
    ),
}

#: Fields of SDK v3's ``sagemaker.train.ModelTrainer`` (sagemaker-train 1.27.0). The v3 SDK
#: lives in its own venv (.venv-sdkv3: it owns the ``sagemaker`` import name too);
#: tests/test_sagemaker_sdk_v3.py compares these with the installed v3 there.
SDK_V3_MODEL_TRAINER_ARGS = (
    "algorithm_name", "base_job_name", "checkpoint_config", "compute", "config_mgr",
    "distributed", "environment", "hyperparameters", "input_data_config", "input_s3_key_prefix",
    "local_container_root", "model_package_config", "networking", "output_data_config", "role",
    "sagemaker_session", "source_code", "stopping_condition", "tags", "training_image",
    "training_image_config", "training_input_mode", "training_mode",
)

#: Fields of the sagemaker-train 1.27.0 ``sagemaker.core.training.configs`` models behind the
#: same four sections.
SDK_V3_MODEL_TRAINER_SECTIONS: Mapping[str, tuple[str, ...]] = {
    "compute": (
        "enable_managed_spot_training", "instance_count", "instance_groups",
        "instance_placement_config", "instance_preferences", "instance_type",
        "keep_alive_period_in_seconds", "selected_instance_count", "selected_instance_type",
        "training_plan_arn", "volume_kms_key_id", "volume_size_in_gb",
    ),
    "source_code": ("args", "command", "entry_script", "ignore_patterns", "requirements", "source_dir"),
    "checkpoint_config": ("local_path", "s3_uri"),
    "networking": (
        "enable_inter_container_traffic_encryption", "enable_network_isolation",
        "security_group_ids", "subnets",
    ),
}

#: What preflight accepts in a ModelTrainer-shaped file: a name either SDK knows (a v3 user's
#: ``input_s3_key_prefix`` and a v2 user's file are both fine).
MODEL_TRAINER_ARGS = tuple(sorted(set(SDK_V2_MODEL_TRAINER_ARGS) | set(SDK_V3_MODEL_TRAINER_ARGS)))
#: ``ModelTrainer.from_recipe`` (sagemaker-train 1.27.0): the recipe and its overrides, then the
#: constructor's settings it passes on (source_code, training_image and distributed come from the recipe).
FROM_RECIPE_ARGS = tuple(sorted({"training_recipe", "recipe_overrides", "requirements", "training_image",
                                 *(set(MODEL_TRAINER_ARGS) - {"source_code", "distributed", "algorithm_name"})}))
MODEL_TRAINER_SECTIONS: Mapping[str, tuple[str, ...]] = {
    section: tuple(sorted(set(SDK_V2_MODEL_TRAINER_SECTIONS[section]) | set(SDK_V3_MODEL_TRAINER_SECTIONS[section])))
    for section in SDK_V2_MODEL_TRAINER_SECTIONS
}

#: Facts preflight reads that are not SDK arguments (see :mod:`.job`).
PREFLIGHT_KEYS = (
    "batch_size", "drop_last", "estimator", "num_samples", "region", "sharding",
    "subnet_availability_zones", "world_size",
)

#: Keys ``smddp-infra job-config`` writes that are neither SDK arguments nor preflight facts
#: (``--format v3`` adds ``notes``: how to build the SDK objects, and ``session``: the
#: ``Session`` arguments that stage code under the code prefix).
JOB_CONFIG_KEYS = ("notes", "session")

#: Names people use for the facts preflight counts with. Spelling similarity cannot see
#: that ``dataset_size`` means ``num_samples``; this short table can.
SYNONYMS: Mapping[str, str] = {
    "dataset_size": "num_samples",
    "dataset_length": "num_samples",
    "dataset_len": "num_samples",
    "num_examples": "num_samples",
    "n_samples": "num_samples",
    "samples": "num_samples",
    "per_device_batch_size": "batch_size",
    "per_device_train_batch_size": "batch_size",
    "batch_size_per_gpu": "batch_size",
    "micro_batch_size": "batch_size",
    "num_gpus": "world_size",
    "num_processes": "world_size",
    "nprocs": "world_size",
    "n_ranks": "world_size",
}


@dataclass(frozen=True)
class UnknownKey:
    """A key neither preflight nor the SDK knows, as written (``compute.instance_cont`` for a
    section key), with the nearest known key, if any."""

    key: str
    suggestion: Optional[str]
    #: why the key has no effect, when it is more than a misspelling (``job_name`` given to
    #: the constructor belongs to ``fit()``)
    note: Optional[str] = None


def unknown_keys(doc: Mapping[str, Any], *, model_trainer: Optional[bool]) -> tuple[UnknownKey, ...]:
    """Every key of ``doc`` (and of the ModelTrainer sections preflight reads) that is not known.

    ``model_trainer``: True / False for a file in that shape; None when its keys do not say
    (then the names of both shapes are accepted).
    """
    v2 = (*SDK_V2_ESTIMATOR_ARGS, *SDK_V2_FIT_ARGS)
    top = {True: MODEL_TRAINER_ARGS, False: v2, None: (*v2, *MODEL_TRAINER_ARGS)}[model_trainer]
    found = list(_unknown(doc, (*top, *PREFLIGHT_KEYS, *JOB_CONFIG_KEYS), prefix="", synonyms=True))
    if model_trainer:
        for section, fields in MODEL_TRAINER_SECTIONS.items():
            value = doc.get(section)
            if isinstance(value, Mapping):
                found.extend(_unknown(value, fields, prefix=f"{section}.", synonyms=False))
    return tuple(found)


def _unknown(doc: Mapping[str, Any], known: Iterable[str], *, prefix: str, synonyms: bool) -> Iterable[UnknownKey]:
    names = sorted(set(known))
    for key in doc:
        if not isinstance(key, str):
            yield UnknownKey(f"{prefix}{key!r}", None)
        elif key not in names:
            yield UnknownKey(f"{prefix}{key}", _nearest(key, names, synonyms=synonyms, prefix=prefix))


def _nearest(key: str, names: list[str], *, synonyms: bool, prefix: str) -> Optional[str]:
    normal = key.strip().lower().replace("-", "_")
    if normal in names:  # Instance-Type, instance-type
        return prefix + normal
    if synonyms and normal in SYNONYMS:
        return SYNONYMS[normal]
    close = difflib.get_close_matches(normal, names, n=1)
    return prefix + close[0] if close else None


#: SDK argument names people reach for that spelling similarity cannot see.
SDK_SYNONYMS: Mapping[str, str] = {
    "env": "environment",
    "environment_variables": "environment",
    "env_vars": "environment",
    "hyperparams": "hyperparameters",
    "hparams": "hyperparameters",
    "vpc_subnets": "subnets",
    "security_groups": "security_group_ids",
    "keep_alive_time_in_seconds": "keep_alive_period_in_seconds",
    "keep_alive_seconds": "keep_alive_period_in_seconds",
    "max_run_in_seconds": "max_run",
    "checkpoint_uri": "checkpoint_s3_uri",
    "checkpoint_path": "checkpoint_local_path",
}


def unknown_arguments(names: Iterable[str], known: Iterable[str], *, prefix: str = "",
                      fit_only: Iterable[str] = ()) -> tuple[UnknownKey, ...]:
    """Keyword arguments of a call in user code that the SDK class does not take.

    ``fit_only``: names that belong to the ``fit()`` call rather than the constructor
    (SDK v2 drops ``job_name=`` given to ``PyTorch(...)`` like any other unknown argument).
    """
    known_names = sorted(set(known))
    fit = set(fit_only)
    found = []
    for name in names:
        if name in known_names:
            continue
        if name in fit:
            found.append(UnknownKey(f"{prefix}{name}", None, note=f"{name} is a fit() argument: pass it to .fit({name}=...)"))
            continue
        normal = name.strip().lower().replace("-", "_")
        suggestion = SDK_SYNONYMS.get(normal)
        if suggestion is not None and suggestion not in known_names:
            suggestion = None
        if suggestion is None:
            close = difflib.get_close_matches(normal, known_names, n=1)
            suggestion = close[0] if close else None
        found.append(UnknownKey(f"{prefix}{name}", f"{prefix}{suggestion}" if suggestion else None))
    return tuple(found)
