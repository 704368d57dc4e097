"""Judge how a verification pod ended: was it scheduled, did its image start, what did nvidia-smi
print (GPUs seen, product, memory, driver). The first stage that failed gets the diagnosis."""

from __future__ import annotations

import re

from gpuctl.core.verify.model import Check, CheckStatus, PodEvaluation, failed, passed, skipped, warned
from gpuctl.diagnose import Diagnosis, diagnose, diagnose_events, diagnose_scheduling
from gpuctl.kube.nodes import NodeInfo
from gpuctl.kube.pods import PodOutcome
from gpuctl.nvidia_smi import VERIFY_QUERY_FIELDS, parse_query_csv
from gpuctl.shell import command_line

_LISTED = re.compile(r"^(GPU \d+: .*\(UUID: GPU-|\s+MIG \S+\s+Device\s+\d+: \(UUID: MIG-)")
SMI_CHECKS = (
    "nvidia-smi.run",
    "nvidia-smi.gpus",
    "nvidia-smi.product",
    "nvidia-smi.memory",
    "nvidia-smi.driver",
)


def _skip_all(ids: tuple[str, ...], why: str) -> list[Check]:
    return [skipped(check_id, why) for check_id in ids]


def _hint_context(node: NodeInfo, namespace: str, image: str) -> dict[str, str]:
    return {"node": node.name, "namespace": namespace, "image": image}


def evaluate(
    outcome: PodOutcome, node: NodeInfo, requested: int | None, namespace: str, image: str
) -> PodEvaluation:
    """Checks pod.scheduled, pod.image and nvidia-smi.* for one node.

    The pod's life has stages (scheduled, container started, nvidia-smi finished); the first
    stage that failed gets the diagnosis and the checks of the later stages are skipped.
    """
    context = _hint_context(node, namespace, image)
    unscheduled = _unscheduled(outcome, namespace, context)
    if unscheduled:
        return PodEvaluation(unscheduled)
    scheduled = passed("pod.scheduled", "scheduled through nodeSelector kubernetes.io/hostname")
    unstarted = _unstarted(outcome, namespace, context)
    if unstarted:
        return PodEvaluation((scheduled, *unstarted))
    image_ok = passed("pod.image", f"pulled {image}")
    unfinished = _unfinished(outcome, context)
    if unfinished:
        return PodEvaluation((scheduled, image_ok, *unfinished))
    return _evaluate_output(outcome, node, requested, (scheduled, image_ok))


def pod_start_problem(outcome: PodOutcome, node: NodeInfo, namespace: str, image: str) -> Check | None:
    """Why a pod's container never ran to its end on its own (not created, not scheduled, image
    not pulled, still Pending), with its diagnosis; None when it ran."""
    context = _hint_context(node, namespace, image)
    for stage in (_unscheduled(outcome, namespace, context), _unstarted(outcome, namespace, context)):
        if stage:
            return stage[0]
    return None


def _unscheduled(outcome: PodOutcome, namespace: str, context: dict[str, str]) -> tuple[Check, ...]:
    """pod.scheduled failed and every later check skipped; empty when the pod was scheduled."""
    rest = ("pod.image", *SMI_CHECKS)
    if outcome.state == "create-failed":
        check = failed(
            "pod.scheduled",
            f"could not create the verification pod: {outcome.message}",
            f"`{command_line('kubectl', 'auth', 'can-i', 'create', 'pods', '-n', namespace)}`",
        )
        return (check, *_skip_all(rest, "pod not created"))
    if outcome.state == "unschedulable":
        return (_unschedulable(outcome, context), *_skip_all(rest, "pod not scheduled"))
    pending = outcome.state in ("timeout", "stuck") and outcome.phase == "Pending"
    if pending and not outcome.node_name:
        check = _pending(outcome, "pod.scheduled", "not scheduled", namespace, context)
        return (check, *_skip_all(rest, "pod not scheduled"))
    return ()


def _unstarted(outcome: PodOutcome, namespace: str, context: dict[str, str]) -> tuple[Check, ...]:
    """pod.image failed and the nvidia-smi checks skipped; empty when the container started."""
    if outcome.state in ("timeout", "stuck") and outcome.phase == "Pending":
        check = _pending(outcome, "pod.image", "container not started", namespace, context)
        return (check, *_skip_all(SMI_CHECKS, "container did not start"))
    if outcome.state == "image-pull":
        return (_not_started(outcome, "image-pull", context), *_skip_all(SMI_CHECKS, "image not pulled"))
    if outcome.state == "start-error":  # CreateContainerConfigError, CreateContainerError, RunContainerError
        return (_not_started(outcome, "runtime", context), *_skip_all(SMI_CHECKS, "container did not start"))
    return ()


