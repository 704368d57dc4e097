"""Exit 70 is a bug's exit: one line and a hint without --debug, the traceback with it."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuctl.sim.server.http_server import kubeconfig_text


class _MalformedNodeList(http.server.BaseHTTPRequestHandler):
    """An API server whose node has a taint that is a number: gpuctl checks the shape of a list and
    of its items' metadata (exit 3), not every field below, so this one is a bug."""

    def do_GET(self) -> None:
        node = {"metadata": {"name": "gpu-0"}, "spec": {"taints": [7]}}
        body = json.dumps({"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": [node]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def malformed_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # --debug sets GPUCTL_DEBUG for the process; monkeypatch puts it back as it was.
    monkeypatch.setenv("GPUCTL_DEBUG", "0")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _MalformedNodeList)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = tmp_path / "malformed.kubeconfig"
    url = f"http://127.0.0.1:{server.server_address[1]}"
    kubeconfig.write_text(kubeconfig_text(url, "token"), encoding="utf-8")
    yield kubeconfig
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("command", ["status", "verify"])
def test_a_bug_exits_70_with_one_line_and_a_hint(malformed_kubeconfig: Path, cli: Any, command: str) -> None:
    result = cli(command, "--kubeconfig", malformed_kubeconfig)
    assert result.exit_code == 70, result.output
    assert result.stderr.splitlines() == [
        "error: internal error: AttributeError: 'int' object has no attribute 'get'",
        "hint: rerun with --debug and report the traceback",
    ]


def test_debug_shows_the_traceback_of_a_bug(malformed_kubeconfig: Path, cli: Any) -> None:
    result = cli("--debug", "status", "--kubeconfig", malformed_kubeconfig)
    assert result.exit_code == 70, result.output
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert result.stderr.endswith("hint: rerun with --debug and report the traceback\n")


def test_debug_shows_the_traceback_of_a_user_error_too(cli: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("GPUCTL_DEBUG", "0")
    result = cli("--debug", "status", "--kubeconfig", tmp_path / "absent")
    assert result.exit_code == 2, result.output
    assert "Traceback (most recent call last):" in result.stderr
    assert "ConfigError" in result.stderr
    assert f"error: --kubeconfig {tmp_path / 'absent'}: file not found" in result.stderr
