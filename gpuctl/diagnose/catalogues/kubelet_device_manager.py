"""The kubelet's device manager and the device plugins that register with it: every fixed error
text of the registration server, the plugin client (ListAndWatch), allocation at pod admission,
the Topology Manager's admission and the allocation checkpoint, and NVIDIA k8s-device-plugin's own
start-up, watcher and health-check messages.

Wrappers that only say "something failed" (`UnexpectedAdmissionError`, `Could not register device
plugin`, `Could not contact Kubelet`) stay the table's generic rows (admission.unexpected,
plugin.registration-failed): the entries here name the reason those lines carry after them.
`requested number of devices unavailable` is the table's researched row admission.devices-unavailable
and `Insufficient nvidia.com/gpu` is the scheduler's (sched.insufficient-gpu).
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_K8S = "https://github.com/kubernetes/kubernetes/blob/v1.34.0/pkg/kubelet/cm/"
_DEVICEMANAGER = _K8S + "devicemanager/manager.go"
_PLUGIN_API = _K8S + "devicemanager/plugin/v1beta1/"
_TOPOLOGY = _K8S + "topologymanager/scope.go"
_K8S_LIFECYCLE = "https://github.com/kubernetes/kubernetes/blob/v1.34.0/pkg/kubelet/lifecycle/predicate.go"
_NVIDIA = "https://github.com/NVIDIA/k8s-device-plugin/blob/v0.20.0/"
_NVIDIA_MAIN = _NVIDIA + "cmd/nvidia-device-plugin/main.go"
_NVIDIA_HEALTH = _NVIDIA + "internal/rm/health.go"

_FIND_PLUGIN = (
    "find the device plugin pod on {node} (`kubectl get pods -A -o wide --field-selector "
    "spec.nodeName={node} | grep -i device-plugin`) and read its log (`kubectl logs --previous` "
    "if it restarted)"
)
_DELETE_REJECTED = (
    "the kubelet does not retry a rejected pod: delete it (`kubectl delete pod POD -n {namespace}`) "
    "so its controller creates a new one"
)
_SOCKET_DIR = (
    "on {node}: `systemctl status kubelet` and `ls -l /var/lib/kubelet/device-plugins/`; where the "
    "kubelet runs with another root directory (`ps -o args -C kubelet | grep -o -- '--root-dir=[^ ]*'`: "
    "k0s, MicroK8s, a custom --root-dir), mount that directory's `device-plugins` at "
    "/var/lib/kubelet/device-plugins in the plugin's DaemonSet (hostPath); then `{plugin_restart}`"
)
_CHECK_GPUS = (
    "drain {node} (`kubectl drain {node} --ignore-daemonsets`), check the GPUs there (`nvidia-smi`, "
    "`dmesg | grep -i xid`), reset the GPU (`nvidia-smi -r -i GPU`) or reboot, then `{plugin_restart}`"
)

_REGISTRATION = (
    Entry(
        "kubelet-socket-missing",
        "kubelet registration socket missing",
        "the device plugin finds no kubelet registration socket at {socket}: the kubelet is not "
        "running, or it keeps its device-plugins directory somewhere else than the host path the "
        "plugin mounts (a kubelet with another root directory), so the plugin cannot register and "
        "the node advertises no GPU",
        _SOCKET_DIR,
        "plugin",
        aliases=("connect: no such file or directory",),
        source=_PLUGIN_API + "server.go",
    ),
    Entry(
        "kubelet-socket-refused",
        "kubelet registration socket refuses connections",
        "the kubelet registration socket {socket} exists but nothing listens on it: the kubelet "
        "stopped or is restarting (a stale socket), or its registration server failed",
        "on {node}: `systemctl status kubelet` and `journalctl -u kubelet | grep -i 'device plugin'`; "
        "`sudo systemctl restart kubelet` recreates the socket, then `{plugin_restart}`",
        "plugin",
        aliases=("connect: connection refused",),
        source=_PLUGIN_API + "server.go",
        transient=True,
    ),
    Entry(
        "kubelet-socket-denied",
        "kubelet registration socket not accessible",
        "the device plugin may not open the kubelet registration socket {socket}: it runs "
        "unprivileged, or SELinux/AppArmor labels on /var/lib/kubelet/device-plugins forbid it",
        "on {node}: `ls -lZ /var/lib/kubelet/device-plugins/`; run the plugin container privileged "
        "(or with the SELinux type spc_t, as the NVIDIA chart does), then `{plugin_restart}`",
        "config",
        aliases=("connect: permission denied",),
        # the kubelet's own warning when it cannot label the directory for unprivileged plugins
        texts=("Could not set selinux context on socket dir",),
        source=_PLUGIN_API + "server.go",
    ),
    Entry(
        "register-timeout",
        "device plugin registration timed out",
        "the device plugin's Register call to the kubelet timed out: no kubelet registration server "
        "answers on the socket the plugin mounted (the kubelet keeps its device-plugins directory "
        "elsewhere, e.g. k3s, k0s or MicroK8s, or a kubelet before 1.10 without the DevicePlugins "
        "feature gate), or the kubelet could not dial the plugin's socket back",
        _SOCKET_DIR,
        "plugin",
        texts=("Could not register device plugin: context deadline exceeded",),
        source=_NVIDIA + "internal/plugin/server.go",
    ),
    Entry(
        "failed-to-dial-device-plugin",
        "kubelet cannot dial the device plugin",
        "the kubelet accepted the plugin's registration but cannot connect back to the plugin's own "
        "socket: the plugin created it in a host directory the kubelet does not read (a hostPath "
        "other than the kubelet's device-plugins directory), or the plugin exited right after "
        "registering",
        "on {node}: `ls /var/lib/kubelet/device-plugins/` must list the plugin's socket (e.g. "
        "nvidia-gpu.sock) next to kubelet.sock; mount the kubelet's real device-plugins directory "
        "into the plugin, then `{plugin_restart}`",
        "plugin",
        texts=(
            "failed to dial device plugin",
            "Unable to connect to device plugin client with socket path",
            "Can't create new endpoint with socket path",
        ),
        source=_PLUGIN_API + "client.go",
    ),
    Entry(
        "unsupported-api-version",
        "device plugin API version not served",
        "the device plugin asks for a device plugin API version the kubelet does not serve: the "
        "plugin release and the kubelet's Kubernetes version are too far apart",
        "compare the kubelet's version (`kubectl get node {node} -o wide`) with the plugin release's "
        "supported Kubernetes range and deploy a matching plugin release",
        "plugin",
        texts=("is not supported by kubelet",),
        source=_PLUGIN_API + "api.go",
    ),
    Entry(
        "unknown-registration-service",
        "kubelet serves no Registration service of the plugin's API",
        "the kubelet serves no device plugin Registration service of the plugin's API version: the "
        "plugin speaks v1beta1 and the kubelet predates it (Kubernetes 1.10/1.11), or the plugin "
        "speaks the old v1alpha API (`deviceplugin.Registration`) and the kubelet is 1.10 or newer",
        "compare the kubelet's version (`kubectl get node {node} -o wide`) with the plugin release's "
        "supported Kubernetes range and deploy the plugin release built for it",
        "plugin",
        texts=("unknown service v1beta1.Registration", "unknown service deviceplugin.Registration"),
        source=_PLUGIN_API + "server.go",
    ),
    Entry(
        "invalid-resource-name",
        "invalid device plugin resource name",
        "the device plugin registered a resource name ({resource}) that is not an extended resource "
        "name (`domain/name`, not in the kubernetes.io domain), so the kubelet refuses it",
        "fix the resource name in the plugin's config (the `resources` or `sharing.*.rename` entries "
        "of its ConfigMap), then `{plugin_restart}`",
        "config",
        aliases=("is invalid",),
        source=_PLUGIN_API + "api.go",
    ),
    Entry(
        "registration-server-failed",
        "kubelet device plugin registration server down",
        "the kubelet's own device plugin registration server did not start or stopped (its socket "
        "directory cannot be created, cleaned or listened on), so no device plugin can register on "
        "the node",
        "on {node}: `journalctl -u kubelet | grep -i 'device plugin'`; check that "
        "/var/lib/kubelet/device-plugins is a writable directory on a filesystem with free space "
        "(`df -h /var/lib/kubelet`), then `sudo systemctl restart kubelet`",
        "plugin",
        texts=(
            "device plugin registration gRPC server failed and no device plugins can register",
            "device plugin registry",
            "Error while serving device plugin registration grpc server",
            "Failed to create the device plugin socket directory",
            "Failed to cleanup the device plugin directory",
            "Fail to clean up stale contents under",
        ),
        source=_PLUGIN_API + "server.go",
    ),
    Entry(
        "device-plugin-options",
        "kubelet cannot read the plugin's options",
        "the kubelet connected to the registered device plugin but its GetDevicePluginOptions call "
        "failed: the plugin exited right after registering or speaks an incompatible API",
        _FIND_PLUGIN + "; then `{plugin_restart}`",
        "plugin",
        texts=("failed to get device plugin options",),
        source=_DEVICEMANAGER,
    ),
    Entry(
        "listandwatch-ended",
        "device plugin stream ended",
        "the device plugin's ListAndWatch stream to the kubelet ended: the plugin pod stopped, "
        "restarted or crashed (or sent a message over the gRPC size limit); the kubelet marks the "
        "resource's devices unhealthy and drops them after 5 minutes unless the plugin registers "
        "again",
        _FIND_PLUGIN + "; if it does not come back by itself, `{plugin_restart}`",
        "plugin",
        texts=("ListAndWatch ended unexpectedly for device plugin",),
        source=_PLUGIN_API + "client.go",
        transient=True,
    ),
)

_ALLOCATION = (
    Entry(
        "allocate-plugin-gone",
        "device plugin went away during Allocate",
        "the kubelet's Allocate call reached the device plugin but the plugin's gRPC server went "
        "away before answering (`transport is closing`, `error reading from server: EOF`): the "
        "plugin crashed while allocating (a panic in its Allocate handler) or was restarted; the "
        "pod was rejected at admission (UnexpectedAdmissionError)",
        _FIND_PLUGIN + ": a panic or a restart at the time of the event is the cause; update or fix "
        "the plugin, then " + _DELETE_REJECTED,
        "plugin",
        texts=("Allocate failed due to rpc error: code = Unavailable",),
        source=_K8S + "devicemanager/plugin/v1beta1/client.go",
    ),
    Entry(
        "no-healthy-devices",
        "no healthy device to allocate",
        "the kubelet has no healthy device of the resource to give the pod: the device plugin "
        "reported every GPU unhealthy (an Xid, a lost GPU), or it is not connected (its pod stopped, "
        "or it has not registered again since a kubelet restart); the pod was rejected at admission "
        "(UnexpectedAdmissionError)",
        "`kubectl describe node {node}` (Allocatable), then " + _FIND_PLUGIN + " for the Xid "
        "(`dmesg | grep -i xid` on the node); `{plugin_restart}` if it is not connected; " + _DELETE_REJECTED,
        "plugin",
        texts=("no healthy devices present; cannot allocate unhealthy devices",),
        source=_DEVICEMANAGER,
    ),
    Entry(
        "insufficient-at-admission",
        "kubelet rejected the pod: not enough devices on the node",
        "the kubelet rejected the pod at admission (OutOf{resource}): its node allocatable had fewer "
        "{resource} than the pods bound to it use; after a node or kubelet restart the device plugin "
        "had not registered again yet (the capacity is 0 until it does), GPUs went unhealthy, or pods "
        "bound to the node outside the scheduler hold them",
        "`kubectl describe node {node}` (Capacity and Allocatable of {resource}); if they are 0, "
        + _FIND_PLUGIN
        + "; once the node advertises its GPUs again, "
        + _DELETE_REJECTED,
        "plugin",
        aliases=("Node didn't have enough resource", "OutOf"),
        source=_K8S_LIFECYCLE,
    ),
    Entry(
        "unhealthy-devices",
        "allocation asked for unhealthy devices",
        "the kubelet was asked to allocate devices the device plugin reports unhealthy (an Xid or a "
        "lost GPU marked them, or the plugin disconnected); the pod was rejected at admission",
        "`kubectl describe node {node}` (Allocatable below Capacity), then "
        + _FIND_PLUGIN
        + " for the Xid; "
        + _CHECK_GPUS
        + "; "
        + _DELETE_REJECTED,
        "plugin",
        texts=("can't allocate unhealthy devices",),
        source=_DEVICEMANAGER,
    ),
    Entry(
        "previously-allocated-unhealthy",
        "a restarted container's devices went unhealthy",
        "a container restarted and the GPUs it was given before are no longer healthy (an Xid or a "
        "lost GPU), so the kubelet cannot give them back",
        _CHECK_GPUS + "; delete the pod so it gets healthy GPUs",
        "plugin",
        texts=("previously allocated devices are no longer healthy",),
        source=_DEVICEMANAGER,
    ),
    Entry(
        "unregistered-device",
        "resource not registered at admission",
        "the kubelet admitted a pod for a resource no device plugin has registered: after a kubelet "
        "restart or a node reboot the pod came before the device plugin, or the plugin is not running "
        "on the node",
        _FIND_PLUGIN + "; once it logs that it registered with the kubelet, " + _DELETE_REJECTED,
        "plugin",
        texts=(
            "cannot allocate unregistered device",
            "endpoint not found in cache for a registered resource",
        ),
        aliases=("unknown Device Plugin",),
        source=_DEVICEMANAGER,
        transient=True,
    ),
    Entry(
        "endpoint-stopped",
        "device plugin endpoint stopped",
        "the kubelet tried to call a device plugin whose connection had ended (the plugin restarted "
        "or died; the kubelet keeps the stopped endpoint for 5 minutes)",
        _FIND_PLUGIN + "; once it registered again, " + _DELETE_REJECTED,
        "plugin",
        aliases=("has been stopped",),
        source=_K8S + "devicemanager/endpoint.go",
        transient=True,
    ),
    Entry(
        "preferred-allocation-failed",
        "device plugin GetPreferredAllocation failed",
        "the device plugin failed to choose the devices to allocate (GetPreferredAllocation): it "
        "cannot query a GPU (a lost or fallen-off GPU makes NVML fail for the whole node) or its "
        "topology information; the rest of the line is the plugin's error",
        "`nvidia-smi` on {node}: if a GPU is lost or missing, "
        + _CHECK_GPUS
        + "; else "
        + _FIND_PLUGIN
        + "; "
        + _DELETE_REJECTED,
        "plugin",
        # "... rpc failed with err: ..." (kubelet) and "due to device plugin
        # GetPreferredAllocation; unable to ..." (as AKS nodes print it)
        texts=("device plugin GetPreferredAllocation",),
        source=_DEVICEMANAGER,
    ),
    Entry(
        "prestart-failed",
        "device plugin PreStartContainer failed",
        "the device plugin's PreStartContainer call for the container failed, so the container is "
        "not started; the rest of the line is the plugin's error",
        _FIND_PLUGIN + "; fix what it names, then delete the pod",
        "plugin",
        texts=("device plugin PreStartContainer rpc failed",),
        source=_DEVICEMANAGER,
    ),
    Entry(
        "bad-allocation-response",
        "device plugin allocation inconsistent",
        "the device plugin's allocation answer did not match the request (no container response, "
        "fewer devices than asked, or devices it does not know): a plugin restarted with another "
        "configuration or device naming while the kubelet kept its old allocations",
        _FIND_PLUGIN + "; if the plugin's config changed, `sudo systemctl restart kubelet` on {node} "
        "and `{plugin_restart}`; " + _DELETE_REJECTED,
        "plugin",
        texts=(
            "no containers return in allocation response",
            "unexpectedly allocated less resources than required",
            "invalid allocation request for",
        ),
        source=_DEVICEMANAGER,
    ),
    Entry(
        "allocation-state-lost",
        "kubelet lost a pod's device allocation",
        "the kubelet has no record of the devices it gave the pod's container (its allocation state "
        "was lost, e.g. an unreadable checkpoint), or the pod's device request changed under the same "
        "pod",
        "delete the pod so it is admitted anew; if it repeats, drain {node} and restart the kubelet "
        "(`sudo systemctl restart kubelet`)",
        "plugin",
        texts=("no devices found allocated in local cache", "changed request for"),
        source=_DEVICEMANAGER,
    ),
    Entry(
        "topology-affinity",
        "Topology Manager rejected the pod",
        "the kubelet's Topology Manager policy (restricted or single-numa-node) could not place the "
        "pod's GPUs (with its CPUs and memory) on the NUMA nodes it requires, so it rejected the pod "
        "at admission; the scheduler does not see NUMA placement, so it may keep sending such pods",
        "see the GPUs' NUMA affinity on {node} (`nvidia-smi topo -m`) and request GPUs that fit one "
        "NUMA node, free GPUs on one NUMA node, or relax the kubelet's topologyManagerPolicy "
        "(best-effort) or topologyManagerScope; " + _DELETE_REJECTED,
        "config",
        texts=(
            "TopologyAffinityError",
            "Topology Affinity Error",
            "with Topology locality",
        ),
        source=_TOPOLOGY,
    ),
    Entry(
        "checkpoint-unreadable",
        "device manager checkpoint unreadable",
        "the kubelet could not read its device allocation checkpoint "
        "(/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint: corrupt, or written by an "
        "incompatible kubelet version): it forgot which GPUs running pods hold, so GPUs may be given "
        "twice or wrongly counted as free until the plugins register again",
        "on {node}: drain it (`kubectl drain {node} --ignore-daemonsets`), `sudo systemctl stop "
        "kubelet`, move /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint aside, `sudo "
        "systemctl start kubelet`, then `kubectl uncordon {node}`",
        "plugin",
        texts=("Continue after failing to read checkpoint file",),
        source=_DEVICEMANAGER,
    ),
    Entry(
        "checkpoint-write-failed",
        "device manager checkpoint not written",
        "the kubelet cannot write its device allocation checkpoint in /var/lib/kubelet/"
        "device-plugins (disk full or read-only filesystem): allocations are lost at its next restart",
        "on {node}: `df -h /var/lib/kubelet` and `mount | grep kubelet`; free space or remount it "
        "read-write, then `sudo systemctl restart kubelet`",
        "plugin",
        texts=(
            'failed to write checkpoint file "kubelet_internal_checkpoint"',
            "Writing checkpoint encountered",
        ),
        source=_DEVICEMANAGER,
    ),
)

_NVIDIA_PLUGIN = (
    Entry(
        "inotify-limit",
        "inotify instances exhausted",
        "the device plugin cannot create its inotify watcher on /var/lib/kubelet/device-plugins: "
        "the node's inotify instance limit (fs.inotify.max_user_instances) is used up by other "
        "pods, so the plugin exits",
        "on {node}: `sudo sysctl -w fs.inotify.max_user_instances=8192 "
        "fs.inotify.max_user_watches=524288` (persist it in /etc/sysctl.d/), then `{plugin_restart}`",
        "config",
        aliases=("too many open files",),
        source=_NVIDIA_MAIN,
    ),
    Entry(
        "device-plugins-dir-missing",
        "no device-plugins directory in the plugin",
        "the device plugin finds no /var/lib/kubelet/device-plugins directory to watch: the "
        "DaemonSet does not mount the kubelet's device-plugins directory (or the kubelet keeps it "
        "elsewhere)",
        _SOCKET_DIR,
        "config",
        aliases=("no such file or directory",),
        source=_NVIDIA_MAIN,
    ),
    Entry(
        "fs-watcher-failed",
        "device plugin cannot watch the kubelet socket",
        "the device plugin (releases before 0.10 print no reason) cannot watch "
        "/var/lib/kubelet/device-plugins for kubelet restarts: the node's inotify limits are used "
        "up, or the directory is not mounted into the plugin",
        "on {node}: raise the inotify limits (`sudo sysctl -w fs.inotify.max_user_instances=8192 "
        "fs.inotify.max_user_watches=524288`) and check the plugin's hostPath mount of "
        "/var/lib/kubelet/device-plugins, then `{plugin_restart}`",
        "config",
        texts=("Failed to created FS watcher",),
        source=_NVIDIA_MAIN,
    ),
    Entry(
        "grpc-server-crashed",
        "device plugin gRPC server crashed",
        "the device plugin's own gRPC server on its socket in /var/lib/kubelet/device-plugins "
        "failed (the socket was removed or the directory is not writable), so the kubelet cannot "
        "reach it",
        _FIND_PLUGIN + "; check that the plugin can write /var/lib/kubelet/device-plugins on {node}, "
        "then `{plugin_restart}`",
        "plugin",
        aliases=("crashed with error",),
        texts=("has repeatedly crashed recently",),
        source=_NVIDIA + "internal/plugin/server.go",
    ),
    Entry(
        "health-check-disabled",
        "device plugin health checks off",
        "the device plugin could not register for NVML events on the GPUs (a GPU or vGPU without "
        "event support, or an NVML error), so it keeps advertising them without health checks: "
        "a failing GPU is not taken out of service",
        "check NVML on {node} (`nvidia-smi -q | head`); update the driver, or watch "
        "`dmesg | grep -i xid` on the node yourself",
        "driver",
        texts=("continuing with health checks disabled",),
        source=_NVIDIA + "internal/plugin/server.go",
    ),
    Entry(
        "all-devices-unhealthy",
        "device plugin marked every GPU unhealthy",
        "waiting for NVML events failed on the node (typically a GPU lost or fallen off the bus), "
        "so the device plugin marked all its GPUs unhealthy and the node advertises none",
        _CHECK_GPUS,
        "hardware",
        texts=("Marking all devices as unhealthy",),
        source=_NVIDIA_HEALTH,
    ),
    Entry(
        "device-handle-lost",
        "device plugin lost a GPU's handle",
        "NVML no longer finds a GPU by its UUID (the GPU was lost or fell off the bus), so the "
        "device plugin marked it unhealthy",
        _CHECK_GPUS,
        "hardware",
        texts=("handle from UUID",),
        source=_NVIDIA_HEALTH,
    ),
    Entry(
        "events-unsupported",
        "GPU cannot report health events",
        "NVML cannot tell which health events a GPU supports (an old GPU, a vGPU or a driver that "
        "does not report Xid events), so the device plugin marks it unhealthy or leaves it unchecked",
        "check the driver on {node} (`nvidia-smi -q`); if the GPU is fine and cannot report events, "
        "set DP_DISABLE_HEALTHCHECKS=all in the plugin's environment and `{plugin_restart}`",
        "driver",
        texts=("unable to determine the supported events for", "is too old to support healthchecking"),
        source=_NVIDIA_HEALTH,
    ),
    Entry(
        "mig-placement-unknown",
        "MIG device placement unknown",
        "the device plugin cannot map a MIG device to its parent GPU and instances (the MIG layout "
        "changed under it), so it marks the device unhealthy",
        "check the MIG layout on {node} (`nvidia-smi -L`); after changing it, `{plugin_restart}`",
        "mig",
        texts=("Could not determine device placement for",),
        source=_NVIDIA_HEALTH,
    ),
    Entry(
        "plugin-config-invalid",
        "device plugin flags or config invalid",
        "the device plugin's (or gpu-feature-discovery's) flags or config file are invalid (the "
        "line names the option), so it exits at start: a config file must follow the schema of the "
        "release that reads it (`version: v1`, options under `flags:`, `sharing:`, `resources:`), "
        "and an option written for another release does not parse (`cannot unmarshal array into Go "
        "struct field ... deviceListStrategy of type string`: a list given to a release that takes "
        "one string, e.g. a gpu-feature-discovery older than the device plugin v0.14 that made it a "
        "list; `unknown field`: an option that release does not have; `unknown version`)",
        "see which releases run (`kubectl get ds -A -o wide | grep -iE 'device-plugin|feature-discovery'` "
        "names the images) and compare the config with that release's api/config/v1 schema: run "
        "matching device plugin and gpu-feature-discovery releases (one Helm chart deploys both since "
        "v0.15), or write the option the way that release takes it (a flag's value as a string, "
        "`version: v1`); correct it in the plugin's Helm values or config ConfigMap (`kubectl get "
        "configmap -A | grep -i device-plugin`), then `{plugin_restart}`",
        "config",
        texts=(
            "unable to load config",
            "invalid --device-list-strategy option",
            "invalid --device-id-strategy option",
            "invalid --shared-devices-allocation-policy option",
            "unknown MIG strategy",
            "using --mig-strategy=mixed is not supported with MPS",
            "using MPS requires --mps-root to be specified",
            "CDI --device-list-strategy options are only supported on NVML-based systems",
            "unable to validate flags",
            "unable to finalize config",
            "invalid IMEX channel IDs",
            "invalid IMEX config",
            "invalid --device-discovery-strategy option",
            "is only supported with NVML",
            "error parsing config file",
            "error opening config file",
            "unable to parse config file",
            "incorrect format for resource name",
            "fully-qualified resource name must be",
            "number of replicas must be",
            "does not match any resource patterns",
            # api/config/v1 (sharing.go, replicas.go, resources.go, strategy.go, imex.go)
            "but the only valid string input is 'all'",
            "but a count of devices must be > 0",
            "resources must have a 'name' field set",
            "resources must have a 'pattern' field set",
            "unrecognized type for devices spec",
            "unsupported type for device in devices list",
            "unmarshallable ReplicatedDevices struct",
            "invalid deviceListStrategy",
            "invalid device list strategy",
            "unknown fallback strategy",
            "channelIDs must be [] or [0]",
        ),
        source=_NVIDIA_MAIN,
    ),
    Entry(
        "platform-not-detected",
        "device plugin sees no NVIDIA driver in its container",
        "the device plugin found neither NVML nor a Tegra platform inside its container, so it "
        "advertises no GPU: the container runtime did not inject the driver (the NVIDIA runtime is "
        "not the default and the DaemonSet has no `runtimeClassName: nvidia`, or the NVIDIA "
        "Container Toolkit is not configured on the node), or the plugin runs on a node without "
        "GPUs",
        "on {node}: `gpuctl preflight -i INVENTORY --limit {node}`; configure the runtime with "
        "`gpuctl bootstrap --phase host -i INVENTORY --limit {node}` (or give the plugin's DaemonSet "
        "`runtimeClassName: nvidia`); keep the plugin off nodes without GPUs with a nodeSelector; "
        "then `{plugin_restart}`",
        "toolkit",
        # Not the hint lines printed after an NVML or strategy error ("did you set the docker
        # default runtime to `nvidia`?"): the error line before them is the finding.
        texts=(
            "Incompatible platform detected",
            "Unsupported platform detected",
            "platform detection failed",
        ),
        source=_NVIDIA + "internal/plugin/factory.go",
    ),
    Entry(
        "sharing-replicas-invalid",
        "time-slicing or MPS config names more GPUs than the node has",
        "the device plugin's sharing config (timeSlicing or mps `resources`) cannot be applied on "
        "this node: it asks to replicate more GPUs than the node has, or gives MPS more replicas "
        "than the GPU's MPS server takes clients (the limit is printed after `exceeded:`), so the "
        "plugin or its MPS control daemon does not start",
        "fix the `sharing:` section of the plugin config for {node} (`devices:` a count or list the "
        "node has, `replicas:` within the limit), or label the node for another config "
        "(`nvidia.com/device-plugin.config`); then `{plugin_restart}`",
        "config",
        texts=("devices to be replicated, but only", "maximum allowed replicas exceeded"),
        source=_NVIDIA + "internal/rm/device_map.go",
    ),
    Entry(
        "mps-server-failed",
        "MPS server exits at start",
        "the MPS control daemon (the device plugin's mps-control-daemon) started an MPS server for "
        "a client and the server died: the GPU is older than Volta (only the legacy MPS server, "
        "which the device plugin's MPS sharing does not support), the server could not map its "
        "memory (dmesg: `Cannot map memory`, a /dev/shm too small in the daemon's pod), or the "
        "daemon's nvidia-cuda-mps binaries do not match the loaded driver; the clients then fail "
        "(CUDA errors 805, 999 or a hang)",
        "read the server's log (server.log in the daemon's CUDA_MPS_LOG_DIRECTORY, e.g. `kubectl "
        "-n NAMESPACE exec MPS-DAEMON-POD -- cat /mps/nvidia.com/gpu/log/server.log`) and `dmesg` on "
        "{node}; use MPS sharing on Volta or newer GPUs only (time-slicing for older ones), give "
        "the daemon the host driver's MPS binaries (the plugin's nvidiaDriverRoot), then restart "
        "the mps-control-daemon pod on {node}",
        # its death explains the clients' CUDA 999 and MPS errors (catalogue.LAYER_RANK)
        "mps",
        aliases=("exited with status", "Failed to start"),
        texts=("Server encountered a fatal exception",),
        source="https://docs.nvidia.com/deploy/mps/index.html",
    ),
    Entry(
        "shared-request-too-large",
        "more than one shared GPU replica asked for",
        "the node's GPUs are shared (time-slicing or MPS replicas) with failRequestsGreaterThanOne "
        "set (MPS always sets it), and the pod asks for more than one replica: a second replica of "
        "a shared GPU gives no more compute or memory, so the device plugin refuses the allocation "
        "and the kubelet rejects the pod (UnexpectedAdmissionError; the pod must be deleted)",
        "ask for one (`nvidia.com/gpu: 1`, or `nvidia.com/gpu.shared: 1` with renameByDefault) "
        "and delete the rejected pod; a pod that needs several GPUs must run on a node without "
        "sharing (label it for another plugin config: `kubectl label node {node} "
        "nvidia.com/device-plugin.config=CONFIG --overwrite`)",
        "config",
        texts=("maximum request size for shared resources is",),
        source=_NVIDIA + "README.md#with-cuda-time-slicing",
    ),
    Entry(
        "imex-channel-missing",
        "IMEX channel device node missing",
        "the device plugin is configured to hand out an IMEX channel (`imex.channelIDs`, "
        "`imex.required`) but /dev/nvidia-caps-imex-channels/channel0 does not exist on the node: "
        "the driver creates no IMEX channel unless asked to",
        "on {node}: create the channel (`sudo nvidia-modprobe -i 0:1`, or load the driver with "
        "`NVreg_CreateImexChannel0=1`), or drop `imex.required`; then `{plugin_restart}`",
        "config",
        texts=("requested IMEX channel",),
        source=_NVIDIA + "internal/imex/imex.go",
    ),
    Entry(
        "mig-enabled-mixed",
        "GPUs with and without MIG under the single strategy",
        "the device plugin runs the `single` MIG strategy, which needs every GPU of the node in the "
        "same MIG mode, but some GPUs have MIG enabled and others not",
        "use `--mig-strategy=mixed` for the device plugin (`migStrategy: mixed` in its config), or "
        "put every GPU of {node} in one MIG mode (`nvidia.com/mig.config` label with the MIG manager); "
        "then `{plugin_restart}`",
        "mig",
        texts=("must be configured with the same migEnabled value",),
        source=_NVIDIA + "internal/rm/device_map.go",
    ),
    Entry(
        "config-not-found",
        "device plugin config named by the node label not found",
        "the device plugin's config-manager (the sidecar that picks the plugin config for the node) "
        "finds no config of that name: the node label nvidia.com/device-plugin.config names a key "
        "the plugin's config ConfigMap does not have, the ConfigMap is empty or not mounted, or "
        "neither a label nor a default config is set; the plugin does not start",
        "list the ConfigMap's keys (`kubectl get configmap -A | grep -i device-plugin`, then "
        "`kubectl get configmap CONFIGMAP -n NAMESPACE -o yaml`); label {node} with one of them "
        "(`kubectl label node {node} nvidia.com/device-plugin.config=KEY --overwrite`) or set a "
        "default (Helm `config.default`; GPU Operator `devicePlugin.config.default`); then "
        "`{plugin_restart}`",
        "config",
        aliases=("specified config",),
        texts=(
            "no config was set, no default was provided, and all fallbacks failed",
            "no configuration files available",
        ),
        source=_NVIDIA + "cmd/config-manager/main.go",
    ),
    Entry(
        "mps-shm-mount-failed",
        "MPS control daemon cannot mount its shared memory",
        "the device plugin's MPS control daemon could not mount the tmpfs its MPS servers use as "
        "shared memory (under /mps/shm): its container is not privileged (no CAP_SYS_ADMIN) or the "
        "host directory it mounts into lacks Bidirectional mount propagation, so MPS sharing does "
        "not start on the node",
        "run the MPS control daemon as the plugin's Helm chart deploys it (privileged, "
        "`mountPropagation: Bidirectional` on its /mps volume; `kubectl get ds -A | grep "
        "mps-control-daemon`, `kubectl get ds NAME -n NAMESPACE -o yaml`), then restart its pod on "
        "{node}",
        "config",
        aliases=("error mounting",),
        source=_NVIDIA + "cmd/mps-control-daemon/mount/mount-shm.go",
    ),
    Entry(
        "mps-daemon-setup-failed",
        "MPS control daemon cannot set up the GPU",
        "the device plugin's MPS control daemon could not prepare the GPU for MPS: setting its "
        "compute mode to EXCLUSIVE_PROCESS (or back to DEFAULT), its active thread percentage or "
        "pinned memory limit through nvidia-smi and nvidia-cuda-mps-control failed, it could not "
        "label its pipe directory for SELinux (`lsetxattr ... permission denied`: the container "
        "may not relabel files), or the control daemon did not start (the driver's MPS binaries "
        "are missing from the driver root it mounts, the container is not privileged, or the GPU "
        "is held by a process that keeps another compute mode); the rest of the line is "
        "nvidia-smi's, SELinux's or MPS's error",
        "on {node}: `nvidia-smi -q -d COMPUTE` and `nvidia-smi --query-compute-apps=pid,"
        "process_name --format=csv`; stop what holds the GPU, check that the driver root the daemon "
        "mounts has nvidia-cuda-mps-control (`ls /usr/bin/nvidia-cuda-mps-control` on a host "
        "driver), run the daemon as the chart deploys it (privileged; with SELinux enforcing, the "
        "spc_t type), then restart the mps-control-daemon pod on {node}",
        "mps",
        texts=(
            "error setting compute mode",
            "error setting active thread percentage",
            "error setting pinned memory limit for device",
            "failed to start NVIDIA MPS command",
            "Failed to start MPS daemon",
            "error setting SELinux context",
        ),
        source=_NVIDIA + "cmd/mps-control-daemon/mps/daemon.go",
    ),
    Entry(
        "mps-mig-unsupported",
        "MPS sharing configured on MIG devices",
        "the device plugin's config asks for MPS sharing on a node whose GPUs are in MIG mode: the "
        "plugin does not support MPS on MIG devices, so the plugin exits (or the MPS control daemon "
        "skips the node)",
        "use time-slicing for MIG devices (`sharing.timeSlicing` in the plugin config) or disable MIG "
        "on {node}; label the node for another plugin config (`kubectl label node {node} "
        "nvidia.com/device-plugin.config=CONFIG --overwrite`), then `{plugin_restart}`",
        "config",
        texts=(
            "sharing using MPS is not supported for MIG devices",
            "MPS sharing is not supported for MIG devices",
        ),
        source=_NVIDIA + "internal/plugin/mps.go",
    ),
    Entry(
        "mig-profile-unreadable",
        "device plugin cannot read a MIG device's profile",
        "NVML could not give the device plugin the profile of a MIG device it enumerated: the MIG "
        "layout is being changed (the MIG manager is reconfiguring the GPU), a GPU instance has no "
        "compute instance yet, or the driver is too old for the plugin's NVML calls; the plugin "
        "cannot build its device list and exits",
        "on {node}: `nvidia-smi mig -lgi` and `nvidia-smi mig -lci` (every GPU instance needs a "
        "compute instance); let the MIG manager finish (`kubectl get node {node} -o "
        "jsonpath='{{.metadata.labels.nvidia\\.com/mig\\.config\\.state}}'`) or apply the layout "
        "again, update the driver if it is older than the plugin supports, then `{plugin_restart}`",
        "mig",
        texts=("error getting MIG profile for MIG device at index",),
        source=_NVIDIA + "internal/rm/device_map.go",
    ),
    Entry(
        "mig-caps-missing",
        "MIG capability device nodes missing",
        "the device plugin cannot find the MIG capability device nodes (/dev/nvidia-caps/"
        "nvidia-capN, named in /proc/driver/nvidia/capabilities/gpuN/mig/) that a container needs "
        "to use a MIG device: they were not created on the host (nvidia-modprobe creates them when "
        "a MIG device is first opened there) or /proc/driver/nvidia is not visible in the plugin",
        "on {node}: `ls -l /dev/nvidia-caps/` and `ls /proc/driver/nvidia/capabilities/gpu*/mig/`; "
        "`sudo nvidia-smi -L` on the host creates the missing nodes (with a driver container: "
        "`kubectl -n gpu-operator exec ds/nvidia-driver-daemonset -c nvidia-driver-ctr -- nvidia-smi "
        "-L`), then `{plugin_restart}`",
        "mig",
        texts=(
            "missing MIG GPU instance capability path",
            "error getting MIG capability device paths",
        ),
        source=_NVIDIA + "internal/rm/nvml_devices.go",
    ),
    Entry(
        "gfd-nodefeature-failed",
        "gpu-feature-discovery cannot write its NodeFeature object",
        "gpu-feature-discovery publishes its labels through Node Feature Discovery's NodeFeature "
        "API (useNodeFeatureAPI) and could not read, create or update its NodeFeature object: the "
        "NodeFeature CRD is not installed (an NFD older than v0.14, or deployed without its CRDs), "
        "GFD's service account may not write nodefeatures in its namespace, or GFD runs without "
        "its node name (NODE_NAME unset: the object is named `nvidia-features-for-` and is "
        "invalid); the node gets no "
        "nvidia.com/gpu.* labels, so nothing selecting on them lands there",
        "`kubectl get crd nodefeatures.nfd.k8s-sigs.io`; install NFD v0.14 or later with its CRDs, "
        "or turn the API off for GFD (Helm `gfd.useNodeFeatureAPI=false`, GPU Operator "
        "`gfd.env` USE_NODE_FEATURE_API=false); check the permission with `kubectl auth can-i "
        "create nodefeatures.nfd.k8s-sigs.io -n NAMESPACE --as=system:serviceaccount:NAMESPACE:"
        "SERVICEACCOUNT`",
        "config",
        texts=(
            "failed to get NodeFeature object",
            "failed to create NodeFeature object",
            "failed to update NodeFeature object",
        ),
        source=_NVIDIA + "internal/lm/output.go",
    ),
    Entry(
        "cdi-spec-failed",
        "device plugin cannot write its CDI spec",
        "the device plugin, set to hand GPUs out through CDI, could not create its CDI handler or "
        "spec file (nvidia-ctk or the driver root it was given is wrong), so it does not start",
        "check the plugin's `nvidiaDriverRoot` / `nvidiaCTKPath` settings against {node} (`ls "
        "/usr/bin/nvidia-ctk`, the driver root), or switch `deviceListStrategy` back to envvar; then "
        "`{plugin_restart}`",
        "toolkit",
        # the device plugin's lowercase wording; the DRA driver's "unable to create CDI spec file
        # for claim" and "CDI handler" are the dra catalogue's
        aliases=("unable to create cdi spec file", "unable to create cdi handler"),
        source=_NVIDIA + "cmd/nvidia-device-plugin/plugin-manager.go",
    ),
)

CATALOGUE = Catalogue(
    id="kubelet",
    title="kubelet device manager and device plugins",
    source="https://github.com/kubernetes/kubernetes/tree/v1.34.0/pkg/kubelet/cm/devicemanager",
    version="Kubernetes 1.34 (device plugin API v1beta1; older kubelets' texts kept); NVIDIA "
    "k8s-device-plugin v0.20.0",
    entries=(*_REGISTRATION, *_ALLOCATION, *_NVIDIA_PLUGIN),
    applies_to=("plugin-log", "events", "node", "runtime", "operand"),
    readers=(
        # the MPS control daemon's log: "[2024-04-29 11:22:10.446 Control    73] Server 95 exited
        # with status 1", and the legacy (pre-Volta) server's "Legacy Server   425] Failed to start"
        r"(?-i:Control) +\d+\] Server \d+ (?P<code>exited with status) [1-9]",
        r"(?-i:Legacy Server) +\d+\] (?P<code>Failed to start) :",
        # "dial unix /var/lib/kubelet/device-plugins/kubelet.sock: connect: no such file or directory"
        r"dial unix (?P<socket>/\S{0,200}?kubelet\.sock): "
        r"(?P<code>connect: (?:no such file or directory|connection refused|permission denied))",
        # "failed to create FS watcher for /var/lib/kubelet/device-plugins/: too many open files"
        r"failed to create (?:FS|fsnotify) watcher[^:\n]{0,200}: "
        r"(?P<code>too many open files|no such file or directory)",
        r"the ResourceName \\?\"?(?P<resource>[^\s\"\\]{1,200})\\?\"? (?P<code>is invalid)",
        # "endpoint &{{...} nvidia.com/gpu ...} has been stopped" (the endpoint struct printed)
        r"\bendpoint &\{[^\n]{0,300}? (?P<code>has been stopped)",
        r"GRPC server for '(?P<resource>[^']{1,200})' (?P<code>crashed with error)",
        # "Allocate failed due to unknown Device Plugin nvidia.com/gpu" (a reader: the text's words
        # are in every healthy log)
        r"(?P<code>unknown Device Plugin) \S",
        # kubelet admission (lifecycle/predicate.go) for an extended resource: the event's reason
        # "OutOfnvidia.com/gpu" and its message
        r"(?P<code>Node didn't have enough resource): (?P<resource>[\w.-]{1,100}/[\w.-]{1,100}), requested",
        r"\b(?P<code>OutOf)(?P<resource>[a-z0-9][\w.-]{0,100}/[\w.-]{1,100})",
        r"(?P<code>(?-i:unable to create cdi (?:spec file|handler)))(?! for claim)",
        # NVIDIA's config-manager: "specified config my-config does not exist"
        r"(?P<code>(?-i:specified config)) \S{1,200} does not exist",
        # NVIDIA's MPS control daemon: "error mounting /mps/shm as tmpfs: operation not permitted"
        r"(?P<code>(?-i:error mounting)) /\S{0,200} as tmpfs",
    ),
)
