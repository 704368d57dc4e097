#!/usr/bin/env bash
# The lowest ansible-core gpuctl declares (pyproject.toml), in a virtualenv of its own beside the
# main one (.venv has the highest, as pip resolves it): tests/unit/test_ansible_range.py runs the
# roles' and plugins' tests under it, so the declared range is the range CI runs.
# Idempotent: a venv that already has that version is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

lowest="$(python3 - <<'PY'
import re, tomllib
with open("pyproject.toml", "rb") as handle:
    dependencies = tomllib.load(handle)["project"]["dependencies"]
spec = next(dep for dep in dependencies if dep.startswith("ansible-core"))
print(re.search(r">=\s*([0-9][0-9.]*)", spec).group(1))
PY
)"
venv=.venv-ansible-lowest
if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "import ansible.release as r, sys; sys.exit(r.__version__ != '$lowest')"; then
  echo "install-ansible-lowest: ansible-core $lowest already in $venv"
  exit 0
fi
echo "install-ansible-lowest: ansible-core $lowest into $venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet -e . "ansible-core==$lowest" pytest pytest-timeout
