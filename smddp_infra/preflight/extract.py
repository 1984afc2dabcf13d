"""Find the training jobs a notebook or launcher script builds, without running it.

Users describe jobs in Python: ``PyTorch(entry_point=..., **common)`` in cell 7, with
``bucket`` from cell 2 and ``common`` from cell 5. This module walks the code (``ast``,
never ``exec``) statement by statement, in order, keeping what each name holds at that
point, and records every SageMaker estimator / ``ModelTrainer`` construction with the value
and the line of each argument.

What it resolves: literals, names assigned earlier (the last assignment before the call),
dict/list/tuple literals, f-strings, ``%`` formatting, ``+``, ``os.path.join``,
``str.format``, ``**kwargs`` dicts, ``dict(...)``, SDK config objects (``Compute(...)``,
``SourceCode(...)``, ``Torchrun()``...), local functions called with known arguments, and
argparse defaults (``args.instance_type`` is the default of ``--instance-type``). A
conditional expression or an ``if`` whose branches disagree gives :class:`Unknown`, as
does anything else (``sess.default_bucket()``, ``os.environ[...]``): a rule that needs an
unknown value does not fire, and the report lists it as not evaluated.
"""

from __future__ import annotations

import ast
import posixpath
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from smddp_infra.preflight.reading import is_main_guard

#: SageMaker Python SDK v2 estimator classes (leaf names, under any ``sagemaker.*`` module).
V2_ESTIMATORS = frozenset({"PyTorch", "HuggingFace", "TensorFlow", "Estimator", "MXNet", "Framework"})
#: SDK v3 / ``sagemaker.modules`` trainer.
TRAINERS = frozenset({"ModelTrainer"})
#: SDK objects whose constructor arguments preflight reads (kept as :class:`SdkObject`).
SDK_OBJECTS = frozenset({
    "Compute", "SourceCode", "CheckpointConfig", "Networking", "Torchrun", "MPI", "SMP",
    "DebuggerHookConfig", "FileSystemInput", "TrainingInput", "InputData", "FileSystemDataSource",
    "StoppingCondition", "OutputDataConfig", "Session", "TensorBoardOutputConfig", "ProfilerConfig",
})
_MAX_CALL_DEPTH = 8
_BUILTINS = frozenset({"dict", "str", "int", "float", "bool", "list", "tuple", "len", "print", "open", "range"})


@dataclass(frozen=True)
class Unknown:
    """A value preflight cannot know before the job runs, and why."""

    reason: str

    def __repr__(self) -> str:
        return f"<unknown: {self.reason}>"


@dataclass(frozen=True)
class Partial(Unknown):
    """A string with unknown parts whose shape is known: ``f"s3://{bucket}/checkpoints"``.

    Unknown for every rule, except those that need only its shape: a checkpoint URI written
    this way is set (the Debugger rule), and ends in ``/`` or not (the trailing-slash rule).
    """

    template: str  # the unknown parts as written: "s3://{bucket}/checkpoints"
    prefix: str  # the constant text before the first unknown part
    suffix_known: bool  # the text ends in a constant part


def _partial(left: Any, right: Any, left_text: str, right_text: str) -> Optional[Partial]:
    """``left + right`` where at least one side is unknown and the other a string or partial."""
    def piece(value: Any, text: str) -> Optional[tuple[str, str, bool, bool, str]]:
        if isinstance(value, str):
            return value, value, True, True, ""
        if isinstance(value, Partial):
            return value.template, value.prefix, False, value.suffix_known, value.reason
        if isinstance(value, Unknown):
            return "{" + text + "}", "", False, False, value.reason
        return None

    a, b = piece(left, left_text), piece(right, right_text)
    if a is None or b is None or (a[2] and b[2]):
        return None
    reason = a[4] or b[4]
    prefix = a[0] + b[1] if a[2] else a[1]
    return Partial(reason, a[0] + b[0], prefix, b[3] if not b[2] or b[0] else a[3])


def _joined(parts: Sequence[Any], texts: Sequence[str], glue: Callable[[str, str], str]) -> Any:
    """``os.path.join(f"s3://{bucket}", "checkpoints")`` / ``"/".join([...])`` with unknown parts:
    a :class:`Partial` keeping the constant text (and whether the end is constant), else None."""
    if not parts or not any(isinstance(p, Unknown) for p in parts):
        return None
    if not all(isinstance(p, (str, Unknown)) for p in parts):
        return None
    result: Any = None
    for part, text in zip(parts, texts):
        if result is None:
            result = part if not (isinstance(part, Unknown) and not isinstance(part, Partial)) else \
                Partial(part.reason, "{" + text + "}", "", False)
            continue
        if isinstance(result, str) and isinstance(part, str):
            result = glue(result, part)
            continue
        # the glue between the two (a "/" for a path join unless one side already has it)
        left_template = result if isinstance(result, str) else result.template
        right_template = part if isinstance(part, str) else part.template if isinstance(part, Partial) else "{" + text + "}"
        joined = glue(left_template, right_template)
        if not (joined.startswith(left_template) and joined.endswith(right_template)):
            return None  # an absolute part replaces what came before: not followed
        seam = joined[len(left_template):len(joined) - len(right_template)]
        left = result + seam if isinstance(result, str) else _partial(result, seam, "", "") if seam else result
        combined = _partial(left, part, "", text)
        if combined is None:
            return None
        result = combined
    return result


