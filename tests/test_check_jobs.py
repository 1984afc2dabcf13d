"""``smddp-infra check --jobs N``: templates read and judged in a process pool print exactly
what the serial run prints, a bad N is one line, and progress appears only on a terminal."""

from __future__ import annotations

import concurrent.futures
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from smddp_infra.cli import main
from smddp_infra.commands import _parallel

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SMALL = FIXTURES / "templates" / "compliant.yaml"


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The worker counts of every process pool the command starts (it still starts them)."""
    started: list[int] = []
    real = concurrent.futures.ProcessPoolExecutor

    class Counted(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            started.append(kwargs["max_workers"])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Counted)
    return started


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _copies(directory: Path, count: int) -> Path:
    directory.mkdir()
    for i in range(count):
        shutil.copy(SMALL, directory / f"t{i:03d}.yaml")
    return directory


@pytest.mark.parametrize("fmt", [[], ["--json"]], ids=["text", "json"])
def test_two_processes_print_what_one_prints_over_every_fixture(capsys: pytest.CaptureFixture[str], pools: list[int],
                                                                  fmt: list[str]) -> None:
    # tests/fixtures holds single templates, linked systems (nested stacks, exports, SSM),
    # non-templates skipped by content and an unreadable file: all merged in input order.
    serial = _run(capsys, "--jobs", "1", *fmt, str(FIXTURES))
    assert pools == []
    parallel = _run(capsys, "--jobs", "2", *fmt, str(FIXTURES))
    assert pools == [2]
    assert parallel == serial
    assert serial[0] == 2 and serial[1].count("\n") > 100  # an unreadable fixture, and many findings


def test_named_files_keep_their_order_and_repeats_in_the_pool(capsys: pytest.CaptureFixture[str], pools: list[int],
                                                               tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("Resources: [")
    names = sorted(str(p) for p in (FIXTURES / "templates").glob("*.yaml"))[:20]
    argv = [names[5], str(broken), *reversed(names), names[5], str(broken)]
    assert _run(capsys, "--jobs", "2", *argv) == _run(capsys, "--jobs", "1", *argv)
    assert pools == [2]


def test_without_jobs_every_cpu_this_process_may_use_is_a_worker(capsys: pytest.CaptureFixture[str], pools: list[int],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "process_cpu_count", lambda: 3, raising=False)
    _run(capsys, str(FIXTURES / "corpus"))
    assert pools == [3]


def test_a_few_files_stay_in_this_process(capsys: pytest.CaptureFixture[str], pools: list[int]) -> None:
    code, _, err = _run(capsys, "--jobs", "2", str(SMALL))
    assert pools == [] and code == 0 and "in 1 template(s)" in err


def test_where_processes_cannot_be_started_the_files_are_read_here(capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError(38, "Function not implemented")  # what multiprocessing's SemLock raises without /dev/shm

    expected = _run(capsys, "--jobs", "1", str(FIXTURES / "corpus"))
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", refuse)
    assert _run(capsys, "--jobs", "2", str(FIXTURES / "corpus")) == expected


@pytest.mark.parametrize("argv", [["--jobs", "0"], ["--jobs", "-1"], ["--jobs=-1"], ["--jobs", "x"], ["--jobs", "1.5"],
                                  ["--jobs", ""], ["--jobs", "00"]])
def test_a_bad_jobs_value_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], pools: list[int], argv: list[str]) -> None:
    code, out, err = _run(capsys, *argv, str(FIXTURES / "corpus"))
    value = argv[-1].split("=")[-1]
    assert (code, out, pools) == (2, "", [])
    assert err == f"smddp-infra check: error: --jobs must be a whole number of processes, 1 or more, got {value!r}\n"


def test_more_jobs_than_files_is_as_many_workers_as_files(capsys: pytest.CaptureFixture[str], pools: list[int],
                                                          tmp_path: Path) -> None:
    code, _, err = _run(capsys, "--jobs", "99999999999", str(_copies(tmp_path / "many", 20)))
    assert pools == [20] and code == 0 and "in 20 template(s)" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_rewritten_in_place_on_a_terminal_and_erased_before_the_summary(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    many = str(_copies(tmp_path / "many", 30))
    _, quiet_out, quiet_err = _run(capsys, "--jobs", "1", many)
    monkeypatch.setattr(_parallel, "PROGRESS_ITEMS", 10)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    _, out, _ = _run(capsys, "--jobs", "1", many)
    shown = terminal.getvalue()
    assert "\r\x1b[Kread 30/30 files" in shown and "\r\x1b[Kchecked 30/30 templates" in shown
    assert shown.endswith("\r\x1b[K" + quiet_err)  # the report starts on a clean line, as without progress
    assert out == quiet_out


def test_a_short_run_on_a_terminal_shows_no_progress(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    many = str(_copies(tmp_path / "many", 30))
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    _run(capsys, "--jobs", "1", many)
    assert "\r" not in terminal.getvalue() and "in 30 template(s)" in terminal.getvalue()


def test_a_long_run_into_a_log_shows_no_progress(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    monkeypatch.setattr(_parallel, "PROGRESS_ITEMS", 0)
    monkeypatch.setattr(_parallel, "PROGRESS_SECONDS", 0.0)
    _, _, err = _run(capsys, "--jobs", "1", str(_copies(tmp_path / "many", 30)))
    assert "\r" not in err and "\x1b" not in err


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_the_command_on_a_real_terminal_counts_past_200_files_with_workers(tmp_path: Path) -> None:
    many = _copies(tmp_path / "many", 201)
    primary, secondary = os.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run([sys.executable, "-m", "smddp_infra.cli", "check", "--jobs", "2", str(many)], env=env,
                              stdout=subprocess.PIPE, stderr=secondary, timeout=120, check=False)
        os.close(secondary)
        shown = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(primary)
    text = shown.decode()
    assert done.returncode == 0 and done.stdout == b""
    assert "checked 201/201 templates" in text and text.rstrip().endswith("no findings in 201 template(s)")
