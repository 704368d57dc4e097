"""The sim plays NVIDIA's GPU Operator: a real helm installs the stand-in gpu-operator chart
(tests/charts/gpu-operator), and the operands, validator, node capacity and ClusterPolicy status
follow the policy and each node's host state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuctl import defaults
from tests.helm import OPERATOR_CHART, Helm, needs_helm
from tests.kubectl import Kubectl, needs_kubectl
from tests.polling import wait_until

pytestmark = [needs_helm, needs_kubectl]
CHART = str(OPERATOR_CHART)
RELEASE, NAMESPACE = defaults.OPERATOR_RELEASE, defaults.OPERATOR_NAMESPACE
INSTALL = (
    "upgrade",
    "--install",
    RELEASE,
    CHART,
    "-n",
    NAMESPACE,
    "--create-namespace",
)
ALL_OPERANDS = {
    "nvidia-driver-daemonset",
    "nvidia-container-toolkit-daemonset",
    "nvidia-operator-validator",
    "nvidia-device-plugin-daemonset",
    "gpu-feature-discovery",
}
VALIDATION_STAGES = ["driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation"]


class Operator:
    """A simulated cluster with helm and kubectl bound to it."""

    def __init__(self, sim: Any, tmp_path: Path, nodes: list[dict[str, Any]]) -> None:
        self.cluster = sim({"podStartSeconds": 0.05, "nodes": nodes})
        self.helm = Helm(self.cluster, tmp_path / "helm")
        self.kubectl = Kubectl(self.cluster, tmp_path)

    def install(self, *values: str, wait: bool = True) -> None:
        """helm upgrade --install; --wait waits for the ClusterPolicy's Ready condition too (helm v4's
        kstatus), so a policy the Operator cannot make ready is installed without it."""
        sets = [arg for value in values for arg in ("--set", value)]
        self.helm.ok(*INSTALL, *sets, *(("--wait", "--timeout", "60s") if wait else ()))

    def get(self, *args: str) -> Any:
        return json.loads(self.kubectl.ok("get", *args, "-o", "json"))

    def policy(self) -> Any:
        return self.get("clusterpolicy", "cluster-policy")

    def daemonsets(self) -> dict[str, Any]:
        items = self.get("daemonsets", "-n", NAMESPACE, "-l", "app.kubernetes.io/managed-by=gpu-operator")[
            "items"
        ]
        return {ds["metadata"]["name"]: ds for ds in items}

    def pods(self, app: str) -> dict[str, Any]:
        """The operand's pods by node."""
        items = self.get("pods", "-n", NAMESPACE, "-l", f"app={app}")["items"]
        return {pod["spec"]["nodeName"]: pod for pod in items}

    def allocatable(self) -> dict[str, str]:
        nodes = self.get("nodes")["items"]
        return {n["metadata"]["name"]: n["status"]["allocatable"].get("nvidia.com/gpu", "") for n in nodes}

    def wait_state(self, state: str) -> Any:
        return wait_until(
            lambda: (p := self.policy()).get("status", {}).get("state") == state and p, f"state {state}"
        )


def _conditions(policy: Any) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in policy["status"]["conditions"]}


def _init_states(pod: Any) -> list[tuple[str, str]]:
    return [(s["name"], next(iter(s["state"]))) for s in pod["status"]["initContainerStatuses"]]


@pytest.fixture
def operator(sim: Any, tmp_path: Path) -> Operator:
    """Two 8-GPU nodes without a driver on the host (the Operator installs it), one CPU node."""
    return Operator(
        sim,
        tmp_path,
        [{"name": "gpu-{i}", "count": 2, "gpus": 8, "host": {"driver": "missing"}}, {"name": "cpu-0"}],
    )


