"""NVIDIA Container Toolkit, CDI and the container runtimes that run it: why a GPU container could
not start.

The start hook `nvidia-container-cli` (libnvidia-container) reports every failure as
`nvidia-container-cli: <stage> error: <detail>`, one stage per step of `configure`
(src/cli/configure.c): input, permission, initialization, container, detection, device,
requirement, mount, ldcache. The detail is the failing call's own text. This catalogue reads the
stage as a fallback and lists the details that name a cause by their fixed texts (as printed, in
the source of libnvidia-container, the toolkit, containerd, CRI-O, Docker and runc); the details
the diagnosis table already explains (table_runtime.py: driver not loaded, version mismatch, NVML
permissions, load library failed, ldcache, unknown device, the CUDA requirement, cgroup v2, BPF
device filters, file exists, change root) are left to its rows, and the stage fallback stands back
for them as for this catalogue's own details.

Around the hook: the NVIDIA Container Runtime and its CDI hooks (nvidia-container-toolkit), and the
runtimes that must be configured to use them: Docker (daemon.json), containerd (config.toml,
version 2 or 3), CRI-O (its runtime handlers and OCI hooks).
"""

from __future__ import annotations

import re

from gpuctl.diagnose.catalogue import Catalogue, Entry

_LIBNVC = "https://github.com/NVIDIA/libnvidia-container/blob/main/src/cli/configure.c"
_TOOLKIT = "https://github.com/NVIDIA/nvidia-container-toolkit"
_CDI_HOOK = "https://github.com/NVIDIA/nvidia-container-toolkit/tree/main/cmd/nvidia-cdi-hook"
_CONTAINERD = "https://github.com/containerd/containerd/blob/main/cmd/containerd/server/config/config.go"
_CRIO = "https://github.com/cri-o/cri-o/blob/main/docs/crio.conf.5.md"
_DOCKER = "https://docs.docker.com/engine/containers/resource_constraints/#gpu"
_INSTALL = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"

_CONFIG = "/etc/nvidia-container-runtime/config.toml"
_BOOTSTRAP = "`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`"
_DEBUG = "`sudo nvidia-container-cli -k -d /dev/tty info` on {node} shows the step that fails"
_CDI_GENERATE = "`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`"
_CONTAINERD_CONFIGURE = (
    "`sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default && "
    "sudo systemctl restart containerd`"
)
_DRAIN_RESET = (
    "drain {node} (`kubectl drain {node} --ignore-daemonsets`), reset the GPU (`sudo nvidia-smi -r "
    "-i GPU`) or reboot the node; replace the GPU if it happens again"
)

# The fallbacks: the stage a detail nobody lists failed in.
_STAGES = (
    Entry(
        "input error", "hook given invalid arguments",
        "the NVIDIA container runtime hook called nvidia-container-cli with arguments it refuses "
        "(a rootfs it cannot use, a malformed requirement): the hook and libnvidia-container come "
        "from different toolkit releases, or the container's NVIDIA_* variables are malformed",
        f"on {{node}}: reinstall the toolkit as one release ({_BOOTSTRAP}; `nvidia-ctk --version` "
        "and `nvidia-container-cli --version` must agree), and check the pod's NVIDIA_* variables",
        "toolkit",
    ),
    Entry(
        "permission error", "hook lacks capabilities",
        "the start hook could not take the Linux capabilities it needs to set the container up: it "
        "runs inside a user namespace or an unprivileged container (rootless engine, LXC, nested "
        "containers), or SELinux or AppArmor confines it",
        f"run the container engine on {{node}} as root; check `getenforce` and `sudo ausearch -m avc "
        f"-ts recent` for denials; in rootless or nested setups inject the GPUs with CDI instead "
        f"({_CDI_GENERATE})",
        "toolkit",
    ),
    Entry(
        "initialization error", "hook could not initialise the driver",
        "the start hook could not start its driver service: the NVIDIA driver's user-space "
        "libraries did not load or NVML did not initialise on the node, so no GPU container can "
        "start there",
        f"on {{node}}: `nvidia-smi` must work; {_DEBUG}; install or repair the driver with "
        f"{_BOOTSTRAP}",
        "driver",
    ),
    Entry(
        "container error", "hook could not find the container",
        "the start hook could not resolve the container it is configuring (its process, mount "
        "namespace or cgroup): the container engine's cgroup layout or namespaces are not what this "
        "libnvidia-container release understands",
        f"on {{node}}: upgrade the NVIDIA Container Toolkit ({_BOOTSTRAP}); {_DEBUG}",
        "toolkit",
    ),
    Entry(
        "detection error", "hook could not list the driver's files or GPUs",
        "the start hook could not enumerate the driver's libraries, binaries or GPUs on the host "
        "(NVML failed, or a driver file it found cannot be read)",
        f"on {{node}}: `nvidia-smi -L` must list the GPUs; {_DEBUG}; reinstall the driver if files "
        f"are missing ({_BOOTSTRAP})",
        "driver",
    ),
    Entry(
        "device error", "container asks for a GPU the node lacks",
        "the container asked (NVIDIA_VISIBLE_DEVICES) for a GPU the start hook cannot find on the "
        "node: an index or UUID of another node, or a GPU that is gone",
        "compare the pod's NVIDIA_VISIBLE_DEVICES with `nvidia-smi -L` on {node}; let the device "
        "plugin pick the GPUs (request nvidia.com/gpu, do not set the variable yourself)",
        "toolkit",
    ),
    Entry(
        "requirement error", "image requirement not met",
        "the image's NVIDIA_REQUIRE_* condition is not met by the node's driver or GPU",
        f"upgrade the driver on {{node}} ({_BOOTSTRAP}) or use an image built for the installed "
        "driver (`nvidia-smi` shows the newest CUDA it supports)",
        "driver",
    ),
    Entry(
        "mount error", "hook could not mount the driver into the container",
        "the start hook could not mount the driver's files and device nodes into the container or "
        "set its device cgroup",
        f"{_DEBUG}; the text after `mount error:` names the file and the reason",
        "toolkit",
    ),
)  # fmt: skip

