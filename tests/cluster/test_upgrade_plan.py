"""The host phase's node-by-node upgrade against the simulated cluster, with a real ansible-playbook
on this machine standing in for the host layer (a pin written per host, as the roles write a
package pin): the plan from check mode (order, canary, batches, changes, the pods each drain
evicts and refuses) writing nothing; the run node by node under a PodDisruptionBudget; the first
failure stopping with that node cordoned and marked, and a rerun finishing it; a node cordoned
before gpuctl staying cordoned."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.core.bootstrap import BootstrapRequest, run_bootstrap
from gpuctl.core.bootstrap.phases import BootstrapRun
from gpuctl.core.bootstrap.reboots import host_reboot_plan
from gpuctl.core.render_options import RenderOptions
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.base import ClusterOptions
from gpuctl.core.upgrade import UpgradeOptions
from gpuctl.core.upgrade.phase import UpgradeHooks
from gpuctl.core.upgrade.plan import serving_nodes
from gpuctl.kube.upgrade_marks import UPGRADE_ANNOTATION
from gpuctl.report import bootstrap as report
from tests.cluster.test_drain import NAMESPACE, Cluster
from tests.cluster.test_json_schemas import _assert_valid as assert_valid
from tests.cluster.test_verify_dra import dra_scenario
from tests.polling import wait_until

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [{"name": "gpu-{i}", "count": 3, "gpus": 1}],
}
NODES = ("gpu-0", "gpu-1", "gpu-2")
# The host layer of these tests: one pin per host, as the roles pin a package version; a host
# with `pin_unavailable` refuses it outside check mode, as apt refuses a version it cannot find.
PLAYBOOK = """\
- name: Pin
  hosts: gpu_nodes
  gather_facts: false
  tasks:
    - name: Pin | write
      ansible.builtin.copy:
        dest: "{{ pin_dir }}/{{ inventory_hostname }}.pin"
        content: "{{ pin }}\\n"
        mode: "0600"
    - name: Pin | refuse
      ansible.builtin.fail:
        msg: "pin {{ pin }} cannot be installed on {{ inventory_hostname }}"
      when: (pin_unavailable | default(false)) and not ansible_check_mode
"""


class Hosts:
    """Three local hosts named like the sim's nodes, their pins, and the host playbook."""

    def __init__(self, tmp_path: Path, pin: str = "2") -> None:
        self.dir = tmp_path / "pins"
        self.dir.mkdir()
        self.playbook = tmp_path / "pin.yml"
        self.playbook.write_text(PLAYBOOK)
        self.inventory = tmp_path / "hosts.yml"
        self.write(pin)

    def write(self, pin: str, **per_host: dict[str, Any]) -> None:
        local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
        hosts = {name: {**local, **per_host.get(name.replace("-", "_"), {})} for name in NODES}
        group = {"hosts": hosts, "vars": {"pin": pin, "pin_dir": str(self.dir)}}
        self.inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": group}}}))

    def pin(self, host: str) -> str:
        path = self.dir / f"{host}.pin"
        return path.read_text().strip() if path.exists() else ""

    def set_pin(self, host: str, pin: str) -> None:
        path = self.dir / f"{host}.pin"
        path.write_text(f"{pin}\n")
        path.chmod(0o600)


def bootstrap(
    cluster: Any,
    hosts: Hosts,
    *,
    check: bool = False,
    hooks: UpgradeHooks | None = None,
    stack: Stack = Stack.DEVICE_PLUGIN,
    api_client: Any = None,
) -> BootstrapRun:
    api_client = api_client or cluster.api_client()
    request = BootstrapRequest(
        phase="host",
        inventory=hosts.inventory,
        check=check,
        cluster=ClusterOptions(render=RenderOptions(stack=stack)),
        host_options={"playbook": hosts.playbook},
        verify_timeout_s=60,
        upgrade=UpgradeOptions(drain_timeout_s=30),
    )
    plan = host_reboot_plan(api_client, hosts.inventory)
    return run_bootstrap(request, api_client, reboot_plan=plan, upgrade_hooks=hooks)


