"""ResourceClaimTemplates and ResourceClaims of one verification run.

A claim generated from a template lives only as long as its pod runs: kube-controller-manager
deletes it as soon as the pod ends. So the run's claims are watched while its pods run, and each
claim's allocation is remembered as it is written.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuctl.errors import UnreachableError
from gpuctl.kube import rest_requests
from gpuctl.kube.client import api_call
from gpuctl.kube.dra import api_path
from gpuctl.kube.gpu_use import NodeUse
from gpuctl.kube.pods import status_of
from gpuctl.kube.raw import JsonDict, dig, get_list, name_of, stream_json_lines
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

WATCH_SECONDS = 60  # one watch request; the watch is reopened until stopped


@dataclass(frozen=True)
class ClaimAllocation:
    """What the scheduler allocated to one claim of the run (while it lasted)."""

    claim: str
    pod: str  # the pod the claim was generated for ("" if not known)
    node: str  # the node the allocation is restricted to
    devices: tuple[str, ...]  # device names, in the driver's pools


def claim_template(
    version: str, name: str, labels: dict[str, str], device_class: str, tolerated: tuple[str, ...] = ()
) -> JsonDict:
    """All devices of `device_class` on the node the pod lands on (allocation mode All);
    `tolerated`: device taint keys the request tolerates (gpuctl's own gate, so that a gated GPU
    is proven again)."""
    request: JsonDict = {"deviceClassName": device_class, "allocationMode": "All"}
    if tolerated:
        request["tolerations"] = [
            {"key": key, "operator": "Exists", "effect": "NoSchedule"} for key in sorted(set(tolerated))
        ]
    if version != "v1beta1":  # v1beta2 and v1 nest a plain request under `exactly`
        request = {"exactly": request}
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {
            "metadata": {"labels": dict(labels)},  # copied onto each generated claim
            "spec": {"devices": {"requests": [{"name": "gpus", **request}]}},
        },
    }


def create_template(api_client: ApiClient, version: str, namespace: str, template: JsonDict) -> None:
    path = api_path(version, "resourceclaimtemplates", namespaced=True)
    with api_call("create", f"resourceclaimtemplates in namespace {namespace}"):
        rest_requests.request_json(api_client, "POST", path, body=template, namespace=namespace)


def delete_run_objects(api_client: ApiClient, version: str, namespace: str, selector: str) -> None:
    """Delete the run's claim templates (one request). The claims need no request: each is owned
    by its pod, and kube-controller-manager deletes it with the pod (as pods' cleanup does).

    A template left behind is said as leftover pods are (kube/pods.py): exit 3 naming the denied
    request and the command that removes it; one already gone (404) is no error."""
    from kubernetes.client.exceptions import ApiException

    what = f"resourceclaimtemplates in namespace {namespace}"
    try:
        with api_call("deletecollection", what):
            rest_requests.delete_collection(
                api_client,
                api_path(version, "resourceclaimtemplates", namespaced=True),
                {"labelSelector": selector},
                namespace=namespace,
            )
    except ApiException as error:
        if error.status != 404:
            raise _template_left(namespace, selector, f"{error.status} {error.reason}") from error
    except UnreachableError as error:
        raise _template_left(namespace, selector, error.message) from error


def _template_left(namespace: str, selector: str, why: str) -> UnreachableError:
    delete_command = command_line(
        "kubectl", "-n", namespace, "delete", "resourceclaimtemplates", "-l", selector
    )
    return UnreachableError(
        f"cleanup failed, the run's ResourceClaimTemplate left in namespace {namespace}: {why}",
        hint=f"delete it with `{delete_command}`",
    )


def allocation_of(claim: JsonDict) -> ClaimAllocation | None:
    allocation = dig(claim, "status", "allocation", default=None)
    if not allocation:
        return None
    node = ""
    for term in dig(allocation, "nodeSelector", "nodeSelectorTerms", default=[]) or []:
        for requirement in [*(term.get("matchFields") or []), *(term.get("matchExpressions") or [])]:
            if requirement.get("key") in ("metadata.name", "kubernetes.io/hostname") and requirement.get(
                "values"
            ):
                node = str(requirement["values"][0])
    owners = dig(claim, "metadata", "ownerReferences", default=[]) or []
    pod = next((str(o.get("name")) for o in owners if o.get("kind") == "Pod"), "")
    results = dig(allocation, "devices", "results", default=[]) or []
    return ClaimAllocation(name_of(claim), pod, node, tuple(str(r.get("device")) for r in results))


class ClaimWatch:
    """Remember each allocation of the run's claims, from a list and a watch on a thread."""

    def __init__(self, api_client: ApiClient, version: str, namespace: str, selector: str) -> None:
        self.api_client = api_client
        self.path = api_path(version, "resourceclaims", namespaced=True)
        self.namespace = namespace
        self.selector = selector
        self.by_pod: dict[str, ClaimAllocation] = {}
        self._stop = threading.Event()
        self._denied: UnreachableError | None = None  # the watch RBAC refused (raised by stop())
        self._response: Any = None
        self._version = ""
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="gpuctl-claims", daemon=True)

    def start(self) -> None:
        """List now (so no claim created from here on is missed), then watch on a thread."""
        with api_call("list", f"resourceclaims in namespace {self.namespace}"):
            body = get_list(
                self.api_client, self.path, query={"labelSelector": self.selector}, namespace=self.namespace
            )
        for claim in body.get("items") or []:
            self._record(claim)
        self._version = str(dig(body, "metadata", "resourceVersion", default=""))
        self._thread.start()

    def _record(self, claim: JsonDict) -> None:
        found = allocation_of(claim)
        if found is not None:
            self.by_pod[found.pod or found.claim] = found

    def _run(self) -> None:
        version = self._version
        try:
            while not self._stop.is_set():
                version = self._watch(version)
        except UnreachableError as error:
            # A refused watch leaves each pod's allocation unseen: said as every other denial is
            # (exit 3), once the run's pods are done (stop()).
            if status_of(error.__cause__) in (401, 403):
                self._denied = error
        except Exception:  # a lost watch only loses the claim check, said so later
            return

    def _watch(self, version: str) -> str:
        query = {
            "labelSelector": self.selector,
            "resourceVersion": version or None,
            "timeoutSeconds": WATCH_SECONDS,
        }
        with api_call("watch", f"resourceclaims in namespace {self.namespace}"):
            response = rest_requests.watch(self.api_client, self.path, query, namespace=self.namespace)
        with self._lock:
            self._response = response
        if self._stop.is_set():
            return version
        for event in stream_json_lines(response):
            if event.get("type") == "ERROR":  # 410: the version expired; watch from now (ADDED all)
                return ""
            claim = event.get("object") or {}
            version = str(dig(claim, "metadata", "resourceVersion", default=version))
            if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                self._record(claim)
        return version

    def stop(self) -> dict[str, ClaimAllocation]:
        """Stop watching; pod name → the allocation of its claim. A watch RBAC refused raises
        here, once (exit 3 naming `watch resourceclaims`)."""
        self._stop.set()
        with self._lock:
            if self._response is not None:
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    getattr(self._response, "shutdown", self._response.close)()
        if self._thread.ident is not None:  # start() may have failed before the thread began
            self._thread.join(timeout=2.0)
        denied, self._denied = self._denied, None
        if denied is not None:
            raise denied
        return dict(self.by_pod)


