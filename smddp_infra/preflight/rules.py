"""The preflight rules: they read a job's facts (:mod:`.facts`) and never a file.

Severity follows the evidence: **error** when the failure is established (the two sites or
the fact are named), **warning** when it depends on something named that preflight cannot
know, **info** for what was not evaluated.
"""

from __future__ import annotations

import posixpath
from typing import Iterable, Optional, Sequence

from smddp_infra.contract import MAX_RUNTIME_LIMIT_SECONDS, SDK_V3_DEFAULT_MAX_RUNTIME
from smddp_infra.preflight import findings as F
from smddp_infra.preflight.findings import ERROR, INFO, WARNING, Finding, finding
from smddp_infra.preflight.job import (
    AUTO_DISABLING_ESTIMATORS,
    DEBUGGER_UNSUPPORTED_REGIONS,
    DEFAULT_CHECKPOINT_LOCAL_PATH,
    SDK_V2_P5_REFUSAL,
    SDK_V2_SOURCE,
    SMDDPRUN_LAUNCHERS,
    JobDescription,
    sdk_v2_p5_refusal,
)
from smddp_infra.preflight.facts import NO, OPTIONAL, UNKNOWN, YES, JobFacts
from smddp_infra.preflight.outputs import StackSubnets
from smddp_infra.preflight.script import ScriptFacts
from smddp_infra.training.sharding import even_batch_count, split_batch_counts

#: Paths SageMaker uploads at the end of the job anyway (model.tar.gz / output.tar.gz).
_UPLOADED_AT_END = ("/opt/ml/model", "/opt/ml/output")

SMDDP_REPLACEMENT = (
    'import smdistributed.dataparallel.torch.torch_smddp, then torch.distributed.init_process_group(backend="smddp")'
)


def world_size(job: JobDescription) -> Optional[int]:
    """``world_size`` if given, else instance_count x accelerators of a known EFA type
    (SMDDP runs one process per GPU)."""
    if job.world_size is not None:
        return job.world_size
    if job.instance_count is None or job.instance_type is None:
        return None
    from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES

    instance = EFA_INSTANCE_TYPES.get(job.instance_type)
    return job.instance_count * instance.accelerators if instance else None


def smddp_job(facts: JobFacts) -> Optional[str]:
    """What makes this an SMDDP job for the Debugger conflict: the smdistributed launcher
    (which SageMaker configures as an SMDDP job) or the smddp backend the program starts."""
    if facts.launcher and facts.launcher[0] in SMDDPRUN_LAUNCHERS:
        return facts.launcher[1]
    if facts.smddp.state == YES:
        return facts.smddp.evidence
    return None


def check_unknown_keys(job: JobDescription) -> list[Finding]:
    """Keys neither preflight nor the SDK knows, each with the nearest known key (a warning:
    the job may still be right, but a rule that needed the key was skipped in silence)."""
    what = ("a ModelTrainer setting" if job.shape == "model_trainer"
            else "an SDK v2 Estimator or fit() argument")
    out = []
    for unknown in job.unknown_keys:
        hint = f"; did you mean {unknown.suggestion}?" if unknown.suggestion else ""
        out.append(finding(
            F.UNKNOWN_KEY, WARNING, location=job.where(unknown.key),
            message=_unknown_message(job, unknown.key, unknown.note, hint, what),
            fix=(f"rename {unknown.key} to {unknown.suggestion}" if unknown.suggestion
                 else f"move {unknown.key}= to the .fit() call" if unknown.note
                 else f"remove {unknown.key}, or spell it as the SDK does"),
        ))
    return out


def _unknown_message(job: JobDescription, key: str, note: Optional[str], hint: str, what: str) -> str:
    if job.kind not in ("notebook", "launcher"):
        return f"{key} is neither a setting preflight reads nor {what}: both ignore it{hint}"
    if job.shape == "model_trainer":
        drop = "ModelTrainer rejects it when this code runs (pydantic extra=forbid)"
        where = "ModelTrainer" if "." not in key else key.split(".", 1)[0]
        return f"{key}= is not a {where} field: {drop}{hint}"
    if note:
        return f"{note}: {job.estimator}(...) drops it without a word"
    return f"{key}= is not an argument of {job.estimator}: the SDK drops it without a word{hint}"


