"""`gpuctl bootstrap --phase cluster --stack dra --migrate` and back, through the CLI against the
simulated cluster (Kubernetes 1.37, a real helm and the stand-in DRA driver chart): three 4-GPU
nodes on gpuctl's device plugin with a 3-replica Deployment asking for nvidia.com/gpu behind a
PodDisruptionBudget of minAvailable 2 move node by node. The sim's own store is watched while it
runs: how many nodes are cordoned at once, and how many of the Deployment's pods are ready."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from gpuctl.sim.runtime.store import Change
from tests.cluster.test_bootstrap_cluster import gpu_nodes, writes
from tests.cluster.test_json_schemas import _assert_valid as assert_valid
from tests.helm import DRA_CHART, HELM, needs_helm
from tests.polling import wait_until

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), needs_helm]

NAMESPACE = "default"
APP = "trainer"
STACK_LABEL = "gpuctl.io/gpu-stack"
GPU = "nvidia.com/gpu"


def scenario(*extra_nodes: dict[str, Any]) -> dict[str, Any]:
    """A 1.37 cluster (which serves resource.k8s.io), its GPU nodes without any stack yet."""
    return {
        "kubernetesVersion": "v1.37.0",
        "podStartSeconds": 0.05,
        "nodes": [{"name": "cpu-0"}, gpu_nodes(count=3, gpus=4), *extra_nodes],
    }


class Watched:
    """What the sim's store went through: the most GPU nodes cordoned at once, and the fewest of
    the Deployment's pods ready once all three had been."""

    def __init__(self, cluster: Any) -> None:
        self.lock = threading.Lock()
        self.cordoned: set[str] = set()
        self.most_cordoned = 0
        self.ready: set[str] = set()
        self.fewest_ready: int | None = None
        store = cluster.server.cluster.store
        with store.lock:  # what is there now, then every change after it
            for pod in store.items("pods"):
                self._pod(Change(0, "pods", "ADDED", pod, None))
            store.watch("nodes", self._node)
            store.watch("pods", self._pod)

    def _node(self, change: Change) -> None:
        name = change.obj["metadata"]["name"]
        with self.lock:
            if change.kind != "DELETED" and (change.obj.get("spec") or {}).get("unschedulable"):
                self.cordoned.add(name)
            else:
                self.cordoned.discard(name)
            self.most_cordoned = max(self.most_cordoned, len(self.cordoned))

    def _pod(self, change: Change) -> None:
        meta = change.obj["metadata"]
        if (meta.get("labels") or {}).get("app") != APP:
            return
        conditions = (change.obj.get("status") or {}).get("conditions") or []
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        with self.lock:
            if change.kind != "DELETED" and ready and not meta.get("deletionTimestamp"):
                self.ready.add(meta["uid"])
            else:
                self.ready.discard(meta["uid"])
            if self.fewest_ready is not None or len(self.ready) == 3:
                self.fewest_ready = min(self.fewest_ready or 3, len(self.ready))


def run(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any], Any]:
    result = cli(
        [
            "bootstrap", "--phase", "cluster", "--kubeconfig", str(cluster.kubeconfig), "-o", "json",
            "--timeout", "60", *args,
        ]
    )  # fmt: skip
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else {}, result


def migrate(cli: Any, cluster: Any, stack: str, *args: str) -> tuple[int, dict[str, Any], Any]:
    chart = ("--chart", str(DRA_CHART)) if stack == "dra" else ()
    return run(cli, cluster, "--stack", stack, "--helm", HELM, *chart, "--migrate", *args)


