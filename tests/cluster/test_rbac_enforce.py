"""The least-privilege proof on a simulated cluster that evaluates RBAC (`rbac: enforce`).

The roles come from `gpuctl render --rbac`, each bound to the command's own rendered ServiceAccount
(verify's and taint's node writes fenced by their admission policies), applied with kubectl; each
command runs with a token from `kubectl create token` for its ServiceAccount. Every command
succeeds with its role (sufficient), and for every rule of every rendered role (each verb x
resource pair) the role without just that pair makes a run of the command fail, naming the verb
and the resource (minimal): exit 3 with gpuctl's `not authorised: VERB ...` line quoting the API
server's 403, or, where docs/rbac.md says a denied read only leaves something unseen, the warning
check that says so.

One sim per stack for the whole module; between cases the role is re-applied and the nodes and
the verification namespace are put back as they were.
"""

from __future__ import annotations

import copy
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.defaults import GPUCTL_NAMESPACE
from gpuctl.sim.scenario import parse_scenario
from gpuctl.sim.server.http_server import SimServer, kubeconfig_text
from tests.kubectl import KUBECTL, needs_kubectl

pytestmark = needs_kubectl

NODES = [{"name": "gpu-{i}", "count": 2, "gpus": 4}, {"name": "cpu-0"}]
# A MIG node: its verification pod lists its MIG devices, longer than a termination message may
# be, so verify reads that pod's log (`get pods/log`, core/verify/pod_manifest.py).
MIG_NODE = {"name": "gpu-mig", "gpus": 2, "mig": {"1g.10gb": 7}}
OPERATOR = {"driver": {"enabled": False}, "mig": {"strategy": "single"}}
STACKS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "device-plugin": ({"devicePlugin": "installed", "nodes": NODES}, ()),
    "operator": ({"gpuOperator": OPERATOR, "nodes": [*NODES, MIG_NODE]}, ("--stack", "operator")),
    "dra": ({"kubernetesVersion": "v1.34.1", "gpuAllocation": "dra", "nodes": NODES}, ("--stack", "dra")),
}
# `verify --level fabric` (device plugin render): two 8 x H100 NVSwitch nodes on 8 x 400G
# InfiniBand, run by gpuctl's own launcher (a Service, a Secret) or, where the MPI Operator serves
# MPIJobs, as an MPIJob. Only verify runs here.
HGX_NODES = [{"name": "hgx-{i}", "count": 2, "gpus": 8, "interconnect": "nvswitch",
              "gpuProduct": "NVIDIA-H100-80GB-HBM3"}]  # fmt: skip
FABRIC = {"devicePlugin": "installed", "network": {"fabric": "ib", "nicsPerNode": 8, "linkGbps": 400}}
FABRIC_STACKS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "fabric": ({**FABRIC, "nodes": HGX_NODES}, ()),
    "fabric-mpijob": ({**FABRIC, "mpiOperator": "installed", "nodes": HGX_NODES}, ()),
}
COMMANDS = ("verify", "taint", "status")
# The runs that together use every request of a command's role: (stack, arguments).
RUNS: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "verify": [
        *((stack, ()) for stack in STACKS),
        *((stack, ("--no-pods",)) for stack in STACKS),
        ("device-plugin", ("--gate",)),
        *((stack, ("--level", "fabric")) for stack in FABRIC_STACKS),
    ],
    "taint": [
        *((stack, ()) for stack in STACKS),
        ("device-plugin", ("--remove",)),
        ("device-plugin", ("--effect", "NoExecute", "--dry-run")),
    ],
    "status": [(stack, ()) for stack in STACKS],
}
CLI_NAME = {"verify": "verify", "taint": "taint-gpu-nodes", "status": "status"}
# Denied, these reads leave something unseen and say so in a check instead of ending the run
# (docs/rbac.md): check id -> (what its message starts with, the resource it stands for).
WARNINGS = {
    "device-plugin.log": ("not allowed to read the log", "pods/log"),
    "dra.plugin-log": ("not allowed to read the log", "pods/log"),
    "dra.access": ("", "resource.k8s.io"),
}
# Requests made only when a write meets a 409 Conflict (another writer changed the node between
# gpuctl's read and its patch): the re-read. A writer outside gpuctl cannot be timed into that gap
# from the command line (one fast enough to make the first patch conflict makes the re-read's
# patch conflict too), so the CLI runs of the walk skip them: taint's is proven by
# test_a_conflict_needs_get_nodes through the writer's seam for a real concurrent writer; verify
# --gate's writes go through the same NodeTaintWriter, with no such seam in the CLI.
CONFLICT_ONLY = {("verify", "get", "nodes"), ("taint", "get", "nodes")}
# Rules that the runs above do not reach, each with the path that needs it: the walk asserts that
# exactly these go unused, so a rule that becomes reachable, or a new one nothing reaches, fails.
NOT_REACHED = {
    # Listed only to fill in an unschedulable or image-pull outcome whose status carries no message
    # (kube/pods.py events_by_pod): the scheduler's PodScheduled condition and the kubelet's
    # waiting state always carry one, in the sim as on a real node, so no run gets there.
    ("verify", "list", "events", "Role/gpuctl-system/gpuctl-verify-pods"),
    # Per-GPU gates: only on a Kubernetes 1.37 DRA cluster (DeviceTaintRules served) where one GPU
    # fails alone (create) and later passes again (delete); test_gate_dra_devices.py runs that
    # under the rendered verify role, and without each of the two rules.
    ("verify", "create", "devicetaintrules", "ClusterRole//gpuctl-verify"),
    ("verify", "delete", "devicetaintrules", "ClusterRole//gpuctl-verify"),
}


