"""Follow a batch of pods to their outcomes: one watch on the pods, one on their Warning events.

A pod stuck in ContainerCreating (no runtime handler for its RuntimeClass, a volume that cannot be
mounted) changes no more; only its events say why. So two reader threads hold the two watches and
hand what they read to the following thread through one queue: an event can end a pod's wait
while no pod changes. When the follow ends, the open watch responses are shut, so the readers
end with it instead of at the watches' server-side timeout.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpuctl.kube import rest_requests
from gpuctl.kube.client import api_call
from gpuctl.kube.pod_states import PodOutcome, classify
from gpuctl.kube.raw import GONE, JsonDict, PagedList, dig, name_of, stream_json_lines

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

# A pod's name and its Warning events (reason, message), oldest first → will waiting not help?
Settle = Callable[[str, tuple[tuple[str, str], ...]], bool]
OnDone = Callable[[PodOutcome], None]
OnPhase = Callable[[str, str], None]  # pod name, status.phase: for live progress

# Events about pods only; the real API server and the sim both index these event fields.
POD_WARNINGS = "type=Warning,involvedObject.kind=Pod"
READER_JOIN_SECONDS = 2.0
INBOX_SIZE = 256
PODS = "/api/v1/namespaces/{namespace}/pods"
EVENTS = "/api/v1/namespaces/{namespace}/events"


class _OpenStreams:
    """The watch responses being read now, so that the follow can shut them when it ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: list[Any] = []
        self.closed = threading.Event()

    def add(self, response: Any) -> bool:
        with self._lock:
            if not self.closed.is_set():
                self._open.append(response)
                return True
        return False

    def discard(self, response: Any) -> None:
        with self._lock:
            if response in self._open:
                self._open.remove(response)

    def close_all(self) -> None:
        with self._lock:
            self.closed.set()
            for response in self._open:
                _interrupt(response)


