"""Standard output for a reader that may stop early: ``smddp-infra check --json | head -1``.

Python ignores SIGPIPE, so once the reading end of a pipe closes the next write to stdout
raises ``BrokenPipeError``: a traceback, or (when the write happens in the interpreter's
last flush) "Exception ignored ... BrokenPipeError" and exit code 120. Rich instead exits 1
on its own, whatever the command found. But a reader that stops reading asked for no more
output; it is not an error of ours. So, once: stop writing, keep the exit code the command
computed (0 or 1, which CI may still read through ``set -o pipefail``), and point the file
descriptor at /dev/null so the final flush has nowhere to fail -- the recipe of the Python
docs ("Note on SIGPIPE", signal module).

``cli.main`` wraps every command with it, so a command needs nothing of its own.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Optional, TextIO


class _PipeSafeStdout:
    """Passes everything to the real stdout until its reader goes away, then drops it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._reader_went_away()
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._reader_went_away()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding...: rich asks for them
        return getattr(self._stream, name)

    def _reader_went_away(self) -> None:
        self.reader_gone = True
        try:
            descriptor = self._stream.fileno()
        except (AttributeError, OSError, ValueError):  # an in-memory stream: nothing to redirect
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, descriptor)
        finally:
            os.close(devnull)


@contextmanager
def pipe_safe_stdout() -> Iterator[None]:
    """Within the block ``sys.stdout`` (print, json.dump, rich) survives a closed pipe.

    Flushes on the way out, so a write the buffer held back fails here, inside the guard,
    and not in the interpreter's shutdown. Nesting is harmless; the old stdout is restored.
    """
    original = sys.stdout
    if isinstance(original, _PipeSafeStdout):
        yield
        return
    safe = _PipeSafeStdout(original)
    sys.stdout = safe
    try:
        yield
    finally:
        safe.flush()
        if sys.stdout is safe:
            sys.stdout = original


def print_json(value: Any, *, default: Optional[Callable[[Any], Any]] = None) -> None:
    """A command's ``--json`` document: indented, one write ending in a newline (every command
    prints its machine-readable answer the same way, so CI and the MCP tools read one shape)."""
    sys.stdout.write(json.dumps(value, indent=2, default=default) + "\n")
