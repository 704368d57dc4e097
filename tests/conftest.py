"""Shared fixtures: `sim` (a simulated GPU cluster over real HTTP) and `cli` (gpuctl in-process);
every test gets its own HOME; under CI=true a skip not allowed below fails the test."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gpuctl.sim.scenario import parse_scenario
from gpuctl.sim.server.http_server import SimServer
from gpuctl.sim.server.tls import client_context

# The only skips CI accepts: the opt-in tier of a real cluster, when none is given.
ALLOWED_CI_SKIPS = ("set GPUCTL_E2E_KUBECONFIG to run against a real cluster",)


def running_in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport() -> Generator[None, Any, None]:
    """Under CI=true a skip whose reason is not in ALLOWED_CI_SKIPS becomes a failure: a test that
    silently does not run in CI proves nothing."""
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and running_in_ci()) or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    if reason not in ALLOWED_CI_SKIPS:
        report.outcome = "failed"
        report.longrepr = f"skipped in CI (CI=true), which only allows {ALLOWED_CI_SKIPS}: {reason}"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say in the log why each test that did not run was skipped, and that CI allowed it."""
    skipped = terminalreporter.stats.get("skipped", [])
    if skipped:
        terminalreporter.section("skips")
        for report in skipped:
            allowed = " (allowed in CI)" if running_in_ci() else ""
            terminalreporter.write_line(f"{report.nodeid}: {_skip_reason(report)}{allowed}")


def _skip_reason(report: pytest.TestReport) -> str:
    reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return reason.removeprefix("Skipped: ")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME per test, and no KUBECONFIG: nothing of the machine's user (~/.ssh/config,
    known_hosts, ~/.kube/config, ~/.ansible) leaks into a test; a test wanting one writes it here."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    return home


# The labels every verification pod carries (the contract of `gpuctl verify`).
VERIFICATION_PODS = "app.kubernetes.io/managed-by=gpuctl,app.kubernetes.io/component=verify"


@dataclass
class SimCluster:
    """A started simulated cluster: its server (request counters), kubeconfig and scenario."""

    server: SimServer
    kubeconfig: Path

    @property
    def url(self) -> str:
        return self.server.url

    def open(
        self,
        path: str,
        *,
        data: bytes | None = None,
        method: str | None = None,
        timeout: float = 10,
        **headers: str,
    ) -> Any:
        """urlopen a raw request to this cluster, over TLS trusting its certificate and carrying
        its bearer token, as kubectl would."""
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={**self.server.auth_headers, **headers}
        )
        context = client_context(self.server.certificate.certificate_pem)
        return urllib.request.urlopen(request, timeout=timeout, context=context)

    def api_client(self) -> Any:
        """A real kubernetes.client.ApiClient for this cluster, loaded the way gpuctl loads it."""
        from gpuctl.kube.client import load_api_client

        return load_api_client(self.kubeconfig)

    def verification_pods(self) -> list[Any]:
        """Every verification pod gpuctl left in the cluster, in any namespace."""
        from kubernetes.client import CoreV1Api

        pods = CoreV1Api(self.api_client()).list_pod_for_all_namespaces(label_selector=VERIFICATION_PODS)
        return list(pods.items)

    def allocatable_gpus(self) -> dict[str, int]:
        """nvidia.com/gpu allocatable per node, as the scheduler sees it now."""
        from kubernetes.client import CoreV1Api

        nodes = CoreV1Api(self.api_client()).list_node().items
        return {
            node.metadata.name: int((node.status.allocatable or {}).get("nvidia.com/gpu", "0"))
            for node in nodes
        }


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[Callable[..., SimCluster]]:
    """Factory: `sim({"nodes": [...]})` starts a cluster from a scenario dict; stopped at teardown."""
    started: list[SimServer] = []

    def start(scenario: dict[str, Any] | None = None, name: str = "sim") -> SimCluster:
        server = SimServer(parse_scenario(scenario or {}, "scenario")).start()
        started.append(server)
        kubeconfig = server.write_kubeconfig(tmp_path / f"{name}-{len(started)}.kubeconfig")
        return SimCluster(server=server, kubeconfig=kubeconfig)

    yield start
    for server in started:
        server.stop()


@dataclass(frozen=True)
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """`cli("verify", "--kubeconfig", path)` or `cli([...])`: run gpuctl in-process, capture output."""
    from gpuctl.cli.main import run

    def invoke(*argv: str | Path | list[str | Path]) -> CliResult:
        flat: list[str] = []
        for item in argv:
            flat += [str(part) for part in item] if isinstance(item, list) else [str(item)]
        capsys.readouterr()  # drop anything printed before this call
        code = run(flat)
        captured = capsys.readouterr()
        return CliResult(exit_code=code, stdout=captured.out, stderr=captured.err)

    return invoke
