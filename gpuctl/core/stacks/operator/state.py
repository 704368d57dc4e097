"""The GPU Operator's own view of a node, and why a node is stuck: read from its operand pods
(the validator's init containers are its per-node checks) and the node's NFD labels. Shared by
`bootstrap --stack operator` (waiting, diagnosing) and `verify` (reporting the Operator's state)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from gpuctl.core.verify.model import Check, failed
from gpuctl.diagnose import diagnose
from gpuctl.kube.gpu_operator import DRIVER, TOOLKIT, VALIDATIONS, VALIDATOR, OperandPod
from gpuctl.kube.nodes import NFD_PCI_LABEL
from gpuctl.shell import command_line

READY = "ready"
ABSENT = "absent"
DEPLOY_LABEL_PREFIX = "nvidia.com/gpu.deploy."  # the Operator's per-operand node labels
LogReader = Callable[[OperandPod, str], str]  # (pod, container) → its log tail


def first_pending_validation(pod: OperandPod) -> str:
    """The first of the validator's checks that has not passed yet ("" when all passed)."""
    done = {c.name for c in pod.init_containers if c.succeeded}
    names = [c.name for c in pod.init_containers] or list(VALIDATIONS)
    return next((name for name in names if name not in done), "")


def validator_state(pod: OperandPod | None) -> str:
    """`ready`, `absent`, or what the validator waits on (`waiting: driver-validation`)."""
    if pod is None:
        return ABSENT
    if pod.ready and pod.phase == "Running":
        return READY
    pending = first_pending_validation(pod)
    return f"waiting: {pending}" if pending else pod.phase.lower()


def validators_by_node(pods: Iterable[OperandPod]) -> dict[str, OperandPod]:
    by_node: dict[str, OperandPod] = {}
    for pod in pods:
        if pod.operand == VALIDATOR and pod.node and (pod.node not in by_node or pod.ready):
            by_node[pod.node] = pod
    return by_node


def _logs_command(pod: OperandPod) -> str:
    return command_line("kubectl", "-n", pod.namespace, "logs", pod.name, "--all-containers")


def _describe_node(node: str) -> str:
    return command_line("kubectl", "describe", "node", node)


def _host_bootstrap(node: str) -> str:
    """The host phase for `node` alone (INVENTORY: the user's inventory, unknown here)."""
    return command_line("gpuctl", "bootstrap", "--phase", "host", "-i", "INVENTORY", "--limit", node)


def _operand_problem(pod: OperandPod, read_log: LogReader, what: str) -> Check | None:
    """A crash-looping (or not yet ready) operand: its log matched against the diagnosis table."""
    stuck = [c for c in (*pod.init_containers, *pod.containers) if c.reason == "CrashLoopBackOff"]
    if not stuck:
        return None
    log = read_log(pod, stuck[0].name)
    found = diagnose(log, "operator-driver", node=pod.node)
    if found is not None:
        message = f"{pod.name}: {found.cause} (log: {found.evidence})"
        return failed("operator.operands", message, found.hint, found.signature_id)
    return failed(
        "operator.operands",
        f"{pod.name}: the Operator's {what} container crash-loops ({pod.restarts} restarts)",
        f"read why: `{_logs_command(pod)}`",
    )


def _no_operands(node: str, labels: dict[str, str], namespace: str) -> Check:
    deploy = [key for key in labels if key.startswith(DEPLOY_LABEL_PREFIX)]
    if labels.get(NFD_PCI_LABEL) != "true" and not deploy:
        return failed(
            "operator.operands",
            f"no NFD label {NFD_PCI_LABEL}=true on the node: the GPU Operator deploys nothing on it",
            f"check node-feature-discovery's worker on {node}: "
            f"`{command_line('kubectl', '-n', namespace, 'get', 'pods', '-o', 'wide')} "
            "| grep node-feature-discovery-worker` (nfd.enabled must be true unless NFD runs already)",
        )
    return failed(
        "operator.operands",
        "no GPU Operator operand pod on the node (its nvidia.com/gpu.deploy.* labels are set)",
        f"`{command_line('kubectl', '-n', namespace, 'get', 'daemonsets')}` and "
        f"`{_describe_node(node)}` (taints the operands do not tolerate?)",
    )


def _validator_problem(
    pod: OperandPod | None, node: str, driver_enabled: bool, toolkit_enabled: bool
) -> Check:
    if pod is None:
        return failed(
            "operator.validator",
            f"no {VALIDATOR} pod on the node",
            f"`kubectl get daemonset {VALIDATOR} -A` and `{_describe_node(node)}`",
        )
    pending = first_pending_validation(pod)
    hints = {
        "driver-validation": (
            "the Operator's driver container on the node is not ready: `" + _logs_command(pod) + "`"
            if driver_enabled
            else "no working driver on the host (driver.enabled=false): install it with "
            f"`{_host_bootstrap(node)}`, or let the Operator "
            "install it: `gpuctl bootstrap --phase cluster --stack operator --operator-driver`"
        ),
        "toolkit-validation": (
            "the Operator's container toolkit on the node is not ready"
            if toolkit_enabled
            else "no container toolkit on the host (toolkit.enabled=false): install it with "
            f"`{_host_bootstrap(node)}`, or let the Operator "
            "install it: `gpuctl bootstrap --phase cluster --stack operator --operator-toolkit`"
        ),
    }
    hint = hints.get(pending, f"read why: `{_logs_command(pod)}`")
    what = f"waits on {pending}" if pending else f"is {pod.phase} and not ready"
    return failed("operator.validator", f"the Operator's validator {pod.name} {what}", hint)


def diagnose_operator_node(
    node: str,
    labels: dict[str, str],
    pods: list[OperandPod],
    *,
    namespace: str,
    driver_enabled: bool,
    toolkit_enabled: bool,
    read_log: LogReader,
) -> Check | None:
    """Why the Operator has not validated `node` (None when its validator reports success)."""
    on_node = [pod for pod in pods if pod.node == node]
    if not on_node:
        return _no_operands(node, labels, namespace)
    for operand, what in ((DRIVER, "driver"), (TOOLKIT, "container toolkit")):
        for pod in (p for p in on_node if p.operand == operand):
            problem = _operand_problem(pod, read_log, what)
            if problem is not None:
                return problem
    validator = validators_by_node(on_node).get(node)
    if validator_state(validator) == READY:
        return None
    return _validator_problem(validator, node, driver_enabled, toolkit_enabled)