_DETAILS = (
    Entry(
        "hook-cuda-no-device", "hook's CUDA found no usable GPU on the host",
        "the start hook of an old libnvidia-container (before 1.0, which initialised CUDA itself) "
        "found no usable GPU on the host: the driver does not support the GPU, the GPU is in a "
        "bad state, or CUDA_VISIBLE_DEVICES hides them from the hook",
        f"on {{node}}: `nvidia-smi` and a CUDA sample on the host must work; upgrade the NVIDIA "
        f"Container Toolkit and the driver ({_BOOTSTRAP})",
        "driver",
        texts=("cuda error: no cuda-capable device",),
        source=_LIBNVC,
    ),
    Entry(
        "toolkit-glibc-too-new", "toolkit binaries need a newer glibc than the host",
        "the NVIDIA Container Toolkit binaries the GPU Operator's toolkit container installed on the "
        "host (/usr/local/nvidia/toolkit) were built against a newer glibc than the host has: the "
        "toolkit image's flavour or release does not match the host OS (an Ubuntu-based image on an "
        "older RHEL/CentOS or Amazon Linux host)",
        "set the toolkit image to the variant built for {node}'s OS (the GPU Operator's "
        "`toolkit.version` with the matching suffix), or install the toolkit on the host with "
        + _BOOTSTRAP + " and disable the operator's toolkit (`toolkit.enabled=false`)",
        "toolkit",
        texts=("(required by /usr/local/nvidia/toolkit",),
        source=_INSTALL,
    ),
    Entry(
        "driver-rpc-timeout", "driver service timed out",
        "the start hook's driver service got no answer from the GPUs within its 10 s limit: the GPUs "
        "are not kept initialised (persistence mode off, nvidia-persistenced not running), so each "
        "container start waits for every GPU to initialise; or a GPU hangs",
        "on {node}: `sudo systemctl enable --now nvidia-persistenced` (or `sudo nvidia-smi -pm 1`); "
        "if `nvidia-smi` itself hangs, " + _DRAIN_RESET,
        "driver",
        aliases=("driver rpc error: timed out", "driver error: timed out"),
    ),
    Entry(
        "nvcgo-rpc-timeout", "cgroup helper timed out",
        "the start hook's cgroup helper (libnvidia-container's Go part, which edits the container's "
        "device rules) did not start within 10 s: the node is under heavy CPU or IO load, often "
        "many GPU containers starting at once",
        "the kubelet retries; if it recurs, spread the GPU pods' starts on {node} and look at its "
        "load (`top`, `iostat -x 1`)",
        "toolkit",
        aliases=("nvcgo rpc error: timed out",),
        transient=True,
    ),
    Entry(
        "driver-rpc-failed", "driver service died",
        "the start hook's driver service (a helper process that loads libnvidia-ml) failed while "
        "answering: NVML could not work in it, most often because persistence mode is off, or "
        "because another package's libnvidia-ml shadows the driver's in the linker cache",
        "on {node}: `sudo systemctl enable --now nvidia-persistenced`; `ldconfig -p | grep "
        "libnvidia-ml` must list only the driver's copy (remove the package that ships another); "
        + _DEBUG,
        "driver",
        aliases=(
            "driver rpc error: failed to process request",
            "driver error: failed to process request",
            "driver rpc error: failed to perform handshake",
        ),
    ),
    Entry(
        "capability-change-failed", "hook capabilities denied",
        "the start hook was refused the capabilities it needs: SELinux enforcing without a policy "
        "for it, or the engine runs it in a user namespace or without CAP_SYS_ADMIN (rootless, "
        "nested or unprivileged containers)",
        "on {node}: `getenforce` and `sudo ausearch -m avc -ts recent`; allow the hook (NVIDIA's "
        "SELinux policy, or `setenforce 0` to confirm), or run the engine as root",
        "toolkit",
        texts=("capability change failed",),
    ),
    Entry(
        "privilege-change-failed", "hook cannot change user",
        "the start hook could not switch to its unprivileged user (setgroups/setuid refused): it runs "
        "inside a user namespace (rootless engine, unprivileged LXC, gVisor rootless)",
        f"run the engine on {{node}} as root, or for rootless engines set `no-cgroups = true` "
        "(`sudo nvidia-ctk config --set nvidia-container-cli.no-cgroups --in-place`) and inject "
        f"the GPUs with CDI ({_CDI_GENERATE})",
        "toolkit",
        texts=("privilege change failed",),
    ),
    Entry(
        "cgroup-device-rules-denied", "hook may not write device rules",
        "the start hook may not write the container's cgroup v1 device rules (devices.allow): the "
        "engine is rootless, or the container lives in a cgroup another manager owns (a Slurm "
        "task's under enroot/pyxis)",
        "on {node}: set `no-cgroups = true` (`sudo nvidia-ctk config --set "
        "nvidia-container-cli.no-cgroups --in-place`) and give the container the GPU devices "
        f"itself (CDI: {_CDI_GENERATE}), or run the engine as root",
        "toolkit",
        texts=("devices.allow: permission denied",),
    ),
    Entry(
        "bpf-program-rejected", "kernel refused the device filter",
        "the kernel refused the BPF device filter program the start hook builds for the container's "
        "cgroup v2 (the verifier rejects it, or BPF is restricted: kernel lockdown, an unprivileged "
        "or nested container)",
        f"on {{node}}: upgrade the NVIDIA Container Toolkit ({_BOOTSTRAP}); or let runc set the device "
        f"rules by injecting the GPUs with CDI ({_CDI_GENERATE}, then `sudo nvidia-ctk config --set "
        "nvidia-container-runtime.mode=cdi --in-place`)",
        "toolkit",
        aliases=("unable to create new device filters program",),
    ),
    Entry(
        "cgroup-path-not-found", "container cgroup not found",
        "the start hook computed a device cgroup path for the container that does not exist: "
        "libnvidia-container releases before 1.3.1 misread the systemd cgroup driver's "
        "`slice:prefix:name` paths that containerd uses with SystemdCgroup",
        f"on {{node}}: upgrade the NVIDIA Container Toolkit and libnvidia-container ({_BOOTSTRAP}), "
        "then recreate the pod",
        "toolkit",
        texts=("devices.allow: no such file or directory",),
    ),
    Entry(
        "mount-operation-failed", "hook may not mount",
        "the start hook was not allowed to bind-mount the driver's files into the container: it "
        "runs without mount rights (unprivileged or nested container, rootless engine, user "
        "namespace), SELinux or AppArmor denies it, or the container's root is on an unusual "
        "storage setup",
        f"run the engine on {{node}} as root with its default storage driver; in nested or LXC "
        f"setups inject the GPUs with CDI ({_CDI_GENERATE}); check `sudo ausearch -m avc -ts recent`",
        "toolkit",
        aliases=("mount operation failed",),
    ),
    Entry(
        "device-node-missing", "NVIDIA device node missing",
        "an NVIDIA device node (/dev/nvidia-uvm, /dev/nvidiactl, /dev/nvidiaN) does not exist on the "
        "node: its kernel module is not loaded (not yet after a boot, or not rebuilt after a kernel "
        "update) and nothing created the node, so containers cannot get it",
        "on {node}: `sudo modprobe nvidia nvidia-uvm && sudo nvidia-modprobe -u -c=0` (or `sudo "
        "nvidia-ctk system create-device-nodes --control-devices --load-kernel-modules`), and load "
        "nvidia-uvm at boot (`echo nvidia-uvm | sudo tee /etc/modules-load.d/nvidia-uvm.conf`); if "
        f"modprobe fails, reinstall the driver for the running kernel ({_BOOTSTRAP})",
        "driver",
        aliases=("nvidia", "nvidia-uvm", "nvidia-uvm-tools", "nvidiactl", "nvidia-modeset"),
    ),
    Entry(
        "mount-type-mismatch", "mount source and target differ in type",
        "runc could not mount a file the NVIDIA runtime injects (listed by the CSV files on Jetson or "
        "by the CDI spec): the host path no longer matches the list (missing or replaced after a "
        "JetPack or driver upgrade), or the image has a directory where the file goes",
        f"on {{node}}: regenerate the CDI spec ({_CDI_GENERATE}), or on Jetson reinstall the JetPack "
        "packages that ship /etc/nvidia-container-runtime/host-files-for-container.d; use an image "
        "built for the installed L4T release",
        "toolkit",
        texts=("Are you trying to mount a directory onto a file (or vice-versa)?",),
        source="https://github.com/opencontainers/runc",
    ),
    Entry(
        "wsl-no-adapters", "WSL without a GPU",
        "the start hook runs under WSL (Docker Desktop on Windows) but WSL exposes no GPU to it: WSL 1, "
        "no NVIDIA GPU in the machine, or a Windows NVIDIA driver without WSL support",
        "use WSL 2 with a current NVIDIA Windows driver (`wsl --update`, then `nvidia-smi` inside WSL "
        "must list the GPU); GPU nodes of a cluster should run Linux natively",
        "driver",
        aliases=("WSL environment detected but no adapters were found",),
    ),
    Entry(
        "stat-failed", "libnvidia-container too old for the driver",
        "the start hook looked for a /proc/driver/nvidia path the driver does not have: "
        "libnvidia-container is older than the driver or the machine (it reads a GPU name where the "
        "PCI address belongs, or cuts the 32-bit PCI domains of Hyper-V and Azure VMs)",
        f"on {{node}}: upgrade the NVIDIA Container Toolkit and libnvidia-container ({_BOOTSTRAP}), "
        "then recreate the pod",
        "toolkit",
        aliases=("stat failed",),
    ),
    Entry(
        "oci-spec-decode", "hook cannot read the OCI spec",
        "the NVIDIA hook could not decode the container's OCI specification: the low-level runtime "
        "(an old distribution runc such as RHEL's docker 1.13 docker-runc) writes a spec format the "
        "toolkit does not read",
        "use the container engine's upstream packages (docker-ce or containerd.io with their runc) "
        f"on {{node}}, or a toolkit release that matches it ({_BOOTSTRAP})",
        "runtime",
        source=_TOOLKIT,
        texts=("could not decode OCI spec",),
    ),
    Entry(
        "nvidia-runtime-failed", "NVIDIA Container Runtime failed",
        "the NVIDIA Container Runtime itself failed before starting runc: it could not prepare the "
        f"GPU changes to the container (its mode or {_CONFIG} does not fit the node, a driver file "
        "it needs is missing, or it cannot find the low-level runtime)",
        f"on {{node}}: set `debug = \"/var/log/nvidia-container-runtime.log\"` under "
        f"[nvidia-container-runtime] in {_CONFIG} and read that log; `sudo nvidia-ctk config default "
        f"--output={_CONFIG}` restores the defaults; the message's tail names the failing step",
        "toolkit",
        source=_TOOLKIT,
        aliases=(
            "nvidia-container-runtime did not terminate successfully",
            "failed to create NVIDIA Container Runtime",
        ),
        # "error constructing low-level runtime" is low-level-runtime-missing's: its only cause
        # (internal/runtime/runtime_factory.go, internal/oci/runtime_low_level.go)
        texts=("failed to construct OCI spec modifier",),
    ),
    Entry(
        "driver-requirement", "image needs another driver",
        "the image's NVIDIA_REQUIRE_CUDA lists driver ranges or GPU brands (old CUDA images: "
        "`brand=tesla,driver>=418,driver<419 ...`) and the node's driver or GPU matches none of "
        "them",
        f"upgrade the driver on {{node}} ({_BOOTSTRAP}), or use an image built for the installed "
        "driver; NVIDIA_DISABLE_REQUIRE=true on the container skips the check when the image's "
        "CUDA runs on the driver anyway",
        "driver",
        texts=(
            "unsatisfied condition: driver",
            "unsatisfied condition: brand",
            "unsatisfied condition: arch",
        ),
    ),
    Entry(
        "cdi-generate-failed", "CDI spec not generated",
        "nvidia-ctk could not build the CDI specification: it found no working NVML or driver "
        "libraries where it looked (driver not loaded yet, a containerised driver under "
        "/run/nvidia/driver without --driver-root) or the platform needs another mode (Jetson: "
        "csv); GPU containers that ask for CDI devices then cannot start",
        f"on {{node}}: `nvidia-smi` must work; rerun {_CDI_GENERATE} (add "
        "`--driver-root=/run/nvidia/driver` for the GPU Operator's driver container, `--mode=csv` "
        "on Jetson); the message's tail names the failing step",
        "toolkit",
        source=_TOOLKIT,
        texts=("failed to generate CDI spec",),
    ),
    Entry(
        "hook-invoked-directly", "legacy hook called in csv or cdi mode",
        "the toolkit on the node runs in csv (Jetson) or cdi mode, where only the NVIDIA Container "
        "Runtime may inject GPUs, but the container was started through the legacy hook "
        "(docker's --gpus flag, or a runtime without the nvidia runtime)",
        "start the container with the nvidia runtime: `--runtime=nvidia` (on {node}: `sudo nvidia-ctk "
        "runtime configure --runtime=docker --set-as-default && sudo systemctl restart docker`); "
        "in Kubernetes use the nvidia RuntimeClass or make nvidia the default runtime",
        "toolkit",
        source=_TOOLKIT,
        aliases=("invoking the NVIDIA Container Runtime Hook directly",),
    ),
    Entry(
        "create-symlink-failed", "CDI symlink hook failed",
        "nvidia-cdi-hook create-symlinks could not create a driver symlink in the container: the "
        "image already has that link pointing elsewhere (libGLX_indirect.so.0 -> libGLX_mesa.so.0), "
        "which toolkit 1.17.0 refuses to replace",
        f"upgrade the NVIDIA Container Toolkit on {{node}} to 1.17.1 or newer ({_BOOTSTRAP}), "
        f"regenerate the CDI spec ({_CDI_GENERATE}) and recreate the pod",
        "toolkit",
        source=_CDI_HOOK,
        aliases=("failed to create link [",),
        texts=("unexpected link target",),
    ),
    Entry(
        "cdi-hook-missing", "CDI hook binary missing",
        "the CDI specification's hooks run a binary that does not exist on the node: the spec was "
        "generated by another installation (the GPU Operator's toolkit, a removed package) or by a "
        "toolkit older than 1.16, which has no nvidia-cdi-hook",
        f"on {{node}}: install a current NVIDIA Container Toolkit ({_BOOTSTRAP}), regenerate the spec "
        f"({_CDI_GENERATE}; `nvidia-ctk cdi list` lists it) and remove stale specs from /etc/cdi and "
        "/var/run/cdi",
        "toolkit",
        aliases=("nvidia-cdi-hook", "nvidia-ctk"),
        source=_CDI_HOOK,
    ),
    Entry(
        "cdi-hook-failed", "CDI hook failed",
        "one of the CDI specification's nvidia-cdi-hook steps (update-ldcache, create-symlinks, "
        "chmod) failed while the container started: most often the spec is stale, generated for a "
        "driver version that is no longer installed, so the files it names are gone",
        f"on {{node}}: regenerate the spec ({_CDI_GENERATE}; the nvidia-cdi-refresh service does it "
        "at boot and after driver updates on toolkit 1.18+), then recreate the pod",
        "toolkit",
        aliases=("error executing hook",),
        source=_CDI_HOOK,
    ),
    Entry(
        "legacy-hook-failed", "NVIDIA OCI hook failed under crun",
        "crun (Podman, CRI-O) ran the NVIDIA Container Runtime Hook as an OCI prestart hook "
        "(hooks.d/oci-nvidia-hook.json) and it exited with an error crun does not show: most often "
        "nvidia-container-cli timed out initialising the GPUs (persistence mode off, common with "
        "GPUs passed through to a VM), or a rootless Podman's hook may not set the device cgroup "
        "(`no-cgroups = true` missing), SELinux denied it, or the driver is not loaded",
        "on {node}: `sudo nvidia-container-cli -k -d /dev/tty info` shows the failing step (if it "
        "hangs: `sudo systemctl enable --now nvidia-persistenced` or `sudo nvidia-smi -pm 1`); "
        f"`debug` under [nvidia-container-cli] in {_CONFIG} logs the hook; NVIDIA recommends CDI for "
        "Podman instead: remove /usr/share/containers/oci/hooks.d/oci-nvidia-hook.json, "
        f"{_CDI_GENERATE}, and run with `--device nvidia.com/gpu=all`",
        "toolkit",
        aliases=("error executing hook `",),
        source="https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html",
    ),
    Entry(
        "hook-wrong-binary", "hook path runs the wrong program",
        "the runtime's configured NVIDIA hook is a program that does not implement the OCI prestart "
        "command: the hook path (`[nvidia-container-runtime-hook] path` in "
        f"{_CONFIG}, or an OCI hook JSON) points at another binary, or the toolkit's packages come "
        "from different builds",
        f"on {{node}}: reinstall the NVIDIA Container Toolkit as one release ({_BOOTSTRAP}) and set "
        "`path = \"nvidia-container-runtime-hook\"` under [nvidia-container-runtime-hook]",
        "toolkit",
        aliases=("No help topic for 'prestart'",),
        source=_TOOLKIT,
    ),
    Entry(
        "runtime-binary-missing", "NVIDIA runtime binary missing",
        "the container runtime is configured to run the NVIDIA Container Runtime, but that binary is "
        "not installed at that path on the node (toolkit removed or never installed)",
        f"on {{node}}: install the NVIDIA Container Toolkit ({_BOOTSTRAP}), or point the runtime's "
        "BinaryName at its real path (`command -v nvidia-container-runtime`), then `sudo systemctl "
        "restart containerd`",
        "toolkit",
        aliases=("nvidia-container-runtime",),
        source=_TOOLKIT,
    ),
    Entry(
        "hook-binary-missing", "NVIDIA hook binary missing",
        "the NVIDIA Container Runtime Hook is not where the NVIDIA runtime, Docker's --gpus or an OCI "
        "hook file expects it: the toolkit's packages do not match. The hook "
        "(/usr/bin/nvidia-container-runtime-hook; named nvidia-container-toolkit in the 2019-2020 "
        "releases) ships in the nvidia-container-toolkit package, not in nvidia-container-toolkit-base "
        "(which has only nvidia-container-runtime and nvidia-ctk), and an old nvidia-container-runtime "
        "or nvidia-docker2 package mixed with a toolkit of another release looks for the other name "
        "(nvidia-container-runtime 3.0.0 shipped without the hook it injects)",
        "on {node}: list the packages (`dpkg -l '*nvidia-container*' nvidia-docker2` or `rpm -qa "
        "'*nvidia-container*'`), install nvidia-container-toolkit itself (not only -base) with "
        "libnvidia-container-tools of the same release and remove or upgrade the old "
        f"nvidia-container-runtime and nvidia-docker2 packages ({_BOOTSTRAP}); `command -v "
        "nvidia-container-runtime-hook` must print a path; then restart the container engine",
        "toolkit",
        aliases=("nvidia-container-runtime-hook", "nvidia-container-toolkit"),
        source=_INSTALL,
    ),
    Entry(
        "toolkit-runtime-unreachable", "toolkit container cannot reconfigure the runtime",
        "the GPU Operator's toolkit container could not configure or restart the node's container "
        "runtime: it was not given the runtime's real socket or config path (RKE2, k3s and microk8s "
        "keep containerd's elsewhere), so the nvidia runtime never takes effect",
        "set the toolkit's CONTAINERD_SOCKET and CONTAINERD_CONFIG (Helm `toolkit.env`) to the "
        "node's paths (RKE2/k3s: /run/k3s/containerd/containerd.sock and the agent's "
        "config.toml.tmpl), then delete the toolkit pod on {node} so it runs again",
        "runtime",
        aliases=(
            "unable to setup runtime",
            "unable to restart containerd",
            "unable to signal containerd",
            "Error signaling containerd",
        ),
        source="https://github.com/NVIDIA/nvidia-container-toolkit/tree/main/cmd/nvidia-ctk-installer",
    ),
    Entry(
        "toolkit-not-installed", "toolkit command missing",
        "the NVIDIA Container Toolkit's commands are not installed on the node (or not on PATH)",
        f"install it on {{node}}: {_BOOTSTRAP} (packages nvidia-container-toolkit and "
        f"libnvidia-container-tools; {_INSTALL})",
        "toolkit",
        source=_INSTALL,
        texts=("nvidia-ctk: command not found", "nvidia-container-cli: command not found"),
    ),
    Entry(
        "docker-no-gpu-driver", "docker has no GPU device driver",
        "Docker found no device driver for `--gpus` (or a compose file's GPU reservation): the "
        "NVIDIA Container Toolkit is not installed on the node, or Docker was not restarted after "
        "it was installed",
        "on {node}: install the toolkit, then `sudo nvidia-ctk runtime configure --runtime=docker && "
        "sudo systemctl restart docker`",
        "toolkit",
        source=_DOCKER,
        aliases=("could not select device driver",),
    ),
    Entry(
        "docker-cdi-disabled", "docker's CDI feature not enabled",
        "the container asks Docker for CDI devices (`--device nvidia.com/gpu=all`, or a compose "
        "file's device with driver cdi) and Docker has no CDI device driver for them: either its "
        "CDI feature is off (Docker before 28 enables it only with `\"features\": {{\"cdi\": "
        "true}}` in its daemon.json; a rootless daemon reads ~/.config/docker/daemon.json), or no "
        "NVIDIA CDI spec existed when Docker looked (the toolkit's nvidia-cdi-refresh service ran "
        "before the driver was up at boot, or the spec was never generated)",
        "on {node}: `nvidia-ctk cdi list` must list nvidia.com/gpu devices; if it lists none, "
        f"regenerate the spec ({_CDI_GENERATE}, or `sudo systemctl restart "
        "nvidia-cdi-refresh.service` and `journalctl -u nvidia-cdi-refresh` for why it failed at "
        "boot); if Docker is older than 28, add `\"features\": {{\"cdi\": true}}` to "
        "/etc/docker/daemon.json (rootless: ~/.config/docker/daemon.json); then restart Docker "
        "(`sudo systemctl restart docker`; rootless `systemctl --user restart docker`) and check "
        "`docker info` lists the CDI spec directories",
        "toolkit",
        source="https://docs.docker.com/reference/cli/dockerd/#enable-cdi-devices",
        aliases=("cdi",),
    ),
    Entry(
        "docker-unknown-runtime", "docker has no nvidia runtime",
        "Docker does not know the runtime the container names (nvidia): /etc/docker/daemon.json "
        "has no `runtimes.nvidia` entry, the toolkit is not installed, or Docker was not restarted "
        "after the file changed (a rootless daemon reads ~/.config/docker/daemon.json)",
        "on {node}: `sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart "
        "docker`; `docker info | grep -i runtimes` must list nvidia",
        "runtime",
        source=_INSTALL,
        aliases=("unknown or invalid runtime name",),
        texts=("unknown runtime specified",),
    ),
    Entry(
        "containerd-runtime-missing", "containerd lacks the runtime handler",
        "the pod's RuntimeClass names runtime handler {handler}, but containerd's CRI plugin on the "
        "node has no runtime of that name",
        f"on {{node}}: {_CONTAINERD_CONFIGURE} (the GPU Operator's toolkit adds nvidia, nvidia-cdi "
        "and nvidia-legacy), or correct the RuntimeClass's handler",
        "runtime",
        aliases=("no runtime for",),
        source=_CONTAINERD,
    ),
    Entry(
        "crio-runtime-handler-missing", "CRI-O lacks the runtime handler",
        "the pod's RuntimeClass names runtime handler {handler}, but CRI-O on the node has no "
        "[crio.runtime.runtimes.{handler}] table",
        "on {node}: `sudo nvidia-ctk runtime configure --runtime=crio && sudo systemctl restart "
        "crio`; or, where CRI-O injects GPUs through the NVIDIA OCI hook "
        "(/usr/share/containers/oci/hooks.d), drop runtimeClassName from the pod",
        "runtime",
        aliases=("failed to find runtime handler",),
        source=_CRIO,
    ),
    Entry(
        "runtime-handler-not-supported", "runtime cannot use RuntimeClass handlers",
        "the pod's RuntimeClass names runtime handler {handler}, which the node's container runtime "
        "does not support: Docker through dockershim or cri-dockerd accepts no handler but its own",
        "on Docker nodes make nvidia Docker's default runtime (on {node}: `sudo nvidia-ctk runtime "
        "configure --runtime=docker --set-as-default && sudo systemctl restart docker`) and drop "
        "runtimeClassName, or move the node to containerd",
        "runtime",
        aliases=("RuntimeHandler",),
        source="https://kubernetes.io/docs/concepts/containers/runtime-class/",
    ),
    Entry(
        "ctk-configure-failed", "nvidia-ctk could not configure the runtime",
        "`nvidia-ctk runtime configure` could not read, change or write the container runtime's "
        "config: it did not run as root, the file is not valid TOML or JSON, or the runtime reads "
        "its config from another path (k3s, RKE2, microk8s)",
        "on {node}: run it with sudo and the runtime's real config (`--config=PATH`, or "
        "`--config-source=command` to read containerd's own view), check the file parses "
        "(`sudo containerd config dump`), then restart the runtime",
        "runtime",
        aliases=("unable to load config for runtime", "unable to update config", "unable to flush config"),
        source=_TOOLKIT,
    ),
    Entry(
        "containerd-config-invalid", "containerd cannot read its config",
        "containerd cannot load /etc/containerd/config.toml (or a file it imports): a TOML syntax "
        "error, a value of the wrong type (`version = \"2\"`), or a section of another config "
        "version (`plugins.cri` of version 1; containerd 2.x reads version 3, with the CRI runtimes "
        "under plugins.\"io.containerd.cri.v1.runtime\"); containerd does not start, so no pod does",
        "on {node}: `sudo containerd config dump` shows the error's place; fix that key (`containerd "
        "config migrate` converts an old version), then "
        + _CONTAINERD_CONFIGURE,
        "runtime",
        source=_CONTAINERD,
        aliases=("failed to load TOML", "cannot load TOML value"),
        texts=("failed to unmarshal TOML",),
    ),
    Entry(
        "containerd-dropin-version", "containerd drop-in newer than its config",
        "a containerd drop-in config (such as /etc/containerd/conf.d/99-nvidia.toml written by "
        "nvidia-ctk or the GPU Operator's toolkit) declares a newer config version than "
        "/etc/containerd/config.toml, and containerd refuses to start",
        "on {node}: migrate the root config (`sudo containerd config migrate`, written back to "
        "/etc/containerd/config.toml) or regenerate the drop-in for its version, then "
        + _CONTAINERD_CONFIGURE,
        "runtime",
        source=_CONTAINERD,
        aliases=("higher than root config version",),
    ),
    Entry(
        "containerd-plugin-config-invalid", "containerd plugin config invalid",
        "containerd refused a plugin's configuration (often the CRI plugin's), so that plugin is not "
        "loaded and the kubelet cannot run pods through it; `no corresponding runtime configured` "
        "means default_runtime_name names a runtime the config does not define (set as default in "
        "one config version's section while the runtimes live in another's)",
        "on {node}: `sudo journalctl -u containerd -b | grep 'invalid plugin config'` names the "
        "setting; fix it in /etc/containerd/config.toml, or rerun `sudo nvidia-ctk runtime configure "
        "--runtime=containerd --config-source=command --set-as-default`, then `sudo systemctl "
        "restart containerd`",
        "runtime",
        source=_CONTAINERD,
        aliases=("invalid plugin config",),
        texts=("no corresponding runtime configured in", "`default_runtime_name` is empty"),
    ),
    Entry(
        "containerd-runtime-type-missing", "containerd runtime without runtime_type",
        "containerd created a container without a runtime name: the runtime handler it used (the "
        "RuntimeClass's, or default_runtime_name) is defined without `runtime_type`, typically in a "
        "drop-in (/etc/containerd/conf.d/99-nvidia.toml written by nvidia-ctk or the GPU Operator's "
        "toolkit 1.19.1 from a version 3 config file, a kata-deploy drop-in) that sets only the "
        "runtime's options, so containerd validates the container and refuses it",
        "on {node}: `sudo containerd config dump | grep -A4 'runtimes.nvidia'` must show "
        "`runtime_type = \"io.containerd.runc.v2\"`; add it to the runtime's table "
        "([plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.nvidia] in version 3, "
        "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia] in version 2) or upgrade "
        "the toolkit and rerun " + _CONTAINERD_CONFIGURE,
        "runtime",
        source="https://github.com/containerd/containerd/blob/main/core/metadata/containers.go",
        texts=("container.Runtime.Name must be set",),
    ),
    Entry(
        "toolkit-too-old-for-containerd", "toolkit too old for containerd's config version",
        "the NVIDIA Container Toolkit (nvidia-ctk, or the GPU Operator's toolkit container) cannot "
        "read containerd's config: containerd 2.x writes config version 3, which toolkit releases "
        "before 1.17.4 do not know (often a Helm values override that pins an old container-toolkit "
        "image), so the nvidia runtime is never configured",
        "use toolkit 1.17.4 or newer: drop the `toolkit.version`/`toolkit.repository` override from "
        "the GPU Operator's values so the chart's default toolkit image is used (on hosts: upgrade "
        f"the nvidia-container-toolkit package, {_BOOTSTRAP}), then let the toolkit pod on {{node}} "
        "run again",
        "toolkit",
        source=_TOOLKIT,
        aliases=("unsupported config version",),
    ),
    Entry(
        "exec-format-error", "binary for another CPU architecture",
        "the container's program is built for another CPU architecture than the node's (an amd64 "
        "image on an arm64 Grace or Jetson node, or the reverse), or is a script without a `#!` line",
        "use an image built for the node's architecture (`kubectl get node {node} -o "
        "jsonpath='{{.status.nodeInfo.architecture}}'`; `docker manifest inspect IMAGE` lists an "
        "image's platforms)",
        "application",
        source="https://github.com/opencontainers/runc",
        aliases=("exec format error",),
    ),
    Entry(
        "imex-channel-value-unsupported", "IMEX channel request not understood",
        "the start hook could not parse the container's IMEX channel request: toolkit 1.17 "
        "defaults NVIDIA_IMEX_CHANNELS to `all` for a \"legacy\" image (one without "
        "NVIDIA_REQUIRE_CUDA, e.g. an image built FROM a plain OS image), and the legacy hook's "
        "nvidia-container-cli does not accept `all`; set by hand, the value is not channel numbers",
        "set an environment variable that makes the image a CUDA one (`NVIDIA_REQUIRE_CUDA=cuda>=11.0` "
        "in the image or the pod's env) or set NVIDIA_IMEX_CHANNELS to channel numbers, or run the "
        f"container through CDI (the NVIDIA runtime's `cdi` or `jit-cdi` mode); else pin the toolkit "
        f"on {{node}} to 1.16.2 until an upgrade fixes it ({_BOOTSTRAP})",
        "toolkit",
        source="https://github.com/NVIDIA/nvidia-container-toolkit/issues/797",
        texts=("error parsing IMEX info",),
    ),
)  # fmt: skip

