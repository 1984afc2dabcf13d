"""What a training script does, read with Python's ``ast`` (never by matching text).

Text matching would flag comments and strings and miss ``from smdistributed.dataparallel.torch
import distributed as dist``; the syntax tree sees every import form and resolves aliases.
The analysis is deliberately shallow: module-level string constants are followed, nothing
else is evaluated, and anything it cannot resolve is given the benefit of the doubt.
"""

from __future__ import annotations

import ast
import copy
import posixpath
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional

from smddp_infra.preflight.reading import is_main_guard, parse_python, read_python, too_deep

#: APIs replaced in SMDDP v1.4.0 by the ``smddp`` backend of ``torch.distributed``. The
#: library's warning names ``smdistributed.dataparallel.torch.dist``; the modules scripts
#: import are ``...torch.distributed`` and ``...torch.parallel(.distributed)``.
DEPRECATED_MODULES = (
    "smdistributed.dataparallel.torch.distributed",
    "smdistributed.dataparallel.torch.dist",
    "smdistributed.dataparallel.torch.parallel",
)
#: The TensorFlow SMDDP API (``import smdistributed.dataparallel.tensorflow as sdp``): ``sdp.init()``
#: starts the library, ``DistributedGradientTape`` all-reduces every step's gradients and
#: ``broadcast_variables`` syncs the initial weights. Unlike the PyTorch modules above it is not
#: deprecated: it is how TensorFlow scripts use the SMDDP collectives.
TF_SMDDP_MODULE = "smdistributed.dataparallel.tensorflow"
TF_SMDDP_COLLECTIVES = frozenset({"DistributedGradientTape", "broadcast_variables", "DistributedOptimizer",
                                  "allreduce", "oob_allreduce"})
TF_SMDDP_CALLS = TF_SMDDP_COLLECTIVES | {"init"}
_TF_SMDDP_PREFIX = TF_SMDDP_MODULE + "."
_NON_DISTRIBUTED_SAMPLERS = {"RandomSampler", "SequentialSampler", "SubsetRandomSampler", "WeightedRandomSampler"}
_OPEN_FUNCTIONS = {"open", "builtins.open", "io.open", "codecs.open"}
_SAVE_FUNCTIONS = {"torch.save"}
# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, pin_memory, drop_last)
_LOADER_SAMPLER_POS, _LOADER_BATCH_SAMPLER_POS, _LOADER_DROP_LAST_POS = 3, 4, 8


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
    #: gradients: under torch.no_grad() or in an evaluate/test function), "wrapped" (handed to
    #: a wrapper that installs a distributed sampler), "returned:F" (returned by F for another
    #: module of the program) or "unclear" (handed to code preflight cannot follow)
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
class PathExpr:
    """The path a save or a load uses, as far as the file shows it."""

    #: the expression with local names replaced by their one assignment (``os.path.join(args.model_dir, "m.pt")``)
    text: str
    #: the whole path when it is a constant
    literal: Optional[str]
    #: the file name, when the last part is a constant
    basename: Optional[str]
    #: the path is under the model directory (``/opt/ml/model``, ``SM_MODEL_DIR``, ``model_dir``)
    model_dir: bool
    #: the expression still holds a name preflight cannot follow (a function parameter)
    open_name: bool
    #: the function the site is in ("" for module level)
    scope: str


@dataclass(frozen=True)
class StateSave:
    """``torch.save(ddp.state_dict(), ...)`` (or a dict holding it) where ``ddp`` is a DDP wrapper."""

    line: int
    code: str
    model: str
    path: PathExpr
    #: for a saved dict: the keys whose value is a DDP state_dict (None: the state_dict itself)
    keys: Optional[frozenset[str]] = None


@dataclass(frozen=True)
class StateLoad:
    """``net.load_state_dict(torch.load(...))`` into a model that is not DDP-wrapped there, with
    ``strict`` not False and no visible ``module.`` strip."""

    line: int
    code: str
    model: str
    path: PathExpr
    #: ``torch.load(p)["model"]``: the key read from the saved dict
    key: Optional[str] = None
    #: "plain" (built here, not wrapped before the load), "unknown" (a parameter...) or "fine"
    #: (DDP-wrapped, strict=False or a visible ``module.`` strip: it reads a DDP save correctly)
    target: str = "plain"


@dataclass(frozen=True)
class Guard:
    """One condition a site runs under: ``if args.backend == "smddp":`` (``holds`` False: the else branch)."""

    test: ast.expr
    holds: bool
    code: str


@dataclass(frozen=True)
class BackendSite:
    """``init_process_group(backend=...)`` (or ``ddp_backend=`` / ``process_group_backend=``)."""

    line: int
    code: str
    #: the backend expression with local names inlined; None: not given (the default backend)
    expr: Optional[ast.expr]
    guards: tuple[Guard, ...]
    #: inside a ``try`` whose ``except ImportError`` runs without it
    optional: bool = False


