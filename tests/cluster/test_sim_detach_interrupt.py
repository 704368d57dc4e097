"""`gpuctl sim up --detach` stopped by Ctrl-C or SIGTERM while its server starts: exit 130, and
the server it started (in a session of its own, so the terminal's Ctrl-C never reaches it) is
stopped, with no kubeconfig and no record left behind. Before, the server went on serving in the
background and wrote a kubeconfig that the interrupted command never mentioned."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import yaml

from tests.interrupt import interrupt_when

# Enough nodes that the server takes a while to start, so the signal lands while it does.
SCENARIO = {"nodes": [{"name": "gpu-{i}", "count": 2000, "gpus": 8}]}


def _server_pid(kubeconfig: Path) -> int | None:
    """The pid of the `sim up` server process serving `kubeconfig`, None before it exists."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(kubeconfig).encode() in argv and b"--detach" not in argv and b"up" in argv:
            return int(entry.name)
    return None


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="finds the server through /proc")
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_detach_leaves_no_server_and_no_kubeconfig(tmp_path: Path, sent: signal.Signals) -> None:
    scenario = tmp_path / "big.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    kubeconfig = tmp_path / "sim.kubeconfig"
    found: list[int] = []

    def server_started() -> bool:
        pid = _server_pid(kubeconfig)
        found.extend([pid] if pid is not None else [])
        return bool(found)

    code, stderr = interrupt_when(
        ["sim", "up", "--scenario", str(scenario), "--kubeconfig", str(kubeconfig), "--detach"],
        server_started,
        [sent],
    )
    assert not Path(f"/proc/{found[0]}").exists() or _zombie(found[0]), "the server is still running"
    assert code == 130, stderr
    assert "interrupted: the simulated cluster was not started; no kubeconfig was written" in stderr
    assert not kubeconfig.exists()
    assert not (tmp_path / "sim.kubeconfig.sim.json").exists()
    assert _server_pid(kubeconfig) is None


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except OSError:
        return True
