"""Every command and Python snippet in README.md and docs/*.md, run as written (issue 21).

A fenced block that holds a command (``sh``/``console``/``bash`` blocks, a block with ``$ ``
lines, or one that starts with ``make``, ``smddp-infra``, ``cfn-lint``, ``checkov``, ``cdk``...)
or Python carries an HTML comment right before it:

``<!-- doc-test: run ... -->``
    the block is run here. Options, one per line: ``exit: N`` (the exit code of every command,
    default 0; ``exit: 1, 0`` per command), ``cwd: DIR`` (repo-relative, or ``tmp`` for a fresh directory), ``env: K=V``,
    ``replace: A => B`` (a placeholder in the commands filled by the test; ``{root}`` is the
    repository, ``{tmp}`` a scratch directory), ``setup: COMMAND`` (run first, in ``cwd``), and for Python ``venv: DIR`` (the
    interpreter of another venv), ``prelude: CODE`` (fills a fragment's free names),
    ``stop-before: TEXT`` (drop the block from the line starting with TEXT: it calls AWS),
    ``expect: LINE`` (a line the output must hold; a last bare expression prints its repr).
``<!-- doc-test: run-by tests/test_x.py::test_name -->``
    the block is executed from the markdown by that test (a CDK synth already paid for there).
``<!-- doc-test: manual REASON -->``
    not run here, and why (it deploys, needs AWS credentials, or is a synopsis).

For ``$ command`` blocks the lines shown after a command are its key lines: each must appear
in the command's output (stdout and stderr), in order; a line ``...`` stands for lines left
out, and ``...`` inside a line for text left out. No output may hold a Python traceback.
Shell blocks run in parallel threads, once per module. Python blocks for this venv run meanwhile
in this process, one at a time, each as ``__main__`` in a fresh namespace with the interpreter's
default warning filters, its stdout and stderr captured: each paid about 3.5 s of CPU as its own
process (an interpreter, a jsii runtime, aws-cdk-lib's built-in template validation loaded on the
first synth) before its own work. Blocks that build no CDK app, or have ``venv:`` or ``env:``,
still get a process of their own.
"""

from __future__ import annotations

