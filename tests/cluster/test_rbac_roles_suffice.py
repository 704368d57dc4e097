"""Each command runs with only what its rendered role grants (docs/rbac.md), on every simulated
stack; takes the rule it needs away and it stops; and verify reads plugin logs only in namespaces
its render grants, or says it may not instead of ending the run.

The simulated cluster refuses `VERB RESOURCE` pairs (its `forbidden` list) in every namespace: it
does not evaluate Roles. So each run forbids every pair its role does not grant anywhere, and the
namespaces of the log reads are compared with the rendered Roles here."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from gpuctl.core.render import RenderOptions, plugin_log_namespaces, render_manifests
from gpuctl.core.stacks import Stack
from gpuctl.defaults import GPUCTL_NAMESPACE
from gpuctl.sim.api.kinds import ALL_VERBS, RESOURCE_TYPES
from tests.polling import wait_until

NODES = [{"name": "gpu-{i}", "count": 2, "gpus": 4}, {"name": "cpu-0"}]
STACKS: dict[str, tuple[dict[str, Any], RenderOptions]] = {
    "device-plugin": ({"devicePlugin": "installed"}, RenderOptions(rbac=True)),
    "operator": (
        {"gpuOperator": {"driver": {"enabled": False}}},
        RenderOptions(rbac=True, stack=Stack.OPERATOR),
    ),
    "dra": (
        {"kubernetesVersion": "v1.34.1", "gpuAllocation": "dra"},
        RenderOptions(rbac=True, stack=Stack.DRA),
    ),
}
# The custom resources gpuctl reads, served from their CRDs (not among the built-in kinds).
CUSTOM_RESOURCES = ("clusterpolicies", "mpijobs")
PLUGIN_POD_CHECKS = ("device-plugin.pod", "dra.plugin-pod")
PLUGIN_LOG_CHECKS = ("device-plugin.log", "dra.plugin-log")


def _every_resource() -> list[str]:
    plain = [kind.plural for kind in RESOURCE_TYPES] + list(CUSTOM_RESOURCES)
    subresources = [f"{kind.plural}/{sub}" for kind in RESOURCE_TYPES for sub in kind.subresources]
    return list(dict.fromkeys(plain + subresources))


def _granted(options: RenderOptions, command: str) -> set[str]:
    """`VERB RESOURCE` pairs the command's rendered role grants, in any namespace."""
    rendered = next(f for f in render_manifests(options).files if f.filename == f"rbac-{command}.yaml")
    rules = [
        rule
        for doc in yaml.safe_load_all(rendered.content)
        if doc and doc["kind"] in ("Role", "ClusterRole")
        for rule in doc["rules"]
    ]
    return {
        f"{verb} {resource}" for rule in rules for verb in rule["verbs"] for resource in rule["resources"]
    }


def _forbidden(granted: set[str], also: tuple[str, ...] = ()) -> list[str]:
    """Every pair not granted. The sim's `get pods` also refuses `get pods/log`: a resource stays
    allowed where one of its subresources is granted with that verb."""
    forbidden = []
    for verb in ALL_VERBS:
        for resource in _every_resource():
            pair = f"{verb} {resource}"
            if pair in granted or any(grant.startswith(f"{pair}/") for grant in granted):
                continue
            forbidden.append(pair)
    return forbidden + [pair for pair in also if pair not in forbidden]


def _cluster(sim: Any, stack: str, command: str, also: tuple[str, ...] = ()) -> Any:
    top, options = STACKS[stack]
    return sim(
        {
            **top,
            "podStartSeconds": 0.05,
            "nodes": NODES,
            # Rendered with the roles (rbac-verify.yaml): verify may not create it.
            "namespaces": [GPUCTL_NAMESPACE],
            "forbidden": _forbidden(_granted(options, command), also),
        }
    )


def _verify(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "-o", "json", *args)
    assert "Traceback" not in result.stderr
    assert result.stdout, result.stderr
    return result.exit_code, json.loads(result.stdout)