def check_debugger(facts: JobFacts) -> list[Finding]:
    """Debugger hook + SageMaker checkpointing + SMDDP.

    SDK v2 facts (sagemaker 2.257): ``debugger_hook_config`` absent, ``None`` or ``{}``
    means a default hook (Debugger ON) in every region but a few; ``False`` turns it off.
    Framework estimators (PyTorch, TensorFlow, MXNet) then set it to ``False`` themselves,
    logging the guide's message, ONLY when BOTH ``checkpoint_s3_uri`` and
    ``checkpoint_local_path`` are given -- also when the user configured a hook on purpose.
    ModelTrainer sends no Debugger configuration at all.
    """
    job = facts.job
    if job.shape not in ("estimator", "api") or job.debugger_hook == "false" or not job.checkpoint_s3_uri:
        return []
    if "debugger_hook_config" in job.unknown:
        return []
    smddp = smddp_job(facts)
    if smddp is None:
        return []
    if job.shape == "api":
        return [finding(
            F.DEBUGGER_CHECKPOINT, ERROR, location=job.where("debugger_hook_config"),
            message=(f"the job ran with DebugHookConfig (the Debugger on), CheckpointConfig.S3Uri={job.checkpoint_s3_uri} "
                     f"and SMDDP ({smddp}): the combination the guide says SMDebug does not support"),
            fix=("submit without DebugHookConfig (SDK v2: debugger_hook_config=False; `smddp-infra job-config` "
                 "always does), or keep the Debugger and drop CheckpointConfig"),
        )]
    if job.region in DEBUGGER_UNSUPPORTED_REGIONS:
        return []
    hook = ("debugger_hook_config is not set, so the SDK adds its default hook"
            if job.debugger_hook in ("absent", "none") else "debugger_hook_config configures a hook")
    distributed = (job.instance_count or 1) > 1 or job.distribution is not None or job.estimator == "PyTorch"
    auto = job.estimator in AUTO_DISABLING_ESTIMATORS and bool(job.checkpoint_local_path) and distributed
    location = job.where("debugger_hook_config")
    if auto:
        if job.debugger_hook == "configured":
            return [finding(
                F.DEBUGGER_CHECKPOINT, WARNING, location=location,
                message=(f"{hook}, but with checkpoint_s3_uri and checkpoint_local_path both set and SMDDP on "
                         f"({smddp}) the {job.estimator} estimator silently replaces it with False: "
                         "the job runs without the Debugger you configured"),
                fix=(f"set {job.assign('debugger_hook_config', False)} to say so; to keep Debugger, remove checkpoint_s3_uri and "
                     "checkpoint_local_path and checkpoint manually in the script"),
            )]
        return [finding(
            F.DEBUGGER_CHECKPOINT, INFO, location=location,
            message=(f"{hook}; the {job.estimator} estimator turns it off only because both checkpoint_s3_uri and "
                     "checkpoint_local_path are set -- another estimator class, ModelTrainer or a raw "
                     "CreateTrainingJob request would not"),
            fix=f"set {job.assign('debugger_hook_config', False)} explicitly",
        )]
    why = (f"the {job.estimator} estimator never turns the Debugger off" if job.estimator not in AUTO_DISABLING_ESTIMATORS
           else "the SDK turns the Debugger off only when checkpoint_local_path is set as well" if not job.checkpoint_local_path
           else f"the {job.estimator} estimator turns the Debugger off only for a distributed job (instance_count above 1 "
                "or a distribution), which this one is not")
    return [finding(
        F.DEBUGGER_CHECKPOINT, ERROR, location=location,
        message=(f"Debugger ({hook}), SageMaker checkpointing (checkpoint_s3_uri={job.checkpoint_s3_uri}) "
                 f"and SMDDP ({smddp}) are all on, and {why}"),
        fix=(f"set {job.assign('debugger_hook_config', False)} (or, to keep Debugger, remove checkpoint_s3_uri and write "
             "checkpoints manually in the training script)"),
    )]


def check_deprecated_api(facts: JobFacts) -> list[Finding]:
    out = []
    for file, use in facts.deprecated:
        fix = SMDDP_REPLACEMENT
        if ".parallel" in use.module:
            fix = "from torch.nn.parallel import DistributedDataParallel as DDP; " + SMDDP_REPLACEMENT
        out.append(finding(
            F.DEPRECATED_SMDDP_API, WARNING, location=file.where(use.line),
            message=f"`{use.code}` uses {use.module}, deprecated since SMDDP v1.4.0",
            fix=fix,
        ))
    return out


def sharding(job: JobDescription, scripts: Sequence[ScriptFacts]) -> str:
    """How ranks get their samples: the job's ``sharding`` or what the scripts show."""
    if job.sharding:
        return job.sharding
    loaders = [loader for facts in scripts for loader in facts.loaders]
    padded = any(f.uses_distributed_sampler or f.uses_even_shards for f in scripts)
    if padded and all(loader.distributed is not False for loader in loaders):
        return "distributed_sampler"
    return "split"


