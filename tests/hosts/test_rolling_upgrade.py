"""A toolkit pin bumped on a live cluster goes node by node: two test hosts back two sim nodes that
run a user's GPU Deployment (`sleep infinity`, on the hosts themselves) under a PodDisruptionBudget
of minAvailable 1 across both. The API keeps answering within a second throughout, and an evicted
pod's command is stopped on its host; `sim down` stops the rest. The bump,
`bootstrap --phase all`, upgrades one node at a time (never both unschedulable), evicts through the
Eviction API within the budget and proves each node before it opens, and its verify phase passes
while the user's pods hold every GPU again; a second run changes nothing; `--check` lists the plan
and changes nothing; Ctrl-C during a drain the budget holds up stops there (130), that node
cordoned; a pin that cannot be installed stops at the first node, cordoned, the second untouched,
with the command to resume, and the rerun finishes both.

One module fixture, tests in file order (each builds on the state the previous left).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.defaults import GPU_TAINT_KEY
from gpuctl.kube.upgrade_marks import UPGRADE_ANNOTATION
from gpuctl.package_data import default_toolkit_version
from tests.hosts.conftest import skip_without_host_requirements
from tests.hosts.nodes import TestNode, down, node_exec, up
from tests.interrupt import running
from tests.kubectl import KUBECTL
from tests.polling import wait_until

pytestmark = [pytest.mark.hosts, pytest.mark.slow]
GPUS = 2
OLDER_TOOLKIT = "1.16.2-1"  # in the test mirror (tests/hosts/test_pins.py)
MISSING_TOOLKIT = "0.0.1-1"  # in no mirror: apt cannot install it
CPU_ONLY = {"podStartSeconds": 0.2, "devicePlugin": "absent", "nodes": [{"name": "cpu-0"}]}
APP = "trainer"
SLEEP = ["sleep", "infinity"]  # the commonest placeholder workload: it runs on its host until stopped


def gpuctl(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[TestNode], Path, Path]]:
    """Two hosts bootstrapped at the older toolkit pin, proven, backing two sim nodes."""
    skip_without_host_requirements()
    work = tmp_path_factory.mktemp("rolling-upgrade")
    inventory = work / "hosts.yml"
    nodes = up(nodes=2, gpus=GPUS, inventory=inventory)
    scenario = work / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(CPU_ONLY))
    kubeconfig = work / "sim.kubeconfig"
    try:
        started = gpuctl(
            "sim", "up", "--detach", "--scenario", str(scenario), "--hosts-from", str(inventory),
            "--kubeconfig", str(kubeconfig),
        )  # fmt: skip
        assert started.returncode == 0, started.stderr
        code, report, stderr = bootstrap_all(inventory, kubeconfig, toolkit=OLDER_TOOLKIT, phase="all")
        assert code == 0, (json.dumps(report)[:4000], stderr[-3000:])
        assert report["upgrade"] is None  # bare nodes serve nothing yet: bootstrapped as before
        yield nodes, inventory, kubeconfig
    finally:
        gpuctl("sim", "down", "--kubeconfig", str(kubeconfig))
        down(inventory)


def bootstrap_all(
    inventory: Path, kubeconfig: Path, *, toolkit: str | None = None, check: bool = False, phase: str = "host"
) -> tuple[int, dict[str, Any], str]:
    """`bootstrap --phase PHASE` with the cluster's kubeconfig: node by node where nodes serve GPUs."""
    result = gpuctl(*bootstrap_argv(inventory, kubeconfig, toolkit=toolkit, check=check, phase=phase))
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout), result.stderr


def bootstrap_argv(
    inventory: Path, kubeconfig: Path, *, toolkit: str | None = None, check: bool = False, phase: str = "host"
) -> list[str]:
    argv = ["bootstrap", "--phase", phase, "-i", str(inventory), "--kubeconfig", str(kubeconfig),
            "--drain-timeout", "120", "--timeout", "120", "-o", "json"]  # fmt: skip
    if check:
        argv.append("--check")
    if toolkit:
        argv += ["--", "-e", f"gpuctl_toolkit_version={toolkit}"]
    return argv


def core(kubeconfig: Path) -> Any:
    from kubernetes.client import CoreV1Api

    from gpuctl.kube.client import load_api_client

    return CoreV1Api(load_api_client(kubeconfig))


def node_states(kubeconfig: Path, nodes: list[TestNode]) -> dict[str, tuple[bool, str]]:
    """Each host's node → (cordoned, its upgrade annotation)."""
    read = {node.metadata.name: node for node in core(kubeconfig).list_node().items}
    return {
        n.name: (
            bool(read[n.name].spec.unschedulable),
            (read[n.name].metadata.annotations or {}).get(UPGRADE_ANNOTATION, ""),
        )
        for n in nodes
    }