@dataclass(frozen=True)
class Ref:
    """A module, class or function reached through an import (``sagemaker.pytorch.PyTorch``)."""

    dotted: str

    @property
    def leaf(self) -> str:
        return self.dotted.rsplit(".", 1)[-1]

    @property
    def is_sagemaker(self) -> bool:
        return self.dotted.split(".", 1)[0] == "sagemaker"


@dataclass(frozen=True)
class SdkObject:
    """``Compute(instance_type="ml.p4d.24xlarge", ...)``: the class and its evaluated arguments."""

    cls: str
    kwargs: dict[str, Any]
    sites: dict[str, "Site"]
    site: "Site"


@dataclass(frozen=True)
class Unit:
    """One piece of code read in order: a notebook cell or a whole script."""

    source: str
    file: str  # display name of the notebook or script
    cell: Optional[int] = None  # 1-based position in the notebook, markdown cells included


@dataclass(frozen=True)
class Site:
    unit: Unit
    line: int

    def __str__(self) -> str:
        if self.unit.cell is None:
            return f"{self.unit.file}:{self.line}"
        return f"{self.unit.file} cell {self.unit.cell} line {self.line}"


@dataclass
class ExtractedJob:
    """One estimator / ModelTrainer construction."""

    cls: str
    module: str
    site: Site
    kwargs: dict[str, Any]
    sites: dict[str, Site]
    #: a ``**x`` preflight could not resolve: any argument may hide in it
    opaque_unpack: Optional[str] = None
    variable: Optional[str] = None
    #: ``.fit(...)`` / ``.train(...)`` calls on it: (method, kwargs, site)
    runs: list[tuple[str, dict[str, Any], Site]] = field(default_factory=list)
    #: argument -> where its value is a guess: "argparse default of --instance-type"
    provenance: dict[str, str] = field(default_factory=dict)
    #: the class method that built it ("from_recipe"), None for the constructor
    factory: Optional[str] = None

    @property
    def is_trainer(self) -> bool:
        return self.cls in TRAINERS

    @property
    def label(self) -> str:
        name = self.variable or f"{self.cls}(...)"
        return f"{name} ({self.site})"


@dataclass
class _JobHandle:
    job: ExtractedJob


@dataclass
class _Method:
    owner: Any
    name: str


