# gpuctl's one host probe. Reads, in one process, everything gpuctl needs to know about a host
# and prints it as one JSON object: the roles run it through `raw` (no module upload: one SSH round
# trip and one short Python start instead of one Ansible module per file, package, command and
# service), `gpuctl preflight` and the simulated cluster's host links through SSH, and gpuctl reads
# its answer with one parser (gpuctl/hosts/host_state.py).
# Read-only; Python 3.6 and later (EL 8's platform-python). The request (argv[1], JSON) names what
# to read, or is a list of such requests (one per role: one round trip reads for all of them) whose
# union is read; everything in it is optional:
#   host: section names (HOST_SECTIONS below), or true for all -> {section: what it found}: the
#     host's GPU-relevant state (PCI bus, modules, Secure Boot, headers and DKMS, driver and
#     nvidia-smi, Fabric Manager, runtimes and whether each knows the nvidia runtime, disk, OS,
#     RDMA NICs and devices, peer-memory modules and locked-memory limits)
#   files: paths -> {path: {type, mode, owner, group, sha1 (regular files)}}; missing paths are left out
#   read: paths -> {path: text}, for the files whose content the role parses; missing: left out
#   globs: {key: pattern} -> {key: sorted matching paths}
#   disks: paths -> {path: bytes available to unprivileged users on its filesystem}
#   packages: names -> {name: {version, want, status}} from dpkg (want: install | hold | ...)
#   commands: {key: argv} -> {key: {rc, stdout, stderr}}; rc -1 and msg when the program is missing
#     (no stdout_lines: a role splits the few outputs it reads by line, and containerd's
#     configuration dump, a few hundred lines, is not carried twice in every task's variables)
#   containerd_bases: {key: {config, imports, without, none}} -> {key: {rc, stdout, stderr}}:
#     `containerd config dump` of the file `config` as it is on the host, its import of the glob
#     `imports` narrowed to the files that glob matches other than `without` (or to the glob `none`,
#     which matches nothing): containerd 1.x's configuration without gpuctl's drop-in, as the
#     runtime role's containerd_base.yml dumps it from the config.toml it writes. Left out when
#     `config` cannot be read.
import glob
import grp
import hashlib
import json
import os
import platform
import pwd
import re
import stat
import subprocess
import sys

COMMAND_TIMEOUT_S = 60
HOST_COMMAND_TIMEOUT_S = 20  # one host section's command: a hung nvidia-smi must not hold the rest
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
NVIDIA_VENDOR = "0x10de"
PCI_DEVICES = "/sys/bus/pci/devices"
# PCI class prefixes: GPUs are display controllers (VGA 0x0300, 3D 0x0302), NVSwitches the
# bridges of class 0x0680 on HGX baseboards (then Fabric Manager is needed).
GPU_CLASSES = ("0x0300", "0x0302")
NVSWITCH_CLASS = "0x0680"
RUNTIMES = ("containerd", "docker", "crio", "k3s", "rke2")
CONTAINERD_CONFIGS = (
    "/etc/containerd/config.toml",
    "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
    "/var/lib/rancher/rke2/agent/etc/containerd/config.toml",
)
NVIDIA_SMI_QUERY = [
    "nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits",
]


def describe(path):
    try:
        info = os.stat(path)
    except OSError:
        return None
    found = {
        "type": "directory" if stat.S_ISDIR(info.st_mode) else "file",
        "mode": "%04o" % stat.S_IMODE(info.st_mode),
        "owner": name_of(pwd.getpwuid, info.st_uid),
        "group": name_of(grp.getgrgid, info.st_gid),
    }
    if stat.S_ISREG(info.st_mode):
        with open(path, "rb") as handle:
            found["sha1"] = hashlib.sha1(handle.read()).hexdigest()
    return found


def name_of(lookup, number):
    try:
        return lookup(number)[0]
    except KeyError:
        return str(number)


def available_bytes(path):
    try:
        info = os.statvfs(path)
    except OSError:
        return None
    return info.f_bavail * info.f_frsize


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def packages(names):
    if not names:
        return {}
    try:
        listed = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Package}\\t${Version}\\t${Status}\\n"] + list(names),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True, check=False,
        ).stdout
    except OSError:  # not a dpkg system
        return {}
    found = {}
    for line in listed.splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and len(fields[2].split()) == 3:
            want, _, status = fields[2].split()
            found[fields[0]] = {"version": fields[1], "want": want, "status": status}
    return found


