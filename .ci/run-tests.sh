#!/usr/bin/env bash
# Every test tier, as three pytest runs side by side: the host tier (real SSH test nodes, mostly
# waiting on Ansible and the nodes), the tests marked `playbook` (a real ansible-playbook on this
# machine, no nodes; among them the rerun on the lowest declared ansible-core), so that the unit tier
# runs no ansible-playbook, and all the others. Arguments go to every run. The playbook run first
# makes the lowest ansible-core's virtualenv (.ci/install-ansible-lowest.sh, done at once when it is
# there): only that run's tests use it, so the others start without waiting for the install. The
# others print as they go; the host tier's and the playbook run's output follow when all are done.
# Each run lists its 25 slowest tests (--durations=25), so every CI log shows what the test loop
# costs. Exits non-zero when any run fails.
set -uo pipefail
cd "$(dirname "$0")/.."

# Job control, so the host tier in the background keeps SIGINT: a shell without it starts background
# commands with SIGINT ignored, and the tier's Ctrl-C tests would send their signal into nothing.
set -m
host_log=$(mktemp)
playbook_log=$(mktemp)
.venv/bin/python -m pytest -m hosts -p no:cacheprovider --durations=25 "$@" >"$host_log" 2>&1 &
host_run=$!
{
  bash .ci/install-ansible-lowest.sh &&
    exec .venv/bin/python -m pytest -m "playbook and not hosts" -p no:cacheprovider --durations=25 "$@"
} >"$playbook_log" 2>&1 &
playbook_run=$!
trap 'kill "$host_run" "$playbook_run" 2>/dev/null; rm -f "$host_log" "$playbook_log"' EXIT

.venv/bin/python -m pytest -m "not hosts and not playbook" --durations=25 "$@"
others=$?
wait "$host_run"
hosts=$?
wait "$playbook_run"
playbooks=$?

echo
echo "================================ host tier (pytest -m hosts) ================================"
cat "$host_log"
echo
echo "======================= playbook run (pytest -m \"playbook and not hosts\") ======================="
cat "$playbook_log"
echo "exit status: host tier $hosts, other tiers $others, playbook run $playbooks"
[ "$hosts" -eq 0 ] && [ "$others" -eq 0 ] && [ "$playbooks" -eq 0 ]