def _interrupt(response: Any) -> None:
    """End a read blocked in another thread: urllib3 2.3+ shuts the socket down, older urllib3 closes."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # already closed: nothing to end
        getattr(response, "shutdown", response.close)()


class PodFollow:
    """Wait until every pod in `names` has an outcome, or `deadline` (monotonic) passes."""

    def __init__(  # noqa: PLR0917 - the batch's coordinates and the caller's callbacks
        self,
        api_client: ApiClient,
        namespace: str,
        selector: str,
        names: set[str],
        deadline: float,
        on_done: OnDone,
        settle: Settle | None = None,
        on_phase: OnPhase | None = None,
    ) -> None:
        self.api_client = api_client
        self.on_phase = on_phase
        self.namespace = namespace
        self.selector = selector
        self.names = names
        self.deadline = deadline
        self.on_done = on_done
        self.settle = settle
        self.outcomes: dict[str, PodOutcome] = {}
        self.last_phase: dict[str, str] = {}
        self.bound_to: dict[str, str] = {}
        self.warnings: dict[str, dict[str, tuple[str, str]]] = {}  # pod → event name → (reason, message)
        # Bounded: a reader that runs ahead of the following thread waits (and the server with
        # it) instead of piling up thousands of parsed pods.
        self.inbox: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=INBOX_SIZE)
        self.streams = _OpenStreams()

    # --- the following thread ----------------------------------------------------------------
    def run(self) -> dict[str, PodOutcome]:
        readers = [self._start(self._read_pods, "pods")]
        if self.settle is not None:
            readers.append(self._start(self._read_events, "events"))
        try:
            self._consume()
        finally:
            self.streams.close_all()
            for reader in readers:
                reader.join(READER_JOIN_SECONDS)
        for name in self.names - self.outcomes.keys():
            phase = self.last_phase.get(name, "Pending")
            self.outcomes[name] = PodOutcome(
                name, "timeout", phase, node_name=self.bound_to.get(name, ""), events=self._events_of(name)
            )
        return self.outcomes

    def _consume(self) -> None:
        while len(self.outcomes) < len(self.names):
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                kind, item = self.inbox.get(timeout=remaining)
            except queue.Empty:
                return
            if kind == "error":
                raise item
            if kind == "pod":
                self._observe_pod(item)
            else:
                self._observe_event(item)

    def _observe_pod(self, pod: JsonDict) -> None:
        name = name_of(pod)
        if name not in self.names or name in self.outcomes:
            return
        self.last_phase[name] = str(dig(pod, "status", "phase", default="Pending"))
        if self.on_phase is not None:
            self.on_phase(name, self.last_phase[name])
        self.bound_to[name] = str(dig(pod, "spec", "nodeName", default=""))
        outcome = classify(pod)
        if outcome is not None:
            self._finish(outcome)
        else:
            self._settle(name)

    def _observe_event(self, event: JsonDict) -> None:
        involved = event.get("involvedObject") or {}
        name = str(involved.get("name") or "")
        # Events about one container (fieldPath spec.containers{...}) come with a container
        # status that classify() reads; the pod-level ones are all a stuck pod has.
        if name not in self.names or involved.get("fieldPath") or event.get("type") != "Warning":
            return
        reason, message = str(event.get("reason") or ""), str(event.get("message") or "")
        self.warnings.setdefault(name, {})[name_of(event)] = (reason, message)
        if name not in self.outcomes:
            self._settle(name)

    def _settle(self, name: str) -> None:
        """End a Pending pod's wait when its events show a failure that waiting will not clear."""
        events = self._events_of(name)
        if self.settle is None or not events or self.last_phase.get(name) != "Pending":
            return
        if self.settle(name, events):
            reason, message = events[-1]
            node = self.bound_to.get(name, "")
            self._finish(PodOutcome(name, "stuck", "Pending", None, reason, message, "", node, events))

    def _finish(self, outcome: PodOutcome) -> None:
        self.outcomes[outcome.name] = outcome
        self.on_done(outcome)

    def _events_of(self, name: str) -> tuple[tuple[str, str], ...]:
        return tuple(self.warnings.get(name, {}).values())

    # --- the reader threads ------------------------------------------------------------------
    def _start(self, read: Callable[[], None], what: str) -> threading.Thread:
        def guarded() -> None:
            try:
                read()
            except Exception as error:  # handed to the following thread, raised there
                self._hand("error", error)

        thread = threading.Thread(target=guarded, name=f"gpuctl-follow-{what}", daemon=True)
        thread.start()
        return thread

    def _hand(self, kind: str, item: Any) -> None:
        """Queue an object for the following thread; dropped once the follow has ended."""
        while not self.streams.closed.is_set():
            try:
                self.inbox.put((kind, item), timeout=0.1)
                return
            except queue.Full:
                continue

    def _read_pods(self) -> None:
        """List, then watch from the list's version; a watch the server ends (its timeout) is
        opened again from the last version seen, and one whose version has expired (410) lists
        again: each pod's newest state reaches the following thread, so no outcome is lost."""
        version = ""
        while not self.streams.closed.is_set() and time.monotonic() < self.deadline:
            if not version:
                pages = PagedList(
                    self.api_client, PODS, query={"labelSelector": self.selector}, namespace=self.namespace
                )
                with api_call("list", f"pods in namespace {self.namespace}"):
                    for item in pages:
                        self._hand("pod", item)
                version = pages.resource_version
            version = self._watch("pod", version, labelSelector=self.selector)

    def _open_watch(self, path: str, query: dict[str, Any], remaining: float) -> Any:
        """The watch's response; None where the server answers 410 Gone (the version has expired)."""
        try:
            return rest_requests.watch(
                self.api_client, path, query, (10.0, remaining + 10.0), namespace=self.namespace
            )
        except Exception as error:
            if getattr(error, "status", None) == GONE:
                return None
            raise

    def _read_events(self) -> None:
        # No resourceVersion: the watch starts with the events that exist (ADDED), then changes.
        version = ""
        while not self.streams.closed.is_set() and time.monotonic() < self.deadline:
            version = self._watch("event", version, fieldSelector=POD_WARNINGS)

    def _watch(self, kind: str, version: str, **selector: str) -> str:
        """Hand each object of one watch to the inbox; the last resourceVersion, "" after an ERROR
        event or a 410 answer (the version has expired: list, or watch from now, again)."""
        remaining = max(1.0, self.deadline - time.monotonic())
        resource = "pods" if kind == "pod" else "events"
        query = {"resourceVersion": version or None, "timeoutSeconds": int(remaining) + 1, **selector}
        with api_call("watch", f"{resource} in namespace {self.namespace}"):
            response = self._open_watch(PODS if kind == "pod" else EVENTS, query, remaining)
            if response is None:
                return ""
            if not self.streams.add(response):
                response.close()
                return version
            try:
                for event in stream_json_lines(response):
                    if event.get("type") == "ERROR":
                        return ""  # e.g. 410 Gone: list (or watch from now) again
                    item = event.get("object") or {}
                    version = str(dig(item, "metadata", "resourceVersion", default=version))
                    self._hand(kind, item)
            finally:
                self.streams.discard(response)
                response.close()
                response.release_conn()
        return version
