"""The diagnosis table: failure signatures (regex) → cause → fix hint.

Pure data. The message texts are those printed by NVIDIA's k8s-device-plugin, nvidia-smi/NVML,
containerd/runc, the kubelet and kube-scheduler; docs/diagnosis.md lists this table.
Hints may use `{node}` (the node name), `{namespace}` and `{image}`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Signature:
    """One known failure: where it shows up, how to recognise it, what it means, what to do."""

    id: str
    source: str  # plugin-log | nvidia-smi | scheduling | image-pull | node
    pattern: re.Pattern[str]
    cause: str
    hint: str


def _sig(id_: str, source: str, pattern: str, cause: str, hint: str) -> Signature:
    return Signature(id_, source, re.compile(pattern, re.IGNORECASE), cause, hint)


_TOOLKIT_FIX = (
    "on {node}: `sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default && "
    "sudo systemctl restart containerd` (or `gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), "
    "then `kubectl -n kube-system delete pod -l name=nvidia-device-plugin-ds --field-selector "
    "spec.nodeName={node}`"
)
_DRIVER_FIX = (
    "on {node}: check `nvidia-smi` and `lsmod | grep nvidia`; install or load the driver "
    "(`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), then reboot the node"
)

SIGNATURES: tuple[Signature, ...] = (
    # --- device plugin log (NVIDIA k8s-device-plugin v0.14-v0.17) ---------------------------
    _sig(
        "plugin.nvml-library-missing",
        "plugin-log",
        r"could not load NVML library|ERROR_LIBRARY_NOT_FOUND",
        "the device plugin cannot load libnvidia-ml.so: the container does not run under the "
        "NVIDIA runtime (toolkit missing or not the default runtime) or the driver is not installed",
        _TOOLKIT_FIX,
    ),
    _sig(
        "plugin.incompatible-strategy",
        "plugin-log",
        r"Incompatible strategy detected auto|invalid device discovery strategy",
        "the device plugin found neither NVML nor CDI devices: the NVIDIA Container Toolkit is not "
        "configured for the container runtime on this node",
        _TOOLKIT_FIX,
    ),
    _sig(
        "plugin.no-devices",
        "plugin-log",
        r"No devices found\. Waiting indefinitely",
        "the device plugin found no GPU on this node and advertises none",
        "if {node} has GPUs: `lspci -d 10de:` and `nvidia-smi` on the node, then fix the driver/"
        "toolkit (`gpuctl preflight --limit {node}`); if not, keep the plugin off it with a "
        "nodeSelector",
    ),
    _sig(
        "plugin.driver-mismatch",
        "plugin-log",
        r"Driver/library version mismatch",
        "the kernel module and the user-space NVIDIA libraries have different versions (driver "
        "upgraded without a reboot)",
        "reboot {node} (`kubectl drain {node} --ignore-daemonsets` first) so the new kernel module loads",
    ),
    _sig(
        "plugin.xid",
        "plugin-log",
        r"XidCriticalError|Xid=\d+|device marked unhealthy",
        "the device plugin marked one or more GPUs unhealthy after a critical XID error; the node "
        "advertises fewer allocatable GPUs",
        "find the XID in the device plugin log on {node} (`gpuctl verify -o json` shows it) and "
        "`dmesg | grep -i xid` on the node; drain it and reset the GPU "
        "(`nvidia-smi -r`) or reboot; replace hardware if the XID repeats",
    ),
    _sig(
        "plugin.driver-not-loaded",
        "plugin-log",
        r"couldn't communicate with the NVIDIA driver|Driver Not Loaded|ERROR_DRIVER_NOT_LOADED",
        "the NVIDIA kernel driver is not loaded on the node",
        _DRIVER_FIX,
    ),
    # --- nvidia-smi inside the verification pod ---------------------------------------------
    _sig(
        "smi.driver-mismatch",
        "nvidia-smi",
        r"Failed to initialize NVML: Driver/library version mismatch",
        "the loaded kernel module and the NVIDIA user-space libraries differ (driver upgraded, "
        "node not rebooted)",
        "reboot {node} (`kubectl drain {node} --ignore-daemonsets` first), then `gpuctl verify`",
    ),
    _sig(
        "smi.driver-not-loaded",
        "nvidia-smi",
        r"couldn't communicate with the NVIDIA driver|NVIDIA driver is not loaded",
        "nvidia-smi cannot talk to the kernel driver: it is not installed or not loaded",
        _DRIVER_FIX,
    ),
    _sig(
        "smi.nvml-missing",
        "nvidia-smi",
        r"NVML library not found|could not load NVML library|libnvidia-ml\.so[^ ]* cannot open",
        "the container has nvidia-smi but no NVML library: the NVIDIA runtime did not inject "
        "the driver libraries",
        _TOOLKIT_FIX,
    ),
    _sig(
        "smi.no-devices",
        "nvidia-smi",
        r"No devices were found",
        "nvidia-smi sees no GPU in the container: the runtime injected no device",
        "check the device plugin on {node} and that the pod requested nvidia.com/gpu; "
        "`kubectl describe node {node}`",
    ),
    _sig(
        "smi.not-found",
        "nvidia-smi",
        r"executable file not found in \$PATH|\"nvidia-smi\": executable file not found|"
        r"nvidia-smi: (command )?not found",
        "nvidia-smi does not exist in the container: the NVIDIA runtime did not inject it (the "
        "runtime is not configured on the node, or the cluster needs a RuntimeClass)",
        "rerun with `gpuctl verify --runtime-class nvidia` if the nvidia runtime is not the default; "
        "otherwise " + _TOOLKIT_FIX,
    ),
    # --- kube-scheduler FailedScheduling reasons ---------------------------------------------
    _sig(
        "sched.unschedulable",
        "scheduling",
        r"node\(s\) were unschedulable|had untolerated taint \{node\.kubernetes\.io/unschedulable",
        "the node is cordoned (spec.unschedulable)",
        "`kubectl uncordon {node}` if the maintenance is over",
    ),
    _sig(
        "sched.node-not-ready",
        "scheduling",
        r"node\(s\) had untolerated taint \{node\.kubernetes\.io/not-ready|node\(s\) were not ready",
        "the node is NotReady",
        "`kubectl describe node {node}`; on the node: `journalctl -u kubelet -n 100`",
    ),
    _sig(
        "sched.untolerated-taint",
        "scheduling",
        r"had untolerated taint|had taints? that the pod didn't tolerate",
        "the node carries a taint the verification pod does not tolerate",
        "rerun with `gpuctl verify --toleration KEY=VALUE:EFFECT` for that taint, or remove it: "
        "`kubectl taint nodes {node} KEY-`",
    ),
    _sig(
        "sched.insufficient-gpu",
        "scheduling",
        r"Insufficient nvidia\.com/gpu",
        "fewer free GPUs than allocatable: other pods hold GPUs on the node, or GPUs became unhealthy",
        "list the GPU pods on it: `kubectl get pods -A --field-selector spec.nodeName={node} -o wide`; "
        "rerun when they finish, or drain the node",
    ),
    _sig(
        "sched.selector-mismatch",
        "scheduling",
        r"didn't match Pod's node affinity/selector|didn't match node selector",
        "no node carries the kubernetes.io/hostname label the verification pod selects",
        "check the label: `kubectl get node {node} -L kubernetes.io/hostname`",
    ),
    # --- image pulls (kubelet) ---------------------------------------------------------------
    _sig(
        "image.invalid-name",
        "image-pull",
        r"InvalidImageName|couldn't parse image reference|invalid reference format",
        "the image reference is not valid",
        "pass a valid --image, e.g. `gpuctl verify --image nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04`",
    ),
    _sig(
        "image.unauthorized",
        "image-pull",
        r"unauthorized|authentication required|pull access denied|403 Forbidden",
        "the registry refused the pull: credentials are missing or wrong",
        "create a pull secret in {namespace} (`kubectl -n {namespace} create secret docker-registry "
        "...`) and pass `gpuctl verify --image-pull-secret NAME`",
    ),
    _sig(
        "image.not-found",
        "image-pull",
        r"not found|manifest unknown|ErrImagePull|ImagePullBackOff|Failed to pull image",
        "the node could not pull the verification image {image}",
        "check the name and tag (`crictl pull {image}` on {node}), or mirror it and pass "
        "`gpuctl verify --image REGISTRY/IMAGE`",
    ),
    # --- node state --------------------------------------------------------------------------
    _sig(
        "node.not-ready",
        "node",
        r"NotReady|KubeletNotReady|Kubelet stopped posting node status|NodeStatusUnknown",
        "the kubelet on the node is not reporting Ready",
        "`kubectl describe node {node}`; on the node: `systemctl status kubelet containerd` and "
        "`journalctl -u kubelet -n 100`",
    ),
    _sig(
        "node.unhealthy-gpus",
        "node",
        r"allocatable \d+ < capacity \d+",
        "the device plugin reports some GPUs unhealthy (allocatable below capacity)",
        "find the device plugin pod (`kubectl get pods -A -o wide --field-selector "
        "spec.nodeName={node}`), read its log for the XID, then `dmesg | grep -i xid` on {node}",
    ),
    _sig(
        "node.no-gpu-advertised",
        "node",
        r"advertises no nvidia\.com/gpu",
        "the node is a GPU node but advertises no nvidia.com/gpu: the device plugin is missing, "
        "not ready, or cannot see the GPUs",
        "`kubectl -n kube-system get pods -l name=nvidia-device-plugin-ds -o wide`; if none runs on "
        "{node}, install it (`gpuctl render | kubectl apply -f -`)",
    ),
)
