"""What a job does, derived from its settings and the program it runs (the rules read only this).

* **launcher**: the ``distribution`` key (SDK v2) or ``distributed=`` class (SDK v3);
* **SMDDP in use**: the program initialises the ``smddp`` backend
  (``init_process_group(backend="smddp")``, which needs ``torch_smddp`` imported) or uses the
  deprecated smdistributed APIs. Guards and backend expressions are evaluated with the job's
  hyperparameters (SageMaker passes them as ``--key value``, so ``args.backend`` is the
  hyperparameter ``backend`` when the job sets it, else the argparse default); a guard that
  cannot be decided leaves the answer *unknown*, never *yes*;
* **data**: the program's loaders (with the wrappers that shard them) and the collectives it
  runs after init;
* **checkpoints**: each DDP save tied to the loads of the same file (same constant path, same
  expression, or the model directory and the same file name), one pair per save and load.
"""

from __future__ import annotations

import ast
import json
import posixpath
from dataclasses import dataclass, replace
from typing import Any, Mapping, Optional

from smddp_infra.preflight.api import SMDDP_HYPERPARAMETER
from smddp_infra.preflight.extract import shown
from smddp_infra.preflight.job import SMDDPRUN_LAUNCHERS, JobDescription
from smddp_infra.preflight.program import Program
from smddp_infra.preflight.script import (
    NO_DEFAULT,
    ArgDefault,
    Guard,
    GuardedUse,
    LoaderCall,
    ScriptFacts,
    StateLoad,
    StateSave,
)

YES, NO, UNKNOWN, OPTIONAL = "yes", "no", "unknown", "optional"


@dataclass(frozen=True)
class Unknown:
    reason: str


@dataclass(frozen=True)
class SmddpUse:
    """Whether the job's program uses the SMDDP collectives, and the evidence."""

    state: str  # YES, NO, UNKNOWN, OPTIONAL (only where a failed import is caught)
    #: "train.py:12 `dist.init_process_group(backend="smddp")`"
    evidence: Optional[str] = None
    #: for UNKNOWN: what the answer depends on
    depends_on: Optional[str] = None
    #: the backend the program initialises when known ("nccl", "gloo", "smddp")
    backend: Optional[str] = None
    backend_site: Optional[str] = None
    #: "tensorflow" when the evidence is the TensorFlow SMDDP API, else None (PyTorch)
    framework: Optional[str] = None


@dataclass(frozen=True)
class CheckpointPair:
    """A DDP save and a load of the same file into a model that is not wrapped there."""

    save_file: ScriptFacts
    save: StateSave
    load_file: ScriptFacts
    load: StateLoad
    how: str  # why they are the same file


@dataclass(frozen=True)
class JobFacts:
    job: JobDescription
    program: Program
    launcher: Optional[tuple[str, str]]
    smddp: SmddpUse
    #: deprecated smdistributed API uses that run (guard true or undecidable)
    deprecated: tuple[tuple[ScriptFacts, GuardedUse], ...]
    loaders: tuple[tuple[ScriptFacts, LoaderCall], ...]
    collectives: tuple[str, ...]
    pairs: tuple[CheckpointPair, ...]
    #: DDP saves no load in the program reads back
    unpaired_saves: tuple[tuple[ScriptFacts, StateSave], ...]

    @property
    def files(self) -> tuple[ScriptFacts, ...]:
        return self.program.files


# ---------------------------------------------------------------------------- evaluation


class EnvText(str):
    """A value from the container's environment: Python truthiness (``"0"`` is true)."""


@dataclass(frozen=True)
class FrameworkParams:
    """``SM_FRAMEWORK_PARAMS`` as far as the job decides it: the SMDDP flag and whether it is there."""

    dp: bool
    present: bool


def sagemaker_dp_flag(job: JobDescription) -> Any:
    """The ``sagemaker_distributed_dataparallel_enabled`` SageMaker gives this job, or :class:`Unknown`.

    SDK v2 sets it from ``smdistributed.dataparallel.enabled`` (PyTorch rewrites ``pytorchddp``
    into that first); an API job carries it as a hyperparameter; ModelTrainer has no such option.
    """
    if job.smddp_setting:
        return True
    if "distribution" in job.unknown:
        return Unknown(f"distribution ({job.unknown['distribution']})")
    dist = job.distribution or {}
    smd = dist.get("smdistributed")
    if isinstance(smd, Mapping):
        dp = smd.get("dataparallel")
        return bool(isinstance(dp, Mapping) and dp.get("enabled"))
    ddp = dist.get("pytorchddp")
    return bool(job.estimator == "PyTorch" and isinstance(ddp, Mapping) and ddp.get("enabled"))