def run(argv, stdin_text=None, timeout=COMMAND_TIMEOUT_S, env=None):
    try:
        done = subprocess.run(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, input=stdin_text,
            stdin=subprocess.DEVNULL if stdin_text is None else None,
            universal_newlines=True, timeout=timeout, check=False, env=env,
        )
    except OSError as error:
        return {"rc": -1, "stdout": "", "stderr": "", "msg": "%s: %s" % (argv[0], error.strerror)}
    except subprocess.TimeoutExpired:
        return {"rc": -1, "stdout": "", "stderr": "", "msg": "%s: timed out" % argv[0]}
    return {"rc": done.returncode, "stdout": done.stdout.rstrip("\n"), "stderr": done.stderr.rstrip("\n")}


def containerd_base(config, imports, without, none):
    text = read_text(config)
    if text is None:
        return None
    others = [path for path in sorted(glob.glob(imports)) if path != without] or [none]
    text = text.replace(json.dumps(imports), ", ".join(json.dumps(path) for path in others))
    return run(["containerd", "--config", "/dev/stdin", "config", "dump"], text)


# --- The host's GPU-relevant state (request key `host`). Each reader returns plain JSON values;
# the few classifications here (a PCI function's kind, the Secure Boot state) are the only ones:
# the roles' Jinja and gpuctl read them as they are.


def host_run(argv):
    """A host section's command with the system directories on PATH (sudo's secure_path may lack
    /usr/sbin on some hosts), time-limited."""
    environment = dict(os.environ, PATH=PATH + ":" + os.environ.get("PATH", ""), LC_ALL="C")
    return run(argv, timeout=HOST_COMMAND_TIMEOUT_S, env=environment)


def installed(program):
    return any(os.access(os.path.join(folder, program), os.X_OK) for folder in PATH.split(":"))


def first_line(path):
    text = read_text(path)
    return text.strip().lower() if text is not None else ""


def pci_kind(class_code):
    if class_code.startswith(GPU_CLASSES):
        return "gpu"
    return "nvswitch" if class_code.startswith(NVSWITCH_CLASS) else "other"


def pci_devices(root=PCI_DEVICES):
    """Every NVIDIA PCI function, in bus order: {slot, device, class, kind}."""
    try:
        slots = sorted(os.listdir(root))
    except OSError:
        return []
    found = []
    for slot in slots:
        if first_line(os.path.join(root, slot, "vendor")) != NVIDIA_VENDOR:
            continue
        class_code = first_line(os.path.join(root, slot, "class"))
        found.append({
            "slot": slot, "device": first_line(os.path.join(root, slot, "device")), "class": class_code,
            "kind": pci_kind(class_code),
        })
    return found


PCI_LINK_FILES = ("current_link_speed", "max_link_speed", "current_link_width", "max_link_width")


def gpu_links(root=PCI_DEVICES):
    """Each NVIDIA GPU's PCIe link as sysfs prints it ("16.0 GT/s PCIe", "16"): the speed and width
    it trained at and the most it can run at."""
    found = []
    for device in pci_devices(root):
        if device["kind"] == "gpu":
            files = [os.path.join(root, device["slot"], name) for name in PCI_LINK_FILES]
            link = dict(zip(PCI_LINK_FILES, [(read_text(path) or "").strip() for path in files]))
            link["slot"] = device["slot"]
            found.append(link)
    return found


def loaded_modules():
    """nouveau and nvidia* modules, loaded or built in: /proc/modules (which may be absent), and
    /sys/module/<name>, which exists while a module is loaded."""
    names = set()
    for line in (read_text("/proc/modules") or "").splitlines():
        name = line.split(" ", 1)[0]
        if re.match(r"^(nouveau|nvidia[a-z_]*)$", name):
            names.add(name)
    present = glob.glob("/sys/module/nouveau") + glob.glob("/sys/module/nvidia*")
    names.update(os.path.basename(path) for path in present)
    return sorted(names)


def module_version():
    """The loaded nvidia module's version ("580.95.05"), "" when none is loaded: after a driver
    upgrade without a reboot the old module stays loaded, and this is what tells it apart."""
    return first_line("/sys/module/nvidia/version")