def workload(cluster: Any) -> Any:
    """The Deployment (nvidia.com/gpu: 1, tolerating the GPU taint) and its budget; returns its spec."""
    from kubernetes.client import AppsV1Api, PolicyV1Api

    api = cluster.api_client()
    container = {"name": "train", "image": "registry.k8s.io/pause:3.10", "resources": {"limits": {GPU: "1"}}}
    body = {
        "metadata": {"name": APP},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": APP}},
            "template": {
                "metadata": {"labels": {"app": APP}},
                "spec": {
                    "containers": [container],
                    "tolerations": [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}],
                },
            },
        },
    }
    AppsV1Api(api).create_namespaced_deployment(NAMESPACE, body)
    selector = {"matchLabels": {"app": APP}}
    budget = {"metadata": {"name": APP}, "spec": {"minAvailable": 2, "selector": selector}}
    PolicyV1Api(api).create_namespaced_pod_disruption_budget(NAMESPACE, budget)
    wait_until(lambda: len(running(cluster)) == 3, "the Deployment's 3 pods running")
    return AppsV1Api(api).read_namespaced_deployment(APP, NAMESPACE).spec.to_dict()


def running(cluster: Any) -> dict[str, str]:
    """The Deployment's running pods → their nodes."""
    from kubernetes.client import CoreV1Api

    pods = CoreV1Api(cluster.api_client()).list_namespaced_pod(NAMESPACE, label_selector=f"app={APP}").items
    return {
        pod.metadata.name: pod.spec.node_name
        for pod in pods
        if pod.status.phase == "Running" and pod.metadata.deletion_timestamp is None
    }


def nodes(cluster: Any) -> dict[str, Any]:
    from kubernetes.client import CoreV1Api

    return {node.metadata.name: node for node in CoreV1Api(cluster.api_client()).list_node().items}


def plugin_pods(cluster: Any) -> list[str]:
    from kubernetes.client import CoreV1Api

    pods = CoreV1Api(cluster.api_client()).list_pod_for_all_namespaces().items
    return [pod.metadata.name for pod in pods if pod.metadata.name.startswith("nvidia-device-plugin")]


def most_cordoned_by_events(cluster: Any) -> tuple[int, int]:
    """(the most nodes cordoned at once, the cordons) as the kubelets' NodeNotSchedulable and
    NodeSchedulable Events tell it, in the order the API server stored them."""
    from kubernetes.client import CoreV1Api

    items = CoreV1Api(cluster.api_client()).list_namespaced_event(NAMESPACE).items
    changes = sorted(
        (int(event.metadata.resource_version), event.involved_object.name, event.reason)
        for event in items
        if event.involved_object.kind == "Node" and event.reason in ("NodeNotSchedulable", "NodeSchedulable")
    )
    cordoned: set[str] = set()
    most = cordons = 0
    for _, node, reason in changes:
        if reason == "NodeNotSchedulable":
            cordoned.add(node)
            cordons += 1
        else:
            cordoned.discard(node)
        most = max(most, len(cordoned))
    return most, cordons


def verify(cli: Any, cluster: Any) -> tuple[int, dict[str, Any]]:
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "60"])
    return result.exit_code, json.loads(result.stdout)


def on_the_device_plugin(cli: Any, cluster: Any) -> None:
    code, _, result = run(cli, cluster, "--no-gate")
    assert code == 0, result.output


def assert_served_through_dra(cluster: Any) -> None:
    """No device plugin pod left, every GPU node labelled for DRA and open, its nvidia.com/gpu
    capacity at 0, and each of the Deployment's pods served its nvidia.com/gpu from a DRA device on
    its node: the claim the scheduler made for it."""
    assert plugin_pods(cluster) == []
    for name in ("gpu-0", "gpu-1", "gpu-2"):
        node = nodes(cluster)[name]
        assert node.metadata.labels[STACK_LABEL] == "dra"
        assert not node.spec.unschedulable
        assert node.status.capacity[GPU] == "0"  # the plugin left: the kubelet reports 0
    for name, node_name in running(cluster).items():
        pod = json.load(cluster.open(f"/api/v1/namespaces/{NAMESPACE}/pods/{name}"))
        claim_name = pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
        path = f"/apis/resource.k8s.io/v1/namespaces/{NAMESPACE}/resourceclaims/{claim_name}"
        allocation = json.load(cluster.open(path))["status"]["allocation"]
        (term,) = allocation["nodeSelector"]["nodeSelectorTerms"]
        assert term["matchFields"][0]["values"] == [node_name]


