"""Kubernetes objects of the simulated cluster: nodes, namespaces, the device-plugin DaemonSet,
events; shaped like what a kubeadm cluster with NVIDIA's static manifest returns."""

from __future__ import annotations

import hashlib
import random
import string
import time
from collections.abc import Callable
from typing import Any

from gpuctl.fabric_expectations import fabric_labels
from gpuctl.nccl_expectations import INTERCONNECT_LABEL
from gpuctl.sim.runtime.store import rfc3339
from gpuctl.sim.scenario import NodeSpec, Scenario

Obj = dict[str, Any]

GPU = "nvidia.com/gpu"
NFD_PCI_LABEL = "feature.node.kubernetes.io/pci-10de.present"
NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


GENERATE_NAME_TRIES = 8  # the API server's RetryGenerateName (on by default since 1.31)


def generated_name(prefix: str, taken: Callable[[str], bool]) -> str | None:
    """A generateName name not in use: at 5,000 pods of one DaemonSet, a random 5-character
    suffix collides about once, and the API server tries again rather than clobber or fail.
    None when every try collided (the server then answers 409 AlreadyExists)."""
    for _ in range(GENERATE_NAME_TRIES):
        name = prefix + random_suffix()
        if not taken(name):
            return name
    return None


def random_suffix(length: int = 5) -> str:
    # The API server's generateName alphabet: no vowels, no confusable digits.
    return "".join(random.choices(_NAME_ALPHABET, k=length))


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def node_address(index: int) -> str:
    """10.0.0.10, 10.0.0.11 ... (InternalIP of the index-th node)."""
    number = 10 + index
    return f"10.{(number >> 16) & 255}.{(number >> 8) & 255}.{number & 255}"


def namespace(name: str) -> Obj:
    return {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node_labels(spec: NodeSpec) -> dict[str, str]:
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": spec.name,
        "kubernetes.io/os": "linux",
    }
    if spec.gpus > 0 and spec.nfd:
        labels[NFD_PCI_LABEL] = "true"
    if spec.gpus > 0 and spec.gpu_allocation == "dra":
        labels["nvidia.com/dra-kubelet-plugin"] = "true"  # selects the DRA driver's kubelet plugin
    if spec.interconnect:
        labels[INTERCONNECT_LABEL] = spec.interconnect
    if spec.network.fabric:  # what verify --level fabric groups and judges nodes by
        labels.update(fabric_labels(spec.network.fabric, spec.network.nics_per_node, spec.network.link_gbps))
    labels.update(dict(spec.labels))
    return labels


def node_conditions(ready: bool, now: str) -> list[Obj]:
    def condition(kind: str, status: str, reason: str, message: str) -> Obj:
        return {
            "type": kind,
            "status": status,
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        }

    ready_condition = (
        condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")
        if ready
        else condition(
            "Ready",
            "False",
            "KubeletNotReady",
            "container runtime network not ready: NetworkReady=false "
            "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
        )
    )
    return [
        condition(
            "MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"
        ),
        condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ready_condition,
    ]


