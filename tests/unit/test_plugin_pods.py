"""A DaemonSet pod the scheduler has not bound yet belongs to the node its affinity names."""

from __future__ import annotations

from gpuctl.kube.daemonsets import _plugin_pod


def _pod(spec: dict[str, object]) -> dict[str, object]:
    return {
        "metadata": {"namespace": "kube-system", "name": "plugin-x"},
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def test_a_bound_pod_is_on_its_node() -> None:
    assert _plugin_pod(_pod({"nodeName": "gpu-0"})).node == "gpu-0"


def test_an_unbound_daemonset_pod_is_for_the_node_its_affinity_names() -> None:
    # the shape the DaemonSet controller gives its pods (and the sim's, and a real cluster's)
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-1"]}]}
                ]
            }
        }
    }
    pod = _plugin_pod(_pod({"affinity": affinity}))
    assert (pod.node, pod.phase) == ("gpu-1", "Pending")


def test_an_unbound_pod_without_a_single_node_is_on_none() -> None:
    labels = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": labels}}
    assert _plugin_pod(_pod({"affinity": affinity})).node == ""
    assert _plugin_pod(_pod({})).node == ""