def test_device_plugin_to_dra_and_back_under_a_budget(sim: Any, cli: Any) -> None:
    cluster = sim(scenario())
    on_the_device_plugin(cli, cluster)
    spec = workload(cluster)
    watched = Watched(cluster)

    code, data, result = migrate(cli, cluster, "dra")
    assert code == 0, result.output
    assert_valid(data)  # gpuctl.bootstrap/v1, its `migration` included
    migration = data["migration"]
    assert (migration["from"], migration["to"]) == ("device-plugin", "dra")
    assert [(n["name"], n["batch"], n["outcome"]) for n in migration["nodes"]] == [
        ("gpu-0", 1, "migrated"),
        ("gpu-1", 2, "migrated"),
        ("gpu-2", 3, "migrated"),
    ]
    for node in migration["nodes"]:
        steps = [(step["step"], step["status"]) for step in node["steps"]]
        assert steps == [(s, "ok") for s in ("cordon", "drain", "move", "serve", "verify", "uncordon")]
        # drained, the node was proven with all its GPUs, through DRA, before it was opened
        assert node["steps"][3]["message"] == "dra serves 4 GPU(s); device-plugin has left"
        assert node["steps"][4]["message"] == "proven at level smi: 4 GPU(s) seen"
    assert migration["removed"] == ["daemonset kube-system/nvidia-device-plugin-daemonset"]
    assert migration["verify"]["ok"] is True
    assert {n["gpu_allocation"] for n in migration["verify"]["nodes"]} == {"dra"}
    for node in migration["verify"]["nodes"]:  # through a claim, or busy with the Deployment's pods
        claim = next(check for check in node["checks"] if check["id"] == "dra.claim")
        assert claim["status"] == ("skip" if node["busy"] else "pass"), claim
    # the plan went to stderr before the first node was touched
    plan = result.stderr[: result.stderr.index("gpu-0: cordon")]
    assert "migration device-plugin -> dra" in plan
    assert "canary: gpu-0" in plan
    # never two nodes out at once, and the budget kept: never fewer than 2 of the 3 pods ready
    assert watched.most_cordoned == 1
    assert watched.fewest_ready == 2
    assert most_cordoned_by_events(cluster) == (1, 3)  # the kubelets' Events say the same
    assert len(running(cluster)) == 3
    assert set(running(cluster).values()) <= {"gpu-0", "gpu-1", "gpu-2"}
    from kubernetes.client import AppsV1Api

    assert AppsV1Api(cluster.api_client()).read_namespaced_deployment(APP, NAMESPACE).spec.to_dict() == spec
    assert_served_through_dra(cluster)
    code, report = verify(cli, cluster)
    assert code == 0, report

    before = writes(cluster)
    code, again, result = migrate(cli, cluster, "dra")
    assert code == 0, result.output
    assert again["migration"]["nodes"] == []
    assert again["migration"]["moved"] == ["gpu-0", "gpu-1", "gpu-2"]
    assert writes(cluster) == before  # a second run changes nothing

    code, back, result = migrate(cli, cluster, "device-plugin")
    assert code == 0, result.output
    assert [n["outcome"] for n in back["migration"]["nodes"]] == ["migrated"] * 3
    assert back["migration"]["removed"] == ["helm release dra-driver-nvidia-gpu/dra-driver-nvidia-gpu"]
    assert watched.most_cordoned == 1
    assert watched.fewest_ready == 2
    assert len(running(cluster)) == 3
    assert set(running(cluster).values()) <= {"gpu-0", "gpu-1", "gpu-2"}
    code, report = verify(cli, cluster)
    assert code == 0, report
    assert {n["gpu_allocation"] for n in report["nodes"]} == {"device-plugin"}


