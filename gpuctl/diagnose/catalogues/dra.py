"""Dynamic Resource Allocation: the kubelet's DRA manager (preparing a pod's ResourceClaims through a
driver's kubelet plugin), the scheduler's DynamicResources plugin, and the NVIDIA DRA driver's GPU
and ComputeDomain kubelet plugins (MIG, IMEX, Fabric Manager partitions, VFIO, checkpoints).

Wrappers that only say "prepare failed" (`Failed to prepare dynamic resources`, `NodePrepareResources
failed for ResourceClaim`, `error preparing devices for claim`) are the table's generic row
dra.prepare-failed: the entries here name the reason those lines carry after them. `cannot allocate
all claims` is the scheduler row sched.insufficient-gpu, `unresolvable CDI devices` the runtime row
runtime.cdi-unresolvable, and the driver's missing libnvidia-ml, its unhealthy-device notice and the
IMEX daemon's address mismatch are table rows too (dra.driver-libraries-missing,
dra.device-unhealthy, imex.no-interface).
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_K8S = "https://github.com/kubernetes/kubernetes/blob/v1.34.0/"
_KUBELET_DRA = _K8S + "pkg/kubelet/cm/dra/manager.go"
_SCHEDULER = _K8S + "pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go"
_ALLOCATOR = _K8S + "staging/src/k8s.io/dynamic-resource-allocation/structured/allocator.go"
_DRIVER = (
    "https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/blob/95932046683719c43b6a0dd9613c2e5aad5d6703/"
)
_GPU_PLUGIN = _DRIVER + "cmd/gpu-kubelet-plugin/"
_CD_PLUGIN = _DRIVER + "cmd/compute-domain-kubelet-plugin/"

_PLUGIN_POD = (
    "find the DRA driver's kubelet-plugin pod on {node} (`kubectl get pods -A -o wide "
    "--field-selector spec.nodeName={node} | grep kubelet-plugin`) and read its log (containers "
    "`gpus` and `compute-domains`)"
)
_RECREATE = "then delete the pod (and its claim, if a template made it) so it is prepared anew"

_KUBELET = (
    Entry(
        "DeadlineExceeded",
        "DRA kubelet plugin did not answer in time",
        "the DRA driver's kubelet plugin did not finish preparing (or unpreparing) the claim "
        "within the kubelet's deadline: it waits for the GPU (a host process holds it while the "
        "driver switches it to vfio-pci, a MIG or ComputeDomain change that takes long, a GPU that "
        "hangs) or it is stuck; the kubelet retries",
        _PLUGIN_POD + "; on {node} `sudo lsof /dev/nvidia*` shows processes holding the GPUs "
        "(stop them), `nvidia-smi` must answer; " + _RECREATE,
        "plugin",
        transient=True,
        source=_KUBELET_DRA,
    ),
    Entry(
        "Unavailable",
        "DRA kubelet plugin not reachable",
        "the kubelet could not reach the DRA driver's kubelet plugin over its socket (gRPC "
        "Unavailable): the plugin pod on {node} is restarting or crashed, or its socket under "
        "/var/lib/kubelet/plugins is gone",
        _PLUGIN_POD + " (`--previous` for the crash); the kubelet retries once it is back; " + _RECREATE,
        "plugin",
        transient=True,
        source=_KUBELET_DRA,
    ),
    Entry(
        "driver-not-registered",
        "DRA driver not registered with the kubelet",
        "the kubelet on {node} has no kubelet plugin of the claim's DRA driver registered: the "
        "driver's kubelet-plugin pod is not running there (not scheduled on the node, crashing, or "
        "that part of the driver is disabled, e.g. ComputeDomains), it registers in another "
        "kubelet root directory than /var/lib/kubelet/plugins_registry, or the kubelet is 1.34.0 "
        "or 1.34.1, whose plugin registration bug (kubernetes#133920) 1.34.2 fixed",
        _PLUGIN_POD + "; if none runs there, check the DaemonSet's nodeSelector/tolerations and the "
        "chart's `resources.gpus.enabled` / `resources.computeDomains.enabled`; on the node, "
        "`ls /var/lib/kubelet/plugins_registry/` must list the driver's socket; upgrade a 1.34.0/1.34.1 "
        "kubelet to 1.34.2+",
        "plugin",
        aliases=("is not registered",),
        texts=(
            "not found in the list of registered DRA plugins",
            "DRA Plugin client for plugin name",
        ),
        source=_K8S + "pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go",
        transient=True,
    ),
    Entry(
        "kubelet-dra-disabled",
        "kubelet without DRA",
        "the node's kubelet has no handler for DRA plugins: the DynamicResourceAllocation feature "
        "gate is off on the kubelet (it is default-on only from Kubernetes 1.34), so the DRA "
        "driver's kubelet plugin cannot register and no claim can be prepared on {node}",
        "enable the DynamicResourceAllocation feature gate in the kubelet's configuration on {node} "
        "(`featureGates: {{DynamicResourceAllocation: true}}` in /var/lib/kubelet/config.yaml, as on "
        "the API server, scheduler and controller manager) and `sudo systemctl restart kubelet`, or "
        "upgrade the node to Kubernetes 1.34+",
        "config",
        texts=("no handler registered for plugin type: DRAPlugin",),
        source=_K8S + "pkg/kubelet/pluginmanager/operationexecutor/operation_generator.go",
    ),
    Entry(
        "claim-api-not-served",
        "kubelet cannot read ResourceClaims",
        "the kubelet asks the API server for ResourceClaims in a resource.k8s.io version it does not "
        "serve: the node's kubelet and the control plane are of Kubernetes versions whose DRA API "
        "versions do not overlap, or that API version is not enabled",
        "compare `kubectl version` with the node's kubelet (`kubectl get node {node} -o wide`) and "
        "`kubectl api-versions | grep resource.k8s.io`; upgrade the kubelet to the control plane's "
        "minor version (or enable the API version it needs)",
        "config",
        aliases=("the server could not find the requested resource",),
        source=_KUBELET_DRA,
    ),
    Entry(
        "claim-fetch-failed",
        "kubelet cannot fetch the pod's ResourceClaim",
        "the kubelet could not read the pod's ResourceClaim from the API server (the claim was "
        "deleted, a template's claim is not created yet, or the API server is unreachable)",
        "`kubectl get resourceclaims -n {namespace}` and `kubectl describe pod` for the claim's "
        "name; recreate the claim (or the pod, for a template's claim)",
        "config",
        texts=("fetch ResourceClaim",),
        source=_KUBELET_DRA,
        transient=True,
    ),
    Entry(
        "claim-not-reserved",
        "ResourceClaim not reserved for the pod",
        "the pod is not among the consumers the ResourceClaim is reserved for (status.reservedFor): "
        "the claim belongs to another pod or was allocated for a pod that was replaced",
        "`kubectl get resourceclaim CLAIM -n {namespace} -o yaml` (status.reservedFor); give the pod "
        "its own claim (a ResourceClaimTemplate), or delete the pod so the scheduler reserves the "
        "claim for the new one",
        "config",
        texts=("is not allowed to use ResourceClaim", "allowed to use resource claim"),
        source=_KUBELET_DRA,
    ),
    Entry(
        "stale-claim",
        "a force-deleted pod's claim is still prepared",
        "the kubelet still holds a prepared ResourceClaim of the same name from a pod that was "
        "force-deleted before its resources were unprepared",
        "wait for the kubelet to unprepare the old claim; if it does not, drain {node} and restart "
        "the kubelet (`sudo systemctl restart kubelet`), " + _RECREATE,
        "plugin",
        texts=("old ResourceClaim with same name",),
        source=_KUBELET_DRA,
    ),
    Entry(
        "claim-not-owned",
        "generated claim belongs to another pod",
        "the ResourceClaim the pod's status names was generated from its template for another pod "
        "of the same name (a pod deleted and recreated, often force-deleted, before the old claim "
        "was removed), so the kubelet will not prepare it for this pod",
        "`kubectl get resourceclaim -n {namespace}` and delete the claim the line names once no "
        "running pod uses it, then recreate the pod so a claim is generated for it",
        "plugin",
        # a reader: generic ephemeral volumes' PVCs say "(pod is not owner)" too
        aliases=("pod is not owner",),
        source=_K8S + "staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/resourceclaim.go",
    ),
    Entry(
        "claim-info-missing",
        "kubelet lost a prepared claim",
        "the kubelet's cache of prepared claims (dra_manager_state) has no entry for a claim the "
        "pod's containers need: the claim was unprepared while the pod still used it (a pod deleted "
        "with terminationGracePeriodSeconds 0 and recreated at once, kubernetes#131513), so the "
        "containers cannot start and retries do not help",
        "delete the pod (and its generated claim) so it is prepared anew; avoid "
        "terminationGracePeriodSeconds: 0 for pods with ResourceClaims; upgrade the kubelet on {node} "
        "to a release with the kubernetes#131513 fix",
        "plugin",
        texts=("unable to get claim info for claim",),
        source=_K8S + "pkg/kubelet/cm/dra/claiminfo.go",
    ),
    Entry(
        "plugin-api-unsupported",
        "DRA kubelet plugin does not serve the kubelet's DRA API",
        "the DRA driver's kubelet plugin does not implement the DRA gRPC API version the kubelet "
        "called (gRPC Unimplemented, `unknown service k8s.io.kubelet.pkg.apis.dra...`): the driver "
        "is older or newer than the Kubernetes versions it supports (a driver serving only "
        "v1alpha4/v1beta1 on a kubelet that calls v1, or the reverse)",
        _PLUGIN_POD + "; install a DRA driver release that supports the kubelet's version on {node} "
        "(`kubectl get node {node} -o jsonpath='{{.status.nodeInfo.kubeletVersion}}'`), " + _RECREATE,
        "plugin",
        texts=("unknown service k8s.io.kubelet.pkg.apis.dra",),
        source=_K8S + "pkg/kubelet/cm/dra/plugin/dra_plugin.go",
    ),
    Entry(
        "prepare-incomplete",
        "DRA driver answered for only some claims",
        "the DRA driver's NodePrepareResources answered for fewer claims than asked or for a claim "
        "not asked for: the driver and the kubelet disagree (a driver bug or version mismatch)",
        _PLUGIN_POD + "; upgrade the DRA driver to a release supporting the kubelet's version, " + _RECREATE,
        "plugin",
        texts=("NodePrepareResources skipped", "NodePrepareResources returned result for unknown claim"),
        source=_KUBELET_DRA,
    ),
    Entry(
        "unprepare-failed",
        "DRA resources not released",
        "the kubelet could not release (unprepare) the pod's claimed devices through the DRA driver, "
        "so the pod stays Terminating and the devices stay held; the rest of the line says why",
        _PLUGIN_POD + "; fix what it names (a MIG device it cannot delete, an unreachable plugin), "
        "then restart the kubelet-plugin pod so it retries",
        "plugin",
        texts=(
            "unprepare dynamic resources",
            "NodeUnprepareResources failed",
            "error unpreparing devices for claim",
            "unprepare devices failed",
        ),
        source=_KUBELET_DRA,
    ),
)

_SCHEDULING = (
    Entry(
        "claim-not-found",
        "the pod's ResourceClaim does not exist",
        "the scheduler cannot find a ResourceClaim the pod references (a wrong name, a claim in "
        "another namespace, or a template whose claim is not created yet)",
        "`kubectl get resourceclaims,resourceclaimtemplates -n {namespace}` against the pod's "
        "spec.resourceClaims; fix the name or create the claim",
        "config",
        texts=("resourceclaim not found",),
        source=_SCHEDULER,
        transient=True,
    ),
    Entry(
        "claim-from-template-pending",
        "claim from the pod's template not created yet",
        "the pod's ResourceClaim comes from a ResourceClaimTemplate and the resource claim controller "
        "(in kube-controller-manager) has not created it yet: normal for a moment after the pod is "
        "created; if it lasts, the template does not exist in the pod's namespace, or the "
        "controller manager runs without DRA (its DynamicResourceAllocation feature gate off before "
        "Kubernetes 1.34, or the resource-claim-controller disabled)",
        "`kubectl get resourceclaimtemplates -n {namespace}` must list the template the pod names; "
        "`kubectl get events -n {namespace} --field-selector involvedObject.kind=Pod` shows the "
        "controller's errors; enable DynamicResourceAllocation on kube-controller-manager as on the "
        "API server and scheduler",
        "config",
        texts=("waiting for dynamic resource controller to create the resourceclaim",),
        source=_SCHEDULER,
        transient=True,
    ),
    Entry(
        "cel-selector-error",
        "a device selector's CEL expression fails",
        "a CEL selector of the claim or its DeviceClass fails on the node's devices (`CEL runtime "
        "error`): it reads an attribute the DRA driver does not publish under that name (`model` "
        "where the NVIDIA driver publishes `productName`, an attribute without its "
        "`gpu.nvidia.com` domain, a field of a newer driver), so no device can be allocated",
        "`kubectl get resourceslices -o yaml` lists each device's attributes and capacity; fix the "
        "expression in the claim (or the DeviceClass) to use a published name, or guard it with "
        '`has(device.attributes["gpu.nvidia.com"].NAME)`; then recreate the claim',
        "config",
        texts=("CEL runtime error",),
        source=_ALLOCATOR,
    ),
    Entry(
        "claim-in-use",
        "ResourceClaim held by other pods",
        "the pod's ResourceClaim is already reserved for other pods and cannot take another consumer, "
        "so the pod waits",
        "`kubectl get resourceclaim -n {namespace} -o wide` shows who holds it; give each pod its own "
        "claim (a ResourceClaimTemplate) or wait for the holders to finish",
        "config",
        texts=("resourceclaim in use",),
        source=_SCHEDULER,
        transient=True,
    ),
    Entry(
        "device-class-missing",
        "DeviceClass not found",
        "a request of the claim names a DeviceClass that does not exist (the DRA driver that creates "
        "gpu.nvidia.com is not installed, or the name is wrong)",
        "`kubectl get deviceclasses`; install the NVIDIA DRA driver (it creates gpu.nvidia.com, "
        "mig.nvidia.com, compute-domain-daemon.nvidia.com, ...) or fix deviceClassName in the claim",
        "config",
        aliases=("does not exist",),
        texts=("could not retrieve device class",),
        source=_ALLOCATOR,
    ),
    Entry(
        "claim-on-other-node",
        "ResourceClaim allocated on another node",
        "the pod's ResourceClaim is already allocated, with devices of a node this pod cannot go to "
        "(a claim shared with pods running elsewhere, a claim left allocated by a deleted pod, or "
        "the pod's own node selector or taints excluding that node)",
        "`kubectl get resourceclaim -n {namespace} -o yaml` (status.allocation.nodeSelector and "
        "status.reservedFor); schedule the pod where the claim is, give it its own claim (a "
        "ResourceClaimTemplate), or delete the stale claim so it is allocated anew",
        "config",
        texts=("resourceclaim not available on the node",),
        source=_SCHEDULER,
    ),
    Entry(
        "claim-being-allocated",
        "ResourceClaim allocation in flight",
        "another pod's scheduling is allocating the same ResourceClaim, so this pod waits for that "
        "allocation to finish (pods of one gang sharing a claim kept waiting on each other before "
        "Kubernetes 1.36, kubernetes/kubernetes#137617)",
        "usually none, the scheduler retries; pods sharing one claim in a scheduling gang need a "
        "kube-scheduler with the fix of kubernetes/kubernetes#137647, or give each pod its own claim",
        "config",
        texts=("is in the process of being allocated",),
        source=_SCHEDULER,
        transient=True,
    ),
    Entry(
        "claim-being-deleted",
        "ResourceClaim being deleted",
        "the pod references a ResourceClaim that is being deleted (its deletionTimestamp is set and "
        "a finalizer holds it until its devices are released), so the pod cannot use it",
        "`kubectl get resourceclaim -n {namespace} -o yaml` (finalizers, status.reservedFor); let "
        "the deletion finish and recreate the claim, or point the pod at another claim",
        "config",
        aliases=("is being deleted",),
        source=_SCHEDULER,
        transient=True,
    ),
    Entry(
        "prioritized-list-disabled",
        "claim uses firstAvailable without the feature gate",
        "a request of the claim lists alternatives (`firstAvailable` subrequests) but the "
        "DRAPrioritizedList feature gate is off in the kube-scheduler (or the API server)",
        "enable the gate DRAPrioritizedList=true on kube-apiserver and kube-scheduler (beta and on "
        "by default from Kubernetes 1.34), or write the claim's requests with `exactly`",
        "config",
        texts=("but the DRAPrioritizedList feature is disabled",),
        source=_SCHEDULER,
    ),
    Entry(
        "allocation-timeout",
        "device allocation timed out",
        "the scheduler gave up allocating the claim's devices in time (many devices or complex "
        "selectors to try)",
        "simplify the claim's selectors or request fewer devices per claim; the scheduler retries "
        "the pod by itself",
        "config",
        texts=("timed out trying to allocate devices",),
        source=_SCHEDULER,
        transient=True,
    ),
)

_NVIDIA_DRIVER = (
    Entry(
        "cdi-not-enabled",
        "container runtime ignores CDI",
        "a container started without the devices the DRA driver prepared for it (the ComputeDomain "
        "daemon checks its IMEX channel): the container runtime does not apply CDI device requests "
        "(CDI disabled in containerd before 2.0 or in CRI-O)",
        "on {node}: enable CDI in containerd (`enable_cdi = true` and `cdi_spec_dirs = "
        '["/etc/cdi", "/var/run/cdi"]` under the CRI plugin; the default from containerd 2.0) '
        "and `sudo systemctl restart containerd`, then recreate the pod",
        "runtime",
        # the ComputeDomain daemon's config template reaches it only through the CDI edits
        texts=("container edits did not apply", "imexd.cfg.tmpl: no such file or directory"),
        source=_DRIVER + "cmd/compute-domain-daemon/main.go",
    ),
    Entry(
        "device-not-allocatable",
        "claimed device not published by the driver",
        "the claim was allocated a device the node's DRA kubelet plugin does not publish (any "
        "more): the GPUs or MIG layout changed, or the plugin restarted with other settings since "
        "the ResourceSlice was read",
        _PLUGIN_POD + "; compare `kubectl get resourceslices --field-selector spec.nodeName={node} "
        "-o yaml` with `nvidia-smi -L` on the node; " + _RECREATE,
        "plugin",
        texts=(
            "requested device is not allocatable",
            "allocatable not found for device",
            "allocated GPU does not exist",
        ),
        source=_GPU_PLUGIN + "device_state.go",
    ),
    Entry(
        "claim-config-invalid",
        "claim's opaque config invalid",
        "the claim's opaque driver config (GpuConfig, MigDeviceConfig, sharing settings) is not "
        "valid for the device it got or cannot be decoded, so the driver refuses to prepare it",
        "fix the `config` of the ResourceClaim (template) against the driver's API (kind, apiVersion "
        "resource.nvidia.com/v1beta1, field names; sharing strategy valid for the device type), " + _RECREATE,
        "config",
        texts=(
            "error decoding config parameters",
            "error validating GpuClaimParameters",
            "error validating MigDeviceClaimParameters",
            "error validating GPU config",
            "error validating config",
            "error normalizing GPU config",
            "only opaque parameters are supported by this driver",
            "runtime object is not a recognized configuration",
            "cannot apply GpuConfig to device",
            "cannot apply MigDeviceConfig to device",
            "cannot apply VfioDeviceConfig to device",
            "has conflicting configuration with already prepared claim",
        ),
        source=_GPU_PLUGIN + "device_state.go",
    ),
    Entry(
        "mig-unclaimed-devices",
        "MIG devices not made by the DRA driver",
        "the DRA driver's kubelet plugin found MIG devices on {node} that no claim it prepared "
        "owns (made by hand with `nvidia-smi mig -cgi`, by mig-parted or the GPU Operator's MIG "
        "manager) and refuses to start: it creates and deletes MIG devices itself",
        "on {node} destroy the MIG instances no pod uses (`nvidia-smi mig -dci; nvidia-smi mig "
        "-dgi`), and turn off other MIG managers there (GPU Operator `migManager.enabled=false`, "
        "label `nvidia.com/mig.config` removed); then restart the kubelet-plugin pod",
        "mig",
        texts=("MIG devices found that aren't prepared to any claim",),
        # syncPreparedDevicesFromCRDSpec of the releases with the NodeAllocationState CRD
        source="https://github.com/NVIDIA/k8s-dra-driver/blob/v0.1.0/cmd/nvidia-dra-plugin/device_state.go",
    ),
    Entry(
        "mig-capabilities",
        "MIG capability files missing",
        "the driver cannot read a MIG instance's capability file under "
        "/proc/driver/nvidia/capabilities: the GPU or compute instance it names does not exist (any "
        "more), the MIG layout changed under the driver",
        "check the MIG layout on {node} (`nvidia-smi mig -lgi`, `nvidia-smi -L`); restart the "
        "kubelet-plugin pod so it republishes the devices, " + _RECREATE,
        "mig",
        texts=("failed to parse GI capabilities file", "failed to parse CI capabilities file"),
        source=_GPU_PLUGIN + "cdi.go",
    ),
    Entry(
        "mig-create-failed",
        "MIG device not created",
        "the driver could not create the MIG device the claim was given (dynamic MIG): the GPU has "
        "no room at that placement (other or stale MIG instances hold it: Insufficient Resources), "
        "or MIG mode is not active",
        "list the GPU's instances on {node} (`nvidia-smi mig -lgi`, `nvidia-smi mig -lci`) and "
        "destroy stale ones not used by any pod (`nvidia-smi mig -dci -i GPU; nvidia-smi mig -dgi -i "
        "GPU`), " + _RECREATE,
        "mig",
        texts=(
            "error creating GPU instance for",
            "error creating Compute instance for",
            "MIG device allocation failed",
            "error creating MIG device",
            "cannot prepare a GPU with MIG mode disabled",
            "does not exist on GPU",
        ),
        source=_GPU_PLUGIN + "nvlib.go",
    ),
    Entry(
        "mig-delete-failed",
        "MIG device not deleted",
        "the driver could not delete a MIG device (it is in use by a process, or left from an earlier "
        "run), so the GPU's MIG space stays taken",
        "on {node}: `nvidia-smi` for processes on the MIG device, stop them, then destroy the "
        "instances (`nvidia-smi mig -dci -i GPU; nvidia-smi mig -dgi -i GPU`) and restart the "
        "kubelet-plugin pod",
        "mig",
        texts=(
            "could not delete unexpected MIG device",
            "MIG device deletion failed",
            "error deleting MIG device",
        ),
        source=_GPU_PLUGIN + "nvlib.go",
    ),
    Entry(
        "mig-mode-needs-reset",
        "MIG mode change needs a GPU reset",
        "the driver wanted to switch the GPU's MIG mode, which on this GPU needs a GPU reset it "
        "cannot do (GPUs in use, or a cloud VM whose hypervisor forbids the reset)",
        "drain {node} and reboot it (or `nvidia-smi -r -i GPU` where resets are allowed); on cloud "
        "VMs set the MIG mode once at boot and leave DynamicMIG off",
        "mig",
        texts=("cannot be toggled without GPU reset",),
        source=_GPU_PLUGIN + "nvlib.go",
    ),
    Entry(
        "checkpoint-corrupt",
        "DRA kubelet plugin checkpoint corrupt",
        "the DRA kubelet plugin's checkpoint of prepared claims fails its checksum, so the plugin "
        "stops at start (CrashLoopBackOff) and no claim is prepared on the node",
        "on {node}: drain it, move the plugin's checkpoint aside (`/var/lib/kubelet/plugins/"
        "gpu.nvidia.com/checkpoint.json`, or compute-domain.nvidia.com's), restart the kubelet-plugin "
        "pod, then uncordon",
        "plugin",
        # the kubelet checkpoint manager's ErrCorruptCheckpoint as the plugin wraps it (the
        # kubelet's own checkpoints say "checkpoint is corrupted" too, without this prefix)
        texts=(
            "checkpoint failed checksum verification",
            "unable to get checkpoint: checkpoint is corrupted",
        ),
        source=_GPU_PLUGIN + "device_state.go",
    ),
    Entry(
        "gpu-lost",
        "DRA driver saw a GPU lost",
        "NVML reported a GPU lost (or an event it cannot attribute), so the DRA driver tainted all "
        "the node's GPU devices and no claim gets them",
        "drain {node} (`kubectl drain {node} --ignore-daemonsets`), check the GPUs (`nvidia-smi`, "
        "`dmesg | grep -i xid`), reset (`nvidia-smi -r -i GPU`) or reboot the node",
        "hardware",
        texts=("Tainting all devices with",),
        source=_GPU_PLUGIN + "device_health.go",
    ),
    Entry(
        "driver-root-not-ready",
        "DRA kubelet plugin waits for the driver under its driver root",
        "the DRA driver's kubelet-plugin init container finds no working NVIDIA driver (nvidia-smi "
        "and libnvidia-ml.so.1) under the chart's `nvidiaDriverRoot` on {node}, so the plugin does "
        "not start: with /run/nvidia/driver the GPU Operator's driver container has not installed "
        "the driver yet (or is failing, or the Operator's driver is disabled), with / the driver is "
        "not installed on the host (or only its kernel modules are, as with Talos' NVIDIA "
        "extensions), or nvidiaDriverRoot names the wrong place; DRA driver releases before "
        "kubernetes-sigs/dra-driver-nvidia-gpu#693 also missed libraries installed in /usr/lib",
        "read why the driver is missing: under the GPU Operator `kubectl -n gpu-operator logs "
        "ds/nvidia-driver-daemonset -c nvidia-driver-ctr` (the plugin starts once it finishes); for "
        "a host driver check `nvidia-smi` on {node}; set `nvidiaDriverRoot` to where the driver "
        "really is (`/` for a host install, `/run/nvidia/driver` for the Operator's) and `helm "
        "upgrade` the DRA driver",
        "wait",
        texts=(
            # the init container's check, in its older ("Could not find 'nvidia-smi'. Has ...")
            # and newer ("Check failed. Has ...") wording
            "Has the NVIDIA GPU driver been set up?",
            "which typically means that the NVIDIA GPU Operator manages the GPU driver",
            "is not empty but at least one of the binaries wasn't found",
        ),
        aliases=("nvidia-smi: not found", "on the host is empty"),
        source=_DRIVER + "hack/kubelet-plugin-prestart.sh",
        transient=True,
    ),
    Entry(
        "driver-root-mismatch",
        "DRA driver installed with the wrong driver root",
        "the DRA driver looks for a host-installed driver (`nvidiaDriverRoot=/`), but the driver on "
        "{node} is the GPU Operator's, under /run/nvidia/driver, so the kubelet plugin never finds it",
        "reinstall the DRA driver chart with `--set nvidiaDriverRoot=/run/nvidia/driver` (`helm "
        "upgrade -i ... --reuse-values --set nvidiaDriverRoot=/run/nvidia/driver`)",
        "config",
        texts=("you may want to re-install the DRA driver Helm chart with",),
        source=_DRIVER + "hack/kubelet-plugin-prestart.sh",
    ),
    Entry(
        "nvml-library-not-loadable",
        "DRA kubelet plugin cannot load NVML from the driver root",
        "the DRA driver's kubelet plugin found libnvidia-ml.so.1 under the driver root the chart "
        "gives it (`nvidiaDriverRoot`) but NVML does not load from there (ERROR_LIBRARY_NOT_FOUND), "
        "so it enumerates no GPUs and exits: the root is the wrong one for how the driver is "
        "installed (`/` for a driver installed on the host, `/run/nvidia/driver` for the GPU "
        "Operator's driver container, which must be running), or the path it found is no library "
        "(a directory or a dangling symlink named libnvidia-ml.so.1 left on the node, which older "
        "releases picked; kubernetes-sigs/dra-driver-nvidia-gpu#1272), or the driver's user-space "
        "libraries are incomplete",
        "on {node}: `sudo find ROOT -name 'libnvidia-ml.so.1*' -ls` under the chart's root: it must "
        "be a file or a symlink to one (remove a stray directory of that name); set the root to where "
        "the driver is (`helm upgrade RELEASE nvidia/nvidia-dra-driver-gpu -n NAMESPACE "
        "--reuse-values --set nvidiaDriverRoot=/` for a host-installed driver, "
        "`--set nvidiaDriverRoot=/run/nvidia/driver` for the GPU Operator's), upgrade the DRA driver "
        "(newer releases skip non-files), then delete the kubelet-plugin pod on {node}",
        "driver",
        aliases=("ERROR_LIBRARY_NOT_FOUND",),
        source=_GPU_PLUGIN + "nvlib.go",
    ),
    Entry(
        "iommu-disabled",
        "IOMMU off for VFIO passthrough",
        "the claim asks for a GPU in VFIO passthrough, but the node's kernel has no IOMMU (or "
        "IOMMUFD) enabled, so the GPU cannot be bound to vfio-pci",
        "on {node}: enable the IOMMU (`intel_iommu=on iommu=pt` or `amd_iommu=on` on the kernel "
        "command line, VT-d/AMD-Vi in the firmware) and reboot",
        "config",
        aliases=("IOMMU is not enabled",),
        texts=("IOMMUFD is not enabled",),
        source=_GPU_PLUGIN + "vfio-device.go",
    ),
    Entry(
        "gpu-busy-for-vfio",
        "GPU held by a host process",
        "the driver cannot switch the GPU to vfio-pci for passthrough: host processes still hold its "
        "device files",
        "on {node}: find them (`sudo fuser -v /dev/nvidia*`), stop those services (nvidia-persistenced, "
        "DCGM, monitoring agents), " + _RECREATE,
        "config",
        aliases=("timed out waiting for gpu to be free",),
        texts=("has open fds by process(es)",),
        source=_GPU_PLUGIN + "vfio-device.go",
    ),
    Entry(
        "fabric-manager-unavailable",
        "Fabric Manager not reachable for partitions",
        "the DRA driver manages NVLink partitions through Fabric Manager but cannot open it (the "
        "nvidia-fabricmanager service is not running, or its library is missing)",
        "on {node}: `sudo systemctl status nvidia-fabricmanager`; install the Fabric Manager package "
        "of exactly the driver's version and `sudo systemctl enable --now nvidia-fabricmanager`, then "
        "restart the kubelet-plugin pod",
        "fabric",
        texts=(
            "FabricManagerPartitioning enabled but Fabric Manager could not be opened",
            "FabricManagerPartitioning enabled but fabric manager library not found",
            "fabric manager not available",
        ),
        source=_GPU_PLUGIN + "device_state.go",
    ),
    Entry(
        "mps-daemon-not-ready",
        "MPS control daemon not ready",
        "the claim asks for MPS sharing and the driver's MPS control daemon for the GPU is not ready "
        "yet (or fails to start), so preparing waits",
        _PLUGIN_POD + " and the MPS control daemon's Deployment in the driver's namespace; the "
        "driver retries by itself",
        "plugin",
        texts=("MPS control daemon is not yet ready",),
        source=_GPU_PLUGIN + "device_state.go",
        transient=True,
    ),
    Entry(
        "feature-gates-invalid",
        "DRA driver feature gates invalid",
        "the DRA driver's feature gates or flags are inconsistent (a gate that needs another, two "
        "that exclude each other), so the plugin does not start",
        "fix the chart's `featureGates` (and flags) as the line says, then `helm upgrade` the driver",
        "config",
        aliases=("to also be enabled",),
        texts=(
            "feature gate validation failed",
            "is currently mutually exclusive with",
            "invalid CLI flags",
            "MPS is not yet supported when using featureGates.DynamicMIG=true",
        ),
        source=_GPU_PLUGIN + "main.go",
    ),
)

# The passthrough (VFIO) path and the plugin's node-wide prepare lock, from a sweep of the plugin's
# error strings (vfio-device.go, nvlib.go, pkg/flock).
_VFIO_SOURCE = _GPU_PLUGIN + "vfio-device.go"
_VFIO = (
    Entry(
        "prepare-lock-timeout",
        "prepare/unprepare lock held by another operation",
        "the kubelet plugin serialises every prepare and unprepare on {node} with a lock file "
        "(pu.lock under /var/lib/kubelet/plugins/<driver>/) and gave up waiting for it: another "
        "claim's prepare or unprepare holds it and is slow or stuck (waiting for a ComputeDomain's "
        "IMEX daemons, for a GPU to be free for vfio-pci, for a MIG change, for a GPU that hangs); "
        "the plugin retries",
        _PLUGIN_POD + ": the operation logged before the timeouts is the one holding the lock (fix what "
        "it waits for); if the plugin is wedged, delete its pod on {node} (the lock goes with the "
        "process)",
        "plugin",
        # "timeout acquiring lock" alone is any program's: read with the plugin's lock files
        aliases=("timeout acquiring lock",),
        texts=("error acquiring prep/unprep lock", "error acquiring cplock"),
        source=_DRIVER + "pkg/flock/flock.go",
        transient=True,
    ),
    Entry(
        "vfio-bind-failed",
        "GPU not bound to the passthrough driver",
        "the plugin could not bind the GPU to its passthrough driver for a VFIO claim: that driver is "
        "not loaded on {node} under the name the plugin used (no /sys/bus/pci/drivers/<driver>/bind: "
        "vfio-pci not loaded, or a Grace node such as GB200 whose passthrough driver is "
        "nvgrace_gpu_vfio_pci, which driver releases before kubernetes-sigs/dra-driver-nvidia-gpu#1268 "
        "named wrongly)",
        "on {node}: `ls /sys/bus/pci/drivers/ | grep -i vfio` names the loaded passthrough driver; load "
        "it (`sudo modprobe vfio-pci`, on Grace nodes `sudo modprobe nvgrace_gpu_vfio_pci`) and make it "
        "persistent in /etc/modules-load.d/; on GB200 upgrade the DRA driver to a release with the "
        "#1268 fix; " + _RECREATE,
        "config",
        texts=("error binding GPU", "failed to load vfio_pci module"),
        source=_VFIO_SOURCE,
    ),
    Entry(
        "gpu-bound-to-other-driver",
        "GPU bound to an unexpected kernel driver",
        "the claim asks for the GPU in passthrough, but the GPU is bound to {bound} (not nvidia and "
        "not the passthrough driver): another driver (nouveau, a vendor passthrough stack, a leftover "
        "manual bind) owns it, or the plugin's nvidia support is off, so the plugin will not rebind it",
        "on {node}: `lspci -nnk -d 10de:` shows each GPU's 'Kernel driver in use'; unbind it from that "
        "driver (blacklist nouveau: `echo blacklist nouveau | sudo tee "
        "/etc/modprobe.d/blacklist-nouveau.conf` and `sudo update-initramfs -u`, reboot) or bind it "
        "to vfio-pci yourself; " + _RECREATE,
        "config",
        aliases=("driver, expected",),
        source=_VFIO_SOURCE,
    ),
    Entry(
        "gpu-has-vfs",
        "GPU with SR-IOV virtual functions enabled",
        "the GPU has SR-IOV virtual functions enabled (vGPU host setup), so the plugin refuses to "
        "unbind the physical function for passthrough",
        "on {node}: disable the VFs (`echo 0 | sudo tee /sys/bus/pci/devices/<PCI address>/sriov_numvfs`, "
        "or stop the vGPU manager's sriov-manage: `sudo /usr/lib/nvidia/sriov-manage -d ALL`), or "
        "ask for a vGPU instead of the whole GPU; " + _RECREATE,
        "config",
        texts=("VFs, cannot unbind",),
        source=_VFIO_SOURCE,
    ),
    Entry(
        "mig-enabled-no-devices",
        "MIG mode on with no MIG devices",
        "a GPU on {node} has MIG mode enabled but no GPU instances created, and the DynamicMIG "
        "feature is off: the plugin advertises neither the whole GPU nor any MIG device, so claims "
        "for it stay unallocated",
        "on {node}: create the MIG layout (`sudo nvidia-smi mig -cgi <profiles> -C`, or the GPU "
        "Operator's `nvidia.com/mig.config` label), or disable MIG on the GPU (`sudo nvidia-smi -i "
        "<index> -mig 0`, then reset it); then restart the DRA kubelet-plugin pod so it publishes "
        "the devices again",
        "mig",
        texts=("has MIG mode enabled but no configured MIG devices",),
        source=_GPU_PLUGIN + "nvlib.go",
    ),
)

# The CDI specs the DRA kubelet plugin writes per claim (k8s.gpu.nvidia.com/claim=<uid>-gpu-0 in
# /var/run/cdi) and that the container runtime reads back: the errors of the plugin's CDI handler
# and of the CDI library (tags.cncf.io/container-device-interface pkg/cdi) that checks the spec on
# write and loads it on refresh.
_CDI_LIB = (
    "https://github.com/cncf-tags/container-device-interface/blob/05ae4b5bb730a036cb3f79477bd6676eea4a8c83/"
)
_NVCDI_SPEC = (
    "https://github.com/NVIDIA/nvidia-container-toolkit/blob/d34b3046758cb1a5db606b2a39519c731bbf9f56/"
    "pkg/nvcdi/spec/spec.go"
)
_RESTART_PLUGIN = (
    "restart the DRA kubelet-plugin pod on {node} (`kubectl delete pod` of it: it rebuilds its CDI "
    "state from the driver root as it is now)"
)

_CDI = (
    Entry(
        "cdi-empty-device-edits",
        "claim's CDI spec has a device without edits",
        "a generated CDI spec has a device with no container edits (no device nodes, mounts or "
        "hooks), so the CDI library rejects the whole spec: from the DRA kubelet plugin, the "
        "claim is not prepared because the plugin's cached view of the driver (device nodes and "
        "libraries under the driver root) went stale, typically after the container-toolkit or "
        "driver DaemonSet was replaced or restarted under it, or the driver root it was given holds "
        "no driver files; from `nvidia-ctk cdi generate` (nvidia-cdi-refresh), no spec is written "
        "because the GPU's device nodes (/dev/nvidia0, /dev/nvidiactl) were not found",
        _RESTART_PLUGIN + "; if it recurs, check the chart's `nvidiaDriverRoot` against {node} (`/` "
        "for a host driver, `/run/nvidia/driver` for the GPU Operator's) and upgrade the DRA driver "
        "(newer releases refresh that state); " + _RECREATE + "; for nvidia-ctk on {node}: "
        "`ls -l /dev/nvidia*` (`sudo nvidia-modprobe -c 0 -u` or running `nvidia-smi` creates "
        "them), then `sudo nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml`",
        "toolkit",
        texts=("invalid device, empty device edits",),
        source=_CDI_LIB + "pkg/cdi/device.go",
    ),
    Entry(
        "cdi-spec-invalid",
        "CDI spec invalid or unreadable",
        "a CDI spec is malformed: the one the DRA kubelet plugin generated for a claim fails the CDI "
        "library's validation when written, or a spec file in the CDI directories (/etc/cdi, "
        "/var/run/cdi) fails when the runtime (containerd, CRI-O) or the plugin loads it (a "
        "leftover, truncated or hand-edited file, one without devices, of a CDI version the reader "
        "does not know, or with an invalid vendor/class); the devices it defines cannot be injected",
        "the rest of the line names the file and the field; on {node}: `nvidia-ctk cdi list` and "
        "`ls -l /etc/cdi /var/run/cdi`; move aside a broken or stale file (claim specs of pods that "
        "no longer exist, `k8s.gpu.nvidia.com-claim_*.yaml`), regenerate the node's spec (`sudo "
        "nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml`) and "
        + _RESTART_PLUGIN
        + "; "
        + _RECREATE,
        "config",
        texts=(
            "invalid CDI Spec",
            "failed to load CDI Spec",
            "failed to parse CDI Spec",
            "failed to read CDI Spec",
            "failed to unmarshal CDI Spec",
            "invalid spec, no devices",
            "invalid spec, multiple device",
            "the spec version must be at least",
            "failed to create CDI spec",
            "failed to get minimum required CDI spec version",
        ),
        source=_CDI_LIB + "pkg/cdi/spec.go",
    ),
    Entry(
        "cdi-conflicting-device",
        "CDI device defined twice",
        "two CDI spec files of the same priority define the same device name, so the CDI cache "
        "drops that device and containers asking for it fail (unresolvable CDI devices): typically "
        "a spec generated twice (/etc/cdi/nvidia.yaml and /var/run/cdi/nvidia.yaml, by the host's "
        "nvidia-cdi-refresh and the GPU Operator's toolkit) or a stale claim spec left behind",
        "the line names both files; on {node}: keep one of them (`ls -l /etc/cdi /var/run/cdi`, "
        "`nvidia-ctk cdi list`), move the other aside, then " + _RESTART_PLUGIN + "; " + _RECREATE,
        "toolkit",
        texts=("conflicting device",),
        source=_CDI_LIB + "pkg/cdi/cache.go",
    ),
    Entry(
        "cdi-spec-write-failed",
        "claim's CDI spec file not written",
        "the DRA kubelet plugin could not write the claim's CDI spec file into its CDI root: the "
        "directory (`--cdi-root`, /var/run/cdi by default) does not exist in the plugin's "
        "container, is not the host's directory the runtime reads (a hostPath mount missing or "
        "pointing elsewhere), is not writable, or the driver joins the directory and the file name "
        "wrongly (a path like /var/run/cdik8s...yaml has lost its '/'); the claim is not prepared",
        "check the CDI root configured for the DRA driver (its `--cdi-root` flag / CDI_ROOT, the "
        "kubelet-plugin DaemonSet's hostPath mount of /var/run/cdi) against {node} (`ls -ld "
        "/var/run/cdi`) and the container runtime's CDI spec dirs (containerd `cdi_spec_dirs`); fix "
        "the path (a driver that builds it without a separator needs a fixed release or a "
        "trailing '/' on its CDI root), then " + _RESTART_PLUGIN + "; " + _RECREATE,
        "plugin",
        texts=(
            "unable to create CDI spec file for claim",
            "unable to create base CDI spec file",
            "failed to set permissions on spec file",
            "failed to write Spec file",
            "failed to create Spec file",
            "failed to create Spec dir",
            "no Spec directories to write to",
            "path for cdi file generation is not a directory",
            "unable to delete CDI spec file for claim",
        ),
        source=_GPU_PLUGIN + "device_state.go",
    ),
    Entry(
        "cdi-handler-failed",
        "DRA kubelet plugin cannot build CDI specs",
        "the DRA kubelet plugin cannot set up its CDI handler (the library that turns the driver's "
        "device nodes and libraries into CDI edits): it finds no driver under the driver root it was "
        "given (nvidiaDriverRoot), NVML does not load there, or it cannot install nvidia-cdi-hook; "
        "the plugin does not start, or no claim is prepared",
        "check the chart's `nvidiaDriverRoot` against {node} (`/` for a host driver, "
        "`/run/nvidia/driver` for the GPU Operator's; `nvidia-smi` must work there) and the "
        "plugin's log for the error after this one, then " + _RESTART_PLUGIN,
        "toolkit",
        aliases=("unable to create CDI handler", "unable to create vfio CDI handler"),
        texts=(
            "unable to create CDI library for claims",
            "unable to create CDI library for devices",
            "unable to create a new CDI cache",
            "failed to get common CDI spec edits",
            "failed to transform driver root in CDI spec",
            "error setting up nvidia-cdi-hook",
            "error copying nvidia-cdi-hook",
            "error reading nvidia-cdi-hook",
        ),
        source=_GPU_PLUGIN + "cdi.go",
    ),
)

_COMPUTE_DOMAIN = (
    Entry(
        "computedomain-not-ready",
        "ComputeDomain not ready",
        "the IMEX channel claim waits for its ComputeDomain: the IMEX daemons of the domain's nodes "
        "are not all up and connected yet (daemon pods pending or failing, nodes outside one NVLink "
        "domain), so the workload pod stays in ContainerCreating",
        "`kubectl get computedomains -A -o yaml` (status.nodes) and the IMEX daemon pods' logs "
        "(`kubectl get pods -A | grep computedomain`); numNodes must match the workers started; the "
        "driver retries by itself",
        "wait",
        texts=(
            "current node not ready in ComputeDomain",
            "error asserting ComputeDomain Ready",
            "ComputeDomain not Ready",
            "IMEX daemon not ready",
            "error checking IMEX daemon status",
            "IMEX daemon check failed",
        ),
        source=_CD_PLUGIN + "computedomain.go",
        transient=True,
    ),
    Entry(
        "imex-daemon-failed",
        "IMEX daemon does not run",
        "the ComputeDomain daemon could not start (or restart) nvidia-imex: the binary is not in "
        "the driver root the chart points at (nvidiaDriverRoot), or the driver has no IMEX support",
        "check the daemon pod's log and that nvidia-imex exists under the driver root on {node} "
        "(`ls /usr/bin/nvidia-imex`, or under /run/nvidia/driver for the GPU Operator's driver); set "
        "the chart's `nvidiaDriverRoot` accordingly and recreate the ComputeDomain",
        "driver",
        texts=(
            "error running nvidia-imex",
            "error (re)starting IMEX daemon",
            "failed to ensure IMEX daemon is started",
        ),
        source=_DRIVER + "cmd/compute-domain-daemon/main.go",
    ),
    Entry(
        "imex-channels-unavailable",
        "IMEX channel devices unavailable",
        "the driver cannot create or count the IMEX channel devices (/dev/nvidia-caps-imex-channels): "
        "the GPU driver on the node does not expose them (no IMEX support, or the nvidia-caps "
        "devices are not created)",
        "on {node}: `ls /dev/nvidia-caps-imex-channels` and `grep nvidia-caps-imex-channels "
        "/proc/devices`; install a driver with IMEX support (Multi-Node NVLink systems), then "
        "restart the kubelet-plugin pod",
        "driver",
        texts=(
            "mknod of IMEX channel failed",
            "error getting IMEX channel count",
            "error getting max IMEX channel count",
            "error getting IMEX channel major",
        ),
        source=_CD_PLUGIN + "nvlib.go",
    ),
    Entry(
        "mixed-cliques",
        "GPUs of one node in several NVLink cliques",
        "the node's GPUs report more than one NVLink clique ID (part of the fabric not registered, "
        "or a mis-cabled or misconfigured NVLink domain), so the ComputeDomain plugin cannot tell "
        "which IMEX domain the node belongs to",
        "on {node}: `nvidia-smi -q | grep -i -A4 fabric` (ClusterUUID, CliqueId, State Completed on "
        "every GPU); fix the NVLink fabric (Fabric Manager or NMX), reboot the node, then restart "
        "the kubelet-plugin pod",
        "nvlink",
        texts=("unexpected number of unique CliqueIDs found on devices",),
        source=_CD_PLUGIN + "nvlib.go",
    ),
    Entry(
        "node-in-other-computedomain",
        "node already in another ComputeDomain",
        "the node already carries the label of another ComputeDomain: a node serves one ComputeDomain "
        "at a time, so a workload of a second one cannot start there",
        "`kubectl get node {node} --show-labels | tr , '\\n' | grep computeDomain` and "
        "`kubectl get computedomains -A`; wait for (or delete) the other ComputeDomain's workload, "
        "or schedule this one on other nodes",
        "config",
        texts=("label already exists for a different ComputeDomain",),
        source=_CD_PLUGIN + "computedomain.go",
        transient=True,
    ),
    Entry(
        "computedomain-not-found",
        "ComputeDomain not found",
        "the channel claim names a ComputeDomain that does not exist (deleted, or in another "
        "namespace than the claim)",
        "`kubectl get computedomains -A`; create the ComputeDomain in the workload's namespace and "
        "use its resourceClaimTemplate, " + _RECREATE,
        "config",
        texts=(
            "ComputeDomain not found",
            "compute domain not found",
            "the ResourceClaim's namespace is different than the ComputeDomain's namespace",
        ),
        source=_CD_PLUGIN + "computedomain.go",
    ),
    Entry(
        "imex-domain-full",
        "IMEX domain has no free node slot",
        "the ComputeDomain spans more nodes than one IMEX domain takes (maxNodesPerIMEXDomain, 18 in "
        "older releases), so further IMEX daemons stay pending",
        "split the job over smaller ComputeDomains, or upgrade the DRA driver and raise "
        "`maxNodesPerIMEXDomain`",
        "config",
        texts=(
            "no available indices within maxNodesPerIMEXDomain",
            "cannot add more nodes, already at maximum",
        ),
        source=_DRIVER + "cmd/compute-domain-daemon/cdclique.go",
    ),
    Entry(
        "host-imex-service",
        "host nvidia-imex daemon in the way",
        "a host-managed nvidia-imex daemon is expected but not ready or not installed, or "
        "ComputeDomain daemons were requested while imex.mode=hostManaged",
        "on {node}: `systemctl status nvidia-imex` (install nvidia-imex of the driver's version); "
        "or set the chart's imex.mode so the DRA driver runs the IMEX daemons itself (then "
        "`sudo systemctl disable --now nvidia-imex` on the host)",
        "config",
        texts=(
            "host nvidia-imex daemon not ready",
            "host nvidia-imex daemon readiness check failed",
            "is nvidia-imex installed on this node?",
            "ComputeDomain daemon claims are not supported when imex.mode=hostManaged",
        ),
        source=_CD_PLUGIN + "nvlib.go",
    ),
    Entry(
        "imex-driver-too-old",
        "driver too old for IMEX DNS names",
        "the IMEXDaemonsWithDNSNames feature needs a newer GPU driver than the node runs",
        "upgrade the GPU driver on {node} to the version the line names, or set the chart's "
        "featureGates.IMEXDaemonsWithDNSNames=false",
        "driver",
        texts=(
            "IMEXDaemonsWithDNSNames feature requires GPU driver version",
            "minimum version not satisfied for IMEXDaemonsWithDNSNames feature",
        ),
        source=_CD_PLUGIN + "device_state.go",
    ),
    Entry(
        "imex-session-in-use",
        "IMEX session held by the host's nvidia-imex",
        "the ComputeDomain's IMEX daemon cannot take the GPU driver's IMEX session because another "
        "nvidia-imex holds it: the host's nvidia-imex.service, which the driver packages enable, "
        "runs beside the DRA driver's daemons (the driver allows one owner), so the daemon never "
        "becomes ready and the workload pods wait in ContainerCreating",
        "on {node}: `sudo systemctl disable --now nvidia-imex.service && sudo systemctl mask "
        "nvidia-imex.service` (bake it into the node image), then delete the ComputeDomain's daemon "
        "pod on {node} so it starts again; or run the DRA driver with the host-managed IMEX mode",
        # below the ComputeDomain's not-ready wait (config), which it explains
        "driver",
        texts=("Failed to allocate Imex session",),
        source="https://github.com/NVIDIA/k8s-dra-driver-gpu/discussions/249",
    ),
    Entry(
        "imex-memory-reference-failed",
        "IMEX could not export or import GPU memory",
        "the IMEX daemons of the domain could not export or import a GPU memory reference between "
        "nodes (a workload started before the daemon ensemble was complete, or references left "
        "from workload pods that were replaced one at a time), so multi-node NVLink memory sharing "
        "fails (CUDA's cuMemImportFromShareableHandle: invalid resource handle in the workload)",
        "delete and recreate all the workload pods of the ComputeDomain together (the ComputeDomain "
        "itself can stay); keep them from starting before its daemons are ready (DRA driver 25.8 "
        "or later restores that barrier); on {node} `nvidia-imex-ctl -N` in the daemon pod shows "
        "every node Connected",
        "nvlink",
        texts=(
            "Failed to get new memory reference",
            "Failed to allocate memory reference",
            "Failed to get export ref for UUID",
            "Received import response from node id",
        ),
        source="https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/issues/948",
    ),
    Entry(
        "host-imex-not-ready",
        "host nvidia-imex daemon not ready",
        "the DRA driver runs with a host-managed IMEX daemon (imex.mode=hostManaged) and the "
        "nvidia-imex service of {node} is not ready: it is not installed or not running, is not "
        "configured with the Unix socket the driver queries (IMEX_CMD_UNIX_DOMAIN_PATH), or has "
        "not connected to the other nodes of its nodes_config.cfg, so no IMEX channel is handed out",
        "on {node}: `sudo systemctl status nvidia-imex` and `sudo nvidia-imex-ctl -N` (every node "
        "Connected); install the nvidia-imex package of the driver's version, set "
        "IMEX_CMD_UNIX_DOMAIN_PATH in /etc/nvidia-imex/config.cfg as the driver's prerequisites "
        "say, list the domain's node addresses in /etc/nvidia-imex/nodes_config.cfg, then "
        "`sudo systemctl restart nvidia-imex` and delete the workload pod so it is prepared anew",
        "driver",
        texts=(
            "host nvidia-imex daemon not ready",
            "host nvidia-imex daemon readiness check failed",
            "(is nvidia-imex installed on this node?)",
        ),
        source=_CD_PLUGIN + "nvlib.go",
        transient=True,
    ),
    Entry(
        "host-imex-config-invalid",
        "claim or setting not valid with a host-managed IMEX daemon",
        "the DRA driver's IMEX settings do not fit together: imex.mode=hostManaged needs the "
        "HostManagedIMEXDaemon feature gate, and in that mode a ComputeDomain's daemon claims are "
        "not used and a channel claim must name a channel the node has (/dev/nvidia-caps-imex-"
        "channels)",
        "`helm get values` of the DRA driver: set `featureGates.HostManagedIMEXDaemon=true` with "
        "`imex.mode=hostManaged`, or go back to the driver-managed mode (ComputeDomains with their "
        "own daemons); on {node} `ls /dev/nvidia-caps-imex-channels` lists the channels a claim "
        "may ask for",
        "config",
        texts=(
            "requires the HostManagedIMEXDaemon feature gate to be enabled",
            "ComputeDomain daemon claims are not supported when imex.mode=hostManaged",
            "is not an allocatable IMEX channel device",
            "IMEX channels)",
        ),
        source=_CD_PLUGIN + "device_state.go",
    ),
    Entry(
        "imex-channel-taken",
        "IMEX channel already given to another claim",
        "the ComputeDomain plugin's checkpoint on {node} records the IMEX channel as prepared for "
        "another claim: that claim's pod still runs, or its unprepare did not finish (a pod deleted "
        "while the plugin was down) and the checkpoint kept it",
        "`kubectl get resourceclaims -A -o wide | grep {node}` for the claim named; delete its pod "
        "if it is stale so the kubelet unprepares it, or restart the kubelet-plugin pod on {node} "
        "after the pod is gone",
        "plugin",
        texts=("(according to checkpoint)",),
        source=_CD_PLUGIN + "device_state.go",
        transient=True,
    ),
    Entry(
        "nvlink-fabric-not-attached",
        "GPU not attached to the NVLink fabric",
        "the GPU's NVLink fabric registration is incomplete or failed (Fabric Manager / NVLink "
        "switch trays not ready), so the ComputeDomain plugin refuses to start on the node "
        "(CrashOnNVLinkFabricErrors, on by default); a transitional state (`state=2`, in progress) "
        "is no fault on a node that is not multi-node NVLink: the plugin started while Fabric "
        "Manager was still registering the GPUs after a boot, or Fabric Manager runs in shared "
        "NVSwitch mode (FABRIC_MODE=1) where GPUs outside an activated partition stay in progress "
        "(kubernetes-sigs/dra-driver-nvidia-gpu#1264)",
        "on {node}: `nvidia-smi -q | grep -A3 -i fabric` (State Completed, Status Success); check "
        "the NVLink fabric (Fabric Manager or NMX) and restart the kubelet-plugin pod; on an HGX "
        "node in shared NVSwitch mode enable the chart's `featureGates.FabricManagerPartitioning` "
        "(or upgrade the DRA driver), or set `featureGates.CrashOnNVLinkFabricErrors=false`",
        "fabric",
        aliases=("NVLink fabric not attached",),
        texts=("NVLink fabric registration error",),
        source=_CD_PLUGIN + "nvlib.go",
    ),
    Entry(
        "cluster-uuid-empty",
        "ComputeDomain plugin refuses a node without an NVLink cluster UUID",
        "the ComputeDomain kubelet plugin refused to start because {node}'s GPUs report an NVLink "
        "fabric with an empty cluster UUID: the node has NVLink but is not part of a multi-node "
        "NVLink (MNNVL) domain (an HGX/DGX with NVSwitches, not a GB200 NVL72 rack), and a DRA driver "
        "built between the CrashOnNVLinkFabricErrors change and its fix (kubernetes-sigs/"
        "dra-driver-nvidia-gpu#864, fixed in v0.4.0) treats that as a fabric error instead of "
        "falling back to running without a clique; a real MNNVL node shows an empty cluster UUID "
        "when its fabric registration has not completed",
        "on {node}: `nvidia-smi -q | grep -A6 -i fabric` (ClusterUUID all zeros with State Completed: "
        "not an MNNVL node); upgrade the DRA driver to v0.4.0 or later (`helm upgrade` the chart), "
        "or meanwhile set the chart's `featureGates.CrashOnNVLinkFabricErrors=false`, or keep the "
        "ComputeDomain plugin off nodes that are not MNNVL (`resources.computeDomains.enabled=false`, "
        "or the kubelet-plugin DaemonSet's nodeSelector); on an MNNVL node check its fabric (Fabric "
        "Manager or NMX) until ClusterUUID is set; then delete the kubelet-plugin pod on {node}",
        "plugin",
        texts=("empty cluster UUID, refusing to start",),
        source="https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/blob/55b338e14f125f069cc26c311f80e7298d295b44/"
        "cmd/compute-domain-kubelet-plugin/nvlib.go",
    ),
    Entry(
        "fabric-info-inconsistent",
        "GPUs of one node in different NVLink cliques",
        "the ComputeDomain kubelet plugin read the NVLink fabric information of each GPU on {node} "
        "and they disagree (more than one cluster UUID or clique ID), or NVML could not read it for "
        "one GPU: the node's GPUs are not all registered in one NVLink domain (a GPU or NVLink tray "
        "missing from the partition, fabric registration incomplete on some GPUs), so it does not "
        "start",
        "on {node}: `nvidia-smi -q | grep -A6 -i fabric` for every GPU (State Completed, Status "
        "Success, one ClusterUUID and CliqueId); fix the NVLink fabric (Fabric Manager or NMX "
        "partition), then delete the kubelet-plugin pod on {node}",
        "fabric",
        texts=(
            "unexpected number of unique ClusterUUIDs found on devices",
            "unexpected number of unique CliqueIDs found on devices",
            "error getting fabric information from one or more devices",
        ),
        source=_CD_PLUGIN + "nvlib.go",
    ),
)

CATALOGUE = Catalogue(
    id="dra",
    title="DRA: kubelet DRA manager, scheduler DynamicResources and the NVIDIA DRA driver",
    source="https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/tree/95932046683719c43b6a0dd9613c2e5aad5d6703",
    version="Kubernetes 1.34 (resource.k8s.io/v1, older kubelets' texts kept); NVIDIA DRA Driver for "
    "GPUs main of August 2026 (0.5.0-dev; texts of v25.8-v25.12 kept)",
    entries=(*_KUBELET, *_SCHEDULING, *_NVIDIA_DRIVER, *_VFIO, *_CDI, *_COMPUTE_DOMAIN),
    applies_to=("plugin-log", "events", "runtime", "node", "operand"),
    readers=(
        # "DRA driver gpu.nvidia.com is not registered"
        r"DRA driver (?P<driver>[\w.-]{1,100}) (?P<code>is not registered)",
        # The gRPC status the kubelet got from the plugin: "NodePrepareResources: rpc error: code =
        # DeadlineExceeded desc = context deadline exceeded" (grpc-go's status codes).
        r"Node(?:Un)?PrepareResources[^\n]{0,300}?rpc error: code = (?P<code>DeadlineExceeded|Unavailable)\b",
        # the kubelet plugin's init container: "2025-01-01T00:00:00Z  /driver-root
        # (/run/nvidia/driver on host): nvidia-smi: not found, libnvidia-ml.so.1: not found, ..."
        # and its hint "Directory /run/nvidia/driver on the host is empty"
        r"(?-i:/driver-root) \([^)\n]{1,200} on host\): (?P<code>nvidia-smi: not found)",
        r"(?-i:Hint: Directory) \S{1,200} (?P<code>on the host is empty)",
        # the scheduler's "request gpu: device class gpu.example.com does not exist"
        r"(?-i:request) [\w/.-]{1,100}: device class (?P<class>[\w.-]{1,253}) (?P<code>does not exist)",
        # the scheduler's `resourceclaim "gpu-claim" is being deleted`
        r"(?-i:resourceclaim) \"[\w.-]{1,253}\" (?P<code>is being deleted)",
        # "failed to fetch ResourceClaim X referenced by pod Y: the server could not find ..."
        r"fetch ResourceClaim [^\n:]{1,300}: (?P<code>the server could not find the requested resource)",
        # readers, not texts: these messages' longest words are in every healthy log
        r"(?P<code>IOMMU is not enabled) in the kernel",
        r"(?P<code>timed out waiting for gpu to be free)",
        # pkg/featuregates: "feature gate ComputeDomainCliques requires IMEXDaemonsWithDNSNames to
        # also be enabled"
        r"(?-i:feature gate) \w{1,80} requires \w{1,80} (?P<code>to also be enabled)",
        # pkg/flock: "timeout acquiring lock (/var/lib/kubelet/plugins/gpu.nvidia.com/pu.lock)"
        r"(?P<code>timeout acquiring lock) \([^)\n]{0,200}/(?:pu|cp)\.lock\)",
        # the kubelet's and the scheduler's "ResourceClaim default/x was not created for pod
        # default/y (pod is not owner)" (a PVC's says "PVC ...")
        r"(?-i:ResourceClaim) \S{1,300} was not created for pod \S{1,300} \((?P<code>pod is not owner)\)",
        # `GPU "0000:61:00.0" is bound to "nouveau" driver, expected "vfio-pci" or "nvidia"`
        r"(?-i:GPU) \"[\w:.]{1,40}\" is bound to \"(?P<bound>[\w.-]{0,60})\" (?P<code>driver, expected)",
        # the DRA driver capitalises CDI; the device plugin's lowercase "unable to create cdi
        # handler" is kubelet.cdi-spec-failed's
        r"(?P<code>(?-i:unable to create (?:vfio )?CDI handler))",
        # "NVLink fabric not attached (device 0/GPU-...): state=1, refusing to start" (its
        # "empty cluster UUID" variant is cluster-uuid-empty's)
        r"(?P<code>NVLink fabric not attached) \(device [^)\n]{0,120}\): state=",
        # "error enumerating all possible devices: error enumerating GPUs and MIG devices: error
        # initializing NVML: ERROR_LIBRARY_NOT_FOUND": the library was found but does not load
        r"error enumerating (?:all possible devices|GPUs and MIG devices)[^\n]{0,300}?"
        r"error initializing NVML: (?P<code>ERROR_LIBRARY_NOT_FOUND)",
    ),
)