def test_install_deploys_the_operands_and_the_validator_passes_on_every_gpu_node(operator: Operator) -> None:
    operator.install()
    policy = operator.wait_state("ready")
    assert policy["status"]["namespace"] == NAMESPACE
    assert _conditions(policy) == {"Ready": ("True", "Reconciled"), "Error": ("False", "Ready")}
    daemonsets = operator.daemonsets()
    assert set(daemonsets) == ALL_OPERANDS  # dcgmExporter.enabled=false in the chart's values
    for name, ds in daemonsets.items():
        assert ds["spec"]["template"]["metadata"]["labels"]["app"] == name
        assert ds["metadata"]["ownerReferences"][0]["kind"] == "ClusterPolicy"
        assert ds["status"]["numberReady"] == ds["status"]["desiredNumberScheduled"] == 2
    assert daemonsets["nvidia-driver-daemonset"]["spec"]["template"]["spec"]["nodeSelector"] == {
        "nvidia.com/gpu.deploy.driver": "true"
    }
    validators = operator.pods("nvidia-operator-validator")
    assert set(validators) == {"gpu-0", "gpu-1"}
    for node, pod in validators.items():
        assert _init_states(pod) == [(stage, "terminated") for stage in VALIDATION_STAGES]
        assert pod["status"]["phase"] == "Running"
        log = operator.kubectl.ok(
            "logs", "-n", NAMESPACE, pod["metadata"]["name"], "-c", "nvidia-operator-validator"
        )
        assert log == "all validations are successful\n", node
    assert operator.allocatable() == {"gpu-0": "8", "gpu-1": "8", "cpu-0": ""}
    labels = operator.get("node", "gpu-0")["metadata"]["labels"]
    assert labels["nvidia.com/gpu.deploy.operator-validator"] == "true"
    assert "nvidia.com/gpu.deploy.driver" not in operator.get("node", "cpu-0")["metadata"]["labels"]
    classes = {rc["metadata"]["name"]: rc["handler"] for rc in operator.get("runtimeclasses")["items"]}
    assert classes == {"nvidia": "nvidia", "nvidia-cdi": "nvidia-cdi", "nvidia-legacy": "nvidia-legacy"}
    table = operator.kubectl.ok("get", "clusterpolicies").split()
    assert table[:3] == ["NAME", "STATUS", "AGE"]
    assert table[3:5] == ["cluster-policy", "ready"]


def test_the_same_values_again_change_nothing_and_uninstall_cleans_up(operator: Operator) -> None:
    operator.install("driver.enabled=true")
    operator.wait_state("ready")
    before = {name: ds["metadata"]["generation"] for name, ds in operator.daemonsets().items()}
    pods_before = {pod["metadata"]["uid"] for pod in operator.pods("nvidia-device-plugin-daemonset").values()}
    operator.install("driver.enabled=true")
    assert [r["revision"] for r in operator.helm.json("list", "-n", NAMESPACE)] == ["2"]
    assert {name: ds["metadata"]["generation"] for name, ds in operator.daemonsets().items()} == before
    assert {
        p["metadata"]["uid"] for p in operator.pods("nvidia-device-plugin-daemonset").values()
    } == pods_before

    operator.helm.ok("uninstall", RELEASE, "-n", NAMESPACE, "--wait")
    wait_until(lambda: not operator.get("pods", "-n", NAMESPACE)["items"], "the operand pods to go")
    assert operator.daemonsets() == {}
    assert operator.get("runtimeclasses")["items"] == []
    # the driver left with its pod: the kubelet keeps the resource it had, at 0; a CPU node never had it
    assert operator.allocatable() == {"gpu-0": "0", "gpu-1": "0", "cpu-0": ""}