def test_a_node_whose_dra_plugin_never_publishes_stops_the_move_and_the_rollback_brings_it_back(
    sim: Any, cli: Any
) -> None:
    silent = gpu_nodes(count=1, name="gpu-0", draSlices="never")
    cluster = sim({**scenario(), "nodes": [{"name": "cpu-0"}, silent, gpu_nodes(count=2, name="gpu-n{i}")]})
    on_the_device_plugin(cli, cluster)
    workload(cluster)

    code, data, result = migrate(cli, cluster, "dra", "--timeout", "5")
    assert code == 1, result.output
    (canary, *others) = data["migration"]["nodes"]
    assert (canary["name"], canary["outcome"]) == ("gpu-0", "failed")
    failed = canary["steps"][-1]
    assert failed["step"] == "serve"
    assert failed["message"].startswith("node gpu-0: dra published no ResourceSlice for it after 5s")
    assert "the node stays cordoned" in failed["hint"]
    assert [(node["name"], node["steps"], node["outcome"]) for node in others] == [
        ("gpu-n0", [], "pending"),
        ("gpu-n1", [], "pending"),
    ]
    assert data["migration"]["removed"] == []
    assert data["resume"] == "gpuctl bootstrap --phase cluster --stack dra --migrate"
    after = nodes(cluster)
    assert after["gpu-0"].spec.unschedulable is True
    assert after["gpu-0"].metadata.annotations["gpuctl.io/upgrade"] == "cordoned"
    for name in ("gpu-n0", "gpu-n1"):  # untouched: still on the device plugin, schedulable
        assert after[name].metadata.labels[STACK_LABEL] == "device-plugin"
        assert not after[name].spec.unschedulable
        assert after[name].status.allocatable[GPU] == "4"
    assert len(running(cluster)) == 3

    # the rollback: the node that was moving goes back, and the DRA driver goes with its last node
    code, back, result = migrate(cli, cluster, "device-plugin")
    assert code == 0, result.output
    assert [(n["name"], n["resuming"], n["outcome"]) for n in back["migration"]["nodes"]] == [
        ("gpu-0", True, "migrated")
    ]
    assert back["migration"]["removed"] == ["helm release dra-driver-nvidia-gpu/dra-driver-nvidia-gpu"]
    assert not nodes(cluster)["gpu-0"].spec.unschedulable
    code, report = verify(cli, cluster)
    assert code == 0, report


def test_check_prints_the_plan_and_writes_nothing(sim: Any, cli: Any) -> None:
    cluster = sim(scenario())
    on_the_device_plugin(cli, cluster)
    workload(cluster)
    before = writes(cluster)
    code, data, result = migrate(cli, cluster, "dra", "--check", "--max-unavailable", "2")
    assert code == 0, result.output
    migration = data["migration"]
    assert [(n["name"], n["batch"], n["outcome"]) for n in migration["nodes"]] == [
        ("gpu-0", 1, "planned"),
        ("gpu-1", 2, "planned"),
        ("gpu-2", 2, "planned"),
    ]
    assert_valid(data)
    assert all(len(n["evict"]) == 1 for n in migration["nodes"])  # one of the Deployment's pods each
    assert migration["carried"][0].startswith("nvidia.com/gpu requests: served by DeviceClass gpu.nvidia.com")
    assert writes(cluster) == before
    table = cli(
        ["bootstrap", "--phase", "cluster", "--kubeconfig", str(cluster.kubeconfig), "--stack", "dra",
         "--helm", HELM, "--chart", str(DRA_CHART), "--migrate", "--check"]
    )  # fmt: skip
    assert table.exit_code == 0, table.output
    assert "migration device-plugin -> dra" in table.stdout
    assert "canary: gpu-0" in table.stdout


def test_a_cluster_before_1_37_is_refused_with_what_to_change_in_the_workloads(sim: Any, cli: Any) -> None:
    cluster = sim({**scenario(), "kubernetesVersion": "v1.34.1"})
    on_the_device_plugin(cli, cluster)
    before = writes(cluster)
    code, _, result = migrate(cli, cluster, "dra")
    assert code == 2, result.output
    first, hint = result.stderr.splitlines()[:2]
    assert first.startswith("error: --stack dra --migrate needs Kubernetes 1.37 or later")
    assert "the API server is v1.34.1" in first
    assert "ResourceClaimTemplate" in hint
    assert "deviceClassName gpu.nvidia.com" in hint
    assert writes(cluster) == before