import ast
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
COMMAND_LANGS = {"sh", "bash", "shell", "console"}
COMMAND_WORDS = ("make", "smddp-infra", "cfn-lint", "checkov", "cdk", "python", "pip", ".venv", "npx", "export",
                 "BC_SKIP_MAPPING")
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Block:
    doc: str
    line: int
    lang: str
    body: str
    marker: Optional[str]
    options: dict[str, list[str]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def mode(self) -> str:
        return (self.marker or "").split(None, 1)[0] if self.marker else ""

    def option(self, key: str, default: str = "") -> str:
        return self.options.get(key, [default])[-1]


def _marker_before(text: str, start: int) -> Optional[str]:
    before = text[:start].rstrip()
    if not before.endswith("-->"):
        return None
    comment = before[before.rfind("<!--") + 4:-3].strip()
    return comment[len("doc-test:"):].strip() if comment.startswith("doc-test:") else None


def _needs_marker(lang: str, body: str) -> bool:
    """Python, shell blocks, blocks with ``$ `` commands and untagged blocks that start with a command
    (output shown alone, in ``text``/``console`` blocks without ``$``, needs none)."""
    lines = [line for line in body.splitlines() if line.strip()]
    if lang in ("python", *COMMAND_LANGS - {"console"}) or any(line.startswith("$ ") for line in lines):
        return True
    return bool(lines) and lang == "" and lines[0].split()[0] in COMMAND_WORDS


def blocks() -> list[Block]:
    found = []
    for doc in DOCS:
        text = doc.read_text()
        for match in FENCE.finditer(text):
            lang, body = match.group(1), match.group(2)
            if not _needs_marker(lang, body):
                continue
            marker = _marker_before(text, match.start())
            block = Block(doc.relative_to(ROOT).as_posix(), text[:match.start()].count("\n") + 1, lang, body, marker)
            if marker:
                for line in marker.splitlines()[1:]:
                    key, _, value = line.strip().partition(":")
                    block.options.setdefault(key.strip(), []).append(value.strip().replace("{root}", str(ROOT)))
            found.append(block)
    return found


BLOCKS = blocks()
RUNNABLE = [b for b in BLOCKS if b.mode == "run"]


@dataclass
class Ran:
    command: str
    code: int
    output: str
    expected: list[str]


def _env(block: Block) -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb", "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": str(ROOT), "SAGEMAKER_SUPPRESS_V2_WARNING": "1"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), str(ROOT / "node_modules" / ".bin"), env.get("PATH", "")])
    for item in block.options.get("env", []):
        key, _, value = item.partition("=")
        env[key] = value
    return env


def _shell(command: str, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=240)
    return done.returncode, done.stdout


def _filled(block: Block, command: str, scratch: Path) -> str:
    for item in block.options.get("replace", []):
        old, _, new = item.partition(" => ")
        command = command.replace(old, new.replace("{tmp}", str(scratch)))
    return command


def _commands(block: Block) -> list[tuple[str, list[str]]]:
    """(command, the key lines shown after it) for every command of a shell block."""
    lines = block.body.splitlines()
    if any(line.startswith("$ ") for line in lines):
        out: list[tuple[str, list[str]]] = []
        for line in lines:
            if line.startswith("$ "):
                out.append((line[2:], []))
            elif out and line.strip():
                out[-1][1].append(line.rstrip())
        return [(re.sub(r"\s+#\s.*$", "", c), shown) for c, shown in out]
    return [(re.sub(r"\s+#\s.*$", "", line), []) for line in lines if line.strip() and not line.lstrip().startswith("#")]


#: Blocks run four at a time in threads; CPython 3.11's AST constructor keeps its recursion depth
#: in interpreter-wide state, so two threads in ast.parse at once can fail with "SystemError: AST
#: constructor recursion depth mismatch" (python/cpython#106905, seen on 3.11.7): one at a time.
_AST_LOCK = threading.Lock()


def _python_script(block: Block) -> str:
    with _AST_LOCK:
        return _rewritten(block)


def _rewritten(block: Block) -> str:
    lines = block.body.splitlines()
    stop = block.option("stop-before")
    if stop:
        cut = next(i for i, line in enumerate(lines) if line.startswith(stop))
        lines = lines[:cut]
    code = "\n".join(block.options.get("prelude", []) + lines) + "\n"
    tree = ast.parse(code)
    if tree.body and isinstance(tree.body[-1], ast.Expr):  # the snippet's result, as the doc shows it
        last = tree.body[-1]
        tree.body[-1] = ast.Expr(ast.Call(ast.Name("print", ast.Load()), [ast.Call(ast.Name("repr", ast.Load()), [last.value], [])], []))
        code = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    return code


def run_block(block: Block) -> list[Ran]:
    env = _env(block)
    where = block.option("cwd", ".")
    tmp = Path(tempfile.mkdtemp(prefix="doc-test-")) if where == "tmp" else None
    cwd = tmp or ROOT / where
    try:
        for setup in block.options.get("setup", []):
            code, output = _shell(setup, cwd, env)
            assert code == 0, f"setup `{setup}` failed: {output}"
        if block.lang == "python":
            script = cwd / f".doc_test_{block.line}.py" if tmp else Path(tempfile.mkstemp(suffix=".py")[1])
            script.write_text(_python_script(block))
            venv = block.option("venv")
            python = str(ROOT / venv / "bin" / "python") if venv else sys.executable
            code, output = _shell(f"{python} {script}", cwd, env)
            if not tmp:
                script.unlink()
            return [Ran(f"python ({block.id})", code, output, block.options.get("expect", []))]
        ran = []
        scratch = Path(tempfile.mkdtemp(prefix="doc-test-scratch-"))
        try:
            for command, shown in _commands(block):
                filled = _filled(block, command, scratch)
                code, output = _shell(filled, cwd, env)
                ran.append(Ran(filled, code, output, shown + block.options.get("expect", [])))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return ran
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _here(block: Block) -> bool:
    """Run in this process: Python for this venv that builds a CDK app (where a process of its own
    costs most) and sets no environment of its own; the rest (a client that starts a server with
    this process's stderr, say) keep a process of their own."""
    return (block.lang == "python" and not block.option("venv") and not block.options.get("env")
            and "aws_cdk" in _python_script(block))


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: object = None, line: Optional[str] = None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def run_here(block: Block) -> list[Ran]:
    """What ``python script.py`` prints and exits with, run in this process (see the module's doc)."""
    where = block.option("cwd", ".")
    tmp = Path(tempfile.mkdtemp(prefix="doc-test-")) if where == "tmp" else None
    cwd = tmp or ROOT / where
    env = _env(block)
    for setup in block.options.get("setup", []):
        code, output = _shell(setup, cwd, env)
        assert code == 0, f"setup `{setup}` failed: {output}"
    script = _python_script(block)
    captured = io.TextIOWrapper(io.BytesIO(), write_through=True)  # .buffer: jsii writes its runtime's stderr there
    saved = (os.getcwd(), dict(os.environ), list(sys.argv), list(sys.path))
    code = 0
    try:
        os.chdir(cwd)
        sys.argv = [f".doc_test_{block.line}.py"]
        with redirect_stdout(captured), redirect_stderr(captured), warnings.catch_warnings():
            warnings.resetwarnings()  # the interpreter's defaults (3.11), not pytest's capture
            for action, category, module in (("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, ""),
                                             ("ignore", PendingDeprecationWarning, ""), ("ignore", ImportWarning, ""),
                                             ("ignore", ResourceWarning, "")):
                warnings.filterwarnings(action, category=category, module=module)
            warnings.showwarning = _show_warning
            try:
                exec(compile(script, sys.argv[0], "exec"), {"__name__": "__main__", "__file__": sys.argv[0]})
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
                if isinstance(stop.code, str):
                    print(stop.code, file=sys.stderr)
            except BaseException:  # what the interpreter prints and exits 1 with
                traceback.print_exc()
                code = 1
            sys.stdout.flush()
    finally:
        os.chdir(saved[0])
        os.environ.clear()
        os.environ.update(saved[1])
        sys.argv[:], sys.path[:] = saved[2], saved[3]
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    output = captured.buffer.getvalue().decode(errors="replace")  # type: ignore[attr-defined]
    return [Ran(f"python ({block.id})", code, output, block.options.get("expect", []))]


@pytest.fixture(scope="module")
def results() -> dict[str, list[Ran]]:
    """Shell blocks (and Python with its own venv or environment) in four threads; meanwhile the
    rest of the Python blocks here, one at a time (jsii and the working directory are this
    process's own)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        elsewhere = {b.id: pool.submit(run_block, b) for b in RUNNABLE if not _here(b)}
        here = {b.id: run_here(b) for b in RUNNABLE if _here(b)}
        return {b.id: here[b.id] if b.id in here else elsewhere[b.id].result() for b in RUNNABLE}


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(part) for part in line.split("...")) + r"\s*")


def missing_key_lines(expected: list[str], output: str) -> list[str]:
    """The shown lines that do not appear in the output, in order (``...`` lines skipped)."""
    actual = [line.rstrip() for line in output.splitlines()]
    position, missing = 0, []
    for line in expected:
        if line.strip() == "...":
            continue
        pattern = _pattern(line)
        hit = next((i for i in range(position, len(actual)) if pattern.fullmatch(actual[i])), None)
        if hit is None:
            missing.append(line)
        else:
            position = hit + 1
    return missing


def test_every_command_and_snippet_is_marked() -> None:
    unmarked = [b.id for b in BLOCKS if b.mode not in ("run", "run-by", "manual")]
    assert not unmarked, f"blocks without a <!-- doc-test: run|run-by|manual ... --> marker: {unmarked}"
    vague = [b.id for b in BLOCKS if b.mode == "manual" and len((b.marker or "").split(None, 1)[-1]) < 20]
    assert not vague, f"a manual block must say why it is not run: {vague}"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.mode == "run-by"], ids=lambda b: b.id)
def test_block_is_run_by_the_named_test(block: Block) -> None:
    target = (block.marker or "").split()[1]
    path, _, name = target.partition("::")
    source = (ROOT / path).read_text()
    assert f"def {name}(" in source, target
    assert Path(block.doc).name in source, f"{target} must execute the block from {block.doc}"


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.id)
def test_block_runs_as_written(block: Block, results: dict[str, list[Ran]]) -> None:
    codes = [int(c) for c in block.option("exit", "0").split(",")]
    for index, ran in enumerate(results[block.id]):
        expected_code = codes[min(index, len(codes) - 1)]
        assert TRACEBACK not in ran.output, f"`{ran.command}` printed a traceback:\n{ran.output}"
        assert ran.code == expected_code, f"`{ran.command}` exited {ran.code}, the doc says {expected_code}:\n{ran.output}"
        missing = missing_key_lines(ran.expected, ran.output)
        assert not missing, f"`{ran.command}` did not print, in order:\n" + "\n".join(missing) + f"\n--- it printed:\n{ran.output}"


def test_key_line_matching_is_strict() -> None:
    output = "alpha\nbeta gamma delta\nomega\n"
    assert missing_key_lines(["alpha", "...", "beta ... delta", "omega"], output) == []
    assert missing_key_lines(["omega", "alpha"], output) == ["alpha"]  # order counts
    assert missing_key_lines(["beta gamma"], output) == ["beta gamma"]  # a whole line, not a prefix
