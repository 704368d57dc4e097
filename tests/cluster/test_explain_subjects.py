"""`gpuctl explain pod/NAME | node/NAME` against the simulated cluster: pods made to fail the ways
the sim fails them (created with the real client), and the one cause explain names for each."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from tests.polling import wait_until

CUDA = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
GPU = "nvidia.com/gpu"


def gpu_pod(name: str, gpus: int, node: str, **spec: Any) -> dict[str, Any]:
    container = {
        "name": "nvidia-smi",
        "image": CUDA,
        "command": ["nvidia-smi"],
        "resources": {"limits": {GPU: str(gpus)}},
    }
    pod_spec = {
        "restartPolicy": "Never",
        "containers": [container],
        "nodeSelector": {"kubernetes.io/hostname": node},
        **spec,
    }
    return {"metadata": {"name": name}, "spec": pod_spec}


@pytest.fixture(scope="module")
def pods_cluster(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One cluster for the pod cases: a tainted node, a one-GPU node, a node whose containerd lost
    the nvidia runtime, a node whose driver was upgraded without a reboot; a pod failing on each."""
    from gpuctl.kube.client import load_api_client
    from gpuctl.sim.scenario import parse_scenario
    from gpuctl.sim.server.http_server import SimServer

    scenario = {
        "podStartSeconds": 0.05,
        "podRunSeconds": 0.05,
        "devicePlugin": "installed",
        "nodes": [
            {
                "name": "tainted",
                "gpus": 2,
                "taints": [{"key": GPU, "value": "present", "effect": "NoSchedule"}],
            },
            {"name": "small", "gpus": 1},
            {"name": "unconfigured", "gpus": 1, "host": {"toolkit": "unconfigured"}},
            {"name": "upgraded", "gpus": 1, "host": {"driver": "mismatch"}},
        ],
    }
    server = SimServer(parse_scenario(scenario, "scenario")).start()
    kubeconfig = server.write_kubeconfig(tmp_path_factory.mktemp("explain") / "kubeconfig")
    core = client.CoreV1Api(load_api_client(kubeconfig))
    wait_until(lambda: _allocatable(core, "upgraded") == "1", "the plugin to advertise on every node")
    runtime_class = {"metadata": {"name": "nvidia"}, "handler": "nvidia"}
    client.NodeV1Api(core.api_client).create_runtime_class(runtime_class)
    core.create_namespaced_pod("default", gpu_pod("untolerated", 1, "tainted"))
    core.create_namespaced_pod("default", gpu_pod("too-many", 2, "small"))
    core.create_namespaced_pod("default", gpu_pod("no-handler", 1, "unconfigured", runtimeClassName="nvidia"))
    core.create_namespaced_pod("default", gpu_pod("mismatch", 1, "upgraded"))
    wait_until(lambda: _phase(core, "mismatch") == "Failed", "the mismatch pod to fail")
    wait_until(lambda: _has_event(core, "no-handler", "FailedCreatePodSandBox"), "the sandbox event")
    wait_until(lambda: _has_event(core, "too-many", "FailedScheduling"), "the scheduler's event")
    yield kubeconfig
    server.stop()


def _allocatable(core: client.CoreV1Api, node: str) -> str | None:
    return (core.read_node(node).status.allocatable or {}).get(GPU)


def _phase(core: client.CoreV1Api, pod: str) -> str:
    return str(core.read_namespaced_pod(pod, "default").status.phase)


def _has_event(core: client.CoreV1Api, pod: str, reason: str) -> bool:
    events = core.list_namespaced_event("default", field_selector=f"involvedObject.name={pod}").items
    return any(event.reason == reason for event in events)


def _explained(cli: Any, *argv: Any) -> dict[str, Any]:
    result = cli("explain", *argv, "-o", "json")
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.mark.parametrize(
    ("pod", "signature", "evidence_source"),
    [
        ("untolerated", "sched.untolerated-gpu-taint", "event FailedScheduling"),
        ("too-many", "sched.insufficient-gpu", "event FailedScheduling"),
        ("no-handler", "runtime.no-nvidia-runtime", "event FailedCreatePodSandBox"),
        ("mismatch", "runtime.driver-mismatch", "container nvidia-smi terminated"),
    ],
)
def test_explain_pod_names_the_one_cause(
    pods_cluster: Any, cli: Any, pod: str, signature: str, evidence_source: str
) -> None:
    document = _explained(cli, f"pod/{pod}", "--kubeconfig", pods_cluster)
    assert document["subject"] == {"kind": "pod", "name": pod, "namespace": "default"}
    assert [match["id"] for match in document["matches"]] == [signature]
    assert document["evidence"][0]["source"] == evidence_source
    assert (
        document["evidence"][0]["text"] in document["matches"][0]["line"]
        or document["matches"][0]["line"] in document["evidence"][0]["text"]
    )


