"""The Python scripts a shell entry point (``train.sh``) or a ``SourceCode(command=...)`` runs.

SageMaker runs a non-Python entry point as it is, from the code directory (``/opt/ml/code``,
the uploaded ``source_dir``): the guide's failures then live in the scripts it starts. This
module finds ``python x.py`` / ``python3 -u x.py`` / ``torchrun ... x.py`` / ``mpirun ...
python x.py`` / ``deepspeed x.py`` / ``accelerate launch x.py`` / ``python -m pkg.train`` on each
line, following a leading ``cd DIR``. Nothing is executed; variables (``$SM_CHANNEL_TRAIN``) are left alone.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

_LAUNCHERS = re.compile(r"^(python[0-9.]*|torchrun|deepspeed|accelerate|mpirun|horovodrun|smddprun|srun)$")


#: ``python -m X`` modules that are launchers themselves: the script is further along the line.
_LAUNCHER_MODULES = re.compile(r"^(torch\.distributed\.(run|launch)|deepspeed(\..*)?|accelerate(\..*)?|mpi4py|horovod(\..*)?)$")


@dataclass(frozen=True)
class ScriptCall:
    line: int
    script: str  # as written, relative to the directory the line runs in
    cwd: str  # "" or the directory of a preceding `cd`
    #: True for ``python -m pkg.train``: ``script`` is ``pkg/train.py`` (or ``pkg/train/__main__.py``)
    module: bool = False


def script_of(words: list[str]) -> tuple[str, bool] | None:
    """The script a launcher command line starts: the first ``x.py`` argument, else the module
    of ``-m`` that is not itself a launcher (``torchrun -m train``, ``python -m pkg.train``)."""
    for word in words:
        if word.endswith(".py") and not word.startswith("-"):
            return word, False
    for i, word in enumerate(words[:-1]):
        if word == "-m" or word == "--module":
            module = words[i + 1]
            if not _LAUNCHER_MODULES.match(module) and re.match(r"^[A-Za-z_][\w.]*$", module):
                return module.replace(".", "/") + ".py", True
    return None


def python_calls(text: str) -> tuple[ScriptCall, ...]:
    found: list[ScriptCall] = []
    cwd = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#!") else ""
        if not line:
            continue
        for part in re.split(r"&&|;|\|\|", line):
            try:
                words = shlex.split(part)
            except ValueError:
                words = part.split()
            if not words:
                continue
            if words[0] == "cd" and len(words) > 1:
                target = words[1]
                cwd = target if target.startswith("/") else posixpath.normpath(posixpath.join(cwd, target))
                continue
            if not any(_LAUNCHERS.match(posixpath.basename(w)) for w in words):
                continue
            started = script_of(words)
            if started is not None:
                found.append(ScriptCall(number, started[0], cwd, started[1]))
    return tuple(found)
