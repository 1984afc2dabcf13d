"""Jupyter notebooks as preflight reads them: code cells in order, magics and shell lines out.

* A code cell is Python after IPython's own syntax is removed: line magics (``%pip``),
  shell lines (``!git clone ...``, ``files = !ls``) and help lines become ``pass`` (same
  indentation, so line numbers stay those the user sees in the cell).
* ``%%writefile [-a] PATH`` makes the rest of the cell a file at PATH (relative to the
  notebook, as Jupyter runs it from the notebook's directory): the training script that
  exists only in the notebook is checked like one on disk, and it wins over a file of the
  same name on disk for the rest of the analysis (the notebook would overwrite it).
* Cell magics that run the cell as Python (``%%time``, ``%%capture``...) keep the code;
  other cell magics (``%%bash``, ``%%sh``, ``%%html``...) are not Python and are skipped.
* A cell that still does not parse (other IPython syntax) is skipped and listed as not
  evaluated; the notebook's structure (``cells``, ``metadata``...) is never a finding.
Cells are numbered from 1 in document order, markdown cells included, as they appear.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from smddp_infra.preflight.errors import PreflightInputError
from smddp_infra.preflight.extract import Unit
from smddp_infra.preflight.reading import too_deep

PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_ASSIGNED_SHELL = re.compile(r"^\s*[\w.]+\s*=\s*[!%]")
_HELP_LINE = re.compile(r"^\s*\??[\w.]+\?{1,2}\s*$")


@dataclass(frozen=True)
class VirtualFile:
    """A file written by ``%%writefile``: its text and where it came from."""

    path: Path
    source: str
    cell: int
    #: line of the notebook cell holding the file's first line (the one after %%writefile)
    first_line: int = 2

    @property
    def origin(self) -> str:
        return f"cell {self.cell}"


@dataclass(frozen=True)
class Notebook:
    path: Path
    units: tuple[tuple[Unit, ast.Module], ...]
    files: Mapping[Path, VirtualFile]
    skipped: tuple[str, ...]


def is_notebook(document: Any) -> bool:
    return isinstance(document, Mapping) and isinstance(document.get("cells"), list) and (
        "nbformat" in document or "metadata" in document)


def read_notebook(path: Path, document: Mapping[str, Any]) -> Notebook:
    units: list[tuple[Unit, ast.Module]] = []
    files: dict[Path, VirtualFile] = {}
    skipped: list[str] = []
    for index, cell in enumerate(document["cells"], start=1):
        if not isinstance(cell, Mapping) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            if not all(isinstance(s, str) for s in source):
                raise PreflightInputError(f"notebook {path}: cell {index} has a source that is not text")
            source = "".join(source)
        if not isinstance(source, str):
            raise PreflightInputError(f"notebook {path}: cell {index} has a source that is not text")
        first, _, rest = source.partition("\n")
        stripped = first.strip()
        if stripped.startswith("%%"):
            magic = stripped[2:].split(None, 1)
            name = magic[0] if magic else ""
            if name == "writefile":
                target, append = _writefile_target(path, index, magic[1] if len(magic) > 1 else "")
                previous = files.get(target)
                text = (previous.source if append and previous else "") + rest
                files[target] = VirtualFile(target, text, index)
                continue
            if name not in PYTHON_CELL_MAGICS:
                continue  # %%bash, %%sh, %%html...: not Python
            source = "\n" + rest  # keep line numbers
        code = "\n".join(_strip_ipython(line) for line in source.split("\n"))
        unit = Unit(code, path.name, index)
        try:
            tree = ast.parse(code, filename=f"{path.name} cell {index}")
        except SyntaxError as exc:
            skipped.append(f"cell {index} skipped: not Python ({exc.msg} at line {exc.lineno})")
            continue
        except (RecursionError, MemoryError) as exc:
            raise too_deep(f"{path} cell {index}", "notebook", exc) from None
        except ValueError as exc:
            raise PreflightInputError(f"notebook {path}: cell {index} cannot be parsed: {exc}") from None
        units.append((unit, tree))
    return Notebook(path, tuple(units), files, tuple(skipped))


def _writefile_target(notebook: Path, cell: int, arguments: str) -> tuple[Path, bool]:
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()
    append = any(w in ("-a", "--append") for w in words)
    names = [w for w in words if not w.startswith("-")]
    if not names:
        raise PreflightInputError(f"notebook {notebook}: cell {cell} has %%writefile without a file name")
    return (notebook.parent / names[0]), append


def _strip_ipython(line: str) -> str:
    text = line.lstrip()
    if text.startswith(("%", "!")) or _ASSIGNED_SHELL.match(line) or _HELP_LINE.match(line):
        indent = line[: len(line) - len(text)]
        return f"{indent}pass"
    return line