def _checks(report: dict[str, Any], ids: tuple[str, ...]) -> list[dict[str, Any]]:
    return [check for node in report["nodes"] for check in node["checks"] if check["id"] in ids]


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_verify_needs_nothing_its_role_does_not_grant(sim: Any, cli: Any, stack: str) -> None:
    cluster = _cluster(sim, stack, "verify")
    code, report = _verify(cli, cluster)
    assert code == 0, json.dumps(report, indent=1)
    assert report["ok"]
    assert not cluster.verification_pods()  # deleted (the test's own read: `list pods` is granted)


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_verify_reads_plugin_logs_only_where_its_render_grants(sim: Any, cli: Any, stack: str) -> None:
    """--no-pods reads every GPU node's plugin log: each is read (the check passes), in a
    namespace the stack's rendered Roles name."""
    cluster = _cluster(sim, stack, "verify")
    code, report = _verify(cli, cluster, "--no-pods")
    assert code == 0, json.dumps(report, indent=1)
    read = [check for check in _checks(report, PLUGIN_LOG_CHECKS) if check["status"] != "skip"]
    assert len(read) == 2
    assert all(check["status"] == "pass" for check in read), read
    pods = [check["message"] for check in _checks(report, PLUGIN_POD_CHECKS) if check["status"] == "pass"]
    namespaces = {message.split("/", 1)[0] for message in pods}
    assert len(pods) == 2
    assert namespaces <= set(plugin_log_namespaces(STACKS[stack][1]))


def test_a_plugin_log_gpuctl_may_not_read_is_a_warning_not_the_end_of_the_run(sim: Any, cli: Any) -> None:
    """A device plugin installed in a namespace the roles do not name: verify still judges the node
    and says how to let it read the log."""
    cluster = _cluster(sim, "device-plugin", "verify", also=("get pods/log",))
    code, report = _verify(cli, cluster, "--no-pods")
    assert code == 0
    logs = _checks(report, PLUGIN_LOG_CHECKS)
    assert [check["status"] for check in logs] == ["warn", "warn"]
    assert logs[0]["message"].startswith("not allowed to read the log of kube-system/nvidia-device-plugin")
    assert "`gpuctl render --rbac --log-namespace kube-system`" in logs[0]["hint"]


@pytest.mark.parametrize(
    ("stack", "taken", "denied"),
    [
        ("operator", "list clusterpolicies", "not authorised: list clusterpolicies"),
        ("device-plugin", "get namespaces", f"not authorised: get namespace {GPUCTL_NAMESPACE}"),
        ("device-plugin", "watch events", "not authorised: watch events in namespace"),
    ],
)
def test_verify_stops_without_a_rule_it_needs(
    sim: Any, cli: Any, stack: str, taken: str, denied: str
) -> None:
    cluster = _cluster(sim, stack, "verify", also=(taken,))
    result = cli("verify", "--kubeconfig", cluster.kubeconfig)
    assert result.exit_code == 3, result.output
    assert denied in result.stderr


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_status_and_taint_need_nothing_their_roles_do_not_grant(sim: Any, cli: Any, stack: str) -> None:
    status = cli("status", "--kubeconfig", _cluster(sim, stack, "status").kubeconfig, "-o", "json")
    assert status.exit_code == 0, status.output
    assert len(json.loads(status.stdout)["nodes"]) == 2
    kubeconfig = _cluster(sim, stack, "taint").kubeconfig
    for args in ([], ["--remove"], ["--effect", "NoExecute", "--dry-run"]):
        taint = cli("taint-gpu-nodes", "--kubeconfig", kubeconfig, *args)
        assert taint.exit_code == 0, (args, taint.output)


