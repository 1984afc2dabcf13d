"""The hooks of .pre-commit-hooks.yaml, run by the real `pre-commit` as a user's repository runs them:
`repo:` a clone of this repository at a commit, `rev:` that commit. pre-commit builds the hook's
environment from the registry (reachable, as in CI); with pre-commit-uv installed beside it
(requirements-dev.txt) it does so with uv and the cache `make` filled, in seconds rather than the
minutes pip takes for aws-cdk-lib."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")

pytestmark = pytest.mark.slow


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A clone of this checkout with its working tree committed (the hooks as they are now)."""
    clone = tmp_path_factory.mktemp("hooks") / "smddp-infra"
    shutil.copytree(ROOT, clone, ignore=shutil.ignore_patterns(".venv*", "node_modules", "cdk.out", ".git", "__pycache__",
                                                                ".mutation", "*.sarif"))
    git(clone, "init", "-q")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "hooks under test")
    return clone, git(clone, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def user_repo(tmp_path_factory: pytest.TempPathFactory, hooks_repo: tuple[Path, str]) -> Path:
    repo = tmp_path_factory.mktemp("user")
    git(repo, "init", "-q")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hooks_repo[0]}\n  rev: {hooks_repo[1]}\n  hooks:\n"
        "  - id: smddp-infra-check\n  - id: smddp-infra-preflight\n", encoding="utf-8")
    return repo


def run_hook(repo: Path, hook: str, files: dict[str, Path]) -> subprocess.CompletedProcess[str]:
    for name, source in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, repo / name)
    git(repo, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home")}
    return subprocess.run([str(PRE_COMMIT), "run", hook, "--files", *files], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)


def test_check_hook_passes_a_good_template_and_fails_a_bad_one(user_repo: Path) -> None:
    good = run_hook(user_repo, "smddp-infra-check", {"infra/net.template.yaml": FIXTURES / "templates" / "compliant.yaml"})
    assert good.returncode == 0, good.stdout + good.stderr
    bad = run_hook(user_repo, "smddp-infra-check", {"infra/fsx.template.yaml": FIXTURES / "templates" / "p3_fsx_988_bad.yaml"})
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "SMDDP-FSX3" in bad.stdout


def test_preflight_hook_passes_a_clean_notebook_and_fails_a_bad_launcher(user_repo: Path) -> None:
    clean = FIXTURES / "preflight" / "clean"
    good = run_hook(user_repo, "smddp-infra-preflight",
                    {"nb/mnist.ipynb": clean / "mnist.ipynb",
                     **{f"nb/code/{p.relative_to(clean / 'code')}": p for p in (clean / "code").rglob("*") if p.is_file()}})
    assert good.returncode == 0, good.stdout + good.stderr
    launcher = FIXTURES / "preflight" / "launcher"
    bad = run_hook(user_repo, "smddp-infra-preflight",
                   {"jobs/launch.py": launcher / "launch.py",
                    **{f"jobs/src/{p.relative_to(launcher / 'src')}": p for p in (launcher / "src").rglob("*") if p.is_file()}})
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "PF-SDK-REFUSES" in bad.stdout