class Env:
    """Values a training script sees: hyperparameters first, then argparse defaults; the job's
    environment and what SageMaker derives from the job (``SM_FRAMEWORK_PARAMS``, ``SM_HOSTS``)."""

    def __init__(self, job: JobDescription, files: tuple[ScriptFacts, ...]) -> None:
        self.job = job
        self.hyper = {str(k).replace("-", "_"): v for k, v in job.hyperparameters.items()}
        self.hyper_unknown = job.hyperparameters_unknown
        self.defaults: dict[str, ArgDefault] = {}
        for facts in files:
            for default in facts.argparse:
                self.defaults.setdefault(default.dest, default)

    def argument(self, name: str) -> Any:
        if name in self.hyper:
            value = self.hyper[name]
            return value if not _is_unknown_value(value) else Unknown(f"hyperparameter {name} is not known before the job runs")
        default = self.defaults.get(name)
        if default is None:
            return Unknown(f"args.{name} (no argparse argument or hyperparameter preflight can see)")
        if self.hyper_unknown:
            return Unknown(f"args.{name}: {self.hyper_unknown}")
        if default.default is NO_DEFAULT:
            return Unknown(f"args.{name} ({default.flag} has no default and the job passes no {name} hyperparameter)")
        return default.default

    def evaluate(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Attribute):
            return self.argument(node.attr)
        if isinstance(node, ast.Subscript) and _dotted(node.value) == "os.environ":
            key = self.evaluate(node.slice)
            return self._environment(key, Unknown("os.environ[...]"))
        if isinstance(node, ast.Subscript):
            owner, key = self.evaluate(node.value), self.evaluate(node.slice)
            if isinstance(owner, FrameworkParams):
                return self._framework_param(owner, key, Unknown(f"SM_FRAMEWORK_PARAMS[{key!r}] may be missing"))
            if isinstance(owner, dict) and isinstance(key, str) and key in owner:
                return owner[key]
            if isinstance(owner, Unknown):
                return owner
            return Unknown(f"{shown(node)}")
        if isinstance(node, ast.Call):
            callee = _dotted(node.func)
            leaf = callee.rsplit(".", 1)[-1]
            if leaf == "is_sagemaker_dp_enabled" and not node.args:
                return sagemaker_dp_flag(self.job)
            if leaf == "is_sagemaker_mp_enabled" and not node.args:
                return self._mp_enabled()
            if callee == "json.loads" and len(node.args) == 1:
                text = self.evaluate(node.args[0])
                if isinstance(text, (FrameworkParams, Unknown)):
                    return text
                try:
                    return json.loads(text) if isinstance(text, str) else Unknown(f"json.loads({text!r})")
                except ValueError:
                    return Unknown(f"json.loads of {text!r}")
            if callee == "len" and len(node.args) == 1:
                value = self.evaluate(node.args[0])
                return len(value) if isinstance(value, (list, tuple, str, dict)) else (
                    value if isinstance(value, Unknown) else Unknown(f"len({shown(node.args[0])})"))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
                owner = self.evaluate(node.func.value)
                if isinstance(owner, FrameworkParams):
                    key = self.evaluate(node.args[0])
                    fallback = self.evaluate(node.args[1]) if len(node.args) > 1 else None
                    return self._framework_param(owner, key, fallback)
                if isinstance(owner, dict):
                    key = self.evaluate(node.args[0])
                    return owner.get(key, self.evaluate(node.args[1]) if len(node.args) > 1 else None)
            if callee in ("os.environ.get", "os.getenv") and node.args:
                fallback = self.evaluate(node.args[1]) if len(node.args) > 1 else None
                return self._environment(self.evaluate(node.args[0]), fallback)
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("lower", "upper", "strip") and not node.args:
                value = self.evaluate(node.func.value)
                return getattr(value, node.func.attr)() if isinstance(value, str) else value
            if callee in ("str", "bool", "int") and len(node.args) == 1:
                value = self.evaluate(node.args[0])
                if isinstance(value, Unknown):
                    return value
                try:
                    return {"str": str, "bool": bool, "int": int}[callee](value)
                except (TypeError, ValueError):
                    return Unknown(f"{callee}({value!r})")
            return Unknown(f"the result of {shown(node)}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            value = self.evaluate(node.operand)
            return value if isinstance(value, Unknown) else not _truthy(value)
        if isinstance(node, ast.BoolOp):
            # three-valued: one true part decides an `or`, one false part an `and`, whatever is unknown
            result: Any = None
            pending: Optional[Unknown] = None
            for part in node.values:
                result = self.evaluate(part)
                if isinstance(result, Unknown):
                    pending = pending or result
                    continue
                if isinstance(node.op, ast.Or) and _truthy(result):
                    return result
                if isinstance(node.op, ast.And) and not _truthy(result):
                    return result
            return pending if pending is not None else result
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = self.evaluate(node.left), self.evaluate(node.comparators[0])
            for side in (left, right):
                if isinstance(side, Unknown):
                    return side
            op = node.ops[0]
            if isinstance(right, FrameworkParams) and isinstance(op, (ast.In, ast.NotIn)):
                if left != SMDDP_HYPERPARAMETER:
                    return Unknown(f"whether SM_FRAMEWORK_PARAMS holds {left!r}")
                return right.present if isinstance(op, ast.In) else not right.present
            try:
                if isinstance(op, (ast.Eq, ast.Is)):
                    return _same(left, right)
                if isinstance(op, (ast.NotEq, ast.IsNot)):
                    return not _same(left, right)
                if isinstance(op, ast.In):
                    return any(_same(left, r) for r in right) if isinstance(right, (list, tuple, set)) else left in right
                if isinstance(op, ast.NotIn):
                    return not any(_same(left, r) for r in right) if isinstance(right, (list, tuple, set)) else left not in right
                if isinstance(op, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)) and isinstance(left, (int, float)) \
                        and isinstance(right, (int, float)):
                    return {ast.Gt: left > right, ast.GtE: left >= right, ast.Lt: left < right,
                            ast.LtE: left <= right}[type(op)]
            except TypeError:
                pass
            return Unknown(f"the comparison {shown(node)}")
        if isinstance(node, ast.IfExp):
            test = self.evaluate(node.test)
            if isinstance(test, Unknown):
                return test
            return self.evaluate(node.body if _truthy(test) else node.orelse)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = [self.evaluate(e) for e in node.elts]
            return next((i for i in items if isinstance(i, Unknown)), tuple(items))
        if isinstance(node, ast.Name):
            return Unknown(f"{node.id} (a value preflight cannot follow)")
        return Unknown(f"{shown(node)}")

    def _environment(self, key: Any, fallback: Any) -> Any:
        """A variable of the container: the job's ``environment``, or what SageMaker derives from the job."""
        job = self.job
        if isinstance(key, str) and key in job.environment:
            value = job.environment[key]
            if _is_unknown_value(value):
                return Unknown(f"environment variable {key} (set by the job to a value preflight cannot resolve)")
            return EnvText(str(value))
        if isinstance(key, str) and key.startswith("SM_HP_"):
            name = key[len("SM_HP_"):].lower()
            if name in self.hyper:
                return self.argument(name)
            return fallback if not self.hyper_unknown else Unknown(self.hyper_unknown)
        if key == "SM_FRAMEWORK_PARAMS":
            flag = sagemaker_dp_flag(job)
            if isinstance(flag, Unknown):
                return flag
            dist = job.distribution or {}
            return FrameworkParams(dp=flag, present=bool(job.smddp_setting) or "smdistributed" in dist or (
                job.estimator == "PyTorch" and "pytorchddp" in dist))
        if key == "SM_HOSTS" and job.instance_count is not None and "instance_count" not in job.unknown:
            return EnvText(json.dumps([f"algo-{i + 1}" for i in range(job.instance_count)]))
        if isinstance(key, str) and key.startswith("SMDATAPARALLEL_") and sagemaker_dp_flag(job) is False \
                and not job.environment_unknown:
            # set by the smdistributed launcher (smddprun), not by SageMaker for other launchers
            return fallback
        return Unknown(f"environment variable {key}")

    def _framework_param(self, params: FrameworkParams, key: Any, fallback: Any) -> Any:
        if key != SMDDP_HYPERPARAMETER:
            return Unknown(f"SM_FRAMEWORK_PARAMS {key!r}")
        return params.dp if params.present else fallback

    def _mp_enabled(self) -> Any:
        """transformers' ``is_sagemaker_mp_enabled()``: false unless the job asks for smdistributed
        model parallelism (SageMaker then sets ``SM_HP_MP_PARAMETERS``); otherwise not known here."""
        job = self.job
        if "distribution" in job.unknown:
            return Unknown(f"distribution ({job.unknown['distribution']})")
        if job.distributed and job.distributed.upper() == "SMP":
            return Unknown("is_sagemaker_mp_enabled() under distributed=SMP()")
        smd = (job.distribution or {}).get("smdistributed")
        mp = smd.get("modelparallel") if isinstance(smd, Mapping) else None
        if isinstance(mp, Mapping) and mp.get("enabled"):
            return Unknown("is_sagemaker_mp_enabled() (the job enables smdistributed modelparallel)")
        return False

    def guards(self, guards: tuple[Guard, ...]) -> tuple[str, Optional[str]]:
        """(YES, None) when every guard holds, (NO, the guard) when one does not, else (UNKNOWN, why)."""
        why: Optional[str] = None
        for guard in guards:
            if "is_initialized" in guard.code or "is_available" in guard.code:
                continue  # `if not dist.is_initialized():` only keeps init from running twice
            value = self.evaluate(guard.test)
            if isinstance(value, Unknown):
                why = why or f"`if {guard.code}:` ({value.reason})"
                continue
            if _truthy(value) != guard.holds:
                return NO, guard.code
        return (UNKNOWN, why) if why else (YES, None)


