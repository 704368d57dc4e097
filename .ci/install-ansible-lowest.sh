#!/usr/bin/env bash
# The lowest ansible-core and prometheus_client gpuctl declares (pyproject.toml), in a virtualenv of
# its own beside the main one (.venv has the highest, as pip resolves them):
# tests/unit/test_ansible_range.py runs the roles', plugins' and metrics' tests under it, so the
# declared ranges are the ranges CI runs.
# Idempotent: a venv that already has that version is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

# The lowest version pyproject.toml declares for a dependency ("name>=X,<Y").
lowest_of() {
  python3 - "$1" <<'PY'
import re, sys, tomllib
with open("pyproject.toml", "rb") as handle:
    dependencies = tomllib.load(handle)["project"]["dependencies"]
spec = next(dep for dep in dependencies if dep.startswith(sys.argv[1]))
print(re.search(r">=\s*([0-9][0-9.]*)", spec).group(1))
PY
}
lowest="$(lowest_of ansible-core)"
lowest_metrics="$(lowest_of prometheus_client)"
venv=.venv-ansible-lowest
if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" - "$lowest" "$lowest_metrics" <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    found = (version("ansible-core"), version("prometheus_client"))
except PackageNotFoundError:
    sys.exit(1)
sys.exit(found != tuple(sys.argv[1:]))
PY
then
  echo "install-ansible-lowest: ansible-core $lowest and prometheus_client $lowest_metrics already in $venv"
  exit 0
fi
echo "install-ansible-lowest: ansible-core $lowest and prometheus_client $lowest_metrics into $venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet -e . "ansible-core==$lowest" "prometheus_client==$lowest_metrics" pytest pytest-timeout
