"""Acceptance: bad input a new user types gives the right exit code and a one-line error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def _assert_one_line_error(result: Any, code: int, fragment: str) -> None:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: "), result.stderr
    assert fragment in lines[0]
    assert all(line.startswith(("error: ", "hint: ")) for line in lines), result.stderr
    assert len(lines) <= 2, result.stderr


def test_kubeconfig_with_invalid_yaml_is_one_line(cli: Any, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "broken.kubeconfig"
    kubeconfig.write_text("clusters: [oops\n", encoding="utf-8")
    result = cli("verify", "--kubeconfig", kubeconfig)
    _assert_one_line_error(result, 2, str(kubeconfig.name))


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("nodes: [{name: g, gpus: -1}]\n", "nodes[0].gpus: must be >= 0"),
        ("nodes: [{name: g, gpus: 2, host: {driver: broken}}]\n", "nodes[0].host.driver"),
        ("devicePlugin: maybe\nnodes: [{name: g}]\n", "devicePlugin"),
        ('nodes: [{name: g, gpus: "eight"}]\n', "nodes[0].gpus: must be an integer"),
        ("nodes: [{name: g, gpus: 2\n", "invalid YAML"),
        ("nodes: [{name: g, gpus: 2, nvidiaSmi: {exitCode: x}}]\n", "nodes[0].nvidiaSmi.exitCode"),
    ],
)
def test_invalid_scenarios_exit_2(cli: Any, tmp_path: Path, text: str, fragment: str) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(text, encoding="utf-8")
    result = cli("sim", "up", "--scenario", scenario, "--kubeconfig", tmp_path / "k", "--detach")
    _assert_one_line_error(result, 2, fragment)


def test_stopped_sim_exits_3(sim: Any, cli: Any) -> None:
    cluster = sim({"nodes": [{"name": "gpu-0", "gpus": 1}]})
    cluster.server.stop()
    result = cli("verify", "--kubeconfig", cluster.kubeconfig)
    _assert_one_line_error(result, 3, "list nodes")