def _is_unknown_value(value: Any) -> bool:
    return type(value).__name__ in ("Unknown", "Partial")


def _truthy(value: Any) -> bool:
    if isinstance(value, EnvText):
        return bool(value)
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "no", "none")
    return bool(value)


def _same(left: Any, right: Any) -> bool:
    """Hyperparameters arrive as text: ``"False"`` equals False, ``"8"`` equals 8."""
    if isinstance(left, str) and not isinstance(right, str) and right is not None:
        return left.strip().lower() == str(right).lower()
    if isinstance(right, str) and not isinstance(left, str) and left is not None:
        return right.strip().lower() == str(left).lower()
    return bool(left == right)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


# ---------------------------------------------------------------------------- SMDDP in use


def smddp_use(env: Env, files: tuple[ScriptFacts, ...], launcher: Optional[tuple[str, str]] = None) -> SmddpUse:
    yes: Optional[str] = None
    unknown: Optional[tuple[str, str]] = None
    optional: Optional[str] = None
    backend: Optional[str] = None
    backend_site: Optional[str] = None
    # the first torch_smddp import that may run, and the first such inside a try that catches its failure
    imports_smddp: Optional[str] = None
    tried_smddp: Optional[str] = None
    for facts in files:
        for use in facts.smddp_imports:
            if env.guards(use.guards)[0] != NO:
                where = f"{facts.where(use.line)} `{use.code}`"
                imports_smddp = imports_smddp or where
                if use.optional:
                    tried_smddp = tried_smddp or where
    sites = 0
    for facts in files:
        for site in facts.backends:
            where = f"{facts.where(site.line)} `{site.code}`"
            state, why = env.guards(site.guards)
            if state == NO:
                continue
            sites += 1
            value: Any = env.evaluate(site.expr) if site.expr is not None else "the default (nccl on GPUs)"
            if isinstance(value, Unknown):
                if imports_smddp and unknown is None:
                    unknown = (where, f"the backend: {value.reason}")
                continue
            if not isinstance(value, str):
                continue
            if value.lower() != "smddp":
                if state == YES and backend is None:
                    backend, backend_site = value, where
                continue
            if site.optional and optional is None:
                optional = where
            elif state == YES and yes is None:
                yes = where
            elif unknown is None:
                unknown = (where, f"whether {why} holds")
    # the deprecated PyTorch APIs, then the TensorFlow API: each use decides by its guards
    first_use: dict[str, Optional[str]] = {}
    for kind in ("deprecated", "tf_smddp"):
        first_yes: Optional[str] = None
        for facts in files:
            for use in getattr(facts, kind):
                state, why = env.guards(use.guards)
                label = f"the deprecated {use.module}" if kind == "deprecated" else use.module
                where = f"{facts.where(use.line)} `{use.code}` ({label})"
                if state == NO:
                    continue
                if use.optional:
                    optional = optional or where
                elif state == YES:
                    first_yes = first_yes or where
                elif unknown is None:
                    unknown = (where, f"whether {why} holds")
        first_use[kind] = first_yes
    yes = yes or first_use["deprecated"]
    tf_yes = first_use["tf_smddp"]
    recipe = env.job.recipe_backend
    if recipe is not None:
        where = f"{recipe[1]} `distributed_backend: {recipe[0]}` (the training recipe)"
        if recipe[0].lower() == "smddp":
            yes = yes or where
        elif backend is None:
            backend, backend_site = recipe[0], where
    if yes or tf_yes:
        framework = "tensorflow" if tf_yes and not yes else None
        return SmddpUse(YES, yes or tf_yes, backend="smddp", backend_site=yes or tf_yes, framework=framework)
    if imports_smddp and sites == 0 and unknown is None:
        if tried_smddp:
            optional = optional or tried_smddp
        else:
            unknown = (imports_smddp, "the program initialises no process group preflight can see (a library may ask for smddp)")
    hf = [(f, t) for f in files for t in f.trainers if t.startswith(("transformers", "trl", "setfit"))]
    if unknown is None and hf and sites == 0 and launcher is not None and launcher[0] in SMDDPRUN_LAUNCHERS:
        unknown = (f"{hf[0][0].name} ({hf[0][1]})",
                   "the Hugging Face Trainer, which may start the smddp backend itself when SageMaker's "
                   "smdistributed launcher is on (UNCONFIRMED for this transformers version)")
    tf = "tensorflow" if any(f.tf_smddp for f in files) else None
    if unknown:
        return SmddpUse(UNKNOWN, unknown[0], depends_on=unknown[1], backend=backend, backend_site=backend_site,
                        framework=tf)
    if optional:
        return SmddpUse(OPTIONAL, optional, backend=backend, backend_site=backend_site)
    return SmddpUse(NO, backend=backend, backend_site=backend_site)


