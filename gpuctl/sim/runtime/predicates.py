"""Placement predicates shared by the scheduler and the DaemonSet controller: node selector,
required node affinity, taints and tolerations, extended resources."""

from __future__ import annotations

from typing import Any

from gpuctl.sim.runtime.objects import GPU

Obj = dict[str, Any]

SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")


def tolerates(toleration: Obj, taint: Obj) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if not key:
        return operator == "Exists"
    if key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    return (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taint(node: Obj, tolerations: list[Obj]) -> Obj | None:
    """The first NoSchedule/NoExecute taint of `node` no toleration matches, else None."""
    taints: list[Obj] = node.get("spec", {}).get("taints") or []
    for taint in taints:
        if taint.get("effect") not in SCHEDULING_EFFECTS:
            continue
        if not any(tolerates(toleration, taint) for toleration in tolerations):
            return taint
    return None


def _compare(operator: str, value: str | None, values: list[str]) -> bool:
    """Gt/Lt: integer comparison against the single value."""
    try:
        number, bound = int(value or ""), int(values[0])
    except (ValueError, IndexError):
        return False
    return number > bound if operator == "Gt" else number < bound


def _expression_matches(expression: Obj, value: str | None) -> bool:
    operator = expression.get("operator")
    values = expression.get("values") or []
    checks = {
        "In": lambda: value is not None and value in values,
        "NotIn": lambda: value is None or value not in values,
        "Exists": lambda: value is not None,
        "DoesNotExist": lambda: value is None,
        "Gt": lambda: _compare("Gt", value, values),
        "Lt": lambda: _compare("Lt", value, values),
    }
    check = checks.get(str(operator))
    return bool(check()) if check is not None else False


def matches_label_selector(selector: Obj | None, labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector (matchLabels, matchExpressions) against an object's labels; None
    selects nothing and {} everything (LabelSelectorAsSelector)."""
    if selector is None:
        return False
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    expressions = selector.get("matchExpressions") or []
    return all(_expression_matches(term, labels.get(term.get("key", ""))) for term in expressions)


def _term_matches(term: Obj, node: Obj) -> bool:
    labels = node["metadata"].get("labels") or {}
    fields = {"metadata.name": node["metadata"]["name"]}
    expressions = term.get("matchExpressions") or []
    field_expressions = term.get("matchFields") or []
    if not expressions and not field_expressions:
        return False  # an empty term matches no objects
    return all(
        _expression_matches(expression, labels.get(expression.get("key", ""))) for expression in expressions
    ) and all(
        _expression_matches(expression, fields.get(expression.get("key", "")))
        for expression in field_expressions
    )


def matches_node_selection(pod_spec: Obj, node: Obj) -> bool:
    """nodeSelector and requiredDuringSchedulingIgnoredDuringExecution node affinity."""
    labels = node["metadata"].get("labels") or {}
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    affinity = (pod_spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True
    terms = required.get("nodeSelectorTerms") or []
    return any(_term_matches(term, node) for term in terms)


def affinity_node_names(pod_spec: Obj) -> set[str] | None:
    """Node names a pod is pinned to by matchFields metadata.name In [...] (DaemonSet pods)."""
    affinity = (pod_spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    names: set[str] = set()
    for term in required.get("nodeSelectorTerms") or []:
        fields = term.get("matchFields") or []
        pinned = [f for f in fields if f.get("key") == "metadata.name" and f.get("operator") == "In"]
        if not pinned:
            return None
        names.update(pinned[0].get("values") or [])
    return names or None


def quantity_to_int(value: Any) -> int:
    """Integer quantities of extended resources ("8", 8); anything else counts as 0."""
    try:
        return int(str(value))
    except ValueError:
        return 0


def container_gpus(container: Obj) -> int:
    """Limits imply requests for extended resources; a request without a limit is invalid."""
    resources = container.get("resources") or {}
    limit = (resources.get("limits") or {}).get(GPU)
    request = (resources.get("requests") or {}).get(GPU)
    return quantity_to_int(limit if limit is not None else request or 0)


def pod_gpus(pod: Obj) -> int:
    spec = pod.get("spec", {})
    regular = sum(container_gpus(c) for c in spec.get("containers") or [])
    init = max((container_gpus(c) for c in spec.get("initContainers") or []), default=0)
    return max(regular, init)


def allocatable_gpus(node: Obj) -> int:
    return quantity_to_int((node.get("status", {}).get("allocatable") or {}).get(GPU, 0))


# Extended resources NVIDIA's plugin serves: nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*.
DEVICE_RESOURCE_PREFIX = "nvidia.com/"


def _container_devices(container: Obj) -> dict[str, int]:
    resources = container.get("resources") or {}
    merged = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
    return {
        name: quantity_to_int(value)
        for name, value in merged.items()
        if name.startswith(DEVICE_RESOURCE_PREFIX) and quantity_to_int(value) > 0
    }


def pod_device_requests(pod: Obj) -> dict[str, int]:
    """Device-plugin resources a pod asks for: per name, max(sum of containers, largest init)."""
    spec = pod.get("spec", {})
    wanted: dict[str, int] = {}
    for container in spec.get("containers") or []:
        for name, count in _container_devices(container).items():
            wanted[name] = wanted.get(name, 0) + count
    for container in spec.get("initContainers") or []:
        for name, count in _container_devices(container).items():
            wanted[name] = max(wanted.get(name, 0), count)
    return wanted


def pod_other_extended_requests(pod: Obj) -> dict[str, int]:
    """Extended resources other than NVIDIA's a pod's containers request (rdma/ib,
    vpc.amazonaws.com/efa): names with a domain, as Kubernetes spells extended resources."""
    wanted: dict[str, int] = {}
    for container in pod.get("spec", {}).get("containers") or []:
        resources = container.get("resources") or {}
        merged = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
        for name, value in merged.items():
            if "/" in name and not name.startswith(DEVICE_RESOURCE_PREFIX) and quantity_to_int(value) > 0:
                wanted[name] = wanted.get(name, 0) + quantity_to_int(value)
    return wanted


def allocatable_devices(node: Obj, name: str) -> int:
    return quantity_to_int((node.get("status", {}).get("allocatable") or {}).get(name, 0))


def is_terminated(pod: Obj) -> bool:
    return pod.get("status", {}).get("phase") in ("Succeeded", "Failed")