def node_states(cluster: Cluster) -> dict[str, tuple[bool, str]]:
    """node → (cordoned, its upgrade annotation)."""
    return {
        node.metadata.name: (
            bool(node.spec.unschedulable),
            (node.metadata.annotations or {}).get(UPGRADE_ANNOTATION, ""),
        )
        for node in cluster.core.list_node().items
    }


def settled(cluster: Cluster, app: str, count: int) -> None:
    wait_until(lambda: len(cluster.running(app)) == count, f"{count} running pod(s) of {app}")


def test_check_prints_the_plan_and_writes_nothing(sim: Any, tmp_path: Path) -> None:
    sim_cluster = sim(SCENARIO)
    cluster = Cluster(sim_cluster)
    hosts = Hosts(tmp_path)
    hosts.set_pin("gpu-1", "2")  # already at the new pin: nothing to change there
    cluster.deployment("trainer", 1, node="gpu-0")
    cluster.pod("notebook", "gpu-2")  # no controller: a drain refuses it
    settled(cluster, "trainer", 1)

    run = bootstrap(sim_cluster, hosts, check=True)

    assert run.ok
    assert run.upgrade is not None
    assert run.upgrade.check
    plan = run.upgrade.plan
    assert [(n.node, n.batch, n.changes) for n in plan.nodes] == [
        ("gpu-0", 1, ("Pin | write",)),
        ("gpu-2", 2, ("Pin | write",)),
    ]
    assert plan.unchanged == (("gpu-1", "gpu-1"),)
    trainer = cluster.running("trainer")[0].metadata.name
    assert plan.nodes[0].evict == (f"{NAMESPACE}/{trainer}",)
    assert plan.nodes[1].refused == ((f"{NAMESPACE}/notebook", "no controller"),)
    document = report.to_json(run)
    assert_valid(document)  # gpuctl.bootstrap/v1, its `upgrade` included
    assert document["upgrade"]["nodes"][1]["refused"] == [
        {"pod": f"{NAMESPACE}/notebook", "reason": "no controller"}
    ]
    assert [node["outcome"] for node in document["upgrade"]["nodes"]] == ["planned", "planned"]
    # Nothing written: no node cordoned or marked, no pin changed, the pods where they were.
    assert set(node_states(cluster).values()) == {(False, "")}
    assert (hosts.pin("gpu-0"), hosts.pin("gpu-1"), hosts.pin("gpu-2")) == ("", "2", "")
    assert cluster.phase("notebook") == "Running"
    assert cluster.nodes_of("trainer") == ["gpu-0"]


def test_nodes_go_one_at_a_time_and_a_second_run_touches_none(sim: Any, tmp_path: Path) -> None:
    sim_cluster = sim(SCENARIO)
    cluster = Cluster(sim_cluster)
    hosts = Hosts(tmp_path)
    cluster.deployment("trainer", 2)
    cluster.budget("trainer", "trainer", 1)
    settled(cluster, "trainer", 2)
    cordoned_at_once: list[list[str]] = []

    def on_step(node: str, step: str, result: object) -> None:
        del node, step, result
        cordoned_at_once.append([name for name, (cordoned, _) in node_states(cluster).items() if cordoned])

    run = bootstrap(sim_cluster, hosts, hooks=UpgradeHooks(on_step=on_step))

    assert run.ok, report.to_json(run)
    assert run.upgrade is not None
    assert [(record.plan.node, record.plan.batch, record.outcome) for record in run.upgrade.nodes] == [
        ("gpu-0", 1, "upgraded"),
        ("gpu-1", 2, "upgraded"),
        ("gpu-2", 3, "upgraded"),
    ]
    steps = [step.step for step in run.upgrade.nodes[0].steps]
    assert steps == ["cordon", "drain", "host", "reboot", "ready", "verify", "uncordon"]
    assert max(len(cordoned) for cordoned in cordoned_at_once) == 1
    assert set(node_states(cluster).values()) == {(False, "")}
    assert [hosts.pin(node) for node in NODES] == ["2", "2", "2"]
    assert cluster.healthy("trainer") >= 1

    again = bootstrap(sim_cluster, hosts)
    assert again.ok
    assert again.upgrade is not None
    assert again.upgrade.nodes == ()
    assert [node for _, node in again.upgrade.plan.unchanged] == list(NODES)


