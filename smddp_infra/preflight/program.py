"""The program of a job: the files it runs, and only those.

SageMaker copies ``source_dir`` (and each ``dependencies`` folder) to ``/opt/ml/code`` and
runs the entry point there: a Python entry point directly, any other file (``train.sh``) as
a program whose ``python x.py`` lines start the scripts. What else runs is what those
scripts import: modules found in the code directory (absolute imports from the code
directory, the entry point's folder, the dependency folders and the ``sys.path`` additions
the scripts make visibly; relative imports from the importing file's package) and scripts
they start (``subprocess.run(["python", "x.py"])``). A helper script in the same folder
that nothing starts or imports is *not run by this job*: the rules do not judge it, and
``--json`` lists it under ``not_run``.

SDK v2 ``fit()`` refuses an ``entry_point`` that is not a file inside ``source_dir``
(sagemaker 2.257 ``fw_utils.validate_source_dir``: 'No file named "x" was found in
directory "y"'), and SDK v3 ``ModelTrainer`` validates ``entry_script`` the same way: a
missing entry point is a fact the rules report as an error.
"""

from __future__ import annotations

import os
import posixpath
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from smddp_infra.preflight.errors import PreflightInputError
from smddp_infra.preflight.job import JobDescription
from smddp_infra.preflight.script import ScriptFacts, analyse_script, analyse_source

_SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints", ".git", ".venv", "node_modules"}


@dataclass(frozen=True)
class ShellEntry:
    """A non-Python entry point (or ``SourceCode(command=...)``) and the scripts it starts."""

    setting: str  # "entry_point" or "command"
    name: str
    followed: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass(frozen=True)
class MissingEntry:
    entry_point: str
    directory: str


@dataclass(frozen=True)
class MissingSourceDir:
    """A local ``source_dir`` that does not exist where the job is built, and nothing in the
    notebook or launcher creates it (no mkdir, clone, copy, download or %%writefile into it)."""

    source_dir: str
    directory: str
    entry_point: str


#: Words of a step that makes a folder appear (a cell or line naming the folder with one of them
#: means the folder may exist when the job is built: not evaluated, never an error).
_CREATES = ("mkdir", "makedirs", "clone", "copytree", "copy", "cp ", "mv ", "move", "rename", "tar ", "tarfile",
            "unzip", "zipfile", "unpack", "extract", "download", "wget", "curl", "writefile", "write_text",
            "sync", "rsync", "snapshot", "urlretrieve", "symlink", "ln ", "open(")


def created_in(text: str, folder: str) -> bool:
    """Whether a line of ``text`` names a part of ``folder`` (``examples`` of ``examples/training``)
    together with a creating step."""
    names = [p for p in posixpath.normpath(folder).split("/") if p not in ("", ".", "..")]
    for line in text.splitlines():
        if any(name in line for name in names) and any(word in line for word in _CREATES):
            return True
    return False


@dataclass(frozen=True)
class Program:
    job: JobDescription
    #: the files the job runs, the entry point first
    files: tuple[ScriptFacts, ...]
    #: .py files under source_dir that nothing in the program starts or imports
    not_run: tuple[Path, ...] = ()
    root: Optional[Path] = None
    missing_entry: Optional[MissingEntry] = None
    shell: Optional[ShellEntry] = None
    #: "script rules not evaluated for ...": what could not be read
    notes: tuple[str, ...] = ()
    #: files under source_dir the job does not run that define ``model_fn``: the serving code
    #: that loads this job's model artifact (read for the loads of the model directory only)
    serving: tuple[ScriptFacts, ...] = ()
    missing_source_dir: Optional[MissingSourceDir] = None


#: Where SageMaker puts source_dir in the container: ``/opt/ml/code`` (SDK v2 framework
#: containers) and the ``code`` channel ``/opt/ml/input/data/code`` (SDK v3 ModelTrainer).
CODE_DIRS = ("/opt/ml/code", "/opt/ml/input/data/code")


