"""Static checks of playbooks/: ansible-lint (production profile), --syntax-check of every top-level
playbook, and the inventory-validation play run against the sample inventory.

The validation play only asserts (gather_facts is off, assert runs on the controller), so it runs
against the sample inventory's documentation addresses without contacting any host.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpuctl.hosts.runner import runner_envvars

# Runs a real ansible-playbook on this machine: a run of its own beside the tiers (.ci/run-tests.sh).
pytestmark = [pytest.mark.playbook]
REPO = Path(__file__).resolve().parents[2]
PLAYBOOKS = REPO / "playbooks"
BIN = Path(sys.executable).parent
SAMPLE_INVENTORIES = [
    REPO / "inventories" / "sample" / "hosts.yml",
    REPO / "inventories" / "sample" / "hosts.ini",
]
TOP_LEVEL = sorted(PLAYBOOKS.glob("*.yml"))


def run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "NO_COLOR": "1", **(env or {})}
    return subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env, check=False)


def test_top_level_playbooks_exist() -> None:
    names = {path.name for path in TOP_LEVEL}
    assert {
        "site.yml",
        "host.yml",
        "preflight.yml",
        "driver.yml",
        "container-toolkit.yml",
        "container-runtime.yml",
    } <= names


def test_ansible_lint_production_profile_is_clean() -> None:
    lint = BIN / "ansible-lint"
    if not lint.exists():
        pytest.skip("ansible-lint is not installed (pip install -e '.[test]')")

    result = run([str(lint), "--offline", "--profile", "production", "playbooks"])

    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("playbook", TOP_LEVEL, ids=lambda path: path.name)
def test_syntax_check(playbook: Path) -> None:
    result = run(
        [str(BIN / "ansible-playbook"), "-i", str(SAMPLE_INVENTORIES[0]), "--syntax-check", str(playbook)]
    )

    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("inventory", SAMPLE_INVENTORIES, ids=lambda path: path.name)
def test_sample_inventory_passes_validation(inventory: Path) -> None:
    result = run([str(BIN / "ansible-playbook"), "-i", str(inventory), str(PLAYBOOKS / "validate.yml")])

    assert result.returncode == 0, result.stdout + result.stderr
    assert "gpu-worker-1" in result.stdout


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ("gpuctl_driver_branch=55", "gpuctl_driver_branch=55"),
        ("gpuctl_driver_version=570.86.15", "gpuctl_driver_version=570.86.15"),
        ("gpuctl_reboot_policy=always", "gpuctl_reboot_policy=always"),
        ("gpuctl_toolkit_version=latest", "gpuctl_toolkit_version=latest"),
        ("gpuctl_container_runtime=podman", "gpuctl_container_runtime=podman"),
    ],
)
def test_validation_rejects_bad_settings_naming_them(setting: str, named: str) -> None:
    result = run(
        [
            str(BIN / "ansible-playbook"),
            "-i",
            str(SAMPLE_INVENTORIES[0]),
            str(PLAYBOOKS / "validate.yml"),
            "-e",
            setting,
        ]
    )

    assert result.returncode != 0
    assert named in result.stdout + result.stderr
    assert "unreachable=1" not in result.stdout


def test_validation_fails_only_the_host_with_a_bad_setting(tmp_path: Path) -> None:
    """One assertion step per host checks the three roles; the hosts that pass join gpuctl_validated."""
    inventory = tmp_path / "hosts.yml"
    hosts = {
        "good-node": {"ansible_host": "192.0.2.10"},
        "bad-node": {"ansible_host": "192.0.2.11", "gpuctl_cdi_spec_path": "relative/nvidia.yaml"},
    }
    inventory.write_text(json.dumps({"all": {"children": {"gpu_nodes": {"hosts": hosts}}}}))
    playbook = tmp_path / "validated.yml"  # validate.yml, then a play over the hosts it validated
    validated = {"hosts": "gpuctl_validated", "gather_facts": False, "tasks": [{"ansible.builtin.debug": {}}]}
    playbook.write_text(
        json.dumps([{"ansible.builtin.import_playbook": str(PLAYBOOKS / "validate.yml")}, validated])
    )

    result = run([str(BIN / "ansible-playbook"), "-i", str(inventory), str(playbook)])

    assert result.returncode != 0
    assert "bad-node: invalid container toolkit setting:" in result.stdout
    assert "gpuctl_cdi_spec_path=relative/nvidia.yaml (an absolute path)" in result.stdout
    assert re.search(r"^bad-node\s*: ok=0 .* failed=1 ", result.stdout, re.MULTILINE), result.stdout
    assert re.search(r"^good-node\s*: ok=3 .* failed=0 ", result.stdout, re.MULTILINE), result.stdout


@pytest.mark.parametrize("enabled", [True, False])
def test_the_prefork_callback_runs_only_where_enabled(enabled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """gpuctl's runner enables it; a user's own ansible-playbook run keeps its garbage collector."""
    command = [str(BIN / "ansible-playbook"), "-vvvv", "-i", str(SAMPLE_INVENTORIES[0])]
    monkeypatch.delenv("ANSIBLE_CALLBACKS_ENABLED", raising=False)  # the test run's own setting, if any
    callbacks = {"ANSIBLE_CALLBACKS_ENABLED": runner_envvars(PLAYBOOKS)["ANSIBLE_CALLBACKS_ENABLED"]}
    result = run([*command, str(PLAYBOOKS / "validate.yml")], env=callbacks if enabled else {})

    assert result.returncode == 0, result.stdout + result.stderr
    loaded = "Loading callback plugin gpuctl_prefork of type aggregate" in result.stdout
    assert loaded == enabled


# Run in a child interpreter: the plugin changes the process's garbage collector settings.
PREFORK_PROBE = """
import gc, importlib.util, json, sys
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader()
spec = importlib.util.spec_from_file_location("gpuctl_prefork", sys.argv[1])
plugin = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plugin)
before = set(sys.modules)
callback = plugin.CallbackModule()
callback.v2_playbook_on_start(None)
print(json.dumps({"loaded": sorted(set(sys.modules) - before), "threshold": gc.get_threshold()[0],
                  "frozen": gc.get_freeze_count()}))
"""


def test_the_prefork_callback_loads_what_workers_would_and_freezes_the_heap() -> None:
    """Its errors are suppressed (another ansible-core only loses the speed-up), so this checks the
    work is really done with the ansible-core installed: without it each forked worker repeats it."""
    result = run(
        [sys.executable, "-c", PREFORK_PROBE, str(PLAYBOOKS / "callback_plugins" / "gpuctl_prefork.py")]
    )

    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    # Ansible names a filter or test plugin's module after its file and a hash: filter.core_6892...
    # (2.19), filter.8532..._core (2.16).
    loaded = {re.sub(r"(?<=\.)\d+_|_\d+$", "", name) for name in found["loaded"]}
    for module in ("filter.core", "filter.mathstuff", "test.core", "action.set_fact", "action.assert",
                   "action.raw", "connection.ssh", "shell.sh", "become.sudo"):  # fmt: skip
        assert f"ansible.plugins.{module}" in loaded, f"{module} was not loaded: {sorted(loaded)}"
    assert found["threshold"] == 20_000
    assert found["frozen"] > 10_000
