"""The objects a multi-node all-reduce needs besides its pods (`verify --level fabric`): the
headless Service that names the worker pods, the Secret with the launcher's SSH keys, the MPIJob
where the MPI Operator serves one; and the worker pods' phases while the launcher waits for them.

Every object carries the run's labels, so one label selector finds what a run left behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.kube import rest_requests
from gpuctl.kube.client import api_call
from gpuctl.kube.pod_states import PodOutcome, classify
from gpuctl.kube.raw import JsonDict, dig, list_json, name_of

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

SERVICES = "/api/v1/namespaces/{namespace}/services"
SECRETS = "/api/v1/namespaces/{namespace}/secrets"
PODS = "/api/v1/namespaces/{namespace}/pods"
MPIJOBS = "/apis/kubeflow.org/v2beta1/namespaces/{namespace}/mpijobs"
MPIJOB_GROUP_VERSION = "/apis/kubeflow.org/v2beta1"
LAUNCHER_LOG_BASE_BYTES = 256 * 1024
LAUNCHER_LOG_BYTES_PER_RANK = 2048
# What each kind is called in messages and `kubectl delete` (its plural).
KINDS = {SERVICES: "services", SECRETS: "secrets", MPIJOBS: "mpijobs"}


def create(api_client: ApiClient, namespace: str, path: str, manifest: JsonDict) -> None:
    """POST one object to the collection at `path` (SERVICES, SECRETS, MPIJOBS)."""
    with api_call("create", f"{KINDS[path]} in namespace {namespace}"):
        rest_requests.request_json(api_client, "POST", path, body=manifest, namespace=namespace)


def delete_labelled(api_client: ApiClient, namespace: str, path: str, selector: str) -> int:
    """Delete the objects at `path` that `selector` matches, one by one (Services have no
    deletecollection); how many were deleted. A 404 (gone already) is no error."""
    from kubernetes.client.exceptions import ApiException

    kind = KINDS[path]
    with api_call("list", f"{kind} in namespace {namespace}"):
        items = list_json(api_client, path, query={"labelSelector": selector}, namespace=namespace)
    deleted = 0
    for item in items:
        try:
            with api_call("delete", f"{kind} in namespace {namespace}"):
                rest_requests.request_json(
                    api_client, "DELETE", path + "/{name}", namespace=namespace, name=name_of(item)
                )
            deleted += 1
        except ApiException as error:
            if error.status != 404:
                raise
    return deleted


def delete_pods(api_client: ApiClient, namespace: str, selector: str) -> None:
    """Delete the pods `selector` matches at once (one deletecollection, no grace period)."""
    with api_call("deletecollection", f"pods in namespace {namespace}"):
        rest_requests.delete_collection(
            api_client, PODS, {"labelSelector": selector, "gracePeriodSeconds": 0}, namespace=namespace
        )


def read_launcher_log(api_client: ApiClient, namespace: str, name: str, container: str, ranks: int) -> str:
    """A launcher's log, whole up to a limit that grows with its ranks: NCCL's INFO lines of every
    rank come before nccl-tests' table (a few lines of about 150 bytes per rank), and both count."""
    from kubernetes.client.exceptions import ApiException

    limit = LAUNCHER_LOG_BASE_BYTES + ranks * LAUNCHER_LOG_BYTES_PER_RANK
    query: rest_requests.Query = {"container": container, "limitBytes": limit}
    try:
        with api_call("get", f"pods/log in namespace {namespace}"):
            return rest_requests.read_log(api_client, namespace, name, query)
    except ApiException as error:
        return f"(log unavailable: {error.reason})"


def mpijobs_served(api_client: ApiClient) -> bool:
    """The MPI Operator's MPIJob (kubeflow.org/v2beta1) is served: its CRD is installed."""
    from kubernetes.client.exceptions import ApiException

    try:
        with api_call("get", "API group kubeflow.org/v2beta1"):
            resources = rest_requests.get_json(api_client, MPIJOB_GROUP_VERSION)
    except ApiException:
        return False
    return any(dig(item, "name") == "mpijobs" for item in resources.get("resources") or [])


@dataclass(frozen=True)
class PodPhase:
    """Where one pod stands: running, or the outcome that ends it (unschedulable, failed ...)."""

    name: str
    node: str  # the node it was bound to ("" while unscheduled)
    running: bool
    ended: PodOutcome | None  # None: still on its way (Pending) or running


def pod_phases(api_client: ApiClient, namespace: str, selector: str) -> dict[str, PodPhase]:
    """The pods `selector` matches, by name, with where each stands (one list request)."""
    with api_call("list", f"pods in namespace {namespace}"):
        items = list_json(api_client, PODS, query={"labelSelector": selector}, namespace=namespace)
    return {name_of(pod): _phase(pod) for pod in items}


def _phase(pod: JsonDict) -> PodPhase:
    name = name_of(pod)
    node = str(dig(pod, "spec", "nodeName", default="") or "")
    running = dig(pod, "status", "phase") == "Running"
    outcome = None if running else classify(pod)
    return PodPhase(name, node, running, outcome)
