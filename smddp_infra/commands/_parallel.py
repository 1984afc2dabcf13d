"""Per-file work of a command spread over processes, merged in input order, with progress.

``smddp-infra check`` reads and judges each template in about 3-11 ms of one core; across an
organisation's 1,000+ templates that is seconds on one core while the others idle. A
:class:`Runner` hands the per-file calls to a ``ProcessPoolExecutor`` (processes, not threads:
the work is pure Python and holds the GIL) in chunks, and ``Executor.map`` yields the results
in input order, so the report is byte for byte the serial run's. ``--jobs 1``, and runs too
small to repay starting workers, stay in this process.

A long run shows ``checked 512/1,030 templates`` on stderr, rewritten in place, only when
stderr is a terminal: a CI log or a pipe gets no control characters and the same bytes as
before.
"""

from __future__ import annotations

import os
import re
import sys
import time
from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar

from smddp_infra.errors import ConfigError

_T = TypeVar("_T")
_R = TypeVar("_R")

#: Progress shows on a terminal when a phase has more items than this, or the run passes this many seconds.
PROGRESS_ITEMS = 200
PROGRESS_SECONDS = 2.0
#: Fewer files than this are handled in this process: starting workers (tens of ms) costs more than it saves.
POOL_MIN_ITEMS = 16


def parse_jobs(value: Optional[str]) -> int:
    """``--jobs`` as a number of processes. By default every CPU this process may run on:
    ``os.process_cpu_count`` from Python 3.13, the affinity mask before it (a container's
    cpuset or ``taskset`` allows fewer CPUs than ``os.cpu_count`` reports)."""
    if value is None:
        counted = getattr(os, "process_cpu_count", None)
        if counted is not None:
            return int(counted() or 1)
        if hasattr(os, "sched_getaffinity"):
            return len(os.sched_getaffinity(0)) or 1
        return os.cpu_count() or 1
    text = value.strip()
    if not re.fullmatch(r"[0-9]+", text) or not text.strip("0"):
        raise ConfigError(f"--jobs must be a whole number of processes, 1 or more, got {value!r}")
    return int(text) if len(text) < 10 else 10**9  # more workers than items is as many as items


class Progress:
    """``VERB done/total NOUN`` on stderr, rewritten in place at most ten times a second, on a
    terminal only, once a phase has more than :data:`PROGRESS_ITEMS` items or the run has taken
    :data:`PROGRESS_SECONDS`; erased by :meth:`close` so the report starts on a clean line."""

    def __init__(self) -> None:
        self.stream = sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty()) if callable(isatty) else False
        self.started = time.monotonic()
        self.shown = 0.0  # when the line was last written; 0: nothing on it
        self.label: tuple[str, int, str] = ("", 0, "")
        self.done = 0

    def phase(self, verb: str, total: int, noun: str) -> None:
        self.label, self.done = (verb, total, noun), 0

    def step(self, count: int = 1) -> None:
        self.done += count
        if not self.tty:
            return
        verb, total, noun = self.label
        now = time.monotonic()
        if total <= PROGRESS_ITEMS and now - self.started <= PROGRESS_SECONDS:
            return
        if self.shown and now - self.shown < 0.1 and self.done < total:
            return
        self.stream.write(f"\r\033[K{verb} {self.done:,}/{total:,} {noun}")
        self.stream.flush()
        self.shown = now

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = 0.0


def _ignore_interrupt() -> None:
    """Workers leave Ctrl-C to the parent: one KeyboardInterrupt, not one traceback per worker."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Runner:
    """Runs per-item work in input order, in this process or in one pool of ``jobs`` processes
    shared by every phase of the command, counting it on a :class:`Progress`. Functions and
    items must pickle (module-level functions; plain values)."""

    def __init__(self, jobs: int, items: int) -> None:
        self.progress = Progress()
        self.workers = min(jobs, items) if items >= POOL_MIN_ITEMS else 1
        self.pool: Any = None

    def __enter__(self) -> "Runner":
        if self.workers > 1:
            import concurrent.futures

            try:
                self.pool = concurrent.futures.ProcessPoolExecutor(max_workers=self.workers, initializer=_ignore_interrupt)
            except (OSError, NotImplementedError, ImportError):  # no process semaphores (AWS Lambda has no /dev/shm)
                self.workers = 1
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        self.progress.close()
        if self.pool is not None:
            self.pool.shutdown(wait=kind is None, cancel_futures=True)

    def map(self, verb: str, noun: str, function: Callable[[_T], _R], items: Sequence[_T],
            weights: Optional[Sequence[int]] = None) -> list[_R]:
        """``[function(item) for item in items]``; ``weights`` counts an item as several on the
        progress line (a joined system of templates)."""
        counts = list(weights) if weights is not None else [1] * len(items)
        self.progress.phase(verb, sum(counts), noun)
        results: Iterable[_R]
        if self.pool is None or len(items) < 2:
            results = map(function, items)
        else:  # a few items per round trip, yet small enough that every worker stays busy to the end
            chunk = max(1, min(32, len(items) // (self.workers * 8)))
            results = self.pool.map(function, items, chunksize=chunk)
        out = []
        for result, count in zip(results, counts):
            out.append(result)
            self.progress.step(count)
        return out