@pytest.mark.parametrize(
    ("stack", "scenario"),
    [
        (
            Stack.OPERATOR,
            {**SCENARIO, "devicePlugin": "absent", "gpuOperator": {"driver": {"enabled": False}}},
        ),
        (Stack.DRA, dra_scenario({"name": "gpu-{i}", "count": 3, "gpus": 1})),
    ],
    ids=["operator", "dra"],
)
def test_the_other_stacks_go_node_by_node_too(
    sim: Any, tmp_path: Path, stack: Stack, scenario: dict[str, Any]
) -> None:
    """The GPU Operator (with gpuctl's host driver) and DRA: the nodes that serve GPUs the stack's
    way are found, waited for and proven its way (the Operator's validator, DRA's slices and claims)."""
    sim_cluster = sim(scenario)
    cluster = Cluster(sim_cluster)
    hosts = Hosts(tmp_path)
    wait_until(
        lambda: len(serving_nodes(sim_cluster.api_client(), [(n, n) for n in NODES], stack)) == 3,
        f"every node serving GPUs through {stack.value}",
        timeout=60,
    )
    cluster.deployment("trainer", 2)
    cluster.budget("trainer", "trainer", 1)
    settled(cluster, "trainer", 2)

    run = bootstrap(sim_cluster, hosts, stack=stack)

    assert run.ok, report.to_json(run)
    assert run.upgrade is not None
    assert [(record.plan.node, record.outcome) for record in run.upgrade.nodes] == [
        (node, "upgraded") for node in NODES
    ]
    verified = [
        step.message for record in run.upgrade.nodes for step in record.steps if step.step == "verify"
    ]
    assert verified == ["proven at level smi: 1 GPU(s) seen"] * 3
    assert set(node_states(cluster).values()) == {(False, "")}
    assert cluster.healthy("trainer") >= 1


def test_the_first_failure_stops_there_and_a_rerun_finishes_it(sim: Any, tmp_path: Path) -> None:
    sim_cluster = sim(SCENARIO)
    cluster = Cluster(sim_cluster)
    hosts = Hosts(tmp_path)
    hosts.write("2", gpu_0={"pin_unavailable": True})

    run = bootstrap(sim_cluster, hosts)

    assert not run.ok
    assert run.upgrade is not None
    stopped = run.upgrade.stopped_at
    assert stopped is not None
    assert stopped.plan.node == "gpu-0"
    assert stopped.failed_step is not None
    assert stopped.failed_step.step == "host"
    assert "pin 2 cannot be installed on gpu-0" in stopped.failed_step.message
    assert node_states(cluster) == {"gpu-0": (True, "cordoned"), "gpu-1": (False, ""), "gpu-2": (False, "")}
    assert (hosts.pin("gpu-1"), hosts.pin("gpu-2")) == ("", "")
    assert run.resume_command == f"gpuctl bootstrap --phase host -i {hosts.inventory} --drain-timeout 30"
    document = report.to_json(run)
    assert_valid(document)
    assert [node["outcome"] for node in document["upgrade"]["nodes"]] == ["failed", "pending", "pending"]
    assert [step["status"] for step in document["upgrade"]["nodes"][0]["steps"]] == ["ok", "ok", "failed"]

    hosts.write("2")  # the pin can be installed now
    rerun = bootstrap(sim_cluster, hosts)

    assert rerun.ok, report.to_json(rerun)
    assert rerun.upgrade is not None
    assert [(r.plan.node, r.plan.resuming, r.outcome) for r in rerun.upgrade.nodes] == [
        ("gpu-0", True, "upgraded"),
        ("gpu-1", False, "upgraded"),
        ("gpu-2", False, "upgraded"),
    ]
    assert set(node_states(cluster).values()) == {(False, "")}