def running_pods(kubeconfig: Path) -> list[Any]:
    pods = core(kubeconfig).list_namespaced_pod("default", label_selector=f"app={APP}").items
    return [p for p in pods if p.status.phase == "Running" and p.metadata.deletion_timestamp is None]


def deploy_workload(kubeconfig: Path) -> None:
    """Two pods each holding all of a node's GPUs (so one per node), and a budget of one."""
    from kubernetes.client import AppsV1Api, PolicyV1Api

    from gpuctl.kube.client import load_api_client

    api_client = load_api_client(kubeconfig)
    limits = {"nvidia.com/gpu": str(GPUS)}
    container = {
        "name": "app",
        "image": "busybox:1.36",
        "command": SLEEP,
        "resources": {"limits": limits},
    }
    tolerations = [{"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]
    template = {
        "metadata": {"labels": {"app": APP}},
        "spec": {"containers": [container], "tolerations": tolerations},
    }
    spec = {"replicas": 2, "selector": {"matchLabels": {"app": APP}}, "template": template}
    deployment: Any = {"metadata": {"name": APP}, "spec": spec}  # the client takes a dict as its model
    AppsV1Api(api_client).create_namespaced_deployment("default", deployment)
    budget: Any = {"metadata": {"name": APP}, "spec": {"minAvailable": 1, "selector": spec["selector"]}}
    PolicyV1Api(api_client).create_namespaced_pod_disruption_budget("default", budget)
    wait_until(lambda: len(running_pods(kubeconfig)) == 2, "both pods of the Deployment running")


def host_sleeps(node: TestNode) -> int:
    """How many of the workload's commands run on the node's host."""
    code, out, err = node_exec(node, ["ps", "-eo", "args="])
    assert code == 0, err
    return sum(line.strip() == " ".join(SLEEP) for line in out.splitlines())


def set_budget(kubeconfig: Path, min_available: int) -> None:
    from kubernetes.client import PolicyV1Api

    from gpuctl.kube.client import load_api_client

    body = {"spec": {"minAvailable": min_available}}
    PolicyV1Api(load_api_client(kubeconfig)).patch_namespaced_pod_disruption_budget(APP, "default", body)


class Watch:
    """Samples, while a command runs, how many nodes are cordoned and how many user pods run, and
    how long listing the pods takes: the API's answer, over the client's kept connection and to
    `kubectl get pods` (the request's own time, as kubectl -v=6 logs it, and the whole process)."""

    def __init__(self, kubeconfig: Path, nodes: list[TestNode]) -> None:
        self.kubeconfig, self.nodes = kubeconfig, nodes
        self.cordoned: list[int] = []
        self.running: list[int] = []
        self.answers: list[float] = []  # seconds per pod list over the client's kept connection
        self.kubectl: list[float] = []  # seconds per `kubectl get pods`, process start included
        self.kubectl_answers: list[float] = []  # seconds per pod list request of those runs
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._sample, daemon=True)]
        if KUBECTL:
            self._threads.append(threading.Thread(target=self._sample_kubectl, daemon=True))

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            states = node_states(self.kubeconfig, self.nodes)
            self.cordoned.append(sum(cordoned for cordoned, _ in states.values()))
            started = time.monotonic()
            self.running.append(len(running_pods(self.kubeconfig)))
            self.answers.append(time.monotonic() - started)

    def _sample_kubectl(self) -> None:
        argv = [KUBECTL, "--kubeconfig", str(self.kubeconfig), "get", "pods", "--request-timeout=30s", "-v=6"]
        while not self._stop.wait(1.0):
            started = time.monotonic()
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
            self.kubectl.append(time.monotonic() - started)
            assert done.returncode == 0, done.stderr
            # -v=6: `"Response" verb="GET" url=".../pods?limit=500..." status="200 OK" milliseconds=2`
            answer = re.search(r'url="[^"]*/pods\?[^"]*" status="200 OK" milliseconds=(\d+)', done.stderr)
            assert answer, done.stderr[-2000:]
            self.kubectl_answers.append(int(answer.group(1)) / 1000)

    def __enter__(self) -> Watch:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()


