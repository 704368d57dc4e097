"""containerd's CRI plugin and runc: why the kubelet could not create or start a container, as its
events print it (`Error: failed to create containerd task: failed to create shim task: OCI runtime
create failed: runc create failed: unable to start container process: ...`).

Each layer wraps the error of the one below it with its own fixed words, so a kubelet event is a
chain from containerd's CRI plugin (internal/cri/server) through the shim to runc's libcontainer;
the cause is the innermost part. This catalogue lists the innermost texts of containerd, runc and
the CDI library (tags.cncf.io/container-device-interface, which containerd and CRI-O use to inject
CDI devices) that explain a GPU pod's failure; the wrappers themselves stay the table's generic
fallback (table_runtime.py runtime.oci-create-failed), and what the NVIDIA start hook says inside
such a chain is the container-toolkit catalogue's. crun (CRI-O's and Podman's usual runtime) reports
a missing mount source in its own words (src/libcrun/utils.c: `error stat'ing file`), read here too.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_CRI = "https://github.com/containerd/containerd/blob/main/internal/cri/server"
_SHIM = "https://github.com/containerd/containerd/blob/main/cmd/containerd-shim-runc-v2/process/init_state.go"
_RUNC = "https://github.com/opencontainers/runc/blob/main/libcontainer"
_CDI = "https://github.com/cncf-tags/container-device-interface/blob/main/pkg/cdi/container-edits_unix.go"

_DOCKERD_CONFIG = "https://github.com/moby/moby/blob/v28.5.1/daemon/config/config.go"

_BOOTSTRAP = "`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`"
_CGROUP_DRIVERS = (
    "on {node}: `grep cgroupDriver /var/lib/kubelet/config.yaml` and `grep -n SystemdCgroup "
    "/etc/containerd/config.toml` (every runtime's options, the `nvidia` one included) must agree: "
    "systemd with `SystemdCgroup = true`, cgroupfs with false; set it under the nvidia runtime's "
    "options (`sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default` keeps "
    "runc's options), `sudo systemctl restart containerd`, or let " + _BOOTSTRAP + " configure it"
)
_CDI_REGENERATE = (
    "regenerate the node's CDI spec for the installed driver (`sudo nvidia-ctk cdi generate "
    "--output=/etc/cdi/nvidia.yaml`; under the GPU Operator restart the toolkit pod on {node}), "
    "then recreate the pod"
)

_ENTRIES = (
    Entry(
        "cgroup-driver-mismatch", "kubelet and runtime use different cgroup drivers",
        "runc was told to use systemd cgroups but the kubelet gave it a cgroupfs path (or the "
        "reverse): the kubelet's cgroupDriver and the runtime's SystemdCgroup differ, most often "
        "for the `nvidia` runtime added to containerd's config without runc's `SystemdCgroup = "
        "true`",
        _CGROUP_DRIVERS,
        "runtime",
        texts=("expected cgroupsPath to be of format",),
        source=f"{_RUNC}/specconv/spec_linux.go",
    ),
    Entry(
        "cgroup-apply-failed", "pod cgroup missing or not writable",
        "runc could not put the container into its cgroup: the pod's cgroup does not exist or "
        "cannot be written (the kubelet and the runtime disagree on the cgroup driver, or systemd "
        "removed cgroupfs-managed cgroups on a `daemon-reload`)",
        _CGROUP_DRIVERS,
        "runtime",
        texts=("unable to apply cgroup configuration",),
        source=f"{_RUNC}/process_linux.go",
    ),
    Entry(
        "cgroup-config-failed", "cgroup limits not applied after the hooks",
        "after the start hooks ran, runc could not apply the container's cgroup settings (the text "
        "after it names the file: a freezer that would not freeze, device rules the runtime may "
        "not write in a nested or rootless setup, a CPU or memory limit the kernel refuses)",
        "read the text after `procHooks process:`; on {node}: `stat -fc %T /sys/fs/cgroup` "
        "(cgroup2fs is cgroup v2), check the cgroup drivers agree (" + _CGROUP_DRIVERS + ")",
        "runtime",
        texts=("error setting cgroup config for procHooks process",),
        source=f"{_RUNC}/process_linux.go",
    ),
    Entry(
        "init-oom-killed", "container killed while starting (memory)",
        "the container's init was killed by the out-of-memory killer while it was being set up: "
        "the pod's memory limit is too small for its first process (or the node is out of memory)",
        "raise the container's memory limit (resources.limits.memory); `kubectl describe node "
        "{node}` shows memory pressure",
        "config",
        texts=("(possibly OOM-killed)", "container init was OOM-killed"),
        source=f"{_RUNC}/process_linux.go",
    ),
    Entry(
        "exec-not-found", "command not in the image",
        "the container's command does not exist in its image (or not on its PATH): a wrong "
        "command or image, or a program the image expects the runtime to inject (nvidia-smi and "
        "the driver's libraries come from the NVIDIA runtime, not the image)",
        "check the pod's command and image (`kubectl get pod POD -o jsonpath='{{.spec.containers[*]"
        ".command}}'`); for NVIDIA tools make sure the pod runs with the NVIDIA runtime "
        "(`gpuctl verify --runtime-class nvidia` proves it on {node})",
        "config",
        texts=("executable file not found in $PATH",),
        source=f"{_RUNC}/standard_init_linux.go",
    ),
    Entry(
        "name-reserved", "previous create still running",
        "containerd still works on an earlier CreateContainer or RunPodSandbox request for the "
        "same name (a slow image unpack, a slow disk or a start hook waiting on the GPUs), and the "
        "kubelet's retry is refused until it finishes",
        "wait: the kubelet retries; if it lasts, look at the node's disk and IO (`iostat -x 1` on "
        "{node}) and `sudo journalctl -u containerd --since -15m`; keep the GPUs initialised "
        "(`sudo systemctl enable --now nvidia-persistenced`) so start hooks are quick",
        "runtime",
        texts=("failed to reserve container name", "failed to reserve sandbox name"),
        source=f"{_CRI}/container_create.go",
        transient=True,
    ),
    Entry(
        "stopped-process", "container exited before it started",
        "containerd was asked to start a container whose process had already exited: it died "
        "while being set up (killed, a start hook failed, the runtime restarted); the event "
        "before this one names why",
        "`kubectl describe pod POD` and `kubectl get events --field-selector involvedObject.name="
        "POD` show the earlier failure; on {node} `sudo journalctl -u containerd --since -15m`",
        "runtime",
        texts=("cannot start a stopped process",),
        source=_SHIM,
        transient=True,
    ),
    Entry(
        "shim-timeout", "container runtime too slow to answer",
        "containerd's shim did not create the task within the kubelet's deadline: the node is "
        "overloaded (IO, CPU) or a start hook is slow (the NVIDIA hook waits for every GPU to "
        "initialise when persistence mode is off)",
        "on {node}: `sudo systemctl enable --now nvidia-persistenced`, check its load (`top`, "
        "`iostat -x 1`); the kubelet retries",
        "runtime",
        texts=("failed to create shim task: context deadline exceeded",),
        source=f"{_CRI}/container_start.go",
        transient=True,
    ),
    Entry(
        "cdi-disabled", "containerd's CDI support is off",
        "the pod asks for CDI devices (the device plugin or DRA driver hands GPUs over as CDI "
        "names) but containerd's CRI plugin has CDI disabled (`enable_cdi = false`, the default "
        "before containerd 2.0)",
        "on {node}: `sudo nvidia-ctk runtime configure --runtime=containerd --cdi.enabled && sudo "
        "systemctl restart containerd` (or set `enable_cdi = true` in the CRI plugin's section), "
        "or let " + _BOOTSTRAP + " configure it",
        "runtime",
        texts=("requested but CDI support is explicitly disabled",),
        source=f"{_CRI}/container_create_linux.go",
    ),
    Entry(
        "cdi-host-device-missing", "CDI spec names a device node the host lacks",
        "the CDI spec lists a device node the container engine cannot find: /dev/nvidia-uvm or "
        "/dev/nvidia-caps/* were never created (nothing loaded nvidia_uvm or ran nvidia-modprobe "
        "since boot), a GPU is gone, the spec was generated before the driver was reloaded (the "
        "/dev/dri numbers changed), or a rootless engine cannot see the node",
        "on {node}: `ls -l /dev/nvidia*`; create the nodes (`sudo nvidia-ctk system "
        "create-device-nodes --control-devices --load-kernel-modules`), then " + _CDI_REGENERATE,
        "toolkit",
        texts=("failed to stat CDI host device",),
        source=_CDI,
    ),
    Entry(
        "docker-config-invalid", "dockerd cannot parse daemon.json",
        "dockerd refuses to start because {file} is not valid JSON for it ({code}): a missing or "
        "extra comma, two top-level objects (a `runtimes` block pasted after the existing one), "
        "or a value of the wrong type; no container starts on {node} until it is fixed",
        "on {node}: `sudo python3 -m json.tool {file}` shows where it breaks; make it one object "
        "(`sudo nvidia-ctk runtime configure --runtime=docker` merges the `runtimes.nvidia` entry "
        "into a valid file), then `sudo systemctl restart docker` and `docker info | grep -i "
        "runtime`",
        "runtime",
        aliases=(
            "invalid character",
            "json: cannot unmarshal",
            "unexpected end of JSON input",
            "EOF",
        ),
        source=_DOCKERD_CONFIG,
    ),
    Entry(
        "docker-config-flag-conflict", "daemon.json setting also given as a dockerd flag",
        "dockerd refuses to start because a setting (`default-runtime`, `runtimes`, ...) is given "
        "both as a command-line flag (a systemd drop-in such as /etc/systemd/system/"
        "docker.service.d/override.conf with `--add-runtime` or `--default-runtime`) and in "
        "{file}",
        "on {node}: `systemctl cat docker` shows the unit's ExecStart and drop-ins; keep the "
        "setting in one place (remove the flag from the drop-in, or the key from daemon.json), "
        "then `sudo systemctl daemon-reload && sudo systemctl restart docker`",
        "runtime",
        aliases=("the following directives are specified both as a flag and in the configuration file",),
        source=_DOCKERD_CONFIG,
    ),
    Entry(
        "driver-file-missing", "a driver file to mount is not on the host",
        "the runtime was told to mount a driver file the host does not have: the CDI spec (or the "
        "toolkit's file list) was made for another driver version, and the driver was upgraded or "
        "reinstalled since",
        "on {node}: `cat /proc/driver/nvidia/version` names the installed driver and `grep -m3 "
        "libcuda /etc/cdi/*.yaml /var/run/cdi/*.yaml` the one the spec expects; " + _CDI_REGENERATE,
        "toolkit",
        aliases=("no such file or directory",),
        source=f"{_RUNC}/rootfs_linux.go",
    ),
)  # fmt: skip

CATALOGUE = Catalogue(
    id="container-runtime",
    title="containerd CRI and runc (container create and start errors)",
    source=_CRI,
    version="containerd main of August 2026 (2.4.0-beta: CRI plugin, shim runc v2); runc main "
    "(1.5.0-rc.1+, libcontainer); container-device-interface 1.1",
    entries=_ENTRIES,
    applies_to=("runtime", "events"),
    readers=(
        # dockerd at start: `unable to configure the Docker daemon with file /etc/docker/
        # daemon.json: invalid character '}' looking for beginning of object key string`.
        r"(?-i:unable to configure the Docker daemon with file )(?P<file>[^\s:]+): "
        r"(?P<code>the following directives are specified both as a flag and in the configuration "
        r"file|invalid character|json: cannot unmarshal|unexpected end of JSON input|EOF)",
        # runc's mount error for a driver file: `error mounting "/usr/lib/x86_64-linux-gnu/
        # libnvidia-ml.so.535.104.05" to rootfs at "...": mount ...: no such file or directory`.
        r"error mounting \"[^\"\n]*(?:nvidia|libcuda|libnv)[^\"\n]*\" to rootfs at [^\n]*?: "
        r"(?P<code>no such file or directory)",
        # crun's: `crun: error stat'ing file /lib/x86_64-linux-gnu/libEGL_nvidia.so.535.161.07: No
        # such file or directory` (newer crun quotes the path in backticks).
        r"error stat'ing file `?[^\s`:]*(?:nvidia|libcuda|libnv)[^\s`:]*`?: "
        r"(?P<code>no such file or directory)",
    ),
)