def test_explain_pod_table_prints_cause_fix_and_evidence(pods_cluster: Any, cli: Any) -> None:
    result = cli("explain", "pod/mismatch", "-n", "default", "--kubeconfig", pods_cluster)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "pod/mismatch in namespace default"
    assert lines[1].startswith("cause: ")
    assert "runtime.driver-mismatch" in lines[1]
    assert lines[2].startswith("fix:   reboot upgraded")
    assert "  container nvidia-smi terminated: StartError" in result.stdout
    assert "driver/library version mismatch" in result.stdout


def test_unknown_pod_and_node_exit_2_naming_them(pods_cluster: Any, cli: Any) -> None:
    pod = cli("explain", "pod/nope", "-n", "kube-system", "--kubeconfig", pods_cluster)
    assert pod.exit_code == 2
    assert "pod nope not found in namespace kube-system" in pod.stderr
    assert "kubectl get pods -n kube-system" in pod.stderr
    node = cli("explain", "node/nope", "--kubeconfig", pods_cluster)
    assert node.exit_code == 2
    assert "node nope not found" in node.stderr


def test_a_pod_without_n_is_looked_up_in_the_contexts_namespace(
    pods_cluster: Any, cli: Any, tmp_path: Any
) -> None:
    """kubectl's rule: no -n means the current context's namespace, and "default" only when the
    context names none."""
    import yaml

    document = yaml.safe_load(pods_cluster.read_text())
    for entry in document["contexts"]:
        entry["context"]["namespace"] = "ml"
    in_ml = tmp_path / "kubeconfig"
    in_ml.write_text(yaml.safe_dump(document))
    missing = cli("explain", "pod/mismatch", "--kubeconfig", in_ml)
    assert missing.exit_code == 2
    assert "pod mismatch not found in namespace ml" in missing.stderr
    found = _explained(cli, "pod/mismatch", "-n", "default", "--kubeconfig", in_ml)
    assert found["subject"]["namespace"] == "default"


def test_unreachable_cluster_exits_3(cli: Any, sim: Any) -> None:
    """Exit 3 with one line naming the server and the request that could not reach it, and a hint."""
    cluster = sim({"nodes": [{"name": "g", "gpus": 1}]})
    url = cluster.url
    cluster.server.stop()
    result = cli("explain", "node/g", "--kubeconfig", cluster.kubeconfig)
    assert result.exit_code == 3, result.output
    first, hint = result.stderr.splitlines()
    assert first.startswith(f"error: cannot reach the cluster at {url} (get node g): "), first
    assert hint.startswith("hint: ")
    assert "kubectl cluster-info" in hint
    assert result.stdout == ""
    assert "Traceback" not in result.output


def test_explain_node_names_a_crash_looping_plugins_cause_from_its_log(sim: Any, cli: Any) -> None:
    """Two MIG profiles on a node whose plugin runs the single strategy: the plugin exits at start-up
    (CrashLoopBackOff) and its log says why."""
    cluster = sim({
        "podStartSeconds": 0.05,
        "devicePlugin": "installed",
        "nodes": [{"name": "mig", "gpus": 2, "mig": {"1g.10gb": 3, "2g.20gb": 2}}],
    })  # fmt: skip
    core, _ = _plugin_on_the_single_strategy(cluster)

    def crash_looping() -> bool:
        for pod in core.list_namespaced_pod("kube-system").items:
            for status in pod.status.container_statuses or []:
                if status.state.waiting and status.state.waiting.reason == "CrashLoopBackOff":
                    return True
        return False

    wait_until(crash_looping, "the plugin to crash-loop")
    document = _explained(cli, "node/mig", "--kubeconfig", cluster.kubeconfig)
    assert document["subject"] == {"kind": "node", "name": "mig", "namespace": ""}
    assert [match["id"] for match in document["matches"]] == ["plugin.mig-mixed-types"]
    first = document["evidence"][0]
    assert first["source"].startswith("pod kube-system/")
    assert first["source"].endswith(" log")
    assert "more than one MIG device type present" in first["text"]
    assert any("CrashLoopBackOff" in line["text"] for line in document["evidence"])