def test_a_preinstalled_driver_conflicts_with_the_driver_operand(sim: Any, tmp_path: Path) -> None:
    operator = Operator(sim, tmp_path, [{"name": "gpu-0", "gpus": 8}])  # host.driver: installed
    operator.install("driver.enabled=true", wait=False)
    driver = wait_until(
        lambda: (
            (pods := operator.pods("nvidia-driver-daemonset"))
            and pods["gpu-0"]["status"].get("initContainerStatuses")
            and pods["gpu-0"]
        ),
        "the driver pod's init container",
    )
    manager = driver["status"]["initContainerStatuses"][0]
    assert manager["name"] == "k8s-driver-manager"
    assert manager["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert manager["lastState"]["terminated"]["exitCode"] == 1
    log = operator.kubectl.ok("logs", "-n", NAMESPACE, driver["metadata"]["name"], "-c", "k8s-driver-manager")
    assert "Could not unload NVIDIA driver kernel modules, driver is in use" in log
    rows = {
        line.split()[0].rsplit("-", 1)[0]: line.split()[2]
        for line in operator.kubectl.ok("get", "pods", "-n", NAMESPACE).splitlines()[1:]
    }
    assert rows["nvidia-driver-daemonset"] == "Init:CrashLoopBackOff"
    assert rows["nvidia-operator-validator"] == "Init:0/4"  # driver-validation keeps waiting
    assert rows["nvidia-device-plugin-daemonset"] == "Init:0/1"
    validator = operator.pods("nvidia-operator-validator")["gpu-0"]
    assert _init_states(validator)[0] == ("driver-validation", "running")
    policy = operator.wait_state("notReady")
    assert _conditions(policy) == {
        "Ready": ("False", "OperandNotReady"),
        "Error": ("True", "OperandNotReady"),
    }
    assert "state-driver" in policy["status"]["conditions"][0]["message"]
    assert operator.allocatable() == {"gpu-0": ""}

    operator.install("driver.enabled=false")  # the fix: use the host's driver
    operator.wait_state("ready")
    assert "nvidia-driver-daemonset" not in operator.daemonsets()
    assert operator.allocatable() == {"gpu-0": "8"}


def test_a_host_without_a_configured_toolkit_holds_the_validator_when_the_toolkit_is_not_deployed(
    sim: Any, tmp_path: Path
) -> None:
    operator = Operator(sim, tmp_path, [{"name": "gpu-0", "gpus": 8, "host": {"toolkit": "missing"}}])
    operator.install("driver.enabled=false", "toolkit.enabled=false", wait=False)
    operator.wait_state("notReady")
    validator = operator.pods("nvidia-operator-validator")["gpu-0"]
    assert _init_states(validator)[:2] == [
        ("driver-validation", "terminated"),
        ("toolkit-validation", "running"),
    ]
    operator.install("driver.enabled=false", "toolkit.enabled=true")
    operator.wait_state("ready")
    assert operator.allocatable() == {"gpu-0": "8"}


def test_without_nfd_labels_nothing_is_deployed_until_nfd_runs(sim: Any, tmp_path: Path) -> None:
    operator = Operator(sim, tmp_path, [{"name": "gpu-0", "gpus": 8, "nfd": False}])
    operator.install("nfd.enabled=false", "driver.enabled=false")
    policy = operator.wait_state("ready")  # as the real Operator reports it
    assert _conditions(policy)["Ready"] == ("True", "NFDLabelsMissing")
    assert operator.daemonsets() == {}
    assert "nvidia.com/gpu.deploy.device-plugin" not in operator.get("node", "gpu-0")["metadata"]["labels"]

    operator.install("nfd.enabled=true", "driver.enabled=false")  # the chart's NFD worker labels the node
    wait_until(lambda: _conditions(operator.policy())["Ready"] == ("True", "Reconciled"), "Reconciled")
    assert (
        operator.get("node", "gpu-0")["metadata"]["labels"]["feature.node.kubernetes.io/pci-10de.present"]
        == "true"
    )
    assert set(operator.daemonsets()) == ALL_OPERANDS - {"nvidia-driver-daemonset"}
    assert operator.allocatable() == {"gpu-0": "8"}


def test_helm_wait_fails_while_the_operator_cannot_make_the_policy_ready(sim: Any, tmp_path: Path) -> None:
    operator = Operator(sim, tmp_path, [{"name": "gpu-0", "gpus": 8}])  # a driver on the host
    done = operator.helm(*INSTALL, "--set", "driver.enabled=true", "--wait", "--timeout", "3s")
    assert done.returncode == 1
    assert "resource ClusterPolicy//cluster-policy not ready. status: InProgress" in done.stderr
    assert "states not ready: [state-driver" in done.stderr
    assert operator.helm.json("list", "-n", NAMESPACE)[0]["status"] == "failed"


def test_a_cluster_without_gpu_nodes_is_ready_with_no_gpu_nodes(sim: Any, tmp_path: Path) -> None:
    operator = Operator(sim, tmp_path, [{"name": "cpu-0"}])
    operator.kubectl.ok("label", "node", "cpu-0", "feature.node.kubernetes.io/cpu-model.vendor_id=Intel")
    operator.install()
    policy = operator.wait_state("ready")
    assert _conditions(policy)["Ready"] == ("True", "NoGPUNodes")
    assert operator.daemonsets() == {}


def test_a_device_plugin_config_from_the_values_shares_the_gpus(operator: Operator, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(
        "devicePlugin:\n"
        "  config:\n"
        "    create: true\n"
        "    name: time-slicing\n"
        "    default: config.yaml\n"
        "    data:\n"
        "      config.yaml: |\n"
        "        version: v1\n"
        "        sharing:\n"
        "          timeSlicing:\n"
        "            resources:\n"
        "            - name: nvidia.com/gpu\n"
        "              replicas: 4\n"
        "mig:\n"
        "  strategy: none\n"
    )
    operator.helm.ok(*INSTALL, "-f", str(values), "--wait", "--timeout", "60s")
    operator.wait_state("ready")
    assert operator.allocatable() == {"gpu-0": "32", "gpu-1": "32", "cpu-0": ""}
    plugin = operator.daemonsets()["nvidia-device-plugin-daemonset"]["spec"]["template"]["spec"]
    assert plugin["volumes"] == [{"name": "config", "configMap": {"name": "time-slicing"}}]
    assert {"name": "CONFIG_FILE", "value": "/config/config.yaml"} in plugin["containers"][0]["env"]
