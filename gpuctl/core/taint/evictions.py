"""Which running pods a NoExecute taint evicts: every pod on the tainted nodes that does not
tolerate it (tolerationSeconds only delays that), the device plugin included when its toleration
covers NoSchedule alone. Said before the write, so that nobody evicts system pods by surprise."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuctl.errors import ConfigError
from gpuctl.kube.nodes import Taint, tolerates
from gpuctl.kube.raw import JsonDict, dig, name_of

_FINISHED = ("Succeeded", "Failed")
SHOWN = 10  # pods named in the refusal; the rest are counted


@dataclass(frozen=True)
class EvictedPod:
    namespace: str
    name: str
    node: str
    owner: str  # "DaemonSet/nvidia-device-plugin-daemonset", "" for a bare pod

    def __str__(self) -> str:
        owner = f" ({self.owner})" if self.owner else ""
        return f"{self.namespace}/{self.name} on {self.node}{owner}"


def _owner(pod: JsonDict) -> str:
    owners = dig(pod, "metadata", "ownerReferences", default=None) or []
    return f"{owners[0].get('kind', '')}/{owners[0].get('name', '')}" if owners else ""


def pods_evicted_by(pods: Iterable[JsonDict], node_names: Iterable[str], taint: Taint) -> list[EvictedPod]:
    """The unfinished pods on `node_names` that a NoExecute `taint` evicts (none for other effects)."""
    if taint.effect != "NoExecute":
        return []
    nodes = set(node_names)
    evicted = [
        EvictedPod(str(dig(pod, "metadata", "namespace", default="")), name_of(pod), node, _owner(pod))
        for pod in pods
        if (node := str(dig(pod, "spec", "nodeName", default="") or "")) in nodes
        and dig(pod, "status", "phase", default="") not in _FINISHED
        and not any(
            tolerates(toleration, taint) for toleration in dig(pod, "spec", "tolerations", default=None) or []
        )
    ]
    return sorted(evicted, key=lambda pod: (pod.node, pod.namespace, pod.name))


class EvictionsNeedConfirmation(ConfigError):
    """A NoExecute taint would evict running pods and nobody said yes (exit 2, nothing written)."""


def eviction_refusal(evicted: list[EvictedPod], taint: Taint) -> EvictionsNeedConfirmation:
    """Exit 2 before any write: a NoExecute taint that evicts pods needs --yes."""
    shown = ", ".join(map(str, evicted[:SHOWN]))
    more = f" and {len(evicted) - SHOWN} more" if len(evicted) > SHOWN else ""
    nodes = len({pod.node for pod in evicted})
    return EvictionsNeedConfirmation(
        f"taint {taint} would evict {len(evicted)} running pod(s) from {nodes} node(s): {shown}{more}",
        hint="rerun with --yes to evict them, --dry-run to list them, or use --effect NoSchedule, "
        "which keeps running pods",
    )
