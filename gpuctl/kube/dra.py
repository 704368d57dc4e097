"""GPUs published through Dynamic Resource Allocation (resource.k8s.io): the served API version,
the DRA driver's DeviceClass, and its ResourceSlices grouped by node.

On a DRA cluster NVIDIA's DRA driver publishes GPUs as devices of ResourceSlices (driver
`gpu.nvidia.com`) instead of node allocatable `nvidia.com/gpu`. Reads go through the newest
version the server serves: v1 (Kubernetes 1.34+), then v1beta2, then v1beta1 (whose devices nest
their attributes under `basic`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gpuctl.defaults import DEVICE_GATE_LABEL, DRA_DEVICE_CLASS
from gpuctl.errors import UnreachableError
from gpuctl.kube.client import api_call
from gpuctl.kube.raw import JsonDict, dig, get_list, labels_of, name_of
from gpuctl.kube.rest_requests import get_json

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

GROUP = "resource.k8s.io"
VERSIONS = ("v1", "v1beta2", "v1beta1")  # newest first: the one gpuctl reads and writes
DRIVER = DRA_DEVICE_CLASS  # NVIDIA's DRA driver is named like its GPU DeviceClass
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class DraDevice:
    """One device of a ResourceSlice, with the attributes NVIDIA's driver publishes."""

    name: str
    type: str  # gpu | mig (| vfio ...)
    uuid: str = ""
    product: str = ""
    driver_version: str = ""
    taints: tuple[str, ...] = ()  # key=value:effect of NoSchedule/NoExecute device taints
    pool: str = ""  # the ResourceSlice pool it is published in (NVIDIA's driver: the node's name)
    # Kubernetes 1.37: the DeviceTaintRule (by name) behind each of `taints` not in the slice itself
    rules: tuple[tuple[str, str], ...] = ()
    index: int | None = None  # the GPU's index on its node (the driver's `index` attribute)
    # gpuctl's own gate (`verify --gate` on DRA): the DeviceTaintRule that keeps this GPU from
    # claims until it is proven again, and its taint key. Not among `taints`: verify's claims
    # tolerate it, so that the next run proves the GPU again.
    gated: str = ""
    gate_key: str = ""

    @property
    def reasons(self) -> tuple[str, ...]:
        """Each blocking taint with where it comes from (the slice, or a DeviceTaintRule)."""
        by_rule = dict(self.rules)
        return tuple(
            f"{taint} (DeviceTaintRule {by_rule[taint]})" if taint in by_rule else taint
            for taint in self.taints
        )


@dataclass(frozen=True)
class DraNode:
    name: str
    devices: tuple[DraDevice, ...] = ()

    @property
    def gpus(self) -> int:
        return sum(1 for device in self.devices if device.type == "gpu")

    @property
    def mig_devices(self) -> int:
        return sum(1 for device in self.devices if device.type == "mig")

    @property
    def tainted(self) -> tuple[DraDevice, ...]:
        return tuple(device for device in self.devices if device.taints)

    @property
    def unhealthy(self) -> tuple[tuple[str, str], ...]:
        """(device, taint with its source) of every device a NoSchedule/NoExecute taint keeps from
        claims: the GPUs counted unhealthy."""
        return tuple((device.name, reason) for device in self.tainted for reason in device.reasons)

    @property
    def product(self) -> str:
        return next((device.product for device in self.devices if device.product), "")

    @property
    def driver_version(self) -> str:
        return next((device.driver_version for device in self.devices if device.driver_version), "")


@dataclass(frozen=True)
class DraInventory:
    """What the cluster says about DRA GPUs; `version` "" when resource.k8s.io is not served."""

    version: str = ""
    device_class: bool = False  # DeviceClass gpu.nvidia.com exists
    extended_resource: str = ""  # the DeviceClass's extendedResourceName (e.g. nvidia.com/gpu)
    nodes: dict[str, DraNode] = field(default_factory=dict)
    denied: str = ""  # what RBAC did not let gpuctl read

    @property
    def in_use(self) -> bool:
        """The cluster runs NVIDIA's DRA driver (its DeviceClass or published GPUs)."""
        return bool(self.version) and (self.device_class or bool(self.nodes))


