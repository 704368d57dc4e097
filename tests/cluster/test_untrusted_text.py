"""A node whose nvidia-smi prints rich markup and terminal escapes, whose GPU product label and
taint carry them too: every output format shows them as literal text. On a colour terminal the
only escapes gpuctl writes are its own colours; piped, none; JSON and YAML hold the original
strings; JUnit stays well-formed XML."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.cli.main import run
from gpuctl.report.safe_text import visible
from tests.polling import wait_until
from tests.untrusted import (
    CLEAR,
    CLIPBOARD,
    CSI,
    LINK,
    MARKUP,
    SGR,
    Terminal,
    colour_terminal,
    printing_to,
    shown_as_text,
)

# What the node's nvidia-smi prints: verify quotes its first line; the carriage return after it
# would have rewritten the line on a terminal.
SMI_LINE = f"{MARKUP} {CLEAR}{CLIPBOARD}{LINK} {CSI} smi"
PRODUCT = f"{MARKUP}{LINK}"
TAINT_VALUE = f"[red]v[/red]{CLIPBOARD}\rFAKE"
TAINT = f"nvidia.com/gpu={TAINT_VALUE}:NoSchedule"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from gpuctl.kube.client import load_api_client
    from gpuctl.sim.scenario import parse_scenario
    from gpuctl.sim.server.http_server import SimServer

    scenario = {
        "podStartSeconds": 0.05,
        "devicePlugin": "installed",
        "nodes": [
            {
                "name": "gpu-0",
                "gpus": 2,
                "gpuProduct": PRODUCT,
                "taints": [{"key": "nvidia.com/gpu", "value": TAINT_VALUE, "effect": "NoSchedule"}],
                "nvidiaSmi": {"stdout": f"{SMI_LINE}\rFAKE PASS\n", "exitCode": 1},
            }
        ],
    }
    server = SimServer(parse_scenario(scenario, "scenario")).start()
    kubeconfig = server.write_kubeconfig(tmp_path_factory.mktemp("untrusted") / "kubeconfig")

    def advertised() -> bool:
        from kubernetes.client import CoreV1Api

        node = CoreV1Api(load_api_client(kubeconfig)).read_node("gpu-0")
        allocatable = (node.status and node.status.allocatable) or {}
        return int(allocatable.get("nvidia.com/gpu", "0")) == 2

    wait_until(advertised, "the node to advertise its GPUs")
    yield kubeconfig
    server.stop()


def on_terminal(monkeypatch: pytest.MonkeyPatch, *argv: str | Path) -> tuple[int, str, str]:
    """gpuctl run with stdout on a colour terminal (stderr too when `argv` fails before any
    progress: verify's live progress on a terminal stderr moves the cursor, on purpose)."""
    colour_terminal(monkeypatch)
    stdout, stderr = Terminal(), io.StringIO()
    with printing_to(stdout, stderr):
        code = run([str(arg) for arg in argv])
    assert SGR.search(stdout.getvalue() + stderr.getvalue()), "no colour: not printed as to a terminal"
    return code, shown_as_text(stdout.getvalue()), shown_as_text(stderr.getvalue())


@pytest.mark.parametrize("output", ["table", "wide"])
def test_verify_tables_on_a_terminal(cluster: Path, monkeypatch: pytest.MonkeyPatch, output: str) -> None:
    code, stdout, _ = on_terminal(monkeypatch, "verify", "--kubeconfig", cluster, "-o", output)
    assert code == 1
    assert visible(SMI_LINE) in stdout
    assert MARKUP in stdout
    assert "FAKE PASS" not in stdout  # verify quotes the first line; the CR ended it


@pytest.mark.parametrize("output", ["table", "wide", "json", "yaml", "junit"])
def test_verify_piped_in_every_format(
    cluster: Path, cli: Any, monkeypatch: pytest.MonkeyPatch, output: str
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # no wrapping inside the quoted line
    result = cli("verify", "--kubeconfig", cluster, "-o", output)
    assert result.exit_code == 1, result.output
    shown_as_text(result.stdout)
    shown_as_text(result.stderr)
    if output == "json":
        assert smi_check(json.loads(result.stdout))["message"].endswith(f": {SMI_LINE}")
    elif output == "yaml":
        assert smi_check(yaml.safe_load(result.stdout))["message"].endswith(f": {SMI_LINE}")
    elif output == "junit":
        root = ET.fromstring(result.stdout)
        failure = root.find(".//testcase[@name='nvidia-smi.run']/failure")
        assert failure is not None
        assert failure.get("message", "").endswith(visible(SMI_LINE))
    else:
        assert visible(SMI_LINE) in result.stdout


def smi_check(document: dict[str, Any]) -> dict[str, Any]:
    """The node's nvidia-smi check, as JSON or YAML hands it to tools: the node's own string."""
    (node,) = document["nodes"]
    found: list[dict[str, Any]] = [check for check in node["checks"] if check["id"] == "nvidia-smi.run"]
    (check,) = found
    return check


def test_status_shows_the_label_and_taint_as_text(
    cluster: Path, monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    _, stdout, _ = on_terminal(monkeypatch, "status", "--kubeconfig", cluster, "-o", "wide")
    assert visible(TAINT) in stdout  # the carriage return shown as \r
    assert visible(PRODUCT) in stdout
    piped = cli("status", "--kubeconfig", cluster, "-o", "yaml")
    (node,) = yaml.safe_load(shown_as_text(piped.stdout))["nodes"]
    assert (node["product"], node["taints"]) == (PRODUCT, [TAINT])


def test_taint_shows_the_taint_it_replaces_as_text(cluster: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, stdout, _ = on_terminal(monkeypatch, "taint-gpu-nodes", "--dry-run", "--kubeconfig", cluster)
    assert code == 0
    assert visible(TAINT) in stdout


def test_explain_shows_pasted_escapes_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    line = f"{MARKUP} {LINK} nvml error: driver/library version mismatch {CLIPBOARD}{CSI}"
    pasted = tmp_path / "pasted.log"
    pasted.write_text(f"{line}\rFAKE\n", encoding="utf-8")
    _, stdout, _ = on_terminal(monkeypatch, "explain", pasted)
    assert f"line:  {visible(line)}" in stdout
    document = json.loads(cli("explain", pasted, "-o", "json").stdout)
    assert document["matches"][0]["line"] == line


def test_errors_show_file_contents_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kubeconfig whose context name holds escapes: the error quotes it, as text."""
    context = f"{MARKUP}{CLEAR}{LINK}"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {"apiVersion": "v1", "kind": "Config", "current-context": context, "contexts": [], "clusters": []}
        )
    )
    colour_terminal(monkeypatch)
    screen = Terminal()
    with printing_to(screen):
        code = run(["status", "--kubeconfig", str(kubeconfig)])
    assert code == 2
    stderr = shown_as_text(screen.getvalue())
    assert stderr.startswith("error: ")
    # quoted as Python quotes a name (repr), which already writes ESC as \x1b: shown, not sent
    assert MARKUP in stderr
    assert "\\x1b[2J" in stderr
