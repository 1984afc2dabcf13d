"""The README's import is typed for users (issue 19, item 5): ``from smddp_infra import
SmddpTrainingNetwork`` resolves, through the lazy loader's ``TYPE_CHECKING`` imports, to the real
class, so mypy catches a user's wrong prop types and misspelt props.

Checked the way a user sees it: a wheel built from this tree, installed (not editable) into a
throwaway venv, and mypy run on tests/fixtures/typing/user_app.py with that venv's interpreter.
Third-party packages (aws_cdk, jsii, ...) are not installed there: they read as Any, which keeps
the run to smddp_infra's own modules (seconds, not minutes)."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "tests" / "fixtures" / "typing" / "user_app.py"

pytestmark = pytest.mark.slow


def test_every_lazy_export_has_a_type_checking_import():
    tree = ast.parse((ROOT / "smddp_infra" / "__init__.py").read_text())
    lazy = next(node.value for node in tree.body if isinstance(node, ast.Assign) and node.targets[0].id == "_LAZY")
    exported = {key.value for key in lazy.keys}
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    typed = {alias.asname for node in guarded.body for alias in node.names}
    assert typed == exported


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory) -> str:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(ROOT / "smddp_infra", source / "smddp_infra", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "-w", str(work / "dist"), str(source)], check=True)
    (wheel,) = (work / "dist").glob("smddp_infra-*.whl")
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=False)
    site = next(env_dir.glob("lib/python*/site-packages"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--disable-pip-version-check", "--target", str(site), str(wheel)], check=True)
    app_dir = work / "app"
    app_dir.mkdir()
    shutil.copy(APP, app_dir / "user_app.py")
    (app_dir / "mypy.ini").write_text(
        "[mypy]\nignore_missing_imports = True\nshow_error_codes = True\n"
        f"python_executable = {env_dir / 'bin' / 'python'}\ncache_dir = {work / 'cache'}\n")
    result = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "user_app.py"],
                            cwd=app_dir, capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


def test_mypy_sees_the_real_class_through_the_installed_wheel(mypy_output):
    assert 'Revealed type is "smddp_infra.constructs.deprecated.SmddpTrainingNetwork"' in mypy_output
    assert "import-not-found" not in mypy_output and "import-untyped" not in mypy_output


def test_mypy_reports_exactly_the_mistakes_the_app_makes(mypy_output):
    expected = {index: match.group(1) for index, line in enumerate(APP.read_text().splitlines(), start=1)
                if (match := re.search(r"# expect: ([a-z-]+)", line))}
    found: dict[int, str] = {}
    for match in re.finditer(r"^user_app\.py:(\d+): (error|note): .*?(?:\[([a-z-]+)\])?$", mypy_output, re.M):
        line, kind, code = int(match.group(1)), match.group(2), match.group(3)
        found.setdefault(line, "note" if kind == "note" else code)
    assert found == expected, mypy_output
