"""Run a batch of short-lived pods: create with bounded concurrency, follow them with ONE watch
(plus one on their Warning events, see pod_follow.py), read each log once, delete them all with
one deletecollection (one by one where RBAC allows `delete` but not `deletecollection`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuctl.errors import UnreachableError
from gpuctl.kube import rest_requests
from gpuctl.kube.client import api_call, server_message
from gpuctl.kube.pod_follow import PodFollow, Settle
from gpuctl.kube.pod_states import PodOutcome, classify
from gpuctl.kube.raw import JsonDict, dig, list_json, name_of
from gpuctl.shell import command_line

__all__ = [
    "LogUnavailable",
    "PodBatch",
    "PodOutcome",
    "Settle",
    "classify",
    "delete_namespace",
    "ensure_namespace",
    "status_of",
]

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

PODS = "/api/v1/namespaces/{namespace}/pods"
EVENTS = "/api/v1/namespaces/{namespace}/events"
NAMESPACE = "/api/v1/namespaces/{name}"
# The most of a log gpuctl reads (the kubelet cuts it, as `kubectl logs --limit-bytes`): nvidia-smi's
# answer is a few KB (16 GPUs of 7 MIG devices each: ~12 KB), the end of a crashing plugin's log
# about as much, while a container may write gigabytes; what is read is held in memory, per pod.
LOG_LIMIT_BYTES = 128 * 1024


class PodBatch:
    """One batch of pods sharing a label selector in one namespace."""

    def __init__(
        self, api_client: ApiClient, namespace: str, selector: str, executor: ThreadPoolExecutor, workers: int
    ):
        """`workers`: how many of `executor`'s threads create pods at once (its size)."""
        self.api_client = api_client
        self.namespace = namespace
        self.selector = selector
        self.executor = executor
        self.workers = workers
        self.stop = threading.Event()
        self.created = 0
        self.created_names: list[str] = []
        self._lock = threading.Lock()

    # --- creation ---------------------------------------------------------------------------
    def _create_one(self, manifest: JsonDict) -> PodOutcome | None:
        from kubernetes.client.exceptions import ApiException

        if self.stop.is_set():
            return PodOutcome(name_of(manifest), "create-failed", message="not created: interrupted")
        try:
            with api_call("create", f"pods in namespace {self.namespace}"):
                rest_requests.create_pod(self.api_client, self.namespace, manifest)
        except ApiException as error:
            return PodOutcome(name_of(manifest), "create-failed", message=_api_message(error))
        with self._lock:
            self.created += 1
            self.created_names.append(name_of(manifest))
        return None

    def create_all(
        self, manifests: Iterator[JsonDict], count: int, on_created: Callable[[], None] | None = None
    ) -> list[Future[list[PodOutcome]]]:
        """Create every pod on `self.workers` tasks of the pool that take the next manifest in turn
        (a task per worker, not per pod: thousands of futures cost more than the requests'
        bookkeeping); each task's result: the pods it could not create."""
        queue = manifests
        lock = threading.Lock()

        def work() -> list[PodOutcome]:
            failed: list[PodOutcome] = []
            while True:
                with lock:
                    manifest = next(queue, None)
                if manifest is None:
                    return failed
                outcome = self._create_one(manifest)
                if outcome is not None:
                    failed.append(outcome)
                elif on_created is not None:
                    on_created()

        return [self.executor.submit(work) for _ in range(max(1, min(self.workers, count)))]

    def forget(self, names: set[str]) -> None:
        """Pods deleted before the batch ends (a multi-node round's workers, whose GPUs the next
        round needs): no longer among those the batch created and --keep-pods keeps."""
        with self._lock:
            self.created_names = [name for name in self.created_names if name not in names]

    # --- following --------------------------------------------------------------------------
    def follow(
        self,
        names: set[str],
        deadline: float,
        on_done: Callable[[PodOutcome], None],
        settle: Settle | None = None,
        on_phase: Callable[[str, str], None] | None = None,
    ) -> dict[str, PodOutcome]:
        """Wait until every pod in `names` has an outcome or `deadline` (monotonic) passes.

        With `settle`, the pods' Warning events are watched too, and a Pending pod whose events
        `settle` judges final ends as `stuck` at once.
        """
        follow = PodFollow(
            self.api_client, self.namespace, self.selector, names, deadline, on_done, settle, on_phase
        )
        return follow.run()

    # --- logs, events, cleanup ------------------------------------------------------------------
    def read_log(self, name: str, container: str) -> str:
        log = read_pod_log(self.api_client, self.namespace, name, container)
        return log if isinstance(log, str) else f"(log unavailable: {log.message})"

    def events_by_pod(self) -> dict[str, list[JsonDict]]:
        """Events of this namespace grouped by the pod they are about (one request)."""
        with api_call("list", f"events in namespace {self.namespace}"):
            events = list_json(self.api_client, EVENTS, namespace=self.namespace)
        grouped: dict[str, list[JsonDict]] = {}
        for event in events:
            pod = dig(event, "involvedObject", "name", default="")
            grouped.setdefault(pod, []).append(event)
        return grouped

    def delete_all(self) -> None:
        """Delete every pod of the batch by label selector (one request), immediately.

        Where RBAC forbids deletecollection, list the batch and delete its pods one by one: a role
        written by hand may grant `delete` alone (gpuctl's own grants `deletecollection` only,
        docs/rbac.md); where both are refused, the pods left are said with both refusals.
        """
        try:
            with api_call("deletecollection", f"pods in namespace {self.namespace}"):
                rest_requests.delete_collection(
                    self.api_client,
                    PODS,
                    {"labelSelector": self.selector, "gracePeriodSeconds": 0},
                    namespace=self.namespace,
                )
        except UnreachableError as error:
            if status_of(error.__cause__) != 403:
                raise
            self._delete_one_by_one(refused=error.message)

    def _delete_one_by_one(self, refused: str) -> None:
        from kubernetes.client.exceptions import ApiException

        with api_call("list", f"pods in namespace {self.namespace}"):
            pods = list_json(
                self.api_client, PODS, query={"labelSelector": self.selector}, namespace=self.namespace
            )
        names = [name_of(item) for item in pods]
        for index, name in enumerate(names):
            try:
                with api_call("delete", f"pods in namespace {self.namespace}"):
                    rest_requests.request_json(
                        self.api_client,
                        "DELETE",
                        PODS + "/{name}",
                        query={"gracePeriodSeconds": 0},
                        namespace=self.namespace,
                        name=name,
                    )
            except ApiException as error:
                if error.status != 404:
                    raise self._left_behind(len(names) - index, _api_message(error)) from error
            except UnreachableError as error:
                why = f"{refused}; one by one: {error.message}"
                raise self._left_behind(len(names) - index, why) from error

    def _left_behind(self, count: int, why: str) -> UnreachableError:
        delete_command = command_line("kubectl", "-n", self.namespace, "delete", "pods", "-l", self.selector)
        return UnreachableError(
            f"cleanup failed, {count} verification pod(s) left in namespace {self.namespace}: {why}",
            hint=f"delete them with `{delete_command}`",
        )


