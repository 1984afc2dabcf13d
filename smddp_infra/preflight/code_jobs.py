"""Turn an estimator / ModelTrainer construction found in code into a :class:`JobDescription`.

Values that are not what the SDK accepts there, or that preflight could not resolve, are
recorded as unknown (setting -> why) instead of guessed: the rules that need them do not
fire and the report lists them as not evaluated. A ``**kwargs`` preflight could not resolve
makes every setting not written explicitly unknown (the missing one may hide in it).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Optional

from smddp_infra.preflight.extract import ExtractedJob, Partial, SdkObject, Site, Unknown, contains_unknown, plain
from smddp_infra.preflight.job import JobDescription, debugger_hook_state, framework_from_image
from smddp_infra.preflight.known_keys import (
    FROM_RECIPE_ARGS,
    MODEL_TRAINER_ARGS,
    MODEL_TRAINER_SECTIONS,
    SDK_V2_ESTIMATOR_ARGS,
    SDK_V2_FIT_ARGS,
    UnknownKey,
    unknown_arguments,
)

_MT_SECTIONS = {
    "instance_type": ("compute", "instance_type"),
    "instance_count": ("compute", "instance_count"),
    "entry_point": ("source_code", "entry_script"),
    "source_dir": ("source_code", "source_dir"),
    "command": ("source_code", "command"),
    "checkpoint_s3_uri": ("checkpoint_config", "s3_uri"),
    "checkpoint_local_path": ("checkpoint_config", "local_path"),
    "subnets": ("networking", "subnets"),
}
_FRAMEWORK_OF = {"PyTorch": "pytorch", "TensorFlow": "tensorflow", "MXNet": "mxnet"}
#: SDK v1 names SDK v2 still maps, with a warning (sagemaker 2.257 ``EstimatorBase.__init__``
#: ``renamed_kwargs``; ``TensorFlow`` also maps ``distributions``): they take effect, so they
#: are read as their new names, not reported as dropped.
SDK_V2_RENAMED = {
    "train_instance_count": "instance_count", "train_instance_type": "instance_type",
    "train_max_run": "max_run", "train_use_spot_instances": "use_spot_instances",
    "train_max_wait": "max_wait", "train_volume_size": "volume_size", "train_volume_kms_key": "volume_kms_key",
}


class _Reader:
    def __init__(self, job: ExtractedJob) -> None:
        self.job = job
        self.unknown: dict[str, str] = {}
        self.locations: dict[str, str] = {}

    def site(self, setting: str, written: str, site: Optional[Site]) -> None:
        guess = self.job.provenance.get(written)
        self.locations[setting] = f"{site or self.job.site}: {written}" + (f" ({guess})" if guess else "")

    def value(self, setting: str, written: str, raw: Any, site: Optional[Site], *, absent: bool = False) -> Any:
        self.site(setting, written, site)
        if absent and self.job.opaque_unpack:
            self.unknown[setting] = f"{written} may be set by {self.job.opaque_unpack}, which preflight cannot resolve"
            return None
        if isinstance(raw, Partial):
            self.unknown[setting] = f"{written} is {raw.template}, built from {raw.reason}"
            return None
        if isinstance(raw, Unknown):
            self.unknown[setting] = f"{written} is {raw.reason}"
            return None
        return raw

    def text(self, setting: str, written: str, raw: Any, site: Optional[Site], *, absent: bool = False,
             empty_is_unset: bool = False, s3: bool = False) -> Optional[str]:
        if s3 and isinstance(raw, Partial) and (raw.prefix.startswith("s3://") or "s3://".startswith(raw.prefix)):
            # f"s3://{bucket}/checkpoints": set, and its end is known even if the bucket is not
            self.site(setting, written, site)
            if not raw.suffix_known:
                self.unknown[f"{setting}_end"] = f"{written} is {raw.template}: it ends in a part preflight cannot resolve"
            return raw.template
        value = self.value(setting, written, raw, site, absent=absent)
        if value is None or (empty_is_unset and value == ""):
            return None
        if not isinstance(value, str) or not value or (s3 and not value.startswith("s3://")):
            self.unknown[setting] = f"{written} is {plain(value)!r}, not a {'s3:// URI' if s3 else 'string'} preflight can judge"
            return None
        return value

    def count(self, setting: str, written: str, raw: Any, site: Optional[Site], *, absent: bool = False) -> Optional[int]:
        value = self.value(setting, written, raw, site, absent=absent)
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.unknown[setting] = f"{written} is {plain(value)!r}, not a whole number >= 1"
            return None
        return int(value)

    def strings(self, setting: str, written: str, raw: Any, site: Optional[Site], *, absent: bool = False) -> tuple[str, ...]:
        value = self.value(setting, written, raw, site, absent=absent)
        if value is None:
            return ()
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            self.unknown[setting] = f"{written} is not a list of subnet ids preflight can read"
            return ()
        return tuple(value)


def job_from_code(job: ExtractedJob, *, path: Path, kind: str) -> JobDescription:
    return _model_trainer(job, path=path, kind=kind) if job.is_trainer else _estimator(job, path=path, kind=kind)


def _estimator(job: ExtractedJob, *, path: Path, kind: str) -> JobDescription:
    renamed = {**SDK_V2_RENAMED, **({"distributions": "distribution"} if job.cls == "TensorFlow" else {})}
    kw = {renamed.get(k, k): v for k, v in job.kwargs.items()}
    sites = {renamed.get(k, k): v for k, v in job.sites.items()}
    r = _Reader(job)

    def arg(name: str) -> tuple[Any, Optional[Site], bool]:
        return kw.get(name), sites.get(name), name not in kw

    def text(name: str, **options: Any) -> Optional[str]:
        raw, site, absent = arg(name)
        return r.text(name, name, raw, site, absent=absent, **options)

    raw, site, absent = arg("distribution")
    distribution = r.value("distribution", "distribution", raw, site, absent=absent)
    if distribution is not None and not isinstance(distribution, Mapping):
        r.unknown["distribution"] = "distribution is not a dict preflight can read"
        distribution = None
    if isinstance(distribution, Mapping) and contains_unknown(distribution):
        r.unknown["distribution"] = "distribution holds a value preflight cannot resolve"
        distribution = None
    hook_raw, hook_site, hook_absent = arg("debugger_hook_config")
    r.site("debugger_hook_config", "debugger_hook_config", hook_site)
    if hook_absent:
        hook = "absent"
        if job.opaque_unpack:
            r.unknown["debugger_hook_config"] = f"debugger_hook_config may be set by {job.opaque_unpack}"
    elif isinstance(hook_raw, Unknown):
        hook = "absent"
        r.unknown["debugger_hook_config"] = f"debugger_hook_config is {hook_raw.reason}"
    else:
        hook = debugger_hook_state(hook_raw)
    framework = None
    version = kw.get("pytorch_version") if job.cls == "HuggingFace" else kw.get("framework_version")
    if isinstance(kw.get("image_uri"), str):
        framework = framework_from_image(kw["image_uri"])
    elif isinstance(version, str) and job.cls in (*_FRAMEWORK_OF, "HuggingFace"):
        framework = (_FRAMEWORK_OF.get(job.cls, "pytorch" if "pytorch_version" in kw else "tensorflow"), version)
    unknown_keys = list(unknown_arguments(list(kw), SDK_V2_ESTIMATOR_ARGS, fit_only=SDK_V2_FIT_ARGS))
    for method, run_kwargs, run_site in job.runs:
        if method != "fit":
            continue
        for u in unknown_arguments(list(run_kwargs), SDK_V2_FIT_ARGS):
            unknown_keys.append(UnknownKey(f"fit.{u.key}", f"fit.{u.suggestion}" if u.suggestion else None, u.note))
            r.locations[f"fit.{u.key}"] = f"{run_site}: fit({u.key}=...)"
    for u in unknown_keys:
        if u.key in sites:
            r.locations[u.key] = f"{sites[u.key]}: {u.key}"
    description = JobDescription(
        path=path,
        shape="estimator",
        estimator=job.cls,
        entry_point=text("entry_point"),
        source_dir=text("source_dir"),
        instance_type=text("instance_type"),
        instance_count=r.count("instance_count", "instance_count", kw.get("instance_count"), sites.get("instance_count"),
                               absent="instance_count" not in kw),
        distribution=distribution,
        checkpoint_s3_uri=text("checkpoint_s3_uri", empty_is_unset=True, s3=True),
        checkpoint_local_path=text("checkpoint_local_path", empty_is_unset=True),
        debugger_hook=hook,
        subnets=r.strings("subnets", "subnets", kw.get("subnets"), sites.get("subnets"), absent="subnets" not in kw),
        framework=framework,
        dependencies=_dependencies(kw.get("dependencies")),
        git_config="git_config" in kw,
        **_shared_fields(job, kw, r, path=path, kind=kind, unknown_keys=unknown_keys),
    )
    if "instance_groups" in kw and "instance_type" not in kw:
        description = replace(description, unknown={**description.unknown,
                                                     "instance_type": "instance_groups is used (heterogeneous cluster)"})
    if "training_recipe" in kw:
        description = _with_recipe(description, job, kw, path=path)
    return description


def _override(value: Any, key: str) -> Any:
    """The value ``recipe_overrides`` gives ``key`` at any depth (None: not there)."""
    if isinstance(value, Mapping):
        if key in value:
            return value[key]
        for inner in value.values():
            found = _override(inner, key)
            if found is not None:
                return found
    return None


def _with_recipe(job: JobDescription, extracted: ExtractedJob, kw: Mapping[str, Any], *, path: Path) -> JobDescription:
    """What the recipe sets (the node count when the job gives none, its backend, as
    ``recipe_overrides`` leave them), or why it was not read."""
    from smddp_infra.preflight.recipe import read_recipe

    raw = kw.get("training_recipe")
    facts = read_recipe(raw, base_dir=path.parent, written="training_recipe")
    count = job.instance_count
    if count is None and facts.num_nodes is not None and "instance_count" not in job.unknown:
        count = facts.num_nodes
    backend, note = facts.backend, facts.note
    overrides = kw.get("recipe_overrides")
    if isinstance(overrides, Unknown) or contains_unknown(overrides):
        backend, note = None, note or "recipe_overrides holds a value preflight cannot resolve"
    else:
        override = _override(overrides, "distributed_backend")
        if isinstance(override, str):
            site = extracted.sites.get("recipe_overrides", extracted.site)
            backend = (override, f"{site}: recipe_overrides")
    return replace(job, recipe=raw if isinstance(raw, str) else "?", recipe_backend=backend,
                   recipe_note=note, instance_count=count)


def _model_trainer(job: ExtractedJob, *, path: Path, kind: str) -> JobDescription:
    r = _Reader(job)
    kw = job.kwargs
    sections: dict[str, Optional[Mapping[str, Any]]] = {}
    section_sites: dict[str, dict[str, Site]] = {}
    unknown_keys = list(unknown_arguments(list(kw), FROM_RECIPE_ARGS if job.factory == "from_recipe" else MODEL_TRAINER_ARGS))
    for u in unknown_keys:
        if u.key in job.sites:
            r.locations[u.key] = f"{job.sites[u.key]}: {u.key}"
    for name in ("compute", "source_code", "checkpoint_config", "networking"):
        raw = kw.get(name)
        if isinstance(raw, SdkObject):
            sections[name] = raw.kwargs
            section_sites[name] = raw.sites
            for u in unknown_arguments(list(raw.kwargs), MODEL_TRAINER_SECTIONS[name], prefix=f"{name}."):
                unknown_keys.append(u)
                bare = u.key.split(".", 1)[1]
                r.locations[u.key] = f"{raw.sites.get(bare, raw.site)}: {u.key}"
        elif isinstance(raw, Mapping):
            sections[name] = raw
            section_sites[name] = dict(getattr(raw, "sites", {}))
        elif raw is None and name not in kw:
            sections[name] = None if job.opaque_unpack else {}
        else:
            sections[name] = None  # unknown
            if isinstance(raw, Unknown):
                reason = raw.reason
            else:
                reason = f"{plain(raw)!r}"
            for setting, (section, _) in _MT_SECTIONS.items():
                if section == name:
                    r.unknown[setting] = f"{name} is {reason}"

    def get(setting: str) -> tuple[Any, Optional[Site], bool, str]:
        section, field_name = _MT_SECTIONS[setting]
        written = f"{section}.{field_name}"
        values = sections[section]
        if values is None:
            if setting not in r.unknown:
                r.unknown[setting] = f"{written} may be set by {job.opaque_unpack or section}, which preflight cannot resolve"
            return Unknown(r.unknown[setting]), job.sites.get(section), False, written
        site = section_sites.get(section, {}).get(field_name) or job.sites.get(section)
        return values.get(field_name), site, field_name not in values, written

    def text(setting: str, **options: Any) -> Optional[str]:
        raw, site, absent, written = get(setting)
        if setting in r.unknown:
            r.site(setting, written, site)
            return None
        return r.text(setting, written, raw, site, **options)

    instance_raw, instance_site, _, _ = get("instance_count")
    instance_count = None if "instance_count" in r.unknown else r.count("instance_count", "compute.instance_count", instance_raw, instance_site)
    subnets_raw, subnets_site, _, _ = get("subnets")
    subnets = () if "subnets" in r.unknown else r.strings("subnets", "networking.subnets", subnets_raw, subnets_site)
    image = kw.get("training_image")
    r.locations["stopping_condition"] = f"{job.sites.get('stopping_condition', job.site)}: stopping_condition"
    description = JobDescription(
        path=path,
        shape="model_trainer",
        estimator="ModelTrainer",
        entry_point=text("entry_point"),
        source_dir=text("source_dir"),
        command=text("command"),
        instance_type=text("instance_type"),
        instance_count=instance_count,
        checkpoint_s3_uri=text("checkpoint_s3_uri", empty_is_unset=True, s3=True),
        checkpoint_local_path=text("checkpoint_local_path", empty_is_unset=True),
        debugger_hook="false",  # ModelTrainer sends no Debugger configuration
        subnets=subnets,
        framework=framework_from_image(image) if isinstance(image, str) else None,
        distributed=_distributed(kw.get("distributed")),
        stopping_condition=_stopping_condition(job, kw),
        **_shared_fields(job, kw, r, path=path, kind=kind, unknown_keys=unknown_keys),
    )
    if job.factory == "from_recipe":
        # the SDK clones its training adapter for the script and launches it with Torchrun(smp=SMP(...))
        description = replace(description, distributed="Torchrun", hyperparameters={}, hyperparameters_unknown=None)
        description = _with_recipe(description, job, kw, path=path)
    return description


def _shared_fields(job: ExtractedJob, kw: Mapping[str, Any], r: _Reader, *, path: Path, kind: str,
                   unknown_keys: list[UnknownKey]) -> dict[str, Any]:
    """The description's fields an Estimator and a ModelTrainer fill alike."""
    return dict(unknown_keys=tuple(unknown_keys), kind=kind, label=job.label, locations=r.locations, unknown=r.unknown,
                base_dir=path.parent, **_known_mapping(job, kw, "hyperparameters"),
                **_known_mapping(job, kw, "environment"))