@dataclass(frozen=True)
class GuardedUse:
    """An import of ``torch_smddp`` or a use of a deprecated smdistributed API, with its guards."""

    line: int
    code: str
    module: str
    guards: tuple[Guard, ...]
    optional: bool


@dataclass(frozen=True)
class ImportUse:
    line: int
    module: str  # "" for ``from . import x``
    names: tuple[str, ...]
    level: int


@dataclass(frozen=True)
class ArgDefault:
    dest: str
    flag: str
    #: the default value; ``NO_DEFAULT`` when the argument has none preflight can read
    default: object


NO_DEFAULT = object()


@dataclass(frozen=True)
class ScriptFacts:
    path: Path
    #: deprecated smdistributed APIs, each with the guards it runs under
    deprecated: tuple["GuardedUse", ...]
    loaders: tuple[LoaderCall, ...]
    writes: tuple[WritePath, ...]
    uses_distributed_sampler: bool
    uses_even_shards: bool
    ddp_saves: tuple[StateSave, ...] = ()
    state_loads: tuple[StateLoad, ...] = ()
    #: the name shown in locations (relative to source_dir)
    display: str = ""
    #: "launch.ipynb cell 5" for a file written by %%writefile
    origin: Optional[str] = None
    line_offset: int = 0
    imports: tuple[ImportUse, ...] = ()
    #: directories this file adds to sys.path (absolute local paths)
    sys_path: tuple[str, ...] = ()
    #: scripts it starts (``subprocess.run(["python", "x.py"])``, ``os.system("python x.py")``)
    runs: tuple[str, ...] = ()
    argparse: tuple[ArgDefault, ...] = ()
    backends: tuple[BackendSite, ...] = ()
    smddp_imports: tuple[GuardedUse, ...] = ()
    #: (line, what): wrappers that shard data (``fabric.setup_dataloaders``, ``Trainer``...)
    wrappers: tuple[tuple[int, str], ...] = ()
    #: (line, what): collectives after init (DDP, all_reduce, barrier...)
    collectives: tuple[tuple[int, str], ...] = ()
    #: imported functions whose result this file iterates to the end on every rank
    iterated_calls: tuple[str, ...] = ()
    #: Hugging Face / Lightning trainer classes this file builds (``transformers.Trainer``...)
    trainers: tuple[str, ...] = ()
    #: calls of the TensorFlow SMDDP API (``sdp.init()``, ``sdp.DistributedGradientTape(tape)``...),
    #: each with its guards: the TensorFlow way of using the SMDDP collectives (not deprecated)
    tf_smddp: tuple["GuardedUse", ...] = ()

    @property
    def name(self) -> str:
        return self.display or self.path.name

    def where(self, line: int) -> str:
        if self.origin:
            return f"{self.name}:{line} ({self.origin} line {line + self.line_offset})"
        return f"{self.name}:{line}"


def analyse_script(path: Path, *, display: str = "", root: Optional[Path] = None) -> ScriptFacts:
    """Read a script as CPython would (BOM, PEP 263 coding line; NUL = binary input)."""
    return analyse_source(read_python(path), path=path, display=display, root=root)


def analyse_source(source: str, *, path: Path, display: str = "", origin: Optional[str] = None,
                   line_offset: int = 0, root: Optional[Path] = None) -> ScriptFacts:
    tree = parse_python(source, where=str(path), hint=" (preflight reads Python training scripts)")
    try:
        facts = _Analyser(source, path, tree, root=root).run()
    except (RecursionError, MemoryError) as exc:
        raise too_deep(str(path), "training script", exc) from None
    return replace(facts, display=display, origin=origin, line_offset=line_offset)


def is_deprecated(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in DEPRECATED_MODULES)