def served_version(api_client: ApiClient) -> str:
    """The newest resource.k8s.io version the server serves, "" when it serves none."""
    body = read_listing(lambda: get_json(api_client, f"/apis/{GROUP}/"), f"the {GROUP} API group")
    if not isinstance(body, dict):
        return ""
    served = {str(v.get("version")) for v in body.get("versions") or []}
    return next((version for version in VERSIONS if version in served), "")


def api_path(version: str, plural: str, *, namespaced: bool = False) -> str:
    """The path of a resource.k8s.io/<version> collection; a namespaced one takes a `namespace`
    path parameter."""
    where = "namespaces/{namespace}/" if namespaced else ""
    return f"/apis/{GROUP}/{version}/{where}{plural}"


def read_inventory(
    api_client: ApiClient, *, denied_is_error: bool = False, taint_rules: bool = True
) -> DraInventory:
    """resource.k8s.io's version, the GPU DeviceClass and the GPU ResourceSlices (3 requests; 1
    where the group is not served), and with `taint_rules` the DeviceTaintRules (1 more).

    A list RBAC denies is named in `denied` (verify's `dra.access` warning), or with
    `denied_is_error` ends the command (exit 3): where no check can say what went unseen (status,
    taint-gpu-nodes), a denied list must not read as "no DRA" (docs/rbac.md)."""
    version = served_version(api_client)
    if not version:
        return DraInventory()
    tolerate = not denied_is_error
    classes = read_listing(
        lambda: get_list(api_client, api_path(version, "deviceclasses")),
        "deviceclasses",
        tolerate_denied=tolerate,
    )
    slices = read_listing(
        lambda: get_list(
            api_client, api_path(version, "resourceslices"), query={"fieldSelector": f"spec.driver={DRIVER}"}
        ),
        "resourceslices",
        tolerate_denied=tolerate,
    )
    denied = [what for what, body in (("deviceclasses", classes), ("resourceslices", slices)) if body == 403]
    gpu_class = next(
        (item for item in _items(classes) if name_of(item) == DRA_DEVICE_CLASS),
        None,
    )
    # DeviceTaintRules (resource.k8s.io/v1 from Kubernetes 1.37; 404 before): admin taints on devices
    rules = (
        read_listing(
            lambda: get_list(api_client, api_path(version, "devicetaintrules")),
            "devicetaintrules",
            tolerate_denied=tolerate,
        )
        if version == "v1" and taint_rules
        else 404
    )
    if rules == 403:
        denied.append("devicetaintrules")
    return DraInventory(
        version=version,
        device_class=gpu_class is not None,
        extended_resource=str(dig(gpu_class or {}, "spec", "extendedResourceName", default="")),
        nodes=with_taint_rules(nodes_from_slices(_items(slices)), _items(rules)),
        denied=", ".join(denied),
    )


def _taint_text(taint: JsonDict) -> str:
    if taint.get("value"):
        return f"{taint.get('key')}={taint.get('value')}:{taint.get('effect')}"
    return f"{taint.get('key')}:{taint.get('effect')}"


def _rule_selects(selector: JsonDict, device: DraDevice) -> bool:
    """A DeviceTaintRule's deviceSelector: driver, pool and device, each unset matching any."""
    wanted = {"driver": DRIVER, "pool": device.pool, "device": device.name}
    return all(selector.get(key) in (None, "", value) for key, value in wanted.items())


def is_gate_rule(rule: JsonDict) -> bool:
    """A DeviceTaintRule of gpuctl's own gate (`verify --gate` on DRA)."""
    return labels_of(rule).get(DEVICE_GATE_LABEL) == "device"


def with_taint_rules(nodes: dict[str, DraNode], rules: list[JsonDict]) -> dict[str, DraNode]:
    """The nodes' devices with the blocking taints of the DeviceTaintRules that select them; a
    device gpuctl's gate keeps out is marked `gated` instead."""
    gates = [rule for rule in rules if is_gate_rule(rule)]
    nodes = _with_gates(nodes, gates) if gates else nodes
    rules = [rule for rule in rules if not is_gate_rule(rule)]
    blocking = [
        (name_of(rule), dig(rule, "spec", "deviceSelector", default={}) or {}, dig(rule, "spec", "taint"))
        for rule in rules
        if (dig(rule, "spec", "taint", default={}) or {}).get("effect") in BLOCKING_EFFECTS
    ]
    if not blocking:
        return nodes
    tainted = {}
    for node_name, node in nodes.items():
        devices = []
        for device in node.devices:
            extra = [
                (_taint_text(taint), rule)
                for rule, selector, taint in blocking
                if _rule_selects(selector, device)
            ]
            devices.append(
                replace(
                    device,
                    taints=(*device.taints, *(text for text, _ in extra)),
                    rules=(*device.rules, *extra),
                )
                if extra
                else device
            )
        tainted[node_name] = DraNode(node_name, tuple(devices))
    return tainted