# ---------------------------------------------------------------------------- checkpoints


def same_file(save: StateSave, load: StateLoad, *, one_file: bool) -> Optional[str]:
    """Why ``load`` reads the file ``save`` wrote, or None when that is not shown."""
    a, b = save.path, load.path
    if a.literal and b.literal:
        return "the same path" if posixpath.normpath(a.literal) == posixpath.normpath(b.literal) else None
    if a.text == b.text and (not (a.open_name or b.open_name) or (one_file and a.scope == b.scope)):
        return f"the same path expression ({a.text})"
    if a.model_dir and b.model_dir and a.basename and a.basename == b.basename:
        return f"the model directory and the same file name ({a.basename})"
    if a.literal and b.basename is None and not b.open_name and a.text == b.text:
        return "the same path"
    return None


def _keys_match(save: StateSave, load: StateLoad) -> bool:
    if save.keys is None:
        return load.key is None
    return load.key is not None and load.key in save.keys


def checkpoint_pairs(files: tuple[ScriptFacts, ...], serving: tuple[ScriptFacts, ...] = (),
                     ) -> tuple[tuple[CheckpointPair, ...], tuple[tuple[ScriptFacts, StateSave], ...]]:
    """Each DDP save with the plain loads of the same file: in the program, and in the serving
    code beside it (``model_fn``) for what the job leaves in the model directory."""
    pairs: dict[tuple[str, int, str, int], CheckpointPair] = {}
    paired: set[tuple[str, int]] = set()
    saves = [(f, s) for f in files for s in f.ddp_saves]
    for load_file in (*files, *serving):
        for load in load_file.state_loads:
            for save_file, save in saves:
                how = same_file(save, load, one_file=save_file is load_file)
                if how is None or not _keys_match(save, load):
                    continue
                if load_file in serving and not (save.path.model_dir and load.path.model_dir):
                    continue
                if load.target == "fine":
                    paired.add((save_file.name, save.line))  # read back correctly: nothing to report
                    continue
                key = (save_file.name, save.line, load_file.name, load.line)
                pairs.setdefault(key, CheckpointPair(save_file, save, load_file, load, how))
                paired.add((save_file.name, save.line))
    unpaired = tuple((f, s) for f, s in saves if (f.name, s.line) not in paired)
    return tuple(pairs.values()), unpaired


