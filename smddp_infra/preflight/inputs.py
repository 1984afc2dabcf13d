"""Inputs: what the user gave, read into jobs (nothing is judged here).

Detected by content (not only by extension):

* a **Jupyter notebook** (:mod:`.notebook`): code cells in order, ``%%writefile`` cells as files;
* a **launcher script** that builds an SDK v2 estimator or a ``ModelTrainer`` (:mod:`.extract`,
  :mod:`.code_jobs`);
* **SageMaker API JSON**: a ``CreateTrainingJob`` request or ``DescribeTrainingJob`` response (:mod:`.api`);
* a **job file** (YAML/JSON of SDK v2 Estimator arguments or a ModelTrainer shape, :mod:`.job`).

Any unreadable input raises :class:`PreflightInputError` (one line, exit 2).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Optional

from smddp_infra.preflight.errors import PreflightInputError
from smddp_infra.preflight.job import JobDescription, parse_job
from smddp_infra.preflight.reading import decode_python, decode_text, parse_python, parse_yaml, read_bytes, too_deep


@dataclass(frozen=True)
class Input:
    kind: str
    jobs: tuple[JobDescription, ...]
    files: Mapping[Path, Any] = field(default_factory=dict)  # %%writefile: path -> VirtualFile
    notes: tuple[str, ...] = ()
    shape_problems: Optional[tuple[str, ...]] = ()
    #: the notebook's code cells or the launcher's text, as written (shell lines included): what
    #: the program step searches for a step that creates a missing source_dir
    source_text: str = ""


def read_input(path: Path) -> Input:
    """Detect what ``path`` holds and read its jobs (any unreadable input raises)."""
    suffix = path.suffix.lower()
    what = {".ipynb": "notebook", ".py": "launcher script"}.get(suffix, "job file")
    data = read_bytes(path, what=what)
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
            raise too_deep(str(path), what, exc) from None
        except ValueError as exc:  # an int past Python's 4,300 digits (json says no more than that)
            raise PreflightInputError(f"{what} {path} cannot be read: {str(exc).split(';')[0]}") from None
    elif suffix not in (".yaml", ".yml") and _looks_like_launcher(text):
        return _code_input(path, data)
    if document is None:
        document = parse_yaml(text, path=path, what="job file")
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
    return Input("job_file", (parse_job(document, path=path),))


def _looks_like_launcher(text: str) -> bool:
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    from smddp_infra.preflight.extract import mentions_sagemaker_job

    return mentions_sagemaker_job(tree)


def _code_input(path: Path, data: bytes) -> Input:
    from smddp_infra.preflight.extract import Unit

    source = decode_python(data, path=path, what="launcher script")
    tree = parse_python(source, where=str(path), what="launcher script")
    found = _jobs_from_units(path, "launcher", [(Unit(source, path.name), tree)], {}, (), file=str(_folder(path) / path.name))
    return replace(found, source_text=source)


def _notebook_input(path: Path, document: Mapping[str, Any]) -> Input:
    from smddp_infra.preflight.notebook import read_notebook

    notebook = read_notebook(path, document)
    found = _jobs_from_units(path, "notebook", list(notebook.units), notebook.files, notebook.skipped)
    cells = [c.get("source", "") for c in document["cells"] if isinstance(c, Mapping) and c.get("cell_type") == "code"]
    return replace(found, source_text="\n".join("".join(c) if isinstance(c, list) else str(c) for c in cells))


def _folder(path: Path) -> Path:
    """The folder the code runs in: Jupyter starts a notebook's kernel in the notebook's folder."""
    return Path(os.path.abspath(path.parent))


def _jobs_from_units(path: Path, kind: str, units: list[Any], files: Mapping[Path, Any], notes: tuple[str, ...],
                     *, file: Optional[str] = None) -> Input:
    from smddp_infra.preflight.code_jobs import job_from_code
    from smddp_infra.preflight.extract import Extractor

    what = "notebook" if kind == "notebook" else "launcher script"
    try:
        found = Extractor(cwd=str(_folder(path)), file=file).run(units)
    except (RecursionError, MemoryError) as exc:
        raise too_deep(str(path), what, exc) from None
    if not found:
        raise PreflightInputError(
            f"{what} {path} builds no SageMaker estimator or ModelTrainer (PyTorch(...), HuggingFace(...), "
            "TensorFlow(...), Estimator(...), ModelTrainer(...) from the sagemaker package): nothing to check; "
            f"for a training script give the job too: smddp-infra preflight JOB_FILE {path.name}")
    return Input(kind, tuple(job_from_code(j, path=path, kind=kind) for j in found), files, notes)


def _api_input(path: Path, document: Mapping[str, Any], kind: str) -> Input:
    from smddp_infra.preflight.api import CREATE, is_fragment, job_from_api, shape_problems

    problems = shape_problems(document, kind)
    notes = (("a CreateTrainingJob request fragment: members it lacks (AlgorithmSpecification, TrainingJobName...) "
              "are not checked",) if kind == CREATE and is_fragment(document) else ())
    return Input(kind, (job_from_api(document, path=path, kind=kind),), notes=notes,
                  shape_problems=tuple(p.message for p in problems) if problems is not None else None)


def api_document_input(path: Path, document: Mapping[str, Any], *, from_service: bool = False) -> Input:
    """API JSON already decoded. ``from_service``: the answer comes from SageMaker itself
    (``diagnose`` reads DescribeTrainingJob), so its shape is the service's: not checked."""
    from smddp_infra.preflight.api import DESCRIBE, api_kind, job_from_api

    kind = api_kind(document) or DESCRIBE
    if from_service:
        return Input(kind, (job_from_api(document, path=path, kind=kind),))
    return _api_input(path, document, kind)
