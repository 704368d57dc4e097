"""The verification pod: pinned through the scheduler, Pod Security "restricted", self-expiring."""

from __future__ import annotations

import hashlib
import re
import secrets

from gpuctl.core.verify.model import RUN_LABEL_KEY, PodWorkload, Toleration, VerifyOptions
from gpuctl.defaults import GATE_TAINT_EFFECT, GATE_TAINT_KEY, GPU_RESOURCE
from gpuctl.kube.nodes import ENFORCED_EFFECTS, HOSTNAME_LABEL, NodeInfo
from gpuctl.kube.raw import JsonDict
from gpuctl.nvidia_smi import VERIFY_ARGS

# nvidia-smi writes its answer to the container's termination message file (`-f`), so the answer
# arrives in the pod's status on the watch gpuctl already follows: no log request per pod. The
# kubelet keeps the file's last 4,096 bytes: ~100 per GPU, room for 40 GPUs. An nvidia-smi that
# fails prints its error on stdout instead, which FallbackToLogsOnError puts in the message.
TERMINATION_LOG = "/dev/termination-log"
POD_VERIFY_ARGS = (*VERIFY_ARGS, "-f", TERMINATION_LOG)
# On MIG nodes the pod lists its MIG devices first (`-L`), then queries their parent GPUs; both
# answers go to the log (the listing can pass 4,096 bytes), read once the pod has ended.
MIG_VERIFY_ARGS = ("sh", "-c", "nvidia-smi -L && " + " ".join(VERIFY_ARGS))

MANAGED_BY = "app.kubernetes.io/managed-by"
COMPONENT = "app.kubernetes.io/component"
RUN_ID_LABEL = RUN_LABEL_KEY
NODE_ANNOTATION = "gpuctl.io/node"
CONTAINER = "nvidia-smi"
SHM_VOLUME = "dev-shm"
NAMESPACE_LABELS = {
    "pod-security.kubernetes.io/enforce": "restricted",
    MANAGED_BY: "gpuctl",
}
# nobody:nogroup; CUDA base images run as root unless told otherwise.
NON_ROOT_UID = 65534
# Grace beyond --timeout before the kubelet kills a pod gpuctl could not delete itself.
DEADLINE_GRACE_S = 60


def new_run_id() -> str:
    return secrets.token_hex(4)


def run_selector(run_id: str) -> str:
    return f"{MANAGED_BY}=gpuctl,{COMPONENT}=verify,{RUN_ID_LABEL}={run_id}"


def pod_name(run_id: str, node: str, level: str = "") -> str:
    """`gpuctl-verify-<run>-<node>` (a deeper level's: `gpuctl-verify-<run>-<level>-<node>`), kept a
    valid DNS label (<= 63) with a hash when shortened."""
    slug = re.sub(r"[^a-z0-9-]", "-", node.lower()).strip("-")
    name = f"gpuctl-verify-{run_id}-{level + '-' if level else ''}{slug}"
    if len(name) <= 63 and slug == node:
        return name
    digest = hashlib.sha256(node.encode()).hexdigest()[:8]
    return f"{name[: 63 - 9].rstrip('-')}-{digest}"


def verification_pod_name(
    node: NodeInfo, run_id: str, part: int = 0, workload: PodWorkload | None = None
) -> str:
    level = workload.level if workload is not None else ""
    return pod_name(run_id, node.name if not part else f"{node.name}-{part}", level)


def is_gpu_taint_key(key: str) -> bool:
    """Taints gpuctl tolerates on its own: the ones that reserve a node for GPU work."""
    return key.startswith("nvidia.com/") or "gpu" in key.lower()


def tolerations_for(node: NodeInfo, extra: tuple[Toleration, ...]) -> list[dict[str, str]]:
    own = [
        Toleration(taint.key, "Exists", "", taint.effect)
        for taint in node.taints
        if is_gpu_taint_key(taint.key) and taint.effect in ENFORCED_EFFECTS
    ]
    # The gate (`verify --gate`) keeps everything but the proof off the nodes it has not proven yet.
    gate = Toleration(GATE_TAINT_KEY, "Exists", "", GATE_TAINT_EFFECT)
    unique = dict.fromkeys([*own, gate, *extra])
    return [toleration.as_dict() for toleration in unique]


def _security_context() -> JsonDict:
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "runAsUser": NON_ROOT_UID,
        "runAsGroup": NON_ROOT_UID,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def verification_pod(
    node: NodeInfo,
    gpus: int | tuple[tuple[str, int], ...],
    run_id: str,
    options: VerifyOptions,
    *,
    part: int = 0,
    mig: bool = False,
) -> JsonDict:
    """The pod that proves `node` gives `gpus` GPUs (or these devices) to a workload; `part`
    numbers the pods of a node where each may hold one shared GPU only (MPS)."""
    requests = {GPU_RESOURCE: str(gpus)} if isinstance(gpus, int) else {k: str(v) for k, v in gpus}
    workload = options.workload
    smi = (CONTAINER, options.image, MIG_VERIFY_ARGS if mig else POD_VERIFY_ARGS)
    name, image, command = smi if workload is None else (workload.container, workload.image, workload.command)
    container: JsonDict = {
        "name": name,
        "image": image,
        "command": list(command),
        "terminationMessagePath": TERMINATION_LOG,
        "resources": {"requests": requests, "limits": dict(requests)},
        "securityContext": _security_context(),
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    spec: JsonDict = {
        "restartPolicy": "Never",
        "nodeSelector": {HOSTNAME_LABEL: node.hostname},
        "tolerations": tolerations_for(node, options.tolerations),
        "activeDeadlineSeconds": int(options.timeout_s) + DEADLINE_GRACE_S,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 0,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": NON_ROOT_UID,
            "runAsGroup": NON_ROOT_UID,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
    }
    if workload is not None and workload.memory_shm:
        # Containers get a 64 MiB /dev/shm; NCCL's shared-memory transport needs more ("unhandled
        # system error" otherwise), so the all-reduce pod mounts a memory-backed emptyDir there.
        spec["volumes"] = [{"name": SHM_VOLUME, "emptyDir": {"medium": "Memory"}}]
        container["volumeMounts"] = [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}]
    if options.runtime_class:
        spec["runtimeClassName"] = options.runtime_class
    if options.image_pull_secret:
        spec["imagePullSecrets"] = [{"name": options.image_pull_secret}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": verification_pod_name(node, run_id, part, workload),
            "labels": {MANAGED_BY: "gpuctl", COMPONENT: "verify", RUN_ID_LABEL: run_id},
            "annotations": {NODE_ANNOTATION: node.name},
        },
        "spec": spec,
    }
