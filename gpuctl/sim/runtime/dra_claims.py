"""ResourceClaims, as kube-controller-manager, kube-scheduler and the kubelet handle them: a pod's
claim templates become generated claims (named in the pod's status), the scheduler's
DynamicResources filter allocates devices of the node's ResourceSlices that no other claim holds
and whose taints the request tolerates, and the claims of a pod go with it.

Selectors: the DeviceClass and request CEL expressions the sim evaluates are conjunctions (&&) of
`device.driver == 'X'` and `device.attributes['DOMAIN'].NAME == 'VALUE'`; any other expression
makes the claim unallocatable with a message that says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime.dra import CLASSES, SLICES, TAINT_RULES
from gpuctl.sim.runtime.objects import random_suffix
from gpuctl.sim.runtime.predicates import allocatable_devices, pod_device_requests, quantity_to_int
from gpuctl.sim.runtime.sharing import Device
from gpuctl.sim.runtime.store import Change, clone

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]
CLAIMS = "resourceclaims.resource.k8s.io"
TEMPLATES = "resourceclaimtemplates.resource.k8s.io"
CANNOT_ALLOCATE = "cannot allocate all claims"
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
# Kubernetes 1.37 (DRAExtendedResource): the claim kube-scheduler creates for a pod's extended
# resource requests that a DeviceClass maps (k8s.io/api resource/v1 ExtendedResourceClaimAnnotation).
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
_TERM = re.compile(
    r"""^device\.(?:driver\s*==\s*['"](?P<driver>[^'"]+)['"]|attributes\[['"](?P<domain>[^'"]+)['"]\]"""
    r"""\.(?P<name>\w+)\s*==\s*['"](?P<value>[^'"]*)['"])$"""
)


@dataclass(frozen=True)
class SliceDevice:
    driver: str
    pool: str
    node: str
    device: Obj

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device["name"])

    def attribute(self, name: str) -> str:
        value = (self.device.get("attributes") or {}).get(name) or {}
        return str(next(iter(value.values()), "")) if isinstance(value, dict) else ""


def _matches(expression: str, device: SliceDevice) -> bool | None:
    """Whether the device satisfies the expression; None for one the sim cannot evaluate."""
    for term in (part.strip() for part in expression.split("&&")):
        found = _TERM.match(term)
        if found is None:
            return None
        if found["driver"] is not None and found["driver"] != device.driver:
            return False
        if found["name"] is not None and (
            found["domain"] != device.driver or device.attribute(found["name"]) != found["value"]
        ):
            return False
    return True


def _tolerated(device: SliceDevice, tolerations: list[Obj]) -> bool:
    for taint in device.device.get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(
            (t.get("key") in (None, "", taint.get("key")))
            and (t.get("operator") == "Exists" or t.get("value", "") == taint.get("value", ""))
            for t in tolerations
        ):
            return False
    return True


def _rule_selects(rule: Obj, driver: str, pool: str, device: Obj) -> bool:
    """A DeviceTaintRule's deviceSelector (driver, pool, device: each unset matches any)."""
    selector = (rule.get("spec") or {}).get("deviceSelector") or {}
    wanted = {"driver": driver, "pool": pool, "device": device.get("name")}
    return all(selector.get(key) in (None, "", value) for key, value in wanted.items())


def with_rule_taints(driver: str, pool: str, device: Obj, rules: list[Obj]) -> Obj:
    """The device with the taints of the DeviceTaintRules that select it (Kubernetes 1.37)."""
    extra = [
        (r.get("spec") or {}).get("taint") or {} for r in rules if _rule_selects(r, driver, pool, device)
    ]
    if not extra:
        return device
    return dict(device, taints=[*(device.get("taints") or []), *extra])