@dataclass
class _ArgParser:
    defaults: dict[str, tuple[Any, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Namespace:
    defaults: dict[str, tuple[Any, str]]


@dataclass
class _Function:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    unit: Unit
    called: bool = False


class PathText(str):
    """A ``pathlib.Path`` (or ``os.path`` result) the code builds: a string that ``/`` joins.

    Jupyter runs a notebook with its own folder as the working directory, and a launcher
    script is taken to run from its folder (the same assumption as a relative source_dir):
    ``os.getcwd()``, ``Path.cwd()``, ``Path(__file__).parent`` and ``os.path.dirname(__file__)``
    are that folder, so ``os.path.join(os.getcwd(), "../scripts")`` resolves.
    """


_PATH_CLASSES = frozenset({"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.PurePosixPath"})
_OS_PATH_ONE: dict[str, Callable[[str], str]] = {
    "os.path.dirname": posixpath.dirname, "os.path.basename": posixpath.basename,
    "os.path.abspath": posixpath.normpath, "os.path.realpath": posixpath.normpath,
    "os.path.normpath": posixpath.normpath, "os.path.expanduser": lambda p: p,
}


class _LocDict(dict):  # type: ignore[type-arg]
    """A dict literal that remembers where each key was written (for ``**kwargs`` sites)."""

    sites: dict[str, Site]


def _located(value: Mapping[Any, Any]) -> _LocDict:
    """A new dict with ``value``'s items and where each key was written (nothing for a plain dict).
    Every dict the interpreter changes is rebuilt this way: a value already bound never changes."""
    copied = _LocDict(value)
    copied.sites = dict(getattr(value, "sites", {}))
    return copied


def _is_unknown(value: Any) -> bool:
    return isinstance(value, Unknown)


def contains_unknown(value: Any) -> bool:
    """Whether an interpreted value is, or holds at any depth, an :class:`Unknown`."""
    if isinstance(value, Unknown):
        return True
    if isinstance(value, dict):
        return any(contains_unknown(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(contains_unknown(v) for v in value)
    return False


def plain(value: Any) -> Any:
    """Strip the interpreter's wrappers (for messages, comparisons and JSON)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return value


class Extractor:
    """Walks units in order; ``jobs`` holds every construction found."""

    def __init__(self, *, cwd: Optional[str] = None, file: Optional[str] = None) -> None:
        self.env: dict[str, Any] = {}
        self.cwd = cwd
        if file is not None:
            self.env["__file__"] = file
        self.jobs: list[ExtractedJob] = []
        self._seen_calls: set[tuple[Any, ...]] = set()
        #: the call sites of the local functions being evaluated: a helper called twice builds two jobs
        self._stack: list[tuple[int, int, int]] = []
        self._functions: list[_Function] = []
        self._depth = 0
        self._provenance: dict[str, str] = {}
        self.unit: Unit = Unit("", "")

    # ------------------------------------------------------------------ statements

    def run(self, units: Sequence[tuple[Unit, ast.Module]]) -> list[ExtractedJob]:
        for unit, tree in units:
            self.unit = unit
            self._block(tree.body, self.env)
        # Functions that build a job but are never called from the code we read (a
        # `main()` run by a framework, a helper in a notebook): judged with unknown parameters.
        for function in list(self._functions):
            if not function.called and mentions_sagemaker_job(function.node):
                self.unit = function.unit
                self._call_function(function, [], {}, self.env)
        return self.jobs

    def _block(self, body: Sequence[ast.stmt], env: dict[str, Any]) -> None:
        for stmt in body:
            self._stmt(stmt, env)

    def _stmt(self, stmt: ast.stmt, env: dict[str, Any]) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    env[alias.asname] = Ref(alias.name)
                else:
                    root = alias.name.split(".", 1)[0]
                    env[root] = Ref(root)
        elif isinstance(stmt, ast.ImportFrom):
            module = stmt.module or ""
            for alias in stmt.names:
                if alias.name == "*":
                    if module.startswith("sagemaker"):
                        for name in (*V2_ESTIMATORS, *TRAINERS, *SDK_OBJECTS):
                            env.setdefault(name, Ref(f"{module}.{name}"))
                    continue
                env[alias.asname or alias.name] = Ref(f"{module}.{alias.name}" if module else alias.name)
        elif isinstance(stmt, ast.Assign):
            value = self._eval(stmt.value, env)
            for target in stmt.targets:
                self._bind(target, value, env)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self._bind(stmt.target, self._eval(stmt.value, env), env)
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Name):
                current = env.get(stmt.target.id, Unknown(f"{stmt.target.id} is not assigned before"))
                env[stmt.target.id] = self._binop(stmt.op, current, self._eval(stmt.value, env))
            else:
                self._eval(stmt.value, env)
        elif isinstance(stmt, ast.Expr):
            if not self._mutation(stmt.value, env):
                self._eval(stmt.value, env)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = _Function(stmt, self.unit)
            self._functions.append(function)
            env[stmt.name] = function
        elif isinstance(stmt, ast.ClassDef):
            env[stmt.name] = Unknown(f"class {stmt.name}")
        elif isinstance(stmt, ast.If):
            self._if(stmt, env)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            inner = dict(env)
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                self._eval(stmt.iter, env)
                self._bind(stmt.target, Unknown("a loop variable"), inner)
            else:
                self._eval(stmt.test, env)
            self._block(stmt.body, inner)
            self._block(stmt.orelse, inner)
            _merge_into(env, [env, inner])
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self._eval(item.context_expr, env)
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, Unknown("a with-statement target"), env)
            self._block(stmt.body, env)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self._block(stmt.body, env)  # type: ignore[attr-defined]
            self._maybe_one_of([handler.body for handler in stmt.handlers], env)  # type: ignore[attr-defined]
            self._block(stmt.orelse, env)  # type: ignore[attr-defined]
            self._block(stmt.finalbody, env)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    env.pop(target.id, None)
        elif isinstance(stmt, ast.Return):
            if stmt.value is not None:
                self._eval(stmt.value, env)
        elif type(stmt).__name__ == "Match":
            self._eval(stmt.subject, env)  # type: ignore[attr-defined]
            self._maybe_one_of([case.body for case in stmt.cases], env)  # type: ignore[attr-defined]

    def _mutation(self, node: ast.expr, env: dict[str, Any]) -> bool:
        """``hp.update({...})`` / ``hp.update(k=v)`` / ``hp.setdefault(k, v)`` on a dict bound to a
        name: the name is rebound to the changed dict (an unknown change makes it unknown)."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("update", "setdefault") and isinstance(node.func.value, ast.Name)):
            return False
        name = node.func.value.id
        current = env.get(name)
        if not isinstance(current, dict):
            return False
        args, kwargs, sites, opaque = self._arguments(node, env)
        updated = _located(current)
        if node.func.attr == "setdefault":
            if args and _scalar(args[0]):
                if args[0] not in updated:
                    updated[args[0]] = args[1] if len(args) > 1 else None
                    if isinstance(args[0], str):
                        updated.sites[args[0]] = Site(self.unit, node.lineno)
                env[name] = updated
            else:
                env[name] = Unknown(f"{name}.setdefault() with an unknown key")
            return True
        if opaque or len(args) > 1 or (args and not isinstance(args[0], dict)):
            env[name] = Unknown(f"{name}.update() with a value preflight cannot resolve (line {node.lineno})")
            return True
        for source in (*args, kwargs):
            updated.update(source)
            for key in source:
                if isinstance(key, str):
                    updated.sites[key] = getattr(source, "sites", {}).get(key) or sites.get(key) or Site(self.unit, node.lineno)
        env[name] = updated
        return True

    def _maybe_one_of(self, bodies: list[list[ast.stmt]], env: dict[str, Any]) -> None:
        """Handlers or match cases: at most one body runs, or none; merge what they bind."""
        branches = [env]
        for body in bodies:
            inner = dict(env)
            self._block(body, inner)
            branches.append(inner)
        _merge_into(env, branches)

    def _if(self, stmt: ast.If, env: dict[str, Any]) -> None:
        if is_main_guard(stmt.test):
            self._block(stmt.body, env)
            self._block(stmt.orelse, env)
            return
        test = self._eval(stmt.test, env)
        if not _is_unknown(test) and isinstance(test, (bool, int, str, type(None))):
            self._block(stmt.body if test else stmt.orelse, env)
            return
        body, orelse = dict(env), dict(env)
        self._block(stmt.body, body)
        self._block(stmt.orelse, orelse)
        _merge_into(env, [body, orelse])

    def _bind(self, target: ast.expr, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
            if isinstance(value, _JobHandle) and value.job.variable is None:
                value.job.variable = target.id
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value if isinstance(value, (tuple, list)) and len(value) == len(target.elts) else None
            for i, element in enumerate(target.elts):
                self._bind(element, items[i] if items is not None else Unknown("unpacked from an unknown value"), env)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            container = env.get(target.value.id)
            key = self._eval(target.slice, env)
            if isinstance(container, dict) and isinstance(key, str):
                updated = _located(container)
                updated[key] = value
                updated.sites[key] = Site(self.unit, target.lineno)
                env[target.value.id] = updated
            elif target.value.id in env:
                env[target.value.id] = Unknown(f"{target.value.id}[...] assigned with an unknown key")
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Subscript) \
                and isinstance(target.value.value, ast.Name):
            # cfg["hyperparameters"]["backend"] = "nccl": rebuild the inner dict, then the outer one
            outer_name = target.value.value.id
            outer = env.get(outer_name)
            outer_key = self._eval(target.value.slice, env)
            inner = outer.get(outer_key) if isinstance(outer, dict) and _scalar(outer_key) else None
            key = self._eval(target.slice, env)
            if isinstance(outer, dict) and isinstance(inner, dict) and isinstance(key, str):
                new_inner = _located(inner)
                new_inner[key] = value
                new_inner.sites[key] = Site(self.unit, target.lineno)
                new_outer = _located(outer)
                new_outer[outer_key] = new_inner
                env[outer_name] = new_outer
            elif outer_name in env:
                env[outer_name] = Unknown(f"{outer_name}[...][...] assigned where preflight cannot follow")
        elif isinstance(target, ast.Attribute):
            if isinstance(value, _JobHandle) and value.job.variable is None:
                value.job.variable = target.attr
        elif isinstance(target, ast.Starred):
            self._bind(target.value, Unknown("a starred target"), env)

    # ------------------------------------------------------------------ expressions

    def _eval(self, node: ast.expr, env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            if node.id in _BUILTINS:
                return Ref(node.id)
            return Unknown(f"{node.id} is not assigned before line {node.lineno}")
        if isinstance(node, ast.JoinedStr):
            parts = []
            unknown: Optional[Unknown] = None
            prefix: Optional[str] = None
            suffix_known = True
            for part in node.values:
                if isinstance(part, ast.Constant):
                    parts.append(str(part.value))
                    suffix_known = True
                    continue
                assert isinstance(part, ast.FormattedValue)
                value = self._eval(part.value, env)
                spec = self._eval(part.format_spec, env) if part.format_spec is not None else ""
                failed: Optional[Unknown] = None
                if _is_unknown(value) or _is_unknown(spec) or not _formattable(value):
                    failed = value if _is_unknown(value) else Unknown("an f-string part")
                else:
                    try:
                        parts.append(format(_convert(value, part.conversion), spec))
                        suffix_known = True
                        continue
                    except (TypeError, ValueError):
                        failed = Unknown("an f-string part preflight cannot format")
                unknown = unknown or failed
                if prefix is None:
                    prefix = "".join(parts) + (failed.prefix if isinstance(failed, Partial) else "")
                parts.append(failed.template if isinstance(failed, Partial) else "{" + ast.unparse(part.value) + "}")
                suffix_known = isinstance(failed, Partial) and failed.suffix_known
            if unknown is None:
                return "".join(parts)
            return Partial(unknown.reason, "".join(parts), prefix or "", suffix_known)
        if isinstance(node, ast.BinOp):
            left, right = self._eval(node.left, env), self._eval(node.right, env)
            if isinstance(node.op, ast.Add) and (_is_unknown(left) or _is_unknown(right)):
                partial = _partial(left, right, ast.unparse(node.left), ast.unparse(node.right))
                if partial is not None:
                    return partial
            return self._binop(node.op, left, right)
        if isinstance(node, ast.UnaryOp):
            operand = self._eval(node.operand, env)
            if _is_unknown(operand):
                return operand
            try:
                if isinstance(node.op, ast.Not):
                    return not operand
                if isinstance(node.op, ast.USub) and isinstance(operand, (int, float)):
                    return -operand
            except Exception:  # noqa: BLE001 - user values: any failure means unknown
                pass
            return Unknown("an operation preflight does not evaluate")
        if isinstance(node, ast.BoolOp):
            values = [self._eval(v, env) for v in node.values]
            for value in values[:-1]:
                if _is_unknown(value) or not _scalar(value):
                    return Unknown("a boolean expression with an unknown part")
                if isinstance(node.op, ast.Or) and value:
                    return value
                if isinstance(node.op, ast.And) and not value:
                    return value
            return values[-1]
        if isinstance(node, ast.Compare):
            left = self._eval(node.left, env)
            values = [self._eval(c, env) for c in node.comparators]
            if len(values) == 1 and _scalar(left) and _scalar(values[0]):
                op = node.ops[0]
                if isinstance(op, ast.Eq):
                    return left == values[0]
                if isinstance(op, ast.NotEq):
                    return left != values[0]
            return Unknown("a comparison")
        if isinstance(node, ast.IfExp):
            test = self._eval(node.test, env)
            body, orelse = self._eval(node.body, env), self._eval(node.orelse, env)
            if not _is_unknown(test) and _scalar(test):
                return body if test else orelse
            if not contains_unknown(body) and _same(body, orelse):
                return body
            return Unknown(f"a conditional expression at line {node.lineno} (its branches differ)")
        if isinstance(node, ast.Dict):
            result = _located({})
            for key_node, value_node in zip(node.keys, node.values):
                value = self._eval(value_node, env)
                if key_node is None:  # {**other}
                    if not isinstance(value, dict):
                        return Unknown(f"a dict unpacking an unknown value at line {value_node.lineno}")
                    result.update(value)
                    result.sites.update(getattr(value, "sites", {}))
                    continue
                key = self._eval(key_node, env)
                if _is_unknown(key) or not _scalar(key):
                    return Unknown(f"a dict with an unknown key at line {key_node.lineno}")
                result[key] = value
                if isinstance(key, str):
                    result.sites[key] = Site(self.unit, key_node.lineno)
            return result
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items: list[Any] = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    inner = self._eval(element.value, env)
                    if not isinstance(inner, (list, tuple)):
                        return Unknown("a sequence unpacking an unknown value")
                    items.extend(inner)
                else:
                    items.append(self._eval(element, env))
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Subscript):
            container = self._eval(node.value, env)
            key = self._eval(node.slice, env)
            try:
                if isinstance(container, dict) and _scalar(key) and key in container:
                    return container[key]
                if isinstance(container, (list, tuple, str)) and isinstance(key, int):
                    return container[key]
            except (IndexError, TypeError):
                pass
            return Unknown(f"a subscript at line {node.lineno}")
        if isinstance(node, ast.Attribute):
            return self._attribute(self._eval(node.value, env), node.attr, node)
        if isinstance(node, ast.Call):
            return self._call(node, env)
        if isinstance(node, (ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.Lambda)):
            return Unknown(f"a comprehension or lambda at line {node.lineno}")
        if isinstance(node, ast.NamedExpr):
            value = self._eval(node.value, env)
            self._bind(node.target, value, env)
            return value
        if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom)) and node.value is not None:
            self._eval(node.value, env)
        return Unknown(f"an expression preflight does not evaluate at line {getattr(node, 'lineno', '?')}")

    def _attribute(self, owner: Any, attr: str, node: ast.Attribute) -> Any:
        if isinstance(owner, PathText) and attr in ("parent", "name"):
            return PathText(posixpath.dirname(owner)) if attr == "parent" else posixpath.basename(owner)
        if isinstance(owner, Ref):
            return Ref(f"{owner.dotted}.{attr}")
        if isinstance(owner, _Namespace):
            if attr in owner.defaults:
                return owner.defaults[attr][0]
            return Unknown(f"args.{attr} (no argparse default preflight can see)")
        if isinstance(owner, SdkObject):
            return owner.kwargs.get(attr, Unknown(f"{owner.cls}.{attr}"))
        if isinstance(owner, (_JobHandle, _ArgParser, str, dict, list)):
            return _Method(owner, attr)
        if _is_unknown(owner):
            return owner
        return Unknown(f"attribute .{attr} at line {node.lineno}")

    def _binop(self, op: ast.operator, left: Any, right: Any) -> Any:
        if _is_unknown(left):
            return left
        if _is_unknown(right):
            return right
        try:
            if isinstance(op, ast.Div) and isinstance(left, str) and isinstance(right, str):
                return PathText(posixpath.join(left, right))  # Path / "x" (a str / str never runs)
            if isinstance(op, ast.Add) and type(left) is type(right) and isinstance(left, (str, int, float, list, tuple)):
                return left + right
            if isinstance(op, ast.BitOr) and isinstance(left, dict) and isinstance(right, dict):
                merged = _LocDict({**left, **right})
                merged.sites = {**getattr(left, "sites", {}), **getattr(right, "sites", {})}
                return merged
            if isinstance(op, ast.Mod) and isinstance(left, str):
                if contains_unknown(right):
                    return Unknown("%-formatting with an unknown value")
                return left % (tuple(right) if isinstance(right, list) else right)
            if isinstance(left, (int, float)) and isinstance(right, (int, float)) and not isinstance(left, bool):
                operations: dict[type, Callable[[Any, Any], Any]] = {
                    ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b, ast.Add: lambda a, b: a + b,
                    ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a / b,
                }
                if type(op) in operations and abs(left) < 1e12 and abs(right) < 1e12:
                    return operations[type(op)](left, right)
            if isinstance(op, ast.Mult) and isinstance(left, (str, list)) and isinstance(right, int) and 0 <= right <= 64:
                return left * right
        except Exception:  # noqa: BLE001 - any failure on user values means unknown
            pass
        return Unknown("an operation preflight does not evaluate")

    # ------------------------------------------------------------------ calls

    def _arguments(self, node: ast.Call, env: dict[str, Any]) -> tuple[list[Any], dict[str, Any], dict[str, Site], Optional[str]]:
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = self._eval(arg.value, env)
                if isinstance(inner, (list, tuple)):
                    args.extend(inner)
                else:
                    args.append(Unknown("*args"))
            else:
                args.append(self._eval(arg, env))
        kwargs: dict[str, Any] = {}
        sites: dict[str, Site] = {}
        opaque: Optional[str] = None
        provenance: dict[str, str] = {}
        for kw in node.keywords:
            value = self._eval(kw.value, env)
            if kw.arg is None:
                if isinstance(value, dict) and all(isinstance(k, str) for k in value):
                    for key, item in value.items():
                        kwargs[key] = item
                        sites[key] = getattr(value, "sites", {}).get(key, Site(self.unit, kw.value.lineno))
                else:
                    source = ast.unparse(kw.value)
                    opaque = f"**{source}"
                continue
            kwargs[kw.arg] = value
            sites[kw.arg] = Site(self.unit, kw.value.lineno)
            if isinstance(kw.value, ast.Attribute):
                owner = self._eval(kw.value.value, env)
                if isinstance(owner, _Namespace) and kw.value.attr in owner.defaults:
                    provenance[kw.arg] = f"the argparse default of {owner.defaults[kw.value.attr][1]}"
        self._provenance = provenance  # read by _call_ref right after (nested calls are done)
        return args, kwargs, sites, opaque

    def _call(self, node: ast.Call, env: dict[str, Any]) -> Any:
        func = self._eval(node.func, env)
        args, kwargs, sites, opaque = self._arguments(node, env)
        site = Site(self.unit, node.lineno)
        if isinstance(func, Ref):
            return self._call_ref(func, node, args, kwargs, sites, opaque, site)
        if isinstance(func, _Method):
            return self._call_method(func, args, kwargs, sites, site)
        if isinstance(func, _Function):
            if self._depth >= _MAX_CALL_DEPTH:
                return Unknown(f"{func.node.name}() nested too deeply")
            func.called = True
            saved = self.unit
            self._stack.append((id(saved), node.lineno, node.col_offset))
            self.unit = func.unit
            try:
                return self._call_function(func, args, kwargs, env)
            finally:
                self.unit = saved
                self._stack.pop()
        return Unknown(f"{shown(node)} (line {node.lineno})")

    def _call_function(self, func: _Function, args: list[Any], kwargs: dict[str, Any], env: dict[str, Any]) -> Any:
        local = dict(self.env)  # module globals as they are now
        local.update({k: v for k, v in env.items() if k not in local})
        params = func.node.args
        positional = [*params.posonlyargs, *params.args]
        defaults = [None] * (len(positional) - len(params.defaults)) + list(params.defaults)
        for i, param in enumerate(positional):
            if i < len(args):
                local[param.arg] = args[i]
            elif param.arg in kwargs:
                local[param.arg] = kwargs[param.arg]
            elif defaults[i] is not None:
                local[param.arg] = self._eval(defaults[i], self.env)  # type: ignore[arg-type]
            else:
                local[param.arg] = Unknown(f"parameter {param.arg} of {func.node.name}()")
        for param, default in zip(params.kwonlyargs, params.kw_defaults):
            if param.arg in kwargs:
                local[param.arg] = kwargs[param.arg]
            elif default is not None:
                local[param.arg] = self._eval(default, self.env)
            else:
                local[param.arg] = Unknown(f"parameter {param.arg} of {func.node.name}()")
        if params.vararg:
            local[params.vararg.arg] = Unknown("*args")
        if params.kwarg:
            local[params.kwarg.arg] = Unknown("**kwargs")
        self._depth += 1
        try:
            returned: list[Any] = []
            for stmt in func.node.body:
                if isinstance(stmt, ast.Return) and stmt.value is not None:
                    returned.append(self._eval(stmt.value, local))
                    break
                self._stmt(stmt, local)
            nested = any(isinstance(n, ast.Return) for stmt in func.node.body if not isinstance(stmt, ast.Return)
                         for n in ast.walk(stmt))
            # `args = parse_args()`, `est = make_estimator()`: one unconditional return
            if len(returned) == 1 and (not nested or isinstance(returned[0], _JobHandle)):
                return returned[0]
            return Unknown(f"the result of {func.node.name}()")
        finally:
            self._depth -= 1

    def _call_ref(self, func: Ref, node: ast.Call, args: list[Any], kwargs: dict[str, Any],
                  sites: dict[str, Site], opaque: Optional[str], site: Site) -> Any:
        dotted, leaf = func.dotted, func.leaf
        factory = None
        if func.is_sagemaker and leaf == "from_recipe" and Ref(dotted.rsplit(".", 1)[0]).leaf in TRAINERS:
            factory, dotted, leaf = "from_recipe", dotted.rsplit(".", 1)[0], Ref(dotted.rsplit(".", 1)[0]).leaf
            if args and "training_recipe" not in kwargs:
                kwargs = {"training_recipe": args[0], **kwargs}
                sites = {"training_recipe": site, **sites}
        if func.is_sagemaker and (leaf in V2_ESTIMATORS or leaf in TRAINERS):
            key = (id(site.unit), node.lineno, node.col_offset, *self._stack)
            if key in self._seen_calls:
                return Unknown("a job built twice")
            self._seen_calls.add(key)
            if args and leaf in V2_ESTIMATORS and "entry_point" not in kwargs and leaf != "Estimator":
                kwargs = {"entry_point": args[0], **kwargs}  # Framework's first positional parameter
                sites = {"entry_point": site, **sites}
            job = ExtractedJob(cls=leaf, module=dotted.rsplit(".", 1)[0], site=site, kwargs=kwargs,
                               sites=sites, opaque_unpack=opaque, provenance=dict(self._provenance), factory=factory)
            self.jobs.append(job)
            return _JobHandle(job)
        if func.is_sagemaker and leaf in SDK_OBJECTS:
            return SdkObject(leaf, kwargs, sites, site)
        if func.is_sagemaker and leaf == "get_execution_role":
            return Unknown("sagemaker.get_execution_role()")
        if dotted in {"os.getcwd", "pathlib.Path.cwd", "pathlib.Path.home"} and not args:
            if dotted == "pathlib.Path.home" or self.cwd is None:
                return Unknown(f"{dotted}()")
            return PathText(self.cwd)
        if dotted in _PATH_CLASSES:
            if all(isinstance(a, str) for a in args):
                return PathText(posixpath.join(*args) if args else ".")
            return next((a for a in args if _is_unknown(a)), Unknown(f"{dotted}() of a non-string"))
        if dotted in _OS_PATH_ONE and len(args) == 1 and isinstance(args[0], str):
            return PathText(_OS_PATH_ONE[dotted](args[0]))
        if dotted in {"os.path.join", "posixpath.join"}:
            if all(isinstance(a, str) for a in args) and args:
                return PathText(posixpath.join(*args))
            joined = _joined(args, [shown(a) for a in node.args], posixpath.join)
            if joined is not None:
                return joined
            return next((a for a in args if _is_unknown(a)), Unknown("os.path.join of a non-string"))
        if dotted in {"copy.copy", "copy.deepcopy"} and len(args) == 1:
            return _copied(args[0])
        if dotted == "argparse.ArgumentParser":
            return _ArgParser()
        if dotted in {"dict", "builtins.dict"}:
            base = args[0] if args else {}
            if not isinstance(base, dict):
                return Unknown("dict() of an unknown value")
            merged = _located(base)
            merged.sites.update(sites)
            merged.update(kwargs)
            return merged
        if dotted in {"str", "int", "float", "bool"} and len(args) == 1 and _scalar(args[0]) and not kwargs:
            try:
                return {"str": str, "int": int, "float": float, "bool": bool}[dotted](args[0])
            except (TypeError, ValueError):
                return Unknown(f"{dotted}() of {args[0]!r}")
        if dotted in {"list", "tuple"} and len(args) == 1 and isinstance(args[0], (list, tuple)):
            return list(args[0]) if dotted == "list" else tuple(args[0])
        if dotted in {"os.getenv", "os.environ.get"}:
            return Unknown(f"environment variable {args[0] if args else '?'}")
        return Unknown(f"{dotted}()")

    def _call_method(self, method: _Method, args: list[Any], kwargs: dict[str, Any], sites: dict[str, Site], site: Site) -> Any:
        owner, name = method.owner, method.name
        if isinstance(owner, _JobHandle):
            if name in {"fit", "train"}:
                owner.job.runs.append((name, kwargs, site))
            return Unknown(f"{owner.job.cls}.{name}()")
        if isinstance(owner, _ArgParser):
            if name == "add_argument":
                flags = [a for a in args if isinstance(a, str)]
                dest = kwargs.get("dest")
                if not isinstance(dest, str):
                    longs = [f for f in flags if f.startswith("--")]
                    chosen = longs[0] if longs else (flags[0] if flags else None)
                    dest = chosen.lstrip("-").replace("-", "_") if chosen else None
                if dest:
                    shown = next((f for f in flags if f.startswith("--")), dest)
                    if "default" in kwargs and not _is_unknown(kwargs["default"]):
                        owner.defaults[dest] = (kwargs["default"], shown)
                    elif kwargs.get("required") is True or "default" not in kwargs:
                        owner.defaults.pop(dest, None)
                return None
            if name == "parse_args":
                return _Namespace(dict(owner.defaults))
            if name == "parse_known_args":
                return (_Namespace(dict(owner.defaults)), Unknown("unparsed arguments"))
            return Unknown(f"parser.{name}()")
        if isinstance(owner, PathText) and name in {"resolve", "absolute", "expanduser", "joinpath", "as_posix"}:
            if all(isinstance(a, str) for a in args):
                return PathText(posixpath.join(owner, *args) if name == "joinpath" else posixpath.normpath(owner))
        if isinstance(owner, str):
            try:
                if name == "format" and not contains_unknown(args) and not contains_unknown(kwargs):
                    return owner.format(*args, **kwargs)
                if name == "join" and len(args) == 1 and isinstance(args[0], (list, tuple)) and all(isinstance(a, str) for a in args[0]):
                    return owner.join(args[0])
                if name == "join" and len(args) == 1 and isinstance(args[0], (list, tuple)):
                    sep = str(owner)
                    joined = _joined(list(args[0]), [f"item {i}" for i in range(len(args[0]))],
                                     lambda a, b: a + sep + b)
                    if joined is not None:
                        return joined
                if name in {"strip", "rstrip", "lstrip", "lower", "upper"} and all(isinstance(a, str) for a in args):
                    return getattr(owner, name)(*args)
                if name == "replace" and len(args) == 2 and all(isinstance(a, str) for a in args):
                    return owner.replace(args[0], args[1])
            except Exception:  # noqa: BLE001 - "{0.x}".format(1) and the like: unknown, not a crash
                pass
            return Unknown(f"str.{name}()")
        if isinstance(owner, dict):
            if name == "get" and args and _scalar(args[0]):
                return owner.get(args[0], args[1] if len(args) > 1 else None)
            if name == "copy":
                return _copied(owner)
        return Unknown(f".{name}()")


def _copied(value: Any) -> Any:
    """``copy.copy(x)`` / ``copy.deepcopy(x)`` / ``x.copy()``: the same value in a new container
    (preflight's values are never mutated in place, so a shallow copy is as good as a deep one)."""
    if isinstance(value, dict):
        return _located(value)
    if isinstance(value, list):
        return list(value)
    return value


def shown(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except (RecursionError, ValueError):
        return "a call"
    return text if len(text) <= 60 else text[:57] + "..."


def _convert(value: Any, conversion: int) -> Any:
    """f-string ``!s`` / ``!r`` / ``!a`` (``conversion`` is the character's code, -1 for none)."""
    if conversion == ord("s"):
        return str(value)
    if conversion == ord("r"):
        return repr(value)
    if conversion == ord("a"):
        return ascii(value)
    return value


def _merge_into(env: dict[str, Any], branches: list[dict[str, Any]]) -> None:
    """After branches that may or may not run: a name keeps a value only if all agree."""
    names = set().union(*branches)
    for name in names:
        values = [b.get(name, _MISSING) for b in branches]
        first = values[0]
        if all(v is first or (not isinstance(v, _Missing) and not isinstance(first, _Missing) and _same(v, first)) for v in values):
            if not isinstance(first, _Missing):
                env[name] = first
        elif any(isinstance(v, (_JobHandle, _Function)) for v in values):
            env[name] = next(v for v in reversed(values) if isinstance(v, (_JobHandle, _Function)))
        else:
            env[name] = Unknown(f"{name} depends on which branch runs")


class _Missing:
    pass


_MISSING = _Missing()


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool, type(None)))


def _formattable(value: Any) -> bool:
    return _scalar(value) or (isinstance(value, (list, tuple, dict)) and not contains_unknown(value))


def mentions_sagemaker_job(node: ast.AST) -> bool:
    """Cheap pre-check: does the code call anything named like an estimator or trainer? (A launcher
    is told from a YAML file by it, and a function no code calls is judged when it is true.)"""
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            func = child.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in V2_ESTIMATORS or name in TRAINERS or name == "from_recipe":
                return True
    return False
