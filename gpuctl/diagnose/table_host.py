"""Host rows: what apt, DKMS, modprobe and the kernel print while the NVIDIA driver is installed
and loaded (gpuctl's own host phase, the GPU Operator's driver container, a pasted journal)."""

from __future__ import annotations

from gpuctl.diagnose.signatures import sig

_REBUILD = (
    "install the headers of the running kernel and rebuild the module (`sudo apt-get install "
    "linux-headers-$(uname -r) && sudo dkms autoinstall`; RHEL: `kernel-devel-$(uname -r)`), or "
    "rerun `gpuctl bootstrap --phase host -i INVENTORY --limit {node}`, then reboot {node}"
)
_RERUN = "then `gpuctl bootstrap --phase host -i INVENTORY --limit {node}`"
# The kernel's and nvidia-installer's words for a module Secure Boot refused; the Operator's driver
# container prints nvidia-installer's.
_MODULE_LOAD = ("operator-driver", "kernel")

HOST = (
    sig(
        "host.secure-boot-rejected", "host", "driver",
        r"Key was rejected by service|not signed by a key that is trusted by the kernel|"
        r"Kernel module load error: Operation not permitted|Loading of (?:unsigned module|module with "
        r"unavailable key) is rejected",
        "the kernel refused to load the module: Secure Boot is on and the module is unsigned, or "
        "signed with a key the firmware does not trust (a DKMS build whose signing key was never "
        "enrolled with MOK)",
        "on {node}: `mokutil --sb-state`; enroll the DKMS signing key (`sudo mokutil --import "
        "/var/lib/dkms/mok.pub`, confirm it at the next boot), install the distribution's signed "
        "modules (Ubuntu `linux-modules-nvidia-*`), or turn Secure Boot off; under the GPU Operator "
        "use its precompiled signed driver or install the driver on the host (`gpuctl bootstrap "
        "--phase host -i INVENTORY --limit {node}`, then `--no-operator-driver`)",
        also=_MODULE_LOAD,
    ),
    sig(
        "host.module-not-built", "host", "driver",
        r"modprobe: FATAL: Module nvidia\S* not found",
        "no NVIDIA kernel module exists for the running kernel: it was built for another kernel "
        "(the node booted a new kernel and DKMS did not rebuild it, or a .run install without "
        "DKMS), or the driver is not installed",
        "on {node}: compare `uname -r` with `dkms status` and `ls /lib/modules/$(uname -r)/updates/dkms`; "
        + _REBUILD,
        also=("nvidia-smi", "kernel"),
    ),
    sig(
        "host.kernel-headers-missing", "host", "driver",
        r"kernel headers for kernel \S+ cannot be found|ERROR: Missing \S+ kernel headers for module|"
        # make's words when the module is built by hand or by nvidia-installer without DKMS.
        r"/lib/modules/\S+/build: No such file or directory",
        "DKMS cannot build the NVIDIA module: the headers (build tree) of the kernel are not "
        "installed, so no module exists for that kernel",
        "on {node}: " + _REBUILD + "; `gpuctl preflight --limit {node}` checks the headers",
        also=("operator-driver",),
    ),
    sig(
        "host.selinux-module-load", "host", "driver",
        # EACCES ("Permission denied") comes from a security module; Secure Boot's refusal is
        # EKEYREJECTED or EPERM (host.secure-boot-rejected).
        r"could not insert 'nvidia\w*': Permission denied|avc:\s+denied\s+\{ module_load \}.*nvidia",
        "SELinux (enforcing) denied loading the NVIDIA kernel module: the policy does not let the "
        "loading process (e.g. the GPU Operator's driver container, unconfined_service_t) load a "
        "module file with that label (a container's overlay file, container_file_t or var_lib_t)",
        "on {node}: `sudo ausearch -m avc -c modprobe` shows the denial; install the driver on the "
        "host (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`, then `--no-operator-driver` "
        "for the GPU Operator), or allow it with a local policy module (`sudo ausearch -m avc -c "
        "modprobe --raw | audit2allow -M nvidia-module-load && sudo semodule -i nvidia-module-load.pp`), "
        "or update selinux-policy; `getenforce` says whether SELinux enforces",
        also=_MODULE_LOAD,
    ),
    sig(
        "host.dkms-build-failed", "host", "driver",
        r"Bad return status for module build on kernel: \S+|"
        # make.log's compiler errors in the driver's DKMS build tree (or nvidia-installer's).
        r"/var/lib/dkms/nvidia[\w-]*/[\w.-]+/build/\S+: (?:fatal )?error: |"
        r"/usr/src/nvidia[\w-]*-\d[\w.-]*/\S+: (?:fatal )?error: |"
        r"NVIDIA-Linux-[\w.-]+/kernel[\w-]*/\S+: (?:fatal )?error: |"
        r"make\[\d+\]: \*\*\* \[[^\]\s]*/var/lib/dkms/nvidia[^\]\s]*\] Error \d+",
        "DKMS failed to compile the NVIDIA kernel module for a kernel (the line names the kernel, "
        "or the source file make.log's compiler stopped at): the driver branch is too old for that "
        "kernel (a newer kernel removed or changed a function, type or header the driver's source "
        "uses: `implicit declaration of function`, `unknown type name`, `No such file or "
        "directory`), or the kernel's headers are incomplete",
        "on {node}: read the first `error:` of /var/lib/dkms/nvidia/*/build/make.log; install a "
        "driver branch that supports the kernel (`apt-cache policy 'nvidia-dkms-*'`, e.g. `sudo "
        "apt-get install nvidia-dkms-BRANCH`, or its `-open` flavour) or boot the previous kernel "
        "and hold the new one (`sudo apt-mark hold linux-image-generic linux-headers-generic`); "
        "with the headers missing `sudo apt-get install linux-headers-KERNEL`; then `sudo dkms "
        "autoinstall -k KERNEL`, " + _RERUN,
        also=("operator-driver",),
    ),
    sig(
        "host.dkms-compiler-mismatch", "host", "driver",
        # Newer drivers only warn (`Warning: Compiler version check failed:`) and build on, as
        # does the kernel's `warning: the compiler differs from the one used to build the kernel`.
        r"(?<!Warning: )Compiler version check failed|"
        r"does not exactly match the current compiler|"
        # The kernel's Makefile calls the compiler that built it (its CC), which is not installed.
        r"(?:^|[\s:])(?:[\w-]+-linux-gnu-)?gcc-\d+(?:\.\d+)?: (?:command )?not found",
        "the NVIDIA module is built with another compiler than the one that built the running "
        "kernel: the kernel's gcc (named in /proc/version and after `The kernel was built by:`) "
        "is not installed, so its Makefile's `gcc-N` is not found, or the "
        "installed gcc's major/minor version differs and the build's compiler check refuses it",
        "on {node}: `cat /proc/version` names the kernel's compiler; install that gcc version "
        "(Ubuntu `sudo apt-get install gcc-N`, RHEL the `gcc` of the kernel's release or "
        "`gcc-toolset-N`) and rebuild with it (`sudo dkms autoinstall -k $(uname -r)`, or "
        "`CC=gcc-N` for a manual build; nvidia-installer `--no-cc-version-check` only when the "
        "major version matches), or install a kernel built by the installed gcc; " + _RERUN,
        also=("operator-driver",),
    ),
    sig(
        "host.module-unknown-symbol", "host", "driver",
        r"could not insert '(?:nvidia\w*|nv_peer_mem)': Unknown symbol in module|"
        r"\b(?:nvidia\w*|nv_peer_mem): (?:Unknown symbol|disagrees about version of symbol) \w+",
        "the kernel refused an NVIDIA module because it was built against other versions of the "
        "modules it calls: the GPUDirect RDMA module (nv_peer_mem, nvidia_peermem) was built "
        "against another InfiniBand stack (inbox ib_core vs MLNX_OFED/DOCA-OFED, or OFED "
        "reinstalled or upgraded after it was built), or nvidia_uvm/nvidia_modeset/"
        "nvidia_peermem come from another driver version than the nvidia.ko on disk",
        "on {node}: `sudo dmesg | grep -i -e 'Unknown symbol' -e 'disagrees about'` names the "
        "symbols (ib_* from the OFED stack, nv*/nvUvm* from nvidia.ko); `modinfo -F version "
        "nvidia nvidia_uvm nvidia_peermem` and `ofed_info -s`; for GPUDirect RDMA use the "
        "nvidia-peermem of the driver (R470 and later, instead of the old nv_peer_mem package) "
        "and rebuild the driver's modules after installing OFED (`sudo dkms autoinstall`, or "
        "reinstall nvidia-peermem/nv_peer_mem; under the GPU Operator install MOFED before the "
        "driver or use its DMA-BUF mode), or reinstall the driver so all its modules are of one "
        "version; " + _RERUN,
        also=_MODULE_LOAD,
    ),
    sig(
        "host.nouveau-bound", "host", "driver",
        r"The Nouveau kernel driver is currently in use",
        "the open-source nouveau driver holds the GPU, so the NVIDIA driver can neither install "
        "nor load",
        "on {node}: blacklist nouveau, and nova_core on kernels that have it (`printf 'blacklist "
        "nouveau\\noptions nouveau modeset=0\\nblacklist nova_core\\nblacklist nova_drm\\n' | "
        "sudo tee /etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u`), reboot, and "
        "check `lsmod | grep -e nouveau -e nova` prints nothing; `gpuctl preflight --limit {node}` "
        "reports it",
        also=("operator-driver",),
    ),
    # --- apt ------------------------------------------------------------------------------------
    sig(
        "host.apt-no-candidate", "host", "packages",
        r"no available installation candidate for \S+|No package matching '[^']+' is available|"
        r"Package '[^']+' has no installation candidate",
        "apt knows no installable version of the package the task asked for: the configured "
        "repositories do not carry that package or pinned version (repository missing, or not "
        "published for this distribution release, or a pin naming a version that does not exist)",
        "on {node}: `apt-cache policy PACKAGE` lists what the repositories offer; fix the version "
        "pin in the inventory (e.g. `gpuctl_toolkit_version`, `gpuctl_driver_version`) or the "
        "repository, " + _RERUN,
    ),
    sig(
        # apt's summary: the `Depends:` lines above it (apt.nvidia-version-skew,
        # apt.unmet-dependencies) name the conflict, so they rank first where a log has them.
        "host.apt-held-broken", "host", "config",
        r"you have held broken packages",
        "apt cannot find a consistent set of versions for the requested packages (the lines "
        "before it, `The following packages have unmet dependencies:`, name which): installed "
        "packages of the previous driver branch conflict with the new branch's (e.g. "
        "nvidia-*-450 still installed when nvidia-headless-460-server is asked for), the NVIDIA "
        "packages come from two repositories (the distribution's and NVIDIA's CUDA repository) "
        "at different versions, or a pinned or held package blocks the version needed (an exact "
        "version of a meta-package whose dependencies resolve to another version)",
        "on {node}: `apt-get install --dry-run PACKAGE` prints the unmet dependencies, `dpkg -l "
        "'nvidia-*' 'libnvidia-*'` the installed branches, `apt-cache policy PACKAGE` the "
        "repositories and `apt-mark showhold` the held packages; remove the old branch (`sudo "
        "apt-get purge 'nvidia-*' 'libnvidia-*'`) before installing the new one, keep one "
        "repository for NVIDIA packages (or pin it), pin every package of the branch to one "
        "version or unhold the stale ones (`sudo apt-mark unhold PACKAGE`), " + _RERUN,
    ),
    sig(
        "host.apt-held-changed", "host", "packages",
        r"Held packages were changed and -y was used without --allow-change-held-packages",
        "the packages are held (`apt-mark hold`) and the install asked for another version "
        "without allowing held packages to change",
        "on {node}: `apt-mark showhold`; gpuctl's roles allow their own held packages to move, so "
        "another tool holds these: unhold them (`sudo apt-mark unhold PACKAGE`) or pin the held "
        "version in the inventory, " + _RERUN,
    ),
)  # fmt: skip
