"""Preflight: judge a training job and its scripts before a GPU hour is spent.

Pure Python (``ast`` for code, never executing it; PyYAML for job files; never aws_cdk).
It reads what users have, detected by content (not only by extension):

* a **Jupyter notebook** (:mod:`.notebook`): code cells in order, ``%%writefile`` cells as files;
* a **launcher script** that builds an SDK v2 estimator or a ``ModelTrainer`` (:mod:`.extract`);
* **SageMaker API JSON**: a ``CreateTrainingJob`` request or ``DescribeTrainingJob`` response (:mod:`.api`);
* a **job file** (YAML/JSON of SDK v2 Estimator arguments or a ModelTrainer shape, :mod:`.job`).

Each rule turns a failure from SageMaker's SMDDP troubleshooting guide into a finding with
the symptom the job would show and the exact fix (see docs/troubleshooting.md):
:mod:`.checks` holds the rules, :mod:`.findings` the rule ids, :mod:`.script` what a
training script does, :mod:`.outputs` the subnets of a deployed network.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from smddp_infra.preflight import checks
from smddp_infra.preflight import findings as F
from smddp_infra.preflight.errors import PreflightInputError
from smddp_infra.preflight.findings import ERROR, INFO, RULES, SEVERITIES, Finding, finding
from smddp_infra.preflight.job import JobDescription, parse_job
from smddp_infra.preflight.outputs import StackSubnets, read_outputs
from smddp_infra.preflight.script import ScriptFacts, analyse_script, analyse_source

__all__ = ["JobReport", "PreflightInputError", "PreflightReport", "RULES", "Finding", "JobDescription",
           "check_estimator", "run_preflight"]

#: Version of the ``--json`` document (docs/troubleshooting.md describes it). Keys are only added.
JSON_VERSION = 2
_SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints", ".git", ".venv", "node_modules"}


@dataclass(frozen=True)
class JobReport:
    """One job of the input (a notebook may build several) with its scripts and findings."""

    job: JobDescription
    scripts: tuple[ScriptFacts, ...]
    findings: tuple[Finding, ...]
    #: "PF-X not evaluated: setting unknown (why)": rules that did not run for want of a value
    not_evaluated: tuple[str, ...]

    @property
    def world_size(self) -> Optional[int]:
        return checks.world_size(self.job)

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.job.label,
            "estimator": self.job.estimator,
            "shape": self.job.shape,
            "scripts": [str(s.path) for s in self.scripts],
            "world_size": self.world_size,
            "instance_type": self.job.instance_type,
            "framework": list(self.job.framework) if self.job.framework else None,
            "findings": [f.to_json() for f in self.findings],
            "not_evaluated": list(self.not_evaluated),
        }


@dataclass(frozen=True)
class PreflightReport:
    path: Path
    kind: str
    jobs: tuple[JobReport, ...]
    outputs: Optional[Path]
    #: input-wide notes ("cell 4 skipped: not Python")
    notes: tuple[str, ...] = field(default=())

    @property
    def job(self) -> JobDescription:
        return self.jobs[0].job

    @property
    def scripts(self) -> tuple[ScriptFacts, ...]:
        seen: dict[Path, ScriptFacts] = {}
        for report in self.jobs:
            for facts in report.scripts:
                seen.setdefault(facts.path, facts)
        return tuple(seen.values())

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every job's findings, errors first; a script shared by two jobs is reported once."""
        unique: dict[Finding, None] = {}
        for report in self.jobs:
            for f in report.findings:
                unique.setdefault(f, None)
        order = {s: i for i, s in enumerate(SEVERITIES)}
        return tuple(sorted(unique, key=lambda f: order[f.severity]))

    @property
    def not_evaluated(self) -> tuple[str, ...]:
        out = list(self.notes)
        for report in self.jobs:
            prefix = f"{report.job.label}: " if len(self.jobs) > 1 and report.job.label else ""
            out.extend(prefix + n for n in report.not_evaluated)
        return tuple(out)

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES}

    @property
    def exit_code(self) -> int:
        """1 when any finding is an error (the job would fail or hang), else 0."""
        return 1 if any(f.severity == ERROR for f in self.findings) else 0

    @property
    def world_size(self) -> Optional[int]:
        return self.jobs[0].world_size

    def to_json(self) -> dict[str, Any]:
        return {
            "version": JSON_VERSION,
            "input": str(self.path),
            "kind": self.kind,
            "job": str(self.job.path),
            "shape": self.job.shape,
            "scripts": [str(s.path) for s in self.scripts],
            "outputs": str(self.outputs) if self.outputs else None,
            "world_size": self.world_size,
            "jobs": [j.to_json() for j in self.jobs],
            "findings": [f.to_json() for f in self.findings],
            "not_evaluated": list(self.not_evaluated),
            "summary": self.counts,
            "exit_code": self.exit_code,
        }


