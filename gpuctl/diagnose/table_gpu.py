"""GPU and driver rows: nvidia-smi/NVML errors, the device plugin's log, the kernel driver (dmesg)."""

from __future__ import annotations

from gpuctl.diagnose.signatures import DRIVER_FIX, HARDWARE_FIX, REBOOT_FIX, TOOLKIT_FIX, sig

_CDI_FIX = (
    "recreate the pod; to stop it recurring, give GPUs to containers through CDI (`nvidia-ctk "
    "runtime configure --cdi.enabled`, GPU operator `cdi.enabled=true`) or create the /dev/char "
    "links with `nvidia-ctk system create-dev-char-symlinks --create-all` on {node}"
)

GPU = (
    # Which component could not load libnvidia-ml.so, from its own wording: dcgm-exporter's
    # (internal/pkg/nvmlprovider/provider.go), then the device plugin's (go-nvml's "could not load
    # NVML library", its factory's "Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND"); any other
    # pod's bare ERROR_LIBRARY_NOT_FOUND is the NVML catalogue's entry, whose fix restarts the pod
    # that printed it. nvidia-smi's row below also matches the device plugin's wording.
    sig(
        "exporter.nvml-library-missing", "operand", "toolkit",
        r"Cannot init NVML library; err: (?:ERROR_LIBRARY_NOT_FOUND|could not load NVML library)",
        "dcgm-exporter cannot load libnvidia-ml.so: its pod does not run under the NVIDIA runtime "
        "(the nvidia runtime is not the node's default and the exporter's pod has no "
        "`runtimeClassName: nvidia`; the standalone helm chart leaves it empty), so the toolkit "
        "injects no driver libraries into it; on GKE (Google's driver installer, no NVIDIA runtime) "
        "the host's driver directory is not mounted into it, or the exporter started before GKE's "
        "driver installer had finished (a start-up race: releases before the NVML retry of "
        "dcgm-exporter#717 stay without GPU metrics though the driver is there a minute later); or "
        "the driver or toolkit is not installed on the node",
        "set `runtimeClassName: nvidia` on the dcgm-exporter DaemonSet (`helm upgrade dcgm-exporter "
        "gpu-helm-charts/dcgm-exporter --reuse-values --set runtimeClassName=nvidia`; `kubectl get "
        "runtimeclass nvidia` must exist), or make nvidia the default runtime on {node} (`sudo "
        "nvidia-ctk runtime configure --runtime=containerd --set-as-default && sudo systemctl restart "
        "containerd`); on GKE mount the host's /home/kubernetes/bin/nvidia at /usr/local/nvidia in "
        "the exporter and add /usr/local/nvidia/lib64 to its LD_LIBRARY_PATH, and where `nvidia-smi` "
        "works on {node} now (the installer has finished) upgrade dcgm-exporter to a release that "
        "retries NVML until the driver is installed; then delete the "
        "exporter's pod on {node} (`kubectl get pods -A -o wide "
        "--field-selector spec.nodeName={node} | grep dcgm-exporter`) so it restarts",
        also=("plugin-log", "events"),
    ),
    sig(
        "plugin.nvml-library-missing", "plugin-log", "toolkit",
        r"could not load NVML library|Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND",
        "the device plugin cannot load libnvidia-ml.so: the container does not run under the "
        "NVIDIA runtime (toolkit missing or not the default runtime) or the driver is not installed",
        TOOLKIT_FIX,
    ),
    # --- nvidia-smi inside the verification pod ---------------------------------------------
    sig(
        "smi.driver-mismatch", "nvidia-smi", "driver",
        r"Failed to initialize NVML: Driver/library version mismatch",
        "the loaded kernel module and the NVIDIA user-space libraries differ (driver upgraded, "
        "node not rebooted; on Ubuntu/Debian often unattended-upgrades installing a new driver "
        "release overnight)",
        "reboot {node} (`kubectl drain {node} --ignore-daemonsets` first), then `gpuctl verify`; "
        "`grep -i nvidia /var/log/unattended-upgrades/unattended-upgrades.log /var/log/apt/"
        "history.log` shows an unplanned upgrade: hold the driver (`sudo apt-mark hold "
        "'nvidia-*' 'libnvidia-*'`) or list it in Unattended-Upgrade::Package-Blacklist",
        also=("plugin-log",),
    ),
    sig(
        "smi.driver-not-loaded", "nvidia-smi", "driver",
        r"couldn't communicate with the NVIDIA driver|NVIDIA driver is not loaded",
        "nvidia-smi cannot talk to the kernel driver. `lsmod | grep nvidia` on the node tells the "
        "cases apart: no module loaded, the driver is not installed, not built for the running "
        "kernel or refused at load (`sudo modprobe nvidia` prints why: Secure Boot key rejected, "
        "module not found); module loaded, the /dev/nvidia* device nodes are missing or not given "
        "to the container",
        DRIVER_FIX,
    ),
    sig(
        # Never matched on its own: scan.find_all puts it in place of smi.driver-not-loaded where
        # the text shows nvidia-smi ran in a container (container_context.py).
        "smi.driver-not-injected", "nvidia-smi", "runtime",
        r"(?!x)x",
        "nvidia-smi ran in a container that was given no GPU: the container runtime did not inject "
        "the driver (its libraries and /dev/nvidia* nodes), because the container was started "
        "without the NVIDIA runtime (`docker run` without `--gpus all` or `--runtime=nvidia`; a pod "
        "without `runtimeClassName: nvidia` where nvidia is not containerd's default runtime), "
        "without CDI devices, or without an `nvidia.com/gpu` limit, so NVIDIA_VISIBLE_DEVICES "
        "named no GPU; an image that bundles its own NVIDIA driver libraries fails the same way",
        "start the container with the GPUs: `docker run --gpus all IMAGE nvidia-smi` (CDI: `--device "
        "nvidia.com/gpu=all`); in Kubernetes give the pod `runtimeClassName: nvidia` and "
        "`resources.limits: nvidia.com/gpu: 1`; if `nvidia-smi` works on {node} itself and still "
        "not in such a container, configure the runtime (`sudo nvidia-ctk runtime configure "
        "--runtime=containerd` or `--runtime=docker`, then restart it) and remove driver libraries "
        "the image bundles",
    ),
    sig(
        "smi.nvml-unknown-error", "nvidia-smi", "runtime",
        r"Failed to initialize NVML: (?:Unknown Error|ERROR_UNKNOWN)",
        "the container has no access to its GPU device nodes: systemd (e.g. `systemctl "
        "daemon-reload`) rewrote the container's device cgroup after it started, a known "
        "runc/systemd issue with GPUs not injected via CDI; or, when it fails from the first start, "
        "`no-cgroups = true` in /etc/nvidia-container-runtime/config.toml (set for rootless "
        "Podman/Docker) made the start hook skip the device cgroup of a rootful engine's container",
        _CDI_FIX + "; if it fails at once, `grep no-cgroups /etc/nvidia-container-runtime/config.toml` "
        "on {node}: a rootful engine needs `no-cgroups = false` (`sudo nvidia-ctk config --set "
        "nvidia-container-cli.no-cgroups=false --in-place`), rootless engines should use CDI "
        "(`--device nvidia.com/gpu=all`) instead",
        also=("plugin-log",),
    ),
    sig(
        "gpu.lost", "nvidia-smi", "hardware",
        r"GPU is lost",
        "a GPU crashed and the driver lost it; every allocation on the node can fail until a reboot",
        HARDWARE_FIX, also=("plugin-log", "kernel", "events", "runtime"),
    ),
    sig(
        "gpu.fabric-not-ready", "nvidia-smi", "driver",
        r"system not yet initiali[sz]ed|cudaErrorSystemNotReady|CUDA_ERROR_SYSTEM_NOT_READY",
        "CUDA cannot start (error 802): the GPUs are joined by NVSwitches and NVIDIA Fabric Manager "
        "is not running on the node, or its version differs from the driver's; nvidia-smi still lists "
        "the GPUs",
        "on {node}: `systemctl status nvidia-fabricmanager` and `journalctl -u nvidia-fabricmanager`; "
        "install nvidia-fabricmanager of exactly the driver's version and start it (`sudo systemctl "
        "enable --now nvidia-fabricmanager`; `gpuctl bootstrap --phase host -i INVENTORY --limit {node}` "
        "does both), then `gpuctl preflight --limit {node}`",
        also=("plugin-log", "events", "runtime", "cuda-workload", "nccl-workload"),
    ),
    sig(
        "fabric.version-mismatch", "host", "driver",
        r"fabric manager NVIDIA GPU driver interface version (?P<fm>\S+) (?:don.t|doesn't) "
        r"match with driver version (?P<driver>\d+(?:\.\d+)*)",
        "NVIDIA Fabric Manager {fm} differs from the loaded driver {driver} and refuses to start, so "
        "on NVSwitch systems CUDA fails with error 802 (system not yet initialized)",
        "on {node}: install nvidia-fabricmanager of exactly the driver's version {driver} (`apt-cache "
        "policy 'nvidia-fabricmanager*'`), or reboot if the driver was upgraded and the old module is "
        "still loaded; `gpuctl bootstrap --phase host -i INVENTORY --limit {node}` installs the pair",
        also=("kernel",),
    ),
    sig(
        "fabric.no-nvswitch", "host", "config",
        r"NVSwitch driver failed with error:\s*WARNING Nothing to do",
        "Fabric Manager found no NVSwitch it can manage and exits: on PCIe cards and NVLink "
        "bridges the GPUs are not joined by NVSwitches and do not need it; on NVLink 5 boards "
        "(HGX/DGX B200, B300, GB200) it means the NVLink Subnet Manager (nvlsm) Fabric Manager "
        "needs there is not running, and the GPUs stay out of the fabric (CUDA error 802)",
        "on {node}: if `lspci | grep -i nvswitch` lists no NVSwitch (PCIe or NVLink-bridge GPUs), "
        "`sudo systemctl disable --now nvidia-fabricmanager`; on B200/B300/GB200 install "
        "nvlsm and the matching nvidia-fabricmanager, load ib_umad (`sudo modprobe ib_umad`) and "
        "start it through its unit (`sudo systemctl restart nvidia-fabricmanager`, which runs "
        "nvidia-fabricmanager-start.sh)",
        also=("kernel",),
    ),
    sig(
        "gpu.memory-repair-pending", "nvidia-smi", "hardware",
        r"Pending {2,}: Yes\b",
        "a GPU memory repair is pending (`nvidia-smi -q`: remapped rows; retired pages or HBM "
        "channel repair on other GPUs): it takes effect at the next GPU reset, until then the GPU "
        "keeps using the faulty memory",
        "drain {node} (`kubectl drain {node} --ignore-daemonsets`), reset the GPU (`nvidia-smi -r -i "
        "GPU`) or reboot; if `nvidia-smi -q -d ROW_REMAPPER` then says `Remapping Failure Occurred : "
        "Yes`, replace the GPU",
    ),
    # An Xid 79 line without these words is the Xid catalogue's (catalogues/xid.py).
    sig(
        "gpu.fallen-off-bus", "kernel", "hardware",
        r"fallen off the bus",
        "a GPU stopped responding on PCIe (Xid 79: hardware, power or thermal fault)",
        HARDWARE_FIX, also=("nvidia-smi", "plugin-log"),
    ),
    sig(
        "smi.device-handle-error", "nvidia-smi", "hardware",
        r"Unable to (?:determine|detect) the device handle for GPU ?(?P<bus>[0-9A-Fa-f:.]+): Unknown Error",
        "NVML cannot open GPU {bus}: the GPU stopped answering. It fell off the bus (PCIe link "
        "or GPU fault), or shut itself down after overheating (a passively cooled data-center "
        "card such as a Tesla P4/T4/A2/L4 without forced airflow reaches its shutdown "
        "temperature within minutes of load) or a power fault (a loose power cable, a failing "
        "power supply), or is in a bad state",
        HARDWARE_FIX + "; if it followed load or the card is passively cooled, check cooling and "
        "power first: `dmesg | grep -i -e thermal -e 'fallen off'`, after the power-cycle "
        "`nvidia-smi -q -d TEMPERATURE,PERFORMANCE` (the temperature against `GPU Shutdown Temp`, "
        "HW/SW Thermal Slowdown), give the card forced airflow (a fan or duct) and check its power "
        "cables and the power supply",
        also=("plugin-log",),
    ),
    sig(
        "smi.nvml-missing", "nvidia-smi", "toolkit",
        # nvidia-smi's own words: "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system."
        r"NVML library not found|could not load NVML library|libnvidia-ml\.so[^ ]* cannot open|"
        r"couldn't find libnvidia-ml\.so",
        "the container has nvidia-smi but cannot load the NVML library: the NVIDIA runtime did not "
        "inject the driver libraries, or the container's linker cache does not list them",
        TOOLKIT_FIX + "; if the libraries are in the container, check `ldconfig` in "
        "/etc/nvidia-container-runtime/config.toml on {node}",
    ),
    sig(
        "smi.no-devices", "nvidia-smi", "runtime",
        r"No devices were found",
        "nvidia-smi sees no GPU in the container: the runtime injected no device",
        "check the device plugin on {node} and that the pod requested nvidia.com/gpu; "
        "`kubectl describe node {node}`",
    ),
    sig(
        # nvidia-smi prints `ERR!` in a table cell (power, fan, temperature, clocks) whose NVML
        # query returned an error; `[N/A]`/`N/A` is a value the GPU does not report at all.
        "smi.field-err", "nvidia-smi", "hardware",
        r"\|[^|\n]*(?<![\w-])ERR!(?= / |\s)",
        "nvidia-smi could not read a sensor or value of the GPU (its NVML query for that field, "
        "e.g. power draw, fan speed or temperature, returned an error): once, a transient "
        "sensor-read failure (the GPU's power monitor or SMBus busy, common on some boards and "
        "VMs) that needs no action; every time, a failing sensor, fan or power monitor of the "
        "GPU, or a driver too old for the board",
        "on {node}: rerun `nvidia-smi` and `nvidia-smi -q -d POWER,TEMPERATURE,PERFORMANCE` a few "
        "times (`nvidia-smi --query-gpu=power.draw,fan.speed,temperature.gpu --format=csv -l 5`): "
        "if the ERR! is gone, ignore it; if it stays, read `sudo dmesg | grep -i -e NVRM -e Xid`, "
        "update the driver, then drain {node} and reset the GPU (`sudo nvidia-smi -r -i GPU`) or "
        "power-cycle it, and replace the GPU if it persists",
        transient=True,
    ),
    sig(
        "smi.not-found", "nvidia-smi", "runtime",
        # Only nvidia-smi's own name: another program missing from an image is the image's fault
        # (container-runtime.exec-not-found). Not the DRA kubelet plugin's init container listing
        # what it found under the driver root (`nvidia-smi: not found, libnvidia-ml.so.1: ...`,
        # dra.driver-root-not-ready).
        r"\"nvidia-smi\": executable file not found|nvidia-smi: (command )?not found(?!, libnvidia-ml)",
        "nvidia-smi does not exist in the container: the NVIDIA runtime did not inject it (the "
        "runtime is not configured on the node, the cluster needs a RuntimeClass, or on kind/nvkind "
        "the host's toolkit does not accept the device list as volume mounts)",
        "rerun with `gpuctl verify --runtime-class nvidia` if the nvidia runtime is not the default; "
        "otherwise " + TOOLKIT_FIX + "; on kind (nvkind) or other nested-container nodes, where the "
        "device plugin hands GPUs over as volume mounts, set `accept-nvidia-visible-devices-as-"
        "volume-mounts = true` and `accept-nvidia-visible-devices-envvar-when-unprivileged = false` "
        "in /etc/nvidia-container-runtime/config.toml on the host (`sudo nvidia-ctk config --in-place "
        "--set accept-nvidia-visible-devices-as-volume-mounts=true`), restart docker and recreate "
        "the kind cluster",
    ),
    # --- kernel driver (dmesg / journal) --------------------------------------------------------
    sig(
        "kernel.api-mismatch", "kernel", "driver",
        r"NVRM: API mismatch",
        "the NVIDIA user-space driver and the loaded kernel module have different versions: "
        "either the module loaded before a driver upgrade is still running (a reboot loads the "
        "new one), or the module installed on disk is itself of another version than the "
        "libraries (a kmod/DKMS package or OS image whose kernel module lags or leads the "
        "user-space packages), which a reboot does not change",
        "on {node}: compare `modinfo -F version nvidia` (the module on disk), `cat "
        "/proc/driver/nvidia/version` (the loaded one) and the libraries' version (`ls "
        "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.*`, `dpkg -l | grep -e nvidia-kernel -e "
        "nvidia-dkms -e libnvidia-compute`, RHEL `rpm -qa 'kmod-nvidia*' 'nvidia-driver*'`); if "
        "the module on disk matches the libraries, " + REBOOT_FIX + "; if not, install the "
        "kernel-module package (kmod/DKMS, and its GSP firmware) of exactly the libraries' "
        "version, or the libraries of the module's version (on an image-based OS, an image whose "
        "kmod matches), then reboot",
    ),
    # --- device plugin log (NVIDIA k8s-device-plugin v0.7-v0.17) -----------------------------
    sig(
        "plugin.incompatible-strategy", "plugin-log", "toolkit",
        r"Incompatible strategy detected auto|invalid device discovery strategy",
        "the device plugin found neither NVML nor CDI devices: the NVIDIA Container Toolkit is not "
        "configured for the container runtime on this node",
        TOOLKIT_FIX,
    ),
    sig(
        "plugin.no-devices", "plugin-log", "plugin",
        r"No devices found\. Waiting indefinitely",
        "the device plugin found no GPU on this node and advertises none",
        "if {node} has GPUs: `lspci -d 10de:` and `nvidia-smi` on the node, then fix the driver/"
        "toolkit (`gpuctl preflight --limit {node}`); if the driver came up after the plugin "
        "(a reboot, a driver container still installing), restart the plugin pod on {node}; if "
        "the node has no GPUs, keep the plugin off it with a nodeSelector",
    ),
    sig(
        "plugin.driver-mismatch", "plugin-log", "driver",
        r"Driver/library version mismatch",
        "the kernel module and the user-space NVIDIA libraries have different versions (driver "
        "upgraded without a reboot)",
        REBOOT_FIX,
    ),
    # The plugin's consequence of an Xid: the line naming the Xid is the Xid catalogue's
    # (catalogues/xid.py), the root this row follows in a log that has both.
    sig(
        "plugin.xid", "plugin-log", "plugin",
        r"device marked unhealthy|XidCriticalError(?!: Xid=\d)",
        "the device plugin marked one or more GPUs unhealthy after a critical XID error; the node "
        "advertises fewer allocatable GPUs",
        "find the XID in the device plugin log on {node} (`gpuctl verify -o json` shows it) and "
        "`dmesg | grep -i xid` on the node; drain it and reset the GPU "
        "(`nvidia-smi -r`) or reboot; replace hardware if the XID repeats",
    ),
    sig(
        "plugin.driver-not-loaded", "plugin-log", "driver",
        # (not cuFile's `nvidia-fs.ko driver not loaded`: GPUDirect Storage's module, cuda-libs)
        r"couldn't communicate with the NVIDIA driver|(?<!nvidia-fs\.ko )Driver Not Loaded|"
        r"ERROR_DRIVER_NOT_LOADED",
        "the NVIDIA kernel driver is not loaded on the node",
        DRIVER_FIX,
    ),
    sig(
        # The lines that only say the plugin did not get going; the reason is in the rest of the
        # line or the line before, which the kubelet catalogue reads (kubelet.register-timeout,
        # kubelet.kubelet-socket-missing, kubelet.unknown-registration-service, ...).
        "plugin.registration-failed", "plugin-log", "plugin",
        r"Could not register device plugin|failed to register (?:plugin )?with kubelet|"
        r"Could not contact Kubelet|Could not start device plugin",
        "the device plugin could not start serving its socket or register with the kubelet, so the "
        "node advertises no GPU; the rest of the line (or the line before it) says why",
        "read the whole device plugin log on {node} for the error before this line; check that "
        "/var/lib/kubelet/device-plugins/kubelet.sock exists on {node} and is the directory the "
        "plugin mounts, and that the plugin release supports the kubelet's version (`kubectl get "
        "node {node} -o wide`), then `{plugin_restart}`",
        generic=True,
    ),
    sig(
        "plugin.mig-mixed-types", "plugin-log", "mig",
        r"More than one MIG device type present",
        "the device plugin runs the `single` MIG strategy but the node's GPUs carry more than one "
        "MIG profile",
        "use `--mig-strategy=mixed` for the device plugin, or repartition {node} with one profile "
        "(`nvidia.com/mig.config=all-1g.10gb` with the MIG manager)",
    ),
    sig(
        "plugin.mig-misconfigured", "plugin-log", "mig",
        r"No MIG devices (?:present|associated)|invalid MIG configuration|was not configured correctly|"
        r"has no MIG devices configured",
        "MIG mode is enabled on a GPU that has no MIG instances",
        "create the instances on {node} (`nvidia-smi mig -cgi PROFILES -C`, or the MIG manager's "
        "`nvidia.com/mig.config` label), or disable MIG mode (`nvidia-smi -mig 0`)",
    ),
    sig(
        "plugin.mps-daemon-missing", "plugin-log", "sharing",
        r"error waiting for MPS daemon",
        "the device plugin is configured for MPS sharing but no MPS control daemon answers on the "
        "node, so it advertises no GPU",
        "run NVIDIA's MPS control daemon on {node}: it runs only on nodes labelled "
        "`nvidia.com/mps.capable=true` (`kubectl label node {node} nvidia.com/mps.capable=true`, or "
        "deploy GPU feature discovery); `gpuctl render --sharing mps` renders the daemon",
    ),
    sig(
        "plugin.mig-permissions", "plugin-log", "mig",
        # The plugin walking its devices; NVML's Insufficient Permissions elsewhere is nvml.4.
        r"error (?:visiting|getting) (?:MIG )?device[^\n]{0,200}?Insufficient Pe\w*issions",
        "the device plugin may not read the MIG devices of the node",
        "set NVIDIA_MIG_MONITOR_DEVICES=all on the device plugin container (the Helm chart and the "
        "GPU operator do), then restart it",
    ),
)  # fmt: skip