def test_a_toolkit_bump_upgrades_one_node_at_a_time_within_the_budget(cluster: Any) -> None:
    nodes, inventory, kubeconfig = cluster
    deploy_workload(kubeconfig)
    assert [host_sleeps(node) for node in nodes] == [1, 1]  # each pod's command runs on its host
    with Watch(kubeconfig, nodes) as watch:
        code, report, stderr = bootstrap_all(
            inventory, kubeconfig, toolkit=default_toolkit_version(), phase="all"
        )
    assert code == 0, (json.dumps(report["phases"]), json.dumps(report["verify"])[:3000], stderr[-3000:])
    upgrade = report["upgrade"]
    assert [(n["name"], n["batch"], n["outcome"]) for n in upgrade["nodes"]] == [
        (nodes[0].name, 1, "upgraded"),
        (nodes[1].name, 2, "upgraded"),
    ]
    for node in upgrade["nodes"]:
        steps = [(step["step"], step["status"]) for step in node["steps"]]
        # Proven before it opens: verify passed, then the uncordon.
        assert steps[-2:] == [("verify", "ok"), ("uncordon", "ok")], steps
        assert node["changes"], node
    assert max(watch.cordoned) == 1  # never both nodes unschedulable
    assert min(watch.running) >= 1  # the budget held throughout
    # The hosts ran the pods' commands the whole time, and the API never waited on them.
    print(f"pod list: max {max(watch.answers):.3f} s of {len(watch.answers)}; kubectl get pods: "
          f"max {max(watch.kubectl_answers, default=0):.3f} s of {len(watch.kubectl_answers)}, "
          f"process max {max(watch.kubectl, default=0):.3f} s")  # fmt: skip
    assert max(watch.answers) < 1.0, sorted(watch.answers)[-5:]
    assert max(watch.kubectl_answers, default=0.0) < 1.0, sorted(watch.kubectl_answers)[-5:]
    # The whole process too, with room for kubectl's own start on a loaded machine (over a second
    # at times with three test runs side by side): a request left waiting would show here.
    assert max(watch.kubectl, default=0.0) < 10.0, sorted(watch.kubectl)[-5:]
    assert "evicted 1 pod(s)" in upgrade["nodes"][0]["steps"][1]["message"]
    assert node_states(kubeconfig, nodes) == {n.name: (False, "") for n in nodes}
    wait_until(lambda: len(running_pods(kubeconfig)) == 2, "both pods of the Deployment running again")
    # The evicted pods' commands were stopped on their hosts; their replacements' run there.
    wait_until(lambda: [host_sleeps(node) for node in nodes] == [1, 1], "one sleep per host")
    # The verify phase after it found the user's pods back on both nodes, holding every GPU: busy,
    # not failed (each node was proven before it was uncordoned).
    verified = {node["name"]: node for node in report["verify"]["nodes"]}
    assert all(node["ok"] for node in verified.values()), report["verify"]
    assert [phase["name"] for phase in report["phases"]] == ["host", "cluster", "verify"]


def test_a_second_run_changes_nothing(cluster: Any) -> None:
    _, inventory, kubeconfig = cluster
    code, report, stderr = bootstrap_all(inventory, kubeconfig, toolkit=default_toolkit_version())
    assert code == 0, stderr[-3000:]
    assert report["upgrade"]["nodes"] == []
    assert [host["changed"] for host in report["hosts"]] == [0, 0]


def test_check_lists_the_plan_and_changes_nothing(cluster: Any) -> None:
    nodes, inventory, kubeconfig = cluster
    code, report, stderr = bootstrap_all(inventory, kubeconfig, toolkit=OLDER_TOOLKIT, check=True)
    assert code == 0, stderr[-3000:]
    planned = report["upgrade"]["nodes"]
    assert [(n["name"], n["batch"], n["outcome"]) for n in planned] == [
        (nodes[0].name, 1, "planned"),
        (nodes[1].name, 2, "planned"),
    ]
    assert all(len(n["evict"]) == 1 and n["refused"] == [] for n in planned)
    assert node_states(kubeconfig, nodes) == {n.name: (False, "") for n in nodes}
    again = bootstrap_all(inventory, kubeconfig, toolkit=default_toolkit_version())
    assert again[1]["upgrade"]["nodes"] == []  # the check installed nothing