def _known_mapping(job: ExtractedJob, kw: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``{name: the known entries, name_unknown: why some are not (or None)}`` for ``hyperparameters=``
    / ``environment=``: a value preflight cannot resolve stays :class:`Unknown`."""
    raw = kw.get(name)
    if raw is None:
        why = f"{name} may be set by {job.opaque_unpack}" if job.opaque_unpack else None
        return {name: {}, f"{name}_unknown": why}
    if isinstance(raw, Mapping) and all(isinstance(k, str) for k in raw):
        return {name: dict(raw), f"{name}_unknown": None}
    reason = raw.reason if isinstance(raw, Unknown) else "not a dict"
    return {name: {}, f"{name}_unknown": f"{name} is {reason}"}


def _stopping_condition(job: ExtractedJob, kw: Mapping[str, Any]) -> Optional[bool]:
    """Whether a maximum run time is given (sagemaker-train 1.27.0 fills in 3600 s otherwise)."""
    if "stopping_condition" not in kw:
        return None if job.opaque_unpack else False
    raw = kw["stopping_condition"]
    if isinstance(raw, SdkObject):
        value = raw.kwargs.get("max_runtime_in_seconds")
        return None if isinstance(value, Unknown) else value is not None
    return None if raw is None or isinstance(raw, Unknown) else True


def _distributed(raw: Any) -> Optional[str]:
    if isinstance(raw, SdkObject):
        return raw.cls
    return None


def _dependencies(raw: Any) -> tuple[str, ...]:
    if isinstance(raw, (list, tuple)):
        return tuple(v for v in raw if isinstance(v, str))
    return ()
