"""Read a training-job description: SDK v2 Estimator arguments or a ModelTrainer shape.

A job file is YAML or JSON holding what the user would pass to the SageMaker Python SDK:

* SDK v2 ``Estimator`` / ``PyTorch`` keyword arguments, as they are: ``entry_point``,
  ``source_dir``, ``instance_type``, ``instance_count``, ``distribution``,
  ``checkpoint_s3_uri``, ``checkpoint_local_path``, ``debugger_hook_config``, ``subnets``...
  ``estimator`` names the class (default ``PyTorch``), ``region`` the session's region.
* or the same arguments nested as ``smddp-infra job-config --format v2`` prints them:
  ``estimator: {...constructor arguments...}`` and ``fit: {inputs: ...}``;
* or a ``ModelTrainer`` shape (SDK v3 / ``sagemaker.modules``): ``compute: {instance_type,
  instance_count}``, ``source_code: {source_dir, entry_script}``,
  ``checkpoint_config: {s3_uri, local_path}``, ``networking: {subnets, ...}``.

plus facts preflight needs that are not SDK arguments: ``num_samples`` (dataset size),
``batch_size`` (per rank), ``world_size`` (default: instance_count x accelerators of an
EFA instance type), ``drop_last``, ``sharding`` (``split``: each rank reads its own part
without padding -- the default unless the script uses a ``DistributedSampler``;
``distributed_sampler`` / ``even_shards``: padded or dropped to equal counts) and
``subnet_availability_zones`` (``{subnet-id: az}``). Any other key must be an SDK argument
(:mod:`.known_keys`); one that is not becomes a PF-UNKNOWN-KEY warning naming the nearest
known key, because the SDK v2 drops it silently and preflight would skip the rules it feeds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from smddp_infra.preflight.errors import PreflightInputError
from smddp_infra.preflight.known_keys import UnknownKey, unknown_keys

#: The only local path SageMaker syncs by default (CheckpointConfig.LocalPath default).
DEFAULT_CHECKPOINT_LOCAL_PATH = "/opt/ml/checkpoints"

#: SDK v2 Framework estimators whose ``_validate_and_set_debugger_configs`` turns the
#: Debugger off when both checkpoint arguments are given (sagemaker 2.257, estimator.py).
#: A generic ``Estimator`` or ``HuggingFace`` does not.
AUTO_DISABLING_ESTIMATORS = frozenset({"PyTorch", "TensorFlow", "MXNet"})

#: sagemaker 2.257 fw_utils.DEBUGGER_UNSUPPORTED_REGIONS: there the SDK sends no hook.
DEBUGGER_UNSUPPORTED_REGIONS = frozenset({
    "us-iso-east-1", "us-isob-east-1", "ap-southeast-3", "ap-southeast-4", "eu-south-2",
    "me-central-1", "ap-south-2", "eu-central-2", "us-gov-east-1",
})

#: sagemaker 2.257.7 ``sagemaker/estimator.py`` ``Framework._distribution_configuration``, which
#: ``hyperparameters()`` calls when ``fit()`` builds the job: with ``"smdistributed"`` in
#: ``distribution``, an instance type containing ``p5.48xlarge`` and ``torch_distributed`` not
#: enabled it raises ``ValueError`` with this message (PyTorch first rewrites ``pytorchddp`` into
#: ``smdistributed``; HuggingFace does not, and TensorFlow always calls it).
SDK_V2_P5_REFUSAL = "SMModelParallel and SMDataParallel currently do not support p5 instances."
SDK_V2_P5_MARKER = "p5.48xlarge"
SDK_V2_SOURCE = "sagemaker 2.257.7 sagemaker/estimator.py, Framework._distribution_configuration"
SDK_V2_DISTRIBUTING_ESTIMATORS = frozenset({"PyTorch", "TensorFlow", "HuggingFace"})
#: Launchers (:attr:`JobDescription.launcher`) that start the processes with mpirun and smddprun
#: (sagemaker 2.257.7 rewrites ``pytorchddp`` into ``smdistributed.dataparallel``).
SMDDPRUN_LAUNCHERS = ("smdistributed", "pytorchddp")

V2_KEYS = frozenset({"entry_point", "instance_type", "instance_count", "checkpoint_s3_uri",
                     "checkpoint_local_path", "debugger_hook_config", "distribution"})
MODEL_TRAINER_KEYS = frozenset({"compute", "source_code", "checkpoint_config", "networking"})
SHARDING_VALUES = ("split", "distributed_sampler", "even_shards")

_ABSENT = object()


#: How a setting is spelled in the job shapes that do not use SDK v2's names (for messages and fixes).
_SPELLINGS = {
    "api": {
        "checkpoint_s3_uri": "CheckpointConfig.S3Uri",
        "checkpoint_local_path": "CheckpointConfig.LocalPath",
        "instance_type": "ResourceConfig.InstanceType",
        "instance_count": "ResourceConfig.InstanceCount",
        "subnets": "VpcConfig.Subnets",
        "entry_point": "HyperParameters.sagemaker_program",
        "source_dir": "HyperParameters.sagemaker_submit_directory",
        "debugger_hook_config": "DebugHookConfig",
        "distribution": "HyperParameters.sagemaker_distributed_dataparallel_enabled",
    },
    "model_trainer": {
        "checkpoint_s3_uri": "checkpoint_config.s3_uri",
        "checkpoint_local_path": "checkpoint_config.local_path",
        "instance_type": "compute.instance_type",
        "instance_count": "compute.instance_count",
        "subnets": "networking.subnets",
        "entry_point": "source_code.entry_script",
        "source_dir": "source_code.source_dir",
    },
}


@dataclass(frozen=True)
class JobDescription:
    """The settings preflight judges, with the names the user wrote them under."""

    path: Path
    shape: str  # "estimator" (SDK v2) or "model_trainer"
    estimator: str = "PyTorch"
    entry_point: Optional[str] = None
    source_dir: Optional[str] = None
    instance_type: Optional[str] = None
    instance_count: Optional[int] = None
    distribution: Optional[Mapping[str, Any]] = None
    checkpoint_s3_uri: Optional[str] = None
    checkpoint_local_path: Optional[str] = None
    #: "absent", "none", "false" or "configured"
    debugger_hook: str = "absent"
    region: Optional[str] = None
    subnets: tuple[str, ...] = ()
    subnet_availability_zones: Mapping[str, str] = field(default_factory=dict)
    num_samples: Optional[int] = None
    batch_size: Optional[int] = None
    world_size: Optional[int] = None
    drop_last: Optional[bool] = None
    sharding: Optional[str] = None
    #: keys neither preflight nor the SDK knows (PF-UNKNOWN-KEY)
    unknown_keys: tuple[UnknownKey, ...] = ()
    #: where the job came from: "job_file", "notebook", "launcher", "create_training_job"
    #: or "describe_training_job"
    kind: str = "job_file"
    #: for a job found in code: the variable and the cell/line of the construction
    label: Optional[str] = None
    #: setting -> where its value was written ("launch.ipynb cell 4 line 7")
    locations: Mapping[str, str] = field(default_factory=dict)
    #: settings whose value preflight could not resolve (rules needing them do not fire)
    unknown: Mapping[str, str] = field(default_factory=dict)
    #: SMDDP turned on by something other than ``distribution`` (an API hyperparameter)
    smddp_setting: Optional[str] = None
    #: ("pytorch", "2.3.0") from framework_version or the training image tag
    framework: Optional[tuple[str, str]] = None
    #: ModelTrainer ``SourceCode(command=...)``
    command: Optional[str] = None
    #: the directory entry_point and source_dir are relative to (default: the job file's)
    base_dir: Optional[Path] = None
    #: hyperparameters the job passes to its script (``--key value``), as far as they are known
    hyperparameters: Mapping[str, Any] = field(default_factory=dict)
    #: why some hyperparameters cannot be known (``**hp`` unresolved...); None when all are
    hyperparameters_unknown: Optional[str] = None
    #: SDK v3 ``distributed=`` class (``Torchrun``, ``MPI``, ``SMP``), or None
    distributed: Optional[str] = None
    #: ModelTrainer: whether ``stopping_condition`` is given (None: cannot tell)
    stopping_condition: Optional[bool] = None
    #: SDK v2 ``dependencies=[...]``: folders copied beside the entry point
    dependencies: tuple[str, ...] = ()
    #: ``environment=``: variables the job sets in the container, as far as they are known
    environment: Mapping[str, Any] = field(default_factory=dict)
    #: why some of ``environment`` cannot be known; None when all of it is
    environment_unknown: Optional[str] = None
    #: SDK v2 ``git_config=``: source_dir and entry_point are paths in a repository cloned at fit()
    git_config: bool = False
    #: ``training_recipe=`` (``ModelTrainer.from_recipe``, SDK v2 ``PyTorch(training_recipe=...)``)
    recipe: Optional[str] = None
    #: the recipe's ``distributed_backend`` and where it is written (``recipe.yaml:12``), when read
    recipe_backend: Optional[tuple[str, str]] = None
    #: why the recipe was not read (a recipe name the SDK fetches, a missing file...): said once
    recipe_note: Optional[str] = None

    def where(self, setting: str) -> str:
        """Where ``setting`` was written: the cell/line for code, ``file: key`` for documents."""
        if setting in self.locations:
            return self.locations[setting]
        if self.label and self.kind in ("notebook", "launcher", "live"):
            return f"{self.label}: {self.key(setting)}"
        return f"{self.path.name}: {self.key(setting)}"

    def assign(self, setting: str, value: Any) -> str:
        """The fix as the user writes it: ``key: value`` in a job file, ``key=value`` in code."""
        key = self.key(setting)
        if self.kind in ("notebook", "launcher", "live"):
            return f"{key}={value!r}" if not isinstance(value, bool) else f"{key}={value}"
        if isinstance(value, bool):
            value = str(value).lower()
        return f"{key}: {value}"

    def key(self, setting: str) -> str:
        """How ``setting`` is spelled in this job file's shape (for messages and fixes)."""
        if setting == "checkpoint_s3_uri_end":
            return f"the end of {self.key('checkpoint_s3_uri')}"
        return _SPELLINGS.get(self.shape, {}).get(setting, setting)

    @property
    def effective_checkpoint_local_path(self) -> str:
        return self.checkpoint_local_path or DEFAULT_CHECKPOINT_LOCAL_PATH

    @property
    def launcher(self) -> Optional[tuple[str, str]]:
        """(launcher, as written): how SageMaker starts the processes.

        SDK v2 ``distribution`` keys: ``torch_distributed`` (torchrun), ``pytorchddp``
        (mpirun; sagemaker 2.257.7 rewrites it into ``smdistributed.dataparallel``),
        ``smdistributed.dataparallel`` (mpirun with smddprun), ``mpi``; SDK v3 ``distributed=``
        (``Torchrun()``, ``MPI()``, ``SMP()``). A launcher is not a backend: the collectives the
        script uses are the ones it initialises.
        """
        if self.smddp_setting:
            return "smdistributed", self.smddp_setting
        if self.distributed:
            return self.distributed.lower(), f"distributed={self.distributed}()"
        dist = self.distribution or {}
        smd = dist.get("smdistributed")
        if isinstance(smd, Mapping) and isinstance(smd.get("dataparallel"), Mapping) and smd["dataparallel"].get("enabled"):
            return "smdistributed", 'distribution={"smdistributed": {"dataparallel": {"enabled": True}}}'
        for key in ("pytorchddp", "torch_distributed", "mpi", "multi_worker_mirrored_strategy"):
            value = dist.get(key)
            if isinstance(value, Mapping) and value.get("enabled"):
                return key, f'distribution={{"{key}": {{"enabled": True}}}}'
        return None


