"""What a training script does, read with Python's ``ast`` (never by matching text).

Text matching would flag comments and strings and miss ``from smdistributed.dataparallel.torch
import distributed as dist``; the syntax tree sees every import form and resolves aliases.
The analysis is deliberately shallow: module-level string constants are followed, nothing
else is evaluated, and anything it cannot resolve is given the benefit of the doubt.
"""

from __future__ import annotations

import ast
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from smddp_infra.preflight.errors import PreflightInputError

#: APIs replaced in SMDDP v1.4.0 by the ``smddp`` backend of ``torch.distributed``. The
#: library's warning names ``smdistributed.dataparallel.torch.dist``; the modules scripts
#: import are ``...torch.distributed`` and ``...torch.parallel(.distributed)``.
DEPRECATED_MODULES = (
    "smdistributed.dataparallel.torch.distributed",
    "smdistributed.dataparallel.torch.dist",
    "smdistributed.dataparallel.torch.parallel",
)
SMDDP_PACKAGE = "smdistributed.dataparallel"
_NON_DISTRIBUTED_SAMPLERS = {"RandomSampler", "SequentialSampler", "SubsetRandomSampler", "WeightedRandomSampler"}
_OPEN_FUNCTIONS = {"open", "builtins.open", "io.open", "codecs.open"}
_SAVE_FUNCTIONS = {"torch.save"}
# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, pin_memory, drop_last)
_LOADER_SAMPLER_POS, _LOADER_BATCH_SAMPLER_POS, _LOADER_DROP_LAST_POS = 3, 4, 8


@dataclass(frozen=True)
class DeprecatedUse:
    line: int
    module: str  # the deprecated module the code reaches
    code: str


@dataclass(frozen=True)
class LoaderCall:
    line: int
    code: str
    #: True: DistributedSampler / even_shards batches; False: a known single-process
    #: sampler or none; None: something preflight cannot resolve.
    distributed: Optional[bool]
    drop_last: Optional[bool]


@dataclass(frozen=True)
class WritePath:
    line: int
    path: str
    #: False when only a leading part of the path is a constant (f-string, join with a variable).
    complete: bool
    how: str  # "torch.save" or "open"


@dataclass(frozen=True)
class ScriptFacts:
    path: Path
    deprecated: tuple[DeprecatedUse, ...]
    loaders: tuple[LoaderCall, ...]
    writes: tuple[WritePath, ...]
    #: "import smdistributed.dataparallel..." or 'init_process_group(backend="smddp")' seen
    smddp_evidence: Optional[str]
    uses_distributed_sampler: bool
    uses_even_shards: bool