def node(spec: NodeSpec, index: int, scenario: Scenario) -> Obj:
    now = rfc3339()
    taints = [taint.to_api() for taint in spec.taints]
    if not spec.ready:
        taints.append(dict(NOT_READY_TAINT))
    if spec.unschedulable:
        taints.append(dict(UNSCHEDULABLE_TAINT))
    resources = {
        "cpu": spec.cpu,
        "ephemeral-storage": "959786032Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": spec.memory,
        "pods": "110",
    }
    resources.update({name: str(count) for name, count in spec.network.resources})  # e.g. rdma/ib
    node_spec: Obj = {"podCIDR": f"10.244.{index % 256}.0/24", "podCIDRs": [f"10.244.{index % 256}.0/24"]}
    if taints:
        node_spec["taints"] = taints
    if spec.unschedulable:
        node_spec["unschedulable"] = True
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {
            "name": spec.name,
            "labels": node_labels(spec),
            "annotations": {
                "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///var/run/containerd/containerd.sock",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": node_spec,
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": node_conditions(spec.ready, now),
            "addresses": [
                {"type": "InternalIP", "address": node_address(index)},
                {"type": "Hostname", "address": spec.name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": node_info(spec, scenario),
            "images": [],
        },
    }


def node_info(spec: NodeSpec, scenario: Scenario) -> Obj:
    ident = short_hash(spec.name) + short_hash(spec.name + "/machine")
    return {
        "machineID": ident[:32].ljust(32, "0"),
        "systemUUID": f"{ident[:8]}-{ident[8:12]}-{ident[12:16]}-{ident[16:20]}-{ident[:12]}",
        "bootID": f"{ident[4:12]}-{ident[0:4]}-{ident[12:16]}-{ident[16:20]}-{ident[8:20]}",
        "kernelVersion": "5.15.0-125-generic",
        "osImage": "Ubuntu 22.04.5 LTS",
        "containerRuntimeVersion": "containerd://1.7.22",
        "kubeletVersion": scenario.kubernetes_version,
        "kubeProxyVersion": scenario.kubernetes_version,
        "operatingSystem": "linux",
        "architecture": "amd64",
    }


def node_lease(node_obj: Obj) -> Obj:
    """The kubelet's heartbeat Lease in kube-node-lease (kubectl describe node shows it)."""
    name = node_obj["metadata"]["name"]
    renew = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    return {
        "kind": "Lease",
        "apiVersion": "coordination.k8s.io/v1",
        "metadata": {
            "name": name,
            "namespace": "kube-node-lease",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node_obj["metadata"]["uid"]}
            ],
        },
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renew},
    }


def device_plugin_daemonset() -> Obj:
    """NVIDIA's static manifest (deployments/static/nvidia-device-plugin.yml, v0.17.0)."""
    return {
        "kind": "DaemonSet",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": "nvidia-device-plugin-daemonset",
            "namespace": "kube-system",
            "labels": {"app.kubernetes.io/name": "nvidia-device-plugin"},
        },
        "spec": {
            "selector": {"matchLabels": {"name": "nvidia-device-plugin-ds"}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {
                    "labels": {
                        "name": "nvidia-device-plugin-ds",
                        "app.kubernetes.io/name": "nvidia-device-plugin",
                    }
                },
                "spec": {
                    "tolerations": [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}],
                    "priorityClassName": "system-node-critical",
                    "containers": [
                        {
                            "image": DEVICE_PLUGIN_IMAGE,
                            "name": "nvidia-device-plugin-ctr",
                            "env": [{"name": "FAIL_ON_INIT_ERROR", "value": "false"}],
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": [
                                {"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"}
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "device-plugin", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}
                    ],
                },
            },
        },
    }


def event(
    involved: Obj,
    reason: str,
    message: str,
    *,
    warning: bool = False,
    component: str = "kubelet",
    host: str = "",
    field_path: str = "",
) -> Obj:
    metadata = involved["metadata"]
    namespace_name = metadata.get("namespace") or "default"
    now = rfc3339()
    involved_object: Obj = {
        "kind": involved.get("kind", ""),
        "namespace": metadata.get("namespace", ""),
        "name": metadata["name"],
        "uid": metadata.get("uid", ""),
        "apiVersion": involved.get("apiVersion", "v1"),
        "resourceVersion": metadata.get("resourceVersion", ""),
    }
    if field_path:
        involved_object["fieldPath"] = field_path
    source: Obj = {"component": component}
    if host:
        source["host"] = host
    return {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {
            "name": f"{metadata['name']}.{int(time.time() * 1e9):x}{random_suffix(3)}",
            "namespace": namespace_name,
        },
        "involvedObject": involved_object,
        "reason": reason,
        "message": message,
        "source": source,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": "Warning" if warning else "Normal",
        "eventTime": None,
        "reportingComponent": component if component != "kubelet" else "kubelet",
        "reportingInstance": host or component,
    }


def random_name_suffix() -> str:
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=5))