def sdk_v2_p5_refusal(job: JobDescription) -> Optional[str]:
    """The ``distribution`` the SDK v2 refuses on this instance type (as written), or None.

    Only for SDK v2 framework estimators with a known distribution and instance type: the
    refusal is the SDK's own code (:data:`SDK_V2_P5_REFUSAL`), so it is certain when it applies.
    """
    if job.shape != "estimator" or job.estimator not in SDK_V2_DISTRIBUTING_ESTIMATORS or job.recipe:
        return None  # a recipe job's distribution is the SDK's own (torch_distributed with SMP on GPUs)
    if job.instance_type is None or "instance_type" in job.unknown or "distribution" in job.unknown:
        return None
    dist = job.distribution or {}
    key = "smdistributed" if "smdistributed" in dist else "pytorchddp" if (
        "pytorchddp" in dist and job.estimator == "PyTorch") else None
    if key is None or SDK_V2_P5_MARKER not in job.instance_type:
        return None
    torch_distributed = dist.get("torch_distributed")
    if isinstance(torch_distributed, Mapping) and torch_distributed.get("enabled"):
        return None
    return key


def parse_job(doc: Mapping[str, Any], *, path: Path) -> JobDescription:
    doc = _unnest_job_config(doc, path=path)
    v2 = sorted(V2_KEYS & doc.keys())
    mt = sorted(MODEL_TRAINER_KEYS & doc.keys())
    if v2 and mt:
        raise PreflightInputError(
            f"job file {path} mixes SDK v2 Estimator arguments ({', '.join(v2)}) with ModelTrainer "
            f"settings ({', '.join(mt)}); describe the job in one of the two shapes"
        )
    common: dict[str, Any] = dict(
        path=path,
        region=_opt_str(doc, "region"),
        num_samples=_opt_int(doc, "num_samples", minimum=0),
        batch_size=_opt_int(doc, "batch_size", minimum=1),
        world_size=_opt_int(doc, "world_size", minimum=1),
        drop_last=_given(doc, "drop_last", lambda v: isinstance(v, bool), "be true or false"),
        sharding=_given(doc, "sharding", SHARDING_VALUES.__contains__, f"be one of {', '.join(SHARDING_VALUES)}"),
        subnet_availability_zones=dict(_given(
            doc, "subnet_availability_zones", lambda v: isinstance(v, Mapping) and all(
                isinstance(k, str) and isinstance(z, str) for k, z in v.items()),
            "map subnet ids to Availability Zones, e.g. {subnet-0abc: us-east-1a}", absent={})),
        unknown_keys=unknown_keys(doc, model_trainer=True if mt else False if v2 else None),
        hyperparameters=_named_values(doc, "hyperparameters", "a mapping such as {epochs: 3, backend: nccl}"),
        environment=_named_values(doc, "environment", "a mapping of variable names to values such as {NCCL_DEBUG: INFO}"),
    )
    if mt:
        compute, source, checkpoint, networking = (_given(doc, name, lambda v: isinstance(v, Mapping), "be a mapping", absent={})
                                                   for name in ("compute", "source_code", "checkpoint_config", "networking"))
        return JobDescription(
            shape="model_trainer",
            estimator="ModelTrainer",
            entry_point=_opt_str(source, "entry_script", prefix="source_code."),
            source_dir=_opt_str(source, "source_dir", prefix="source_code."),
            instance_type=_opt_str(compute, "instance_type", prefix="compute."),
            instance_count=_opt_int(compute, "instance_count", minimum=1, prefix="compute."),
            checkpoint_s3_uri=_opt_s3(checkpoint, "s3_uri", prefix="checkpoint_config."),
            checkpoint_local_path=_opt_path(checkpoint, "local_path", prefix="checkpoint_config."),
            debugger_hook="false",  # ModelTrainer sends no Debugger configuration
            subnets=_str_list(networking, "subnets", prefix="networking."),
            stopping_condition="stopping_condition" in doc,
            **common,
        )

    distribution = _given(doc, "distribution", lambda v: isinstance(v, Mapping),
                          "be a mapping such as {smdistributed: {dataparallel: {enabled: true}}}")
    return JobDescription(
        shape="estimator",
        estimator=_opt_str(doc, "estimator") or "PyTorch",
        entry_point=_opt_str(doc, "entry_point"),
        source_dir=_opt_str(doc, "source_dir"),
        instance_type=_opt_str(doc, "instance_type"),
        instance_count=_opt_int(doc, "instance_count", minimum=1),
        distribution=distribution,
        checkpoint_s3_uri=_opt_s3(doc, "checkpoint_s3_uri"),
        checkpoint_local_path=_opt_path(doc, "checkpoint_local_path"),
        debugger_hook=_debugger_hook(doc),
        subnets=_str_list(doc, "subnets"),
        dependencies=_str_list(doc, "dependencies", what="a list of folder paths such as [lib]"),
        git_config="git_config" in doc,
        **common,
    )


