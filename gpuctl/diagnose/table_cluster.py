"""Cluster rows: image pulls, pod events and node state (scheduling: table_scheduling.py)."""

from __future__ import annotations

from gpuctl.diagnose.signatures import sig

_NODE_FIX = (
    "`kubectl describe node {node}`; on the node: `systemctl status kubelet containerd` and "
    "`journalctl -u kubelet -n 100`"
)
# Where an image is set: the pod's own spec (its Deployment, DaemonSet, Job or chart values), or
# gpuctl verify's --image; a GPU Operator operand's in the ClusterPolicy (`operand_hint`).
_VERIFY_IMAGE = "for `gpuctl verify`'s own pod: `gpuctl verify --image REGISTRY/IMAGE:TAG`"
_CLUSTER_POLICY = (
    "the image is the GPU Operator's {operand}: the ClusterPolicy sets it (`kubectl get clusterpolicies "
    "-o yaml`, spec.{field}: repository, image, version; the Helm values {field}.*)"
)

CLUSTER = (
    # --- image pulls (kubelet, containerd), for any pod ------------------------------------------
    sig(
        "image.invalid-name", "image-pull", "image-pull",
        r"InvalidImageName|couldn't parse image reference|invalid reference format",
        "the image reference {image} is not valid (upper-case letters, a doubled or trailing `/` or "
        "`:`, an empty tag)",
        "fix the image where the pod's spec sets it (`kubectl describe pod` shows it); " + _VERIFY_IMAGE,
        operand_hint=_CLUSTER_POLICY + ": repository, image and version join into the reference, "
        "so one of them is wrong there",
    ),
    sig(
        "image.rate-limited", "image-pull", "image-pull",
        r"429 Too Many Requests|toomanyrequests|pull rate limit",
        "the registry rate-limited the node's pulls (Docker Hub allows few anonymous pulls)",
        "pull with credentials (a docker-registry Secret in the pod's imagePullSecrets; for `gpuctl "
        "verify`'s own pod `--image-pull-secret NAME`), mirror {image} to your own registry, or wait "
        "for the limit to reset",
        operand_hint=_CLUSTER_POLICY + "; point spec.{field}.repository at your mirror",
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
        "the registry refused the pull of {image}: the credentials are missing or wrong, or the "
        "account may not read that repository",
        "create a pull secret in the pod's namespace (`kubectl -n {namespace} create secret "
        "docker-registry NAME --docker-server=REGISTRY ...`) and list it in the pod's imagePullSecrets "
        "(or its ServiceAccount's); for `gpuctl verify`'s own pod: `gpuctl verify "
        "--image-pull-secret NAME`",
        operand_hint=_CLUSTER_POLICY + "; list the secret, made in the operator's namespace, in "
        "spec.{field}.imagePullSecrets (NGC's private images need an NGC API key as its password)",
    ),
    sig(
        "image.digest-withdrawn", "image-pull", "image-pull",
        # A digest's manifest gone: the publisher withdrew or replaced it (no tag moves back to it).
        r"@sha256:[0-9a-f]{64}[^\n]{0,400}?(?:: not found|manifest unknown|code = NotFound)|"
        r"manifest sha256:[0-9a-f]{64}[^\n]{0,200}?manifest unknown",
        "the image {image} is pinned by digest and the registry no longer serves that digest: its "
        "publisher withdrew or replaced it (NVIDIA removes images with critical CVEs from nvcr.io), "
        "so no node can pull it again, however often it retries",
        "move to a current tag or digest where the pod's spec pins it, usually by upgrading the "
        "release or operator that pinned it; " + _VERIFY_IMAGE,
        operand_hint=_CLUSTER_POLICY + "; upgrade the GPU Operator, whose release names current "
        "images, or set spec.{field}.version to a published one",
    ),
    sig(
        "image.not-found", "image-pull", "image-pull",
        r"not found|manifest unknown|code = NotFound",
        "the image or tag {image} does not exist in the registry",
        "check the name and tag (`crictl pull {image}` on {node}) and fix them where the pod's spec "
        "sets them, or mirror the image; " + _VERIFY_IMAGE,
        operand_hint=_CLUSTER_POLICY + "; set spec.{field}.version to a tag the release publishes "
        "(a values file kept from an older release can name one the new release no longer has), or "
        "upgrade the GPU Operator",
    ),
    sig(
        "image.pull-failed", "image-pull", "image-pull",
        r"ErrImagePull|ImagePullBackOff|Failed to pull image|Back-off pulling image",
        "the node could not pull the image {image}, and this line does not say why (a back-off "
        "repeats an earlier failure; the registry's answer is in the pod's earlier Failed event)",
        "`kubectl describe pod` (Events: the Failed event before the back-off) shows the registry's "
        "answer; pull it on the node to see it again: `crictl pull {image}` on {node}; " + _VERIFY_IMAGE,
        generic=True,
        operand_hint=_CLUSTER_POLICY + "; compare spec.{field} with the defaults of the operator's "
        "release: a values file kept from an older release can name an image the new one no longer "
        "publishes (v25.10 merged gpu-operator-validator into the gpu-operator image)",
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
        # not the GPU Operator driver pod's startup probe ("driver daemons ... Current status: NotReady")
        r"(?<!Current status: )NotReady|KubeletNotReady|Kubelet stopped posting node status|"
        r"NodeStatusUnknown",
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