def test_explain_a_node_without_gpus_says_so_instead_of_diagnosing_a_gpu_stack(sim: Any, cli: Any) -> None:
    """A CPU node where the device plugin DaemonSet runs too (no nodeSelector): the plugin's NVML
    error there is what every CPU node shows, not a broken toolkit. The answer is one line saying
    the node has no GPUs, exit 0; a GPU node is still diagnosed."""
    cluster = sim({
        "podStartSeconds": 0.05,
        "devicePlugin": "installed",
        "nodes": [{"name": "gpu-0", "gpus": 1}, {"name": "cpu-0"}],
    })  # fmt: skip
    core = client.CoreV1Api(cluster.api_client())

    def plugin_running_on_cpu_node() -> bool:
        pods = core.list_namespaced_pod("kube-system", field_selector="spec.nodeName=cpu-0").items
        return any(pod.status.phase == "Running" for pod in pods)

    wait_until(plugin_running_on_cpu_node, "the device plugin running on cpu-0")
    document = _explained(cli, "node/cpu-0", "--kubeconfig", cluster.kubeconfig)
    assert document["matches"] == []
    assert document["note"].startswith("node cpu-0 has no GPUs (no nvidia.com/gpu capacity"), document
    assert "gpuctl explain node/cpu-0 --inventory INVENTORY" in document["note"]
    table = cli("explain", "node/cpu-0", "--kubeconfig", cluster.kubeconfig)
    assert table.exit_code == 0
    assert table.stdout.splitlines()[1].startswith("node cpu-0 has no GPUs")
    assert "cause:" not in table.stdout
    assert _explained(cli, "node/gpu-0", "--kubeconfig", cluster.kubeconfig)["note"] == ""


def _plugin_on_the_single_strategy(cluster: Any) -> tuple[client.CoreV1Api, str]:
    """Switch the device plugin DaemonSet to the single MIG strategy (a node with two MIG profiles
    then makes it exit at start-up); the core API for the test's own reads, the plugin's container."""
    api = cluster.api_client()
    apps = client.AppsV1Api(api)
    (plugin,) = apps.list_namespaced_daemon_set("kube-system").items
    container = plugin.spec.template.spec.containers[0].name
    env = {"name": "MIG_STRATEGY", "value": "single"}
    patch = {"spec": {"template": {"spec": {"containers": [{"name": container, "env": [env]}]}}}}
    apps.patch_namespaced_daemon_set(plugin.metadata.name, "kube-system", patch)
    return client.CoreV1Api(api), container


def test_explain_text_keeps_its_json_refuses_cluster_options_and_ignores_n(tmp_path: Any, cli: Any) -> None:
    log = tmp_path / "plugin.log"
    log.write_text("Incompatible strategy detected auto\n")
    document = _explained(cli, log)
    assert document["subject"] is None
    assert document["evidence"] == []
    assert [match["id"] for match in document["matches"]] == ["plugin.incompatible-strategy"]
    refused = cli("explain", log, "--context", "prod")
    assert refused.exit_code == 2
    assert "--context applies to `gpuctl explain pod/NAME`" in refused.stderr
    # -n is context, as in kubectl: a text has no namespace, so it is ignored
    assert _explained(cli, log, "-n", "default") == document


def test_explain_pod_reads_a_restarted_containers_previous_log(sim: Any, cli: Any) -> None:
    """A device plugin that exits at start-up (two MIG profiles under the single strategy) and is
    restarted: explain reads its last terminated run's log, as `kubectl logs --previous` does; the
    sim refuses `previous` for a container that never terminated, with the kubelet's words."""
    cluster = sim({
        "podStartSeconds": 0.05,
        "devicePlugin": "installed",
        "nodes": [
            {"name": "mig", "gpus": 2, "mig": {"1g.10gb": 3, "2g.20gb": 2}},
            {"name": "plain", "gpus": 1},
        ],
    })  # fmt: skip
    core, container = _plugin_on_the_single_strategy(cluster)

    def plugin_pod(node: str) -> Any:
        pods = core.list_namespaced_pod("kube-system").items
        return next((pod for pod in pods if pod.spec.node_name == node), None)

    def restarted() -> bool:
        pod = plugin_pod("mig")
        statuses = (pod.status.container_statuses or []) if pod else []
        return any(s.restart_count and s.last_state.terminated for s in statuses)

    wait_until(restarted, "the plugin to fail and be restarted")
    name = plugin_pod("mig").metadata.name
    previous = core.read_namespaced_pod_log(name, "kube-system", container=container, previous=True)
    assert "more than one MIG device type present" in previous
    document = _explained(cli, f"pod/{name}", "-n", "kube-system", "--kubeconfig", cluster.kubeconfig)
    assert [match["id"] for match in document["matches"]] == ["plugin.mig-mixed-types"]
    sources = [line["source"] for line in document["evidence"]]
    assert f"container {container} previous log" in sources, sources

    wait_until(lambda: plugin_pod("plain") is not None, "the plugin pod on the plain node")
    running = plugin_pod("plain").metadata.name
    with pytest.raises(client.ApiException) as refused:
        core.read_namespaced_pod_log(running, "kube-system", container=container, previous=True)
    assert refused.value.status == 400
    assert "previous terminated container" in refused.value.body