def _unnest_job_config(doc: Mapping[str, Any], *, path: Path) -> Mapping[str, Any]:
    """Accept ``smddp-infra job-config --format v2`` as it is printed.

    That output keeps the constructor's arguments under ``estimator`` and ``fit``'s under
    ``fit`` (``inputs`` is not an Estimator argument). Here ``estimator`` as a mapping means
    those arguments (the class is then ``PyTorch``); as a string it still names the class.
    ``fit`` holds nothing preflight judges.
    """
    nested = doc.get("estimator")
    if not isinstance(nested, Mapping):
        return doc
    both = sorted((V2_KEYS | MODEL_TRAINER_KEYS) & doc.keys())
    if both:
        raise PreflightInputError(
            f"job file {path} has Estimator arguments under estimator: and also at the top level "
            f"({', '.join(both)}); keep them in one place"
        )
    flat = {k: v for k, v in doc.items() if k not in ("estimator", "fit")}
    flat.update({k: v for k, v in nested.items() if k != "estimator"})
    return flat


def _debugger_hook(doc: Mapping[str, Any]) -> str:
    value = doc.get("debugger_hook_config", _ABSENT)
    if value is _ABSENT:
        return "absent"
    if value is None or isinstance(value, (bool, Mapping)):
        return debugger_hook_state(value)
    raise PreflightInputError(
        f"debugger_hook_config must be false, null or a DebuggerHookConfig mapping, got {value!r}"
    )


