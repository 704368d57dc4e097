"""Exit codes and streams: errors on stderr with the right code, a closed pipe is no error, and a
web server that is not a Kubernetes API is exit 3, not an internal error."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


class _HtmlNotFound(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html><body><h1>404 Not Found</h1></body></html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web_server_kubeconfig(tmp_path: Path) -> Iterator[Path]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HtmlNotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{server.server_port}'}}}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: x}}]\n",
        encoding="utf-8",
    )
    yield kubeconfig
    server.shutdown()


@pytest.mark.parametrize("command", ["status", "verify", "taint-gpu-nodes"])
def test_a_web_server_that_is_not_kubernetes_is_exit_3(
    web_server_kubeconfig: Path, cli: Callable[..., Any], command: str
) -> None:
    result = cli(command, "--kubeconfig", web_server_kubeconfig)
    assert result.exit_code == 3, result.output
    assert result.stderr.startswith("error: not a Kubernetes API server: list nodes got HTTP 404")
    assert "<html>" not in result.output
    assert "internal error" not in result.output


def test_a_closed_pipe_is_not_an_error(sim: Callable[..., Any]) -> None:
    cluster = sim({"nodes": [{"name": "gpu-{i}", "count": 40, "gpus": 8}]})
    reader, writer = os.pipe()
    os.close(reader)  # like `| head -1` that already left
    completed = subprocess.run(
        [sys.executable, "-m", "gpuctl", "status", "--kubeconfig", str(cluster.kubeconfig)],
        stdout=writer, stderr=subprocess.PIPE, text=True, timeout=60, check=False, cwd=REPO,
    )  # fmt: skip
    os.close(writer)
    assert completed.returncode == 0
    assert completed.stderr == ""


def test_taint_selector_matching_nothing_says_so_on_stderr(
    sim: Callable[..., Any], cli: Callable[..., Any]
) -> None:
    cluster = sim({"nodes": [{"name": "gpu-0", "gpus": 8}]})
    result = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "-l", "pool=none")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: no node matched")
    assert "no node matched" not in result.stdout


def test_extra_ansible_arguments_it_rejects_are_exit_2_with_its_message(tmp_path: Path) -> None:
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        "all:\n  children:\n    gpu_nodes:\n      hosts:\n        gpu-a: {ansible_host: 127.0.0.9}\n"
    )
    completed = subprocess.run(
        [sys.executable, "-m", "gpuctl", "bootstrap", "--phase", "host", "-i", inventory, "--", "--bogus"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "ansible-playbook: error: unrecognized arguments: --bogus" in completed.stderr
    assert "error:" not in completed.stdout