def check_batches(facts: JobFacts) -> list[Finding]:
    job, scripts = facts.job, facts.files
    world = world_size(job)
    known = None not in (job.num_samples, job.batch_size, world)
    if not known:
        return _check_loaders(facts, world)
    assert job.num_samples is not None and job.batch_size is not None and world is not None
    how = sharding(job, scripts)
    if how != "split":
        return []  # DistributedSampler / even_shards give every rank the same count
    drop_last = bool(job.drop_last)
    n, b = job.num_samples, job.batch_size
    counts = split_batch_counts(n, world, b, drop_last=drop_last)
    if len(set(counts)) == 1:
        return []
    extra = n % world
    fixes = []
    if len(set(split_batch_counts(n, world, b, drop_last=not drop_last))) == 1:
        fixes.append(f"drop_last: {str(not drop_last).lower()}")
    fixes.append(f"num_samples: {world * (n // world)} (drop the last {extra} samples so {world} divides it)")
    even = even_batch_count(n, world, b, drop_last=drop_last)
    fixes.append(
        f"sampler=DistributedSampler(dataset, drop_last={drop_last}) or "
        f"smddp_infra.training.even_shards({n}, {world}, {b}, drop_last={drop_last}): {even} batches on every rank"
    )
    world_note = "" if job.world_size is not None else f" (instance_count {job.instance_count} x GPUs of {job.instance_type})"
    return [finding(
        F.UNEVEN_BATCHES, ERROR, location=job.where("num_samples"),
        message=(f"num_samples={n} split over world_size={world}{world_note} with batch_size={b}, "
                 f"drop_last={str(drop_last).lower()}: {_ranks(0, extra - 1)} run {counts[0]} batches, "
                 f"{_ranks(extra, world - 1)} run {counts[-1]}"),
        fix="any one of: " + "; ".join(fixes),
    )]


def _ranks(first: int, last: int) -> str:
    return f"rank {first}" if first == last else f"ranks {first}-{last}"


def _check_loaders(job_facts: JobFacts, world: Optional[int]) -> list[Finding]:
    """A loader every rank iterates to the end without a distributed sampler hangs only if
    the ranks run collectives after init (DDP's all-reduce...): ranks that run none cannot wait
    for each other, and a wrapper that shards (Fabric, Accelerate, HF/Lightning Trainer,
    DeepSpeed) installs the sampler itself."""
    job = job_facts.job
    if world == 1:
        return []
    if job.sharding in ("distributed_sampler", "even_shards"):
        return []
    if not job_facts.collectives:
        return []
    out = []
    for facts, loader in job_facts.loaders:
        if loader.distributed is not False or loader.drop_last is True:
            continue
        if loader.use in ("guarded", "never", "step_bounded", "wrapped"):
            continue  # one rank only, not iterated here, every rank runs the same steps, or sharded
        if loader.use == "evaluation":
            out.append(finding(
                F.DATALOADER_SAMPLER, INFO, location=facts.where(loader.line),
                message=(f"`{loader.code}` has no DistributedSampler and no drop_last=True; every rank iterates it "
                         f"without gradients (line {loader.use_line}): uneven counts hang only if that loop runs "
                         "collectives (an all_reduce per batch, DDP's buffer broadcast in forward)"),
                fix=("pass sampler=DistributedSampler(dataset, shuffle=False) if the evaluation loop runs collectives; "
                     "or evaluate on rank 0 only (if dist.get_rank() == 0:)"),
            ))
            continue
        if loader.use == "unclear":
            out.append(finding(
                F.DATALOADER_SAMPLER, INFO, location=facts.where(loader.line),
                message=(f"`{loader.code}` has no DistributedSampler and no drop_last=True, and is handed to code "
                         f"preflight cannot follow (line {loader.use_line}); if every rank iterates it to the end, "
                         "ranks may run different numbers of batches"),
                fix=("pass sampler=DistributedSampler(dataset) if every rank iterates it; nothing to do if only "
                     "one rank does or training stops on a step count"),
            ))
            continue
        out.append(finding(
            F.DATALOADER_SAMPLER, WARNING, location=facts.where(loader.line),
            message=(f"`{loader.code}` has no DistributedSampler and no drop_last=True and every rank iterates it "
                     f"to the end (line {loader.use_line}): ranks run different numbers of batches if their data "
                     "differ in length (per-rank files or shards, a ShardedByS3Key channel), which preflight cannot "
                     "check without num_samples, batch_size and world_size in the job file; with the same data on "
                     "every rank, every rank trains on all of it"),
            fix=("pass sampler=DistributedSampler(dataset) (or batch_sampler=even_shards(...).batches(rank)), "
                 "or add num_samples, batch_size and world_size to the job file so preflight can count"),
        ))
    return out


def check_checkpoint_uri(job: JobDescription) -> list[Finding]:
    uri = job.checkpoint_s3_uri
    if not uri or uri.endswith("/") or "checkpoint_s3_uri_end" in job.unknown:
        return []
    key = job.key("checkpoint_s3_uri")
    return [finding(
        F.CHECKPOINT_URI_SLASH, WARNING, location=job.where("checkpoint_s3_uri"),
        message=f"{key} {uri} does not end in '/': S3 treats it as a key prefix that also matches {uri}-old/...",
        fix=job.assign("checkpoint_s3_uri", f"{uri}/"),
    )]


def _under(path: str, directory: str) -> bool:
    directory = directory.rstrip("/") or "/"
    return path == directory or path.startswith(directory + "/")


