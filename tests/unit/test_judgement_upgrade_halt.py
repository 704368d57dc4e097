"""The upgrade's halt rule (gpuctl.core.upgrade.run) against the simulated cluster: every step on
every node of a batch, the first step that does not pass stops the upgrade there with later
batches untouched, and the host phase's verdict per host. The host phase is handed in as the
upgrade takes it (UpgradeContext.run_hosts: one run per batch, limited to its hosts); its result
is what gpuctl.core.bootstrap.host reports for such a run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpuctl.core.bootstrap.host import BootstrapResult, HostOutcome
from gpuctl.core.stacks import Stack
from gpuctl.core.upgrade.model import NodePlan, UpgradeOptions, UpgradePlan
from gpuctl.core.upgrade.run import UpgradeContext, run_upgrade
from gpuctl.core.verify.model import ProofOptions
from gpuctl.hosts.driver_state import DriverState
from gpuctl.hosts.events import FailedTask
from tests.polling import wait_until

STEPS = ["cordon", "drain", "host", "reboot", "ready", "verify", "uncordon"]


def plan(*names: str) -> UpgradePlan:
    nodes = tuple(
        NodePlan(host=name, node=name, batch=index + 1, changes=("driver",), evict=(), refused=(),
                 cordoned_before=False, expected_gpus=2)
        for index, name in enumerate(names)
    )  # fmt: skip
    return UpgradePlan(nodes=nodes, unchanged=(), max_unavailable=1)


def host_run(
    hosts: str, failed: tuple[FailedTask, ...] = (), *, interrupted: bool = False
) -> BootstrapResult:
    names = hosts.split(",")
    outcomes = tuple(
        HostOutcome(name, 12, 3, int(any(task.host == name for task in failed)), 0, 4,
                    driver=DriverState("working", "driver 580.159.04 loaded"))
        for name in names
    )  # fmt: skip
    status = "failed" if failed else "successful"
    return BootstrapResult(
        "host", False, "inventory.yml", "site.yml", status, outcomes, failed, 1.0, interrupted
    )


def context(cluster: Any, run_hosts: Callable[[str], BootstrapResult]) -> UpgradeContext:
    return UpgradeContext(
        api_client=cluster.api_client(),
        options=UpgradeOptions(drain_timeout_s=30.0),
        run_hosts=run_hosts,
        stack=Stack.DEVICE_PLUGIN,
        proof=ProofOptions(),
        gate=False,
        timeout_s=60.0,
        should_stop=lambda: False,
    )


def two_nodes(sim: Any) -> Any:
    cluster = sim(
        {
            "podStartSeconds": 0.05,
            "devicePlugin": "installed",
            "nodes": [{"name": "gpu-0", "gpus": 2}, {"name": "gpu-1", "gpus": 2}],
        }
    )
    wait_until(lambda: cluster.allocatable_gpus() == {"gpu-0": 2, "gpu-1": 2}, "GPUs advertised")
    return cluster


def steps_of(result: Any, node: str) -> list[tuple[str, str, str]]:
    (found,) = [each for each in result.nodes if each.plan.node == node]
    return [(step.step, step.status, step.message) for step in found.steps]


def test_every_step_passes_node_by_node(sim: Any) -> None:
    cluster = two_nodes(sim)
    asked: list[str] = []

    def run_hosts(hosts: str) -> BootstrapResult:
        asked.append(hosts)
        return host_run(hosts)

    result = run_upgrade(plan("gpu-0", "gpu-1"), context(cluster, run_hosts))
    assert asked == ["gpu-0", "gpu-1"]  # one host run per batch
    assert result.ok
    assert not result.interrupted
    assert len(result.host_runs) == 2
    for node in ("gpu-0", "gpu-1"):
        assert steps_of(result, node) == [
            ("cordon", "ok", "cordoned"),
            ("drain", "ok", "evicted 0 pod(s)"),
            ("host", "ok", "3 change(s)"),
            ("reboot", "ok", "driver 580.159.04 loaded"),
            ("ready", "ok", "Ready, 2 GPU(s) advertised"),
            ("verify", "ok", "proven at level smi: 2 GPU(s) seen"),
            ("uncordon", "ok", "uncordoned"),
        ]
    assert all(step.seconds >= 0 for node in result.nodes for step in node.steps)


def test_a_failed_host_task_halts_the_upgrade_with_the_node_cordoned(sim: Any) -> None:
    cluster = two_nodes(sim)
    task = FailedTask(
        "gpu-0", "nvidia_driver : install the driver package", "No package matching 'nvidia-driver-999'"
    )
    result = run_upgrade(plan("gpu-0", "gpu-1"), context(cluster, lambda hosts: host_run(hosts, (task,))))
    assert not result.ok
    assert steps_of(result, "gpu-0") == [
        ("cordon", "ok", "cordoned"),
        ("drain", "ok", "evicted 0 pod(s)"),
        ("host", "failed", "task 'nvidia_driver : install the driver package' failed on gpu-0: "
                           "No package matching 'nvidia-driver-999'"),
    ]  # fmt: skip
    (first,) = [each for each in result.nodes if each.plan.node == "gpu-0"]
    assert first.steps[-1].hint == "see the failed task above"
    assert first.outcome == "failed"
    assert steps_of(result, "gpu-1") == []  # the next batch is not touched
    from kubernetes.client import CoreV1Api

    api = cluster.api_client()
    nodes = [api.sanitize_for_serialization(item) for item in CoreV1Api(api).list_node().items]
    cordoned = {node["metadata"]["name"]: bool(node["spec"].get("unschedulable")) for node in nodes}
    assert cordoned == {"gpu-0": True, "gpu-1": False}


def test_a_host_run_that_stopped_or_failed_without_a_task(sim: Any) -> None:
    cluster = two_nodes(sim)
    interrupted = run_upgrade(
        plan("gpu-0"), context(cluster, lambda hosts: host_run(hosts, interrupted=True))
    )
    assert steps_of(interrupted, "gpu-0")[2] == ("host", "failed", "host phase on gpu-0 interrupted")

    def unreachable(hosts: str) -> BootstrapResult:
        run = host_run(hosts)
        return BootstrapResult("host", False, "inventory.yml", "site.yml", "failed", run.hosts, (), 1.0,
                               error="ERROR! the role 'nvidia_driver' was not found")  # fmt: skip

    errored = run_upgrade(plan("gpu-1"), context(cluster, unreachable))
    assert steps_of(errored, "gpu-1")[2] == (
        "host",
        "failed",
        "host phase on gpu-1 failed: ERROR! the role 'nvidia_driver' was not found",
    )


def test_a_reboot_left_pending_is_said_and_the_proof_decides(sim: Any) -> None:
    cluster = two_nodes(sim)
    pending = DriverState("reboot_required", "driver 580.159.04 installed, 570.86.15 still loaded", True)

    def run_hosts(hosts: str) -> BootstrapResult:
        run = host_run(hosts)
        (outcome,) = run.hosts
        held = HostOutcome(outcome.name, 12, 3, 0, 0, 4, driver=pending)
        return BootstrapResult("host", False, "inventory.yml", "site.yml", "successful", (held,), (), 1.0)

    result = run_upgrade(plan("gpu-0"), context(cluster, run_hosts))
    assert steps_of(result, "gpu-0")[3] == (
        "reboot",
        "ok",
        "not rebooted (driver 580.159.04 installed, 570.86.15 still loaded; gpuctl_reboot_policy does not "
        "reboot it): the proof decides",
    )
    assert result.ok