class Allocator:
    """One scheduling pass's view of the devices: per node, and which are taken."""

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self.by_node: dict[str, list[SliceDevice]] = {}
        rules = cluster.store.items(TAINT_RULES) if cluster.scenario.dra_137 else []
        for item in cluster.store.items(SLICES):
            spec = item.get("spec") or {}
            node = spec.get("nodeName") or ""
            pool = (spec.get("pool") or {}).get("name", node)
            driver = spec.get("driver", "")
            for device in spec.get("devices") or []:
                self.by_node.setdefault(node, []).append(
                    SliceDevice(driver, pool, node, with_rule_taints(driver, pool, device, rules))
                )
        self.taken: set[tuple[str, str, str]] = set()
        for claim in cluster.store.items(CLAIMS):
            for result in _results(claim):
                self.taken.add((result["driver"], result["pool"], result["device"]))
        self.classes = {c["metadata"]["name"]: c for c in cluster.store.items(CLASSES)}
        # extended resource name → the DeviceClass that maps it (1.37: DRAExtendedResource)
        self.extended: dict[str, str] = {}
        if cluster.scenario.dra_137:
            for name, device_class in self.classes.items():
                mapped = (device_class.get("spec") or {}).get("extendedResourceName")
                if mapped:
                    self.extended.setdefault(str(mapped), name)

    def pod_claims(self, pod: Obj) -> list[Obj] | str:
        """The pod's claims, or why they are not all there."""
        claims = []
        generated = {
            s.get("name"): s.get("resourceClaimName")
            for s in pod.get("status", {}).get("resourceClaimStatuses") or []
        }
        for entry in pod.get("spec", {}).get("resourceClaims") or []:
            name = entry.get("resourceClaimName") or generated.get(entry.get("name"))
            claim = self.cluster.store.get(CLAIMS, pod["metadata"]["namespace"], name or "")
            if claim is None:
                return f'waiting for resource claim "{name or entry.get("name")}" to be created'
            claims.append(claim)
        return claims

    def _pick(self, request: Obj, node: str, taken: set[tuple[str, str, str]]) -> list[SliceDevice] | str:
        exact = request.get("exactly") or request  # v1 nests the request under `exactly`
        device_class = self.classes.get(exact.get("deviceClassName", ""))
        if device_class is None:
            return f"device class {exact.get('deviceClassName')} does not exist"
        expressions = [
            s["cel"]["expression"]
            for s in (device_class.get("spec") or {}).get("selectors") or []
            if s.get("cel")
        ]
        expressions += [s["cel"]["expression"] for s in exact.get("selectors") or [] if s.get("cel")]
        candidates = []
        for device in self.by_node.get(node, []):
            verdicts = [_matches(expression, device) for expression in expressions]
            if None in verdicts:
                return "a CEL selector the simulated scheduler cannot evaluate"
            if all(verdicts) and _tolerated(device, exact.get("tolerations") or []):
                candidates.append(device)
        free = [device for device in candidates if device.key not in taken]
        if exact.get("allocationMode") == "All":
            return free if candidates and len(free) == len(candidates) else CANNOT_ALLOCATE
        wanted = int(exact.get("count", 1))
        return free[:wanted] if len(free) >= wanted else CANNOT_ALLOCATE

    def allocation(self, claim: Obj, node: str, taken: set[tuple[str, str, str]]) -> list[Obj] | str:
        """The claim's results on `node`, or why it cannot be allocated there."""
        results = []
        for request in (claim.get("spec") or {}).get("devices", {}).get("requests") or []:
            picked = self._pick(request, node, taken)
            if isinstance(picked, str):
                return picked
            for device in picked:
                taken.add(device.key)
                results.append(
                    {
                        "request": request.get("name", ""),
                        "driver": device.driver,
                        "pool": device.pool,
                        "device": device.device["name"],
                    }
                )
        return results

    def reason(self, pod: Obj, node: str) -> str | None:
        """The DynamicResources filter: None when every claim of the pod fits on `node`."""
        if not pod.get("spec", {}).get("resourceClaims"):
            return None
        claims = self.pod_claims(pod)
        if isinstance(claims, str):
            return claims
        taken = set(self.taken)
        for claim in claims:
            allocated = (claim.get("status") or {}).get("allocation")
            if allocated:
                if _allocated_node(allocated) not in ("", node):
                    return CANNOT_ALLOCATE
                continue
            if isinstance(self.allocation(claim, node, taken), str):
                return CANNOT_ALLOCATE
        return None

    # -- extended resources served through DRA (Kubernetes 1.37) ---------------------------------

    def extended_requests(self, pod: Obj, node: Obj) -> dict[str, int]:
        """The pod's extended resource requests a DeviceClass maps and the node's allocatable does
        not hold (a device plugin advertising the resource serves it as before)."""
        if not self.extended:
            return {}
        return {
            name: count
            for name, count in pod_device_requests(pod).items()
            if name in self.extended and allocatable_devices(node, name) == 0
        }

    def extended_claim_spec(self, pod: Obj, requests: dict[str, int]) -> tuple[Obj, list[Obj]]:
        """The special claim's spec and the pod's requestMappings: one ExactCount request per
        container and mapped resource, named container-<index>-request-<index of the resource in
        the container's sorted requests> as kube-scheduler names them."""
        spec = pod.get("spec") or {}
        device_requests, mappings = [], []
        every = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
        for index, container in enumerate(every):
            resources = container.get("resources") or {}
            asked = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
            for position, name in enumerate(sorted(asked)):
                if name not in requests or quantity_to_int(asked[name]) <= 0:
                    continue
                request_name = f"container-{index}-request-{position}"
                device_requests.append(
                    {
                        "name": request_name,
                        "exactly": {
                            "deviceClassName": self.extended[name],
                            "allocationMode": "ExactCount",
                            "count": quantity_to_int(asked[name]),
                        },
                    }
                )
                mappings.append(
                    {
                        "containerName": container.get("name", ""),
                        "resourceName": name,
                        "requestName": request_name,
                    }
                )
        return {"devices": {"requests": device_requests}}, mappings

    def extended_reason(self, pod: Obj, node: Obj, requests: dict[str, int]) -> str | None:
        """The DynamicResources filter for the special claim: None when it fits on `node`."""
        claim = {"spec": self.extended_claim_spec(pod, requests)[0]}
        fits = self.allocation(claim, node["metadata"]["name"], set(self.taken))
        return CANNOT_ALLOCATE if isinstance(fits, str) else None

    def reserve_extended(self, pod: Obj, node: Obj) -> Obj:
        """Bind-time: create the special claim, allocated and reserved for the pod, and name it in
        pod.status.extendedResourceClaimStatus; the pod as bound."""
        requests = self.extended_requests(pod, node)
        if not requests:
            return pod
        spec, mappings = self.extended_claim_spec(pod, requests)
        node_name = node["metadata"]["name"]
        results = self.allocation({"spec": spec}, node_name, self.taken)
        if isinstance(results, str):
            return pod
        meta = pod["metadata"]
        claim_name = f"{meta['name']}-extended-resources-{random_suffix()}"[:253]
        claim: Obj = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": claim_name,
                "generateName": f"{meta['name']}-extended-resources-",
                "namespace": meta["namespace"],
                "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
                "ownerReferences": [_pod_owner(pod)],
            },
            "spec": spec,
            "status": {
                "allocation": _allocation(results, node_name),
                "reservedFor": [{"resource": "pods", "name": meta["name"], "uid": meta["uid"]}],
            },
        }
        self.cluster.store.add(CLAIMS, claim)
        extended = {"resourceClaimName": claim_name, "requestMappings": mappings}
        updated = dict(pod, status=dict(pod.get("status") or {}, extendedResourceClaimStatus=extended))
        self.cluster.store.put("pods", updated)
        return updated

    def reserve(self, pod: Obj, node: str) -> None:
        """Bind-time: write each claim's allocation and reserve it for the pod."""
        claims = self.pod_claims(pod)
        if isinstance(claims, str):
            return
        for claim in claims:
            status = dict(claim.get("status") or {})
            if not status.get("allocation"):
                results = self.allocation(claim, node, self.taken)
                if isinstance(results, str):
                    return
                status["allocation"] = _allocation(results, node)
            reserved = [r for r in status.get("reservedFor") or [] if r.get("uid") != pod["metadata"]["uid"]]
            status["reservedFor"] = [
                *reserved,
                {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]},
            ]
            self.cluster.store.put(CLAIMS, dict(claim, status=status))


