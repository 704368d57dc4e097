"""`gpuctl bootstrap --phase host` against real SSH test nodes, from bare to prepared and back to no-op.

The tests of one module share two fresh nodes. What the nodes go through is built by module
fixtures, each on top of the one before: check mode on the bare nodes (`bare_check`), the real run
(`bootstrapped`), the no-op re-run (`rerun`). A test asks for the stage it needs, so any subset
(`-k`) sets up what it reads. The runner itself is also exercised with a tiny playbook
(tests/hosts/playbooks/ping.yml), independent of the shipped roles.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.cli.main import run
from gpuctl.core.bootstrap import run_host_bootstrap
from gpuctl.package_data import default_driver_branch, default_toolkit_version
from tests.hosts.conftest import skip_without_host_requirements
from tests.hosts.nodes import TestNode, down, node_exec, up
from tests.interrupt import with_sigint_default

pytestmark = [pytest.mark.hosts, pytest.mark.slow]
GPUS = 2
PING = Path(__file__).resolve().parent / "playbooks" / "ping.yml"
ROOT = Path(__file__).resolve().parents[2]
SECRET = "not-a-real-sudo-password-5f1c"
DROPIN = "/etc/containerd/conf.d/99-nvidia.toml"


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[TestNode]]:
    skip_without_host_requirements()
    inventory = tmp_path_factory.mktemp("bootstrap-nodes") / "hosts.yml"
    started = up(nodes=2, gpus=GPUS, inventory=inventory)
    yield started
    down(inventory)


@dataclass(frozen=True)
class Run:
    """One `gpuctl bootstrap --phase host --output json` run in a child process."""

    code: int
    report: dict[str, Any]
    stderr: str


def bootstrap_process(*args: str, tmpdir: Path | None = None) -> Run:
    env = {**os.environ, **({"TMPDIR": str(tmpdir), "XDG_STATE_HOME": str(tmpdir)} if tmpdir else {})}
    done = subprocess.run(
        [sys.executable, "-m", "gpuctl", "bootstrap", "--phase", "host", "--output", "json", *args],
        capture_output=True, text=True, env=env, timeout=900, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    return Run(done.returncode, json.loads(done.stdout), done.stderr)


@dataclass(frozen=True)
class BareCheck:
    run: Run
    disk_before: list[str]
    disk_after: list[str]


@pytest.fixture(scope="module")
def bare_check(nodes: list[TestNode]) -> BareCheck:
    """Check mode on the bare nodes, with the disk state around it."""
    before = [disk_state(node) for node in nodes]
    run_ = bootstrap_process("--inventory", str(nodes[0].inventory), "--check")
    return BareCheck(run_, before, [disk_state(node) for node in nodes])


@pytest.fixture(scope="module")
def bootstrapped(
    nodes: list[TestNode],
    bare_check: BareCheck,  # noqa: ARG001 - set up first: only bare nodes show what check mode would do
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Run, Path]:
    """The real run from bare (after the check, which only bare nodes can show), and its TMPDIR."""
    tmpdir = tmp_path_factory.mktemp("bootstrap-tmp")
    return bootstrap_process("--inventory", str(nodes[0].inventory), tmpdir=tmpdir), tmpdir


@pytest.fixture(scope="module")
def rerun(
    nodes: list[TestNode], bootstrapped: tuple[Run, Path], tmp_path_factory: pytest.TempPathFactory
) -> Run:
    """The no-op re-run, its ansible-runner events kept (in a TMPDIR of its own) for plays_by_host."""
    assert bootstrapped[0].code == 0, bootstrapped[0].report
    tmpdir = tmp_path_factory.mktemp("rerun-tmp")
    return bootstrap_process("--inventory", str(nodes[0].inventory), "--keep-artifacts", tmpdir=tmpdir)


ROLE_PLAYS = (
    "Driver | install the NVIDIA driver",
    "Container toolkit | install the NVIDIA container toolkit",
    "Container runtime | configure the nvidia runtime",
)


def plays_by_host(run_: Run) -> dict[str, set[str]]:
    """The plays in which each host ran a task, from the run's kept ansible-runner events."""
    (kept,) = [line.split()[-1] for line in run_.stderr.splitlines() if ") kept in " in line]
    plays: dict[str, set[str]] = {}
    for path in Path(kept).rglob("job_events/*.json"):
        data = json.loads(path.read_text()).get("event_data", {})
        if "host" in data and "play" in data:
            plays.setdefault(data["host"], set()).add(data["play"])
    return plays