# ---------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class _Input:
    kind: str
    jobs: tuple[JobDescription, ...]
    files: Mapping[Path, Any] = field(default_factory=dict)  # %%writefile: path -> VirtualFile
    notes: tuple[str, ...] = ()
    shape_problems: Optional[tuple[str, ...]] = ()


def _what(path: Path) -> str:
    return {".ipynb": "notebook", ".py": "launcher script"}.get(path.suffix.lower(), "job file")


def read_input(path: Path) -> _Input:
    """Detect what ``path`` holds and read its jobs (any unreadable input raises)."""
    from smddp_infra.preflight.reading import decode_text, read_bytes

    what = _what(path)
    data = read_bytes(path, what=what)
    suffix = path.suffix.lower()
    if suffix == ".py":
        return _code_input(path, data)
    text = decode_text(data, path=path, what=what)
    document: Any = None
    if suffix in (".json", ".ipynb") or text.lstrip().startswith(("{", "[")):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            if suffix in (".json", ".ipynb"):
                raise PreflightInputError(
                    f"{what} {path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
        except RecursionError as exc:
            from smddp_infra.preflight.reading import too_deep

            raise too_deep(str(path), what, exc) from None
    elif suffix not in (".yaml", ".yml") and _looks_like_launcher(text):
        return _code_input(path, data)
    if document is None:
        from smddp_infra.preflight.job import read_document

        document = read_document(path, what="job file")
    from smddp_infra.preflight.api import api_kind
    from smddp_infra.preflight.notebook import is_notebook

    if is_notebook(document):
        return _notebook_input(path, document)
    kind = api_kind(document)
    if kind is not None:
        return _api_input(path, document, kind)
    if suffix == ".ipynb":
        raise PreflightInputError(f"notebook {path} is JSON but not a Jupyter notebook (no cells list)")
    if not isinstance(document, Mapping):
        raise PreflightInputError(f"job file {path} must hold a mapping of Estimator arguments, got {type(document).__name__}")
    if not document:
        raise PreflightInputError(
            f"job file {path} is empty ({{}}): nothing to check; give Estimator arguments, a ModelTrainer shape, "
            "a notebook, a launcher script or a CreateTrainingJob/DescribeTrainingJob JSON")
    return _Input("job_file", (parse_job(document, path=path),))


def _looks_like_launcher(text: str) -> bool:
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    from smddp_infra.preflight.extract import mentions_sagemaker_job

    return mentions_sagemaker_job(tree)


def _code_input(path: Path, data: bytes) -> _Input:
    from smddp_infra.preflight.extract import Unit
    from smddp_infra.preflight.reading import decode_python, parse_python

    source = decode_python(data, path=path, what="launcher script")
    tree = parse_python(source, where=str(path), what="launcher script")
    return _jobs_from_units(path, "launcher", [(Unit(source, path.name), tree)], {}, ())


def _notebook_input(path: Path, document: Mapping[str, Any]) -> _Input:
    from smddp_infra.preflight.notebook import read_notebook

    notebook = read_notebook(path, document)
    return _jobs_from_units(path, "notebook", list(notebook.units), notebook.files, notebook.skipped)


def _jobs_from_units(path: Path, kind: str, units: list[Any], files: Mapping[Path, Any], notes: tuple[str, ...]) -> _Input:
    from smddp_infra.preflight.code_jobs import job_from_code
    from smddp_infra.preflight.extract import Extractor
    from smddp_infra.preflight.reading import too_deep

    try:
        found = Extractor().run(units)
    except (RecursionError, MemoryError) as exc:
        raise too_deep(str(path), kind if kind == "notebook" else "launcher script", exc) from None
    if not found:
        what = "notebook" if kind == "notebook" else "launcher script"
        raise PreflightInputError(
            f"{what} {path} builds no SageMaker estimator or ModelTrainer (PyTorch(...), HuggingFace(...), "
            "TensorFlow(...), Estimator(...), ModelTrainer(...) from the sagemaker package): nothing to check; "
            f"for a training script give the job too: smddp-infra preflight JOB_FILE {path.name}")
    return _Input(kind, tuple(job_from_code(j, path=path, kind=kind) for j in found), files, notes)


def _api_input(path: Path, document: Mapping[str, Any], kind: str) -> _Input:
    from smddp_infra.preflight.api import job_from_api, shape_problems

    from smddp_infra.preflight.api import CREATE, is_fragment

    problems = shape_problems(document, kind)
    notes = (("a CreateTrainingJob request fragment: members it lacks (AlgorithmSpecification, TrainingJobName...) "
              "are not checked",) if kind == CREATE and is_fragment(document) else ())
    return _Input(kind, (job_from_api(document, path=path, kind=kind),), notes=notes,
                  shape_problems=tuple(p.message for p in problems) if problems is not None else None)


# ---------------------------------------------------------------------------- scripts


def _is_archive(value: str) -> bool:
    return value.startswith("s3://") or value.endswith((".tar.gz", ".tgz"))


class _Scripts:
    """Finds and reads a job's scripts: the entry point and every .py under source_dir."""

    def __init__(self, job: JobDescription, files: Mapping[Path, Any]) -> None:
        self.job = job
        self.files = files
        self.facts: dict[Path, ScriptFacts] = {}
        self.notes: list[str] = []
        self.findings: list[Finding] = []
        self.strict = job.kind == "job_file"  # a job file's missing script is unreadable input

    def _exists(self, path: Path) -> bool:
        return path in self.files or path.is_file()

    def _display(self, path: Path, root: Path) -> str:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            return path.name

    def read(self, path: Path, root: Path, *, required: bool = True) -> None:
        """Read one script; a module under source_dir that is not the entry point and cannot
        be parsed (a Python 2 file, a template) is listed as not evaluated instead of failing."""
        if path in self.facts:
            return
        if not required:
            try:
                self.read(path, root)
            except PreflightInputError as exc:
                self.notes.append(f"script rules not evaluated for {self._display(path, root)}: {exc}")
            return
        virtual = self.files.get(path)
        if virtual is not None:
            self.facts[path] = analyse_source(virtual.source, path=path, display=self._display(path, root),
                                              origin=f"{self.job.path.name} {virtual.origin}", line_offset=1)
        else:
            self.facts[path] = analyse_script(path, display=self._display(path, root))

    def resolve(self) -> tuple[ScriptFacts, ...]:
        job = self.job
        base = job.base_dir or job.path.parent
        for setting in ("entry_point", "source_dir"):
            if setting in job.unknown:
                self.notes.append(f"script rules not evaluated for {job.key(setting)}: {job.unknown[setting]}")
        root = base
        if job.source_dir:
            if _is_archive(job.source_dir):
                message = (f"{job.key('source_dir')} {job.source_dir} is an archive preflight cannot read; "
                           f"pass the script: smddp-infra preflight {job.path} path/to/{job.entry_point or 'train.py'}")
                if self.strict:
                    raise PreflightInputError(message)
                self.notes.append(f"script rules not evaluated: {message}")
                return ()
            root = base / job.source_dir
            if root.is_dir() or any(_under(p, root) for p in self.files):
                self._entry(root)
                for path in self._tree(root):
                    self.read(path, root, required=False)
                return tuple(self.facts.values())
            if not self.strict:
                self.notes.append(f"script rules not evaluated: {job.key('source_dir')} {root} is not a directory here")
                return ()
        self._entry(root)
        return tuple(self.facts.values())

    def _tree(self, root: Path) -> list[Path]:
        on_disk = []
        if root.is_dir():
            try:
                found = sorted(root.rglob("*.py"))
            except OSError as exc:  # an unreadable subdirectory
                self.notes.append(f"script rules not evaluated for part of {root.name}/: {exc.strerror or exc}")
                found = []
            for path in found:
                if not any(part in _SKIP_DIRS or part.startswith(".") for part in path.relative_to(root).parts[:-1]):
                    on_disk.append(path)
        return sorted({*on_disk, *(p for p in self.files if _under(p, root) and p.suffix == ".py")})

    def _entry(self, root: Path) -> None:
        job = self.job
        if job.command:
            self._follow(job.command, root, f"{job.key('command')}")
        if not job.entry_point:
            return
        entry = root / job.entry_point
        if entry.suffix == ".py":
            if not self._exists(entry) and not self.strict:
                self.notes.append(f"script rules not evaluated: {job.key('entry_point')} {entry} does not exist here")
                return
            self.read(entry, root)
            return
        if not self._exists(entry):
            if self.strict:
                raise PreflightInputError(f"training script {entry} does not exist")
            self.notes.append(f"script rules not evaluated: {job.key('entry_point')} {entry} does not exist here")
            return
        text = self._text(entry)
        followed, missing = self._follow(text, root, entry.name)
        parts = []
        if followed:
            parts.append("followed " + ", ".join(followed))
        if missing:
            parts.append("not found here (fetched at run time?): " + ", ".join(missing))
        self.findings.append(finding(
            F.NON_PYTHON_ENTRY_POINT, INFO, location=job.where("entry_point"),
            message=(f"{job.key('entry_point')} {job.entry_point} is not a Python script; preflight reads the Python "
                     f"scripts it runs{': ' + '; '.join(parts) if parts else ' (it runs none preflight can see)'}"),
            fix="nothing to fix; pass the scripts it runs to check them: smddp-infra preflight INPUT path/to/script.py",
        ))

    def _text(self, path: Path) -> str:
        virtual = self.files.get(path)
        if virtual is not None:
            return str(virtual.source)
        from smddp_infra.preflight.reading import decode_text, read_bytes

        return decode_text(read_bytes(path, what="entry point"), path=path, what="entry point")

    def _follow(self, text: str, root: Path, where: str) -> tuple[list[str], list[str]]:
        from smddp_infra.preflight.shell import python_calls

        followed, missing = [], []
        for call in python_calls(text):
            target = Path(call.script) if call.script.startswith("/") else root / call.cwd / call.script
            shown = f"{(Path(call.cwd) / call.script).as_posix()} (line {call.line})"
            if self._exists(target):
                self.read(target, root)
                followed.append(shown)
            else:
                missing.append(shown)
                self.notes.append(f"script rules not evaluated for {(Path(call.cwd) / call.script).as_posix()} "
                                  f"({where} line {call.line}): not found under {root.name}/")
        return followed, missing


def _under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


# ---------------------------------------------------------------------------- the run


def run_preflight(path: Path, scripts: Sequence[Path] = (), *, outputs: Optional[Path] = None) -> PreflightReport:
    """Check a notebook, launcher script, SageMaker API JSON or job file (and its scripts).

    Everything is read first (unreadable input raises :class:`PreflightInputError`: the CLI
    prints one line and exits 2), then every rule runs on every job found.
    """
    path = Path(path)
    found = read_input(path)
    return _judge(path, found, [Path(s) for s in scripts], outputs)


def _judge(path: Path, found: _Input, explicit: Sequence[Path], outputs: Optional[Path]) -> PreflightReport:
    stacks: tuple[StackSubnets, ...] = read_outputs(Path(outputs)) if outputs else ()
    reports = []
    for job in found.jobs:
        resolver = _Scripts(job, found.files)
        if explicit:
            facts = tuple(analyse_script(p) for p in explicit)
        else:
            facts = resolver.resolve()
        found_here = [
            *checks.check_unknown_keys(job),
            *checks.check_debugger(job, facts),
            *checks.check_smddp_instance(job, facts),
            *checks.check_api_shape(job, found.shape_problems),
            *resolver.findings,
            *checks.check_deprecated_api(facts),
            *checks.check_ddp_prefix(facts),
            *checks.check_batches(job, facts),
            *checks.check_checkpoint_uri(job),
            *checks.check_checkpoint_paths(job, facts),
            *checks.check_subnets(job, stacks, outputs_name=Path(outputs).name if outputs else None),
        ]
        order = {s: i for i, s in enumerate(SEVERITIES)}
        found_here.sort(key=lambda f: order[f.severity])  # stable: rule order within a severity
        not_evaluated = [*checks.not_evaluated(job), *resolver.notes]
        if job.shape == "api" and found.shape_problems is None:
            not_evaluated.append("PF-API-SHAPE not evaluated: botocore is not installed (pip install 'smddp-infra[api]')")
        reports.append(JobReport(job, facts, tuple(found_here), tuple(not_evaluated)))
    return PreflightReport(path=path, kind=found.kind, jobs=tuple(reports),
                           outputs=Path(outputs) if outputs else None, notes=found.notes)


def check_estimator(estimator: Any, scripts: Sequence[Path] = (), *, outputs: Optional[Path] = None) -> PreflightReport:
    """Check a live SDK v2 estimator or SDK v3 ``ModelTrainer`` before ``.fit()`` / ``.train()``.

    Reads the object's attributes only (no AWS call, no import of ``sagemaker`` by preflight):
    ``est = PyTorch(...); check_estimator(est).exit_code`` in a notebook cell, then ``est.fit()``.
    """
    from smddp_infra.preflight.live import job_from_object

    job = job_from_object(estimator)
    return _judge(job.path, _Input("live", (job,)), [Path(s) for s in scripts], outputs)