def check_checkpoint_paths(job: JobDescription, scripts: Sequence[ScriptFacts]) -> list[Finding]:
    """Constant paths the script writes (torch.save, open(..., "w")) outside the synced path.

    SageMaker uploads only the checkpoint local path to ``checkpoint_s3_uri`` (and
    /opt/ml/model, /opt/ml/output once, at the end). Flagged: writes under the default
    /opt/ml/checkpoints when the job syncs another path (error), and other writes under
    /opt/ml or whose path says checkpoint/ckpt (error if it says so, else warning).
    """
    if not job.checkpoint_s3_uri or "checkpoint_local_path" in job.unknown:
        return []
    local = posixpath.normpath(job.effective_checkpoint_local_path)
    key = job.key("checkpoint_local_path")
    out = []
    for facts in scripts:
        for write in facts.writes:
            path = posixpath.normpath(write.path)  # where it leads, relative or not: a/../f.pt is f.pt
            if path.startswith("/"):
                if _under(path, local):
                    continue
                if not write.complete and local.startswith(path):
                    continue  # f"/opt/ml/check{x}": cannot tell
                if any(_under(path, d) for d in _UPLOADED_AT_END):
                    continue
            at_default = path.startswith("/") and _under(path, DEFAULT_CHECKPOINT_LOCAL_PATH)
            says_checkpoint = "checkpoint" in path.lower() or "ckpt" in path.lower()
            if not (at_default or says_checkpoint or _under(path, "/opt/ml")):
                continue  # scratch files, logs: not our business
            if at_default:
                severity = ERROR
                fix = f"{key}: {DEFAULT_CHECKPOINT_LOCAL_PATH} (or make the script write under {local})"
            else:
                severity = ERROR if says_checkpoint else WARNING
                name = posixpath.basename(path) if write.complete else "checkpoint.pt"
                fix = f"write under {local}, the {key} SageMaker syncs: os.path.join({local!r}, {name!r})"
            shown = write.path + ("..." if not write.complete else "")
            where = "relative to the working directory, " if not path.startswith("/") else ""
            out.append(finding(
                F.CHECKPOINT_LOCAL_PATH, severity, location=facts.where(write.line),
                message=(f"{write.how} writes {shown} ({where}outside {key} {local}): SageMaker uploads only "
                         f"{local} to {job.checkpoint_s3_uri}"),
                fix=fix,
            ))
    return out


def check_subnets(job: JobDescription, stacks: Iterable[StackSubnets], *, outputs_name: Optional[str]) -> list[Finding]:
    stacks = tuple(stacks)
    zones: dict[str, str] = {}
    for stack in stacks:
        zones.update(stack.availability_zones)
    zones.update(job.subnet_availability_zones)  # the job file wins where both know a subnet
    if job.subnets:
        subnets, source = job.subnets, job.where("subnets")
    elif job.kind != "job_file":
        return []  # a job built in code or sent to the API without subnets runs outside the VPC
    else:
        subnets = tuple(s for stack in stacks for s in stack.subnets)
        names = ", ".join(f"{stack.stack}.TrainingJobConfig" for stack in stacks)
        source = f"{outputs_name}: {names}"
    by_zone: dict[str, list[str]] = {}
    for subnet in subnets:
        if subnet in zones:
            by_zone.setdefault(zones[subnet], []).append(subnet)
    if len(by_zone) <= 1:
        return []
    stack_zones = {stack.stack_availability_zone for stack in stacks}
    keep = next((z for z in by_zone if z in stack_zones), None) or max(by_zone, key=lambda z: len(by_zone[z]))
    spread = "; ".join(f"{zone}: {', '.join(ids)}" for zone, ids in sorted(by_zone.items()))
    return [finding(
        F.SUBNETS_MULTI_AZ, ERROR, location=source,
        message=(f"the job's subnets span {len(by_zone)} Availability Zones ({spread}); SageMaker may place "
                 "instances in any of them, and EFA traffic does not cross AZs"),
        fix=(f"{job.key('subnets')}={by_zone[keep]!r}" if job.kind in ("notebook", "launcher", "live")
             else f"{job.key('subnets')}: [{', '.join(by_zone[keep])}]") + f" (only the subnets in {keep})",
    )]