# ---------------------------------------------------------------------------- the job


def _across_modules(loader: LoaderCall, files: tuple[ScriptFacts, ...]) -> LoaderCall:
    """A loader a function returns to another module: iterated if a program file iterates that call."""
    if not loader.use.startswith("returned:"):
        return loader
    function = loader.use.split(":", 1)[1]
    for facts in files:
        if function in facts.iterated_calls:
            return replace(loader, use="iterated", use_line=loader.line)
    return replace(loader, use="unclear")


def derive(job: JobDescription, program: Program) -> JobFacts:
    files = program.files
    env = Env(job, files)
    deprecated = []
    for facts in files:
        for use in facts.deprecated:
            if env.guards(use.guards)[0] != NO:
                deprecated.append((facts, use))
    collectives = tuple(sorted({f"{facts.where(line)} {name}" for facts in files for line, name in facts.collectives}))
    pairs, unpaired = checkpoint_pairs(files, program.serving)
    return JobFacts(
        job=job,
        program=program,
        launcher=job.launcher,
        smddp=smddp_use(env, files, job.launcher),
        deprecated=tuple(deprecated),
        loaders=tuple((facts, _across_modules(loader, files)) for facts in files for loader in facts.loaders),
        collectives=collectives,
        pairs=pairs,
        unpaired_saves=unpaired,
    )

