# The facts gpuctl's roles read, named and shaped as `setup` (gather_subset distribution, platform,
# python, service_mgr) gives them, printed as one JSON object for the gpuctl_facts action. One plain
# Python start costs the host ~25 ms of CPU; the setup module costs ~300 ms, most of it Python
# compiling Ansible's module code from the module's zip on every run.
# Read-only; Python 2.7 and 3.x. Covers the systems the roles support (Debian, Ubuntu, RHEL and its
# rebuilds); another system gets its os-release name, which the roles' OS check then refuses.
import json
import os
import platform
import sys

# os-release ID -> (the name Ansible's distribution facts give, the OS family).
DISTRIBUTIONS = {
    "debian": ("Debian", "Debian"),
    "ubuntu": ("Ubuntu", "Debian"),
    "rhel": ("RedHat", "RedHat"),
    "rocky": ("Rocky", "RedHat"),
    "almalinux": ("AlmaLinux", "RedHat"),
    "centos": ("CentOS", "RedHat"),
    "ol": ("OracleLinux", "RedHat"),
    "fedora": ("Fedora", "RedHat"),
    "amzn": ("Amazon", "RedHat"),
}


def read_file(path):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return ""


def os_release(text):
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            fields[key] = value.strip().strip("\"'")
    return fields


def distribution(read):
    """The distribution facts from the files `read(path)` returns ("" for a missing file); "NA"
    where Ansible's facts say so (a Rocky release file names no release)."""
    fields = os_release(read("/etc/os-release") or read("/usr/lib/os-release"))
    os_id = fields.get("ID", "").lower()
    name, family = DISTRIBUTIONS.get(os_id, (fields.get("NAME", "").split(" ")[0] or "OtherLinux", ""))
    version = fields.get("VERSION_ID", "")
    release = fields.get("VERSION_CODENAME") or fields.get("UBUNTU_CODENAME") or ""
    if os_id == "debian":
        # The point release is in /etc/debian_version ("12.12"); os-release says "12".
        point = read("/etc/debian_version").strip()
        if point[:1].isdigit():
            version = point
    elif family == "RedHat":
        # The release name in parentheses: "Red Hat Enterprise Linux release 9.4 (Plow)".
        line = read("/etc/redhat-release").strip()
        if "(" in line and line.endswith(")"):
            release = line[line.rindex("(") + 1:-1].strip()
    return {
        "distribution": name,
        "distribution_version": version or "NA",
        "distribution_major_version": version.split(".")[0] or "NA",
        "distribution_release": release or "NA",
        "os_family": family or name,
    }


def service_mgr(read):
    if os.path.isdir("/run/systemd/system"):
        return "systemd"
    init = read("/proc/1/comm").strip()
    return "sysvinit" if init == "init" else init or "service"


def facts(read):
    found = distribution(read)
    found.update({
        "kernel": platform.release(),
        "architecture": platform.machine(),
        "python": {
            "executable": sys.executable,
            "version": dict(zip(("major", "minor", "micro"), sys.version_info[:3])),
            "type": getattr(getattr(sys, "implementation", None), "name", "cpython"),
        },
        "service_mgr": service_mgr(read),
    })
    return dict(("ansible_" + key, value) for key, value in found.items())


if __name__ == "__main__":
    sys.stdout.write(json.dumps(facts(read_file)) + "\n")
