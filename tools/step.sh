#!/usr/bin/env sh
# Run one build step with progress lines: when it starts, every 30 s while it runs, and when it
# ends (with its wall time). `make test` wraps every step that can take more than 10 s in it
# (pip installs, npm ci, mypy, pytest), so a slow machine never looks hung.
#   usage: sh tools/step.sh NAME COMMAND [ARG...]
name=$1
shift
start=$(date +%s)
stamp() { date +%H:%M:%S; }
echo "[$(stamp)] $name: started"
(
  while sleep 30; do
    echo "[$(stamp)] $name: still running ($(( $(date +%s) - start )) s)"
  done
) &
beat=$!
"$@"
rc=$?
kill "$beat" 2>/dev/null
wait "$beat" 2>/dev/null
if [ "$rc" -eq 0 ]; then
  echo "[$(stamp)] $name: done in $(( $(date +%s) - start )) s"
else
  echo "[$(stamp)] $name: FAILED (exit $rc) after $(( $(date +%s) - start )) s"
fi
exit "$rc"