def secure_boot_state(said):
    """enabled | disabled | bios | unknown, from what secure_boot_said() printed."""
    lowered = said.lower()
    numbers = said.split()[1:] if said.startswith("efivar ") else []
    if "secureboot enabled" in lowered or (len(numbers) >= 5 and numbers[-1] == "1"):
        return "enabled"
    if "secureboot disabled" in lowered or (len(numbers) >= 5 and numbers[-1] == "0"):
        return "disabled"
    if lowered.strip() == "bios" or "efi variables are not supported" in lowered:
        return "bios"
    return "unknown"


def secure_boot_said():
    """mokutil's answer; else the bytes of the SecureBoot EFI variable (the last one is 1 when
    Secure Boot is on); else "bios" on a host booted without UEFI."""
    if installed("mokutil"):
        answer = host_run(["mokutil", "--sb-state"])
        return (answer["stdout"] + "\n" + answer["stderr"]).strip()
    if not os.path.isdir("/sys/firmware/efi"):
        return "bios"
    for path in sorted(glob.glob("/sys/firmware/efi/efivars/SecureBoot-*")):
        try:
            with open(path, "rb") as handle:
                data = bytearray(handle.read())
        except (IOError, OSError):
            continue
        return "efivar " + " ".join(str(byte) for byte in data)
    return "efi unknown"


def secure_boot():
    said = secure_boot_said()
    return {"state": secure_boot_state(said), "said": said}


def headers():
    """Headers for the running kernel: the folders installed, and what the package manager offers."""
    kernel = platform.release()
    folders = [
        "/usr/src/linux-headers-" + kernel, "/lib/modules/%s/build" % kernel, "/usr/src/kernels/" + kernel,
    ]
    found = {"installed": [path for path in folders if os.path.exists(path)], "manager": "", "offered": ""}
    if installed("apt-cache"):
        found["manager"] = "apt"
        found["offered"] = host_run(["apt-cache", "policy", "linux-headers-" + kernel])["stdout"]
    elif installed("dnf"):
        found["manager"] = "dnf"
        listed = host_run(["dnf", "-q", "-C", "list", "--available", "kernel-devel-" + kernel])["stdout"]
        found["offered"] = "\n".join(line for line in listed.splitlines() if line.startswith("kernel-devel"))
    return found


def dkms():
    """`dkms status` ("<module>/<version>: added" until built for a kernel, then "<module>/<version>,
    <kernel>, <arch>: installed") and whether the running kernel's headers are there to build with;
    null without DKMS."""
    if not installed("dkms"):
        return None
    answer = host_run(["dkms", "status"])
    return {
        "status": (answer["stdout"] + "\n" + answer["stderr"]).strip(),
        "headers_present": os.path.exists("/lib/modules/%s/build" % platform.release()),
    }


def fabricmanager():
    """systemd's view of the service and the installed package, as `systemctl show` and the package
    manager print them (gpuctl/hosts/fabricmanager.py reads these lines)."""
    lines = []
    if installed("systemctl"):
        shown = host_run(["systemctl", "show", "-p", "LoadState", "-p", "ActiveState", "-p", "UnitFileState",
                          "nvidia-fabricmanager"])
        lines.extend(shown["stdout"].splitlines())
    if installed("dpkg-query"):
        listed = host_run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev} ${Package} ${Version}\\n",
                           "nvidia-fabricmanager*"])["stdout"]
        for fields in (line.split() for line in listed.splitlines()):
            if len(fields) == 3 and fields[0][1:2] == "i" and "-dev" not in fields[1]:
                lines.append("package %s %s" % (fields[1], fields[2]))
    elif installed("rpm"):
        query = "package %{NAME} %{VERSION}-%{RELEASE}\\n"
        listed = host_run(["rpm", "-q", "--qf", query, "nvidia-fabricmanager"])
        lines.extend(line for line in listed["stdout"].splitlines() if line.startswith("package "))
    return "\n".join(lines)


