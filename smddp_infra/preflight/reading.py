"""Reading user files as CPython would, with one-line errors for everything else.

* Python sources are decoded the way ``tokenize.open`` (and so the interpreter) decodes
  them: a UTF-8 byte-order mark or a PEP 263 ``# -*- coding: latin-1 -*-`` line on the
  first two lines chooses the codec, UTF-8 otherwise.
* A NUL byte means binary input (a checkpoint, an archive): CPython refuses such a source
  too ("source code string cannot contain null bytes"), and no YAML/JSON job file has one.
* ``ast.parse`` of a deeply nested expression raises ``RecursionError`` (or
  ``MemoryError``) instead of ``SyntaxError``; :func:`parse_python` turns all three into a
  :class:`PreflightInputError` so the CLI prints one line and exits 2.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path
from typing import Any

from smddp_infra.preflight.errors import PreflightInputError


def read_bytes(path: Path, *, what: str) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PreflightInputError(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise PreflightInputError(f"{what} {path} is a directory, not a file") from None
    except OSError as exc:
        raise PreflightInputError(f"{what} {path} cannot be read: {exc.strerror or exc}") from None
    nul = data.find(b"\x00")
    if nul >= 0:
        raise PreflightInputError(
            f"{what} {path} is binary input (it contains a NUL byte at offset {nul}), "
            "not a notebook, script, job file or SageMaker API JSON"
        )
    return data


def decode_python(data: bytes, *, path: Path, what: str) -> str:
    """Decode like ``tokenize.open``: BOM / PEP 263 coding line, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # unknown codec, or a BOM that contradicts the coding line
        raise PreflightInputError(f"{what} {path} cannot be decoded: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise PreflightInputError(f"{what} {path} is not valid {encoding}: {exc}") from None
    # The BOM itself is not source text (utf-8-sig strips it; a stray one would not parse).
    return text[1:] if text.startswith("\ufeff") else text


def decode_text(data: bytes, *, path: Path, what: str) -> str:
    """JSON and YAML documents: UTF-8, with or without a byte-order mark."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PreflightInputError(f"{what} {path} is not UTF-8 text: {exc}") from None


def parse_yaml(text: str, *, path: Path, what: str) -> Any:
    """A YAML document (YAML reads JSON too), with a one-line error naming the position. The
    text is the one :func:`read_bytes` and :func:`decode_text` read: the file is read once.
    Read by the project's one bounded YAML reader (:func:`smddp_infra.rules.loader.load_yaml_text`):
    an alias bomb or a document nested past its bound is one line too."""
    from smddp_infra.rules.loader import TemplateSyntaxError, load_yaml_text  # PyYAML: a CLI dependency

    try:
        return load_yaml_text(text)
    except TemplateSyntaxError as exc:
        if exc.line is None:  # past a bound (aliases, depth) or a value Python cannot build
            raise PreflightInputError(f"{what} {path} cannot be read: {exc}") from None
        raise PreflightInputError(f"{what} {path} is not valid YAML: {exc.problem} at line {exc.line} "
                                  f"column {exc.column}") from None


def read_python(path: Path, *, what: str = "training script") -> str:
    return decode_python(read_bytes(path, what=what), path=path, what=what)


def parse_python(source: str, *, where: str, what: str = "training script", hint: str = "") -> ast.Module:
    """``ast.parse`` with one-line errors (launcher and training scripts); ``hint`` ends the syntax error's."""
    try:
        return ast.parse(source, filename=where)
    except SyntaxError as exc:
        raise PreflightInputError(f"{what} {where} is not valid Python: {exc.msg} at line {exc.lineno}{hint}") from None
    except (RecursionError, MemoryError) as exc:
        raise too_deep(where, what, exc) from None
    except ValueError as exc:  # e.g. a NUL byte in a notebook cell's source string
        raise PreflightInputError(f"{what} {where} cannot be parsed: {exc}") from None


def too_deep(where: str, what: str, exc: BaseException) -> PreflightInputError:
    return PreflightInputError(
        f"{what} {where} nests an expression too deeply for preflight to read ({type(exc).__name__}); "
        "CPython itself may refuse to compile it"
    )


def is_main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"``: the test of a script's main block (code that runs when the
    file is executed, as SageMaker runs an entry point, and not when it is imported)."""
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")
