"""Loading and unloading the NVIDIA kernel modules: what kmod (modprobe, insmod, rmmod), the
kernel's module loader, nvidia-installer and nvidia-persistenced print when the driver's modules
do not load, do not unload, or the daemon that keeps the GPUs initialised does not start.

modprobe prints a refused load as `modprobe: ERROR: could not insert 'MODULE': REASON`, where
REASON is the kernel's errno as strerror() spells it (kmod tools/modprobe.c: only EEXIST and ENOENT
get their own words); insmod prints `insmod: ERROR: could not insert module FILE: REASON` with
kmod's mod_strerror() words (`Invalid module format` for ENOEXEC); module-init-tools, before kmod,
printed `FATAL: Error inserting MODULE (FILE): REASON`. The reason is read out of the line and
looked up here by errno, so a module name or path nobody listed is still explained. The errnos
other tables already explain keep their rows: EKEYREJECTED and EPERM with "Kernel module load
error" (table_host.py host.secure-boot-rejected), ENOKEY (host_packages.py), EACCES
(host.selinux-module-load) and ENOENT's "Unknown symbol in module" (host.module-unknown-symbol).

nvidia-installer (the .run installer, also inside the GPU Operator's driver container) reports its
failures with `ERROR: ` and the texts of its source; nvidia-persistenced logs to syslog.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_KMOD = "https://github.com/kmod-project/kmod/blob/v34/tools/modprobe.c"
_KMOD_RMMOD = "https://github.com/kmod-project/kmod/blob/v34/tools/rmmod.c"
_KMOD_LIB = "https://github.com/kmod-project/kmod/blob/v34/libkmod/libkmod-module.c"
_KERNEL = "https://github.com/torvalds/linux/blob/v6.12/kernel/module/main.c"
_PARAMS = "https://github.com/torvalds/linux/blob/v6.12/kernel/params.c"
_INSTALLER = "https://github.com/NVIDIA/nvidia-installer/blob/590.48.01"
_PERSISTENCED = "https://github.com/NVIDIA/nvidia-persistenced/blob/595.71.05/nvidia-persistenced.c"
_NUMA = "https://github.com/NVIDIA/nvidia-persistenced/blob/595.71.05/nvidia-numa.c"

_BOOTSTRAP = "`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`"
_DMESG = "`sudo dmesg | grep -i -e NVRM -e nvidia | tail -20` on {node} says why"
_VERSIONS = (
    "`modinfo -F version nvidia nvidia_uvm nvidia_modeset nvidia_drm` must print one version, "
    "`modinfo -F vermagic nvidia` must start with `uname -r`"
)
_REBUILD = (
    "on {node}: install the running kernel's headers and rebuild the modules (`sudo apt-get "
    "install linux-headers-$(uname -r) && sudo dkms autoinstall`), or reinstall the driver with " + _BOOTSTRAP
)
_HOLDERS = (
    "on {node}: `sudo lsof /dev/nvidia*` and `lsmod | grep nvidia` show what holds the GPUs; drain "
    "the node (`kubectl drain {node} --ignore-daemonsets --delete-emptydir-data`), stop the "
    "daemons that keep the device open (`sudo systemctl stop nvidia-persistenced "
    "nvidia-fabricmanager nvidia-dcgm`, a display manager), then unload in order (`sudo modprobe "
    "-r nvidia_drm nvidia_modeset nvidia_uvm nvidia`) or reboot the node"
)

_LOAD = (
    Entry(
        "ENODEV", "no GPU the module can drive",
        "the nvidia module loaded its code but found no GPU it can drive, so the kernel refused it "
        "(No such device): the node has no NVIDIA GPU on its PCI bus (a VM without the GPU passed "
        "through, a GPU that fell off the bus), another driver holds the GPU (nouveau, vfio-pci), "
        "or this driver branch does not support the GPU (a legacy GPU, or the open kernel modules "
        "on a GPU older than Turing)",
        "on {node}: `lspci -nnk -d 10de:` lists the GPUs and the driver in use; " + _DMESG
        + "; blacklist nouveau, install a branch that supports the GPU (the proprietary modules "
        "before Turing), then `gpuctl preflight -i INVENTORY --limit {node}`",
        "driver",
        aliases=("No such device",),
        source=_KMOD,
    ),
    Entry(
        "ENOEXEC", "module built for another kernel",
        "the kernel refused the module's format (Exec format error): it was built for another "
        "kernel than the running one (a kernel upgrade without a rebuild of the DKMS modules, a "
        "precompiled module of another kernel flavour, a `version magic` mismatch) or for "
        "another CPU architecture",
        f"on {{node}}: {_VERSIONS}; " + _REBUILD,
        "driver",
        aliases=("Exec format error", "Invalid module format", "version magic"),
        source=_KERNEL,
    ),
    Entry(
        "EINVAL", "module refused its parameters or its init failed",
        "the kernel refused the module (Invalid argument): an option set for it is unknown to this "
        "driver version (an `NVreg_*` option in /etc/modprobe.d/ or on the kernel command line), "
        "or nvidia_uvm, nvidia_modeset or nvidia_drm come from another driver version than the "
        "loaded nvidia.ko, or a module built on the driver (nv_peer_mem, gdrcopy's gdrdrv) was "
        "built against another driver, kernel or InfiniBand stack (dmesg: `disagrees about "
        "version of symbol`), or nvidia.ko itself failed to initialise a GPU",
        f"on {{node}}: {_DMESG} (`Unknown parameter` names the option); `grep -rn NVreg "
        f"/etc/modprobe.d/ /proc/cmdline` and remove the options this driver does not know; "
        f"{_VERSIONS}; reinstall the driver as one version with {_BOOTSTRAP}",
        "driver",
        aliases=(
            "Invalid argument", "Module has invalid parameters", "Invalid parameters", "Unknown parameter",
        ),
        source=_PARAMS,
    ),
    Entry(
        "ESRCH", "module built against other kernel symbols",
        "the kernel refused the module because the versions of the kernel symbols it was built "
        "against differ from the running kernel's (Module has wrong symbol version)",
        f"on {{node}}: {_VERSIONS}; " + _REBUILD,
        "driver",
        aliases=("Module has wrong symbol version",),
        source=_KMOD,
    ),
    Entry(
        "EPERM", "module load not permitted",
        "the kernel did not permit loading the module (Operation not permitted): Secure Boot's "
        "lockdown refuses a module not signed by a trusted key, or modprobe ran without the right "
        "to load modules (in a container that is not privileged)",
        "on {node}: `mokutil --sb-state` and `sudo dmesg | grep -i lockdown`; sign the module "
        "with an enrolled key (`sudo mokutil --import /var/lib/dkms/mok.pub`, confirm at the next "
        "boot) or use the distribution's signed modules; a driver container must run privileged",
        "driver",
        aliases=("Operation not permitted",),
        source=_KMOD,
    ),
    Entry(
        "EEXIST", "module already loaded",
        "a module of that name is already loaded (Module already in kernel): the host's own driver "
        "is loaded while another installer (the GPU Operator's driver container, a second "
        "package) tries to load its copy",
        "on {node}: `cat /proc/driver/nvidia/version` shows the loaded driver; keep one driver: "
        "with the host's driver installed run the GPU Operator without its driver "
        "(`--no-operator-driver`, driver.enabled=false), or remove the host's packages before "
        "the operator installs its own",
        "driver",
        aliases=("Module already in kernel", "File exists"),
        source=_KMOD,
    ),
    Entry(
        "EBUSY", "device or module busy",
        "the kernel could not take the GPU or the module (Device or resource busy): another "
        "driver (vfio-pci, nouveau) is bound to the GPU, or a process still holds it",
        "on {node}: `lspci -nnk -d 10de:` shows the driver bound to each GPU; unbind it or "
        "blacklist it and reboot; " + _HOLDERS,
        "driver",
        aliases=("Device or resource busy",),
        source=_KMOD,
    ),
    Entry(
        "ENOMEM", "no memory to load the module",
        "the kernel could not allocate the memory the module needs (Cannot allocate memory): the "
        "node is out of memory or of vmalloc space, or a GPU's BAR cannot be mapped",
        f"on {{node}}: {_DMESG}; free memory or reboot the node, and check the BIOS maps the "
        "GPU's BARs (Above 4G decoding on)",
        "driver",
        aliases=("Cannot allocate memory",),
        source=_KMOD,
    ),
)  # fmt: skip

_UNLOAD = (
    Entry(
        "module-in-use", "module in use, cannot unload",
        "the NVIDIA module cannot be unloaded while anything uses it: its dependent modules "
        "(nvidia_uvm, nvidia_modeset, nvidia_drm), or processes with the GPU open "
        "(nvidia-persistenced, Fabric Manager, DCGM, the device plugin, a display manager, a "
        "GPU pod); a driver upgrade or the GPU Operator's driver container waits on it",
        _HOLDERS,
        "driver",
        aliases=("in use",),
        texts=("is in use by:",),
        source=_KMOD_RMMOD,
    ),
    Entry(
        "module-not-found", "no module for the running kernel",
        "modprobe found no nvidia module for the running kernel: the driver was built for another "
        "kernel (a kernel upgraded without a DKMS rebuild), or its packages are not installed",
        "on {node}: `ls /lib/modules/$(uname -r)/updates/dkms/` and `dkms status` show what was "
        "built; " + _REBUILD,
        "driver",
        texts=("could not find module by name",),
        source=_KMOD_LIB,
    ),
)  # fmt: skip

_INSTALLER_ENTRIES = (
    Entry(
        "build-gpl-only-symbol", "driver source too old for the kernel (GPL-only symbol)",
        "the NVIDIA module build failed at the kernel's modpost step: the driver's source uses a "
        "symbol that this (newer) kernel exports to GPL modules only, so a driver branch older "
        "than the kernel cannot be built for it (e.g. rcu_read_unlock_strict on recent kernels "
        "for drivers before 535.183.08)",
        "on {node}: install a driver release that supports the running kernel (`uname -r`), "
        "in the GPU Operator set `driver.version` to it, or run the previous kernel; then "
        + _BOOTSTRAP,
        "driver",
        texts=("GPL-incompatible module nvidia", "uses GPL-only symbol"),
        source="https://github.com/torvalds/linux/blob/v6.12/scripts/mod/modpost.c",
    ),
    Entry(
        "installer-x-server", "X server running during install",
        "nvidia-installer found an X server running: a display manager (gdm, lightdm) holds the "
        "GPU, so the old modules cannot be unloaded and the install stops",
        "on {node}: `sudo systemctl isolate multi-user.target` (or stop the display manager), "
        "then rerun the install: " + _BOOTSTRAP,
        "driver",
        texts=("You appear to be running an X server",),
        source=f"{_INSTALLER}/misc.c",
    ),
    Entry(
        "installer-toolchain-missing", "compiler or tool missing for the build",
        "nvidia-installer cannot build the kernel modules: a tool it needs (cc, make, ld, the "
        "kernel's build tools) is not installed or not in PATH",
        "on {node}: `sudo apt-get install build-essential linux-headers-$(uname -r)` (dnf: `gcc "
        "make kernel-devel-$(uname -r)`), then " + _BOOTSTRAP,
        "driver",
        texts=("Unable to find the development tool", "Unable to find the system utility"),
        source=f"{_INSTALLER}/misc.c",
    ),
    Entry(
        "installer-kernel-headers", "kernel headers incomplete or of another kernel",
        "nvidia-installer found kernel sources that do not match the running kernel: a header "
        "file is missing or the sources were never configured (headers of another kernel "
        "version, or only part of the headers package installed)",
        "on {node}: install the headers of exactly the running kernel (`sudo apt-get install "
        "linux-headers-$(uname -r)`; dnf: `kernel-devel-$(uname -r)`), reboot into the newest "
        "kernel if that package no longer exists, then " + _BOOTSTRAP,
        "driver",
        texts=("have not been configured", "The most likely reason for this is that the kernel source path"),
        source=f"{_INSTALLER}/kernel.c",
    ),
    Entry(
        "installer-sanity-check", "module build-time check failed",
        "a sanity check of the kernel module build failed (the `CC` check: the compiler differs "
        "from the one that built the running kernel, or the kernel lacks a feature the driver "
        "needs); the lines after it name the check",
        "on {node}: install the compiler version the kernel was built with (`cat /proc/version` "
        "names it; e.g. `sudo apt-get install gcc-12` and `export CC=gcc-12`), or upgrade the "
        "kernel and driver together, then " + _BOOTSTRAP,
        "driver",
        # The kernel module Makefile's own target name where the installer's message is absent
        # (the GPU Operator's driver container prints make's output).
        texts=("sanity check failed:", "CC version check failed", "[cc_version_check] Error"),
        source=f"{_INSTALLER}/kernel.c",
    ),
    Entry(
        "installer-module-required", "a required driver module failed to load",
        "nvidia-installer built a module (nvidia-drm, nvidia-modeset, nvidia-uvm, nvidia-peermem) "
        "that then failed to load: it needs kernel modules the running kernel does not have "
        "(nvidia-drm needs the DRM helpers, missing from minimal cloud kernels), or Secure Boot "
        "refused it",
        f"on {{node}}: `sudo modprobe MODULE`, then {_DMESG}; install the kernel's extra modules "
        "(`sudo apt-get install linux-modules-extra-$(uname -r)`), or skip the module if the node "
        "does not need it (the installer's `--no-drm`), then " + _BOOTSTRAP,
        "driver",
        texts=(
            "kernel module is required for the proper operation of",
            "Unable to load the 'nvidia",
        ),
        source=f"{_INSTALLER}/kernel.c",
    ),
    Entry(
        "installer-cannot-sign", "no way to sign the modules for Secure Boot",
        "nvidia-installer was asked to sign the modules (Secure Boot is on) but cannot: the "
        "kernel's `sign-file` program or the hash algorithm was not found, or key generation failed",
        "on {node}: install the headers of the running kernel (they carry scripts/sign-file) and "
        "openssl, or use signed modules from the distribution (Ubuntu `linux-modules-nvidia-*`), "
        "then " + _BOOTSTRAP,
        "driver",
        texts=(
            "without the `sign-file` module signing program",
            "without specifying a hash algorithm",
            "Failed to generate key pair",
        ),
        source=f"{_INSTALLER}/kernel.c",
    ),
    Entry(
        "installer-dkms-build-failed", "DKMS build of the driver failed",
        "nvidia-installer had DKMS build the kernel modules and the build failed: the running "
        "kernel's headers are missing or of another version, or this driver release does not "
        "build against this (newer) kernel",
        "on {node}: `sudo cat /var/lib/dkms/nvidia/*/build/make.log | tail -40` names the error; "
        "install `linux-headers-$(uname -r)`, or a driver release that supports the kernel, then "
        + _BOOTSTRAP,
        "driver",
        texts=("dkms build -m nvidia",),
        source=f"{_INSTALLER}/misc.c",
    ),
    # dkms 3.x (dkms.in; BUILD_EXCLUSIVE_KERNEL, _KERNEL_MIN/_MAX, _ARCH, _CONFIG in dkms.conf):
    # exit code 77, an error for `dkms build/install`, skipped by `dkms autoinstall` (an error
    # there before 3.0.11). NVIDIA's own DKMS packages (nvidia-fs, gdrdrv, the open modules of a
    # distribution) use it to refuse kernels the release does not support.
    Entry(
        "dkms-build-exclusive", "DKMS module excluded from this kernel",
        "DKMS did not build the module for this kernel: its dkms.conf limits the kernels, "
        "architectures or kernel options it builds for (BUILD_EXCLUSIVE_KERNEL, _KERNEL_MIN/_MAX, "
        "_ARCH, _CONFIG) and the target kernel is outside them, so no module is installed for it "
        "(after a kernel upgrade: the module missing on the next boot)",
        "on {node}: `dkms status` and `grep BUILD_EXCLUSIVE /var/lib/dkms/MODULE/*/source/dkms.conf` "
        "show the module and the kernels it allows; install a release of the package that supports "
        "the kernel (for the driver: a newer branch, or the distribution's precompiled modules for "
        "it), or boot a kernel it allows (`uname -r`); then `sudo dkms autoinstall -k $(uname -r)`",
        "driver",
        texts=("includes a BUILD_EXCLUSIVE directive",),
        source="https://github.com/dkms-project/dkms/blob/main/dkms.8.in",
    ),
    Entry(
        "installer-dkms-missing", "dkms not installed",
        "nvidia-installer was told to register the modules with DKMS but dkms is not installed, "
        "so the modules are not rebuilt for the next kernel",
        "on {node}: `sudo apt-get install dkms` (dnf: `dkms` from EPEL), then " + _BOOTSTRAP,
        "packages",
        texts=("Failed to find dkms on the system",),
        source=f"{_INSTALLER}/misc.c",
    ),
)  # fmt: skip

_PERSISTENCED_ENTRIES = (
    Entry(
        "persistenced-no-devices", "nvidia-persistenced cannot open the GPUs",
        "nvidia-persistenced could not open the GPUs' device files: the driver is not loaded (so "
        "/dev/nvidia* do not exist), or the daemon's user may not read and write them",
        "on {node}: `ls -l /dev/nvidia*` and `nvidia-smi` must work; if the driver is not loaded "
        f"see {_DMESG}; otherwise run the daemon as root (`nvidia-persistenced --user root`), "
        "then `sudo systemctl restart nvidia-persistenced`",
        "driver",
        texts=("Failed to query NVIDIA devices", "Unable to find any NVIDIA devices"),
        source=_PERSISTENCED,
    ),
    Entry(
        "persistenced-numa-permission", "nvidia-persistenced may not online GPU memory",
        "on a coherent GPU (Grace Hopper, Grace Blackwell) nvidia-persistenced must online the "
        "GPU's memory as a NUMA node, which needs root; run as an unprivileged user it cannot "
        "write /sys/devices/system/memory and fails to initialise",
        "on {node}: run it as root (`ExecStart=/usr/bin/nvidia-persistenced --user root` in a "
        "`sudo systemctl edit nvidia-persistenced` override), then `sudo systemctl restart "
        "nvidia-persistenced`",
        "driver",
        texts=("auto_online_blocks: Permission denied",),
        source=_NUMA,
    ),
    Entry(
        "persistenced-already-running", "another nvidia-persistenced runs",
        "nvidia-persistenced could not lock its PID file: another instance already runs (the "
        "host's service and the GPU Operator's driver container both start one)",
        "on {node}: `pgrep -a nvidia-persistenced`; keep one (with the GPU Operator's driver, "
        "`sudo systemctl disable --now nvidia-persistenced` on the host)",
        "driver",
        texts=("Failed to lock PID file",),
        source=_PERSISTENCED,
    ),
    Entry(
        "persistenced-failed", "nvidia-persistenced did not start",
        "nvidia-persistenced failed to initialise, so the GPUs are not kept initialised (each "
        "program and container start re-initialises them, slowly; the container start hook may "
        "time out); the syslog lines before it say why",
        "on {node}: `journalctl -u nvidia-persistenced -b` names the reason (most often the "
        "driver is not loaded: `nvidia-smi`); fix it, then `sudo systemctl restart "
        "nvidia-persistenced`",
        "driver",
        texts=("nvidia-persistenced failed to initialize",),
        source=_PERSISTENCED,
    ),
)  # fmt: skip

_ENTRIES = (*_LOAD, *_UNLOAD, *_INSTALLER_ENTRIES, *_PERSISTENCED_ENTRIES)

# The errno texts a load failure ends with, longest first (one is a prefix of another).
_REASONS = "|".join(
    sorted({alias for entry in _LOAD for alias in entry.aliases} - {"version magic", "Unknown parameter"},
           key=lambda reason: (-len(reason), reason))
)  # fmt: skip

CATALOGUE = Catalogue(
    id="kernel-module",
    title="Kernel module load and unload (kmod, kernel module loader, nvidia-installer, nvidia-persistenced)",
    source=_KMOD,
    version="kmod v34 (modprobe, insmod, rmmod; module-init-tools' wording kept); Linux 6.12 module "
    "loader; nvidia-installer 590.48.01; nvidia-persistenced 595.71.05",
    entries=_ENTRIES,
    applies_to=("kernel", "host", "operator-driver"),
    readers=(
        # modprobe: `could not insert 'nvidia': No such device`; insmod: `could not insert module
        # nvidia.ko: Invalid module format`; module-init-tools: `Error inserting nvidia
        # (/lib/modules/.../nvidia.ko): No such device`; systemd-modules-load: `Failed to insert
        # module 'nvidia': ...`. Only NVIDIA's modules (nvidia*, nv_peer_mem, gdrcopy's gdrdrv):
        # the causes are theirs.
        r"(?:could not insert (?:module )?|Failed to insert module |Error inserting )'?"
        r"(?P<module>(?:[\w./-]*/)?(?:nv|gdrdrv)[\w.-]*)'?(?: \([^)\n]*\))?: (?P<code>" + _REASONS + ")",
        # The kernel's own lines: `nvidia: version magic '6.5.0 SMP mod_unload ' should be ...`,
        # `nvidia: Unknown parameter `NVreg_Foo'`.
        r"\b(?P<module>nvidia\w*|nv_peer_mem): (?P<code>version magic|Unknown parameter) ['`]",
        # rmmod/modprobe -r: `Module nvidia is in use` (`... in use by: nvidia_uvm` is a text).
        r"Module (?P<module>nvidia\w*) is (?P<code>in use)(?! by:)",
    ),
)