# nvidia-ctk's own errors (cmd/nvidia-ctk of the toolkit v1.20.0: `cdi generate`, `system
# create-device-nodes` and `create-dev-char-symlinks`, `runtime configure`), by the fixed start of
# each message; a spec it cannot parse is dra.cdi-spec-invalid's.
_CTK = _TOOLKIT + "/blob/v1.20.0/cmd/nvidia-ctk"
_NVIDIA_CTK = (
    Entry(
        "ctk-invalid-discovery-mode",
        "nvidia-ctk cdi generate: unknown discovery mode",
        "`nvidia-ctk cdi generate` was given a discovery mode it does not know (its `--mode`, "
        "NVIDIA_CTK_CDI_GENERATE_MODE, or the nvidia-cdi-refresh service's environment file): "
        "`cdi` is a mode of the NVIDIA runtime, not of spec generation",
        "on {node}: run `sudo nvidia-ctk cdi generate --mode=auto --output=/var/run/cdi/nvidia.yaml` "
        "(modes: auto, nvml, wsl, management, csv, gds, mofed); remove the bad mode from "
        "/etc/nvidia-container-toolkit/nvidia-cdi-refresh.env and `sudo systemctl restart "
        "nvidia-cdi-refresh.service`",
        "toolkit",
        texts=("invalid discovery mode",),
        source=_CTK + "/cdi/generate/generate.go",
    ),
    Entry(
        "ctk-device-nodes-failed",
        "nvidia-ctk could not create the device nodes",
        "`nvidia-ctk system create-device-nodes` (run by the GPU Operator's validator and the "
        "toolkit's services) could not load the NVIDIA kernel modules or create /dev/nvidia* "
        "nodes: the driver is not loaded or not installed, /proc/devices lists no nvidia major "
        "(driver not loaded yet), or /dev is not writable where it ran",
        "on {node}: `lsmod | grep nvidia` and `grep nvidia /proc/devices`; load the driver (`sudo "
        "modprobe nvidia nvidia-uvm`; install it with `gpuctl bootstrap --phase host -i INVENTORY "
        "--limit {node}`), then `sudo nvidia-ctk system create-device-nodes --control-devices "
        "--load-kernel-modules`",
        "driver",
        texts=(
            "failed to load NVIDIA kernel modules",
            "failed to create NVIDIA device nodes",
            "failed to create NVIDIA control device nodes",
            "missing required device major",
            "failed reading device majors",
        ),
        # create-dev-char-symlinks/all.go prints the last two
        source=_CTK + "/system/create-device-nodes/create-device-nodes.go",
    ),
    Entry(
        "ctk-mig-caps",
        "nvidia-ctk could not read the MIG capabilities",
        "nvidia-ctk could not read the driver's MIG capability files (/proc/driver/nvidia/"
        "capabilities, /proc/driver/nvidia-caps) to create or list the MIG device nodes: the "
        "driver is not loaded or too old for MIG, or /proc is not the host's",
        "on {node}: `ls /proc/driver/nvidia/capabilities` and `nvidia-smi mig -lgi`; load the "
        "driver (`sudo modprobe nvidia`), then `sudo nvidia-ctk system create-dev-char-symlinks "
        f"--create-all` and regenerate the CDI spec ({_CDI_GENERATE})",
        "driver",
        texts=("failed to read MIG caps",),
        source=_CTK + "/system/create-dev-char-symlinks/all.go",
    ),
    Entry(
        "ctk-drop-in-not-imported",
        "nvidia-ctk wrote its drop-in where the runtime does not read",
        "`nvidia-ctk runtime configure` wrote the nvidia runtime's drop-in file into a directory "
        "the container runtime does not import (containerd imports /etc/containerd/conf.d/*.toml "
        "by default, CRI-O reads /etc/crio/crio.conf.d/), e.g. a `--drop-in-config` path in "
        "/etc/containerd/config.d/: the command succeeds but the runtime never loads the nvidia "
        'runtime (`no runtime for "nvidia" is configured` afterwards)',
        "on {node}: move the file into the directory the runtime imports (`sudo mv "
        "/etc/containerd/config.d/99-nvidia.toml /etc/containerd/conf.d/`) or add its directory to "
        "`imports` in /etc/containerd/config.toml, or rerun `sudo nvidia-ctk runtime configure "
        "--runtime=containerd --drop-in-config=/etc/containerd/conf.d/99-nvidia.toml`; then "
        "`sudo systemctl restart containerd` and check `sudo containerd config dump | grep -A3 "
        "runtimes.nvidia`",
        "runtime",
        aliases=("Wrote updated config to",),
        source=_CTK + "/runtime/configure/configure.go",
    ),
    Entry(
        "ctk-unknown-runtime",
        "nvidia-ctk runtime configure: unknown runtime",
        "`nvidia-ctk runtime configure` was asked to configure a container runtime it does not "
        "support (`--runtime` must be docker, containerd or crio), or an unsupported --config-mode",
        "on {node}: `sudo nvidia-ctk runtime configure --runtime=containerd` (or docker, crio; "
        "CRI-O with `--config-mode=toml` or `command`), then restart that runtime",
        "runtime",
        texts=("unrecognized runtime '", "unsupported config-mode"),
        source=_CTK + "/runtime/configure/configure.go",
    ),
)