def debugger_hook_state(value: Any) -> str:
    """:attr:`JobDescription.debugger_hook` for a ``debugger_hook_config`` that is given (a job
    file's, one in code, a live estimator's): the SDK treats None and {} like "not given" (its
    default hook, the Debugger ON: "none"), False turns it off, anything else configures a hook."""
    if value is None or value == {}:
        return "none"
    return "false" if value is False else "configured"


def _given(doc: Mapping[str, Any], key: str, ok: Callable[[Any], Any], must: str, *, absent: Any = None,
           prefix: str = "") -> Any:
    """``doc[key]`` when ``ok`` holds for it, ``absent`` when it is missing or null, else one error
    saying what it ``must`` be (``prefix``: the section the key is in, ``compute.``)."""
    value = doc.get(key)
    if value is None:
        return absent
    if not ok(value):
        raise PreflightInputError(f"{prefix}{key} must {must}, got {value!r}")
    return value


def _opt_str(doc: Mapping[str, Any], key: str, *, prefix: str = "") -> Optional[str]:
    value: Optional[str] = _given(doc, key, lambda v: isinstance(v, str) and v, "be a non-empty string", prefix=prefix)
    return value


def _opt_path(doc: Mapping[str, Any], key: str, *, prefix: str = "") -> Optional[str]:
    """A local path where ``""`` means unset, as the SDK treats it (``if checkpoint_local_path:``)."""
    if doc.get(key) == "":
        return None
    return _opt_str(doc, key, prefix=prefix)