def test_migrate_refuses_the_operator_stack_and_other_phases(sim: Any, cli: Any) -> None:
    cluster = sim(scenario())
    for args, why in (
        (["--phase", "cluster", "--stack", "operator"], "--migrate does not apply to --stack operator"),
        (["--phase", "verify"], "--migrate does not apply to --phase verify"),
    ):
        result = cli(["bootstrap", "--kubeconfig", str(cluster.kubeconfig), *args, "--migrate"])
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(f"error: {why} ("), result.stderr


def operator_plugin_pods(cluster: Any) -> dict[str, str]:
    """The GPU Operator's device plugin pods → their nodes."""
    from kubernetes.client import CoreV1Api

    pods = CoreV1Api(cluster.api_client()).list_namespaced_pod("gpu-operator").items
    return {
        pod.metadata.name: pod.spec.node_name
        for pod in pods
        if pod.metadata.name.startswith("nvidia-device-plugin-daemonset")
    }


def validator_stages(cluster: Any) -> list[str]:
    """The init containers of the GPU Operator's validator DaemonSet."""
    from kubernetes.client import AppsV1Api

    daemonset = AppsV1Api(cluster.api_client()).read_namespaced_daemon_set(
        "nvidia-operator-validator", "gpu-operator"
    )
    return [container.name for container in daemonset.spec.template.spec.init_containers or []]


OPERATOR = {"gpuOperator": {"driver": {"enabled": False}}}
DEPLOY_PLUGIN = "nvidia.com/gpu.deploy.device-plugin"


def test_nodes_move_off_the_gpu_operators_device_plugin_onto_dra(sim: Any, cli: Any) -> None:
    cluster = sim({**scenario(), **OPERATOR})
    wait_until(lambda: all(nodes(cluster)[f"gpu-{i}"].status.allocatable.get(GPU) == "4" for i in range(3)),
               "the Operator's device plugin serving every GPU node")  # fmt: skip
    spec = workload(cluster)
    watched = Watched(cluster)

    code, data, result = migrate(cli, cluster, "dra")
    assert code == 0, result.output
    assert_valid(data)
    migration = data["migration"]
    assert (migration["from"], migration["to"]) == ("operator", "dra")
    assert [(n["name"], n["outcome"]) for n in migration["nodes"]] == [
        ("gpu-0", "migrated"),
        ("gpu-1", "migrated"),
        ("gpu-2", "migrated"),
    ]
    for node in migration["nodes"]:
        assert node["steps"][2]["message"] == f"labelled {STACK_LABEL}=dra, {DEPLOY_PLUGIN}=false"
        assert node["steps"][3]["message"] == "dra serves 4 GPU(s); operator has left"
    assert migration["carried"][-1].startswith("the GPU Operator's driver, container toolkit, validator")
    assert migration["dra_driver_root"] is None  # the hosts' own driver: the DRA driver's root is /
    # the Operator's DaemonSets are its own: gpuctl labelled the nodes, and switched its plugin off last
    assert all(not pinned.startswith("daemonset") for pinned in migration["pinned"])
    assert migration["removed"] == ["clusterpolicy cluster-policy: devicePlugin.enabled=false"]
    assert migration["verify"]["ok"] is True, migration["verify"]
    assert watched.most_cordoned == 1
    assert watched.fewest_ready == 2
    wait_until(lambda: operator_plugin_pods(cluster) == {}, "the Operator's device plugin gone")
    # and its validator no longer looks for nvidia.com/gpu capacity the moved nodes do not have
    wait_until(lambda: "plugin-validation" not in validator_stages(cluster), "the validator re-rendered")
    for name in ("gpu-0", "gpu-1", "gpu-2"):
        labels = nodes(cluster)[name].metadata.labels
        assert labels[DEPLOY_PLUGIN] == "false"  # the Operator kept the value set on the node
        assert labels["nvidia.com/gpu.deploy.container-toolkit"] == "true"
    from kubernetes.client import AppsV1Api

    assert AppsV1Api(cluster.api_client()).read_namespaced_deployment(APP, NAMESPACE).spec.to_dict() == spec
    assert len(running(cluster)) == 3
    assert_served_through_dra(cluster)

    before = writes(cluster)
    code, again, result = migrate(cli, cluster, "dra")
    assert code == 0, result.output
    assert again["migration"]["nodes"] == []
    assert writes(cluster) == before  # a second run changes nothing

    # back to gpuctl's device plugin beside the Operator: refused with how to give the nodes back
    code, _, result = migrate(cli, cluster, "device-plugin")
    assert code == 2, result.output
    assert result.stderr.startswith(
        "error: the GPU Operator (ClusterPolicy) is installed: --stack device-plugin"
    )
    assert f"({DEPLOY_PLUGIN}-)" in result.stderr