def _allocation(results: list[Obj], node: str) -> Obj:
    return {
        "devices": {"results": results},
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
            ]
        },
    }


def _pod_owner(pod: Obj) -> Obj:
    meta = pod["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _results(claim: Obj) -> list[Obj]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or [])


def _allocated_node(allocation: Obj) -> str:
    for term in (allocation.get("nodeSelector") or {}).get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                return str(field["values"][0])
    return ""


# -- kube-controller-manager's resourceclaim controller ------------------------------------------


def generate_claims(cluster: ClusterState, pod: Obj) -> str:
    """Create the pod's claims from its templates (once) and name them in its status; "" when
    done, else the controller's complaint (a missing template)."""
    entries = [
        e for e in pod.get("spec", {}).get("resourceClaims") or [] if e.get("resourceClaimTemplateName")
    ]
    statuses = list(pod.get("status", {}).get("resourceClaimStatuses") or [])
    done = {s.get("name") for s in statuses}
    namespace = pod["metadata"]["namespace"]
    for entry in entries:
        if entry.get("name") in done:
            continue
        template = cluster.store.get(TEMPLATES, namespace, entry["resourceClaimTemplateName"])
        if template is None:
            return (
                f"PodResourceClaim {entry.get('name')}: resource claim template "
                f'"{entry["resourceClaimTemplateName"]}": resourceclaimtemplate.resource.k8s.io '
                f'"{entry["resourceClaimTemplateName"]}" not found'
            )
        claim = _claim_from(template, pod, entry["name"])
        cluster.store.add(CLAIMS, claim)
        statuses.append({"name": entry["name"], "resourceClaimName": claim["metadata"]["name"]})
    if len(statuses) != len(pod.get("status", {}).get("resourceClaimStatuses") or []):
        cluster.store.put(
            "pods", dict(pod, status=dict(pod.get("status") or {}, resourceClaimStatuses=statuses))
        )
    return ""


def _claim_from(template: Obj, pod: Obj, claim_name: str) -> Obj:
    meta = (template.get("spec") or {}).get("metadata") or {}
    pod_meta = pod["metadata"]
    annotations = dict(meta.get("annotations") or {}, **{POD_CLAIM_ANNOTATION: claim_name})
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": f"{pod_meta['name']}-{claim_name}-{random_suffix()}"[:253],
            "generateName": f"{pod_meta['name']}-{claim_name}-",
            "namespace": pod_meta["namespace"],
            "labels": dict(meta.get("labels") or {}),
            "annotations": annotations,
            "ownerReferences": [_pod_owner(pod)],
        },
        "spec": clone((template.get("spec") or {}).get("spec") or {}),
    }