# RDMA NICs on the PCI bus: NVIDIA (Mellanox) ConnectX/BlueField network functions, AWS EFA.
RDMA_NIC_VENDORS = {"0x15b3": "", "0x1d0f": "0xefa"}  # vendor -> device id prefix ("": any network function)
IB_CLASS = "/sys/class/infiniband"
IB_PORT_FILES = ("state", "phys_state", "rate", "link_layer")
# The modules GPUDirect RDMA and the RDMA stack need (names as /proc/modules spells them).
RDMA_MODULES = ("nvidia_peermem", "nv_peer_mem", "ib_core", "ib_uverbs", "mlx5_ib", "efa")
RUNTIME_DAEMONS = ("containerd", "dockerd", "crio")
KERNEL_CONFIG_KEYS = ("CONFIG_DMA_SHARED_BUFFER", "CONFIG_PCI_P2PDMA")


def rdma_nics(root=PCI_DEVICES):
    """The RDMA-capable NICs on the PCI bus: {slot, vendor, device, class}."""
    found = []
    for slot in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        vendor = first_line(os.path.join(root, slot, "vendor"))
        device = first_line(os.path.join(root, slot, "device"))
        class_code = first_line(os.path.join(root, slot, "class"))
        prefix = RDMA_NIC_VENDORS.get(vendor)
        if prefix is None or not class_code.startswith("0x02") or not device.startswith(prefix):
            continue
        found.append({"slot": slot, "vendor": vendor, "device": device, "class": class_code})
    return found


def rdma_devices(root=IB_CLASS):
    """/sys/class/infiniband: device -> port -> {state, phys_state, rate, link_layer}, as the kernel
    prints them ("4: ACTIVE", "5: LinkUp", "400 Gb/sec (4X NDR)", "InfiniBand")."""
    found = {}
    for device in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        ports_dir = os.path.join(root, device, "ports")
        ports = {}
        for port in sorted(os.listdir(ports_dir)) if os.path.isdir(ports_dir) else []:
            files = [os.path.join(ports_dir, port, name) for name in IB_PORT_FILES]
            ports[port] = dict(zip(IB_PORT_FILES, [(read_text(path) or "").strip() for path in files]))
        found[device] = ports
    return found


def runtime_memlock(names=RUNTIME_DAEMONS, proc="/proc"):
    """Each running container runtime daemon -> the `Max locked memory` line of its
    /proc/PID/limits: the limit its containers inherit."""
    found = {}
    for pid in sorted((entry for entry in os.listdir(proc) if entry.isdigit()), key=int):
        name = first_line(os.path.join(proc, pid, "comm"))
        if name not in names or name in found:
            continue
        for line in (read_text(os.path.join(proc, pid, "limits")) or "").splitlines():
            if line.startswith("Max locked memory"):
                found[name] = line
    return found


def rdma(pci_root=PCI_DEVICES, ib_root=IB_CLASS, dev_root="/dev/infiniband", proc="/proc"):
    """What GPUDirect RDMA needs on the host: RDMA NICs and devices, the RDMA and peer-memory
    modules (their /proc/modules lines), the locked-memory limits (`ulimit -l` of this login, and
    each container runtime's), and the kernel's DMA-BUF configuration."""
    modules = [
        line for line in (read_text(os.path.join(proc, "modules")) or "").splitlines()
        if line.split(" ", 1)[0] in RDMA_MODULES
    ]
    config = (read_text("/boot/config-" + platform.release()) or "").splitlines()
    return {
        "nics": rdma_nics(pci_root),
        "devices": rdma_devices(ib_root),
        "dev": sorted(os.listdir(dev_root)) if os.path.isdir(dev_root) else None,
        "modules": modules,
        "ulimit_l": host_run(["sh", "-c", "ulimit -l"])["stdout"],
        "runtime_memlock": runtime_memlock(proc=proc),
        "kernel_config": [line for line in config if line.split("=", 1)[0] in KERNEL_CONFIG_KEYS],
    }


def runtimes():
    """Each installed container runtime (k3s and RKE2 bring their containerd) -> its --version line."""
    found = {}
    for name in RUNTIMES:
        if installed(name):
            answer = host_run([name, "--version"])
            found[name] = ((answer["stdout"] or answer["stderr"]).splitlines() or [""])[0]
    return found


def containerd_configs():
    """Each containerd config.toml there is: its `version = N` line ("" without one), or unreadable."""
    found = []
    for path in CONTAINERD_CONFIGS:
        text = read_text(path)
        if text is not None:
            versions = re.findall(r"(?m)^[ \t]*version[ \t]*=.*$", text)
            found.append({"path": path, "readable": True, "version": versions[0].strip() if versions else ""})
        elif os.path.exists(path):
            found.append({"path": path, "readable": False, "version": ""})
    return found


