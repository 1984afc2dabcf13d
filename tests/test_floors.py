"""The dependency floors pyproject.toml declares, and cdk-nag 2, proved in a cached venv.

``.venv-floor`` (built once by ``make test`` through tools/floor_venv.sh, then reused: a warm
``make test`` installs nothing) holds aws-cdk-lib and constructs at pyproject.toml's lower
bounds and nothing else of ours (no cfn-lint, rich or PyYAML: the core install), plus cdk-nag 3
at the ``[nag]`` floor and cdk-nag 2 in two ``--target`` directories chosen by PYTHONPATH.

* floor: the default app (cdk.json's context, both rule packs as validation plugins) and
  docs/embedding.md's example synthesize with exactly those versions;
* cdk-nag 2: a platform app with ``Aspects.of(app).add(AwsSolutionsChecks())`` sees zero
  findings on the networks' resources (the acknowledgements reach cdk-nag 2 through the
  ``cdk_nag`` metadata) while its own non-compliant bucket is still reported.

Both apps run at once in subprocesses (module fixture): each boots its own jsii kernel.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
FLOOR = ROOT / ".venv-floor"
APPS = ROOT / "tests" / "fixtures" / "apps"

pytestmark = [pytest.mark.floors, pytest.mark.slow]


def _lower_bound(requirement: str) -> str:
    match = re.search(r">=\s*([0-9][0-9.]*)", requirement)
    assert match, f"{requirement!r} declares no lower bound"
    return match.group(1)


def _declared() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {"aws-cdk-lib", "constructs", "cdk-nag"}
    found = {}
    for requirement in [*project["dependencies"], *project["optional-dependencies"]["nag"]]:
        name = re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0]
        if name in wanted:
            found[name] = _lower_bound(requirement)
    assert set(found) == wanted
    return found


def _start(app: Path, nag_dir: str, *args: str) -> subprocess.Popen[str]:
    python = FLOOR / "bin" / "python"
    assert (FLOOR / ".installed").exists() and python.exists(), (
        f"{FLOOR} is missing: `make test` builds it (or: sh tools/floor_venv.sh .venv-floor)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(FLOOR / nag_dir)]))
    return subprocess.Popen([str(python), str(app), *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _report(process: subprocess.Popen[str]) -> Any:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, f"exit {process.returncode}:\n{err[-3000:]}"
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs() -> dict[str, subprocess.Popen[str]]:
    return {"floor": _start(APPS / "floor_check.py", "nag3", str(ROOT)), "nag2": _start(APPS / "nag2_app.py", "nag2")}


@pytest.fixture(scope="module")
def floor(runs: dict[str, subprocess.Popen[str]]) -> Any:
    return _report(runs["floor"])


@pytest.fixture(scope="module")
def nag2(runs: dict[str, subprocess.Popen[str]]) -> Any:
    return _report(runs["nag2"])


def test_the_floor_venv_holds_exactly_the_declared_lower_bounds_and_only_the_core_install(floor):
    assert floor["versions"] == _declared()
    assert floor["absent"] == ["cfnlint", "yaml", "rich"]  # the constructs need aws-cdk-lib + constructs only


def test_the_default_app_synthesizes_at_the_floor_with_both_rule_packs(floor):
    assert floor["default_app"] == 0 and floor["default_resources"] > 20


def test_the_embedding_example_synthesizes_at_the_floor(floor):
    assert floor["doc_example"] == "ok", floor["doc_example"]
    (fs,) = floor["doc_file_systems"]
    assert fs["KmsKeyId"].startswith("arn:aws:kms:") and fs["LustreConfiguration"]["DeploymentType"].startswith("PERSISTENT")


def test_cdk_nag_2_sees_the_acknowledgements_and_still_reports_the_platforms_own_bucket(nag2):
    findings = [m for m in nag2 if re.match(r"AwsSolutions-", m["text"])]
    ours = [m for m in findings if m["path"].startswith(("/Platform/Training/", "/Platform/Encrypted/"))]
    assert ours == []
    theirs = {m["text"].split(":")[0] for m in findings if m["path"].startswith("/Platform/PlatformBucket/")}
    assert {"AwsSolutions-S1", "AwsSolutions-S10"} <= theirs
    assert {m["path"] for m in findings} == {"/Platform/PlatformBucket/Resource"}