def watch(cluster: ClusterState) -> None:
    """kube-controller-manager's resourceclaim controller: claims follow their pods."""
    cluster.store.watch("pods", lambda change: _pod_deleted(cluster, change))


def _pod_deleted(cluster: ClusterState, change: Change) -> None:
    if change.kind == "DELETED":
        pod_removed(cluster, change.previous or change.obj)


def pod_removed(cluster: ClusterState, pod: Obj) -> None:
    """Generated claims go with their pod; other claims are released."""
    uid = pod["metadata"]["uid"]
    for claim in cluster.store.items(CLAIMS, pod["metadata"]["namespace"]):
        owners = claim["metadata"].get("ownerReferences") or []
        if any(owner.get("uid") == uid for owner in owners):
            cluster.store.remove(CLAIMS, claim["metadata"]["namespace"], claim["metadata"]["name"])
            continue
        reserved = (claim.get("status") or {}).get("reservedFor") or []
        if any(r.get("uid") == uid for r in reserved):
            rest = [r for r in reserved if r.get("uid") != uid]
            cluster.store.put(
                CLAIMS,
                dict(
                    claim,
                    status={
                        "reservedFor": rest,
                        **({"allocation": claim["status"]["allocation"]} if rest else {}),
                    },
                ),
            )
    cluster.schedule_soon()


# -- the kubelet: the devices behind a running pod's claims ---------------------------------------


def claimed_devices(cluster: ClusterState, pod: Obj, node: str) -> list[Device]:
    """The devices the pod's allocated claims give it, as the container sees them."""
    extended = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    if not pod.get("spec", {}).get("resourceClaims") and not extended:
        return []
    claims = Allocator(cluster).pod_claims(pod)
    if isinstance(claims, str):
        return []
    special = cluster.store.get(CLAIMS, pod["metadata"]["namespace"], extended.get("resourceClaimName") or "")
    claims = [*claims, *([special] if special is not None else [])]
    by_name = {
        d["name"]: d
        for s in cluster.store.items(SLICES)
        if (s.get("spec") or {}).get("nodeName") == node
        for d in s["spec"].get("devices") or []
    }
    devices = []
    for claim in claims:
        for result in _results(claim):
            device = by_name.get(result["device"])
            if device is None:
                continue
            attributes = device.get("attributes") or {}
            if "parentIndex" in attributes:
                mig = int(device["name"].rsplit("-", 1)[1])
                profile = attributes.get("profile", {}).get("string", "")
                devices.append(
                    Device(result["driver"], int(attributes["parentIndex"]["int"]), mig, profile=profile)
                )
            else:
                devices.append(Device(result["driver"], int(attributes.get("index", {}).get("int", 0))))
    return devices
