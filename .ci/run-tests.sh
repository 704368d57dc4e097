#!/usr/bin/env bash
# Every test tier, as two pytest runs side by side: the host tier (real SSH test nodes, mostly
# waiting on Ansible and the nodes) and all the others. Arguments go to both runs. The other tiers
# print as they go; the host tier's output follows when both are done. Each run lists its 25 slowest
# tests (--durations=25), so every CI log shows what the test loop costs. Exits non-zero when either
# run fails.
set -uo pipefail
cd "$(dirname "$0")/.."

# Job control, so the host tier in the background keeps SIGINT: a shell without it starts background
# commands with SIGINT ignored, and the tier's Ctrl-C tests would send their signal into nothing.
set -m
host_log=$(mktemp)
.venv/bin/python -m pytest -m hosts -p no:cacheprovider --durations=25 "$@" >"$host_log" 2>&1 &
host_run=$!
trap 'kill "$host_run" 2>/dev/null; rm -f "$host_log"' EXIT

.venv/bin/python -m pytest -m "not hosts" --durations=25 "$@"
others=$?
wait "$host_run"
hosts=$?

echo
echo "================================ host tier (pytest -m hosts) ================================"
cat "$host_log"
echo "exit status: host tier $hosts, other tiers $others"
[ "$hosts" -eq 0 ] && [ "$others" -eq 0 ]