def test_a_noexecute_taint_needs_the_pod_list_of_its_role(sim: Any, cli: Any) -> None:
    """The pods a NoExecute taint would evict are listed before any node is written."""
    cluster = _cluster(sim, "device-plugin", "taint", also=("list pods",))
    taint = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--effect", "NoExecute", "--dry-run")
    assert taint.exit_code == 3, taint.output
    assert "not authorised: list pods" in taint.stderr


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_verify_gate_needs_nothing_its_role_does_not_grant(sim: Any, cli: Any, stack: str) -> None:
    """The CronJob runs `verify --gate`: gating a failing node and lifting it again both fit the role."""
    from kubernetes.client import CoreV1Api

    cluster = _cluster(sim, stack, "verify")
    core = CoreV1Api(cluster.api_client())
    core.patch_node("gpu-1", {"spec": {"unschedulable": True}})  # fails node.schedulable: gated
    code, report = _verify(cli, cluster, "--gate")
    assert code == 1, json.dumps(report, indent=1)
    assert (report["gate"]["gated"], report["gate"]["failed"]) == (["gpu-1"], [])
    core.patch_node("gpu-1", {"spec": {"unschedulable": False}})
    code, report = _verify(cli, cluster, "--gate")
    assert code == 0, json.dumps(report, indent=1)
    assert report["gate"]["ungated"] == ["gpu-1"]


def test_verify_gate_stops_without_the_node_patch_of_its_role(sim: Any, cli: Any) -> None:
    """Passing nodes get their proven-level annotation: a write the role must allow."""
    cluster = _cluster(sim, "device-plugin", "verify", also=("patch nodes",))
    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "--gate")
    assert result.exit_code == 3, result.output
    assert "not authorised: patch node gpu-" in result.stderr


# `verify --level fabric`: two 8 x H100 NVSwitch nodes on 8 x 400G InfiniBand.
HGX_NODES = [{"name": "hgx-{i}", "count": 2, "gpus": 8, "interconnect": "nvswitch",
              "gpuProduct": "NVIDIA-H100-80GB-HBM3"}]  # fmt: skip
FABRIC_LAUNCHERS = {"own-launcher": {}, "mpijob": {"mpiOperator": "installed"}}


def _fabric_cluster(sim: Any, launcher: str, also: tuple[str, ...] = ()) -> Any:
    cluster = sim(
        {
            "devicePlugin": "installed",
            "network": {"fabric": "ib", "nicsPerNode": 8, "linkGbps": 400},
            **FABRIC_LAUNCHERS[launcher],
            "podStartSeconds": 0.05,
            "nodes": HGX_NODES,
            "namespaces": [GPUCTL_NAMESPACE],
            "forbidden": _forbidden(_granted(RenderOptions(rbac=True), "verify"), also),
        }
    )
    wait_until(lambda: list(cluster.allocatable_gpus().values()) == [8, 8], "GPUs advertised")
    return cluster


@pytest.mark.parametrize("launcher", sorted(FABRIC_LAUNCHERS))
def test_verify_fabric_needs_nothing_its_role_does_not_grant(sim: Any, cli: Any, launcher: str) -> None:
    """gpuctl's own launcher (a headless Service, an SSH Secret, pods) or, where the MPI Operator
    serves MPIJobs, an MPIJob: either runs the two nodes' all-reduce within the rendered role."""
    cluster = _fabric_cluster(sim, launcher)
    code, report = _verify(cli, cluster, "--level", "fabric")
    assert code == 0, json.dumps(report, indent=1)
    fabric = [node["fabric"] for node in report["nodes"]]
    assert [run["nodes"] for run in fabric] == [["hgx-0", "hgx-1"]] * 2, fabric
    assert not cluster.verification_pods()


@pytest.mark.parametrize(
    ("launcher", "taken", "denied"),
    [
        ("own-launcher", "create services", "not authorised: create services in namespace"),
        ("own-launcher", "create secrets", "not authorised: create secrets in namespace"),
        ("mpijob", "create mpijobs", "not authorised: create mpijobs in namespace"),
    ],
)
def test_verify_fabric_stops_without_a_rule_it_needs(
    sim: Any, cli: Any, launcher: str, taken: str, denied: str
) -> None:
    cluster = _fabric_cluster(sim, launcher, also=(taken,))
    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "--level", "fabric")
    assert result.exit_code == 3, result.output
    assert denied in result.stderr
