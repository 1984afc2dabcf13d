"""Run a ``cdk`` command and end with the app's own exit code and only the app's own error line.

The cdk CLI (2.1148) runs ``python3 app.py``; when the app exits non-zero (app.py exits 2 with
one line for a bad ``-c smddp:...`` value) the CLI adds ``python3 app.py: Subprocess exited
with error 2`` on stderr and itself always exits 1. ``make synth`` and ``make deploy`` run the
CLI through this wrapper, so a bad context value stays one line and exit 2 (make then adds its
own ``make: *** ... Error 2``). Every other line and exit code passes through unchanged.

Usage: python tools/cdk_app_exit.py CDK_COMMAND [ARGS...]
"""

from __future__ import annotations

import re
import subprocess
import sys

#: The line the cdk CLI adds when the app process fails ("<app command>: Subprocess exited with error N").
APP_FAILED = re.compile(r"^.+: Subprocess exited with error (\d+)$")


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: cdk_app_exit.py CDK_COMMAND [ARGS...]", file=sys.stderr)
        return 2
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    app_code = None
    for line in process.stderr:
        failed = APP_FAILED.match(line.rstrip("\n"))
        if failed:
            app_code = int(failed.group(1))
            continue
        sys.stderr.write(line)
        sys.stderr.flush()
    code = process.wait()
    return app_code if code != 0 and app_code is not None else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