@dataclass
class StackCluster:
    name: str  # the stack's key in STACKS or FABRIC_STACKS
    server: SimServer
    admin: Path
    kubeconfigs: dict[str, Path] = field(default_factory=dict)  # command -> its ServiceAccount's
    roles: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # command -> its RBAC docs


def _kubectl(home: Path, kubeconfig: Path, *args: str) -> str:
    done = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


def _render(out: Path, stack_args: tuple[str, ...]) -> None:
    from gpuctl.cli.main import run

    assert run(["render", *stack_args, "--rbac", "--out", str(out)]) == 0


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _start(stack: str, base: Path) -> StackCluster:
    top, stack_args = {**STACKS, **FABRIC_STACKS}[stack]
    scenario = {**top, "rbac": "enforce", "podStartSeconds": 0.05}
    server = SimServer(parse_scenario(scenario, stack)).start()
    home = base / stack
    home.mkdir()
    admin = server.write_kubeconfig(home / "admin.kubeconfig")
    cluster = StackCluster(stack, server, admin)
    out = home / "rendered"
    _render(out, stack_args)
    # rbac-verify.yaml (applied first) creates the verification namespace and every account.
    for command in COMMANDS:
        _kubectl(home, admin, "apply", "-f", str(out / f"rbac-{command}.yaml"))
    for command in COMMANDS:
        cluster.roles[command] = _documents(out / f"rbac-{command}.yaml")
        account = f"gpuctl-{command}"
        token = _kubectl(home, admin, "create", "token", account, "-n", GPUCTL_NAMESPACE).strip()
        path = home / f"{command}.kubeconfig"
        path.write_text(kubeconfig_text(server.url, token, server.certificate.certificate_pem))
        path.chmod(0o600)
        cluster.kubeconfigs[command] = path
    return cluster


@pytest.fixture(scope="module")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, StackCluster]]:
    base = tmp_path_factory.mktemp("rbac-enforce")
    started: dict[str, StackCluster] = {}
    try:
        for stack in (*STACKS, *FABRIC_STACKS):
            started[stack] = _start(stack, base)
        yield started
    finally:
        for cluster in started.values():
            cluster.server.stop()


# -- applying roles ----------------------------------------------------------------------------
def _api(cluster: StackCluster) -> Any:
    from gpuctl.kube.client import load_api_client

    return load_api_client(cluster.admin)


def _apply_roles(cluster: StackCluster, docs: list[dict[str, Any]]) -> None:
    """Replace the command's Roles and ClusterRoles with `docs`' (bindings stay as applied)."""
    from kubernetes.client import RbacAuthorizationV1Api

    rbac: Any = RbacAuthorizationV1Api(_api(cluster))  # takes the rendered dicts as bodies
    for doc in docs:
        name = doc["metadata"]["name"]
        if doc["kind"] == "ClusterRole":
            rbac.replace_cluster_role(name, doc)
        elif doc["kind"] == "Role":
            rbac.replace_namespaced_role(name, doc["metadata"]["namespace"], doc)


