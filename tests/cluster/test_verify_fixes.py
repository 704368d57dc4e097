"""Acceptance-test fixes: cleanup without deletecollection, request timeouts, bad kubeconfigs,
NotReady nodes, pods still Pending at --timeout."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuctl.sim.server.http_server import kubeconfig_text
from tests.polling import wait_until


def scenario(*nodes: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "podStartSeconds": 0.05,
        "devicePlugin": "installed",
        "nodes": list(nodes) or [{"name": "gpu-{i}", "count": 2, "gpus": 8}],
        **top,
    }


def wait_for_gpus(cluster: Any, names: list[str]) -> None:
    def advertised() -> bool:
        allocatable = cluster.allocatable_gpus()
        return all(allocatable.get(name, 0) > 0 for name in names)

    wait_until(advertised, f"{names} to advertise GPUs")


def checks_of(stdout: str, node: str) -> dict[str, dict[str, Any]]:
    item = next(n for n in json.loads(stdout)["nodes"] if n["name"] == node)
    return {check["id"]: check for check in item["checks"]}


def one_line_error(result: Any, code: int) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return str(result.stderr)


# --- 1. cleanup where RBAC allows delete but not deletecollection -------------------------------


def test_cleanup_falls_back_to_deleting_pods_one_by_one(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(forbidden=["deletecollection pods"]))
    wait_for_gpus(cluster, ["gpu-0", "gpu-1"])
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig)])
    assert result.exit_code == 0, result.output
    assert cluster.verification_pods() == []


def test_cleanup_forbidden_altogether_names_the_leftovers_and_the_command(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(forbidden=["deletecollection pods", "delete pods"]))
    wait_for_gpus(cluster, ["gpu-0", "gpu-1"])
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "--namespace", "gpu-check"])
    stderr = one_line_error(result, 3)
    assert "2 verification pod(s) left in namespace gpu-check" in stderr
    assert "kubectl -n gpu-check delete pods -l " in stderr
    assert "gpuctl.io/verify-run=" in stderr
    assert len(cluster.verification_pods()) == 2


# --- 2. an API server that accepts connections but never answers -------------------------------


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts every connection and never writes a byte."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    stop.set()
    thread.join(timeout=5)
    for connection in held:
        connection.close()
    listener.close()


@pytest.fixture
def silent_kubeconfig(silent_server: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kubeconfig pointing at the silent server; requests time out after 0.5 s."""
    monkeypatch.setenv("GPUCTL_REQUEST_TIMEOUT", "0.5")
    kubeconfig = tmp_path / "silent.kubeconfig"
    kubeconfig.write_text(kubeconfig_text(f"http://127.0.0.1:{silent_server}", "token"), encoding="utf-8")
    return kubeconfig


@pytest.mark.parametrize(
    ("command", "verb_resource"),
    [
        (["verify"], "list nodes"),
        (["status"], "nodes"),
        (["taint-gpu-nodes", "--dry-run"], "nodes"),
    ],
)
def test_silent_api_server_times_out_with_exit_3(
    silent_kubeconfig: Path, cli: Any, command: list[str], verb_resource: str
) -> None:
    result = cli([*command, "--kubeconfig", str(silent_kubeconfig)])
    stderr = one_line_error(result, 3)
    assert "the API server did not answer" in stderr
    assert verb_resource in stderr
    assert "within 0.5 s" in stderr
    assert "GPUCTL_REQUEST_TIMEOUT" in stderr


def test_bad_request_timeout_setting_exits_2(sim: Any, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = sim(scenario())
    monkeypatch.setenv("GPUCTL_REQUEST_TIMEOUT", "soon")
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig)])
    assert "GPUCTL_REQUEST_TIMEOUT" in one_line_error(result, 2)


# --- 3. kubeconfig that is YAML but not a mapping; the RBAC hint ---------------------------------


@pytest.mark.parametrize("text", ["just a string\n", "- a\n- list\n"])
def test_kubeconfig_not_a_mapping_exits_2(cli: Any, tmp_path: Path, text: str) -> None:
    kubeconfig = tmp_path / "odd.kubeconfig"
    kubeconfig.write_text(text, encoding="utf-8")
    result = cli(["verify", "--kubeconfig", str(kubeconfig)])
    stderr = one_line_error(result, 2)
    assert f"{kubeconfig}: invalid kubeconfig: not a YAML mapping" in stderr
    assert "item assignment" not in stderr


def test_forbidden_hint_names_gpuctl_render_rbac(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(forbidden=["list nodes"]))
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig)])
    stderr = one_line_error(result, 3)
    assert "gpuctl render --rbac" in stderr
    assert "docs/rbac.md" not in stderr


# --- 4. NotReady node: dependent checks skip and point at node.ready ----------------------------


def test_not_ready_node_skips_plugin_and_capacity_checks(sim: Any, cli: Any) -> None:
    cluster = sim(scenario({"name": "gpu-0", "gpus": 8}, {"name": "gpu-nr", "gpus": 8, "ready": False}))
    wait_for_gpus(cluster, ["gpu-0"])
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    assert result.exit_code == 1, result.output
    checks = checks_of(result.stdout, "gpu-nr")
    assert checks["node.ready"]["status"] == "fail"
    for check_id in ("gpu.capacity", "device-plugin.pod"):
        assert checks[check_id]["status"] == "skip", checks[check_id]
        assert "node.ready" in checks[check_id]["message"]
    failing = [check_id for check_id, check in checks.items() if check["status"] == "fail"]
    assert failing == ["node.ready"]
    table = cli(["verify", "--kubeconfig", str(cluster.kubeconfig)])
    assert "gpuctl render | kubectl apply" not in table.stdout
    assert "nodeSelector/tolerations" not in table.stdout


# --- 5. a pod still Pending when --timeout runs out ---------------------------------------------


def test_pending_pod_at_timeout_is_reported_once_with_a_useful_hint(sim: Any, cli: Any) -> None:
    # Held where the test needs it: bound to gpu-0, its container never starts.
    cluster = sim(scenario({"name": "gpu-0", "gpus": 8}, podStartSeconds=3600))
    wait_for_gpus(cluster, ["gpu-0"])
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "1"])
    assert result.exit_code == 1, result.output
    checks = checks_of(result.stdout, "gpu-0")
    assert checks["pod.scheduled"]["status"] == "pass"  # bound to gpu-0, container not started
    image = checks["pod.image"]
    assert image["status"] == "fail"
    assert image["message"].count("Pending") == 1
    assert "--timeout" in image["hint"]
    assert "describe pod" in image["hint"]
    assert "events" in image["hint"]
    assert cluster.verification_pods() == []
