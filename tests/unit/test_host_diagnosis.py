"""A failed host task's real output (Ansible results quoted from public threads) → the cause and fix
for the host, in `bootstrap --phase host`'s JSON (`hosts[].diagnosis`) and its summary."""

from __future__ import annotations

from typing import Any

from gpuctl.core.bootstrap import BootstrapResult, host_outcomes
from gpuctl.hosts.events import ProgressState
from gpuctl.report.bootstrap import host_json, print_host_table
from gpuctl.report.console import make_console

# NVIDIA/ansible-role-nvidia-driver#60: the package was missing from NVIDIA's repository.
NO_PACKAGE = {"changed": False, "msg": "No package matching 'cuda-drivers-510' is available"}
# autowarefoundation/autoware_core_universe_prototype#154: held packages and another version asked
# for (the fields of the result as quoted; its stdout is cut in the quote and left out).
_HELD_LINE = "E: Held packages were changed and -y was used without --allow-change-held-packages."
_PINNED = " ".join(
    f"'{name}={version}+cuda11.4'"
    for name, version in (
        ("libcudnn8", "8.2.4.15-1"), ("libcudnn8-dev", "8.2.4.15-1"),
        ("libnvinfer8", "8.2.4-1"), ("libnvinfer-dev", "8.2.4-1"),
        ("libnvinfer-plugin8", "8.2.4-1"), ("libnvinfer-plugin-dev", "8.2.4-1"),
        ("libnvonnxparsers8", "8.2.4-1"), ("libnvonnxparsers-dev", "8.2.4-1"),
        ("libnvparsers8", "8.2.4-1"), ("libnvparsers-dev", "8.2.4-1"),
    )
)  # fmt: skip
_APT = '/usr/bin/apt-get -y -o "Dpkg::Options::=--force-confdef" -o "Dpkg::Options::=--force-confold"'
HELD = {
    "cache_update_time": 1649304301,
    "cache_updated": True,
    "changed": False,
    "msg": f"'{_APT}       install {_PINNED} --allow-downgrades' failed: {_HELD_LINE}\n",
    "rc": 100,
    "stderr": f"{_HELD_LINE}\n",
    "stderr_lines": [_HELD_LINE],
}
# morrownr/8821au-20210708#149: a DKMS build without the running kernel's headers, as a command
# task's result carries it; the cause is not among the last lines the one-line message keeps.
DKMS = {
    "changed": True,
    "msg": "non-zero return code",
    "rc": 1,
    "stdout": "Error! Your kernel headers for kernel 6.10.3-zen1-2-zen cannot be found at "
    "/usr/lib/modules/6.10.3-zen1-2-zen/build or /usr/lib/modules/6.10.3-zen1-2-zen/source.\n"
    "Please install the linux-headers-6.10.3-zen1-2-zen package or use the --kernelsourcedir option to "
    "tell DKMS where it's located.\nAn error occurred. dkms build error:  1\nPlease report this error.",
    "stderr": "",
}


def _result(host: str, task: str, res: dict[str, Any]) -> BootstrapResult:
    state = ProgressState()
    for event in (
        {"event": "runner_on_failed", "event_data": {"host": host, "task": task, "res": res}},
        {"event": "playbook_on_stats", "event_data": {"ok": {host: 3}, "failures": {host: 1}}},
    ):
        state.apply(event)
    return BootstrapResult(
        phase="host",
        check=False,
        inventory="inv.yml",
        playbook="site.yml",
        status="failed",
        hosts=host_outcomes(state, {host}),
        failed_tasks=tuple(state.failed_tasks),
        duration_s=1.0,
    )


def _diagnosis(result: BootstrapResult) -> dict[str, Any]:
    (host,) = host_json(result)["hosts"]
    diagnosis: dict[str, Any] = host["diagnosis"]
    return diagnosis


def test_apt_without_the_package_names_the_repository_and_the_pin() -> None:
    found = _diagnosis(_result("gpu-0", "Driver | install packages", NO_PACKAGE))
    assert (found["id"], found["diagnosis"], found["status"]) == ("host.apt-no-candidate",) * 2 + ("fail",)
    assert found["task"] == "Driver | install packages"
    assert "No package matching 'cuda-drivers-510'" in found["evidence"]
    assert "apt-cache policy" in found["hint"]
    assert "--limit gpu-0" in found["hint"]


def test_held_packages_are_named() -> None:
    found = _diagnosis(_result("gpu-1", "Toolkit | install the pinned packages", HELD))
    assert found["id"] == "host.apt-held-changed"
    assert "apt-mark unhold" in found["hint"]


def test_the_cause_is_found_in_the_whole_output_not_only_the_message() -> None:
    result = _result("gpu-2", "Driver | build the module", DKMS)
    (task,) = result.failed_tasks
    assert "kernel headers" not in task.message  # the one-line message keeps only the last lines
    found = _diagnosis(result)
    assert found["id"] == "host.kernel-headers-missing"
    assert "linux-headers-$(uname -r)" in found["hint"]


def test_a_host_without_a_known_cause_has_a_null_diagnosis() -> None:
    result = _result("gpu-3", "Ping | fail on request", {"msg": "asked to fail on gpu-3"})
    assert host_json(result)["hosts"][0]["diagnosis"] is None


def test_the_summary_prints_cause_and_fix_under_the_failed_task(capsys: Any) -> None:
    print_host_table(_result("gpu-0", "Driver | install packages", NO_PACKAGE), make_console())
    err = capsys.readouterr().err
    lines = [line.strip() for line in err.splitlines()]
    at = next(i for i, line in enumerate(lines) if "task 'Driver | install packages' failed" in line)
    assert lines[at + 1].startswith("cause: apt knows no installable version")
    assert lines[at + 2].startswith("fix: on gpu-0: `apt-cache policy PACKAGE`")
    assert lines[at + 3].startswith("hint: fix the cause, then `gpuctl bootstrap --phase host")