# From a sweep of the toolkit's own error strings (v1.20.0 sources): the runtime's low-level runtime,
# device requests it ignores, the CDI IMEX channel, and the toolkit container's installer.
_SRC = _TOOLKIT + "/blob/d34b3046758cb1a5db606b2a39519c731bbf9f56/"
_SWEEP = (
    Entry(
        "low-level-runtime-missing",
        "no runc or crun for the NVIDIA runtime",
        "the NVIDIA Container Runtime wraps a low-level runtime and found none of the candidates "
        f"its config lists (`runtimes` in {_CONFIG}: docker-runc, runc, crun) on the PATH it runs "
        "with: runc is installed elsewhere (containerd's bundled /usr/local/sbin/runc, a distribution "
        "that ships only crun) or not at all",
        "on {node}: `command -v runc crun`; install runc, or name its full path first in the "
        f"`runtimes` list of the `[nvidia-container-runtime]` section of {_CONFIG}; no runtime "
        "restart is needed",
        "toolkit",
        texts=(
            "no runtime binary found from candidate list",
            "error constructing low-level runtime",
            "at least one runtime candidate must be specified",
        ),
        source=_SRC + "internal/oci/runtime_low_level.go",
    ),
    Entry(
        "envvar-request-ignored",
        "NVIDIA_VISIBLE_DEVICES ignored in an unprivileged container",
        "the container asked for GPUs only through NVIDIA_VISIBLE_DEVICES (set in the pod spec or "
        "the image), and the node's toolkit ignores that variable in unprivileged containers "
        f"(`accept-nvidia-visible-devices-envvar-when-unprivileged = false` in {_CONFIG}, as the GPU "
        "Operator sets it with the volume-mounts or CDI device-list strategy): the container starts "
        "without the GPUs it named",
        "request the GPUs from Kubernetes instead (`resources.limits: nvidia.com/gpu: 1`) and drop "
        "NVIDIA_VISIBLE_DEVICES from the pod spec; only if the node is meant to honour the variable, "
        f"set `accept-nvidia-visible-devices-envvar-when-unprivileged = true` in {_CONFIG} on {{node}}",
        "config",
        texts=(
            "environment variable(s) in unprivileged container",
            "NVIDIA_VISIBLE_DEVICES in unprivileged container",
        ),
        source=_SRC + "internal/config/image/cuda_image.go",
    ),
    Entry(
        "imex-channel-not-found",
        "IMEX channel device missing on the node",
        "the container asked for an IMEX channel (NVIDIA_IMEX_CHANNELS, or a CDI device "
        "nvidia.com/imex-channel=N) but the node has no /dev/nvidia-caps-imex-channels/channelN: "
        "the driver creates IMEX channel devices only when the nvidia module is loaded with "
        "`NVreg_CreateImexChannel0=1` (channel 0) or they are made by hand, and ComputeDomains "
        "create them per workload through the DRA driver",
        "on {node}: `ls /dev/nvidia-caps-imex-channels/`; create channel 0 by loading the driver "
        "with `options nvidia NVreg_CreateImexChannel0=1` (in /etc/modprobe.d/, then reload the "
        "module or reboot), or request the channel through a ComputeDomain with the NVIDIA DRA "
        "driver instead of the environment variable",
        "config",
        aliases=("not found at",),
        source=_SRC + "pkg/nvcdi/lib-imex.go",
    ),
    Entry(
        "capabilities-unsupported",
        "NVIDIA_DRIVER_CAPABILITIES not allowed",
        "the container's NVIDIA_DRIVER_CAPABILITIES names a capability the node's toolkit does not "
        f"allow (`supported-driver-capabilities` in {_CONFIG}) or does not know (a typo, or `all` "
        "on a hook older than the image, as on JetPack 4 nodes), so the start hook aborts the "
        "container",
        "set NVIDIA_DRIVER_CAPABILITIES to capabilities from compute, compat32, graphics, utility, "
        "video, display, ngx (or `all`, which older hooks do not know: upgrade the NVIDIA Container "
        f"Toolkit on {{node}} or name the capabilities); or widen `supported-driver-capabilities` in "
        f"{_CONFIG} on {{node}}",
        "config",
        texts=("unsupported capabilities found in", "unknown driver capability"),
        source=_SRC + "cmd/nvidia-container-runtime-hook/container_config.go",
    ),
    Entry(
        "toolkit-already-running",
        "toolkit container already running on the node",
        "the GPU Operator's toolkit container (nvidia-ctk-installer) could not take its pidfile "
        "lock (/run/nvidia/toolkit/toolkit.pid): another toolkit container still runs on {node} "
        "(the previous pod not yet stopped, or a second toolkit DaemonSet from another install)",
        "`kubectl get pods -A -o wide --field-selector spec.nodeName={node} | grep -i toolkit`: "
        "remove the second install (one GPU Operator per cluster) or wait for the old pod to stop; "
        "delete the crash-looping pod afterwards",
        "toolkit",
        texts=(
            "an instance of the NVIDIA toolkit Container is already running",
            "unable to get flock on pidfile",
        ),
        source=_SRC + "cmd/nvidia-ctk-installer/main.go",
        transient=True,
    ),
    Entry(
        "runtime-restart-failed",
        "toolkit could not make the container runtime reload",
        "the toolkit wrote the NVIDIA runtime into the container runtime's config but could not make "
        "the runtime reload it: the toolkit container signals containerd or Docker through its socket "
        "and process, and the socket path it was given is not where this node's runtime listens "
        "(k3s and RKE2: /run/k3s/containerd/containerd.sock; MicroK8s: "
        "/var/snap/microk8s/common/run/containerd.sock), or the runtime's restart failed",
        "set the toolkit's CONTAINERD_CONFIG and CONTAINERD_SOCKET (the GPU Operator's "
        "`toolkit.env`) to this distribution's paths, or restart the runtime on {node} by hand "
        "(`sudo systemctl restart containerd`, or docker / crio) and check `journalctl -u "
        "containerd` for a config it rejects",
        "runtime",
        texts=(
            "unable to send SIGHUP to '",
            "unable to restart docker",
            "unable to restart crio",
            "unable to signal docker",
            "Error signaling docker",
        ),
        source=_SRC + "cmd/nvidia-ctk-installer/container/runtime/containerd/containerd_linux.go",
    ),
)