def _reset(cluster: StackCluster) -> None:
    """Nodes without gpuctl's taints and marks, the verification namespace without pods."""
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(_api(cluster))
    nodes: list[Any] = core.list_node().items
    for node in nodes:
        taints = [taint for taint in node.spec.taints or [] if not _gpuctl_key(taint.key)]
        annotations = {key: None for key in node.metadata.annotations or {} if _gpuctl_key(key)}
        if annotations:
            core.patch_node(node.metadata.name, {"metadata": {"annotations": annotations}})
        if len(taints) != len(node.spec.taints or []):
            core.patch_node(node.metadata.name, [{"op": "add", "path": "/spec/taints", "value": taints}])
    _remove_fabric_objects(cluster)
    core.delete_collection_namespaced_pod(GPUCTL_NAMESPACE, grace_period_seconds=0)


def _remove_fabric_objects(cluster: StackCluster) -> None:
    """What a fabric run whose delete was denied left: its MPIJobs (before the pods, so that the
    MPI Operator makes none again), Services and Secrets."""
    from kubernetes.client import CoreV1Api, CustomObjectsApi

    core: Any = CoreV1Api(_api(cluster))  # the client's models type every field optional
    selector = "app.kubernetes.io/managed-by=gpuctl"
    if "mpiOperator" in FABRIC_STACKS.get(cluster.name, ({}, ()))[0]:
        custom: Any = CustomObjectsApi(_api(cluster))
        mpijobs = ("kubeflow.org", "v2beta1", GPUCTL_NAMESPACE, "mpijobs")
        for job in custom.list_namespaced_custom_object(*mpijobs)["items"]:
            custom.delete_namespaced_custom_object(*mpijobs, job["metadata"]["name"])
    for service in core.list_namespaced_service(GPUCTL_NAMESPACE, label_selector=selector).items:
        core.delete_namespaced_service(service.metadata.name, GPUCTL_NAMESPACE)
    for secret in core.list_namespaced_secret(GPUCTL_NAMESPACE, label_selector=selector).items:
        core.delete_namespaced_secret(secret.metadata.name, GPUCTL_NAMESPACE)


def _gpuctl_key(key: str) -> bool:
    return key.startswith("gpuctl.io/") or key == "nvidia.com/gpu"


