"""The node annotation that carries a node-by-node upgrade across runs.

`gpuctl.io/upgrade` is written on a node before gpuctl cordons it and removed once the node is
proven and (when gpuctl cordoned it) uncordoned. Its value says who cordoned the node: `cordoned`
(gpuctl did, so gpuctl uncordons it) or `was-cordoned` (it was cordoned before gpuctl started, so
it stays cordoned). Kept on the node rather than in a local file: a rerun from another machine or
user, or with another state folder, still finds the node it must finish, and `kubectl get node -o
yaml` shows why a node is cordoned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.errors import UnreachableError
from gpuctl.kube import objects
from gpuctl.kube.api_errors import RBAC_HINT
from gpuctl.kube.raw import JsonDict, dig
from gpuctl.kube.taints import NodeTaintWriter

if TYPE_CHECKING:
    from kubernetes.client import CoreV1Api

    from gpuctl.kube.client import ApiClient

UPGRADE_ANNOTATION = "gpuctl.io/upgrade"
CORDONED_BY_GPUCTL = "cordoned"
CORDONED_BEFORE = "was-cordoned"


def core_api(api_client: ApiClient) -> CoreV1Api:
    """The typed client gpuctl.kube.drain speaks through."""
    from kubernetes.client import CoreV1Api

    return CoreV1Api(api_client)


def upgrade_mark(node: JsonDict) -> str:
    """The node's upgrade annotation ("" when it has none: no upgrade of it is unfinished)."""
    return str(dig(node, "metadata", "annotations", UPGRADE_ANNOTATION, default="") or "")


def _write_mark(api_client: ApiClient, node: str, value: str | None) -> None:
    def plan(current: JsonDict) -> JsonDict | None:
        if (upgrade_mark(current) or None) == value:
            return None
        return {"metadata": {"annotations": {UPGRADE_ANNOTATION: value}}}

    current = objects.read_node(api_client, node)
    if current is None:
        raise UnreachableError(f"node {node} not found", hint="`kubectl get nodes` lists the cluster's nodes")
    write = NodeTaintWriter(api_client, dry_run=False).write_fields(current, plan)
    if write.error:
        raise UnreachableError(f"annotate node {node}: {write.error}", hint=RBAC_HINT)


def mark_upgrading(api_client: ApiClient, node: str) -> str:
    """Record, before the cordon, who cordons the node; an existing mark (an earlier run's) is kept.
    The mark's value."""
    current = objects.read_node(api_client, node)
    if current is None:
        raise UnreachableError(f"node {node} not found", hint="`kubectl get nodes` lists the cluster's nodes")
    value = upgrade_mark(current)
    if not value:
        value = (
            CORDONED_BEFORE if dig(current, "spec", "unschedulable", default=False) else CORDONED_BY_GPUCTL
        )
        _write_mark(api_client, node, value)
    return value


def clear_upgrade_mark(api_client: ApiClient, node: str) -> None:
    _write_mark(api_client, node, None)