def _opt_s3(doc: Mapping[str, Any], key: str, *, prefix: str = "") -> Optional[str]:
    value = _opt_str(doc, key, prefix=prefix)
    if value is not None and not value.startswith("s3://"):
        raise PreflightInputError(f"{prefix}{key} must be an s3:// URI such as s3://bucket/checkpoints/, got {value!r}")
    return value


def _opt_int(doc: Mapping[str, Any], key: str, *, minimum: int, prefix: str = "") -> Optional[int]:
    value = _given(doc, key, lambda v: not isinstance(v, bool) and isinstance(v, int) and v >= minimum,
                   f"be a whole number >= {minimum}", prefix=prefix)
    return None if value is None else int(value)


def _str_list(doc: Mapping[str, Any], key: str, *, prefix: str = "",
              what: str = "a list of subnet ids such as [subnet-0abc]") -> tuple[str, ...]:
    return tuple(_given(doc, key, lambda v: isinstance(v, list) and all(isinstance(i, str) and i for i in v),
                        f"be {what}", absent=(), prefix=prefix))


def _named_values(doc: Mapping[str, Any], key: str, what: str) -> dict[str, Any]:
    """A mapping keyed by names (hyperparameters, environment variables), {} when absent;
    ``what`` is the example the error shows."""
    return dict(_given(doc, key, lambda v: isinstance(v, Mapping) and all(isinstance(k, str) for k in v),
                       f"be {what}", absent={}))


_VERSION = re.compile(r"^\d+(\.\d+)+$")


def framework_from_image(image: str) -> Optional[tuple[str, str]]:
    """("pytorch", "2.3.0") from a Deep Learning Container URI such as
    ``763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker``
    (Hugging Face images put the PyTorch version first too: ``2.1.0-transformers4.36.0-gpu-...``).
    None for any image whose repository or tag does not say (a custom image)."""
    repository, _, tag = image.rsplit("/", 1)[-1].partition(":")
    version = tag.split("-", 1)[0]
    if not _VERSION.match(version):
        return None
    for framework in ("pytorch", "tensorflow", "mxnet"):
        if framework in repository:
            return framework, version
    return None