def bootstrap(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = run(["bootstrap", "--phase", "host", "--output", "json", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, json.loads(captured.out)


def sh(node: TestNode, command: str) -> str:
    code, out, err = node_exec(node, ["sh", "-c", command])
    assert code == 0, f"{node.name}: {command}: {err}"
    return out


def disk_state(node: TestNode) -> str:
    """What a bootstrap would change: packages, apt sources and keys, runtime and module configs."""
    return sh(
        node,
        "dpkg-query -W -f '${Package} ${Version} ${Status}\\n' | sort; apt-mark showhold;"
        "ls -la /etc/apt/sources.list.d /etc/apt/keyrings /etc/apt/preferences.d /etc/modprobe.d 2>&1;"
        "cat /etc/containerd/config.toml; ls -R /etc/containerd /etc/cdi 2>&1; true",
    )


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where gpuctl's private data dirs go during the test, apart from other runs sharing /tmp."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def private_dirs(folder: Path) -> list[Path]:
    return sorted(folder.glob("gpuctl-bootstrap-*"))


def with_extra_host(source: Path, target: Path) -> Path:
    data = yaml.safe_load(source.read_text())
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data["all"]["children"]["gpu_nodes"]["hosts"]["dead-node"] = {
        "ansible_host": "127.0.0.1",
        "ansible_port": port,
    }
    target.write_text(yaml.safe_dump(data))
    return target


# --- the runner, with a tiny playbook ------------------------------------------------------------


def test_runner_reports_a_failing_host_and_keeps_the_others(nodes: list[TestNode], private_tmp: Path) -> None:
    result = run_host_bootstrap(
        inventory_path=nodes[0].inventory,
        playbook=PING,
        extra_args=("-e", f"gpuctl_test_fail_on={nodes[1].name}"),
    )
    assert result.exit_code == 1
    by_name = {host.name: host for host in result.hosts}
    assert by_name[nodes[0].name].succeeded
    assert by_name[nodes[1].name].failed == 1
    (failed,) = result.failed_tasks
    assert (failed.host, failed.task) == (nodes[1].name, "Ping | fail on request")
    assert failed.message == f"asked to fail on {nodes[1].name}"
    assert private_dirs(private_tmp) == []  # the private data dir is removed


def test_become_password_never_reaches_the_artifacts(nodes: list[TestNode]) -> None:
    result = run_host_bootstrap(
        inventory_path=nodes[0].inventory, playbook=PING, become_password=SECRET, keep_artifacts=True
    )
    assert result.ok, result
    assert result.artifacts_dir is not None
    kept = Path(result.artifacts_dir)
    try:
        assert kept.stat().st_mode & 0o777 == 0o700
        files = [path for path in kept.rglob("*") if path.is_file()]
        assert any(path.name == "stdout" for path in files)
        assert not [path for path in files if SECRET.encode() in path.read_bytes()]
    finally:
        subprocess.run(["rm", "-rf", str(kept)], check=True)


def test_the_run_closes_its_ssh_connections(nodes: list[TestNode]) -> None:
    """ControlPersist would keep each host's connection open for 60 s after the run, its socket gone
    with the run's private dir (no later run could use it): the run closes them itself."""
    result = run_host_bootstrap(inventory_path=nodes[0].inventory, playbook=PING, keep_artifacts=True)
    assert result.ok, result
    assert result.artifacts_dir is not None
    kept = Path(result.artifacts_dir)
    try:
        masters = subprocess.run(["pgrep", "-f", f"ssh: {kept}"], capture_output=True, text=True, check=False)
        assert masters.stdout == ""
    finally:
        subprocess.run(["rm", "-rf", str(kept)], check=True)


def test_ctrl_c_cancels_the_run_cleanly(nodes: list[TestNode]) -> None:
    code = (
        "import sys; from pathlib import Path; from gpuctl.core.bootstrap import run_host_bootstrap;"
        f"r = run_host_bootstrap(inventory_path=Path({str(nodes[0].inventory)!r}),"
        f"playbook=Path({str(PING)!r}),"
        "extra_args=('-e', 'gpuctl_test_sleep=120'),"
        "on_progress=lambda s: print('TASK', *[h.current_task for h in s.snapshot()[1]], flush=True));"
        "print('RESULT', r.status, int(r.exit_code), *[h.succeeded for h in r.hosts], flush=True)"
    )
    argv = with_sigint_default([sys.executable, "-c", code])
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    for line in process.stdout:
        if "Ping | sleep on request" in line:
            break
    time.sleep(1)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    assert "RESULT canceled 130 False False" in out  # a host whose play did not complete is not ok
    leftovers = subprocess.run(
        ["pgrep", "-f", f"ansible-playbook.*{PING}"], capture_output=True, text=True, check=False
    )
    assert leftovers.stdout == ""


# --- the shipped playbooks, from bare nodes ------------------------------------------------------


def test_check_mode_on_bare_nodes_changes_nothing(bare_check: BareCheck) -> None:
    report = bare_check.run.report
    assert report["check"] is True
    assert bare_check.run.code == 0, report
    assert all(host["changed"] > 0 for host in report["hosts"])  # what a real run would change
    assert bare_check.disk_after == bare_check.disk_before


def test_bootstrap_prepares_bare_nodes(nodes: list[TestNode], bootstrapped: tuple[Run, Path]) -> None:
    run_, tmpdir = bootstrapped
    report = run_.report
    assert run_.code == 0, report
    assert report["schema"] == "gpuctl.bootstrap/v1"
    assert report["ok"] is True
    assert [host["name"] for host in report["hosts"]] == [node.name for node in nodes]
    for host in report["hosts"]:
        assert {"name", "ok", "changed", "failed", "unreachable", "skipped"} <= set(host)
        assert host["ok"] is True
        assert host["changed"] > 0
    assert private_dirs(tmpdir) == []


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.usefixtures("bootstrapped")
def test_nodes_are_prepared_on_disk(nodes: list[TestNode], index: int) -> None:
    node = nodes[index]
    held = sh(node, "apt-mark showhold").split()
    assert {"nvidia-container-toolkit", "nvidia-container-toolkit-base"} <= set(held)
    assert {"nvidia-open", "cuda-drivers"} & set(held)
    selections = sh(node, "dpkg --get-selections")
    assert any(line.split() == ["nvidia-container-toolkit", "hold"] for line in selections.splitlines())
    # The pins: the role's default toolkit version, the newest driver of its default branch.
    assert sh(node, "dpkg-query -W -f '${Version}' nvidia-container-toolkit") == default_toolkit_version()
    driver = sh(node, "dpkg-query -W -f '${Version}' nvidia-open")
    assert driver.startswith(f"{default_driver_branch()}."), driver
    assert "blacklist nouveau" in sh(node, "cat /etc/modprobe.d/*nouveau*.conf")
    dump = sh(node, "containerd config dump")
    assert "runtimes.nvidia]" in dump
    assert "runtimes.runc]" in dump
    assert "/usr/bin/nvidia-container-runtime" in dump
    listed = sh(node, "nvidia-smi -L").splitlines()
    assert len(listed) == GPUS
    assert all(line.startswith(f"GPU {i}: NVIDIA H100") for i, line in enumerate(listed))


def test_second_run_changes_nothing(rerun: Run) -> None:
    assert rerun.code == 0, rerun.report
    assert [host["changed"] for host in rerun.report["hosts"]] == [0, 0]


def test_second_run_sets_every_host_aside_after_preflight(nodes: list[TestNode], rerun: Run) -> None:
    """One probe shows nothing to change on either node: no task of the three role plays runs for it."""
    plays = plays_by_host(rerun)
    assert sorted(plays) == [node.name for node in nodes]
    for node in nodes:
        assert plays[node.name].isdisjoint(ROLE_PLAYS), plays[node.name]
        assert "Preflight | probe GPU hosts and set aside those with nothing to change" in plays[node.name]
    # The driver state is still reported for each host (set_stats, read by gpuctl).
    assert all(host["ok"] for host in rerun.report["hosts"]), rerun.report


@pytest.mark.usefixtures("rerun")
def test_a_host_with_something_to_change_runs_the_role_plays_the_other_does_not(
    nodes: list[TestNode], tmp_path: Path
) -> None:
    source = "/etc/apt/sources.list.d/gpuctl-nvidia-container-toolkit.list"
    written = sh(nodes[0], f"cat {source}")
    sh(nodes[0], f"rm {source}")

    repaired = bootstrap_process("--inventory", str(nodes[0].inventory), "--keep-artifacts", tmpdir=tmp_path)

    assert repaired.code == 0, repaired.report
    changed = {host["name"]: host["changed"] for host in repaired.report["hosts"]}
    assert changed[nodes[0].name] > 0, changed
    assert changed[nodes[1].name] == 0, changed
    assert sh(nodes[0], f"cat {source}") == written
    plays = plays_by_host(repaired)
    assert set(ROLE_PLAYS) <= plays[nodes[0].name], plays[nodes[0].name]
    assert plays[nodes[1].name].isdisjoint(ROLE_PLAYS), plays[nodes[1].name]


@pytest.mark.usefixtures("rerun")
def test_a_user_drop_in_changing_runc_is_followed_then_the_host_is_set_aside_again(
    nodes: list[TestNode], tmp_path: Path
) -> None:
    """containerd 1.x: gpuctl's drop-in repeats the CRI section of the configuration without it, which
    the set-aside play reads through the shared probe. A user's own drop-in that turns on runc's
    systemd cgroups must bring the runtime play back (the nvidia runtime follows runc), and the run
    after that must set the host aside again with the user's drop-in in place."""
    user_dropin = "/etc/containerd/conf.d/10-user.toml"
    kept = ("--inventory", str(nodes[0].inventory), "--keep-artifacts")
    nvidia_cgroups = f"grep -h 'SystemdCgroup' {DROPIN}"
    before = sh(nodes[0], nvidia_cgroups)
    assert "true" not in before, before
    sh(nodes[0], "printf 'version = 2\\n"
       "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\\n"
       f"  SystemdCgroup = true\\n' > {user_dropin}")  # fmt: skip
    try:
        followed = bootstrap_process(*kept, tmpdir=tmp_path)
        assert followed.code == 0, followed.report
        assert "Container runtime | configure the nvidia runtime" in plays_by_host(followed)[nodes[0].name]
        assert "false" not in sh(nodes[0], nvidia_cgroups)

        again = bootstrap_process(*kept, tmpdir=tmp_path)
        assert again.code == 0, again.report
        assert [host["changed"] for host in again.report["hosts"]] == [0, 0]
        assert plays_by_host(again)[nodes[0].name].isdisjoint(ROLE_PLAYS)
    finally:
        sh(nodes[0], f"rm -f {user_dropin}")
        restored = bootstrap_process("--inventory", str(nodes[0].inventory))
    assert restored.code == 0, restored.report
    assert sh(nodes[0], nvidia_cgroups) == before


@pytest.mark.usefixtures("rerun")
def test_preflight_on_a_bootstrapped_node_sees_the_installed_driver(
    nodes: list[TestNode], capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["preflight", "--inventory", str(nodes[0].inventory), "--output", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.out + captured.err
    for host in json.loads(captured.out)["hosts"]:
        findings = {finding["id"]: finding for finding in host["findings"]}
        assert findings["driver"]["status"] == "pass", findings["driver"]
        driver = findings["driver"]
        assert driver["message"].startswith(f"driver {default_driver_branch()}."), driver
        assert findings["containerd-config"]["status"] == "pass", findings["containerd-config"]


@pytest.mark.usefixtures("rerun")
def test_unreachable_host_is_reported_and_the_others_are_fine(
    nodes: list[TestNode], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inventory = with_extra_host(nodes[0].inventory, tmp_path / "hosts.yml")
    code, report = bootstrap(capsys, "--inventory", str(inventory))
    assert code == 1
    by_name = {host["name"]: host for host in report["hosts"]}
    assert by_name["dead-node"]["unreachable"] > 0
    assert by_name["dead-node"]["ok"] is False
    assert all(by_name[node.name]["ok"] and by_name[node.name]["changed"] == 0 for node in nodes)
    (dead,) = [task for task in report["failed_tasks"] if task["host"] == "dead-node"]
    assert dead["unreachable"] is True
    assert "gpuctl preflight" in dead["hint"]


@pytest.mark.usefixtures("bootstrapped")
def test_a_failing_task_is_surfaced(nodes: list[TestNode], capsys: pytest.CaptureFixture[str]) -> None:
    inventory = str(nodes[0].inventory)
    args = ("--inventory", inventory, "--limit", nodes[0].name, "--", "-e", "gpuctl_toolkit_version=9.9.9-1")
    code, report = bootstrap(capsys, *args)
    assert code == 1
    assert report["ok"] is False
    (failed,) = report["failed_tasks"]
    assert failed["host"] == nodes[0].name
    assert failed["task"]
    assert "9.9.9-1" in failed["message"]
    assert f"--limit {nodes[0].name}" in failed["hint"]
    # apt's words run through the diagnosis table: the cause and the fix for that host.
    (host,) = [host for host in report["hosts"] if host["name"] == nodes[0].name]
    diagnosis = host["diagnosis"]
    assert (diagnosis["id"], diagnosis["task"]) == ("host.apt-no-candidate", failed["task"])
    assert "nvidia-container-toolkit=9.9.9-1" in diagnosis["evidence"]
    assert f"on {nodes[0].name}: `apt-cache policy PACKAGE`" in diagnosis["hint"]
    # The table names the task and the message too, then the cause and the fix.
    assert run(["bootstrap", "--phase", "host", *args]) == 1
    err = capsys.readouterr().err  # errors go to stderr, the summary table to stdout
    assert f"task {failed['task']!r} failed" in err
    assert f"  cause: {diagnosis['message']}" in err
    assert f"  fix: {diagnosis['hint']}" in err