def claim_use(api_client: ApiClient, version: str) -> dict[str, NodeUse]:
    """Node → devices of the DRA GPU driver held by allocated claims, and the claims (one request;
    {} where the API serves no claims). Denied, it raises (exit 3): GPUs in use must not read as free."""
    from gpuctl.kube.dra import DRIVER, read_listing

    body = read_listing(
        lambda: get_list(api_client, api_path(version, "resourceclaims")),
        "resourceclaims",
        tolerate_denied=False,
    )
    held: dict[str, int] = {}
    holders: dict[str, list[str]] = {}
    for claim in body.get("items") or [] if isinstance(body, dict) else []:
        results = dig(claim, "status", "allocation", "devices", "results", default=[]) or []
        found = allocation_of(claim)
        count = sum(1 for result in results if result.get("driver") == DRIVER)
        if found is not None and found.node and count:
            held[found.node] = held.get(found.node, 0) + count
            namespace = dig(claim, "metadata", "namespace", default="")
            holders.setdefault(found.node, []).append(f"{namespace}/{name_of(claim)}")
    return {node: NodeUse({DRIVER: count}, tuple(holders[node])) for node, count in held.items()}


def devices_in_use(api_client: ApiClient, version: str) -> dict[str, int]:
    """Node → devices of the DRA GPU driver held by allocated claims (see claim_use)."""
    from gpuctl.kube.dra import DRIVER

    return {node: use.of(DRIVER) for node, use in claim_use(api_client, version).items()}
