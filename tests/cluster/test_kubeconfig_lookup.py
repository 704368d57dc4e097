"""Which cluster gpuctl talks to without --kubeconfig, like kubectl: $KUBECONFIG (a path list),
then ~/.kube/config, then the pod's service account (in-cluster); and --debug / exit 70."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster._tls_proxy import TlsProxy, self_signed_certificate

SCENARIO = {"devicePlugin": "installed", "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 8}]}
# Run as root (CI does): a private mount namespace shows the service account where in-cluster
# config reads it, and nowhere else.
IN_CLUSTER = """set -e
mount -t tmpfs tmpfs /run
mkdir -p /run/secrets/kubernetes.io/serviceaccount
cp "$GPUCTL_TEST_CA" /run/secrets/kubernetes.io/serviceaccount/ca.crt
printf '%s' "$GPUCTL_TEST_TOKEN" > /run/secrets/kubernetes.io/serviceaccount/token
exec "$@"
"""
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="in-cluster config needs root and unshare (a private /run/secrets)",
)


def gpu_nodes(result: Any) -> list[str]:
    assert result.exit_code == 0, result.output
    return [node["name"] for node in json.loads(result.stdout)["nodes"]]


def test_kubeconfig_variable_is_a_path_list(sim: Any, cli: Any, tmp_path: Path, monkeypatch: Any) -> None:
    cluster = sim(SCENARIO)
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "absent"), str(cluster.kubeconfig)]))
    assert gpu_nodes(cli("status", "-o", "json")) == ["gpu-0", "gpu-1"]


def test_home_kube_config_is_the_default(sim: Any, cli: Any, isolated_home: Path) -> None:
    cluster = sim(SCENARIO)
    (isolated_home / ".kube").mkdir()
    shutil.copy(cluster.kubeconfig, isolated_home / ".kube" / "config")
    assert gpu_nodes(cli("status", "-o", "json")) == ["gpu-0", "gpu-1"]


def test_a_token_file_written_with_a_newline_is_read_as_client_go_reads_it(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    import yaml

    cluster = sim(SCENARIO)
    kubeconfig = yaml.safe_load(Path(cluster.kubeconfig).read_text(encoding="utf-8"))
    token_file = tmp_path / "token"
    token_file.write_text(kubeconfig["users"][0]["user"].pop("token") + "\n", encoding="utf-8")
    kubeconfig["users"][0]["user"]["tokenFile"] = str(token_file)
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig), encoding="utf-8")
    assert gpu_nodes(cli("status", "-o", "json", "--kubeconfig", str(path))) == ["gpu-0", "gpu-1"]


def test_no_kubeconfig_anywhere_names_where_it_looked(cli: Any, isolated_home: Path) -> None:
    result = cli("status")
    assert result.exit_code == 2, result.output
    assert f"no kubeconfig found (looked at {isolated_home / '.kube' / 'config'})" in result.stderr
    assert "hint: pass --kubeconfig, set KUBECONFIG" in result.stderr


@pytest.fixture
def tls_cluster(sim: Any, tmp_path: Path) -> Iterator[tuple[TlsProxy, Path]]:
    cluster = sim(SCENARIO)
    cert, key = self_signed_certificate(tmp_path)
    proxy = TlsProxy(cluster.server, cert, key)
    yield proxy, cert
    proxy.close()


def in_cluster_gpuctl(
    proxy: TlsProxy, ca: Path, isolated_home: Path, *args: str, token: str | None = None
) -> Any:
    env = {key: value for key, value in os.environ.items() if key != "KUBECONFIG"}
    env |= {
        "HOME": str(isolated_home),
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": str(proxy.port),
        "GPUCTL_TEST_CA": str(ca),
        "GPUCTL_TEST_TOKEN": proxy.token if token is None else token,
    }
    return subprocess.run(
        ["unshare", "--mount", "sh", "-c", IN_CLUSTER, "in-cluster", sys.executable, "-m", "gpuctl", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@needs_root
def test_in_cluster_service_account_is_used_without_a_kubeconfig(
    tls_cluster: tuple[TlsProxy, Path], isolated_home: Path
) -> None:
    proxy, ca = tls_cluster
    done = in_cluster_gpuctl(proxy, ca, isolated_home, "status", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert [node["name"] for node in json.loads(done.stdout)["nodes"]] == ["gpu-0", "gpu-1"]


@needs_root
def test_an_in_cluster_token_written_with_a_newline_is_read_as_client_go_reads_it(
    tls_cluster: tuple[TlsProxy, Path], isolated_home: Path
) -> None:
    proxy, ca = tls_cluster
    done = in_cluster_gpuctl(proxy, ca, isolated_home, "status", "-o", "json", token=proxy.token + "\n")
    assert done.returncode == 0, done.stderr
    assert [node["name"] for node in json.loads(done.stdout)["nodes"]] == ["gpu-0", "gpu-1"]


@needs_root
def test_in_cluster_with_a_broken_service_account_is_a_config_error(
    tls_cluster: tuple[TlsProxy, Path], isolated_home: Path, tmp_path: Path
) -> None:
    proxy, _ = tls_cluster
    empty_ca = tmp_path / "empty.crt"
    empty_ca.write_text("", encoding="utf-8")
    done = in_cluster_gpuctl(proxy, empty_ca, isolated_home, "status")
    assert done.returncode == 2, done.stderr
    assert "error: in-cluster config (/var/run/secrets/kubernetes.io/serviceaccount)" in done.stderr
    assert "Traceback" not in done.stderr