def test_ctrl_c_during_a_drain_stops_there_with_the_node_cordoned(cluster: Any) -> None:
    """A budget that allows no disruption holds the first drain up; Ctrl-C then ends the run
    (130) after the step in flight, that node cordoned and marked, the other untouched. The next
    test's runs resume it."""
    nodes, inventory, kubeconfig = cluster
    set_budget(kubeconfig, 2)
    try:
        argv = [sys.executable, "-m", "gpuctl", *bootstrap_argv(inventory, kubeconfig, toolkit=OLDER_TOOLKIT)]
        with running(argv) as process:
            wait_until(
                lambda: node_states(kubeconfig, nodes)[nodes[0].name] == (True, "cordoned"),
                "the first node cordoned for its drain",
                timeout=300,
            )
            time.sleep(2)  # its eviction refused (429) and retried
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=60)
    finally:
        set_budget(kubeconfig, 1)
    assert process.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr
    report = json.loads(stdout)
    first, second = report["upgrade"]["nodes"]
    assert first["outcome"] == "interrupted", first
    assert [step["step"] for step in first["steps"]] == ["cordon", "drain"]
    assert (second["outcome"], second["steps"]) == ("pending", [])
    assert node_states(kubeconfig, nodes) == {nodes[0].name: (True, "cordoned"), nodes[1].name: (False, "")}
    assert report["resume"].startswith(f"gpuctl bootstrap --phase host -i {inventory}")
    assert len(running_pods(kubeconfig)) == 2  # the budget held: nothing was evicted


def test_a_pin_that_cannot_be_installed_stops_at_the_first_node(cluster: Any) -> None:
    nodes, inventory, kubeconfig = cluster
    code, report, stderr = bootstrap_all(inventory, kubeconfig, toolkit=MISSING_TOOLKIT)
    assert code == 1, stderr[-3000:]
    first, second = report["upgrade"]["nodes"]
    assert (first["outcome"], first["steps"][-1]["step"], first["steps"][-1]["status"]) == (
        "failed",
        "host",
        "failed",
    )
    assert (second["outcome"], second["steps"]) == ("pending", [])
    assert node_states(kubeconfig, nodes) == {nodes[0].name: (True, "cordoned"), nodes[1].name: (False, "")}
    assert report["resume"].startswith(f"gpuctl bootstrap --phase host -i {inventory}")
    assert MISSING_TOOLKIT in first["steps"][-1]["message"] + first["steps"][-1]["hint"], first["steps"][-1]

    code, report, stderr = bootstrap_all(inventory, kubeconfig, toolkit=default_toolkit_version())
    assert code == 0, stderr[-3000:]
    resumed = [(n["name"], n["resuming"], n["outcome"]) for n in report["upgrade"]["nodes"]]
    assert resumed[0] == (nodes[0].name, True, "upgraded")  # the stopped node first, finished
    assert {outcome for _, _, outcome in resumed} == {"upgraded"}
    assert node_states(kubeconfig, nodes) == {n.name: (False, "") for n in nodes}


def test_a_pod_on_a_host_ends_as_its_command_does(cluster: Any) -> None:
    """A command that ends gives its pod the host's exit code and output; one that outlives its
    pod's activeDeadlineSeconds is stopped on the host."""
    nodes, _, kubeconfig = cluster
    api = core(kubeconfig)
    wait_until(lambda: len(running_pods(kubeconfig)) == 2, "both pods of the Deployment running")
    wait_until(lambda: [host_sleeps(node) for node in nodes] == [1, 1], "one sleep per host")
    script = "echo to stdout; echo to stderr >&2; exit 3"
    api.create_namespaced_pod("default", host_pod("ends", nodes[0], ["sh", "-c", script]))
    api.create_namespaced_pod("default", host_pod("outlives", nodes[0], SLEEP, activeDeadlineSeconds=2))

    def ended(name: str) -> Any:
        pod = api.read_namespaced_pod(name, "default")
        return pod if pod.status.phase in ("Succeeded", "Failed") else None

    done = wait_until(lambda: ended("ends"), "the pod whose command ends", timeout=30)
    assert done.status.container_statuses[0].state.terminated.exit_code == 3
    assert api.read_namespaced_pod_log("ends", "default") == "to stdout\nto stderr\n"
    assert (
        wait_until(lambda: ended("outlives"), "its deadline", timeout=30).status.reason == "DeadlineExceeded"
    )
    wait_until(lambda: host_sleeps(nodes[0]) == 1, "the sleep past its deadline stopped on the host")
    for name in ("ends", "outlives"):
        api.delete_namespaced_pod(name, "default")


def host_pod(name: str, node: TestNode, argv: list[str], **spec: Any) -> Any:
    container = {"name": "c", "image": "busybox:1.36", "command": argv}
    spec |= {"nodeName": node.name, "restartPolicy": "Never", "containers": [container]}
    return {"metadata": {"name": name}, "spec": {"tolerations": [{"operator": "Exists"}], **spec}}


def test_sim_down_stops_what_its_pods_run_on_the_hosts(cluster: Any) -> None:
    nodes, _, kubeconfig = cluster
    assert [host_sleeps(node) for node in nodes] == [1, 1]
    stopped = gpuctl("sim", "down", "--kubeconfig", str(kubeconfig))
    assert stopped.returncode == 0, stopped.stderr
    assert [host_sleeps(node) for node in nodes] == [0, 0]