def analyse_script(path: Path) -> ScriptFacts:
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PreflightInputError(f"training script {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PreflightInputError(f"training script {path} cannot be read: {exc}") from None
    return analyse_source(source, path=path)


def analyse_source(source: str, *, path: Path) -> ScriptFacts:
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise PreflightInputError(
            f"training script {path} is not valid Python: {exc.msg} at line {exc.lineno}"
            " (preflight reads Python training scripts)"
        ) from None
    return _Analyser(source, path, tree).run()


def is_deprecated(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in DEPRECATED_MODULES)


class _Analyser:
    def __init__(self, source: str, path: Path, tree: ast.Module) -> None:
        self.source = source
        self.path = path
        self.tree = tree
        self.aliases: dict[str, str] = {}
        self.constants: dict[str, Optional[str]] = {}
        self.sampler_names: dict[str, str] = {}  # variable -> dotted name of the callee that built it

    def run(self) -> ScriptFacts:
        self._collect_names()
        deprecated: list[DeprecatedUse] = []
        loaders: list[LoaderCall] = []
        writes: list[WritePath] = []
        evidence: Optional[str] = None
        dist_sampler = even = False

        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if is_deprecated(alias.name):
                        deprecated.append(self._use(node, alias.name))
                    if alias.name == SMDDP_PACKAGE or alias.name.startswith(SMDDP_PACKAGE + "."):
                        evidence = evidence or f"import {alias.name} (line {node.lineno})"
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                if is_deprecated(node.module):
                    deprecated.append(self._use(node, node.module))
                else:
                    for alias in node.names:
                        if is_deprecated(f"{node.module}.{alias.name}"):
                            deprecated.append(self._use(node, f"{node.module}.{alias.name}"))
                if node.module == SMDDP_PACKAGE or node.module.startswith(SMDDP_PACKAGE + "."):
                    evidence = evidence or f"from {node.module} import ... (line {node.lineno})"
            elif isinstance(node, ast.Attribute):
                # Reaching a deprecated module through a non-deprecated import:
                # `import smdistributed.dataparallel.torch as sdp; sdp.distributed.init_process_group()`
                name, inner = self._dotted(node), self._dotted(node.value)
                if name and is_deprecated(name) and not (inner and is_deprecated(inner)):
                    deprecated.append(self._use(node, name))
            elif isinstance(node, ast.Call):
                callee = self._dotted(node.func) or ""
                leaf = callee.rsplit(".", 1)[-1]
                if callee in {"importlib.import_module", "__import__"} and node.args:
                    target = self._const(node.args[0])
                    if target and is_deprecated(target):
                        deprecated.append(self._use(node, target))
                if leaf == "init_process_group" and self._backend(node) == "smddp":
                    evidence = evidence or f'init_process_group(backend="smddp") (line {node.lineno})'
                if leaf == "DistributedSampler":
                    dist_sampler = True
                if leaf == "even_shards":
                    even = True
                if leaf == "DataLoader":
                    loaders.append(self._loader(node))
                write = self._write(node, callee)
                if write is not None:
                    writes.append(write)

        deprecated = sorted({(d.line, d.module): d for d in deprecated}.values(), key=lambda d: d.line)
        return ScriptFacts(
            path=self.path,
            deprecated=tuple(deprecated),
            loaders=tuple(sorted(loaders, key=lambda c: c.line)),
            writes=tuple(sorted(writes, key=lambda w: w.line)),
            smddp_evidence=evidence,
            uses_distributed_sampler=dist_sampler,
            uses_even_shards=even,
        )

    # ------------------------------------------------------------------ names

    def _collect_names(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".", 1)[0]
                        self.aliases[root] = root
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        # Module-level string constants (assigned once), e.g. CKPT_DIR = "/opt/ml/checkpoints".
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name) and stmt.value is not None:
                        value = stmt.value
                        text = value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
                        self.constants[target.id] = None if target.id in self.constants else text
        # Variables built by a sampler call anywhere: sampler = DistributedSampler(ds)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                callee = self._dotted(node.value.func) or ""
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.sampler_names[target.id] = callee

    def _dotted(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self._dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def _use(self, node: ast.AST, module: str) -> DeprecatedUse:
        return DeprecatedUse(line=node.lineno, module=module, code=self._code(node))

    def _code(self, node: ast.AST) -> str:
        line = self.source.splitlines()[node.lineno - 1] if node.lineno else ""
        return line.strip()

    # ------------------------------------------------------------------ calls

    @staticmethod
    def _arg(node: ast.Call, keyword: str, position: Optional[int]) -> Optional[ast.AST]:
        for kw in node.keywords:
            if kw.arg == keyword:
                return kw.value
        if position is not None and len(node.args) > position and not any(isinstance(a, ast.Starred) for a in node.args[:position + 1]):
            return node.args[position]
        return None

    def _backend(self, node: ast.Call) -> Optional[str]:
        value = self._arg(node, "backend", 0)
        return self._const(value) if value is not None else None

    def _loader(self, node: ast.Call) -> LoaderCall:
        unknown = any(kw.arg is None for kw in node.keywords)  # **kwargs
        sampler = self._arg(node, "sampler", _LOADER_SAMPLER_POS)
        batch_sampler = self._arg(node, "batch_sampler", _LOADER_BATCH_SAMPLER_POS)
        drop = self._arg(node, "drop_last", _LOADER_DROP_LAST_POS)
        drop_last = drop.value if isinstance(drop, ast.Constant) and isinstance(drop.value, bool) else None
        distributed: Optional[bool]
        if unknown:
            distributed = None
        elif sampler is None and batch_sampler is None:
            distributed = False
        else:
            distributed = self._sampler_kind(sampler if sampler is not None else batch_sampler)
        return LoaderCall(line=node.lineno, code=self._code(node), distributed=distributed, drop_last=drop_last)

    def _sampler_kind(self, node: ast.AST) -> Optional[bool]:
        callee: Optional[str] = None
        if isinstance(node, ast.Call):
            callee = self._dotted(node.func)
            if isinstance(node.func, ast.Attribute) and node.func.attr == "batches":
                return True  # even_shards(...).batches(rank)
        elif isinstance(node, ast.Name):
            callee = self.sampler_names.get(node.id)
        elif isinstance(node, ast.Constant) and node.value is None:
            return False
        leaf = (callee or "").rsplit(".", 1)[-1]
        if leaf in {"DistributedSampler", "even_shards"}:
            return True
        if leaf in _NON_DISTRIBUTED_SAMPLERS:
            return False
        return None

    def _write(self, node: ast.Call, callee: str) -> Optional[WritePath]:
        if callee in _SAVE_FUNCTIONS:
            target, how = self._arg(node, "f", 1), "torch.save"
        elif callee in _OPEN_FUNCTIONS:
            mode = self._arg(node, "mode", 1)
            mode_text = self._const(mode) if mode is not None else "r"
            if mode_text is None or not set(mode_text) & set("wax+"):
                return None
            target, how = self._arg(node, "file", 0), "open"
        else:
            return None
        if target is None:
            return None
        resolved = self._path(target)
        if resolved is None:
            return None
        text, complete = resolved
        if not text:
            return None
        return WritePath(line=node.lineno, path=text, complete=complete, how=how)

    # ------------------------------------------------------------------ constants

    def _const(self, node: ast.AST) -> Optional[str]:
        resolved = self._path(node)
        return resolved[0] if resolved and resolved[1] else None

    def _path(self, node: ast.AST) -> Optional[tuple[str, bool]]:
        """(text, complete): a string constant, or the constant leading part of one."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value, True
        if isinstance(node, ast.Name):
            value = self.constants.get(node.id)
            return (value, True) if value is not None else None
        if isinstance(node, ast.JoinedStr):
            head = ""
            for part in node.values:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    head += part.value
                else:
                    resolved = self._path(part.value) if isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion == -1 else None
                    if resolved is None:
                        return (head, False) if head else None
                    head += resolved[0]
                    if not resolved[1]:
                        return head, False
            return head, True
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
            left = self._path(node.left)
            if left is None:
                return None
            if not left[1]:
                return left
            right = self._path(node.right)
            glue = (lambda a, b: posixpath.join(a, b)) if isinstance(node.op, ast.Div) else (lambda a, b: a + b)
            if right is None:
                return (left[0].rstrip("/") + "/" if isinstance(node.op, ast.Div) else left[0]), False
            return glue(left[0], right[0]), right[1]
        if isinstance(node, ast.Call):
            callee = self._dotted(node.func) or ""
            if callee in {"os.path.join", "posixpath.join"} and node.args:
                parts: list[str] = []
                for arg in node.args:
                    resolved = self._path(arg)
                    if resolved is None:
                        return (posixpath.join(*parts) + "/", False) if parts else None
                    parts.append(resolved[0])
                    if not resolved[1]:
                        return posixpath.join(*parts), False
                return posixpath.join(*parts), True
            if callee.rsplit(".", 1)[-1] in {"Path", "PurePath", "PosixPath"} and len(node.args) == 1:
                return self._path(node.args[0])
        return None