def check_smddp_instance(facts: JobFacts) -> list[Finding]:
    """SMDDP only where it runs (the one list: :data:`smddp_infra.sizing.catalog.SMDDP_INSTANCE_TYPES`).

    SMDDP is in use when the program initialises the ``smddp`` backend (or uses the deprecated
    smdistributed APIs), not when a launcher or an import mentions it (REFERENCE: with
    ``backend="nccl"`` the job runs NCCL whatever the launcher). Current SMDDP releases support
    ml.p4d.24xlarge and ml.p4de.24xlarge; ml.p3dn.24xlarge is legacy; SDK v2's allow-list also
    admits ml.p3.16xlarge, which only older releases served.
    """
    from smddp_infra.sizing.catalog import SMDDP_INSTANCE_TYPES, smddp_support

    job, smddp = facts.job, facts.smddp
    opaque = smddp.state == NO and not facts.files and _smdistributed_launcher(facts) is not None
    if (smddp.state == NO and not opaque) or job.instance_type is None or "instance_type" in job.unknown:
        return []
    if job.instance_type.startswith("local"):
        return []  # SDK local mode ("local_gpu" is in its SMDDP allow-list): nothing is provisioned
    level = smddp_support(job.instance_type)
    if level == "current":
        return []
    location = job.where("instance_type")
    current = ", ".join(sorted(SMDDP_INSTANCE_TYPES))
    nccl_fix = (f"keep {job.instance_type} and {_nccl_launch(facts)}; or "
                f"{job.assign('instance_type', 'ml.p4d.24xlarge')} to keep SMDDP")
    if smddp.state == OPTIONAL:
        if level is not None:
            return []
        return [finding(
            F.SMDDP_INSTANCE, INFO, location=location,
            message=(f"the script tries SMDDP ({smddp.evidence}) but catches a failed import: on {job.instance_type}, "
                     "which SMDDP does not support, make sure it then falls back to NCCL"),
            fix='init_process_group(backend="nccl") when smdistributed is missing (current PyTorch DLCs carry none)',
        )]
    launched = _smdistributed_launcher(facts)
    if launched and level in ("legacy", "older-releases") and smddp.state != YES and (
            smddp.state == UNKNOWN or not facts.files):
        # the distribution alone starts smddprun: judged from it and the type even when the
        # program is opaque (git_config, an archive, a backend preflight cannot follow)
        program = (f"the backend the program starts is not known ({smddp.depends_on})" if smddp.state == UNKNOWN
                   else "preflight could not read the program")
        return [finding(
            F.SMDDP_INSTANCE, WARNING, location=location,
            message=(f"{launched} starts the processes with mpirun and smddprun on {job.instance_type}, {_LEVELS[level]}; "
                     f"current releases target {current}; {program}"),
            fix=f"{job.assign('instance_type', 'ml.p4d.24xlarge')} (or ml.p4de.24xlarge), or {_nccl_launch(facts)}",
        )]
    if opaque:
        return []  # an unread program on a type SMDDP does not support: PF-SMDDP-LAUNCHER says so
    if smddp.state == UNKNOWN:
        if level is not None:
            return []
        if sdk_v2_p5_refusal(job):
            return []  # PF-SDK-REFUSES: the job does not start at all
        return [finding(
            F.SMDDP_INSTANCE, WARNING, location=location,
            message=(f"{smddp.evidence} may start the smddp backend on {job.instance_type}, which SMDDP does not support "
                     f"({current}); it depends on {smddp.depends_on}"),
            fix=nccl_fix,
        )]
    if level == "legacy":
        return [finding(
            F.SMDDP_INSTANCE, WARNING, location=location,
            message=(f"SMDDP ({smddp.evidence}) on {job.instance_type}: a legacy SMDDP instance type that gets no new "
                     f"optimisations; current releases target {current}"),
            fix=f"{job.assign('instance_type', 'ml.p4d.24xlarge')} (or ml.p4de.24xlarge)",
        )]
    if level == "older-releases":
        return [finding(
            F.SMDDP_INSTANCE, WARNING, location=location,
            message=(f"SMDDP ({smddp.evidence}) on {job.instance_type}: the SDK v2 allow-list admits it, but only older SMDDP "
                     f"releases served it; current releases support {current}"),
            fix=f"{job.assign('instance_type', 'ml.p4d.24xlarge')} (or ml.p4de.24xlarge)",
        )]
    return [finding(
        F.SMDDP_INSTANCE, ERROR, location=location,
        message=(f"{smddp.evidence} {'uses the SMDDP collectives' if smddp.framework == 'tensorflow' else 'starts the smddp backend'}, and the job runs on {job.instance_type} ({location}), "
                 f"which SMDDP does not support; it supports {current} (ml.p3dn.24xlarge as legacy)"),
        fix=nccl_fix,
    )]


def check_smddp_launcher(facts: JobFacts) -> list[Finding]:
    """``pytorchddp`` / ``smdistributed.dataparallel`` without the smddp backend: a launcher choice.

    sagemaker 2.257.7 rewrites ``pytorchddp`` into ``smdistributed.dataparallel`` and starts the
    processes with ``mpirun`` and ``smddprun``; the collectives are still the backend the script
    asks for. On a type SMDDP supports that is fine; elsewhere whether the smdistributed launcher
    starts in the image is not established (UNCONFIRMED), so this is at most a warning.
    """
    from smddp_infra.sizing.catalog import smddp_support

    job, launcher = facts.job, facts.launcher
    if launcher is None or launcher[0] not in SMDDPRUN_LAUNCHERS or facts.smddp.state in (YES, UNKNOWN):
        return []  # in use or maybe: PF-SMDDP-INSTANCE says so
    if sdk_v2_p5_refusal(job):
        return []  # PF-SDK-REFUSES: the SDK refuses the job before the launcher matters
    if job.instance_type is None or "instance_type" in job.unknown or job.instance_type.startswith("local"):
        return []
    if smddp_support(job.instance_type) is not None:
        return []
    if not facts.files:
        backend = "preflight could not read the program, so the backend it starts is not known"
    elif facts.smddp.backend:
        backend = f"the script initialises backend {facts.smddp.backend!r} ({facts.smddp.backend_site})"
    else:
        backend = "preflight sees no smddp backend in the program"
    rewrite = ("SDK v2 (2.257.7) rewrites pytorchddp into smdistributed.dataparallel, which starts the processes with "
               "mpirun and smddprun" if launcher[0] == "pytorchddp"
               else "SDK v2 starts the processes with mpirun and smddprun")
    return [finding(
        F.SMDDP_LAUNCHER, WARNING, location=job.where("distribution"),
        message=(f"{launcher[1]} is a launcher, not the SMDDP collectives: {rewrite}; {backend}; SMDDP does not support "
                 f"{job.instance_type}, and whether smddprun starts in the image there is UNCONFIRMED"),
        fix=_launcher_fix(facts),
    )]


