"""Container runtime rows: the NVIDIA start hook (nvidia-container-cli), CDI, containerd/runc.

The same hook error reaches gpuctl as a container's StartError message (read with nvidia-smi's
output), as a pod event, or pasted from a journal, so these rows apply to all of those sources.
"""

from __future__ import annotations

from gpuctl.defaults import VERIFY_IMAGE
from gpuctl.diagnose.cuda import min_driver_for
from gpuctl.diagnose.signatures import DRIVER_FIX, HARDWARE_FIX, REBOOT_FIX, TOOLKIT_FIX, sig

_ALSO = ("nvidia-smi", "events", "plugin-log")
# nvcr.io/nvidia/cuda:12.4.1-base-... → CUDA 12.4 → its oldest driver.
_VERIFY_IMAGE_MIN_DRIVER = min_driver_for(".".join(VERIFY_IMAGE.rsplit(":", 1)[1].split(".")[:2]))

RUNTIME = (
    # Before every "Driver Not Loaded" row: nvidia-ctk's CDI generation (the nvidia-cdi-refresh
    # unit at boot, or by hand) ran before the kernel module was loaded. The driver is usually
    # fine minutes later; the spec is what is missing. Source: nvidia-container-toolkit
    # cmd/nvidia-ctk/cdi/generate (v1.18) and its deployments/systemd/nvidia-cdi-refresh.service.
    sig(
        "runtime.cdi-generated-before-driver", "runtime", "toolkit",
        r"(?:failed to generate CDI spec|Could not determine driver version)\b.*"
        r"(?:Driver Not Loaded|ERROR_DRIVER_NOT_LOADED)",
        "nvidia-ctk could not generate the CDI spec because the NVIDIA kernel driver was not loaded "
        "when it ran: the nvidia-cdi-refresh unit (or a provisioning step) ran before the driver "
        "was loaded at boot, so the node has no or a stale /var/run/cdi/nvidia.yaml and GPU "
        "containers that ask for CDI devices cannot start",
        "on {node}: check the driver is loaded now (`nvidia-smi`; else `sudo modprobe nvidia`), "
        "then regenerate the spec: `sudo systemctl reset-failed nvidia-cdi-refresh.service && "
        "sudo systemctl restart nvidia-cdi-refresh.service` (or `sudo nvidia-ctk cdi generate "
        "--output=/var/run/cdi/nvidia.yaml`); if it recurs at every boot, order the unit after the "
        "driver's load (a systemd drop-in with After=/Wants= the unit that loads the driver) or "
        "rerun `gpuctl bootstrap --phase host -i INVENTORY --limit {node}`",
        also=_ALSO,
    ),
    sig(
        "runtime.driver-not-loaded", "runtime", "driver",
        r"nvml error: driver not loaded",
        "the container start hook cannot reach the NVIDIA kernel driver: it is not installed or "
        "not loaded on the node",
        DRIVER_FIX, also=_ALSO,
    ),
    sig(
        "runtime.driver-mismatch", "runtime", "driver",
        r"nvml error: driver/library version mismatch",
        "the loaded kernel module and the NVIDIA user-space libraries have different versions "
        "(driver upgraded, node not rebooted)",
        REBOOT_FIX, also=_ALSO,
    ),
    sig(
        "runtime.nvml-insufficient-permissions", "runtime", "toolkit",
        r"nvml error: insufficient permissions",
        "the start hook's NVML may not open the GPU device nodes: /dev/nvidiactl or /dev/nvidia* "
        "have restrictive modes or SELinux labels, or `user` under [nvidia-container-cli] in "
        "/etc/nvidia-container-runtime/config.toml makes the hook drop root",
        "on {node}: `ls -lZ /dev/nvidia*` (the driver creates them crw-rw-rw-); comment out `user` in "
        "/etc/nvidia-container-runtime/config.toml; with SELinux enforcing, `sudo nvidia-container-cli "
        "-k list | sudo restorecon -v -f -`; then recreate the pod",
        also=_ALSO,
    ),
    sig(
        "runtime.cuda-requirement", "runtime", "driver",
        r"unsatisfied condition: cuda\s*>=\s*(?P<cuda>\d+\.\d+)",
        "the image needs CUDA {cuda}, newer than the node's driver supports (CUDA {cuda} needs "
        "driver {min_driver} or newer)",
        "upgrade the driver on {node} to {min_driver}+ (`gpuctl bootstrap --phase host -i INVENTORY "
        "--limit {node}`), or use an image built for an older CUDA; gpuctl's default verification "
        f"image {VERIFY_IMAGE} needs driver {_VERIFY_IMAGE_MIN_DRIVER}+, pick another "
        "with `gpuctl verify --image`",
        also=_ALSO,
    ),
    # ldconfig ran but was killed: its path is right, so the config fix of runtime.ldcache is
    # wrong. The signal says by whom. Source: libnvidia-container src/utils.c (the "terminated
    # with signal" text of its child wait), v1.17; signal numbers per signal(7).
    sig(
        "runtime.ldconfig-killed", "runtime", "toolkit",
        r"ldconfig\S*(?: terminated with signal |[^\n]*signal: )(?P<signal>\d+|killed)",
        "the start hook's ldconfig (run inside the new container's root) was killed (signal "
        "{signal}): 9 (killed) is a kill, usually the OOM killer or a memory limit that leaves it no room; "
        "31 (SIGSYS) is a seccomp profile refusing one of its system calls (an old "
        "libseccomp/runtime with a newer glibc); 11 is a crash on a corrupt ld.so.cache in the image",
        "on {node}: `dmesg | grep -iE 'killed process|oom|seccomp|audit'` names the killer; for 9 free "
        "memory or raise the container's memory limit; for 31 upgrade the container runtime and "
        "libseccomp (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`); for 11 rebuild "
        "the image's cache (`ldconfig` in the image); then recreate the pod",
        also=_ALSO,
    ),
    sig(
        "runtime.ldcache", "runtime", "toolkit",
        r"ldcache error",
        "the start hook could not run ldconfig for the container: the toolkit's ldconfig path does "
        "not exist on this distribution (e.g. /sbin/ldconfig.real outside Debian/Ubuntu) or it failed",
        "on {node}: check `ldconfig` in /etc/nvidia-container-runtime/config.toml ('@/sbin/ldconfig' "
        "on RHEL/SUSE, '@/sbin/ldconfig.real' on Debian/Ubuntu), then retry",
        also=_ALSO,
    ),
    sig(
        "runtime.load-library", "runtime", "driver",
        r"load library failed: (?P<library>lib[\w.+-]*?\.so(?:\.\d+)*)",
        "the start hook cannot load {library}: the driver's user-space libraries are not installed "
        "on the node (driver missing or incomplete)",
        DRIVER_FIX, also=_ALSO,
    ),
    sig(
        "runtime.cdi-unresolvable", "runtime", "toolkit",
        r"unresolvable CDI devices",
        "the runtime was asked for a CDI device that no CDI specification on the node defines "
        "(spec not generated, stale after a driver or MIG change, or not readable); for a DRA "
        "claim's device (k8s.gpu.nvidia.com/claim=UID-gpu-0) the claim's spec, written by the DRA "
        "kubelet plugin into its CDI root, is not in a directory the runtime reads, or a duplicate "
        "or broken spec made the runtime drop it; a rootless Docker daemon reads the spec "
        "directories inside its own mount namespace, where /etc/cdi and /var/run/cdi are visible "
        "only since moby#48541 (Docker 25.0.x, 26.1.x, 27.x backports) and only if they existed "
        "when the daemon started",
        "on {node}: `sudo nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml` and check "
        "`nvidia-ctk cdi list` lists the devices, then recreate the pod; for a DRA claim's device, "
        "compare the DRA driver's CDI root (`--cdi-root`, /var/run/cdi) with containerd's "
        "`cdi_spec_dirs` and look for errors about that spec in the runtime's log (`journalctl -u "
        "containerd | grep -i cdi`); for rootless Docker, upgrade Docker to a release with "
        "moby#48541, generate the spec into /etc/cdi or /var/run/cdi before the daemon starts, then "
        "`systemctl --user restart docker` (a `cdi-spec-dirs` directory of its daemon.json must be "
        "bind-mounted into the daemon's namespace)",
        also=_ALSO,
    ),
    # Before runtime.unknown-device: a GPU-memory-sharing device plugin's placeholder, not a
    # device name. Source: AliyunContainerService/gpushare-device-plugin pkg/gpu/nvidia/allocate.go
    # (NVIDIA_VISIBLE_DEVICES = "no-gpu-has-%dMiB-to-run" when it finds no GPU assigned to the pod).
    sig(
        "runtime.gpushare-no-gpu-assigned", "runtime", "sharing",
        r"no-gpu-has-(?P<amount>\d+(?:MiB|GiB)?)-to-run",
        "a GPU-sharing device plugin (gpushare, aliyun.com/gpu-mem) found no GPU assigned to this "
        "pod for {amount}, so it gave the container the placeholder no-gpu-has-...-to-run instead "
        "of a GPU and the start hook refuses it: the pod was not placed by the sharing scheduler "
        "extender (it is not configured in the scheduler, or the pod bypassed it), or no GPU had "
        "that much memory free; pods without a GPU request fail too when nvidia is the default runtime",
        "check the scheduler extender of the GPU-sharing stack is configured and running "
        "(`kubectl -n kube-system get pods | grep gpushare`) and that the pod's GPU-memory request "
        "fits a GPU on {node} (`kubectl describe node {node}`); for pods without a GPU request set "
        "NVIDIA_VISIBLE_DEVICES=none or make runc the default runtime (`gpuctl bootstrap --phase "
        "host -i INVENTORY --limit {node}`)",
        also=_ALSO,
    ),
    sig(
        "runtime.unknown-device", "runtime", "mig",
        r"device error: (?P<device>\S+): unknown device",
        "the start hook does not know device {device}: an old MIG-GPU-<uuid>/GI/CI name (drivers "
        "since R470 name MIG devices MIG-<uuid>) or a device that no longer exists",
        "list the current names with `nvidia-smi -L` on {node}; upgrade the tool that builds the "
        "name and recreate the MIG layout or the pod",
        also=_ALSO,
    ),
    sig(
        "runtime.bpf-device-filter", "runtime", "toolkit",
        r"unable to find any existing device filters attached to the cgroup|"
        r"bpf_prog_query\(BPF_CGROUP_DEVICE\) failed",
        "the start hook could not add the GPUs to the container's cgroup v2 BPF device filter: it "
        "runs where it may not query or attach BPF programs (inside an unprivileged LXC or Proxmox "
        "container, or a rootless runtime)",
        "on {node}: set `no-cgroups = true` under [nvidia-container-cli] in "
        "/etc/nvidia-container-runtime/config.toml and give the container the /dev/nvidia* devices "
        "yourself (LXC `lxc.cgroup2.devices.allow` and bind mounts), or use CDI (`sudo nvidia-ctk cdi "
        "generate --output=/var/run/cdi/nvidia.yaml`) or a current toolkit",
        also=_ALSO,
    ),
    sig(
        "runtime.cgroup-devices-missing", "runtime", "toolkit",
        r"cgroup subsystem devices not found",
        "the start hook looked for the cgroup v1 devices controller on a host that runs the unified "
        "cgroup v2 hierarchy: NVIDIA Container Toolkit releases before 1.8 do not support cgroup v2",
        "on {node}: upgrade nvidia-container-toolkit and libnvidia-container to 1.8 or newer "
        "(`gpuctl bootstrap --phase host -i INVENTORY --limit {node}` installs a current one), or "
        "boot with `systemd.unified_cgroup_hierarchy=0`",
        also=_ALSO,
    ),
    sig(
        "runtime.mount-file-exists", "runtime", "toolkit",
        r"file creation failed: \S+: file exists",
        "the start hook mounts the host's driver files into the container and the image already "
        "has a file there: the image ships NVIDIA driver files (nvidia-smi, libnvidia-*) that must "
        "come from the host",
        "rebuild the image without driver files (start from nvcr.io/nvidia/cuda and do not install "
        "nvidia-utils or libnvidia-* in it), then recreate the pod",
        also=_ALSO,
    ),
    sig(
        "runtime.driver-root-missing", "runtime", "toolkit",
        r"change root failed: no such file or directory|failed to change root directory",
        "the start hook's driver root does not exist: `root` in "
        "/etc/nvidia-container-runtime/config.toml points at a containerised driver "
        "(/run/nvidia/driver) that is not running, or the driver is installed on the host under /",
        "on {node}: `grep root /etc/nvidia-container-runtime/config.toml`; use `/` for a driver "
        "installed on the host (for the GPU Operator's driver container, check that it runs), then "
        "`sudo systemctl restart containerd`",
        also=_ALSO,
    ),
    sig(
        "runtime.runtime-binary-missing", "runtime", "toolkit",
        r"exec: \W*(?P<binary>nvidia-container-runtime(?:-hook)?)\W*: executable file not found",
        "the container runtime (or Docker's --gpus) is configured to run {binary} for GPU "
        "containers, but that binary is not installed on the node: the toolkit was removed or never "
        "installed, or its packages do not match (the hook nvidia-container-runtime-hook ships in "
        "nvidia-container-toolkit, not in nvidia-container-toolkit-base; 2019-2020 releases named it "
        "nvidia-container-toolkit)",
        "on {node}: install the NVIDIA Container Toolkit, the nvidia-container-toolkit package itself "
        "with libnvidia-container-tools of the same release (`gpuctl bootstrap --phase host -i "
        "INVENTORY --limit {node}`; `dpkg -l '*nvidia-container*'` lists what is there), or point the "
        "runtime's BinaryName at its real path (`command -v nvidia-container-runtime`), then `sudo "
        "systemctl restart containerd` (or docker)",
        also=_ALSO,
    ),
    sig(
        "runtime.nvml-unknown", "runtime", "hardware",
        r"nvml error: unknown error",
        "the start hook's NVML call failed on an unhealthy GPU",
        HARDWARE_FIX, also=_ALSO,
    ),
    sig(
        "runtime.no-nvidia-runtime", "events", "runtime",
        r"no runtime for \W*nvidia\W* is configured",
        "the pod asks for the nvidia runtime (RuntimeClass nvidia) but containerd on the node has "
        "no runtime handler named nvidia: the toolkit never configured it, or its drop-in "
        "(/etc/containerd/conf.d/99-nvidia.toml) is not read because config.toml lacks the "
        "`imports` line or was rewritten (k3s/RKE2 regenerate theirs from config.toml.tmpl), or the "
        "runtime sits under the other config version's plugin name (version 2: "
        "plugins.\"io.containerd.grpc.v1.cri\", version 3: plugins.\"io.containerd.cri.v1.runtime\")",
        TOOLKIT_FIX + "; `sudo containerd config dump | grep -B1 -A4 'runtimes.nvidia'` must show "
        "the runtime with `runtime_type = \"io.containerd.runc.v2\"`",
        also=("runtime", "nvidia-smi"),
    ),
    sig(
        "runtime.containerd-down", "events", "runtime",
        r"containerd\.sock: connect: connection refused",
        "the kubelet cannot reach containerd on the node (stopped or restarting)",
        "on {node}: `systemctl status containerd` and `journalctl -u containerd -n 50`",
        also=("runtime",), transient=True,
    ),
    sig(
        "runtime.hook-failed", "runtime", "toolkit",
        r"error running (?:prestart )?hook|Running hook #\d+",
        "the NVIDIA container start hook failed; the line after this one names why",
        "read the whole message (`kubectl describe pod`), or run `nvidia-container-cli -k -d "
        "/dev/tty info` on {node}",
        also=_ALSO, generic=True,
    ),
    sig(
        "runtime.oci-create-failed", "runtime", "runtime",
        r"OCI runtime create failed|failed to create shim task",
        "the container runtime could not create the container",
        "read the rest of the message (`kubectl describe pod`) and `journalctl -u containerd` on {node}",
        also=_ALSO, generic=True,
    ),
)  # fmt: skip