# What an old libnvidia-container stats where the driver has a GPU's PCI address in
# /proc/driver/nvidia/gpus/: the PCI address with its domain cut (Hyper-V, Azure), or the GPU's name
# (`stat failed: /proc/driver/nvidia/gpus/cfdd:00:00.0`, `stat failed: /Tesla V100-SXM2-16GB`).
_OLD_PATHS = ("proc/driver/nvidia/gpus/", "GeForce", "Tesla", "Quadro", "NVIDIA", "TITAN")

_NO_SUCH_FILE = "no such file or directory"

# Details the diagnosis table's rows explain (table_runtime.py's; `nvml error: GPU is lost` is
# table_gpu.py's gpu.lost): the stage fallback stands back for them as for the details above.
_TABLE_DETAILS = (
    "nvml error", "load library failed", "unknown device", "unsatisfied condition",
    "cgroup subsystem devices not found", "bpf_prog_query", "device filters", ": file exists",
    "change root failed", "ldcache error",
)  # fmt: skip


# The codes the readers below read out of a line by their context. Every other alias of an entry is
# a phrase read as printed, case-sensitively: a reader that starts with a literal runs in
# microseconds, while a fixed text whose longest word is common in healthy logs ("driver",
# "container", "failed") would send many healthy lines through the fixed texts' regex.
_NAMED = frozenset({
    "stat failed", "nvidia-cdi-hook", "nvidia-ctk", "nvidia-container-runtime",
    "nvidia-container-runtime-hook", "no runtime for", "failed to find runtime handler",
    "RuntimeHandler", "nvidia", "nvidia-uvm", "nvidia-uvm-tools", "nvidiactl", "nvidia-modeset",
    "error executing hook", "error executing hook `", "nvidia-container-toolkit", "cdi",
    "could not select device driver", "unsupported config version",
})  # fmt: skip
_PHRASES = tuple(alias for entry in _DETAILS for alias in entry.aliases if alias not in _NAMED)


