"""Real host captures of the shell probes gpuctl had before its one host probe, laid into the probe's
JSON document (playbooks/roles/gpuctl_probe/files/host_probe.py, request key `host`).

The one probe runs the same commands and reads the same files those probes did (os-release,
`apt-cache policy`, sysfs, /proc/modules and /proc/driver/nvidia/version, `nvidia-smi -L` and its
--query-gpu, `dkms status`, `systemctl show`, the runtimes' --version lines, config.toml's version
line, the free space of / and /var): each text below is carried verbatim into the key the probe
puts it under, and what the probe classifies itself (a PCI function's kind, the Secure Boot state)
is classified by the probe's own functions. Nothing here is made up: a key the capture has no
text for is left out, as the probe leaves out a section it was not asked for.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests import module_file

HOST_PROBE = module_file.load(
    Path(__file__).resolve().parents[1] / "playbooks" / "roles" / "gpuctl_probe" / "files" / "host_probe.py"
)
SECTION_MARK = "@@gpuctl-probe@@ "
HOST_LINK_MARK = "@@gpuctl-probe "


def sections(output: str, mark: str = SECTION_MARK) -> dict[str, str]:
    """A shell probe's marked sections: name -> text (stripped)."""
    found: dict[str, list[str]] = {}
    current = None
    for line in output.splitlines():
        if line.startswith(mark):
            current = line[len(mark) :].strip()
            found[current] = []
        elif current is not None:
            found[current].append(line)
    return {name: "\n".join(lines).strip() for name, lines in found.items()}


def pci_device(slot: str, device: str, class_code: str) -> dict[str, str]:
    return {"slot": slot, "device": device, "class": class_code, "kind": HOST_PROBE.pci_kind(class_code)}


def preflight_document(output: str) -> dict[str, Any]:
    """The `host` document from the output of preflight's former probe (`s NAME` sections)."""
    part = sections(output)
    uid, name = [*part["id"].splitlines(), "", ""][:2]
    host: dict[str, Any] = {
        "user": {"uid": int(uid), "name": name},
        "sudo": None if uid == "0" else _rc_lines(part.get("sudo", "")),
        "os_release": part.get("os-release", ""),
        "kernel": part.get("kernel", ""),
        "headers": _headers(part.get("headers", "")),
        "pci": [
            pci_device(s, d, c) for s, _, d, c in (line.split() for line in part.get("pci", "").splitlines())
        ],
        "modules": sorted(part.get("modules", "").split()),
        "secure_boot": {"state": HOST_PROBE.secure_boot_state(part.get("secure-boot", ""))},
        "driver": part.get("driver", ""),
        "dkms": _dkms(part.get("dkms", "")),
        "fabricmanager": part.get("fabricmanager", ""),
        "runtimes": dict(line.split(" ", 1) for line in part.get("runtimes", "").splitlines()),
        "containerd_configs": _containerd_configs(part.get("containerd-config", "")),
        "disks": _disks(part.get("disk", "")),
    }
    if part.get("nvidia-smi", "absent") == "absent":
        host["nvidia_smi"] = host["nvidia_smi_query"] = {"rc": -1, "stdout": "", "stderr": ""}
    return host


def host_link_document(output: str) -> dict[str, Any]:
    """The `host` document from the output of the sim's former host-link probe."""
    part = sections(output, HOST_LINK_MARK)
    smi = next(name for name in part if name.startswith("smi-rc="))
    return {
        "pci": [pci_device(s, d, c) for s, _, d, c in (line.split() for line in part["pci"].splitlines())],
        "nvidia_smi": {"rc": int(smi.removeprefix("smi-rc=")), "stdout": part[smi], "stderr": ""},
        "nvidia_smi_query": {"rc": 0 if part["query"] else 9, "stdout": part["query"], "stderr": ""},
        # "nvidia" when containerd's dump, docker's daemon.json or CRI-O's drop-ins named it.
        "nvidia_runtime": {"containerd": True} if part["runtime"] == "nvidia" else {},
    }


def driver_probe_document(probe: dict[str, Any]) -> dict[str, Any]:
    """The driver role's former probe answer (PCI lines "slot class device", /sys/module files) with
    the `host` sections the role now asks for."""
    lines = probe["commands"]["pci"]["stdout"].splitlines()
    modules = [path.rsplit("/", 1)[1] for path in probe["files"] if path.startswith("/sys/module/")]
    host = {"pci": [pci_device(s, d, c) for s, c, d in (line.split() for line in lines)], "modules": modules}
    return {**probe, "host": host}


def _rc_lines(text: str) -> dict[str, Any]:
    lines = text.splitlines()
    rc = int(lines[-1].removeprefix("rc=")) if lines and lines[-1].startswith("rc=") else 1
    return {"rc": rc, "stdout": "", "stderr": "\n".join(line for line in lines if not line.startswith("rc="))}


def _headers(text: str) -> dict[str, Any]:
    lines = text.splitlines()
    manager = next((line.split()[1] for line in lines if line.startswith("manager ")), "")
    offered = [
        line.removeprefix("available ") for line in lines if not line.startswith(("installed ", "manager "))
    ]
    installed = [line.split(" ", 1)[1] for line in lines if line.startswith("installed ")]
    return {"installed": installed, "manager": manager, "offered": "\n".join(offered)}


def _dkms(text: str) -> dict[str, Any] | None:
    if not text.strip():
        return None
    lines = text.splitlines()
    status = "\n".join(line for line in lines if line != "headers present")
    return {"status": status, "headers_present": "headers present" in lines}


def _containerd_configs(text: str) -> list[dict[str, Any]]:
    configs: list[dict[str, Any]] = []
    for line in text.splitlines():
        if line.startswith(("file ", "unreadable ")):
            kind, path = line.split(" ", 1)
            configs.append({"path": path, "readable": kind == "file", "version": ""})
        elif configs and re.match(r"^\s*version\s*=", line):
            configs[-1]["version"] = line.strip()
    return configs


def _disks(text: str) -> dict[str, int]:
    """`df -Pk / /var`: mount point -> bytes available (one entry for a mount listed twice)."""
    free: dict[str, int] = {}
    for fields in (line.split() for line in text.splitlines()[1:]):
        if len(fields) >= 6 and fields[3].isdigit():
            free.setdefault(fields[5], int(fields[3]) * 1024)
    return free
