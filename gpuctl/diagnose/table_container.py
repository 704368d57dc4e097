"""Container start rows: why the kubelet could not create a container (CreateContainerConfigError,
CreateContainerError) or start it (RunContainerError; containerd's StartError, exit 128).

The kubelet puts the error in the container's waiting message and in a `Failed` event ("Error:
..."); verify reads the waiting reason and message of a pod that cannot start. Errors of the NVIDIA
start hook and of CDI injection are table_runtime.py's rows (they come first); these name the
Kubernetes-side causes, then the reasons themselves as fallbacks.
"""

from __future__ import annotations

from gpuctl.diagnose.signatures import sig

_ALSO = ("events", "nvidia-smi")
_DESCRIBE = "`kubectl -n {namespace} describe pod` of the pod on {node} shows the container's config"

CONTAINER = (
    sig(
        "container.config-key-missing", "runtime", "pod",
        r"couldn't find key (?P<key>\S+) in (?P<kind>Secret|ConfigMap) (?P<object>\S+)",
        "the container's environment takes key {key} from {kind} {object}, which lacks that key, so "
        "the kubelet cannot build the container's config (CreateContainerConfigError)",
        "add the key (`kubectl -n NAMESPACE edit` the {kind}) or make the reference optional "
        "(`optional: true`); the kubelet retries by itself",
        also=_ALSO,
    ),
    sig(
        "container.config-object-missing", "runtime", "pod",
        # "Error: " in the kubelet's event, the reason where verify quotes the waiting state; not a
        # FailedMount's `MountVolume.SetUp failed for volume "v" : secret "s" not found`
        r"(?:Error|CreateContainerConfigError): "
        r"(?P<kind>secrets?|configmaps?) \"(?P<object>[^\"]+)\" not found",
        "the container's environment takes values from {kind} {object}, which does not exist in the "
        "pod's namespace, so the kubelet cannot build the container's config "
        "(CreateContainerConfigError); a policy or webhook may have injected the reference",
        "create it (`kubectl -n {namespace} get {kind}` lists what exists), or remove the reference "
        "(a mutating webhook's or policy's if gpuctl's pod did not ask for it: `kubectl get "
        "mutatingwebhookconfigurations`); the kubelet retries by itself",
        also=_ALSO,
    ),
    sig(
        "container.config-error", "runtime", "pod",
        r"CreateContainerConfigError",
        "the kubelet cannot build the container's config (CreateContainerConfigError): a Secret, "
        "ConfigMap or key it refers to is missing, or its security context cannot be met (runAsNonRoot "
        "with an image that runs as root)",
        _DESCRIBE + "; fix what its `Failed` event names, the kubelet retries by itself",
        also=_ALSO, generic=True,
    ),
    sig(
        "container.create-error", "runtime", "runtime",
        r"CreateContainerError",
        "the container runtime refused to create the container (CreateContainerError): its message "
        "names why (a device it cannot inject, a mount it cannot make, a name still reserved)",
        "on {node}: `sudo journalctl -u containerd --since -10min` and `sudo crictl ps -a`; "
        + _DESCRIBE,
        also=_ALSO, generic=True,
    ),
    sig(
        "container.run-error", "runtime", "runtime",
        r"RunContainerError|\bStartError\b",
        "the container was created but its process never started (RunContainerError; containerd "
        "reports StartError, exit code 128): the OCI runtime or a prestart hook failed",
        "on {node}: `sudo journalctl -u containerd --since -10min`; the container's message (`kubectl "
        "-n {namespace} describe pod`) names the runtime's error",
        also=_ALSO, generic=True,
    ),
)  # fmt: skip