def test_where_the_operator_runs_the_driver_the_dra_driver_looks_under_its_root(sim: Any, cli: Any) -> None:
    cluster = sim({**scenario(), "gpuOperator": {}})  # the Operator's driver container, its default
    before = writes(cluster)
    code, data, result = migrate(cli, cluster, "dra", "--check")
    assert code == 0, result.output
    migration = data["migration"]
    assert migration["from"] == "operator"
    assert migration["dra_driver_root"] == "/run/nvidia/driver"
    assert [n["outcome"] for n in migration["nodes"]] == ["planned"] * 3
    assert writes(cluster) == before


def test_the_operators_gpucluster_mode_is_refused_before_any_write(sim: Any, cli: Any) -> None:
    from tests.cluster.test_operator_gpucluster import add_gpu_cluster

    cluster = sim(scenario())
    on_the_device_plugin(cli, cluster)
    add_gpu_cluster(cluster)
    before = writes(cluster)
    code, _, result = migrate(cli, cluster, "dra")
    assert code == 2, result.output
    assert result.stderr.startswith("error: the GPU Operator (GPUCluster) serves this cluster's GPUs"), (
        result.stderr
    )
    assert "runs its own DRA driver already" in result.stderr
    assert writes(cluster) == before


def test_ctrl_c_stops_after_the_step_in_flight_and_a_rerun_finishes(sim: Any, cli: Any) -> None:
    import sys

    from tests.interrupt import interrupt
    from tests.interrupt import running as process_of

    cluster = sim(scenario())
    on_the_device_plugin(cli, cluster)
    workload(cluster)
    args = [
        "bootstrap", "--phase", "cluster", "--kubeconfig", str(cluster.kubeconfig), "--stack", "dra",
        "--helm", HELM, "--chart", str(DRA_CHART), "--migrate", "--timeout", "60",
    ]  # fmt: skip
    with process_of([sys.executable, "-m", "gpuctl", *args]) as process:
        # the first node's cordon is the step in flight, or just done
        wait_until(lambda: process.poll() is not None or nodes(cluster)["gpu-0"].spec.unschedulable,
                   "gpu-0 cordoned", timeout=120)  # fmt: skip
        stderr = interrupt(process)
    assert process.returncode == 130, stderr
    after = nodes(cluster)
    assert after["gpu-0"].metadata.annotations["gpuctl.io/upgrade"] == "cordoned"
    for name in ("gpu-1", "gpu-2"):
        assert after[name].metadata.labels[STACK_LABEL] == "device-plugin"
        assert not after[name].spec.unschedulable

    code, data, result = migrate(cli, cluster, "dra")
    assert code == 0, result.output
    assert [(n["name"], n["resuming"], n["outcome"]) for n in data["migration"]["nodes"]] == [
        ("gpu-0", True, "migrated"),
        ("gpu-1", False, "migrated"),
        ("gpu-2", False, "migrated"),
    ]
    assert len(running(cluster)) == 3


def dra_plugin_logs(cluster: Any) -> dict[str, str]:
    """The DRA kubelet plugin's log on each node, read through the API as `kubectl logs` does."""
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(cluster.api_client())
    pods = core.list_namespaced_pod("dra-driver-nvidia-gpu").items
    return {
        pod.spec.node_name: core.read_namespaced_pod_log(pod.metadata.name, pod.metadata.namespace)
        for pod in pods
        if pod.status.phase == "Running"
    }


