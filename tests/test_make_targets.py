"""What the Makefile's user-facing targets promise (issue 21): `make synth` honours CONTEXT and a
bad value is one line and exit 2; `make deploy-local` needs no checkov or SDK v3 venv; `make
review` says when it installs Graphviz as root and skips the diagram when it cannot.

Targets are read with ``make -n`` (nothing runs); the synth command it prints is run for real.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

def _recipe(target: str, *variables: str) -> list[str]:
    """The commands `make -n TARGET` would run for TARGET itself (set-up steps filtered out)."""
    done = subprocess.run(["make", "-n", "-C", str(ROOT), target, *variables], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _prerequisites(target: str) -> list[str]:
    for line in (ROOT / "Makefile").read_text().splitlines():
        if line.startswith(f"{target}:"):
            return line.split(":", 1)[1].split()
    raise AssertionError(f"no {target} target")


def test_synth_passes_context_to_the_cdk_cli() -> None:
    (synth,) = [line for line in _recipe("synth", "CONTEXT=-c smddp:instanceCount=8") if " synth " in line]
    assert synth.endswith("-c smddp:instanceCount=8")


def test_a_bad_context_value_through_make_synth_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (synth,) = [line for line in _recipe("synth", "CONTEXT=-c smddp:instanceCount=0") if " synth " in line]
    # the recipe exactly as make runs it, with the assembly written outside the worktree
    done = subprocess.run(f"{synth.lstrip('@')} -o {tmp_path / 'cdk.out'}", shell=True, cwd=ROOT, capture_output=True,
                          text=True, timeout=240, env={**os.environ, "CDK_DISABLE_CLI_TELEMETRY": "true"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == ["smddp_infra: error: smddp:instanceCount must be a whole number >= 1, got '0'"]


def test_app_exit_wrapper_passes_other_exit_codes_and_lines_through() -> None:
    script = "import sys; print('keep me', file=sys.stderr); sys.exit(3)"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "cdk_app_exit.py"), sys.executable, "-c", script],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (3, "keep me\n")


@pytest.mark.parametrize("target", ["deploy-local", "review", "deploy", "diff", "synth"])
def test_targets_that_do_not_need_the_checkov_and_sdk_v3_venvs_do_not_build_them(target: str) -> None:
    prerequisites = _prerequisites(target)
    assert "setup" not in prerequisites and not any("CHECKOV" in p or "SDKV3" in p for p in prerequisites)
    assert prerequisites == ["$(STAMP)", "$(NODE_STAMP)"]


def _fake_bin(tmp_path: Path, *, uid: str, apt_get_exit: int) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in {"id": f"echo {uid}", "apt-get": f"exit {apt_get_exit}"}.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _install_graphviz(bin_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/bin/sh", str(ROOT / "tools" / "install_graphviz.sh")], capture_output=True, text=True,
                          timeout=60, env={"PATH": str(bin_dir)})


def test_review_says_it_installs_graphviz_as_root_and_skips_the_diagram_when_that_fails(tmp_path: Path) -> None:
    done = _install_graphviz(_fake_bin(tmp_path, uid="0", apt_get_exit=100))
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[0] == "graphviz: `dot` is missing; installing it for the SVG diagram: apt-get install graphviz (as root)"
    assert "skipping the SVG diagram" in lines[-1]


def test_review_without_root_skips_the_diagram_with_a_note(tmp_path: Path) -> None:
    done = _install_graphviz(_fake_bin(tmp_path, uid="1000", apt_get_exit=0))
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        "graphviz: not installed, and installing it needs root (apt-get install graphviz); skipping the SVG diagram "
        "(the review still has the Mermaid diagram and network.dot)."]


def test_make_installs_the_checkout_so_that_mypy_sees_it() -> None:
    # setuptools' default editable install is an import hook mypy cannot follow (import-not-found
    # for an app type-checked against the checkout); compat mode writes a path entry it reads.
    installs = [line for line in _recipe(".venv/.installed", "-B") if "pip install" in line and " -e ." in line]
    assert installs, "the .venv recipe installs the checkout"
    assert all("--config-settings editable_mode=compat" in line for line in installs), installs