_LEVELS = {"legacy": "a legacy SMDDP instance type that gets no new optimisations",
           "older-releases": "which only older SMDDP releases served"}


def _smdistributed_launcher(facts: JobFacts) -> Optional[str]:
    """The distribution as written when it starts the processes with smddprun, else None."""
    launcher = facts.launcher
    if launcher is None or launcher[0] not in SMDDPRUN_LAUNCHERS:
        return None
    if facts.job.instance_type is None or "instance_type" in facts.job.unknown:
        return None
    return launcher[1]


def check_sdk_refusal(facts: JobFacts) -> list[Finding]:
    """SDK v2's own refusal (:func:`smddp_infra.preflight.job.sdk_v2_p5_refusal`): certain, so an error.

    The SDK raises from ``fit()`` (``hyperparameters()`` -> ``_distribution_configuration``)
    before any upload; nothing in the program matters then.
    """
    job = facts.job
    key = sdk_v2_p5_refusal(job)
    if key is None:
        return []
    rewrite = " (the PyTorch estimator rewrites pytorchddp into smdistributed first)" if key == "pytorchddp" else ""
    if tensorflow_job(facts):
        fix = ('distribution={"multi_worker_mirrored_strategy": {"enabled": True}} with tf.distribute in the script '
               "(SMDDP does not run on p5)")
    else:
        fix = ('distribution={"torch_distributed": {"enabled": True}} and init_process_group(backend="nccl") in the '
               "script (SMDDP does not run on p5; NCCL uses the same EFA network)")
    return [finding(
        F.SDK_REFUSES, ERROR, location=job.where("distribution"),
        message=(f"distribution with {key} on {job.instance_type} ({job.where('instance_type')}) and no "
                 f"torch_distributed: the SDK refuses it when fit() builds the job{rewrite} "
                 f"({SDK_V2_SOURCE}: ValueError: {SDK_V2_P5_REFUSAL})"),
        fix=fix,
    )]


def tensorflow_job(facts: JobFacts) -> bool:
    """A TensorFlow job: the TensorFlow SMDDP API, a TensorFlow estimator or image, or a program
    that imports tensorflow. TensorFlow does not use torchrun: its fixes name its own launchers."""
    job = facts.job
    if facts.smddp.framework == "tensorflow" or job.estimator == "TensorFlow":
        return True
    if job.framework is not None and job.framework[0] == "tensorflow":
        return True
    return any(use.module.split(".", 1)[0] == "tensorflow" for f in facts.files for use in f.imports)


def _nccl_launch(facts: JobFacts) -> str:
    """How the same job runs without SMDDP on the same EFA network, for its framework."""
    recipe = facts.job.recipe_backend
    if recipe is not None and recipe[0].lower() == "smddp":
        return (f"set distributed_backend: nccl in the recipe ({recipe[1]}), or override it with "
                'recipe_overrides (NCCL uses the same EFA network)')
    if tensorflow_job(facts):
        return ("replace smdistributed.dataparallel.tensorflow with tf.distribute.MultiWorkerMirroredStrategy "
                '(NCCL), launched with distribution={"multi_worker_mirrored_strategy": {"enabled": True}} '
                '(or Horovod with {"mpi": {"enabled": True}})')
    return ('use NCCL on the same EFA network: torch.distributed.init_process_group(backend="nccl") in the script, '
            'launched with distribution={"torch_distributed": {"enabled": True}} (ModelTrainer: distributed=Torchrun())')


def _launcher_fix(facts: JobFacts) -> str:
    if tensorflow_job(facts):
        return ('distribution={"multi_worker_mirrored_strategy": {"enabled": True}} (or {"mpi": {"enabled": True}} '
                "for Horovod), and keep the script's collectives")
    return ('distribution={"torch_distributed": {"enabled": True}} (torchrun; ModelTrainer: distributed=Torchrun()) '
            "and keep the script's backend")


