"""Defaulting and validation the API server applies to created objects.

They live in the runtime, below the API, because the DaemonSet controller creates its pods straight
in the store and must default them the same way the API's writes do."""

from __future__ import annotations

import re
from typing import Any

Obj = dict[str, Any]
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def apply_pod_defaults(pod: Obj) -> None:
    """A created pod: its spec's defaults, then what admission adds to pods (not to templates)."""
    apply_pod_spec_defaults(pod)
    tolerations = pod["spec"].setdefault("tolerations", [])
    # DefaultTolerationSeconds admission: every pod tolerates NotReady/Unreachable for 300 s.
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(t.get("key") == key and t.get("effect") == "NoExecute" for t in tolerations):
            tolerations.append(
                {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            )
    pod.setdefault("status", {"phase": "Pending", "qosClass": "BestEffort"})


def apply_pod_spec_defaults(pod: Obj) -> None:
    """Defaults of a pod's spec, for pods and for the pod templates of workloads alike."""
    spec = pod.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 2000001000 if spec.get("priorityClassName") == "system-node-critical" else 0)
    for container in spec.get("containers") or []:
        container.setdefault(
            "imagePullPolicy",
            "Always" if str(container.get("image", "")).endswith(":latest") else "IfNotPresent",
        )
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        container.setdefault("resources", {})
        _copy_limits_to_requests(container["resources"])


def _copy_limits_to_requests(resources: Obj) -> None:
    limits = resources.get("limits") or {}
    if limits:
        requests = resources.setdefault("requests", {})
        for name, value in limits.items():
            requests.setdefault(name, value)


def validate(kind: str, obj: Obj) -> list[str]:
    """Field errors in the API server's wording ('spec.containers[0].image: Required value')."""
    errors = []
    name = obj.get("metadata", {}).get("name", "")
    if not DNS_SUBDOMAIN.match(name) or (kind in ("Namespace", "Pod") and not _valid_label_name(kind, name)):
        errors.append(
            f'metadata.name: Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of '
            "lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character"
        )
    if kind == "Pod":
        errors += _validate_pod_spec(obj.get("spec") or {}, "spec")
    if kind == "DaemonSet":
        template_spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        errors += _validate_pod_spec(template_spec, "spec.template.spec")
        if not (obj.get("spec") or {}).get("selector"):
            errors.append("spec.selector: Required value")
    return errors


def _valid_label_name(kind: str, name: str) -> bool:
    return kind != "Namespace" or bool(DNS_LABEL.match(name))


def _validate_pod_spec(spec: Obj, path: str) -> list[str]:
    errors = []
    containers = spec.get("containers") or []
    if not containers:
        errors.append(f"{path}.containers: Required value")
    seen = set()
    for index, container in enumerate(containers):
        where = f"{path}.containers[{index}]"
        if not container.get("name"):
            errors.append(f"{where}.name: Required value")
        elif container["name"] in seen:
            errors.append(f'{where}.name: Duplicate value: "{container["name"]}"')
        seen.add(container.get("name"))
        if not container.get("image"):
            errors.append(f"{where}.image: Required value")
        resources = container.get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        for resource, value in requests.items():
            if (
                "/" in resource
                and not resource.startswith("kubernetes.io/")
                and str(limits.get(resource, value)) != str(value)
            ):
                errors.append(
                    f'{where}.resources.requests[{resource}]: Invalid value: "{value}": '
                    f"must be equal to {resource} limit"
                )
            if "/" in resource and resource not in limits and not resource.startswith("kubernetes.io/"):
                errors.append(
                    f"{where}.resources.limits: Required value: "
                    "Limit must be set for non overcommitable resources"
                )
    if spec.get("restartPolicy") not in (None, "Always", "OnFailure", "Never"):
        errors.append(
            f'{path}.restartPolicy: Unsupported value: "{spec["restartPolicy"]}": '
            'supported values: "Always", "Never", "OnFailure"'
        )
    return errors