def nvidia_runtime():
    """Runtime -> whether its configuration names a runtime "nvidia" (containerd as it reads its own
    configuration, drop-ins included)."""
    known = {}
    if installed("containerd"):
        dumped = host_run(["containerd", "config", "dump"])["stdout"]
        known["containerd"] = re.search(r'runtimes\.("nvidia"|nvidia)\]', dumped) is not None
    if installed("dockerd") or installed("docker"):
        known["docker"] = '"nvidia"' in (read_text("/etc/docker/daemon.json") or "")
    if installed("crio"):
        paths = ["/etc/crio/crio.conf"] + sorted(glob.glob("/etc/crio/crio.conf.d/*"))
        texts = [read_text(path) or "" for path in paths]
        known["crio"] = any("crio.runtime.runtimes.nvidia" in text for text in texts)
    return known


def mount_point(path):
    path = os.path.realpath(path)
    while not os.path.ismount(path):
        path = os.path.dirname(path)
    return path


def free_disk():
    """Mount point -> bytes free to unprivileged users, for / and /var (one entry when they are one)."""
    found = {}
    for path in ("/", "/var"):
        if os.path.exists(path):
            found.setdefault(mount_point(path), available_bytes(path))
    return found


def user():
    uid = os.getuid()
    return {"uid": uid, "name": name_of(pwd.getpwuid, uid)}


def sudo():
    """Whether sudo works without a password (null when already root)."""
    return None if os.getuid() == 0 else host_run(["sudo", "-n", "true"])


def os_release():
    text = read_text("/etc/os-release")
    return text if text is not None else read_text("/usr/lib/os-release") or ""


HOST_SECTIONS = {
    "user": user,
    "sudo": sudo,
    "os_release": os_release,
    "kernel": platform.release,
    "headers": headers,
    "pci": pci_devices,
    "modules": loaded_modules,
    "module_version": module_version,
    "secure_boot": secure_boot,
    "driver": lambda: read_text("/proc/driver/nvidia/version") or "",
    "nvidia_smi": lambda: host_run(["nvidia-smi", "-L"]),
    "nvidia_smi_query": lambda: host_run(NVIDIA_SMI_QUERY),
    "dkms": dkms,
    "fabricmanager": fabricmanager,
    "runtimes": runtimes,
    "containerd_configs": containerd_configs,
    "nvidia_runtime": nvidia_runtime,
    "disks": free_disk,
    "rdma": rdma,
    "gpu_links": gpu_links,
}


def host_state(wanted):
    names = list(HOST_SECTIONS) if wanted is True else [name for name in HOST_SECTIONS if name in wanted]
    return dict((name, HOST_SECTIONS[name]()) for name in names)


def union(requests):
    merged = {
        "files": [], "read": [], "disks": [], "packages": [], "globs": {}, "commands": {},
        "containerd_bases": {}, "host": [],
    }
    for request in requests:
        for key, wanted in request.items():
            if wanted is True or merged[key] is True:
                merged[key] = True
            elif isinstance(wanted, dict):
                merged[key].update(wanted)
            else:
                merged[key].extend(name for name in wanted if name not in merged[key])
    return merged


def main():
    request = json.loads(sys.argv[1])
    if isinstance(request, list):
        request = union(request)
    files = {path: describe(path) for path in request.get("files", [])}
    texts = {path: read_text(path) for path in request.get("read", [])}
    result = {
        "files": {path: found for path, found in files.items() if found is not None},
        "read": {path: text for path, text in texts.items() if text is not None},
        "globs": {key: sorted(glob.glob(pattern)) for key, pattern in request.get("globs", {}).items()},
        "disks": {path: available_bytes(path) for path in request.get("disks", [])},
        "packages": packages(request.get("packages", [])),
        "commands": {key: run(argv) for key, argv in request.get("commands", {}).items()},
    }
    bases = {key: containerd_base(**wanted) for key, wanted in request.get("containerd_bases", {}).items()}
    result["containerd_bases"] = {key: dumped for key, dumped in bases.items() if dumped is not None}
    if request.get("host"):
        result["host"] = host_state(request["host"])
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":  # imported by the test nodes' stand-ins, which read their PCI bus through it
    main()
