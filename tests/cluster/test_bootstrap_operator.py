"""`gpuctl bootstrap --phase cluster --stack operator` against the simulated cluster with a real
helm (v4) and the stand-in gpu-operator chart (tests/charts): the sim plays the GPU Operator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.test_bootstrap_cluster import gpu_nodes, scenario, writes
from tests.helm import HELM, OPERATOR_CHART, Helm, needs_helm

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CHART = OPERATOR_CHART
NAMESPACE = "gpu-operator"


def operator_bootstrap(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any], Any]:
    result = cli(
        [
            "bootstrap", "--phase", "cluster", "--stack", "operator", "--kubeconfig", str(cluster.kubeconfig),
            "--helm", HELM, "--chart", str(CHART), "-o", "json", "--timeout", "30", *args,
        ]
    )  # fmt: skip
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else {}, result


def test_without_helm_on_path_exit_2_with_the_hint_and_no_write(
    sim: Any, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    monkeypatch.setenv("PATH", "/nonexistent")
    result = cli(
        ["bootstrap", "--phase", "cluster", "--stack", "operator", "--kubeconfig", str(cluster.kubeconfig)]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == "error: helm not found on PATH"
    assert "install Helm 3 or 4" in result.stderr
    assert "--stack device-plugin" in result.stderr
    assert cluster.server.requests_by_verb() == {}  # not even a read before the helm check


@needs_helm
def test_check_prints_the_exact_helm_command_and_writes_nothing(sim: Any, cli: Any, tmp_path: Path) -> None:
    cluster = sim(scenario(gpu_nodes(count=2)))
    code, data, result = operator_bootstrap(cli, cluster, "--check")
    assert code == 0, result.output
    helm = data["cluster"]["helm"]
    assert helm["action"] == "would-install"
    assert helm["chart"] == "gpu-operator-v26.7.2"
    assert helm["command"].startswith(
        f"{HELM} --kubeconfig {cluster.kubeconfig} upgrade --install gpu-operator "
    )
    assert (
        f" {CHART} --namespace gpu-operator --create-namespace --values - --reset-values" in helm["command"]
    )
    assert helm["values"]["driver"] == {"enabled": False}  # the host layer installs it
    assert helm["values"]["daemonsets"]["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert data["cluster"]["stack"] == "operator"
    counts = cluster.server.requests_by_verb()
    assert (counts.get("create", 0), counts.get("update", 0), counts.get("delete", 0)) == (0, 0, 0)
    table = cli(
        [
            "bootstrap", "--phase", "cluster", "--stack", "operator", "--check", "--no-taint",
            "--kubeconfig", str(cluster.kubeconfig), "--helm", HELM, "--chart", str(CHART),
        ]
    )  # fmt: skip
    assert Helm(cluster, tmp_path / "helm").json("list", "-A") == []  # nothing installed
    assert "would-install gpu-operator-v26.7.2" in table.stdout
    assert "+# chart: gpu-operator-v26.7.2" in table.stdout  # the diff: no release yet → the values
    assert "+  enabled: false" in table.stdout
    assert "upgrade --install gpu-operator" in table.stdout


@needs_helm
def test_the_release_is_installed_with_gpuctls_values(sim: Any, cli: Any, tmp_path: Path) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    operator_bootstrap(cli, cluster, "--timeout", "1", "--no-operator-driver", "--distribution", "rke2")
    helm = Helm(cluster, tmp_path / "helm")
    releases = helm.json("list", "-n", NAMESPACE)
    assert [(r["name"], r["chart"], r["status"]) for r in releases] == [
        ("gpu-operator", "gpu-operator-v26.7.2", "deployed")
    ]
    values = helm.json("get", "values", "gpu-operator", "-n", NAMESPACE)
    assert values["driver"] == {"enabled": False}
    assert {"name": "CONTAINERD_SOCKET", "value": "/run/k3s/containerd/containerd.sock"} in values["toolkit"][
        "env"
    ]


@needs_helm
def test_the_operator_validates_every_gpu_node_and_a_second_run_changes_nothing(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(gpu_nodes(count=2)))
    code, first, result = operator_bootstrap(cli, cluster)
    assert code == 0, result.output
    assert first["cluster"]["helm"]["action"] == "installed"
    nodes = first["cluster"]["nodes"]
    assert [(n["name"], n["allocatable"], n["operator_validator"], n["ready"]) for n in nodes] == [
        ("gpu-0", 4, "ready", True),
        ("gpu-1", 4, "ready", True),
    ]
    assert first["cluster"]["cluster_policies"] == {"cluster-policy": "ready"}

    before = writes(cluster)
    code, second, result = operator_bootstrap(cli, cluster)
    assert code == 0, result.output
    assert second["cluster"]["helm"]["action"] == "unchanged"
    assert second["cluster"]["writes"] == 0
    assert writes(cluster) == before  # helm skipped, no label, taint or apply sent


@needs_helm
def test_a_pre_installed_driver_against_the_operators_driver_container_is_diagnosed(
    sim: Any, cli: Any
) -> None:
    cluster = sim(scenario(gpu_nodes(count=1, host={"driver": "installed", "toolkit": "configured"})))
    code, data, result = operator_bootstrap(cli, cluster, "--operator-driver", "--timeout", "300")
    assert code == 1, result.output
    (node,) = data["cluster"]["nodes"]
    assert node["ready"] is False
    assert node["operator_validator"] == "waiting: driver-validation"
    assert node["problem"]["diagnosis"] == "operator.driver-preinstalled"
    assert "driver is in use" in node["problem"]["message"]
    assert "--no-operator-driver" in node["problem"]["hint"]
    assert data["cluster"]["helm"]["values"]["driver"] == {"enabled": True}
    # Waiting cannot help: the wait ends at the diagnosis, not at --timeout.
    assert (node["terminal"], data["cluster"]["timed_out"]) == (True, False)
    # The Operator's flags decide who installs the driver: the fix is this phase's, not the host's.
    assert data["resume"] == "gpuctl bootstrap --phase cluster --stack operator"


@needs_helm
def test_a_node_nfd_never_labelled_is_diagnosed(sim: Any, cli: Any) -> None:
    # NFD has not labelled it, and its worker does not tolerate the node's own taint: no label ever.
    dedicated = [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]
    unlabelled = gpu_nodes(count=1, name="gpu-nolabel", nfd=False, taints=dedicated)
    cluster = sim(scenario(gpu_nodes(count=1), unlabelled))
    code, data, result = operator_bootstrap(cli, cluster, "--timeout", "3")
    assert code == 1, result.output
    nodes = {node["name"]: node for node in data["cluster"]["nodes"]}
    assert nodes["gpu-0"]["ready"] is True
    problem = nodes["gpu-nolabel"]["problem"]
    assert "feature.node.kubernetes.io/pci-10de.present" in problem["message"]
    assert "node-feature-discovery" in problem["hint"]


@needs_helm
@pytest.mark.parametrize(
    ("host", "stage", "flag"),
    [
        ({"driver": "missing", "toolkit": "configured"}, "driver-validation", "--operator-driver"),
        ({"driver": "installed", "toolkit": "missing"}, "toolkit-validation", "--operator-toolkit"),
    ],
)
def test_a_host_lacking_what_the_operator_leaves_to_the_host_layer(
    sim: Any, cli: Any, host: dict[str, str], stage: str, flag: str
) -> None:
    cluster = sim(scenario(gpu_nodes(count=1, host=host)))
    code, data, result = operator_bootstrap(cli, cluster, "--timeout", "3")
    assert code == 1, result.output
    (node,) = data["cluster"]["nodes"]
    assert node["operator_validator"] == f"waiting: {stage}"
    assert f"waits on {stage}" in node["problem"]["message"]
    assert "gpuctl bootstrap --phase host" in node["problem"]["hint"]
    assert flag in node["problem"]["hint"]


@needs_helm
def test_verify_recognises_the_operator_and_reports_its_validation(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(gpu_nodes(count=2)))
    assert operator_bootstrap(cli, cluster)[0] == 0
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "30"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["gpu_operator"] == {
        "namespace": NAMESPACE,
        "cluster_policies": {"cluster-policy": "ready"},
        "validators": {"gpu-0": "ready", "gpu-1": "ready"},
    }
    for node in data["nodes"]:
        assert node["operator_validation"] == "ready"
        checks = {check["id"]: check["status"] for check in node["checks"]}
        assert checks["operator.validation"] == "pass"
        assert checks["device-plugin.pod"] == "pass"  # the Operator's plugin DaemonSet is recognised
    table = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "--timeout", "30"])
    assert "operator.validation" in table.stdout


def test_verify_without_the_operator_reports_null(sim: Any, cli: Any) -> None:
    cluster = sim({"podStartSeconds": 0.05, "nodes": [gpu_nodes(count=1)]})
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "30"])
    data = json.loads(result.stdout)
    assert data["gpu_operator"] is None
    assert data["nodes"][0]["operator_validation"] is None
    assert "operator.validation" not in {check["id"] for check in data["nodes"][0]["checks"]}


@needs_helm
def test_helm_failing_is_its_own_message_exit_1_and_a_rerun_fixes_it(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    missing = tmp_path / "no-chart-here"
    result = cli(
        [
            "bootstrap", "--phase", "cluster", "--stack", "operator", "--kubeconfig", str(cluster.kubeconfig),
            "--helm", HELM, "--chart", f"oci://{missing}", "--timeout", "5",
        ]
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: helm failed: ")
    assert "hint: the command was: " in result.stderr
    assert "Traceback" not in result.output
    assert Helm(cluster, tmp_path / "helm").json("list", "-A") == []
    code, data, result = operator_bootstrap(cli, cluster)  # the same cluster, a chart that exists
    assert code == 0, result.output
    assert data["cluster"]["helm"]["action"] == "installed"


def _mark_release(cluster: Any, revision: int, status: str) -> None:
    """Leave the release as a helm interrupted mid-operation leaves it: its record `pending-*`."""
    import base64
    import gzip

    from kubernetes.client import CoreV1Api

    core = CoreV1Api(cluster.api_client())
    name = f"sh.helm.release.v1.gpu-operator.v{revision}"
    secret = core.read_namespaced_secret(name, NAMESPACE)
    release = json.loads(gzip.decompress(base64.b64decode(base64.b64decode(secret.data["release"]))))
    release["info"]["status"] = status
    encoded = base64.b64encode(gzip.compress(json.dumps(release).encode())).decode()
    body = {
        "metadata": {"labels": {"status": status}},
        "data": {"release": base64.b64encode(encoded.encode()).decode()},
    }
    core.patch_namespaced_secret(name, NAMESPACE, body)


@needs_helm
def test_a_release_left_pending_by_an_interrupted_helm_is_repaired_by_a_rerun(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    assert operator_bootstrap(cli, cluster)[0] == 0
    _mark_release(cluster, 1, "pending-install")
    helm = Helm(cluster, tmp_path / "helm")
    assert [r["status"] for r in helm.json("list", "-n", NAMESPACE, "--pending")] == ["pending-install"]
    code, data, result = operator_bootstrap(cli, cluster)
    assert code == 0, result.output
    assert (data["cluster"]["helm"]["repaired"], data["cluster"]["helm"]["action"]) == (
        "uninstalled",
        "installed",
    )
    assert [r["status"] for r in helm.json("list", "-n", NAMESPACE)] == ["deployed"]

    assert operator_bootstrap(cli, cluster, "--sharing", "time-slicing")[0] == 0  # revision 2
    _mark_release(cluster, 2, "pending-upgrade")
    code, data, result = operator_bootstrap(cli, cluster, "--sharing", "time-slicing")
    assert code == 0, result.output
    assert (data["cluster"]["helm"]["repaired"], data["cluster"]["helm"]["action"]) == (
        "rolled back",
        "upgraded",
    )
    (release,) = helm.json("list", "-n", NAMESPACE)
    assert release["status"] == "deployed"
    assert (
        helm.json("get", "values", "gpu-operator", "-n", NAMESPACE)["devicePlugin"]["config"]["create"]
        is True
    )


@needs_helm
def test_check_on_an_installed_release_shows_what_the_upgrade_would_change(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    assert operator_bootstrap(cli, cluster)[0] == 0
    code, data, result = operator_bootstrap(cli, cluster, "--check", "--operator-toolkit")
    assert code == 0, result.output
    helm = data["cluster"]["helm"]
    assert (helm["action"], helm["deployed_chart"], helm["release_status"]) == (
        "would-upgrade", "gpu-operator-v26.7.2", "deployed",
    )  # fmt: skip
    assert " toolkit:\n-  enabled: false\n+  enabled: true\n" in helm["diff"]
    (release,) = Helm(cluster, tmp_path / "helm").json("list", "-n", NAMESPACE)
    assert release["revision"] == "1"  # nothing upgraded


@needs_helm
def test_a_device_plugin_left_beside_the_operators_is_a_warning(sim: Any, cli: Any) -> None:
    cluster = sim({**scenario(gpu_nodes(count=1)), "devicePlugin": "installed"})
    code, data, result = operator_bootstrap(cli, cluster)
    assert code == 0, result.output
    (warning,) = data["cluster"]["warnings"]
    assert warning.startswith(
        "device plugin DaemonSet kube-system/nvidia-device-plugin-daemonset runs beside"
    )
    assert "kubectl -n kube-system delete daemonset nvidia-device-plugin-daemonset" in warning


def test_verify_reports_a_node_the_operator_has_not_validated(sim: Any, cli: Any) -> None:
    nodes = [gpu_nodes(count=1), gpu_nodes(count=1, name="gpu-nodriver", host={"driver": "missing"})]
    cluster = sim({"podStartSeconds": 0.05, "gpuOperator": {"driver": {"enabled": False}}, "nodes": nodes})
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "10"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["gpu_operator"]["validators"] == {
        "gpu-0": "ready",
        "gpu-nodriver": "waiting: driver-validation",
    }
    assert data["gpu_operator"]["cluster_policies"] == {"cluster-policy": "notReady"}
    by_name = {node["name"]: node for node in data["nodes"]}
    assert by_name["gpu-0"]["ok"] is True
    checks = {check["id"]: check for check in by_name["gpu-nodriver"]["checks"]}
    assert checks["operator.validation"]["status"] == "warn"
    assert "driver-validation" in checks["operator.validation"]["message"]
    assert by_name["gpu-nodriver"]["ok"] is False  # gpuctl's own checks fail it: no GPUs advertised
