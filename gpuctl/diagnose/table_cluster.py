"""Cluster rows: kube-scheduler reasons, image pulls, pod events and node state."""

from __future__ import annotations

from gpuctl.diagnose.signatures import sig

# kube-scheduler has worded taints three ways: "had untolerated taint {k: v}" (v1.25+), "had taint
# {k: v}, that the pod didn't tolerate" (v1.18-v1.24) and "had taints that the pod didn't tolerate".
_TAINT = r"had (?:untolerated )?taint \{"
_NODE_FIX = (
    "`kubectl describe node {node}`; on the node: `systemctl status kubelet containerd` and "
    "`journalctl -u kubelet -n 100`"
)

CLUSTER = (
    # --- kube-scheduler FailedScheduling reasons ---------------------------------------------
    sig(
        "sched.unschedulable", "scheduling", "scheduling",
        rf"node\(s\) were unschedulable|{_TAINT}node\.kubernetes\.io/unschedulable",
        "the node is cordoned (spec.unschedulable)",
        "`kubectl uncordon {node}` if the maintenance is over",
    ),
    sig(
        "sched.node-not-ready", "scheduling", "node",
        rf"{_TAINT}node\.kubernetes\.io/not-ready|node\(s\) were not ready",
        "the node is NotReady (the node controller tainted it); a toleration would not help",
        _NODE_FIX,
    ),
    sig(
        "sched.node-unreachable", "scheduling", "node",
        rf"{_TAINT}node\.kubernetes\.io/unreachable",
        "the node controller lost contact with the node's kubelet (node unreachable); a toleration "
        "would not help",
        "check that {node} is up and its kubelet reaches the API server: `kubectl get node {node}`, "
        "then on the node `systemctl status kubelet` and its network",
    ),
    sig(
        "sched.node-pressure", "scheduling", "node",
        rf"{_TAINT}node\.kubernetes\.io/(?P<pressure>memory|disk|pid)-pressure|"
        r"node\(s\) had (?P<condition>memory|disk|pid) pressure",
        "the kubelet reports resource pressure on the node and the scheduler keeps new pods off it",
        "free memory, disk or PIDs on {node} (`kubectl describe node {node}` shows the condition); "
        "the taint goes away by itself once the pressure ends",
    ),
    sig(
        "sched.untolerated-taint", "scheduling", "scheduling",
        r"had untolerated taint|had taints? that the pod didn't tolerate|"
        r"had taint \{[^}]*\}, that the pod didn't tolerate",
        "the node carries a taint the verification pod does not tolerate",
        "rerun with `gpuctl verify --toleration KEY=VALUE:EFFECT` for that taint, or remove it: "
        "`kubectl taint nodes {node} KEY-`",
    ),
    sig(
        "sched.insufficient-gpu", "scheduling", "scheduling",
        # DRA's DynamicResources filter says "cannot allocate all claims" for the same situation.
        r"Insufficient nvidia\.com/gpu|cannot allocate all claims",
        "fewer free GPUs than allocatable: other pods (or, under DRA, other claims) hold GPUs on the "
        "node, or GPUs became unhealthy (tainted devices under DRA)",
        "list the GPU pods on it: `kubectl get pods -A --field-selector spec.nodeName={node} -o wide` "
        "(under DRA: `kubectl get resourceclaims -A`, and the devices and taints of "
        "`kubectl get resourceslices --field-selector spec.nodeName={node} -o yaml`); "
        "rerun when they finish, or drain the node",
    ),
    sig(
        "sched.selector-mismatch", "scheduling", "scheduling",
        r"didn't match Pod's node affinity/selector|didn't match node selector",
        "no node carries the kubernetes.io/hostname label the verification pod selects",
        "check the label: `kubectl get node {node} -L kubernetes.io/hostname`",
    ),
    # --- image pulls (kubelet, containerd) -----------------------------------------------------
    sig(
        "image.invalid-name", "image-pull", "image-pull",
        r"InvalidImageName|couldn't parse image reference|invalid reference format",
        "the image reference is not valid",
        "pass a valid --image, e.g. `gpuctl verify --image nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04`",
    ),
    sig(
        "image.rate-limited", "image-pull", "image-pull",
        r"429 Too Many Requests|toomanyrequests|pull rate limit",
        "the registry rate-limited the node's pulls (Docker Hub allows few anonymous pulls)",
        "pull with credentials (`gpuctl verify --image-pull-secret NAME`), mirror {image} to your "
        "own registry, or wait for the limit to reset",
    ),
    sig(
        "image.tls", "image-pull", "image-pull",
        r"x509: |certificate signed by unknown authority|tls: failed to verify certificate",
        "the node does not trust the registry's TLS certificate (private CA or an intercepting proxy)",
        "install the registry's CA on {node} (/etc/containerd/certs.d/REGISTRY/ca.crt, or the "
        "system trust store) and restart containerd",
    ),
    sig(
        "image.unauthorized", "image-pull", "image-pull",
        r"unauthorized|authentication required|pull access denied|403 Forbidden|Access Denied|"
        r"requested access to the resource is denied",
        "the registry refused the pull: credentials are missing or wrong",
        "create a pull secret in {namespace} (`kubectl -n {namespace} create secret docker-registry "
        "...`) and pass `gpuctl verify --image-pull-secret NAME`",
    ),
    sig(
        "image.not-found", "image-pull", "image-pull",
        r"not found|manifest unknown|code = NotFound",
        "the image or tag {image} does not exist in the registry",
        "check the name and tag (`crictl pull {image}` on {node}), or mirror it and pass "
        "`gpuctl verify --image REGISTRY/IMAGE`",
    ),
    sig(
        "image.pull-failed", "image-pull", "image-pull",
        r"ErrImagePull|ImagePullBackOff|Failed to pull image|Back-off pulling image",
        "the node could not pull the verification image {image}",
        "`kubectl describe pod` shows the registry's answer; check the name and tag "
        "(`crictl pull {image}` on {node}), or mirror it and pass `gpuctl verify --image REGISTRY/IMAGE`",
        generic=True,
    ),
    # --- pod events (kubelet) ------------------------------------------------------------------
    sig(
        "pod.failed-mount", "events", "pod",
        r"FailedMount|MountVolume\.SetUp failed|Unable to attach or mount volumes",
        "the kubelet could not mount one of the pod's volumes",
        "`kubectl describe pod` names the volume; check the path or object it refers to on {node}",
        transient=True,
    ),
    sig(
        "pod.sandbox-failed", "events", "runtime",
        r"FailedCreatePodSandBox|Failed to create pod sandbox",
        "the container runtime could not create the pod sandbox on the node",
        "`journalctl -u containerd -n 100` on {node}; the event message names the cause",
        generic=True, transient=True,
    ),
    # --- kubelet admission and API rejections ---------------------------------------------------
    sig(
        "admission.devices-unavailable", "events", "plugin",
        r"(?:Allocate|Update plugin resources) failed due to requested number of devices unavailable for "
        r"(?P<resource>\S+?)\.? "
        r"Requested: ?\d+, Available: ?\d+",
        "the kubelet admitted the pod but its device manager had fewer free {resource} than requested "
        "(UnexpectedAdmissionError), not a GPU shortage the scheduler saw: right after a kubelet "
        "restart it is a kubelet bug (kubernetes#124345 and related: the restarted kubelet re-admits "
        "pods that had already completed or failed, or admits pods before the device plugin has "
        "registered again, and finds their GPUs held by running pods or not yet listed); otherwise "
        "its record of allocated devices is stale (pods force-deleted), or the device plugin has "
        "just marked GPUs unhealthy",
        "`kubectl describe node {node}`: if the failed pods appeared when the kubelet restarted "
        "(`journalctl -u kubelet | grep -m1 'Starting kubelet'` on {node}), delete them (`kubectl "
        "delete pods -A --field-selector spec.nodeName={node},status.phase=Failed`; their "
        "controllers recreate what should run), drain {node} before restarting its kubelet, and "
        "upgrade the kubelet to a patch release that skips terminated pods at re-admission; if "
        "Allocatable still counts the GPUs and no running pod holds them (`kubectl get pods -A "
        "--field-selector spec.nodeName={node} -o wide`), the kubelet's state is stale: `sudo "
        "systemctl restart kubelet` on {node}; if Allocatable dropped, the device plugin's log names "
        "the Xid (`gpuctl verify`); then delete the failed pod",
    ),
    sig(
        "admission.unexpected", "events", "plugin",
        r"UnexpectedAdmissionError",
        "the kubelet rejected the pod at admission after scheduling (device allocation failed); the "
        "rest of the message says why",
        "`kubectl describe pod` for the full message, and the device plugin's log on {node}",
        generic=True,
    ),
    sig(
        "pod.runtimeclass-missing", "events", "runtime",
        r"RuntimeClass \W(?P<runtimeclass>[\w.-]+)\W not found",
        "the pod names runtimeClassName {runtimeclass} and no RuntimeClass object of that name exists, "
        "so the API server rejects the pod (unlike `no runtime for \"nvidia\" is configured`, where the "
        "object exists and the node's containerd lacks the handler)",
        "`kubectl get runtimeclass`; create it (`gpuctl render | kubectl apply -f -` creates `nvidia` "
        "with handler nvidia) or drop runtimeClassName from the pod",
        also=("runtime",),
    ),
    # --- node state ----------------------------------------------------------------------------
    sig(
        "node.not-ready", "node", "node",
        r"NotReady|KubeletNotReady|Kubelet stopped posting node status|NodeStatusUnknown",
        "the kubelet on the node is not reporting Ready",
        _NODE_FIX,
    ),
    sig(
        "node.unhealthy-gpus", "node", "hardware",
        r"allocatable \d+ < capacity \d+",
        "the device plugin reports some GPUs unhealthy (allocatable below capacity)",
        "find the device plugin pod (`kubectl get pods -A -o wide --field-selector "
        "spec.nodeName={node}`), read its log for the XID, then `dmesg | grep -i xid` on {node}",
    ),
    sig(
        "node.no-gpu-advertised", "node", "plugin",
        r"advertises no nvidia\.com/gpu",
        "the node is a GPU node but advertises no nvidia.com/gpu: the device plugin is missing, "
        "not ready, or cannot see the GPUs",
        "`kubectl -n kube-system get pods -l name=nvidia-device-plugin-ds -o wide`; if none runs on "
        "{node}, install it (`gpuctl render | kubectl apply -f -`)",
    ),
)  # fmt: skip