def _with_gates(nodes: dict[str, DraNode], gates: list[JsonDict]) -> dict[str, DraNode]:
    selected = [
        (name_of(rule), dig(rule, "spec", "deviceSelector", default={}) or {}, dig(rule, "spec", "taint"))
        for rule in gates
    ]
    marked = {}
    for node_name, node in nodes.items():
        devices = []
        for device in node.devices:
            rule = next(((n, t) for n, selector, t in selected if _rule_selects(selector, device)), None)
            devices.append(
                replace(device, gated=rule[0], gate_key=str((rule[1] or {}).get("key", "")))
                if rule
                else device
            )
        marked[node_name] = DraNode(node_name, tuple(devices))
    return marked


def _items(body: JsonDict | int) -> list[JsonDict]:
    return list(body.get("items") or []) if isinstance(body, dict) else []


def read_listing(call: Any, what: str, *, tolerate_denied: bool = True) -> JsonDict | int:
    """The body, or the status (403, 404) that means "not for gpuctl to see" rather than an outage
    (without `tolerate_denied`, a 403 raises: exit 3 naming the verb and resource)."""
    from kubernetes.client.exceptions import ApiException

    try:
        with api_call("list", what):
            body: JsonDict = call()
            return body
    except UnreachableError as error:
        if tolerate_denied and isinstance(error.__cause__, ApiException) and error.__cause__.status == 403:
            return 403
        raise
    except ApiException as error:
        if error.status == 404:
            return 404
        raise


def _attribute(attributes: JsonDict, name: str) -> str:
    value = attributes.get(name) or {}
    if not isinstance(value, dict):
        return ""
    return str(next((v for k, v in value.items() if k in ("string", "version", "int", "bool")), ""))


def device_from_json(device: JsonDict, pool: str = "") -> DraDevice:
    # v1beta1 nests attributes under `basic`; v1beta2 and v1 carry them on the device.
    attributes = dig(device, "attributes", default=None) or dig(device, "basic", "attributes", default={})
    taints = dig(device, "taints", default=None) or dig(device, "basic", "taints", default=[]) or []
    blocking = tuple(_taint_text(t) for t in taints if t.get("effect") in BLOCKING_EFFECTS)
    index = _attribute(attributes, "index")
    return DraDevice(
        name=str(device.get("name") or ""),
        index=int(index) if index.isdigit() else None,
        type=_attribute(attributes, "type") or "gpu",
        uuid=_attribute(attributes, "uuid"),
        product=_attribute(attributes, "productName"),
        driver_version=_attribute(attributes, "driverVersion"),
        taints=blocking,
        pool=pool,
    )


def nodes_from_slices(slices: list[JsonDict]) -> dict[str, DraNode]:
    """Node name → its devices, over every slice of the node's pools (node-local slices only)."""
    devices: dict[str, list[DraDevice]] = {}
    for item in slices:
        node = str(dig(item, "spec", "nodeName", default="") or "")
        if not node or dig(item, "spec", "driver", default=DRIVER) != DRIVER:
            continue
        pool = str(dig(item, "spec", "pool", "name", default="") or "")
        devices.setdefault(node, []).extend(
            device_from_json(d, pool) for d in dig(item, "spec", "devices", default=[])
        )
    return {node: DraNode(node, tuple(found)) for node, found in sorted(devices.items())}


def same_version(published: str, reported: str) -> bool:
    """The driver publishes a semantic version (550.90.7); nvidia-smi prints 550.90.07."""

    def parts(text: str) -> list[str]:
        return [part.lstrip("0") or "0" for part in text.split(".")]

    return bool(published and reported) and parts(published) == parts(reported)