class _Analyser:
    def __init__(self, source: str, path: Path, tree: ast.Module, *, root: Optional[Path] = None) -> None:
        self.root = root
        self.source = source
        self.path = path
        self.tree = tree
        self.aliases: dict[str, str] = {}
        self.constants: dict[str, Optional[str]] = {}
        self.sampler_names: dict[str, str] = {}  # variable -> dotted name of the callee that built it

    def run(self) -> ScriptFacts:
        # One breadth-first walk gives every pass its nodes and each node its parent.
        self.nodes: list[ast.AST] = [self.tree]
        self.parents: dict[ast.AST, ast.AST] = {}
        index = 0
        while index < len(self.nodes):
            parent = self.nodes[index]
            index += 1
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
                self.nodes.append(child)
        self._collect_names()
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {
            node.name: node for node in self.nodes if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.local_trainers = {
            n.name: base for n in self.nodes if isinstance(n, ast.ClassDef)
            for base in (self._dotted(b) or "" for b in n.bases)
            if base.endswith("Trainer") and base.split(".", 1)[0] in _TRAINER_PACKAGES
        }
        # Lightning / Hugging Face in this file (their Trainers re-create loaders with a sampler)
        self.lightning_or_hf = any(v.split(".", 1)[0] in _TRAINER_PACKAGES for v in self.aliases.values())
        deprecated: list[GuardedUse] = []
        smddp_imports: list[GuardedUse] = []
        imports: list[ImportUse] = []
        loaders: list[LoaderCall] = []
        writes: list[WritePath] = []
        backends: list[BackendSite] = []
        wrappers: list[tuple[int, str]] = []
        collectives: list[tuple[int, str]] = []
        sys_path: list[str] = []
        runs: list[str] = []
        argparse: dict[str, ArgDefault] = {}
        trainers: set[str] = set()
        tf_smddp: list[GuardedUse] = []
        dist_sampler = even = False

        def imported_whole(node: ast.Import | ast.Call, module: str) -> None:
            """``import module`` or ``importlib.import_module("module")``: the import, and what it starts."""
            imports.append(ImportUse(node.lineno, module, (), 0))
            if is_deprecated(module):
                deprecated.append(self._use(node, module))
            if module.endswith("torch_smddp"):
                smddp_imports.append(self._use(node, module))

        for node in self.nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    imported_whole(node, alias.name)
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                imports.append(ImportUse(node.lineno, module, tuple(a.name for a in node.names), node.level))
                if node.level:
                    continue
                if is_deprecated(module):
                    deprecated.append(self._use(node, module))
                else:
                    for alias in node.names:
                        if is_deprecated(f"{module}.{alias.name}"):
                            deprecated.append(self._use(node, f"{module}.{alias.name}"))
                if any(f"{module}.{a.name}".endswith("torch_smddp") for a in node.names) or module.endswith("torch_smddp"):
                    smddp_imports.append(self._use(node, f"{module}.torch_smddp"))
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
                    if target:
                        imported_whole(node, target)
                if leaf in TF_SMDDP_CALLS and callee.startswith(_TF_SMDDP_PREFIX):
                    tf_smddp.append(self._use(node, TF_SMDDP_MODULE))
                    if leaf in TF_SMDDP_COLLECTIVES:
                        collectives.append((node.lineno, leaf))
                if leaf == "init_process_group":
                    backends.append(self._backend_site(node, self._arg(node, "backend", 0)))
                for kw in node.keywords:
                    if kw.arg in _BACKEND_KEYWORDS:
                        backends.append(self._backend_site(node, kw.value))
                if leaf == "DistributedSampler":
                    dist_sampler = True
                if leaf == "even_shards":
                    even = True
                if leaf == "DataLoader":
                    loaders.append(self._loader(node))
                if self._shards(node, callee):
                    wrappers.append((node.lineno, self._code(node)))
                    kind = self._trainer_kind(callee)
                    if kind:
                        trainers.add(kind)
                if leaf in _COLLECTIVES or (leaf in _AMBIGUOUS_COLLECTIVES and callee.startswith(_DIST_MODULES)) \
                        or (leaf == "initialize" and callee.startswith("deepspeed")):
                    collectives.append((node.lineno, leaf))
                if leaf in {"insert", "append"} and callee.endswith(("sys.path.insert", "sys.path.append")) and node.args:
                    added = self._local_path(node.args[-1])
                    if added is not None:
                        sys_path.append(added)
                runs.extend(self._started_scripts(node, callee))
                if leaf == "add_argument":
                    found = self._argument(node)
                    if found is not None:
                        argparse[found.dest] = found
                write = self._write(node, callee)
                if write is not None:
                    writes.append(write)

        deprecated = sorted({(d.line, d.module): d for d in deprecated}.values(), key=lambda d: d.line)
        saves, loads = self._state_dicts()
        imported = {a.asname or a.name for n in self.nodes if isinstance(n, ast.ImportFrom) for a in n.names}
        iterated: set[str] = set()
        for loop in self.nodes:  # for batch in build_loader(): / enumerate(build_loader())
            if isinstance(loop, (ast.For, ast.AsyncFor)):
                it = loop.iter
                while isinstance(it, ast.Call) and _leaf(it.func) in _ITER_WRAPPERS and it.args:
                    it = it.args[0]
                if isinstance(it, ast.Call) and _leaf(it.func) in imported and not self._guarded(loop) \
                        and not self._step_bounded(loop) and not self._evaluation(loop):
                    iterated.add(_leaf(it.func))
        return ScriptFacts(
            ddp_saves=saves,
            state_loads=loads,
            path=self.path,
            deprecated=tuple(deprecated),
            loaders=tuple(sorted(loaders, key=lambda c: c.line)),
            writes=tuple(sorted(writes, key=lambda w: w.line)),
            uses_distributed_sampler=dist_sampler,
            uses_even_shards=even,
            imports=tuple(imports),
            sys_path=tuple(sys_path),
            runs=tuple(runs),
            argparse=tuple(argparse.values()),
            backends=tuple(backends),
            smddp_imports=tuple(smddp_imports),
            wrappers=tuple(wrappers),
            collectives=tuple(sorted(set(collectives))),
            iterated_calls=tuple(iterated),
            trainers=tuple(sorted(trainers)),
            tf_smddp=tuple(tf_smddp),
        )

    # ------------------------------------------------------------------ job-level facts

    def _guards(self, node: ast.AST) -> tuple[tuple[Guard, ...], bool]:
        """The ``if`` tests ``node`` runs under, and whether a failed import is caught around it."""
        guards: list[Guard] = []
        optional = False
        for child, parent in self._ancestors(node):
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and not is_main_guard(parent.test):
                holds = child in parent.body if isinstance(parent, ast.If) else child is parent.body
                guards.append(Guard(self._inline(parent.test, parent), holds, _unparse(parent.test)))
            if isinstance(parent, ast.Try) and child in parent.body:
                for handler in parent.handlers:
                    names = {_leaf(n) for n in ast.walk(handler.type)} if handler.type is not None else {"Exception"}
                    if names & {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}:
                        optional = True
        return tuple(reversed(guards)), optional

    def _use(self, node: ast.AST, module: str) -> GuardedUse:
        guards, optional = self._guards(node)
        return GuardedUse(line=getattr(node, "lineno", 0), code=self._code(node), module=module, guards=guards,
                          optional=optional)

    def _backend_site(self, node: ast.Call, expr: Optional[ast.AST]) -> BackendSite:
        guards, optional = self._guards(node)
        inlined = self._inline(expr, node) if isinstance(expr, ast.expr) else None
        return BackendSite(node.lineno, self._code(node), inlined, guards, optional)

    def _assignments(self, name: str, scope: ast.AST) -> list[ast.AST]:
        """What ``name`` is bound to in ``scope`` (a function, or the module outside functions):
        the assigned expression, or the statement when it is not a plain ``name = value``."""
        owner = None if scope is self.tree else scope
        found: list[ast.AST] = []
        for stmt in (self.nodes if scope is self.tree else ast.walk(scope)):
            value: Optional[ast.AST] = None
            if isinstance(stmt, ast.Assign):
                targets: list[ast.AST] = list(stmt.targets)
                value = stmt.value
            elif isinstance(stmt, ast.AnnAssign):
                targets, value = [stmt.target], stmt.value
            elif isinstance(stmt, (ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
                targets = [stmt.target]
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
                opened = [i.context_expr for i in stmt.items if isinstance(i.optional_vars, ast.Name)
                          and i.optional_vars.id == name and isinstance(i.context_expr, ast.Call)
                          and _leaf(i.context_expr.func) == "open" and i.context_expr.args]
                if len(targets) == 1 and opened:
                    value = opened[0].args[0]  # with open(path) as f: the file is path
            else:
                continue
            direct = any(isinstance(t, ast.Name) and t.id == name for t in targets)
            if not direct and not any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
                continue
            if self._enclosing_function(stmt) is not owner:
                continue
            found.append(value if direct and value is not None and len(targets) == 1 else stmt)
        return found

    def _inline(self, expr: ast.expr, at: ast.AST, depth: int = 0) -> ast.expr:
        """``expr`` with each local name replaced by its one assignment (in the function, else the module)."""
        if depth > 4:
            return expr
        scope: ast.AST = self._enclosing_function(at) or self.tree
        analyser = self

        class Inliner(ast.NodeTransformer):
            def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
                return node  # args.backend: read as an argparse value, not inlined

            def visit_Name(self, node: ast.Name) -> ast.AST:
                for area in (scope, analyser.tree) if scope is not analyser.tree else (analyser.tree,):
                    if area is not analyser.tree and isinstance(area, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                            node.id in _parameter_names(area):
                        return node  # a parameter: its value comes from the caller
                    values = analyser._assignments(node.id, area)
                    if len(values) == 1 and isinstance(values[0], ast.expr):
                        return analyser._inline(values[0], values[0], depth + 1)
                    if values:
                        return node
                return node

        return Inliner().visit(copy.deepcopy(expr))  # type: ignore[no-any-return]

    def _argument(self, node: ast.Call) -> Optional[ArgDefault]:
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        dest_node = self._arg(node, "dest", None)
        longs = [f for f in flags if f.startswith("--")]
        chosen = longs[0] if longs else (flags[0] if flags else None)
        if isinstance(dest_node, ast.Constant) and isinstance(dest_node.value, str):
            dest = dest_node.value
        elif chosen:
            dest = chosen.lstrip("-").replace("-", "_")
        else:
            return None
        default: object = NO_DEFAULT
        given = self._arg(node, "default", None)
        if given is not None:
            try:
                default = ast.literal_eval(given)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                default = NO_DEFAULT
        elif not flags or not flags[0].startswith("-"):
            default = NO_DEFAULT
        else:
            action = self._arg(node, "action", None)
            if isinstance(action, ast.Constant) and action.value in ("store_true", "store_false"):
                default = action.value == "store_false"
            else:
                default = None
        return ArgDefault(dest, chosen or dest, default)

    def _trainer_kind(self, callee: str) -> Optional[str]:
        callee = self.local_trainers.get(callee, callee)  # class EvalTrainer(Trainer): ...
        root = callee.split(".", 1)[0]
        if callee.endswith("Trainer") and root in _TRAINER_PACKAGES:
            return callee
        return None

    def _shards(self, node: ast.Call, callee: Optional[str] = None) -> bool:
        """Calls that install a distributed sampler on the loaders handed to them."""
        callee = callee if callee is not None else self._dotted(node.func) or ""
        leaf = callee.rsplit(".", 1)[-1]
        if leaf not in _SHARDING_LEAVES and not leaf.endswith("Trainer"):
            return False
        if leaf == "setup_dataloaders":
            return True  # Lightning Fabric
        if leaf == "prepare" and isinstance(node.func, ast.Attribute) and "accelerat" in _unparse(node.func.value).lower():
            return True  # Hugging Face Accelerate
        if leaf == "prepare" and self._built_by(node.func, "accelerate.Accelerator"):
            return True
        if leaf == "initialize" and callee.startswith("deepspeed") and any(k.arg == "training_data" for k in node.keywords):
            return True
        if self._trainer_kind(callee):
            return True
        if leaf in {"fit", "validate", "test", "predict"} and self.lightning_or_hf and isinstance(node.func, ast.Attribute) \
                and "trainer" in _unparse(node.func.value).lower():
            return True
        return False

    def _built_by(self, func: ast.expr, dotted: str) -> bool:
        if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            return False
        for value in self._assignments(func.value.id, self._enclosing_function(func) or self.tree):
            if isinstance(value, ast.Call) and (self._dotted(value.func) or "") == dotted:
                return True
        return False

    def _local_path(self, node: ast.AST) -> Optional[str]:
        """A directory the file adds to sys.path, as a local absolute path (its folder for
        ``__file__``; the code directory for the working directory, as SageMaker runs from there)."""
        cwd = str(self.root) if self.root is not None else str(self.path.parent)
        value = _path_value(node, self._dotted, cwd=cwd, file=str(self.path), depth=0,
                            inline=lambda n: self._inline(n, n) if isinstance(n, ast.Name) else n)
        if value is None:
            return None
        return posixpath.normpath(value if value.startswith("/") else posixpath.join(cwd, value))

    def _started_scripts(self, node: ast.Call, callee: str) -> list[str]:
        if not (callee.startswith(("subprocess.", "os.")) or callee == "runpy.run_path"):
            return []
        from smddp_infra.preflight.shell import python_calls

        if callee in {"os.system", "os.popen"} and node.args:
            text = self._command_text(self._inline(node.args[0], node))
        elif callee.startswith("subprocess.") and (node.args or self._arg(node, "args", None) is not None):
            first = node.args[0] if node.args else self._arg(node, "args", None)
            text = self._command_text(self._inline(first, node)) if isinstance(first, ast.expr) else None
        elif callee == "runpy.run_path" and node.args:
            value = self._const(node.args[0])
            return [value] if value else []
        else:
            return []
        return [call.script for call in python_calls(text)] if text else []

    def _command_text(self, node: ast.AST, depth: int = 0) -> Optional[str]:
        """A command line as far as it is constant: ``["deepspeed", "--num_gpus", str(n), "train.py"]``,
        ``f"torchrun --nproc_per_node {gpus} train.py"``; unknown parts become a placeholder word."""
        if depth > 4:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        if isinstance(node, ast.JoinedStr):
            return "".join(str(p.value) if isinstance(p, ast.Constant) else
                           (self._command_text(p.value, depth + 1) if isinstance(p, ast.FormattedValue) else None) or "ARG"
                           for p in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self._command_text(node.left, depth + 1), self._command_text(node.right, depth + 1)
            if isinstance(node.left, (ast.List, ast.Tuple)) or isinstance(node.right, (ast.List, ast.Tuple)):
                return " ".join(w or "ARG" for w in (left, right))
            return (left or "ARG") + (right or "ARG") if left is not None or right is not None else None
        if isinstance(node, (ast.List, ast.Tuple)):
            words = [self._command_text(e, depth + 1) for e in node.elts]
            if not any(words):
                return None
            return " ".join(shlex.quote(w) if w is not None else "ARG" for w in words)
        return None

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
        return any(isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test
                   and _mentions(parent.test, _RANK_WORDS) for child, parent in self._ancestors(node))

    def _step_bounded(self, loop: ast.AST) -> bool:
        """The loop over the loader leaves on a step count (``if global_step >= max_steps: break``):
        every rank runs the same number of steps whatever its batch count."""
        for node in ast.walk(loop):
            if isinstance(node, (ast.Break, ast.Return)):
                for _, parent in self._ancestors(node):
                    if parent is loop:
                        break
                    if isinstance(parent, ast.If) and _mentions(parent.test, _STEP_WORDS):
                        return True
        return False

    def _evaluation(self, loop: ast.AST) -> bool:
        """Inside ``with torch.no_grad()`` / ``torch.inference_mode()`` or a function named like
        evaluation (``evaluate``, ``test``, ``validate``): no backward pass, so uneven counts hang
        only if the loop itself runs collectives (an all_reduce per batch, DDP's buffer broadcast)."""
        for _, parent in self._ancestors(loop):
            if isinstance(parent, (ast.With, ast.AsyncWith)):
                for item in parent.items:
                    call = item.context_expr
                    if isinstance(call, ast.Call) and _leaf(call.func) in {"no_grad", "inference_mode"}:
                        return True
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = parent.name.lower()
                return any(word in name for word in ("eval", "test", "valid", "predict", "infer"))
        return False

    def _loader_use(self, node: ast.Call) -> tuple[str, Optional[int]]:
        if self._guarded(node):
            return "guarded", node.lineno
        hook = self._enclosing_function(node)
        if hook is not None and hook.name in _LOADER_HOOKS and self.lightning_or_hf:
            return "wrapped", node.lineno  # a Lightning / HF Trainer hook: the trainer installs the sampler
        uses = list(self._uses(node, depth=0))
        if not uses:
            _, returned_from = self._bound_names(node)
            if returned_from is not None and not any(
                    isinstance(c, ast.Call) and _leaf(c.func) == returned_from for c in self.nodes):
                return f"returned:{returned_from}", node.lineno  # built for another module of the program
            return "never", None
        for kind in ("wrapped", "iterated", "unclear", "evaluation"):  # the use that decides, first
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
        return next((parent for _, parent in self._ancestors(node)
                     if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef))), None)

    def _ancestors(self, node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
        """(child, parent) from ``node``'s parent up to the module: the one walk every question
        about where a node sits (under a rank guard, in a function, inside a ``try``) takes."""
        child, parent = node, self.parents.get(node)
        while parent is not None:
            yield child, parent
            child, parent = parent, self.parents.get(parent)

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
        if isinstance(parent, ast.Call) and (child in parent.args or any(k.value is child for k in parent.keywords)) \
                and self._shards(parent):
            return [("wrapped", line)]
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
        """DDP state_dict saves and plain-model loads, each with the path expression it uses.

        Wrapping is read per function and by line: ``model = Net(); model.load_state_dict(...)``
        before ``model = DDP(model)`` loads into the plain model; ``self.model = DDP(...)``
        anywhere makes every ``.model`` a wrapper.
        """
        self.wrap_lines: dict[tuple[Optional[ast.AST], str], list[int]] = {}
        self.wrapped_attrs: set[str] = set()
        for node in self.nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call) and \
                    (self._dotted(node.value.func) or _leaf(node.value.func)).rsplit(".", 1)[-1] in _WRAPPERS_OF_MODELS:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.wrap_lines.setdefault((self._enclosing_function(node), target.id), []).append(node.lineno)
                    elif isinstance(target, ast.Attribute):
                        self.wrapped_attrs.add(target.attr)
        saves: list[StateSave] = []
        loads: list[StateLoad] = []
        for node in self.nodes:
            if not isinstance(node, ast.Call):
                continue
            callee = self._dotted(node.func) or ""
            if callee in _SAVE_FUNCTIONS and node.args:
                state = self._ddp_state(node.args[0], node, depth=0)
                saved_to = self._arg(node, "f", 1)
                if state is not None and saved_to is not None:
                    model, keys = state
                    saves.append(StateSave(node.lineno, self._code(node), model, self._path_expr(saved_to, node), keys))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "load_state_dict" and node.args:
                load = self._plain_load(node)
                if load is not None:
                    loads.append(load)
        return tuple(saves), tuple(loads)

    def _wrapped(self, owner: ast.AST, at: ast.AST) -> Optional[bool]:
        """True: a DDP wrapper at this line; False: a model built here and not wrapped yet; None: cannot tell."""
        if isinstance(owner, ast.Attribute):
            if owner.attr == "module":
                return False
            return True if owner.attr in self.wrapped_attrs else None
        if not isinstance(owner, ast.Name):
            return None
        scope = self._enclosing_function(at)
        line = getattr(at, "lineno", 0)
        for area in (scope, None) if scope is not None else (None,):
            if any(wrapped_at <= line for wrapped_at in self.wrap_lines.get((area, owner.id), [])):
                return True
            if area is not None and owner.id in _parameter_names(area):
                return None  # a parameter: the caller decides
            if self._assignments(owner.id, area or self.tree):
                return False
        return None

    def _ddp_state(self, expr: ast.AST, at: ast.AST, *, depth: int) -> Optional[tuple[str, Optional[frozenset[str]]]]:
        """(model, keys) when ``expr`` is a DDP wrapper's state_dict (keys: the dict keys holding one)."""
        if depth > 4:
            return None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "state_dict":
            owner = expr.func.value
            return (_unparse(owner), None) if self._wrapped(owner, at) is True else None
        if isinstance(expr, ast.Dict):
            keys = set()
            model = ""
            for key, value in zip(expr.keys, expr.values):
                inner = self._ddp_state(value, at, depth=depth + 1)
                if inner is not None and isinstance(key, ast.Constant) and isinstance(key.value, str):
                    keys.add(key.value)
                    model = model or inner[0]
            return (model, frozenset(keys)) if keys else None
        if isinstance(expr, ast.Name):
            values = self._assignments(expr.id, self._enclosing_function(at) or self.tree)
            if len(values) == 1 and isinstance(values[0], ast.expr):
                return self._ddp_state(values[0], values[0], depth=depth + 1)
        return None

    def _plain_load(self, node: ast.Call) -> Optional[StateLoad]:
        assert isinstance(node.func, ast.Attribute)
        owner = node.func.value
        if self._optimizer_like(owner, node):
            return None  # optimizer / scheduler / scaler state_dicts never carry module.
        strict = self._arg(node, "strict", 1)
        wrapped = self._wrapped(owner, node)
        if isinstance(strict, ast.Constant) and strict.value is False:
            target = "fine"  # strict=False: unexpected keys are ignored
        elif strict is not None and not isinstance(strict, ast.Constant):
            target = "fine"  # strict=args.strict: benefit of the doubt
        elif wrapped is True or self._strips_prefix(node):
            target = "fine"  # loads into the wrapper, or strips module. first
        else:
            target = "plain" if wrapped is False else "unknown"
        source: ast.AST = node.args[0]
        key: Optional[str] = None
        for _ in range(5):
            if isinstance(source, ast.Subscript):
                if isinstance(source.slice, ast.Constant) and isinstance(source.slice.value, str):
                    key = key or source.slice.value
                source = source.value
            elif isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and source.func.attr == "get" \
                    and source.args and isinstance(source.args[0], ast.Constant) and isinstance(source.args[0].value, str):
                key = key or source.args[0].value
                source = source.func.value
            elif isinstance(source, ast.Call) and _leaf(source.func) in _STRIPPERS and source.args:
                target, source = "fine", source.args[0]
            elif isinstance(source, ast.Name):
                values = self._assignments(source.id, self._enclosing_function(node) or self.tree)
                if len(values) != 1 or not isinstance(values[0], ast.expr):
                    return None
                source = values[0]
            else:
                break
        if not (isinstance(source, ast.Call) and (self._dotted(source.func) or "") == "torch.load"):
            # {k.replace("module.", ""): v for k, v in torch.load(p).items()}: the load inside
            inner = [n for n in ast.walk(source) if isinstance(n, ast.Call) and (self._dotted(n.func) or "") == "torch.load"]
            if len(inner) != 1:
                return None
            source = inner[0]
        path = self._arg(source, "f", 0)
        if path is None:
            return None
        return StateLoad(node.lineno, self._code(node), _unparse(owner), self._path_expr(path, source), key, target)

    def _optimizer_like(self, owner: ast.AST, at: ast.AST) -> bool:
        name = _leaf(owner).lower()
        if any(word in name for word in ("optim", "sched", "scaler", "opt", "lr_")):
            return True
        if isinstance(owner, ast.Name):
            for value in self._assignments(owner.id, self._enclosing_function(at) or self.tree):
                if isinstance(value, ast.Call):
                    callee = self._dotted(value.func) or ""
                    if callee.startswith("torch.optim") or any(w in callee for w in ("Optim", "Scheduler", "Scaler", "Adam", "SGD")):
                        return True
        return False

    def _strips_prefix(self, node: ast.AST) -> bool:
        """A visible ``module.`` strip in the load's function: strip_ddp_prefix,
        consume_prefix_in_state_dict_if_present, or any text that names ``module.``."""
        scope = self._enclosing_function(node) or self.tree
        for child in (ast.walk(scope) if scope is not self.tree else self.nodes):
            if isinstance(child, ast.Call) and _leaf(child.func) in _STRIPPERS:
                return True
            if isinstance(child, ast.Constant) and isinstance(child.value, str) and child.value.startswith("module"):
                return True
        return False

    def _path_expr(self, node: ast.AST, at: ast.AST) -> PathExpr:
        inlined = self._inline(node, at) if isinstance(node, ast.expr) else node
        text = _unparse(inlined)
        resolved = self._path(inlined)
        literal = posixpath.normpath(resolved[0]) if resolved is not None and resolved[1] and resolved[0] else None
        bases = {id(n.value) for n in ast.walk(inlined) if isinstance(n, ast.Attribute)}
        open_name = any(isinstance(n, ast.Name) and id(n) not in bases and n.id not in self.aliases and n.id not in {"str", "Path"}
                        for n in ast.walk(inlined))
        model_dir = "model_dir" in text.lower() or "SM_MODEL_DIR" in text or bool(literal and (literal + "/").startswith("/opt/ml/model/"))
        function = self._enclosing_function(at)
        return PathExpr(text, literal, self._basename(inlined), model_dir, open_name, function.name if function else "")

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


_SHARDING_LEAVES = frozenset({"setup_dataloaders", "prepare", "initialize", "fit", "validate", "test", "predict"})
_TRAINER_PACKAGES = frozenset({"transformers", "trl", "lightning", "pytorch_lightning", "setfit"})
_STRIPPERS = frozenset({"strip_ddp_prefix", "consume_prefix_in_state_dict_if_present"})
_WRAPPERS_OF_MODELS = frozenset({"DistributedDataParallel", "DataParallel"})
_BACKEND_KEYWORDS = frozenset({"ddp_backend", "process_group_backend"})
#: Calls after init that every rank must reach: a rank that runs out of batches early leaves
#: the others waiting in them (DDP's gradient all-reduce is the usual one).
_COLLECTIVES = frozenset({
    "DistributedDataParallel", "FullyShardedDataParallel", "all_reduce", "all_gather", "all_gather_into_tensor",
    "reduce_scatter", "reduce_scatter_tensor", "barrier", "all_to_all", "all_gather_object", "broadcast_object_list",
})
#: Names that are collectives only in a distributed module (``torch.gather``, ``functools.reduce`` are not).
_AMBIGUOUS_COLLECTIVES = frozenset({"broadcast", "reduce", "gather", "scatter"})
_DIST_MODULES = ("torch.distributed", "smdistributed", "deepspeed.comm", "horovod")
#: Lightning / Hugging Face hooks whose loaders the trainer re-creates with a distributed sampler.
_LOADER_HOOKS = frozenset({"train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader",
                           "get_train_dataloader", "get_eval_dataloader", "get_test_dataloader"})


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (RecursionError, ValueError):
        return "..."


def _path_value(node: ast.AST, dotted: Callable[[ast.AST], Optional[str]], *, cwd: str, file: str, depth: int,
                inline: Callable[[ast.AST], ast.AST]) -> Optional[str]:
    """A path expression of a training script evaluated to a local path string, or None."""
    if depth > 8:
        return None

    def again(child: ast.AST) -> Optional[str]:
        return _path_value(child, dotted, cwd=cwd, file=file, depth=depth + 1, inline=inline)

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        if node.id == "__file__":
            return file
        replaced = inline(node)
        return again(replaced) if replaced is not node else None
    if isinstance(node, ast.Attribute):
        if node.attr == "parent":
            base = again(node.value)
            return posixpath.dirname(base) if base is not None else None
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = again(node.left), again(node.right)
        return posixpath.join(left, right) if left is not None and right is not None else None
    if isinstance(node, ast.Call):
        callee = dotted(node.func) or ""
        leaf = callee.rsplit(".", 1)[-1]
        args = [again(a) for a in node.args]
        if callee in {"os.getcwd", "pathlib.Path.cwd"}:
            return cwd
        if any(a is None for a in args):
            return None
        values = [a for a in args if a is not None]
        if callee in {"os.path.join", "posixpath.join"} and values:
            return posixpath.join(*values)
        if callee in {"os.path.dirname"} and len(values) == 1:
            return posixpath.dirname(values[0])
        if callee in {"os.path.abspath", "os.path.realpath", "os.path.normpath", "str", "os.fspath"} and len(values) == 1:
            return values[0]
        if leaf in {"Path", "PurePath", "PosixPath"} and values:
            return posixpath.join(*values)
        if isinstance(node.func, ast.Attribute) and node.func.attr in {"resolve", "absolute", "as_posix"} and not values:
            return again(node.func.value)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "joinpath" and values:
            base = again(node.func.value)
            return posixpath.join(base, *values) if base is not None else None
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


def _parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a function binds from its caller (positional-only, ordinary and keyword-only)."""
    return {a.arg for a in (*function.args.args, *function.args.kwonlyargs, *function.args.posonlyargs)}


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