def in_code_dir(root: Path, cwd: str, script: str) -> Path:
    """The local file a command line names: relative to ``cwd`` (a preceding ``cd``) in the code
    directory, with the container's code directory paths mapped back to ``source_dir``."""
    path = script if script.startswith("/") else posixpath.join(cwd, script) if cwd else script
    for code_dir in CODE_DIRS:
        if path == code_dir or path.startswith(code_dir + "/"):
            return root / path[len(code_dir):].lstrip("/")
    return Path(path) if path.startswith("/") else root / path


def _under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def _normal(path: Path) -> Path:
    return Path(os.path.normpath(path))


class _Resolver:
    def __init__(self, job: JobDescription, files: Mapping[Path, Any], source_text: str = "") -> None:
        self.job = job
        self.source_text = source_text
        self.virtual = {_normal(p): v for p, v in files.items()}
        self.strict = job.kind == "job_file"  # a job file's missing script is unreadable input
        self.facts: dict[Path, ScriptFacts] = {}
        self.notes: list[str] = []
        self.root: Path = _normal(job.base_dir or job.path.parent)
        self.known: set[Path] = set()
        self.listed: list[Path] = []  # folders whose .py files are all in ``known``
        self.known_dirs: set[Path] = set()
        self.mains: list[Path] = []  # folders of scripts run as __main__ (sys.path[0])
        self.deps: list[Path] = []
        self.extra_paths: list[Path] = []
        self.queue: deque[Path] = deque()

    # ------------------------------------------------------------------ files

    def exists(self, path: Path) -> bool:
        """Membership for the listed folders (no stat per import), the file system elsewhere."""
        if path in self.virtual or path in self.known:
            return True
        return not any(_under(path, listed) for listed in self.listed) and path.is_file()

    def display(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name

    def read(self, path: Path, *, required: bool) -> None:
        path = _normal(path)
        if path in self.facts:
            return
        try:
            virtual = self.virtual.get(path)
            if virtual is not None:
                facts = analyse_source(virtual.source, path=path, display=self.display(path),
                                       origin=f"{self.job.path.name} {virtual.origin}", line_offset=1, root=self.root)
            else:
                facts = analyse_script(path, display=self.display(path), root=self.root)
        except PreflightInputError as exc:
            if required:
                raise
            self.notes.append(f"script rules not evaluated for {self.display(path)}: {exc}")
            return
        self.facts[path] = facts
        self.queue.append(path)

    def tree(self, root: Path) -> list[Path]:
        on_disk: list[Path] = []
        if root.is_dir():
            for directory, subdirs, names in os.walk(root, onerror=self._walk_error):
                subdirs[:] = sorted(d for d in subdirs if d not in _SKIP_DIRS and not d.startswith("."))
                on_disk.extend(Path(directory) / n for n in names if n.endswith(".py"))
        return sorted({*on_disk, *(p for p in self.virtual if _under(p, root) and p.suffix == ".py")})

    def _walk_error(self, exc: OSError) -> None:
        self.notes.append(f"script rules not evaluated for part of {self.root.name}/: {exc.strerror or exc}")

    # ------------------------------------------------------------------ entry

    def resolve(self, explicit: Sequence[Path]) -> Program:
        job = self.job
        if explicit:
            for path in explicit:
                path = _normal(Path(path))
                self.root = path.parent
                self.mains.append(path.parent)
                self.read(path, required=True)
            self.closure()
            return Program(job, tuple(self.facts.values()), (), None, notes=tuple(self.notes))
        for setting in ("entry_point", "source_dir"):
            if setting in job.unknown:
                self.notes.append(f"script rules not evaluated for {job.key(setting)}: {job.unknown[setting]}")
        base = self.root
        if job.source_dir:
            if job.source_dir.startswith("s3://") or job.source_dir.endswith((".tar.gz", ".tgz")):  # an archive
                message = (f"{job.key('source_dir')} {job.source_dir} is an archive preflight cannot read; "
                           f"pass the script: smddp-infra preflight {job.path} path/to/{job.entry_point or 'train.py'}")
                if self.strict:
                    raise PreflightInputError(message)
                self.notes.append(f"script rules not evaluated: {message}")
                return self.program(None)
            root = _normal(base / job.source_dir)
            if not (root.is_dir() or any(_under(p, root) for p in self.virtual)):
                if self.strict:
                    raise PreflightInputError(f"{job.key('source_dir')} {root} is not a directory")
                absent = self.missing_source_dir(root)
                if absent is not None:
                    return replace(self.program(None), missing_source_dir=absent)
                self.notes.append(f"script rules not evaluated: {job.key('source_dir')} {root} is not a directory here")
                return self.program(None)
            self.root = root
            tree = self.tree(root)
            self.known = set(tree)
            self.listed.append(root)
            for dependency in job.dependencies:
                folder = _normal(base / dependency)
                self.deps.append(folder)
                self.known.update(self.tree(folder))
                self.listed.append(folder)
            missing = self.entry(root, in_source_dir=True)
            self.known_dirs = {parent for p in self.known for parent in p.parents}
            self.closure()
            run = set(self.facts)
            not_run = tuple(p for p in tree if p not in run)
            return self.program(missing, not_run=not_run, serving=self.serving(not_run))
        missing = self.entry(base, in_source_dir=False)
        self.closure()
        return self.program(missing)

    def missing_source_dir(self, root: Path) -> Optional[MissingSourceDir]:
        """A missing source_dir is a fact only where the working directory is known and nothing
        the input shows creates the folder: a notebook (Jupyter runs it in its folder) or a
        launcher whose folder and parents hold no such folder either (it may be run from a parent)."""
        job = self.job
        if not job.source_dir or not job.entry_point or job.git_config or job.kind not in ("notebook", "launcher"):
            return None
        if created_in(self.source_text, job.source_dir):
            return None
        folder = os.path.abspath(self.root)
        written = job.source_dir
        if written.startswith("/"):
            # os.getcwd() / Path(__file__).parent joins resolve under the input's folder; any other
            # absolute path is another machine's (a Studio home) and is not judged here
            if not written.startswith(folder.rstrip("/") + "/"):
                return None
            written = os.path.relpath(written, folder)
        if job.kind == "launcher":
            for parent in Path(folder).parents:
                if (parent / written).is_dir():
                    return None
        return MissingSourceDir(job.source_dir, str(root), job.entry_point)

    def program(self, missing: Optional[MissingEntry], *, not_run: tuple[Path, ...] = (),
                serving: tuple[ScriptFacts, ...] = ()) -> Program:
        return Program(self.job, tuple(self.facts.values()), not_run, self.root, missing, self.shell,
                       tuple(self.notes), serving)

    def serving(self, not_run: tuple[Path, ...]) -> tuple[ScriptFacts, ...]:
        """The inference handlers beside the training code (``def model_fn``): SageMaker's
        serving container calls them on this job's model.tar.gz."""
        out = []
        for path in not_run:
            try:
                text = self.text(path)
            except PreflightInputError:
                continue
            if "def model_fn" not in text:
                continue
            try:
                out.append(analyse_source(text, path=path, display=self.display(path), root=self.root))
            except PreflightInputError:
                continue
        return tuple(out)

    shell: Optional[ShellEntry] = None

    def entry(self, root: Path, *, in_source_dir: bool) -> Optional[MissingEntry]:
        job = self.job
        if job.command:
            followed, missing = self.follow(job.command, root, job.key("command"))
            self.shell = ShellEntry("command", job.key("command"), tuple(followed), tuple(missing))
        if not job.entry_point:
            return None
        entry = _normal(root / job.entry_point)
        if not (entry in self.virtual or entry.is_file()):
            if in_source_dir:
                return MissingEntry(job.entry_point, str(root))
            if self.strict:
                raise PreflightInputError(f"training script {entry} does not exist")
            self.notes.append(f"script rules not evaluated: {job.key('entry_point')} {entry} does not exist here")
            return None
        if entry.suffix == ".py":
            self.mains.append(entry.parent)
            self.read(entry, required=True)
            return None
        followed, missing = self.follow(self.text(entry), root, entry.name)
        self.shell = ShellEntry("entry_point", job.entry_point, tuple(followed), tuple(missing))
        return None

    def text(self, path: Path) -> str:
        virtual = self.virtual.get(path)
        if virtual is not None:
            return str(virtual.source)
        from smddp_infra.preflight.reading import decode_text, read_bytes

        return decode_text(read_bytes(path, what="entry point"), path=path, what="entry point")

    def follow(self, text: str, root: Path, where: str) -> tuple[list[str], list[str]]:
        from smddp_infra.preflight.shell import python_calls

        followed, missing = [], []
        for call in python_calls(text):
            target = _normal(in_code_dir(root, call.cwd, call.script))
            if call.module and not (target in self.virtual or target.is_file()):
                target = target.with_suffix("") / "__main__.py"  # python -m pkg: pkg/__main__.py
                if not (target in self.virtual or target.is_file()):
                    continue  # an installed module (python -m pip ...): not the job's code
            shown = f"{(Path(call.cwd) / call.script).as_posix()} (line {call.line})"
            if target in self.virtual or target.is_file():
                self.mains.append(target.parent)
                self.read(target, required=True)
                followed.append(shown)
            else:
                missing.append(shown)
                self.notes.append(f"script rules not evaluated for {(Path(call.cwd) / call.script).as_posix()} "
                                  f"({where} line {call.line}): not found under {root.name}/")
        return followed, missing

    # ------------------------------------------------------------------ imports

    def closure(self) -> None:
        while self.queue:
            path = self.queue.popleft()
            facts = self.facts[path]
            self.extra_paths.extend(Path(p) for p in facts.sys_path if Path(p) not in self.extra_paths)
            for script in facts.runs:
                target = _normal(in_code_dir(self.root, "", script))
                if script.endswith(".py") and not self.exists(target) and "/" in script and not script.startswith("/"):
                    module_main = target.with_suffix("") / "__main__.py"
                    target = module_main if self.exists(module_main) else target
                if self.exists(target):
                    self.mains.append(target.parent)
                    self.read(target, required=False)
            for use in facts.imports:
                for found in self.modules(path, use.module, use.names, use.level):
                    self.read(found, required=False)

    def search_dirs(self) -> list[Path]:
        dirs = [*self.mains, self.root, *(d.parent for d in self.deps), *self.extra_paths]
        return list(dict.fromkeys(dirs))

    def modules(self, importer: Path, module: str, names: tuple[str, ...], level: int) -> list[Path]:
        parts = [p for p in module.split(".") if p] if module else []
        if level:
            base = importer.parent
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        else:
            bases = self.search_dirs()
        out: list[Path] = []
        for base in bases:
            found = self.module_files(base, parts)
            if found is None:
                continue
            out.extend(found)
            package = base.joinpath(*parts) if parts else base
            for name in names:
                if name != "*":
                    sub = self.module_files(package, [name])
                    if sub:
                        out.append(sub[-1])
            break
        return out

    def module_files(self, base: Path, parts: list[str]) -> Optional[list[Path]]:
        """The files importing ``parts`` from ``base`` runs (package ``__init__``s included), or None."""
        if not parts:
            init = base / "__init__.py"
            return [init] if self.exists(init) else []
        files: list[Path] = []
        for i in range(1, len(parts)):
            init = base.joinpath(*parts[:i], "__init__.py")
            if self.exists(init):
                files.append(init)
        leaf = base.joinpath(*parts)
        for candidate in (leaf.with_name(leaf.name + ".py"), leaf / "__init__.py"):
            if self.exists(candidate):
                return [*files, candidate]
        if leaf in self.known_dirs or (not any(_under(leaf, d) for d in self.listed) and leaf.is_dir()):
            return files  # a namespace package: its modules are imported by name
        return None


def resolve_program(job: JobDescription, files: Optional[Mapping[Path, Any]] = None,
                    explicit: Sequence[Path] = (), *, source_text: str = "") -> Program:
    """The files ``job`` runs (``files``: the notebook's ``%%writefile`` cells by path;
    ``source_text``: the input as written, searched for a step that creates a missing source_dir)."""
    return _Resolver(job, files or {}, source_text).resolve(explicit)