@dataclass(frozen=True)
class Rule:
    """One verb on one resource of one rule of a rendered Role or ClusterRole."""

    command: str
    role: str
    rule_index: int
    verb: str
    group: str
    resource: str

    def without(self, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`docs` with this verb x resource pair taken out of its rule, nothing else."""
        docs = copy.deepcopy(docs)
        role = next(doc for doc in docs if _role_id(doc) == self.role)
        rule = role["rules"].pop(self.rule_index)
        others = [resource for resource in rule["resources"] if resource != self.resource]
        verbs = [verb for verb in rule["verbs"] if verb != self.verb]
        role["rules"] += [dict(rule, resources=others)] if others else []
        role["rules"] += [dict(rule, resources=[self.resource], verbs=verbs)] if verbs else []
        return docs

    def __str__(self) -> str:
        return f"{self.command}: {self.verb} {self.resource} ({self.role})"


def _role_id(doc: dict[str, Any]) -> str:
    return f"{doc['kind']}/{doc['metadata'].get('namespace', '')}/{doc['metadata']['name']}"


def rendered_rules(docs: list[dict[str, Any]], command: str) -> list[Rule]:
    return [
        Rule(command, _role_id(doc), index, verb, group, resource)
        for doc in docs
        if doc["kind"] in ("Role", "ClusterRole")
        for index, rule in enumerate(doc["rules"])
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    ]


# -- running commands --------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    exit_code: int
    stderr: str
    warnings: tuple[str, ...]  # "check-id: message" of the access warnings of a JSON report


def _run(cli: Any, cluster: StackCluster, command: str, args: tuple[str, ...]) -> Outcome:
    kubeconfig = cluster.kubeconfigs[command]
    output = ("-o", "json") if command in ("verify", "status") else ()
    result = cli(CLI_NAME[command], "--kubeconfig", kubeconfig, *output, *args)
    assert "Traceback" not in result.output
    warnings: tuple[str, ...] = ()
    if command == "verify" and result.stdout:
        report = json.loads(result.stdout)
        checks = [c for n in report["nodes"] for c in n["checks"]] + report.get("cluster_checks", [])
        warnings = tuple(
            f"{check['id']}: {check['message']}"
            for check in checks
            if check["id"] in WARNINGS
            and check["status"] == "warn"
            and check["message"].startswith(WARNINGS[check["id"]][0])
        )
    return Outcome(result.exit_code, result.stderr, warnings)


def _denial(outcome: Outcome, rule: Rule) -> str:
    """How `outcome` names the denied rule ("" if it does not)."""
    # The resource in the API server's words, or in gpuctl's where the server's message is cut to
    # its first 160 characters (a long resource name leaves the verb and resource past the cut).
    named = (
        f'cannot {rule.verb} resource "{rule.resource}"',
        f"not authorised: {rule.verb} {rule.resource} ",
    )
    if (
        outcome.exit_code == 3
        and f"not authorised: {rule.verb} " in outcome.stderr
        and any(words in outcome.stderr for words in named)
    ):
        return outcome.stderr.strip().splitlines()[0]
    warned = {check_id for check_id, (_, what) in WARNINGS.items() if what in (rule.resource, rule.group)}
    return next((warning for warning in outcome.warnings if warning.split(":")[0] in warned), "")


def _all_rules(clusters: dict[str, StackCluster]) -> list[Rule]:
    """Every rule of every stack's render, once (the stacks differ only in plugin-log Roles)."""
    found: dict[tuple[str, str, str, str, str], Rule] = {}
    for cluster in clusters.values():
        for command in COMMANDS:
            for rule in rendered_rules(cluster.roles[command], command):
                found.setdefault((command, rule.role, rule.verb, rule.group, rule.resource), rule)
    return list(found.values())


def test_each_command_succeeds_with_only_its_rendered_role(
    clusters: dict[str, StackCluster], cli: Any
) -> None:
    for command, runs in RUNS.items():
        for stack, args in runs:
            cluster = clusters[stack]
            _reset(cluster)
            outcome = _run(cli, cluster, command, args)
            assert outcome.exit_code == 0, (command, stack, args, outcome.stderr)
            assert not outcome.warnings, (command, stack, args, outcome.warnings)


def test_every_rule_is_needed(clusters: dict[str, StackCluster], cli: Any) -> None:
    """Without any single verb x resource pair of its role, a run of the command says it was denied."""
    started = time.monotonic()
    unneeded: dict[tuple[str, str, str, str], str] = {}
    for rule in _all_rules(clusters):
        if (rule.command, rule.verb, rule.resource) in CONFLICT_ONLY:
            continue
        denial, seen = "", []
        for stack, args in RUNS[rule.command]:
            cluster = clusters[stack]
            docs = cluster.roles[rule.command]
            if not any(_role_id(doc) == rule.role for doc in docs):
                continue  # a plugin-log Role another stack's render has
            _apply_roles(cluster, rule.without(docs))
            _reset(cluster)
            try:
                outcome = _run(cli, cluster, rule.command, args)
            finally:
                _apply_roles(cluster, docs)
            if denial := _denial(outcome, rule):
                break
            seen.append(
                f"  {stack} {' '.join(args)}: exit {outcome.exit_code} "
                f"{outcome.stderr[:300]!r} {outcome.warnings}"
            )
        if not denial:
            unneeded[(rule.command, rule.verb, rule.resource, rule.role)] = "\n".join(seen)
    print(f"walked {len(_all_rules(clusters))} rules in {time.monotonic() - started:.1f} s")
    unexpected = {rule: runs for rule, runs in unneeded.items() if rule not in NOT_REACHED}
    assert not unexpected, "rules no run needs:\n" + "\n".join(
        f"{rule}\n{runs}" for rule, runs in unexpected.items()
    )
    assert set(unneeded) == NOT_REACHED, f"now reached: {NOT_REACHED - set(unneeded)}"


def test_a_conflict_needs_get_nodes(clusters: dict[str, StackCluster]) -> None:
    """taint-gpu-nodes as its ServiceAccount, with an admin writing the node between gpuctl's read
    and its patch: the 409 is retried from a re-read (`get nodes`); without that rule the run
    ends naming it."""
    from kubernetes.client import CoreV1Api

    from gpuctl.core.taint import taint_gpu_nodes
    from gpuctl.defaults import GPU_TAINT_EFFECT, GPU_TAINT_KEY, GPU_TAINT_VALUE
    from gpuctl.errors import UnreachableError
    from gpuctl.kube.client import load_api_client
    from gpuctl.kube.nodes import Taint

    cluster = clusters["device-plugin"]
    gpu_taint = Taint(GPU_TAINT_KEY, GPU_TAINT_VALUE, GPU_TAINT_EFFECT)
    admin = CoreV1Api(_api(cluster))
    docs = cluster.roles["taint"]
    [get_nodes] = [r for r in rendered_rules(docs, "taint") if (r.verb, r.resource) == ("get", "nodes")]

    def concurrent_write(node_name: str) -> None:
        if node_name == "gpu-1":  # a write of another field between gpuctl's read and its patch
            admin.patch_node(node_name, {"metadata": {"annotations": {"example.com/seen": str(time.time())}}})

    def taint(after_read: Any) -> Any:
        account = load_api_client(cluster.kubeconfigs["taint"])
        return taint_gpu_nodes(account, taint=gpu_taint, after_read=after_read)

    written: list[str] = []

    def once(node_name: str) -> None:
        if node_name == "gpu-1" and not written:
            written.append(node_name)
            concurrent_write(node_name)

    _reset(cluster)
    changes = {change.node: change for change in taint(once).nodes}
    assert changes["gpu-1"].action == "added", changes
    assert changes["gpu-1"].conflicts_retried >= 1, changes
    _reset(cluster)
    _apply_roles(cluster, get_nodes.without(docs))
    try:
        with pytest.raises(UnreachableError) as denied:
            taint(after_read=concurrent_write)
    finally:
        _apply_roles(cluster, docs)
        _reset(cluster)
    assert denied.value.message.startswith("not authorised: get node gpu-1: 403 Forbidden"), denied.value
    assert 'cannot get resource "nodes"' in denied.value.message


def test_denials_say_what_the_api_server_says(clusters: dict[str, StackCluster], tmp_path: Path) -> None:
    """The 403 wording of the API server's authorization filter, access reviews from the same
    evaluation, and a token that stops working with its ServiceAccount."""
    cluster = clusters["device-plugin"]
    kubeconfig = cluster.kubeconfigs["status"]
    user = f"system:serviceaccount:{GPUCTL_NAMESPACE}:gpuctl-status"
    done = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "get", "pods", "-n", GPUCTL_NAMESPACE, "-o", "name"],
        capture_output=True, text=True, env={"HOME": str(tmp_path)}, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0  # list pods: gpuctl-status's ClusterRole
    for args, said in (
        (("get", "node", "gpu-0"), f'nodes "gpu-0" is forbidden: User "{user}" cannot get resource "nodes" '
         'in API group "" at the cluster scope'),
        (("get", "events", "-n", GPUCTL_NAMESPACE), f'events is forbidden: User "{user}" cannot list '
         f'resource "events" in API group "" in the namespace "{GPUCTL_NAMESPACE}"'),
        (("auth", "can-i", "patch", "nodes"), "no"),
        (("auth", "can-i", "list", "nodes"), "yes"),
    ):  # fmt: skip
        done = subprocess.run(
            [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
            capture_output=True, text=True, env={"HOME": str(tmp_path)}, timeout=60, check=False,
        )  # fmt: skip
        assert said in done.stdout + done.stderr, (args, done.stdout, done.stderr)
    home = tmp_path
    _kubectl(home, cluster.admin, "create", "serviceaccount", "short-lived", "-n", GPUCTL_NAMESPACE)
    token = _kubectl(home, cluster.admin, "create", "token", "short-lived", "-n", GPUCTL_NAMESPACE).strip()
    path = tmp_path / "short-lived.kubeconfig"
    path.write_text(kubeconfig_text(cluster.server.url, token, cluster.server.certificate.certificate_pem))
    _kubectl(home, path, "version")  # discovery: system:discovery for every authenticated user
    _kubectl(home, cluster.admin, "delete", "serviceaccount", "short-lived", "-n", GPUCTL_NAMESPACE)
    done = subprocess.run(
        [KUBECTL, "--kubeconfig", str(path), "get", "--raw", "/version"],
        capture_output=True, text=True, env={"HOME": str(home)}, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "Unauthorized" in done.stderr