def _unfinished(outcome: PodOutcome, context: dict[str, str]) -> tuple[Check, ...]:
    """nvidia-smi.run failed and the output checks skipped; empty when nvidia-smi exited 0."""
    if outcome.state == "timeout":
        check = failed(
            "nvidia-smi.run",
            f"nvidia-smi did not finish before --timeout ran out (pod {outcome.phase or 'Running'})",
            "rerun with a larger --timeout, and --keep-pods to inspect the pod",
        )
        return (check, *_skip_all(SMI_CHECKS[1:], "no output"))
    if outcome.state != "succeeded" or outcome.exit_code not in (0, None):
        return (_run_failed(outcome, context), *_skip_all(SMI_CHECKS[1:], "nvidia-smi failed"))
    return ()


def stuck_for_good(events: tuple[tuple[str, str], ...]) -> bool:
    """Whether a Pending pod's Warning events show a failure that waiting will not clear."""
    found = diagnose_events(events)
    return found is not None and found.terminal


def _pending(
    outcome: PodOutcome, check_id: str, not_yet: str, namespace: str, context: dict[str, str]
) -> Check:
    """A pod still Pending: stuck on a known failure (at once), or at --timeout (with why, if known)."""
    found = diagnose_events(outcome.events, **context) if outcome.events else None
    if found is None:
        where = "image pull or container creation" if outcome.node_name else ""
        message = f"{not_yet} before --timeout ran out" + (f" (pod still Pending: {where})" if where else "")
        return failed(check_id, message, _pending_hint(outcome, namespace))
    return failed(check_id, _pending_message(outcome, not_yet, found), found.hint, found.signature_id)


def _pending_message(outcome: PodOutcome, not_yet: str, found: Diagnosis) -> str:
    evidence = found.evidence[:240]
    if outcome.state == "stuck":
        return f"{not_yet}, pod stuck in Pending: {found.cause} ({evidence})"
    return f"{not_yet} before --timeout ran out (pod still Pending: {found.cause}; {evidence})"


def _pending_hint(outcome: PodOutcome, namespace: str) -> str:
    events_of = f"involvedObject.name={outcome.name}"
    return (
        "rerun with a larger --timeout (and --keep-pods), then "
        f"`{command_line('kubectl', '-n', namespace, 'describe', 'pod', outcome.name)}` and "
        f"`{command_line('kubectl', '-n', namespace, 'get', 'events', '--field-selector', events_of)}`"
    )


def _unschedulable(outcome: PodOutcome, context: dict[str, str]) -> Check:
    found = diagnose_scheduling(outcome.message, **context)
    message = f"Unschedulable: {outcome.message}" if outcome.message else "Unschedulable"
    if found is None:
        describe = command_line("kubectl", "describe", "node", context["node"])
        return failed("pod.scheduled", message[:300], f"`{describe}`")
    return failed("pod.scheduled", f"{found.cause} ({found.evidence})", found.hint, found.signature_id)


def _not_started(outcome: PodOutcome, source: str, context: dict[str, str]) -> Check:
    """pod.image for a container waiting on a failure: the image's pull, or its creation or start."""
    text = f"{outcome.reason}: {outcome.message}"
    found = diagnose(text, source, **context)
    message = f"{outcome.reason}: {outcome.message}".strip(": ")[:300]
    if found is None:
        return failed("pod.image", message, f"check {command_line('--image', context['image'])}")
    return failed("pod.image", f"{message} — {found.cause}", found.hint, found.signature_id)


def _run_failed(outcome: PodOutcome, context: dict[str, str]) -> Check:
    text = "\n".join(part for part in (outcome.log, outcome.message) if part)
    found = diagnose(text, "nvidia-smi", **context)
    if found is None and outcome.reason == "StartError":  # a runtime error no row knows
        found = diagnose(outcome.reason, "runtime", **context)
    first_line = next((line.strip() for line in text.splitlines() if line.strip()), outcome.reason)
    message = f"nvidia-smi exited {outcome.exit_code} ({outcome.reason or outcome.state}): {first_line}"
    if found is None:
        return failed(
            "nvidia-smi.run",
            message[:300],
            f"`{command_line('kubectl', '-n', context['namespace'], 'logs', outcome.name)}` "
            "(rerun with --keep-pods)",
        )
    # The line that matched says what went wrong; a start error's first line is the OCI preamble.
    head = f"nvidia-smi exited {outcome.exit_code} ({outcome.reason or outcome.state}): {found.evidence}"
    return failed("nvidia-smi.run", f"{head[:240]} — {found.cause}", found.hint, found.signature_id)