def check_ddp_prefix(facts: JobFacts) -> list[Finding]:
    """Guide: "unexpected prefix (model. for example) attached to state_dict keys".

    A ``DistributedDataParallel`` wrapper keeps the network as ``.module``: its ``state_dict()``
    names every parameter ``module.<name>``. A load of the same file (same constant path, same
    path expression, or the model directory and the same file name) into a model that is not
    wrapped there, with ``strict`` on and no visible ``module.`` strip, fails: an error naming
    both sites, one per pair. Optimizer and scheduler state_dicts never carry the prefix. A
    DDP save that no load in the program reads back is a warning: it depends on the loader.
    """
    out: list[Finding] = []
    for pair in facts.pairs:
        save, load = pair.save, pair.load
        save_at, load_at = pair.save_file.where(save.line), pair.load_file.where(load.line)
        key = f'the "{load.key}" entry of' if load.key else ""
        if load.target == "plain":
            out.append(finding(
                F.DDP_PREFIX, ERROR, location=load_at,
                message=(f"`{load.code}` loads into {load.model} (not wrapped in DistributedDataParallel there) "
                         f"{key + ' ' if key else ''}the file that {save_at} saves with module. keys "
                         f"(`{save.code}`); same file: {pair.how}"),
                fix=(f"{load.model}.load_state_dict(smddp_infra.training.strip_ddp_prefix(torch.load(...))), or save "
                     f"{save.model}.module.state_dict() at {save_at}"),
            ))
        else:
            out.append(finding(
                F.DDP_PREFIX, WARNING, location=load_at,
                message=(f"`{load.code}` loads the file {save_at} saves with module. keys (`{save.code}`; {pair.how}); "
                         f"it fails unless {load.model} is a DistributedDataParallel wrapper when it loads, which "
                         "preflight cannot see"),
                fix=(f"save {save.model}.module.state_dict() at {save_at}, or load with "
                     "smddp_infra.training.strip_ddp_prefix(torch.load(...))"),
            ))
    for file, save in facts.unpaired_saves:
        out.append(finding(
            F.DDP_PREFIX, WARNING, location=file.where(save.line),
            message=(f"`{save.code}` saves the state_dict of {save.model}, a DistributedDataParallel wrapper: every key "
                     "is saved as module.<name>; no load in this job reads it back, so whether its loader strips the "
                     "prefix is not known"),
            fix=(f"save {save.model}.module.state_dict() instead, or load with "
                 "smddp_infra.training.strip_ddp_prefix(torch.load(path))"),
        ))
    return out


def check_entry_point(facts: JobFacts) -> list[Finding]:
    """SDK v2 ``fit()`` (``fw_utils.validate_source_dir``) and SDK v3 ``ModelTrainer`` refuse an
    entry point that is not a file inside ``source_dir``, before any upload."""
    job, program = facts.job, facts.program
    out = []
    missing = program.missing_entry
    if missing is not None:
        out.append(finding(
            F.ENTRY_POINT_MISSING, ERROR, location=job.where("entry_point"),
            message=(f"{job.key('entry_point')} {missing.entry_point} is not a file in {job.key('source_dir')} "
                     f"{missing.directory}: the SDK refuses the job before upload "
                     f'(ValueError: No file named "{missing.entry_point}" was found in directory "{missing.directory}")'),
            fix=f"put {missing.entry_point} in {missing.directory}, or set {job.key('entry_point')} to a script that is there",
        ))
    absent = program.missing_source_dir
    if absent is not None:
        where = "the notebook's folder" if job.kind == "notebook" else "the launcher's folder (or any folder above it)"
        if job.shape == "model_trainer":
            refusal = (f"ModelTrainer refuses it when it is built (sagemaker-train 1.27.0 ModelTrainer._validate_source_code: "
                       f"ValueError: Invalid 'source_dir' path: {absent.source_dir}. Must be a valid local directory, "
                       "s3 uri or path to tar.gz file stored locally or in s3.)")
        else:
            refusal = ("fit() refuses the job before upload (sagemaker 2.257.7 fw_utils.validate_source_dir: "
                       f'ValueError: No file named "{absent.entry_point}" was found in directory "{absent.source_dir}".)')
        out.append(finding(
            F.SOURCE_DIR_MISSING, ERROR, location=job.where("source_dir"),
            message=(f"{job.key('source_dir')} {absent.source_dir} does not exist ({absent.directory}) relative to "
                     f"{where}, and no step in {job.path.name} creates it (mkdir, clone, copy, download, %%writefile): "
                     f"{refusal}"),
            fix=(f"create {absent.source_dir}/ with {absent.entry_point} in it beside {job.path.name}, or set "
                 f"{job.key('source_dir')} to the folder that holds the training code"),
        ))
    shell = program.shell
    if shell is not None and shell.setting == "entry_point":
        parts = []
        if shell.followed:
            parts.append("followed " + ", ".join(shell.followed))
        if shell.missing:
            parts.append("not found here (fetched at run time?): " + ", ".join(shell.missing))
        out.append(finding(
            F.NON_PYTHON_ENTRY_POINT, INFO, location=job.where("entry_point"),
            message=(f"{job.key('entry_point')} {shell.name} is not a Python script; preflight reads the Python "
                     f"scripts it runs{': ' + '; '.join(parts) if parts else ' (it runs none preflight can see)'}"),
            fix="nothing to fix; pass the scripts it runs to check them: smddp-infra preflight INPUT path/to/script.py",
        ))
    return out