def test_time_slicing_is_carried_to_the_dra_gate_and_its_replicas_are_named(sim: Any, cli: Any) -> None:
    cluster = sim(scenario())
    code, _, result = run(cli, cluster, "--no-gate", "--sharing", "time-slicing", "--replicas", "2")
    assert code == 0, result.output
    code, data, result = migrate(cli, cluster, "dra", "--check")
    assert code == 0, result.output
    migration = data["migration"]
    assert migration["dra_feature_gates"] == ["TimeSlicingSettings"]
    (replicas,) = migration["not_carried"]
    assert replicas == (
        "time-slicing replicas (2 per GPU): DRA counts no replicas, a GPU goes to one claim, so each "
        "nvidia.com/gpu request gets a whole GPU (nvidia.com/gpu per node: gpu-0 8 -> 4, gpu-1 8 -> 4, "
        "gpu-2 8 -> 4)"
    )
    assert migration["carried"][1].startswith("time-slicing: the DRA driver's TimeSlicingSettings gate is on")
    assert [n["expected_gpus"] for n in migration["nodes"]] == [4, 4, 4]  # physical GPUs

    code, data, result = migrate(cli, cluster, "dra")
    assert code == 0, result.output
    assert [n["outcome"] for n in data["migration"]["nodes"]] == ["migrated"] * 3
    assert "not carried: time-slicing replicas (2 per GPU)" in result.stderr  # the plan, before the moves
    # the chart got the gate, and the kubelet plugin on every moved node runs with it on
    logs = dra_plugin_logs(cluster)
    assert sorted(logs) == ["gpu-0", "gpu-1", "gpu-2"]
    for log in logs.values():
        assert '"TimeSlicingSettings":true' in log, log
        assert '"MPSSupport":false' in log, log


def test_mps_is_carried_to_the_dra_drivers_mps_gate(sim: Any, cli: Any) -> None:
    cluster = sim(scenario())
    code, _, result = run(cli, cluster, "--no-gate", "--sharing", "mps", "--replicas", "2")
    assert code == 0, result.output
    code, data, result = migrate(cli, cluster, "dra", "--check")
    assert code == 0, result.output
    migration = data["migration"]
    assert migration["dra_feature_gates"] == ["MPSSupport"]
    assert migration["carried"][1].startswith("MPS: the DRA driver's MPSSupport gate is on")
    assert migration["not_carried"][0].startswith(
        "MPS replicas (2 per GPU) and their per-replica share of threads and memory: set per claim"
    )


def test_the_sims_own_device_plugin_moves_two_at_a_time_after_the_canary(sim: Any, cli: Any) -> None:
    cluster = sim({**scenario(), "devicePlugin": "installed"})
    wait_until(lambda: all(nodes(cluster)[f"gpu-{i}"].status.allocatable.get(GPU) == "4" for i in range(3)),
               "the device plugin serving every GPU node")  # fmt: skip
    code, data, result = migrate(cli, cluster, "dra", "--max-unavailable", "2")
    assert code == 0, result.output
    assert [(n["name"], n["batch"], n["outcome"]) for n in data["migration"]["nodes"]] == [
        ("gpu-0", 1, "migrated"),
        ("gpu-1", 2, "migrated"),
        ("gpu-2", 2, "migrated"),
    ]
    assert data["migration"]["removed"] == ["daemonset kube-system/nvidia-device-plugin-daemonset"]
    assert plugin_pods(cluster) == []


def test_a_cluster_that_serves_no_dra_is_refused(sim: Any, cli: Any) -> None:
    cluster = sim({**scenario(), "kubernetesVersion": "v1.33.4", "devicePlugin": "installed"})
    code, _, result = migrate(cli, cluster, "dra")
    assert code == 2, result.output
    assert result.stderr.startswith(
        "error: --stack dra --migrate: the API server does not serve resource.k8s.io"
    )