def test_a_node_cordoned_before_gpuctl_stays_cordoned(sim: Any, tmp_path: Path) -> None:
    sim_cluster = sim(SCENARIO)
    cluster = Cluster(sim_cluster)
    hosts = Hosts(tmp_path)
    cluster.core.patch_node("gpu-1", {"spec": {"unschedulable": True}})

    run = bootstrap(sim_cluster, hosts)

    assert run.ok, report.to_json(run)
    assert run.upgrade is not None
    assert [r.plan.cordoned_before for r in run.upgrade.nodes] == [False, True, False]
    assert node_states(cluster) == {"gpu-0": (False, ""), "gpu-1": (True, ""), "gpu-2": (False, "")}


def test_the_upgrade_needs_verify_s_rights_and_evictions_only(sim: Any, tmp_path: Path) -> None:
    """On a cluster that evaluates RBAC, the upgrade runs as its rendered ServiceAccount
    gpuctl-upgrade, bound to nothing but the rendered gpuctl-verify and gpuctl-upgrade roles;
    without gpuctl-upgrade (its one rule, the evictions) the first drain is refused, naming them,
    and that node stays cordoned."""
    from kubernetes.client import CoreV1Api, RbacAuthorizationV1Api
    from kubernetes.utils import create_from_yaml

    from gpuctl.core.render import render_manifests
    from gpuctl.defaults import GPUCTL_NAMESPACE
    from gpuctl.kube.client import load_api_client
    from gpuctl.sim.server.http_server import kubeconfig_text

    sim_cluster = sim({**SCENARIO, "rbac": "enforce"})
    admin = sim_cluster.api_client()
    account = "gpuctl-upgrade"
    rendered = render_manifests(RenderOptions(rbac=True)).files  # one account per role, rendered
    for name in ("rbac-verify.yaml", "rbac-upgrade.yaml"):
        content = next(file.content for file in rendered if file.filename == name)
        create_from_yaml(admin, yaml_objects=[doc for doc in yaml.safe_load_all(content) if doc])
    core = CoreV1Api(admin)
    token = core.create_namespaced_service_account_token(account, GPUCTL_NAMESPACE, {"spec": {}})
    kubeconfig = tmp_path / "upgrade.kubeconfig"
    server = sim_cluster.server
    kubeconfig.write_text(kubeconfig_text(server.url, token.status.token, server.certificate.certificate_pem))
    as_upgrade = load_api_client(kubeconfig)
    cluster = Cluster(sim_cluster)
    hosts = Hosts(tmp_path)
    for node in NODES[1:]:
        hosts.set_pin(node, "2")  # only gpu-0 changes
    cluster.deployment("trainer", 1, node="gpu-0")
    settled(cluster, "trainer", 1)

    run = bootstrap(sim_cluster, hosts, api_client=as_upgrade)
    assert run.ok, report.to_json(run)
    assert run.upgrade is not None
    assert [(record.plan.node, record.outcome) for record in run.upgrade.nodes] == [("gpu-0", "upgraded")]
    assert "evicted 1 pod(s)" in run.upgrade.nodes[0].steps[1].message

    RbacAuthorizationV1Api(admin).delete_cluster_role_binding("gpuctl-upgrade")
    settled(cluster, "trainer", 1)
    hosts.write("3")
    for node in NODES[1:]:
        hosts.set_pin(node, "3")
    denied = bootstrap(sim_cluster, hosts, api_client=as_upgrade)
    assert not denied.ok
    assert denied.upgrade is not None
    drain = denied.upgrade.nodes[0].steps[-1]
    assert (drain.step, drain.status) == ("drain", "failed")
    assert "create pods/eviction" in drain.message, drain
    assert node_states(cluster)["gpu-0"] == (True, "cordoned")