def _split_listing(log: str) -> tuple[str, int]:
    """(the query's CSV, MIG devices listed) of a pod that ran `nvidia-smi -L` before the query."""
    listed = [line for line in log.splitlines() if _LISTED.match(line)]
    csv = "\n".join(line for line in log.splitlines() if not _LISTED.match(line))
    return csv, sum(1 for line in listed if line.lstrip().startswith("MIG "))


def _evaluate_output(
    outcome: PodOutcome, node: NodeInfo, requested: int | None, head: tuple[Check, ...]
) -> PodEvaluation:
    log, mig_devices = _split_listing(outcome.log)
    try:
        rows = parse_query_csv(log, VERIFY_QUERY_FIELDS)
    except ValueError as error:
        check = failed(
            "nvidia-smi.run",
            f"unexpected nvidia-smi output: {error}",
            f"rerun with --keep-pods and read {outcome.name}'s output (its log, or "
            "`.status.containerStatuses[0].state.terminated.message`); is its image a CUDA image?",
        )
        return PodEvaluation((*head, check, *_skip_all(SMI_CHECKS[1:], "no parsable output")))
    run = passed("nvidia-smi.run", f"nvidia-smi listed {len(rows)} GPU(s)")
    products = sorted({row["name"] for row in rows})
    drivers = sorted({row["driver_version"] for row in rows})
    checks = (
        *head,
        run,
        _gpus_seen(rows, requested, node),
        _product(products, node),
        _memory(rows, node),
        _driver(drivers),
    )
    uuids = tuple(row["uuid"] for row in rows)
    return PodEvaluation(checks, len(rows), ", ".join(products), ", ".join(drivers), uuids, mig_devices)


def _gpus_seen(rows: list[dict[str, str]], requested: int | None, node: NodeInfo) -> Check:
    if requested is None:  # MIG: the devices are counted against what the node advertises
        return passed("nvidia-smi.gpus", f"{len(rows)} GPU(s) seen")
    if len(rows) == requested:
        return passed("nvidia-smi.gpus", f"{len(rows)} GPU(s) seen = {requested} requested")
    return failed(
        "nvidia-smi.gpus",
        f"{len(rows)} GPU(s) seen, {requested} requested",
        f"the runtime exposed the wrong devices: check NVIDIA_VISIBLE_DEVICES/CDI handling of the "
        f"nvidia runtime on {node.name} and `nvidia-smi -L` on the node",
    )


def _normalise(product: str) -> str:
    return product.strip().replace(" ", "-").upper()


def _product(products: list[str], node: NodeInfo) -> Check:
    if not products:
        return skipped("nvidia-smi.product", "no GPU listed")
    if len(products) > 1:
        return warned(
            "nvidia-smi.product",
            f"mixed products: {', '.join(products)}",
            "mixed GPU models on one node confuse schedulers; label or split the node",
        )
    label = node.product_label.split("-MIG-", 1)[0]
    # GFD appends -SHARED (time-slicing) or MIG profiles to the product label.
    if label and not _normalise(label).startswith(_normalise(products[0])):
        return failed(
            "nvidia-smi.product",
            f"nvidia-smi shows {products[0]!r}, node label says {label!r}",
            f"GPU feature discovery is stale: restart it on {node.name}",
        )
    return passed("nvidia-smi.product", products[0])


def _memory(rows: list[dict[str, str]], node: NodeInfo) -> Check:
    sizes = sorted({int(row["memory.total"]) for row in rows if row["memory.total"].isdigit()})
    if not sizes:
        return skipped("nvidia-smi.memory", "no memory figure")
    if len(sizes) > 1:
        return warned(
            "nvidia-smi.memory",
            f"GPUs differ in memory: {sizes} MiB",
            f"check `nvidia-smi -q -d MEMORY` on {node.name}",
        )
    # GFD labels a MIG node with its MIG devices' memory, not the parent GPUs' nvidia-smi shows.
    label = node.memory_label_mib if "-MIG-" not in node.product_label else 0
    if label and abs(label - sizes[0]) > max(1, label // 100):
        return failed(
            "nvidia-smi.memory",
            f"{sizes[0]} MiB per GPU, node label says {label} MiB",
            f"`nvidia-smi -q -d MEMORY` on {node.name}; a different board or a MIG mode change",
        )
    return passed("nvidia-smi.memory", f"{sizes[0]} MiB per GPU")


def _driver(drivers: list[str]) -> Check:
    if not drivers:
        return skipped("nvidia-smi.driver", "no driver version")
    if len(drivers) > 1:
        return Check("nvidia-smi.driver", CheckStatus.WARN, f"several driver versions: {drivers}")
    return passed("nvidia-smi.driver", f"driver {drivers[0]}")