def instance_type_to_look_up(job: JobDescription) -> Optional[str]:
    """The ``instance_type`` only botocore's enum can judge, else None: it is known, not SDK local
    mode and not a catalogued EFA type (those are in the enum: tests/test_instance_catalog.py, so
    they never load the model). The rule looks it up; without botocore the report says it did not."""
    from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES

    value = job.instance_type
    if value is None or "instance_type" in job.unknown or value.startswith("local") or value in EFA_INSTANCE_TYPES:
        return None
    return value


def check_instance_type(job: JobDescription) -> list[Finding]:
    """An ``instance_type`` outside botocore's ``TrainingInstanceType`` enum
    (:mod:`smddp_infra.preflight.instance_types`): CreateTrainingJob rejects it."""
    value = instance_type_to_look_up(job)
    if value is None or job.kind == "describe_training_job":
        return []
    from smddp_infra.preflight.instance_types import training_instance_types

    known = training_instance_types()
    if known is None or value in known[1]:
        return []
    import difflib

    version, enum = known
    near = difflib.get_close_matches(value, sorted(enum), n=1, cutoff=0.8)
    hint = f"; did you mean {near[0]}?" if near else ""
    return [finding(
        F.INSTANCE_TYPE_UNKNOWN, ERROR, location=job.where("instance_type"),
        message=(f"{job.key('instance_type')} {value} is not a SageMaker training instance type: the TrainingInstanceType "
                 f"enum of botocore {version}'s SageMaker service model ({len(enum)} types, ResourceConfig.InstanceType) "
                 f"does not list it, so CreateTrainingJob rejects the job{hint}"),
        fix=(job.assign("instance_type", near[0]) if near else
             f"set {job.key('instance_type')} to a training instance type (ml.p4d.24xlarge, ml.p5.48xlarge, ...)"),
    )]


def check_stopping_condition(job: JobDescription) -> list[Finding]:
    """sagemaker-train 1.27.0 (``sagemaker/train/defaults.py``): a ``ModelTrainer`` without a
    ``stopping_condition`` (or without ``max_runtime_in_seconds``) gets
    ``DEFAULT_MAX_RUNTIME_IN_SECONDS = 3600``; SDK v2's default ``max_run`` is 24 h."""
    if job.shape != "model_trainer" or job.stopping_condition is not False:
        return []
    return [finding(
        F.STOPPING_CONDITION, WARNING, location=job.where("stopping_condition"),
        message=("the ModelTrainer sets no stopping_condition with max_runtime_in_seconds: SDK v3 (sagemaker-train 1.27.0) "
                 f"uses DEFAULT_MAX_RUNTIME_IN_SECONDS = {SDK_V3_DEFAULT_MAX_RUNTIME}, so SageMaker stops the job after one hour"),
        fix=(("stopping_condition=StoppingCondition(max_runtime_in_seconds=...)" if job.kind != "job_file"
              else "stopping_condition: {max_runtime_in_seconds: ...}") + f" with the run time the job needs (at most {MAX_RUNTIME_LIMIT_SECONDS}, 28 days: the API's limit)"),
    )]


def check_api_shape(job: JobDescription, problems: Optional[Sequence[str]]) -> list[Finding]:
    if not problems:
        return []
    request = job.kind == "create_training_job"
    what = "CreateTrainingJob request" if request else "DescribeTrainingJob response"
    return [finding(
        F.API_SHAPE, ERROR if request else INFO, location=f"{job.path.name}",
        message=f"botocore's {what} shape: {problem}",
        fix=("fix the request so botocore accepts it (the client refuses it otherwise)" if request
             else "nothing to fix in a response: a newer API or a trimmed copy (the rules read what is there)"),
    ) for problem in problems]


#: The settings each job rule reads: when one is unknown the rule did not really run.
RULE_NEEDS: dict[str, tuple[str, ...]] = {
    F.DEBUGGER_CHECKPOINT.id: ("debugger_hook_config", "checkpoint_s3_uri", "checkpoint_local_path", "distribution"),
    F.SMDDP_INSTANCE.id: ("instance_type",),
    F.SMDDP_LAUNCHER.id: ("instance_type", "distribution"),
    F.SDK_REFUSES.id: ("instance_type", "distribution"),
    F.INSTANCE_TYPE_UNKNOWN.id: ("instance_type",),
    F.UNEVEN_BATCHES.id: ("instance_type", "instance_count"),
    F.CHECKPOINT_URI_SLASH.id: ("checkpoint_s3_uri", "checkpoint_s3_uri_end"),
    F.CHECKPOINT_LOCAL_PATH.id: ("checkpoint_s3_uri", "checkpoint_local_path"),
    F.SUBNETS_MULTI_AZ.id: ("subnets",),
}


def not_evaluated(job: JobDescription) -> list[str]:
    """``"PF-SMDDP-INSTANCE not evaluated: instance_type unknown (...)"``, one per rule and setting."""
    out = []
    for rule_id, needs in RULE_NEEDS.items():
        for setting in needs:
            if setting in job.unknown:
                out.append(f"{rule_id} not evaluated: {job.key(setting)} unknown ({job.unknown[setting]})")
    return out
