"""Node taint writes with optimistic concurrency.

`spec.taints` has no strategic-merge key, so a patch replaces the whole list; each patch therefore
carries the resourceVersion it was computed from, and a 409 Conflict (someone else changed the
node meanwhile) is retried from a fresh read instead of overwriting their change.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.errors import ConfigError
from gpuctl.kube.client import api_call
from gpuctl.kube.raw import JsonDict, dig, list_json, name_of
from gpuctl.kube.rest_requests import STRATEGIC_MERGE_PATCH, get_json, request_json

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

MAX_ATTEMPTS = 5

# Given a node as read, its new taint list, or None when the node needs no write.
TaintPlanner = Callable[[JsonDict], "list[JsonDict] | None"]
# Given a node as read, the fields to patch (spec.taints and/or metadata.annotations, an annotation
# set to None is removed), or None when the node needs no write.
NodePatchPlanner = Callable[[JsonDict], "JsonDict | None"]


def list_node_objects(api_client: ApiClient, selector: str | None = None) -> list[JsonDict]:
    """Every node (or those matching `selector`) as raw JSON; a selector the server rejects is
    a ConfigError naming --selector."""
    from kubernetes.client.exceptions import ApiException

    try:
        with api_call("list", "nodes"):
            return list_json(api_client, "/api/v1/nodes", query={"labelSelector": selector or None})
    except ApiException as error:
        if error.status == 400:
            raise ConfigError(
                f"--selector {selector!r}: rejected by the API server ({error.reason})",
                hint="check the selector syntax with `kubectl get nodes -l SELECTOR`",
            ) from error
        raise


@dataclass(frozen=True)
class TaintWrite:
    """How writing one node went. `node`: the node as last read (what the write was computed
    from). `error`: why it failed ("" when it did not)."""

    node: JsonDict
    written: bool
    conflicts_retried: int
    error: str = ""


class NodeTaintWriter:
    """Writes planned taint lists node by node, retrying conflicts; counts the PATCHes sent."""

    def __init__(
        self,
        api_client: ApiClient,
        *,
        dry_run: bool,
        after_read: Callable[[str], None] | None = None,
        max_attempts: int = MAX_ATTEMPTS,
    ) -> None:
        self.api_client = api_client
        self.dry_run = dry_run
        self.after_read = after_read  # a seam for tests that race a real concurrent writer
        self.max_attempts = max_attempts
        self.writes = 0
        self._lock = threading.Lock()

    def _read(self, name: str) -> JsonDict:
        with api_call("get", f"node {name}"):
            return get_json(self.api_client, "/api/v1/nodes/{name}", name=name)

    def _patch(self, node: JsonDict, fields: JsonDict) -> None:
        name = name_of(node)
        version = dig(node, "metadata", "resourceVersion", default="")
        body = {**fields, "metadata": {**fields.get("metadata", {}), "resourceVersion": version}}
        with self._lock:
            self.writes += 1
        with api_call("patch", f"node {name}"):
            request_json(
                self.api_client,
                "PATCH",
                "/api/v1/nodes/{name}",
                query={"dryRun": "All" if self.dry_run else None},
                body=body,
                content_type=STRATEGIC_MERGE_PATCH,
                name=name,
            )

    def write(self, node: JsonDict, plan: TaintPlanner) -> TaintWrite:
        """Apply `plan` to `node`: re-read and re-plan after each 409, at most max_attempts times."""

        def fields(current: JsonDict) -> JsonDict | None:
            taints = plan(current)
            return None if taints is None else {"spec": {"taints": taints}}

        return self.write_fields(node, fields)

    def write_fields(self, node: JsonDict, plan: NodePatchPlanner) -> TaintWrite:
        """As `write`, for a plan that patches the node's annotations beside (or instead of) its taints."""
        from kubernetes.client.exceptions import ApiException

        name = name_of(node)
        for attempt in range(self.max_attempts):
            fields = plan(node)
            if fields is None:
                return TaintWrite(node, False, attempt)
            if self.after_read is not None:
                self.after_read(name)
            try:
                self._patch(node, fields)
            except ApiException as error:
                if error.status != 409:
                    error_text = f"patch node {name}: {error.status} {error.reason}"
                    return TaintWrite(node, False, attempt, error_text)
                node = self._read(name)
                continue
            return TaintWrite(node, True, attempt)
        return TaintWrite(
            node,
            False,
            self.max_attempts,
            f"node {name} kept changing: {self.max_attempts} conflicting writes in a row; rerun the command",
        )
