"""What a training script does, read with Python's ``ast`` (never by matching text).

Text matching would flag comments and strings and miss ``from smdistributed.dataparallel.torch
import distributed as dist``; the syntax tree sees every import form and resolves aliases.
The analysis is deliberately shallow: module-level string constants are followed, nothing
else is evaluated, and anything it cannot resolve is given the benefit of the doubt.
"""

from __future__ import annotations

import ast
import posixpath
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Optional

from smddp_infra.preflight.errors import PreflightInputError
from smddp_infra.preflight.reading import read_python, too_deep

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
    #: how the loader is used: "iterated" (by every rank, to exhaustion), "guarded" (built
    #: or iterated only under a rank guard), "never" (not iterated in this file),
    #: "step_bounded" (the loop breaks on a step count), "evaluation" (iterated without
    #: gradients: under torch.no_grad() or in an evaluate/test function) or "unclear"
    #: (handed to code preflight cannot follow)
    use: str = "iterated"
    use_line: Optional[int] = None


@dataclass(frozen=True)
class WritePath:
    line: int
    path: str
    #: False when only a leading part of the path is a constant (f-string, join with a variable).
    complete: bool
    how: str  # "torch.save" or "open"


@dataclass(frozen=True)
class StateSave:
    """``torch.save(model.state_dict(), ...)`` where ``model`` is a DDP wrapper."""

    line: int
    code: str
    model: str
    basename: Optional[str]


@dataclass(frozen=True)
class StateLoad:
    """``net.load_state_dict(torch.load(...))`` into a model this file never wraps in DDP."""

    line: int
    code: str
    model: str
    basename: Optional[str]


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
    #: the only SMDDP evidence is an import whose ImportError is caught (NCCL fallback likely)
    smddp_optional: bool = False
    ddp_saves: tuple[StateSave, ...] = ()
    plain_loads: tuple[StateLoad, ...] = ()
    #: the name shown in locations (relative to source_dir)
    display: str = ""
    #: "launch.ipynb cell 5" for a file written by %%writefile
    origin: Optional[str] = None
    line_offset: int = 0

    @property
    def name(self) -> str:
        return self.display or self.path.name

    def where(self, line: int) -> str:
        if self.origin:
            return f"{self.name}:{line} ({self.origin} line {line + self.line_offset})"
        return f"{self.name}:{line}"


def analyse_script(path: Path, *, display: str = "") -> ScriptFacts:
    """Read a script as CPython would (BOM, PEP 263 coding line; NUL = binary input)."""
    return analyse_source(read_python(path), path=path, display=display)


