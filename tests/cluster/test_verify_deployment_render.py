"""`gpuctl render --verify-deployment --service-monitor`: the in-cluster `verify --watch
--metrics-addr`. Its Kubernetes objects validate strictly for every supported version, its
ServiceMonitor against prometheus-operator's own CRD schema, the pieces point at each other, and
the Deployment's command line, run as written against the simulated cluster, serves the metrics."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from gpuctl.core.render import SUPPORTED_KUBERNETES_VERSIONS, RenderOptions, render_manifests
from tests.interrupt import interrupt, running
from tests.polling import wait_until
from tests.rendered import validate_strictly

CRD = Path(__file__).resolve().parents[1] / "crds" / "monitoring.coreos.com_servicemonitors.yaml"
OPTIONS = RenderOptions(
    verify_deployment=True,
    service_monitor=True,
    verify_namespace="gpu-proof",
    gpuctl_image="example.org/gpuctl:1",
)


def _documents(options: RenderOptions = OPTIONS) -> dict[str, list[dict[str, Any]]]:
    """The rendered verify files' documents by file name (the stack's own files left out)."""
    return {
        rendered.filename: [doc for doc in yaml.safe_load_all(rendered.content) if doc]
        for rendered in render_manifests(options).files
        if rendered.filename.startswith("verify-")
    }


def _by_kind() -> dict[str, dict[str, Any]]:
    return {
        doc["kind"]: doc for docs in _documents().values() for doc in docs if doc["kind"] != "RoleBinding"
    }


@pytest.mark.parametrize("version", SUPPORTED_KUBERNETES_VERSIONS)
def test_the_kubernetes_objects_validate_strictly(version: str) -> None:
    files = _documents()
    assert set(files) == {
        "verify-deployment.yaml",
        "verify-deployment-rbac.yaml",
        "verify-servicemonitor.yaml",
    }
    for name in ("verify-deployment.yaml", "verify-deployment-rbac.yaml"):
        for document in files[name]:
            validate_strictly(document, version)


def test_the_servicemonitor_validates_against_prometheus_operators_crd() -> None:
    crd = yaml.safe_load(CRD.read_text(encoding="utf-8"))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema = version["schema"]["openAPIV3Schema"]
    (monitor,) = _documents()["verify-servicemonitor.yaml"]
    assert monitor["apiVersion"] == f"{crd['spec']['group']}/v1"
    assert monitor["kind"] == crd["spec"]["names"]["kind"]
    jsonschema.validate(monitor, schema)
    broken = {**monitor, "spec": {**monitor["spec"], "endpoints": [{"interval": "every minute"}]}}
    with pytest.raises(jsonschema.ValidationError):  # the schema does judge: a bad interval fails
        jsonschema.validate(broken, schema)


def test_the_servicemonitor_finds_the_service_and_the_service_the_pod() -> None:
    kinds = _by_kind()
    monitor, service, deployment = kinds["ServiceMonitor"], kinds["Service"], kinds["Deployment"]
    labels = service["metadata"]["labels"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [service["metadata"]["namespace"]]
    (port,) = service["spec"]["ports"]
    assert monitor["spec"]["endpoints"][0]["port"] == port["name"]
    pod = deployment["spec"]["template"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    (container,) = pod["spec"]["containers"]
    (container_port,) = container["ports"]
    assert port["targetPort"] == container_port["name"]
    command = container["command"]
    assert command[command.index("--metrics-addr") + 1] == f":{container_port['containerPort']}"
    assert pod["spec"]["serviceAccountName"] == kinds["ServiceAccount"]["metadata"]["name"]
    assert kinds["Namespace"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert deployment["spec"]["replicas"] == 1  # two watches would gate the same nodes twice


def test_the_network_policy_admits_prometheus_on_the_metrics_port_only() -> None:
    """The metrics endpoint has no authentication: only Prometheus' pods reach it, on that port
    alone; the policy isolates only ingress (verify's own requests to the API server go out)."""
    kinds = _by_kind()
    policy, deployment = kinds["NetworkPolicy"], kinds["Deployment"]
    pod = deployment["spec"]["template"]
    assert policy["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    (rule,) = policy["spec"]["ingress"]
    (container,) = pod["spec"]["containers"]
    (port,) = container["ports"]
    assert rule["ports"] == [{"port": port["name"], "protocol": "TCP"}]
    assert rule["from"] == [
        {"namespaceSelector": {}, "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}
    ]


def test_the_deployments_command_serves_metrics_against_a_cluster(sim: Any) -> None:
    cluster = sim(
        {"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": [{"name": "gpu-0", "gpus": 2}]}
    )
    wait_until(lambda: cluster.allocatable_gpus() == {"gpu-0": 2}, "GPUs advertised")
    (container,) = _by_kind()["Deployment"]["spec"]["template"]["spec"]["containers"]
    command = list(container["command"])
    assert command[0] == "gpuctl"
    command[command.index("--metrics-addr") + 1] = "127.0.0.1:0"  # the pod's port may be taken here
    argv = [sys.executable, "-m", "gpuctl", *command[1:], "--kubeconfig", str(cluster.kubeconfig)]
    with running(argv, stdout=subprocess.DEVNULL) as process:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.fullmatch(r"serving metrics on (http://\S+)\n", line)
        assert found, line

        def proven() -> bool:
            with urllib.request.urlopen(found.group(1), timeout=10) as response:
                return 'gpuctl_node_proven{level="smi",node="gpu-0"' in response.read().decode()

        wait_until(proven, "gpu-0 in the metrics")
        stderr = interrupt(process)
    assert process.returncode == 130, stderr