def _phrase_readers() -> tuple[str, ...]:
    """A reader per first word of the phrases, each starting with that word as a literal."""
    by_first: dict[str, list[str]] = {}
    for phrase in _PHRASES:
        first, _, rest = phrase.partition(" ")
        by_first.setdefault(first, []).append(re.escape(rest))
    return tuple(
        rf"(?-i:(?P<code>{re.escape(first)} (?:{'|'.join(rests)})))" for first, rests in by_first.items()
    )


def _stage_reader() -> str:
    """The stage of an `nvidia-container-cli: <stage> error: <detail>` line whose detail no entry
    and no table row explains: read only when a detail follows (a line cut after the stage says no
    more than the table's generic hook row) and none of their texts is in it."""
    details = sorted(
        {text for entry in _DETAILS for text in entry.texts}
        | set(_PHRASES)
        | {f"stat failed: /{path}" for path in _OLD_PATHS}
        | set(_TABLE_DETAILS),
        key=lambda text: (-len(text), text),
    )
    known = "|".join(
        [r"\s+".join(map(re.escape, text.split(" "))) for text in details]
        + [rf"/dev/nvidia[\w-]*: {_NO_SUCH_FILE}"]
    )
    stages = "|".join(re.escape(entry.code.split()[0]) for entry in _STAGES)
    return (
        rf"(?-i:nvidia-container-cli)(?:\.real)?: (?P<code>(?:{stages}) error):(?=\s*\S)"
        rf"(?!.*?(?:{known}))"
    )


