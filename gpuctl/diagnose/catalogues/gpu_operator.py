"""GPU Operator operands and MIG manager: what the operator-validator, the driver container, the
MIG manager (mig-parted) and nvidia-smi's MIG commands print when an operand cannot bring the
node up.

Each entry is a fixed message of one of those components, copied from its source: the
operator-validator (`cmd/nvidia-validator/main.go`) and the operands' init containers (their
`echo` lines in `assets/`), the ClusterPolicy controller, the driver container's `nvidia-driver`
scripts (NVIDIA/gpu-driver-container) and the nvidia-installer they run, mig-parted's `apply` and
the MIG manager's reconfigure steps, and nvidia-smi's MIG and reset commands. The rows of
table_operator.py that already explain a line (`operator.driver-preinstalled`,
`operator.kernel-headers`, `mig.reset-unsupported`, `mig.config-invalid`,
`mig.config-not-present`, `validator.driver-not-found`) are not repeated here.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_OPERATOR = "https://github.com/NVIDIA/gpu-operator/blob/v26.7.0/"
_VALIDATOR = _OPERATOR + "cmd/nvidia-validator/main.go"
_DRIVER_CTR = "https://github.com/NVIDIA/gpu-driver-container/blob/main/ubuntu22.04/nvidia-driver"
_DRIVER_CTR_RHEL = "https://github.com/NVIDIA/gpu-driver-container/blob/main/rhel9/nvidia-driver"
_INSTALLER = "https://github.com/NVIDIA/nvidia-installer/blob/main/kernel.c"
_MIG_PARTED = "https://github.com/NVIDIA/mig-parted/blob/v0.15.0/"
_MIG_RECONFIGURE = _MIG_PARTED + "pkg/mig/reconfigure/reconfigure.go"
_MIG_APPLY = _MIG_PARTED + "cmd/nvidia-mig-parted/apply/apply.go"
_NVIDIA_SMI = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/"

_NS = "kubectl -n gpu-operator"  # the Operator's default namespace; `-n` is the one to change
_DRIVER_LOG = f"`{_NS} logs ds/nvidia-driver-daemonset -c nvidia-driver-ctr`"
_HOST_DRIVER = (
    "or install the driver on the host (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`, "
    "then `gpuctl bootstrap --phase cluster --stack operator --no-operator-driver`)"
)
_RELABEL = "`kubectl label node {node} nvidia.com/mig.config=CONFIG --overwrite`"
_MIG_LOG = f"`{_NS} logs ds/nvidia-mig-manager`"
# What holds a GPU that must be reset to change its MIG mode: the host's GPU daemons, the display
# module, and the GPU pods of the node.
_FREE_GPU = (
    "on {node}: list what holds the GPUs (`sudo nvidia-smi --query-compute-apps=pid,process_name "
    "--format=csv`, `sudo lsof /dev/nvidia*`), stop it (`sudo systemctl stop nvidia-persistenced "
    "nvidia-dcgm dcgm nvidia-fabricmanager`, `sudo rmmod nvidia_drm` when no display uses it, drain "
    "the GPU pods: `kubectl drain {node} --ignore-daemonsets`), then reset (`sudo nvidia-smi -r`) "
    "or reboot {node}"
)

_VALIDATION = (
    Entry(
        "waiting-for-driver-validation",
        "operand waiting for the driver validation",
        "an operand's init container on {node} waits for the operator-validator to pass its "
        "driver-validation (the file /run/nvidia/validations/driver-ready): no working NVIDIA "
        "driver yet, the Operator's driver container is still building or failing, or no driver "
        "is installed on the host",
        f"read why the driver is not ready: {_DRIVER_LOG} and `{_NS} logs ds/nvidia-operator-validator "
        "-c driver-validation`; fix what they say, " + _HOST_DRIVER,
        "driver",
        aliases=("waiting for the driver validations to be ready",),
        # driver-validation's retry while the driver container has not finished.
        texts=("validations/.driver-ctr-ready': No such file or directory",),
        source=_OPERATOR + "assets/state-device-plugin/0500_daemonset.yaml",
        transient=True,
    ),
    Entry(
        "waiting-for-toolkit-validation",
        "operand waiting for the container toolkit",
        "an operand's init container on {node} waits for the operator-validator's "
        "toolkit-validation (the file /run/nvidia/validations/toolkit-ready): the NVIDIA container "
        "toolkit is not installed or the container runtime not configured for it yet",
        f"`{_NS} logs ds/nvidia-container-toolkit-daemonset` and `{_NS} logs ds/nvidia-operator-validator "
        "-c toolkit-validation` say why; when the runtime is configured on the host, check "
        "containerd's nvidia runtime (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`)",
        "toolkit",
        aliases=(
            "waiting for nvidia container stack to be setup",
            "waiting for nvidia container toolkit to be setup",
        ),
        source=_OPERATOR + "assets/state-device-plugin/0500_daemonset.yaml",
        transient=True,
    ),
    Entry(
        "driver-validation-failed",
        "driver validation failed",
        "the operator-validator's driver-validation failed on {node}: it found no working driver "
        "(nvidia-smi failed on the host or in the driver container's root), so every GPU operand "
        "stays in Init",
        f"read the rest of the message and {_DRIVER_LOG}; on {{node}} `nvidia-smi` tells a host driver "
        "apart; fix the driver, " + _HOST_DRIVER,
        "driver",
        aliases=("driver is not ready", "error validating driver installation"),
        source=_VALIDATOR,
    ),
    Entry(
        "dev-char-symlinks",
        "/dev/char symlinks not created",
        "the operator-validator could not create the /dev/char symlinks to the NVIDIA device nodes "
        "(needed by runtimes using systemd cgroups): the nvidia modules or device nodes are "
        "missing on {node} (driver not loaded), or /dev/char is not writable",
        "on {node}: `lsmod | grep nvidia` and `ls -l /dev/nvidia*`; load the driver (or fix the "
        "driver container, " + _DRIVER_LOG + "); only if the driver works and the runtime does not "
        "use systemd cgroups, set DISABLE_DEV_CHAR_SYMLINK_CREATION=true in the ClusterPolicy's "
        "`validator.driver.env`",
        "driver",
        texts=(
            "Failed to create symlinks under /dev/char that point to all possible NVIDIA character devices",
            "error creating symlink creator",
        ),
        source=_VALIDATOR,
    ),
    Entry(
        "toolkit-validation-failed",
        "toolkit validation failed",
        "the operator-validator's toolkit-validation failed on {node}: nvidia-smi did not run in a "
        "container started with the NVIDIA runtime, so the container toolkit or the runtime's "
        "nvidia handler is missing or broken: on containerd the toolkit's drop-in is not read "
        "(no `imports` in config.toml, or a config the distribution regenerates); on CRI-O the "
        "operator's OCI hook in /run/containers/oci/hooks.d is not in CRI-O's `hooks_dir`",
        f"`{_NS} logs ds/nvidia-container-toolkit-daemonset`; check the runtime config on {{node}} "
        "(containerd: `sudo containerd config dump | grep -B1 -A4 'runtimes.nvidia'`, RuntimeClass "
        "nvidia; CRI-O: `crio status config | grep -A3 hooks_dir` must list "
        "/run/containers/oci/hooks.d, add it in a drop-in under /etc/crio/crio.conf.d/) and restart "
        "the runtime, or reinstall it with `gpuctl bootstrap --phase host -i INVENTORY --limit {node}`",
        "toolkit",
        texts=("error validating toolkit installation", "toolkit is not ready"),
        source=_VALIDATOR,
    ),
    Entry(
        "cuda-validation-failed",
        "CUDA validation failed",
        "the operator-validator's cuda-validation failed on {node}: its vectorAdd pod "
        "(nvidia-cuda-validator) could not be created or did not succeed",
        f"`{_NS} logs -l app=nvidia-cuda-validator` gives the CUDA error (gpuctl explain reads it) "
        f"and `{_NS} describe pod -l app=nvidia-cuda-validator` why the pod did not run",
        "application",
        texts=("error validating cuda workload", "failed to create cuda validation pod"),
        source=_VALIDATOR,
    ),
    Entry(
        "plugin-validation-failed",
        "device plugin validation failed",
        "the operator-validator's plugin-validation failed on {node}: the node advertises no "
        "allocatable nvidia.com/gpu, or its validation pod could not be created or run",
        "`kubectl describe node {node} | grep nvidia.com/` and "
        f"`{_NS} logs ds/nvidia-device-plugin-daemonset`; "
        "on a node where the device plugin is off on purpose (DRA, "
        "nvidia.com/gpu.deploy.device-plugin=false) set WITH_WORKLOAD=false in the ClusterPolicy's "
        "`validator.plugin.env`",
        "plugin",
        texts=(
            "error validating plugin installation",
            "failed to create plugin validation pod",
            "unable to find any allocatable GPU resource",
        ),
        source=_VALIDATOR,
    ),
    Entry(
        "gpu-not-advertised",
        "GPU resources not discovered",
        "the kubelet of {node} advertises no nvidia.com/gpu: the device plugin is not running "
        "there (disabled, `nvidia.com/gpu.deploy.device-plugin=false`, still in Init) or found no "
        "GPU, so plugin-validation waits and then fails",
        f"`{_NS} get pods -o wide --field-selector spec.nodeName={{node}}` and "
        f"`{_NS} logs ds/nvidia-device-plugin-daemonset`; when the device plugin is off on purpose "
        "set WITH_WORKLOAD=false in the ClusterPolicy's `validator.plugin.env`",
        "plugin",
        texts=(
            "GPU resources are not discovered by the node",
            "GPU resources are not yet discovered by the node",
        ),
        source=_VALIDATOR,
    ),
    Entry(
        "validation-pod-timeout",
        "validation pod never ran",
        "the operator-validator gave up waiting for its workload pod {pod}: the pod stayed "
        "Pending or failed (no allocatable GPU left, an admission error, or a CUDA failure)",
        "`kubectl -n {namespace} describe pod {pod}` and `kubectl -n {namespace} logs {pod}`; free a GPU "
        "on {node} or set WITH_WORKLOAD=false in the ClusterPolicy's `validator.plugin.env` / "
        "`validator.cuda.env`",
        "plugin",
        aliases=("gave up waiting for pod",),
        source=_VALIDATOR,
    ),
    Entry(
        "vfio-pci-not-bound",
        "GPU not bound to vfio-pci",
        "a GPU of {node} (sandbox or vm-passthrough workload) is still bound to another driver "
        "than vfio-pci, so the vfio-pci validation fails",
        f"`{_NS} logs ds/nvidia-vfio-manager`; on {{node}} `lspci -nnk -d 10de:` shows the bound "
        "driver; unload the nvidia driver there or set `nvidia.com/gpu.workload.config=container` "
        "on nodes that run containers",
        "config",
        texts=("device not bound to 'vfio-pci'",),
        source=_VALIDATOR,
    ),
    Entry(
        "vgpu-devices-missing",
        "vGPU devices missing",
        "the vGPU manager or its devices are not ready on {node}: no vGPU (mdev/SR-IOV) devices "
        "exist, or no vGPU guest driver matches the host's vGPU manager branch",
        f"`{_NS} logs ds/nvidia-vgpu-manager-daemonset` and /var/log/vgpu-util.log on {{node}}; "
        "install a vGPU manager and guest driver of the same branch",
        "driver",
        texts=(
            "no vGPU devices found",
            "vGPU Manager parent devices not ready",
            "cannot find vgpu devices on host",
            "cannot find match for compatible vgpu driver",
        ),
        source=_VALIDATOR,
    ),
    Entry(
        "gpudirect-rdma",
        "GPUDirect RDMA module not ready",
        "nvidia-peermem (GPUDirect RDMA) did not load on {node}: the MOFED/OFED drivers "
        "(ib_core) are missing, not ready or of a version the module was not built against",
        f"`{_NS} logs ds/nvidia-driver-daemonset -c nvidia-peermem-ctr` and `lsmod | grep ib_core` on "
        "{node}; install MOFED (or set `driver.rdma.useHostMofed=true` for a host MOFED), or turn "
        "`driver.rdma.enabled` off",
        "driver",
        texts=(
            "failed to load nvidia-peermem module",
            "error validating nvidia-peermem driver installation",
            "nvidia-peermem driver is not ready",
            "error validating MOFED driver installation",
        ),
        source=_VALIDATOR,
    ),
    Entry(
        "gds-gdrcopy",
        "GPUDirect Storage or GDRCopy driver not ready",
        "the nvidia-fs (GPUDirect Storage) or gdrcopy module is not loaded on {node}, so its "
        "validation fails",
        f"`{_NS} logs ds/nvidia-driver-daemonset -c nvidia-fs-ctr` (or `-c nvidia-gdrcopy-ctr`); "
        "turn `gds.enabled` / `gdrcopy.enabled` off where the node does not need them",
        "driver",
        texts=(
            "error validating nvidia-fs driver installation",
            "error validating gdrcopy driver installation",
            "gdrcopy driver is not ready",
        ),
        source=_VALIDATOR,
    ),
    Entry(
        "nfd-labels-missing",
        "no node labelled as a GPU node",
        "the GPU Operator found no node carrying Node Feature Discovery's NVIDIA PCI label "
        "(feature.node.kubernetes.io/pci-10de.present=true), so it deploys no operand anywhere: NFD "
        "is not deployed (nfd.enabled=false and no NFD of its own in the cluster), its worker does "
        "not run on the GPU nodes (a taint it does not tolerate), or the nodes have no NVIDIA GPU "
        "on their PCI bus",
        "`kubectl get nodes -L feature.node.kubernetes.io/pci-10de.present` and `kubectl get pods -A "
        "-o wide | grep node-feature-discovery-worker`; deploy NFD with the operator (Helm "
        "`nfd.enabled=true`) or let its worker tolerate the GPU nodes' taints; `gpuctl preflight -i "
        "INVENTORY` checks the GPUs are on the bus",
        "config",
        texts=(
            "NFD labels missing in the cluster",
            "No NFD label found, polling for new nodes",
            "No GPU node can be found in the cluster",
            # the wording of releases before v23
            "No GPU node in the cluster, do not create DaemonSets",
            "Could not get any nodes to match nvidia.com/gpu.present label",
            "did you run the node feature discovery?",
            # the ClusterPolicy's NFDLabelsMissing condition message
            "No NFD labels found",
        ),
        source=_OPERATOR + "controllers/clusterpolicy_controller.go",
    ),
    Entry(
        "clusterpolicy-not-ready",
        "ClusterPolicy not ready",
        "the GPU Operator's ClusterPolicy is notReady: one of its operands (the states it names, "
        "e.g. state-driver) is not Ready on some node; the operand's own log says why",
        f"`{_NS} get pods -o wide` names the pod that is not Running; read its log "
        f"(`{_NS} logs POD --all-containers`) and `kubectl get clusterpolicy -o yaml` (status)",
        "config",
        aliases=("ClusterPolicy is not ready", "ClusterPolicy isn't ready", "notReady"),
        # the OperandNotReady and DriverNotReady condition messages
        texts=("Waiting for operand pods to be ready", "Waiting for driver pod to be ready"),
        source=_OPERATOR + "controllers/clusterpolicy_controller.go",
    ),
    # The ClusterPolicy's and NVIDIADriver's status conditions (reason ReconcileFailed,
    # OperandNotReady, DriverNotReady, ConflictingNodeSelector: internal/conditions/consts.go), by
    # the messages the controllers put in them.
    Entry(
        "nvidiadriver-upgrade-incomplete",
        "NVIDIADriver upgrade not completed",
        "the ClusterPolicy stays notReady because a driver upgrade of an NVIDIADriver is pending, "
        "in progress or failed on some node (its nvidia.com/gpu-driver-upgrade-state label): a "
        "node that could not be drained, or a new driver pod that does not become ready",
        "`kubectl get nodes -L nvidia.com/gpu-driver-upgrade-state` names the nodes; for one in "
        f"upgrade-failed read its driver pod's log ({_DRIVER_LOG}), fix that, then `kubectl label "
        "node NODE nvidia.com/gpu-driver-upgrade-state=upgrade-required --overwrite` to retry; a "
        "node stuck in drain needs its GPU pods moved (`kubectl drain NODE --ignore-daemonsets`)",
        "driver",
        texts=(
            "NVIDIADriver upgrade has not completed",
            "NVIDIADriver-owned Nodes are marked pending, in-progress, or failed",
            "Failed to determine NVIDIADriver upgrade state",
            "gpu-driver-upgrade-state=upgrade-failed",
        ),
        source=_OPERATOR + "controllers/clusterpolicy_controller.go",
    ),
    Entry(
        "clusterpolicy-reconcile-failed",
        "ClusterPolicy state failed to reconcile",
        "the GPU Operator could not create or update the objects of an operand state (the state "
        "named, e.g. state-driver or state-container-toolkit): the error after it says why (an "
        "invalid ClusterPolicy field, a refused API call, a missing CRD)",
        f"read the condition's whole message (`kubectl get clusterpolicy -o jsonpath='{{{{.items[0]."
        f"status.conditions}}}}'`) and the operator's log (`{_NS} logs deploy/gpu-operator`); fix "
        "the field it names (`helm upgrade ... --reuse-values --set ...`)",
        "config",
        texts=("Failed to reconcile state-", "Error syncing state state-"),
        source=_OPERATOR + "controllers/clusterpolicy_controller.go",
    ),
    Entry(
        "nvidiadriver-conflicting-selector",
        "NVIDIADrivers select the same node",
        "two NVIDIADriver resources select one GPU node (or more than one has no nodeSelector, "
        "making both the default), so the operator deploys neither driver there",
        "`kubectl get nvidiadrivers -o yaml`: give each a nodeSelector that matches disjoint "
        "nodes (at most one without a selector), or delete the duplicate",
        "config",
        texts=(
            "multiple NVIDIADrivers match the same node",
            "multiple default NVIDIADrivers found",
            # the NVIDIADriver's ConflictingNodeSelector condition (internal/conditions)
            "Conflicting nodes found with given node selector label",
        ),
        source=_OPERATOR + "internal/validator/validator.go",
    ),
    Entry(
        "nvidiadriver-crd-disabled",
        "NVIDIADriver resource ignored",
        "an NVIDIADriver resource exists but the ClusterPolicy does not use the NVIDIADriver CRD "
        "(driver.useNvidiaDriverCRD false), so the operator skips it and deploys the "
        "ClusterPolicy's own driver, or none",
        "enable it: `helm upgrade gpu-operator nvidia/gpu-operator -n gpu-operator --reuse-values "
        "--set driver.nvidiaDriverCRD.enabled=true`, or delete the NVIDIADriver and configure the "
        "driver in the ClusterPolicy",
        "config",
        texts=("useNvidiaDriverCRD is not enabled in ClusterPolicy",),
        source=_OPERATOR + "controllers/nvidiadriver_controller.go",
    ),
    Entry(
        "gpucluster-clusterpolicy-conflict",
        "ClusterPolicy and GPUCluster both exist",
        "the cluster has both a ClusterPolicy and a GPUCluster resource; the operator manages GPUs "
        "through only one of them and reconciles neither while both exist",
        "keep one: `kubectl get clusterpolicies,gpuclusters` and delete the one you do not use",
        "config",
        texts=("ClusterPolicy and GPUCluster cannot co-exist", "both ClusterPolicy and GPUCluster CRs exist"),
        source=_OPERATOR + "controllers/clusterpolicy_controller.go",
    ),
    Entry(
        "gds-needs-open-kernel-modules",
        "GPUDirect Storage needs the open kernel modules",
        "the NVIDIADriver enables GPUDirect Storage at a version that works only with NVIDIA's "
        "open GPU kernel modules, but the driver is set to the proprietary ones",
        "set `useOpenKernelModules: true` in the NVIDIADriver (`kubectl edit nvidiadriver NAME`; "
        "ClusterPolicy: `--set driver.kernelModuleType=open`), or drop GPUDirect Storage",
        "config",
        texts=("is only supported with NVIDIA OpenRM drivers",),
        source=_OPERATOR + "controllers/nvidiadriver_controller.go",
    ),
    Entry(
        "node-os-labels-missing",
        "GPU node's OS or kernel labels missing",
        "the ClusterPolicy controller chooses the driver image of a GPU node from the labels Node "
        "Feature Discovery puts on it (feature.node.kubernetes.io/system-os_release.ID and "
        ".VERSION_ID, kernel-version.full; on OpenShift the RHCOS version), and {node} lacks them: "
        "NFD is not deployed (the chart's `nfd.enabled=false` without another NFD), its worker does "
        "not run on the node, or its configuration drops those features; the operator then creates "
        "no driver DaemonSet for the node",
        "`kubectl get node {node} --show-labels | tr , '\\n' | grep -e system-os_release -e "
        "kernel-version`; deploy NFD (`--set nfd.enabled=true`) or make the existing NFD worker run "
        "on {node} (`kubectl get pods -A -o wide | grep -i feature-discovery`), then restart the "
        f"operator (`{_NS} rollout restart deploy/gpu-operator`)",
        "config",
        texts=(
            "GPU node OS info is empty",
            "unable to retrieve OS name from label",
            "unable to retrieve OS version from label",
            "failed to retrieve GPU node OS info",
            "node doesn't have the proper NFD RHCOS version label",
            "Unable to obtain all kernel versions of the GPU nodes in the cluster",
        ),
        source=_OPERATOR + "controllers/object_controls.go",
    ),
    Entry(
        "os-version-unparsable",
        "GPU node's OS version label not parsed",
        "the operator reads the node's OS version from NFD's system-os_release.VERSION_ID label to "
        "pick the driver image tag, and the release running cannot parse it: v26.3.0 expected "
        "numbers and fails on versions such as Talos' v1.12.6, so it reconciles nothing",
        "`kubectl get node {node} -L feature.node.kubernetes.io/system-os_release.VERSION_ID`; run an "
        "operator release that accepts that version (v25.10.x, or one after v26.3.0: `helm upgrade "
        "gpu-operator nvidia/gpu-operator --version VERSION --reuse-values`)",
        "config",
        texts=("error processing OS major version", "error processing OS minor version"),
        source="https://github.com/NVIDIA/gpu-operator/issues/2239",
    ),
    Entry(
        "os-versions-mixed",
        "one kernel version on several OS releases",
        "two GPU nodes run the same kernel version but report different OS releases (their NFD "
        "system-os_release labels), which the operator's per-kernel driver DaemonSets (precompiled "
        "drivers, OpenShift Driver Toolkit) do not support, so it does not deploy them",
        "compare the nodes' labels (`kubectl get nodes -L feature.node.kubernetes.io/"
        "system-os_release.VERSION_ID -L feature.node.kubernetes.io/kernel-version.full`); upgrade "
        "the nodes to one OS release, or run the non-precompiled driver (`driver.usePrecompiled=false`)",
        "config",
        texts=("different OS versions found for the same kernel version",),
        source=_OPERATOR + "controllers/object_controls.go",
    ),
    Entry(
        "clusterpolicy-conflict",
        "ClusterPolicy settings that cannot go together",
        "the ClusterPolicy (or NVIDIADriver) combines settings the operator cannot deploy together "
        "(the line names them): the NRI plugin without CDI or without the Container Toolkit, "
        "an operand image without its repository, image and version (or an image digest with "
        "precompiled drivers), GPUDirect Storage (nvidia-fs) or GDRCopy with precompiled drivers "
        "(the operator leaves those out), or an NVIDIADriver nodeSelector that is the default's or "
        "uses the operator's reserved owner label",
        "`kubectl get clusterpolicy cluster-policy -o yaml`: turn on what the line says is needed "
        "(`cdi.enabled=true`, `toolkit.enabled=true`, the driver image fields) or turn off the "
        "feature that needs it (`driver.usePrecompiled=false` for GDS/GDRCopy); apply with `helm "
        "upgrade ... --set ...` or `kubectl edit clusterpolicy cluster-policy`",
        "config",
        texts=(
            "the NRI Plugin cannot be enabled when CDI is disabled",
            "the NRI Plugin cannot be enabled when the Container Toolkit is disabled",
            "unable to resolve driver image path for pre-compiled drivers",
            "GDRCopy is not supported along with pre-compiled NVIDIA drivers",
            "GPUDirect Storage driver (nvidia-fs) is not supported along with pre-compiled NVIDIA drivers",
            "GPUDirect Storage driver (nvidia-fs) and/or GDRCopy driver is not supported along with "
            "pre-compiled NVIDIA drivers",
            "specifying image digest is not supported when precompiled is enabled",
            "invalid image specification: repository, image and version must all be set",
            "empty image path provided through both",
            "cannot use reserved label",
            "cannot use nodeSelector",
        ),
        source=_OPERATOR + "controllers/object_controls.go",
    ),
    Entry(
        "driver-customization-unsupported",
        "driver repository or certificate config not supported on this OS",
        "the ClusterPolicy gives the driver container a custom package repository "
        "(driver.repoConfig), certificates (driver.certConfig) or subscription mounts for an OS "
        "distribution the operator has no such paths for, so the driver DaemonSet is not built",
        "remove driver.repoConfig / driver.certConfig for that OS (`kubectl edit clusterpolicy "
        "cluster-policy`), or bake the repository into a custom driver image",
        "config",
        texts=(
            "repository configuration not supported for distribution",
            "certificate configuration not supported for distribution",
            "subscription paths not found for distribution",
        ),
        source=_OPERATOR + "controllers/object_controls.go",
    ),
    Entry(
        "host-driver-files-missing",
        "host driver's libraries or nvidia-smi not found",
        "the operator-validator found a driver installed on the host but not its user-space files "
        "where it looks (the host root and hostPaths.driverInstallDir): the driver lives in a "
        "non-standard place (Talos' glibc tree, NixOS, a driver under /opt), or only its kernel "
        "module is installed",
        "on {node}: `command -v nvidia-smi` and `ldconfig -p | grep libnvidia-ml`; install the "
        "driver's user-space packages, or point the ClusterPolicy at the driver's root "
        "(`hostPaths.driverInstallDir`, `hostPaths.rootFS`), then restart the validator "
        f"(`{_NS} delete pod -l app=nvidia-operator-validator --field-selector spec.nodeName={{node}}`)",
        "driver",
        texts=(
            "failed to locate driver libraries",
            "failed to find an executable 'nvidia-smi' on the host",
            "failed to locate nvidia-smi",
            "failed to stat 'nvidia-smi' on the host",
            "failed to open 'nvidia-smi' on the host",
        ),
        source=_OPERATOR + "cmd/nvidia-validator/driver.go",
    ),
    Entry(
        "runtime-unrecognized",
        "container runtime of the nodes not recognised",
        "the operator could not tell the nodes' container runtime from their status "
        "(containerRuntimeVersion is not containerd, cri-o or docker, or no node reports one), so "
        "the toolkit configures containerd: on another runtime the GPU pods get no NVIDIA runtime",
        "`kubectl get nodes -o wide` (CONTAINER-RUNTIME column); set the runtime the toolkit must "
        "configure (`--set operator.defaultRuntime=containerd|crio|docker`) and its config and "
        "socket paths (`toolkit.env` CONTAINERD_CONFIG, CONTAINERD_SOCKET)",
        "toolkit",
        texts=(
            "runtime not recognized",
            "Unable to get runtime info from the cluster, defaulting to containerd",
        ),
        source=_OPERATOR + "controllers/state_manager.go",
    ),
    Entry(
        "sriov-vfs-missing",
        "GPU SR-IOV virtual functions not created",
        "the operator's sandbox (vGPU or VFIO) stack needs the GPUs' SR-IOV virtual functions, "
        "and they are not all there: SR-IOV or the IOMMU is off in the BIOS or on the kernel "
        "command line, the GPU has no SR-IOV, or the vGPU manager's sriov-manage failed",
        "on {node}: `lspci -vvv -d 10de: | grep -i -A2 'SR-IOV'`, `cat /proc/cmdline` (intel_iommu=on "
        "or amd_iommu=on, iommu=pt) and `dmesg | grep -i -e iommu -e sriov`; enable SR-IOV and the "
        "IOMMU in the BIOS and kernel, then `sudo /usr/lib/nvidia/sriov-manage -e ALL` or restart "
        "the vGPU manager pod",
        "config",
        texts=("no SR-IOV capable GPUs found", "not all VFs have been created", "Failed to enable VFs"),
        source=_VALIDATOR,
    ),
)

_DRIVER_CONTAINER = (
    Entry(
        "driver-manager-gpu-pods-remain",
        "driver upgrade blocked by GPU pods",
        "the GPU Operator's driver manager (the driver pod's k8s-driver-manager init container) "
        "cannot replace the driver on {node}: pods still use its GPUs (or hold DRA claims on "
        "them) and it is not allowed to evict them, so the new driver waits",
        "drain the node (`kubectl drain {node} --ignore-daemonsets --delete-emptydir-data`), or let "
        "the driver manager evict GPU pods: ClusterPolicy `driver.manager.env` "
        "ENABLE_GPU_POD_EVICTION=true (and ENABLE_AUTO_DRAIN=true), or the upgrade policy's "
        "`kubectl label node {node} nvidia.com/gpu-driver-upgrade-state=upgrade-required --overwrite`",
        "driver",
        texts=(
            "Cleanup could not automatically proceed on node",
            "cannot proceed until all GPU pods are drained from the node",
            "Cannot delete all GPU pods",
            "pod(s) still hold GPU resource claims",
            "Failed to evict GPU operator components",
            "Failed to uninstall nvidia driver components",
            "Failed to drain node of GPU pods",
            "error reported by drain helper",
            "Failed to wait for GPU client pods to terminate",
        ),
        source="https://github.com/NVIDIA/k8s-driver-manager/blob/v0.12.0/cmd/driver-manager/main.go",
    ),
    Entry(
        "driver-package-repositories",
        "driver container cannot reach its package repositories",
        "the GPU Operator's driver container on {node} cannot reach the distribution's package "
        "repositories, from which it installs the kernel headers it builds the driver with (no "
        "network or proxy, an air-gapped cluster, a missing RHEL entitlement or mirror)",
        "give the driver pods access (ClusterPolicy `driver.env` HTTP_PROXY/HTTPS_PROXY/NO_PROXY), "
        "a local repository (`driver.repoConfig`), or precompiled modules (`driver.usePrecompiled="
        "true`); " + _HOST_DRIVER,
        "driver",
        texts=(
            "ERROR: Failed to update package cache.",
            "FATAL: failed to reach RHEL package repositories.",
            "FATAL: failed to update the dnf metadata cache",
        ),
        source=_DRIVER_CTR_RHEL,
    ),
    Entry(
        "rhel-entitlement",
        "RHEL entitlement missing",
        "the driver container on {node} cannot install RHEL build packages (elfutils-libelf-devel): "
        "the node's RHEL subscription (entitlement) is not available to the container",
        "mount the entitlement into the driver pods (OpenShift: cluster-wide entitlement), use "
        "precompiled modules (`driver.usePrecompiled=true`), " + _HOST_DRIVER,
        "driver",
        texts=(
            "RHEL entitlement may be improperly deployed",
            # dnf's words when the entitled repositories are not there
            "Unable to find a match: elfutils-libelf-devel",
        ),
        source=_DRIVER_CTR_RHEL,
    ),
    Entry(
        "kernel-headers-unavailable",
        "kernel headers of the node's kernel not available",
        "the driver container on {node} cannot install kernel-headers/kernel-devel of the node's "
        "exact running kernel (dnf finds no such package): the repositories it can reach do not "
        "carry that kernel build: the RHEL entitlement is not available to the container (no "
        "cluster-wide entitlement), the EUS or RHOCP repository of that minor release is not "
        "enabled or the release is pinned wrongly (`--releasever`, DNF_RELEASEVER), or the kernel "
        "is newer than the repositories (or a custom kernel with no package)",
        "on OpenShift use the Driver Toolkit image (the ClusterPolicy's `operator.use_ocp_driver_"
        "toolkit: true`, the default since GPU Operator 1.9), which ships the headers of each "
        "RHCOS kernel and needs no entitlement; otherwise deploy the cluster-wide entitlement "
        "(or `driver.repoConfig` to a mirror that has `kernel-devel-$(uname -r)`), use "
        "precompiled driver images (`driver.usePrecompiled=true`) where published for that "
        "kernel, or run a kernel the repositories carry; " + _HOST_DRIVER,
        "driver",
        texts=(
            # dnf's words for the driver container's `dnf install kernel-headers-KERNEL
            # kernel-devel-KERNEL` (and `kernel-core-KERNEL`).
            "Unable to find a match: kernel-headers",
            "Unable to find a match: kernel-devel",
            "Unable to find a match: kernel-core",
        ),
        source="https://docs.nvidia.com/datacenter/cloud-native/openshift/latest/steps-overview.html",
    ),
    Entry(
        "rhel-version-unresolved",
        "RHEL version not resolved",
        "the driver container cannot tell the RHEL release from {node}'s kernel version: the node "
        "runs a kernel that is not a RHEL/RHCOS one, so no package repository matches it",
        "run a supported OS kernel on {node} (`uname -r`), set the release in the ClusterPolicy "
        "(`driver.version` image of that OS), " + _HOST_DRIVER,
        "driver",
        texts=("Unable to resolve RHEL version from kernel version",),
        source=_DRIVER_CTR_RHEL,
    ),
    Entry(
        "kernel-version-string",
        "kernel version string not found",
        "the driver container could not read the version string of {node}'s kernel image "
        "(/lib/modules/KERNEL/vmlinuz could not be extracted), which it needs to build or link "
        "the modules",
        "on {node}: `ls -l /lib/modules/$(uname -r)/vmlinuz /boot/vmlinuz-$(uname -r)`; install the "
        "kernel image package of the running kernel, " + _HOST_DRIVER,
        "driver",
        # RHEL 10's extraction of a compressed (zboot) kernel image with unzboot, built from
        # source where EPEL has no package (it needs network access to clone it)
        texts=(
            "Could not locate Linux kernel version string",
            "Error: Unable to clone unzboot source",
            "Error: Failed to build unzboot from source",
            "Error: Could not install build dependencies for unzboot",
        ),
        source=_DRIVER_CTR,
    ),
    Entry(
        "driver-already-running",
        "another driver container holds the node",
        "another NVIDIA driver container is already running on {node} (it holds "
        "/run/nvidia/nvidia-driver.pid): two driver DaemonSets (a ClusterPolicy and an "
        "NVIDIADriver, or an old release's pod) select the node",
        f"`{_NS} get pods -o wide --field-selector spec.nodeName={{node}} | grep driver`; keep one "
        "driver DaemonSet per node (delete the stale pod or the duplicate NVIDIADriver's node "
        "selector)",
        "driver",
        texts=("An instance of the NVIDIA driver is already running, aborting",),
        source=_DRIVER_CTR,
    ),
    Entry(
        "driver-daemon-stop",
        "driver daemon could not be stopped",
        "the driver container could not stop a daemon of the previous driver on {node} "
        "(nvidia-persistenced, fabric manager, nvidia-gridd, nvidia-topologyd, nvlsm), so it "
        "cannot unload the old modules",
        "on {node}: `ps aux | grep -E 'nvidia-persistenced|nv-fabricmanager|nvidia-gridd'` and "
        "stop them (`sudo systemctl stop nvidia-persistenced nvidia-fabricmanager`); a driver "
        "installed on the host as well needs `--no-operator-driver`; else reboot {node}",
        "driver",
        texts=(
            "Could not stop NVIDIA persistence daemon",
            "Could not stop NVIDIA fabric manager daemon",
            "Could not stop NVIDIA Grid daemon",
            "Could not stop NVIDIA topology daemon",
            "Could not stop NVLink Subnet Manager daemon",
            "Could not stop NVIDIA vGPU Manager",
        ),
        source=_DRIVER_CTR,
    ),
    Entry(
        "driver-update-failed",
        "driver update after a kernel change failed",
        "the driver container's kernel-update hook could not rebuild the driver for the new kernel of {node}",
        f"{_DRIVER_LOG} after the reboot into the new kernel; if its headers are not published, "
        "hold the kernel or " + _HOST_DRIVER.removeprefix("or "),
        "driver",
        texts=("ERROR: Failed to update the NVIDIA driver",),
        source=_DRIVER_CTR,
    ),
    Entry(
        "installer-module-load-failed",
        "nvidia-installer could not load the module",
        "nvidia-installer built or linked the kernel module but the kernel refused to load it on "
        "{node}: built against other kernel sources, a GPU the driver branch does not support, "
        "or Secure Boot (the kernel log says which)",
        "on {node}: `sudo dmesg | grep -iE 'nvrm|nvidia'` and `mokutil --sb-state`; pick a driver "
        "branch that supports the GPU and kernel, use signed precompiled modules under Secure "
        "Boot, " + _HOST_DRIVER,
        "driver",
        texts=("Unable to load the kernel module 'nvidia.ko'",),
        source=_INSTALLER,
    ),
    Entry(
        "installer-module-already-loaded",
        "an NVIDIA module is already loaded",
        "nvidia-installer found an NVIDIA kernel module already loaded on {node} (a driver "
        "installed on the host, or the previous driver container's modules still in use by "
        "nvidia-persistenced, a display or a GPU pod), so it cannot install its own",
        "keep the host's driver: `gpuctl bootstrap --phase cluster --stack operator "
        "--no-operator-driver`; or stop what uses the modules (`sudo lsof /dev/nvidia*`), "
        "`sudo rmmod nvidia_drm nvidia_modeset nvidia_uvm nvidia`, or reboot {node}",
        "driver",
        texts=("appears to already be loaded in your kernel",),
        source=_INSTALLER,
    ),
    Entry(
        "installer-build-failed",
        "nvidia-installer could not build or install the module",
        "nvidia-installer failed to build the kernel module for {node}'s kernel, or to install it "
        "through DKMS: the kernel headers are missing or incomplete, the compiler differs from the "
        "kernel's, or the driver branch is too old for the kernel (its log and DKMS's make.log "
        "say which)",
        "read /var/log/nvidia-installer.log (and /var/lib/dkms/nvidia/*/build/make.log); install the "
        "running kernel's headers and compiler, or a driver branch that supports the kernel; under "
        "the GPU Operator use precompiled modules (`driver.usePrecompiled=true`) " + _HOST_DRIVER,
        "driver",
        texts=(
            "Failed to install the kernel module through DKMS",
            'An error occurred while performing the step: "Building kernel modules"',
            "ERROR: Installation has failed.",
        ),
        source="https://github.com/NVIDIA/nvidia-installer/blob/main/install-from-cwd.c",
    ),
    Entry(
        "installer-no-kernel-source",
        "kernel source tree not found",
        "nvidia-installer cannot find the kernel source tree (headers) of {node}'s running "
        "kernel, so it cannot build the module",
        "install the headers of the running kernel (`linux-headers-$(uname -r)`, RHEL "
        "`kernel-devel-$(uname -r)`), or use precompiled modules (`driver.usePrecompiled=true`), "
        + _HOST_DRIVER,
        "driver",
        texts=("Unable to find the kernel source tree for the currently running kernel",),
        source=_INSTALLER,
    ),
    Entry(
        "driver-startup-probe",
        "driver pod's startup probe failing",
        "the driver pod's startup probe finds the driver not ready on {node}: the nvidia module "
        "is not loaded yet (the container is still building or installing it, or that failed), "
        "its daemons (persistenced, fabric manager) are not ready, or nvidia-smi fails; while "
        "the probe fails every operand waits for the driver",
        f"{_DRIVER_LOG} says how far the install got and why it stopped; a first install takes "
        "minutes (the probe allows about 20), so act on it when the log shows an error or the pod "
        "restarts",
        "driver",
        texts=(
            "NVIDIA kernel module not loaded",
            "NVIDIA driver daemons are not ready; Current status:",
        ),
        source=_OPERATOR + "assets/state-driver/0400_configmap.yaml",
        transient=True,
    ),
    Entry(
        "driver-rootfs-busy",
        "old driver root cannot be unmounted",
        "the driver manager cannot unmount the previous driver container's root file system "
        "(/run/nvidia/driver) on {node}: a process on the host or a pod still uses files under it "
        "(a GPU pod, a monitoring agent, a shell), so the new driver cannot be installed",
        "on {node}: `sudo fuser -vm /run/nvidia/driver` (or `sudo lsof +D /run/nvidia/driver`) "
        "names what holds it; stop it or drain the node (`kubectl drain {node} --ignore-daemonsets "
        "--delete-emptydir-data`), then delete the driver pod; a reboot clears it",
        "driver",
        texts=(
            "failed to unmount stale NVIDIA driver rootfs",
            "failed to unmount stale rootfs",
            "failed to unmount rootfs",
            "failed to recursively unmount",
        ),
        source="https://github.com/NVIDIA/k8s-driver-manager/blob/v0.12.0/cmd/driver-manager/main.go",
    ),
    Entry(
        "nouveau-unload-failed",
        "nouveau cannot be unloaded",
        "the driver manager could not unload the nouveau module on {node} (a display or console "
        "uses it), so the NVIDIA driver cannot take the GPU",
        "blacklist nouveau on {node} (`echo -e 'blacklist nouveau\\noptions nouveau modeset=0' | "
        "sudo tee /etc/modprobe.d/blacklist-nouveau.conf`, then `sudo update-initramfs -u` or "
        "`sudo dracut --force`) and reboot",
        "driver-conflict",
        texts=("failed to unload nouveau driver",),
        source="https://github.com/NVIDIA/k8s-driver-manager/blob/v0.12.0/cmd/driver-manager/main.go",
    ),
    Entry(
        "vfio-bind-failed",
        "GPU cannot be bound to vfio-pci",
        "the VFIO manager (vfio-manage) could not bind or unbind a GPU of {node} for VM "
        "passthrough: the vfio-pci module (or the GPU's vfio variant driver) is not loaded, the "
        "IOMMU is off, or the nvidia driver still holds the GPU",
        f"`{_NS} logs ds/nvidia-vfio-manager`; on {{node}}: `lsmod | grep vfio` (`sudo modprobe "
        "vfio-pci`), `cat /proc/cmdline` (intel_iommu=on or amd_iommu=on), `lspci -nnk -d 10de:` "
        "for the bound driver; nodes that run containers take `nvidia.com/gpu.workload.config="
        "container`",
        "config",
        texts=(
            "to vfio driver:",
            "failed to find directory for vfio driver",
            "failed to find best vfio variant driver",
            "Unable to unbind vfio-pci driver from all devices",
            "failed to unbind vfio-pci driver",
        ),
        source="https://github.com/NVIDIA/k8s-driver-manager/blob/v0.12.0/cmd/vfio-manage/bind.go",
    ),
    Entry(
        "mofed-wait",
        "GPUDirect RDMA waiting for the Mellanox OFED driver",
        "the driver pod's nvidia-peermem container (GPUDirect RDMA) waits for the Mellanox OFED "
        "driver: the Network Operator's OFED driver container has not marked itself ready "
        "(/run/mellanox/drivers/.driver-ready) or mlx5_core and ib_umad are not loaded; with OFED "
        "installed on the host instead, the ClusterPolicy does not say so",
        f"`{_NS} logs ds/nvidia-driver-daemonset -c nvidia-peermem-ctr`; deploy the Network "
        "Operator's OFED driver, or with OFED on the host set `--set driver.rdma.useHostMofed=true` "
        "(and `lsmod | grep -e mlx5_core -e ib_umad` on {node}); without RDMA NICs turn "
        "`driver.rdma.enabled` off",
        "wait",
        texts=(
            "waiting for mellanox ofed and nvidia drivers to be installed",
            "waiting for the mlx5_core and ib_umad kernel modules to be loaded",
            # k8s-driver-manager (the driver pod's init container)
            "failed to wait for MOFED driver",
        ),
        source=_DRIVER_CTR,
    ),
    Entry(
        "precompiled-modules-missing",
        "no precompiled driver modules for this kernel",
        "the precompiled driver container installs Canonical's signed NVIDIA module packages for "
        "{node}'s running kernel (linux-modules-nvidia-BRANCH-server-KERNEL, linux-signatures-"
        "nvidia-KERNEL, linux-objects-nvidia-...), and the archive has none for that kernel and "
        "driver branch (a kernel too new, a custom or HWE flavour Canonical does not build them "
        "for, or a branch it does not ship)",
        "on {node}: `apt-cache search linux-modules-nvidia | grep $(uname -r)` lists the branches "
        "published for the running kernel; pick one of them as the driver version, boot a kernel "
        "that has them, or build the modules instead (`--set driver.usePrecompiled=false`)",
        "driver",
        texts=(
            "Unable to locate package linux-modules-nvidia-",
            "Unable to locate package linux-signatures-nvidia-",
            "Unable to locate package linux-objects-nvidia-",
        ),
        source="https://github.com/NVIDIA/gpu-driver-container/blob/main/ubuntu22.04/precompiled/nvidia-driver",
    ),
    Entry(
        "kernel-module-type-invalid",
        "unknown kernel module type",
        "the driver container was given a kernel module type it does not know (KERNEL_MODULE_TYPE "
        "must be auto, open or proprietary), so it stops before installing",
        "set `driver.kernelModuleType` to auto, open or proprietary in the ClusterPolicy (or the "
        "NVIDIADriver's `kernelModuleType`), then delete the driver pod on {node}",
        "config",
        texts=("invalid value for the KERNEL_MODULE_TYPE variable",),
        source=_DRIVER_CTR,
    ),
    Entry(
        "vgpu-manager-died",
        "vGPU manager daemon exited",
        "the vGPU manager container's nvidia-vgpu-mgr daemon stopped, or its nvidia and "
        "nvidia_vgpu_vfio modules are not loaded after it started: the vGPU host driver does not "
        "support the GPU or the kernel, or it failed to start its vGPU services (its reason is in "
        "the host's journal), so no vGPU device is offered",
        f"`{_NS} logs ds/nvidia-vgpu-manager-daemonset --previous` and on {{node}} `journalctl -b "
        "| grep -i nvidia-vgpu-mgr` and `dmesg | grep -i nvrm`; run a vGPU manager release that "
        "supports the GPU and kernel, then delete the pod",
        "driver",
        # "Failed to load nvidia driver": the vGPU manager script's check that nvidia and
        # nvidia_vgpu_vfio are loaded after it started its daemons
        texts=("nvidia-vgpu-mgr daemon is no longer running", "Failed to load nvidia driver"),
        source="https://github.com/NVIDIA/gpu-driver-container/blob/main/vgpu-manager/ubuntu22.04/nvidia-driver",
    ),
)

_MIG = (
    Entry(
        "mig-gpu-in-use",
        "GPU in use by other clients",
        "a MIG change on {node} needs the GPU to itself (the reset that makes a MIG mode change "
        "take effect, or creating instances) and was refused: processes or modules still hold "
        "the GPU (nvidia-persistenced, DCGM or dcgm-exporter, Fabric "
        "Manager, nvidia_drm or a display server, GPU pods)",
        _FREE_GPU + "; under the GPU Operator let the MIG manager stop host clients "
        "(`migManager.env` WITH_SHUTDOWN_HOST_GPU_CLIENTS=true) or reboot (WITH_REBOOT=true), then "
        + _RELABEL,
        "mig",
        aliases=("In use by another client",),
        texts=(
            "The following GPUs could not be reset",
            "currently being used by one or more other processes",
            "error resetting all GPUs",
            "error resetting GPU ",
            "is currently in use by another process",
        ),
        source=_MIG_APPLY,
    ),
    Entry(
        "mig-mode-pending",
        "MIG mode change pending",
        "the MIG mode of a GPU on {node} was changed but is pending: it takes effect only after a "
        "GPU reset, which did not happen (the GPU is in use, or a VM's hypervisor refuses the "
        "reset), so no MIG instance can be created",
        _FREE_GPU + " (`nvidia-smi --query-gpu=mig.mode.current,mig.mode.pending --format=csv` "
        "shows the pending mode), then " + _RELABEL,
        "mig",
        texts=(
            "MIG mode is in pending enable state",
            "MIG mode is in pending disable state",
            "to make MIG mode effective on GPU",
            "unable to apply MIG config with MIG mode disabled",
        ),
        source=_NVIDIA_SMI,
    ),
    Entry(
        "mig-mode-not-applied-after-reboot",
        "MIG mode change not applied by a reboot",
        "the MIG manager rebooted {node} to apply a MIG mode change and the mode is still not "
        "the one asked for: something holds the GPU from boot on, or the platform (a cloud VM) "
        "keeps MIG mode under its own control",
        "on {node}: `nvidia-smi --query-gpu=mig.mode.current,mig.mode.pending --format=csv`; stop "
        "services that open the GPU at boot before the MIG manager runs, or set MIG mode where "
        "the platform allows it (the cloud provider's MIG setting), then " + _RELABEL,
        "mig",
        texts=("MIG mode change did not take effect after rebooting",),
        source=_MIG_RECONFIGURE,
    ),
    Entry(
        "mig-not-supported",
        "GPU without MIG",
        "the MIG configuration enables MIG on a GPU of {node} that does not support it (only "
        "data-center GPUs from A100/A30 on do)",
        "select the GPUs that support MIG in the config (`devices: [0, 1]`) or use `all-disabled` "
        "on this node: " + _RELABEL + "; `nvidia-smi -q | grep -A1 'MIG Mode'` shows which support it",
        "mig",
        aliases=("Not Supported",),
        texts=(
            "No MIG-supported devices found",
            "cannot set MIG mode on non MIG-capable GPU",
            "cannot set MIG config on non MIG-capable GPU",
            "unable to assert MIG mode enabled on non MIG-capable GPU",
            "no MIG-capable devices found on the system",
        ),
        source=_MIG_PARTED + "pkg/mig/mode/mode.go",
    ),
    Entry(
        "mig-enable-failed",
        "MIG mode could not be enabled",
        "nvidia-smi could not change the MIG mode of a GPU on {node}: the GPU does not support "
        "MIG or the caller is not root (the rest of the line says which)",
        "run it as root (`sudo nvidia-smi -i GPU -mig 1`) on a MIG-capable GPU "
        "(`nvidia-smi -q | grep -A1 'MIG Mode'`); in a container, the MIG manager needs its "
        "privileged pod",
        "mig",
        aliases=("Insufficient Permissions",),
        source=_NVIDIA_SMI,
    ),
    Entry(
        "mig-profile-unsupported",
        "MIG profile not valid for this GPU",
        "the MIG configuration asks for a MIG profile this GPU model does not offer (e.g. "
        "1g.5gb on an 80 GB A100, whose smallest is 1g.10gb)",
        "on {node}: `nvidia-smi mig -lgip` lists the GPU's profiles; pick a config with those "
        "(the default ConfigMap has one per GPU model, e.g. all-1g.10gb), then " + _RELABEL,
        "mig",
        aliases=("Invalid Argument",),
        texts=("unsupported MIG Device specified",),
        source=_MIG_PARTED + "pkg/mig/config/config.go",
    ),
    Entry(
        "mig-profile-lookup-failed",
        "MIG profile not found on this GPU",
        "mig-parted could not look a MIG profile of the selected config up on a GPU of {node} (the "
        "NVML error after it says why: ERROR_NOT_SUPPORTED or not found): the profile is not one "
        "this GPU model offers, one config covers GPUs of different models (mig-parted releases "
        "before v0.12 could match a profile name on the wrong GPU), or the driver is too old for "
        "the profile",
        "on {node}: `nvidia-smi mig -lgip -i GPU` lists that GPU's profiles; give each GPU model "
        "its own config (`device-filter` in the MIG config) with the profiles it lists, upgrade "
        "the MIG manager, then " + _RELABEL,
        "mig",
        texts=(
            "error getting GPU instance profile info for",
            "error getting Compute instance profile info for",
            "Could not get GPU instance profile info for profile",
            "not found on this GPU",
        ),
        source=_MIG_PARTED + "pkg/mig/config/config.go",
    ),
    Entry(
        "mig-insufficient-resources",
        "MIG instances do not fit",
        "the GPU instances asked for do not fit on the GPU of {node}: instances left from an "
        "earlier layout still hold its slices, or the mix of profiles needs more slices (or "
        "other placements) than the GPU has",
        "on {node}: `nvidia-smi mig -lgi` lists existing instances and `nvidia-smi mig -lgip` what "
        "is free; destroy leftovers (`sudo nvidia-smi mig -dci && sudo nvidia-smi mig -dgi`, with "
        "no process using them) or choose a layout that fits, then " + _RELABEL,
        "mig",
        aliases=("Insufficient Resources",),
        # mig-parted tries every order of creating the instances before giving up
        texts=("all orderings failed",),
        source=_NVIDIA_SMI,
    ),
    Entry(
        "mig-not-enabled",
        "no MIG-enabled GPU",
        "no GPU of {node} has MIG mode enabled (or the change is still pending a reset), so MIG "
        "instances cannot be listed or created",
        "enable it with the MIG manager (" + _RELABEL + " with a config that has `mig-enabled: "
        "true`), or by hand: `sudo nvidia-smi -i GPU -mig 1`, then reset the GPU or reboot {node}",
        "mig",
        texts=("No MIG-enabled devices found",),
        source=_NVIDIA_SMI,
    ),
    Entry(
        "mig-clear-failed",
        "existing MIG instances not removed",
        "mig-parted could not destroy the MIG instances of the previous layout on {node}: "
        "processes (GPU pods, DCGM, monitoring) still use those MIG devices",
        "drain the node's GPU pods (`kubectl drain {node} --ignore-daemonsets`), stop DCGM on "
        "{node}, then " + _RELABEL,
        "mig",
        texts=(
            "erroneous devices may persist",
            "error clearing existing MIG config",
            "exceeded maximum attempts to clear MigConfig",
        ),
        source=_MIG_APPLY,
    ),
    Entry(
        "mig-clients-not-stopped",
        "GPU clients not stopped for the MIG change",
        "the MIG manager could not stop the GPU clients of {node} before changing MIG (a GPU "
        "operand or a third-party DaemonSet pod did not terminate)",
        "`kubectl get pods -A -o wide --field-selector spec.nodeName={node}`; label third-party GPU "
        "DaemonSets with the nodeSelector `nvidia.com/gpu.deploy.gpu-client` key so the MIG "
        "manager can stop them, delete stuck pods, then " + _RELABEL,
        "mig",
        texts=(
            "device-plugin pod did not shutdown",
            "gpu-feature-discovery pod did not shutdown",
            "dcgm-exporter pod did not shutdown",
            "third-party gpu client pods did not shutdown",
            "Unable to tear down GPU client pods",
            "Unable to shutdown GPU clients on host by stopping their systemd services",
            "failed to stop host systemd services",
        ),
        source=_MIG_RECONFIGURE,
    ),
    Entry(
        "gfd-mig-single-invalid",
        "MIG layout does not fit the single strategy",
        "GPU feature discovery (and the device plugin) run the `single` MIG strategy, which needs "
        "every GPU of {node} in MIG mode with one and the same profile; the node's GPUs differ "
        "(MIG on some and off on others, or several profiles)",
        "set `mig.strategy=mixed` in the ClusterPolicy (device plugin and GFD), or give all GPUs "
        "of {node} one profile: " + _RELABEL + " with an all-* config",
        "mig",
        texts=("Invalid configuration detected for mig-strategy=single",),
        source="https://github.com/NVIDIA/k8s-device-plugin/blob/v0.20.0/internal/lm/mig-strategy.go",
    ),
    Entry(
        "mig-config-values-invalid",
        "MIG configuration with invalid values",
        "the selected entry of the MIG configuration parses as YAML but mig-parted refuses its "
        "values: a profile name it cannot read (`invalid format for '1g.5gbx'`), MIG devices listed "
        "under `mig-enabled: false`, `mig-enabled: true` without `mig-devices`, a missing "
        "`version`, or a `devices` list naming a GPU index {node} does not have",
        "fix the entry in the MIG manager's ConfigMap (the ClusterPolicy's `migManager.config.name`; "
        "`nvidia-mig-parted assert --valid-config -f CONFIG -c NAME` checks it, `nvidia-smi -L` "
        "lists the GPU indices), then " + _RELABEL,
        "config",
        texts=(
            "error validating values in '",
            "MIG devices included when 'mig-enabled' is false",
            "missing required field 'mig-devices' when 'mig-enabled' is true",
            "unable to parse with missing 'version' field",
            "GPU index out of range",
        ),
        source=_MIG_PARTED + "pkg/mig/config/config.go",
    ),
    Entry(
        "mig-driver-not-loaded",
        "MIG manager finds no NVIDIA driver",
        "mig-parted found no loaded nvidia kernel module on {node} (it reads /proc/modules): the "
        "driver is not installed or not loaded yet (the GPU Operator's driver container still "
        "building it), or the MIG manager runs with the wrong driver root",
        f"{_DRIVER_LOG} or `lsmod | grep nvidia` on {{node}}; load or install the driver ("
        + _HOST_DRIVER
        + "), then "
        + _RELABEL,
        "driver",
        texts=("nvidia module not loaded", "error checking if nvidia module loaded"),
        source=_MIG_PARTED + "cmd/nvidia-mig-parted/apply/mode.go",
    ),
    Entry(
        "mig-nvml-too-old",
        "driver too old for MIG",
        "the NVML of {node}'s driver is too old for mig-parted's MIG operations",
        "upgrade the driver on {node} to a branch that supports MIG on this GPU "
        "(`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`, or the ClusterPolicy's "
        "`driver.version`)",
        "driver",
        texts=("NVML version unsupported for performing MIG operations",),
        source=_MIG_PARTED + "pkg/mig/mode/nvml.go",
    ),
    Entry(
        "mig-apply-failed",
        "MIG configuration not applied",
        "the MIG manager failed to apply the MIG configuration on {node} and set "
        "`nvidia.com/mig.config.state=failed`; the lines before this one (or the rest of it) say why",
        f"{_MIG_LOG} (the first error above this line), fix it, then " + _RELABEL,
        # A wrapper: the line or log that carries it names the real cause, which comes first.
        "config",
        aliases=("failed",),
        texts=(
            "Error applying MIG configuration",
            "failed to apply MIG configuration",
            "failed to apply MIG mode change",
            "node label to 'failed'",
        ),
        source=_MIG_RECONFIGURE,
    ),
)

# The NVML errors of a MIG operation that mean something of their own here.
_MIG_NVML = "Insufficient Resources|In use by another client|Invalid Argument"

CATALOGUE = Catalogue(
    id="gpu-operator",
    title="GPU Operator operands and MIG manager",
    source=_VALIDATOR,
    version="gpu-operator v26.7.0, mig-parted v0.15.0, gpu-driver-container main (2026-08)",
    entries=_VALIDATION + _DRIVER_CONTAINER + _MIG,
    applies_to=("operand", "operator-driver", "events", "plugin-log"),
    # Each reader starts with a case-sensitive literal, the tool's own spelling, so that the
    # regex engine can skip to it instead of trying the pattern at every character of a log.
    readers=(
        # An init container's own line (the `echo` of its spec, shown by `kubectl describe`,
        # must not match).
        r"(?P<code>(?-i:waiting for )(?<!echo waiting for )(?<!echo \"waiting for )(?:the driver "
        r"validations to be ready|"
        r"nvidia container (?:stack|toolkit) to be setup))",
        r"(?P<code>(?-i:gave up waiting for pod)) (?P<pod>[\w.-]+) to be available",
        r"(?P<code>(?-i:ClusterPolicy is)(?:n't| not) ready)",
        # `kubectl get clusterpolicy -o yaml` (status.state) and `kubectl get clusterpolicies`.
        r"(?-i:state)[\"']?:[ \t]*[\"']?(?P<code>notReady)\b",
        r"(?-i:cluster-policy)\s+(?P<code>notReady)\b",
        # mig-parted's and nvidia-smi's words around an NVML error of a MIG operation.
        r"(?-i:error creating )(?:GPU|Compute) instance for [^:]{1,80}: (?P<code>" + _MIG_NVML + ")",
        r"(?-i:Unable to create a GPU instance on GPU)\s+\d+ using profile [^:]{1,40}: (?P<code>"
        + _MIG_NVML
        + ")",
        r"(?-i:Failed to create )(?:GPU|compute) instances: (?P<code>" + _MIG_NVML + ")",
        r"(?-i:Unable to )(?:enable|disable) MIG Mode for GPU \S+: "
        r"(?P<code>Not Supported|Insufficient Permissions|In use by another client)",
        r"(?-i:nvidia\.com/mig\.config\.state)[\"']?[ \t]*[=:][ \t]*[\"']?(?P<code>failed)\b",
        # the operator-validator's log line: `msg="driver is not ready: ..."`.
        r"(?P<code>(?-i:driver is not ready))(?<=msg=\"driver is not ready):",
        # the validator's wrapper, unless what follows is the /dev/char step's own error
        r"(?P<code>(?-i:error validating driver installation))(?!: error creating symlink creator)",
    ),
)