def analyse_source(source: str, *, path: Path, display: str = "", origin: Optional[str] = None,
                   line_offset: int = 0) -> ScriptFacts:
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise PreflightInputError(
            f"training script {path} is not valid Python: {exc.msg} at line {exc.lineno}"
            " (preflight reads Python training scripts)"
        ) from None
    except (RecursionError, MemoryError) as exc:
        raise too_deep(str(path), "training script", exc) from None
    except ValueError as exc:
        raise PreflightInputError(f"training script {path} cannot be parsed: {exc}") from None
    try:
        facts = _Analyser(source, path, tree).run()
    except (RecursionError, MemoryError) as exc:
        raise too_deep(str(path), "training script", exc) from None
    return replace(facts, display=display, origin=origin, line_offset=line_offset)


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
        self.nodes: list[ast.AST] = list(ast.walk(self.tree))  # walked once, read by every pass
        self._collect_names()
        self.parents: dict[ast.AST, ast.AST] = {}
        for parent in self.nodes:
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {
            node.name: node for node in self.nodes if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        deprecated: list[DeprecatedUse] = []
        loaders: list[LoaderCall] = []
        writes: list[WritePath] = []
        evidence: Optional[str] = None
        optional: Optional[str] = None  # only imported where a failed import is caught
        dist_sampler = even = False

        for node in self.nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if is_deprecated(alias.name):
                        deprecated.append(self._use(node, alias.name))
                    if alias.name == SMDDP_PACKAGE or alias.name.startswith(SMDDP_PACKAGE + "."):
                        if self._optional_import(node):
                            optional = optional or f"import {alias.name} (line {node.lineno}, in a try/except ImportError)"
                        else:
                            evidence = evidence or f"import {alias.name} (line {node.lineno})"
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                if is_deprecated(node.module):
                    deprecated.append(self._use(node, node.module))
                else:
                    for alias in node.names:
                        if is_deprecated(f"{node.module}.{alias.name}"):
                            deprecated.append(self._use(node, f"{node.module}.{alias.name}"))
                if node.module == SMDDP_PACKAGE or node.module.startswith(SMDDP_PACKAGE + "."):
                    if self._optional_import(node):
                        optional = optional or f"from {node.module} import ... (line {node.lineno}, in a try/except ImportError)"
                    else:
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
        saves, loads = self._state_dicts()
        return ScriptFacts(
            ddp_saves=saves,
            plain_loads=loads,
            path=self.path,
            deprecated=tuple(deprecated),
            loaders=tuple(sorted(loaders, key=lambda c: c.line)),
            writes=tuple(sorted(writes, key=lambda w: w.line)),
            smddp_evidence=evidence or optional,
            smddp_optional=evidence is None and optional is not None,
            uses_distributed_sampler=dist_sampler,
            uses_even_shards=even,
        )

    # ------------------------------------------------------------------ names

    def _collect_names(self) -> None:
        for node in self.nodes:
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
        for node in self.nodes:
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
        return DeprecatedUse(line=getattr(node, "lineno", 0), module=module, code=self._code(node))

    def _code(self, node: ast.AST) -> str:
        if not hasattr(self, "_lines"):
            self._lines = self.source.splitlines()
        number = int(getattr(node, "lineno", 0) or 0)
        line = self._lines[number - 1] if 0 < number <= len(self._lines) else ""
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
            distributed = self._sampler_kind(sampler if sampler is not None else batch_sampler)  # type: ignore[arg-type]
        use, use_line = self._loader_use(node)
        return LoaderCall(line=node.lineno, code=self._code(node), distributed=distributed, drop_last=drop_last,
                          use=use, use_line=use_line)

    # ------------------------------------------------------------------ how a loader is used

    def _guarded(self, node: ast.AST) -> bool:
        """Inside an ``if`` (or loop) whose test names a rank: ``if rank == 0``,
        ``if dist.get_rank() == 0``, ``if args.local_rank in (-1, 0)``, ``if is_main_process()``."""
        child, parent = node, self.parents.get(node)
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test and _mentions(parent.test, _RANK_WORDS):
                return True
            child, parent = parent, self.parents.get(parent)
        return False

    def _step_bounded(self, loop: ast.AST) -> bool:
        """The loop over the loader leaves on a step count (``if global_step >= max_steps: break``):
        every rank runs the same number of steps whatever its batch count."""
        for node in ast.walk(loop):
            if isinstance(node, (ast.Break, ast.Return)):
                parent = self.parents.get(node)
                while parent is not None and parent is not loop:
                    if isinstance(parent, ast.If) and _mentions(parent.test, _STEP_WORDS):
                        return True
                    parent = self.parents.get(parent)
        return False

    def _optional_import(self, node: ast.AST) -> bool:
        """``try: import smdistributed... except ImportError: backend = "nccl"``: the script
        runs without SMDDP where the library is missing."""
        child, parent = node, self.parents.get(node)
        while parent is not None:
            if isinstance(parent, ast.Try) and child in parent.body:
                for handler in parent.handlers:
                    names = {_leaf(n) for n in ast.walk(handler.type)} if handler.type is not None else {"Exception"}
                    if names & {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}:
                        return True
            child, parent = parent, self.parents.get(parent)
        return False

    def _evaluation(self, loop: ast.AST) -> bool:
        """Inside ``with torch.no_grad()`` / ``torch.inference_mode()`` or a function named like
        evaluation (``evaluate``, ``test``, ``validate``): no backward pass, so uneven counts hang
        only if the loop itself runs collectives (an all_reduce per batch, DDP's buffer broadcast)."""
        parent = self.parents.get(loop)
        while parent is not None:
            if isinstance(parent, (ast.With, ast.AsyncWith)):
                for item in parent.items:
                    call = item.context_expr
                    if isinstance(call, ast.Call) and _leaf(call.func) in {"no_grad", "inference_mode"}:
                        return True
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = parent.name.lower()
                return any(word in name for word in ("eval", "test", "valid", "predict", "infer"))
            parent = self.parents.get(parent)
        return False

    def _loader_use(self, node: ast.Call) -> tuple[str, Optional[int]]:
        if self._guarded(node):
            return "guarded", node.lineno
        uses = list(self._uses(node, depth=0))
        if not uses:
            return "never", None
        for kind, line in uses:
            if kind == "iterated":
                return kind, line
        for kind in ("unclear", "evaluation"):
            for found, line in uses:
                if found == kind:
                    return found, line
        return uses[0]

    def _bound_names(self, node: ast.AST) -> tuple[set[str], Optional[str]]:
        """Names the value of ``node`` is assigned to (``loader = ...``, ``self.loader = ...``),
        following ``x if c else y`` and one ``return`` out of a local function."""
        parent = self.parents.get(node)
        while isinstance(parent, (ast.IfExp, ast.BoolOp)):
            node, parent = parent, self.parents.get(parent)
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            return {n for t in targets for n in _target_names(t)}, None
        if isinstance(parent, ast.Return):
            function = self._enclosing_function(parent)
            if function is not None:
                return set(), function.name
        return set(), None

    def _enclosing_function(self, node: ast.AST) -> Optional[ast.FunctionDef | ast.AsyncFunctionDef]:
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parent = self.parents.get(parent)
        return parent

    def _uses(self, node: ast.AST, *, depth: int) -> Iterable[tuple[str, int]]:
        """(kind, line) of every use of the value ``node`` produces."""
        if depth > 4:
            yield "unclear", getattr(node, "lineno", 0)
            return
        direct = self._direct_use(node, depth=depth)
        if direct is not None:
            yield from direct
            return
        names, returned_from = self._bound_names(node)
        if returned_from is not None:
            for call in self.nodes:
                if isinstance(call, ast.Call) and isinstance(call.func, (ast.Name, ast.Attribute)) and _leaf(call.func) == returned_from:
                    if self._guarded(call):
                        yield "guarded", call.lineno
                    else:
                        yield from self._uses(call, depth=depth + 1)
            return
        scope = self._enclosing_function(node) or self.tree
        for name in names:
            attr = name[1:] if name.startswith(".") else None
            area = self.tree if attr is not None else scope
            for use in (self.nodes if area is self.tree else ast.walk(area)):
                if attr is not None:
                    match = isinstance(use, ast.Attribute) and use.attr == attr and isinstance(use.ctx, ast.Load)
                else:
                    match = isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load)
                if match:
                    result = self._direct_use(use, depth=depth)
                    if result is not None:
                        yield from result

    def _direct_use(self, node: ast.AST, *, depth: int) -> Optional[list[tuple[str, int]]]:
        """What the expression right around ``node`` does with it; None: it is assigned."""
        child, parent = node, self.parents.get(node)
        while isinstance(parent, ast.Call) and child in parent.args and _leaf(parent.func) in _ITER_WRAPPERS:
            child, parent = parent, self.parents.get(parent)
        line = getattr(child, "lineno", 0)
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and child is parent.iter:
            loop = parent if not isinstance(parent, ast.comprehension) else self.parents.get(parent, parent)
            if self._guarded(loop):
                return [("guarded", line)]
            if self._step_bounded(loop):
                return [("step_bounded", line)]
            if self._evaluation(loop):
                return [("evaluation", line)]
            return [("iterated", line)]
        if isinstance(parent, ast.Call) and child in parent.args and _leaf(parent.func) == "next":
            return [("guarded" if self._guarded(parent) else "unclear", line)]
        if isinstance(parent, ast.Call) and (child in parent.args or any(k.value is child for k in parent.keywords)):
            callee = _leaf(parent.func)
            if callee in {"len", "print", "isinstance", "hasattr", "getattr", "id", "type"}:
                return []
            if self._guarded(parent):
                return [("guarded", line)]
            function = self.functions.get(callee) if isinstance(parent.func, ast.Name) else None
            if function is None:
                return [("unclear", line)]
            param = _parameter(function, parent, child)
            if param is None:
                return [("unclear", line)]
            uses: list[tuple[str, int]] = []
            for use in ast.walk(function):
                if isinstance(use, ast.Name) and use.id == param and isinstance(use.ctx, ast.Load):
                    found = self._direct_use(use, depth=depth + 1)
                    uses.extend(found if found is not None else [("unclear", use.lineno)])
            return uses
        if isinstance(parent, ast.Attribute) or isinstance(parent, (ast.Compare, ast.If, ast.BoolOp, ast.UnaryOp, ast.Expr)):
            return []  # loader.sampler.set_epoch(e), `if loader is None`: not an iteration
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.IfExp, ast.Return)):
            return None if depth < 4 else [("unclear", line)]
        return [("unclear", line)]

    # ------------------------------------------------------------------ DDP state_dict

    def _state_dicts(self) -> tuple[tuple[StateSave, ...], tuple[StateLoad, ...]]:
        wrapped: set[str] = set()
        loaded: set[str] = set()
        for node in self.nodes:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                callee = self._dotted(node.value.func) or ""
                if callee.rsplit(".", 1)[-1] == "DistributedDataParallel":
                    wrapped.update(n.lstrip(".") for t in node.targets for n in _target_names(t))
                if callee == "torch.load":
                    loaded.update(n.lstrip(".") for t in node.targets for n in _target_names(t))
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript) and isinstance(node.value.value, ast.Name) \
                    and node.value.value.id in loaded:
                loaded.update(n.lstrip(".") for t in node.targets for n in _target_names(t))
        fixes_prefix = any(
            isinstance(n, ast.Call) and _leaf(n.func) in {"strip_ddp_prefix", "consume_prefix_in_state_dict_if_present"}
            for n in self.nodes
        )
        states: set[str] = set()

        def wrapped_state(expr: ast.AST) -> Optional[str]:
            if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "state_dict":
                owner = expr.func.value
                if isinstance(owner, (ast.Name, ast.Attribute)) and _leaf(owner) in wrapped:
                    return _leaf(owner)
            if isinstance(expr, ast.Dict):
                return next((m for m in (wrapped_state(v) for v in expr.values) if m), None)
            if isinstance(expr, ast.Name) and expr.id in states:
                return expr.id
            return None

        for node in self.nodes:
            if isinstance(node, ast.Assign) and wrapped_state(node.value):
                states.update(n.lstrip(".") for t in node.targets for n in _target_names(t))
        saves, loads = [], []
        for node in self.nodes:
            if not isinstance(node, ast.Call):
                continue
            callee = self._dotted(node.func) or ""
            if callee in _SAVE_FUNCTIONS and node.args:
                model = wrapped_state(node.args[0])
                if model:
                    target = self._arg(node, "f", 1)
                    saves.append(StateSave(node.lineno, self._code(node), model, self._basename(target)))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "load_state_dict" and node.args and not fixes_prefix:
                owner = node.func.value
                if isinstance(owner, ast.Attribute) and owner.attr == "module":
                    continue
                name = _leaf(owner) if isinstance(owner, (ast.Name, ast.Attribute)) else None
                if not name or name in wrapped:
                    continue
                source = node.args[0]
                if isinstance(source, ast.Subscript):
                    source = source.value
                if isinstance(source, ast.Call) and (self._dotted(source.func) or "") == "torch.load":
                    loads.append(StateLoad(node.lineno, self._code(node), name,
                                           self._basename(source.args[0] if source.args else None)))
                elif isinstance(source, ast.Name) and source.id in loaded:
                    loads.append(StateLoad(node.lineno, self._code(node), name, self._load_basename(source.id)))
        return tuple(saves), tuple(loads)

    def _load_basename(self, name: str) -> Optional[str]:
        for node in self.nodes:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    (self._dotted(node.value.func) or "") == "torch.load" and \
                    any(name in _target_names(t) for t in node.targets) and node.value.args:
                return self._basename(node.value.args[0])
        return None

    def _basename(self, node: Optional[ast.AST]) -> Optional[str]:
        """The file name a path expression ends in, when its last part is a constant."""
        if node is None:
            return None
        resolved = self._path(node)
        if resolved is not None and resolved[1]:
            return posixpath.basename(resolved[0]) or None
        last: Optional[ast.AST] = None
        if isinstance(node, ast.Call) and node.args and (self._dotted(node.func) or "") in {"os.path.join", "posixpath.join"}:
            last = node.args[-1]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
            last = node.right
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[-1], ast.Constant):
            text = str(node.values[-1].value)
            return posixpath.basename(text) or None
        if last is not None:
            tail = self._path(last)
            if tail is not None and tail[1]:
                return posixpath.basename(tail[0]) or None
        return None

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


_RANK_WORDS = ("rank", "is_main", "main_process", "is_master", "master_process", "is_leader")
_STEP_WORDS = ("step", "iteration", "iters", "max_iter")
_ITER_WRAPPERS = {"enumerate", "tqdm", "zip", "iter", "islice", "cycle", "list", "trange", "chain"}


def _leaf(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _mentions(test: ast.AST, words: tuple[str, ...]) -> bool:
    for node in ast.walk(test):
        name = _leaf(node).lower()
        if name and any(word in name for word in words):
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ("RANK", "LOCAL_RANK"):
            return True
    return False


def _target_names(target: ast.AST) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Attribute):
        return {f".{target.attr}"}  # self.loader = ...: every `.loader` in the file
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(e) for e in target.elts)) if target.elts else set()
    return set()


def _parameter(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, value: ast.AST) -> Optional[str]:
    positional = [*function.args.posonlyargs, *function.args.args]
    for index, arg in enumerate(call.args):
        if arg is value:
            if isinstance(arg, ast.Starred):
                return None
            return positional[index].arg if index < len(positional) else None
    for keyword in call.keywords:
        if keyword.value is value:
            return keyword.arg
    return None