CATALOGUE = Catalogue(
    id="container-toolkit",
    title="NVIDIA Container Toolkit, CDI and container runtimes",
    source=_LIBNVC,
    version=(
        "libnvidia-container 1.17 (nvidia-container-cli stages, unchanged since 1.0); NVIDIA "
        "Container Toolkit 1.20.0; containerd 2.x config versions 2 and 3; CRI-O 1.3x; Docker 28"
    ),
    entries=(*_STAGES, *_DETAILS, *_NVIDIA_CTK, *_SWEEP),
    applies_to=("runtime", "events", "nvidia-smi", "plugin-log", "operand", "host"),
    readers=(
        _stage_reader(),
        # toolkit < 1.17.4 reading containerd 2.x's config (before the phrases: `unable to load config
        # for runtime` is also ctk-configure-failed's, which this explains)
        r"(?-i:unable to load config)(?: for runtime \S+)?: (?P<code>(?-i:unsupported config version)): "
        r"[3-9]\b",
        *_phrase_readers(),
        # an old libnvidia-container builds /proc/driver/nvidia paths the driver does not have
        rf"(?-i:mount error: )(?P<code>stat failed): /(?:{'|'.join(map(re.escape, _OLD_PATHS))})",
        # a device node the driver's modules create is missing: `lstat /dev/nvidia-uvm: no such ...`
        rf"(?-i:/dev/)(?P<code>nvidia(?:-uvm-tools|-uvm|ctl|-modeset)?)\d*: {_NO_SUCH_FILE}",
        # nvidia-ctk runtime configure's own report of a drop-in outside the directory the runtime
        # imports (containerd: /etc/containerd/conf.d, CRI-O: /etc/crio/crio.conf.d)
        r"(?P<code>(?-i:Wrote updated config to)) (?:/etc/containerd/(?!conf\.d/)|"
        r"/etc/crio/(?!crio\.conf\.d/))[\w.-]+/[\w.-]+\.(?:toml|conf)\b",
        # crun: error executing hook `/usr/bin/nvidia-cdi-hook` (exit code: 1)
        r"(?P<code>(?-i:error executing hook)) `[^`\s]*/nvidia-cdi-hook`",
        # the legacy hook, run by crun from hooks.d (Podman, CRI-O)
        r"(?P<code>(?-i:error executing hook) `)[^`\s]*/nvidia-container-(?:runtime-hook|toolkit)`",
        # the NVIDIA runtime, or a hook file, cannot find the hook
        r"(?-i:stat )\S*/(?P<code>nvidia-container-runtime-hook|nvidia-container-toolkit): "
        r"no such file or directory",
        r"(?-i:exec: )\\*\"(?P<code>nvidia-container-toolkit)\\*\": executable file not found",
        # Docker: `could not select device driver "cdi" with capabilities: []` (CDI feature off)
        r"(?-i:could not select device driver) \\*\"(?P<code>cdi)\\*\"",
        r"(?P<code>(?-i:could not select device driver))(?! \\*\"cdi\\*\")",
        # the CDI spec's hook, or the runtime's configured binary, is not on the node
        r"(?-i:fork/exec )\S*?/?(?P<code>nvidia-cdi-hook|nvidia-ctk|nvidia-container-runtime-hook|"
        r"nvidia-container-runtime): no such file or directory",
        # containerd: `no runtime for "nvidia-cdi" is configured` (the table's row reads "nvidia")
        r"(?P<code>(?-i:no runtime for)) \\*\"(?P<handler>[^\"\\]+)\\*\" is configured",
        # CRI-O: `failed to find runtime handler nvidia from runtime list map[...]`
        r"(?P<code>(?-i:failed to find runtime handler)) (?P<handler>\S+) from runtime list",
        # dockershim and cri-dockerd: `RuntimeHandler "nvidia" not supported`
        r"(?P<code>(?-i:RuntimeHandler)) \\*\"(?P<handler>[^\"\\]+)\\*\" not supported",
        # the CDI IMEX channel: `IMEX channel 0 not found at /dev/nvidia-caps-imex-channels/channel0`
        r"(?-i:IMEX channel) \w{1,10} (?P<code>not found at) \S*/nvidia-caps-imex-channels/",
    ),
)