@dataclass(frozen=True)
class LogUnavailable:
    """Why a pod's log could not be read (a pod that never started has none)."""

    message: str


def read_pod_log(
    api_client: ApiClient,
    namespace: str,
    name: str,
    container: str = "",
    tail_lines: int | None = None,
    *,
    previous: bool = False,
) -> str | LogUnavailable:
    """The log of one container of a pod (`previous`: of its last terminated run, as `kubectl logs
    --previous`), its first LOG_LIMIT_BYTES (of the last `tail_lines` lines, where only the end
    matters); authorisation and transport failures raise (exit 3)."""
    from kubernetes.client.exceptions import ApiException

    query: rest_requests.Query = {
        "container": container or None,
        "tailLines": tail_lines,
        "limitBytes": LOG_LIMIT_BYTES,
    }
    query["previous"] = "true" if previous else None
    try:
        with api_call("get", f"pods/log in namespace {namespace}"):
            return rest_requests.read_log(api_client, namespace, name, query)
    except ApiException as error:
        return LogUnavailable(_api_message(error))


def list_all_pods(api_client: ApiClient) -> list[JsonDict]:
    """Every pod of every namespace, as raw JSON (one request)."""
    with api_call("list", "pods"):
        return list_json(api_client, "/api/v1/pods")


def ensure_namespace(api_client: ApiClient, namespace: str, labels: dict[str, str]) -> bool:
    """Create `namespace` with `labels` if absent; True when it was created."""
    from kubernetes.client.exceptions import ApiException

    try:
        with api_call("get", f"namespace {namespace}"):
            rest_requests.get_json(api_client, NAMESPACE, name=namespace)
        return False
    except ApiException as error:
        if error.status != 404:
            raise
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}}
    try:
        with api_call("create", f"namespace {namespace}"):
            rest_requests.request_json(api_client, "POST", "/api/v1/namespaces", body=body)
    except ApiException as error:
        if error.status != 409:
            raise
        return False
    return True


def delete_namespace(api_client: ApiClient, namespace: str) -> None:
    """Delete `namespace` (an absent one is no error)."""
    from kubernetes.client.exceptions import ApiException

    try:
        with api_call("delete", f"namespace {namespace}"):
            rest_requests.request_json(api_client, "DELETE", NAMESPACE, name=namespace)
    except ApiException as error:
        if error.status != 404:
            raise


def status_of(error: BaseException | None) -> int | None:
    """The HTTP status of an ApiException (None for any other error)."""
    from kubernetes.client.exceptions import ApiException

    return error.status if isinstance(error, ApiException) else None


def _api_message(error: Any) -> str:
    message = server_message(error)
    return f"{error.status} {error.reason}" + (f": {message}" if message else "")
