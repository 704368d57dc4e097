"""Read what nvidia-smi prints on real machines: the default table, `-L`, `-q` text, `-q -x` XML.

Drivers 590 and later deprecate "Driver Version"/`driver_version` in favour of "KMD Version"/
`kmd_version`, and "CUDA Version" in favour of "CUDA UMD Version"; 610 prints only the new
names. Every parser here reads both. Standard library only, like gpuctl.nvidia_smi.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.etree import ElementTree

from gpuctl.nvidia_smi import parse_list


@dataclass(frozen=True)
class SmiGpu:
    index: int
    name: str  # as printed: the default table cuts long names with "..."
    uuid: str = ""
    memory_total_mib: int | None = None
    pci_bus_id: str = ""
    mig_mode: str = ""  # Enabled | Disabled | N/A | "" (not printed)


@dataclass(frozen=True)
class SmiReport:
    format: str  # table | list | q (`-q` text) | xml
    driver_version: str = ""
    cuda_version: str = ""
    gpus: tuple[SmiGpu, ...] = ()
    mig_devices: int = 0


_BANNER = re.compile(
    r"NVIDIA-SMI \S+\s+(?:Driver|KMD) Version: (?P<driver>\S+)(?:\s+CUDA (?:UMD )?Version: (?P<cuda>[\d.]+))?"
)
_GPU_ROW = re.compile(
    r"^\|\s+(?P<index>\d+)\s+(?P<name>\S.*?)\s+(?:On|Off|WDDM|TCC|N/A)\s+\|\s+"
    r"(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)"
)
_MEMORY = re.compile(r"\|\s+\d+MiB /\s*(?P<total>\d+)MiB\s+\|")
_MIG_MODE = re.compile(r"\|\s+(?P<mode>Enabled|Disabled|N/A)\s+\|\s*$")
_MIG_ROW = re.compile(r"^\|\s+\d+\s+\d+\s+\d+\s+\d+\s+\|")


def parse_table(text: str) -> SmiReport:
    """Parse nvidia-smi's default output (any driver from 418 to 610, Linux and Windows)."""
    banner = _BANNER.search(text)
    if banner is None:
        raise ValueError("no NVIDIA-SMI banner: not nvidia-smi's table")
    lines = text.splitlines()
    gpus = []
    for number, line in enumerate(lines):
        row = _GPU_ROW.match(line)
        if row is None:
            continue
        memory = _MEMORY.search(lines[number + 1]) if number + 1 < len(lines) else None
        mig = _MIG_MODE.search(lines[number + 2]) if number + 2 < len(lines) else None
        gpus.append(
            SmiGpu(
                index=int(row.group("index")),
                name=row.group("name"),
                memory_total_mib=int(memory.group("total")) if memory else None,
                pci_bus_id=row.group("bus"),
                mig_mode=mig.group("mode") if mig else "",
            )
        )
    mig_section = text.split("MIG devices:", 1)[1] if "MIG devices:" in text else ""
    mig_section = mig_section.split("Processes:", 1)[0]
    mig_devices = sum(1 for line in mig_section.splitlines() if _MIG_ROW.match(line))
    return SmiReport("table", banner.group("driver"), banner.group("cuda") or "", tuple(gpus), mig_devices)


def _mib(value: str | None) -> int | None:
    number = (value or "").replace("MiB", "").strip()
    return int(number) if number.isdigit() else None


def parse_xml(text: str) -> SmiReport:
    """Parse `nvidia-smi -q -x` (DTD v9 to v13)."""
    try:
        root = ElementTree.fromstring(text.encode())
    except ElementTree.ParseError as error:
        raise ValueError(f"not nvidia-smi XML: {error}") from error
    if root.tag != "nvidia_smi_log":
        raise ValueError(f"not nvidia-smi XML: root element <{root.tag}>")
    driver = root.findtext("kmd_version") or root.findtext("driver_version") or ""
    cuda = root.findtext("cuda_umd_version") or root.findtext("cuda_version") or ""
    gpus = tuple(
        SmiGpu(
            index=number,
            name=(gpu.findtext("product_name") or "").strip(),
            uuid=(gpu.findtext("uuid") or "").strip(),
            memory_total_mib=_mib(gpu.findtext("fb_memory_usage/total")),
            pci_bus_id=gpu.get("id", ""),
            mig_mode=(gpu.findtext("mig_mode/current_mig") or "").strip(),
        )
        for number, gpu in enumerate(root.findall("gpu"))
    )
    mig_devices = sum(len(gpu.findall("mig_devices/mig_device")) for gpu in root.findall("gpu"))
    return SmiReport("xml", driver.strip(), cuda.strip(), gpus, mig_devices)


_Q_HEADER = "NVSMI LOG"
_Q_GPU = re.compile(r"^GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s*$")
# "    Product Name                          : NVIDIA H100 80GB HBM3"; a line without " : " opens a
# section ("    FB Memory Usage") whose fields are indented below it.
_Q_FIELD = re.compile(r"^(?P<indent> *)(?P<key>\S[^:]*?)\s+: ?(?P<value>.*)$")
# Driver 590+ print the new name beside the deprecated one; 610 marks the old value "[Deprecated ...]".
_Q_VERSIONS = {"KMD Version": 0, "Driver Version": 1, "CUDA UMD Version": 2, "CUDA Version": 3}


@dataclass
class _QueryGpu:
    bus: str
    fields: dict[tuple[str, ...], str]
    mig_devices: int = 0

    def gpu(self, index: int) -> SmiGpu:
        return SmiGpu(
            index=index,
            name=self.fields.get(("Product Name",), ""),
            uuid=self.fields.get(("GPU UUID",), ""),
            memory_total_mib=_mib(self.fields.get(("FB Memory Usage", "Total"))),
            pci_bus_id=self.bus,
            mig_mode=self.fields.get(("MIG Mode", "Current"), ""),
        )


def parse_query_text(text: str) -> SmiReport:
    """Parse `nvidia-smi -q` (drivers 4xx-6xx, Linux and Windows; MIG devices counted)."""
    if _Q_HEADER not in text:
        raise ValueError("no NVSMI LOG header: not nvidia-smi -q")
    versions, gpus = _query_blocks(text)
    driver = versions.get("KMD Version") or versions.get("Driver Version", "")
    cuda = versions.get("CUDA UMD Version") or versions.get("CUDA Version", "")
    reports = tuple(gpu.gpu(index) for index, gpu in enumerate(gpus))
    return SmiReport("q", driver, cuda, reports, sum(gpu.mig_devices for gpu in gpus))


def query_gpu_fields(text: str) -> list[tuple[str, dict[tuple[str, ...], str]]]:
    """Each GPU block of `nvidia-smi -q` in order: its bus id and its fields by section path, e.g.
    ("PCI", "GPU Link Info", "Link Width", "Max") -> "16x"."""
    return [(gpu.bus, gpu.fields) for gpu in _query_blocks(text)[1]]


def _query_blocks(text: str) -> tuple[dict[str, str], list[_QueryGpu]]:
    """The driver and CUDA version fields before the first GPU, and each GPU's block."""
    versions: dict[str, str] = {}
    gpus: list[_QueryGpu] = []
    sections: list[tuple[int, str]] = []
    for line in text.splitlines():
        header = _Q_GPU.match(line)
        if header:
            gpus.append(_QueryGpu(header.group("bus"), {}))
            sections = []
            continue
        field = _Q_FIELD.match(line)
        indent = len(line) - len(line.lstrip(" "))
        sections = [(depth, name) for depth, name in sections if depth < indent]
        if field is None:
            if line.strip() and gpus:
                sections.append((indent, line.strip()))
                gpus[-1].mig_devices += sections == [(4, "MIG Device")]
            continue
        key, value = field.group("key"), field.group("value").strip()
        if not gpus and key in _Q_VERSIONS:
            versions[key] = value.split()[0] if value else ""
        elif gpus:
            gpus[-1].fields[(*(name for _, name in sections), key)] = value
    return versions, gpus


# What kubectl prints on its standard error before the command's output: a capture taken with
# `2>&1`, or copied from a terminal, holds it above nvidia-smi's first line. The formats are
# kubectl's own: "Defaulted container %q out of: %s" (pkg/cmd/util/podcmd/podcmd.go, kubectl 1.21
# and later), "Defaulting container name to %s." and "Use 'kubectl describe pod/%s -n %s' to see all
# of the containers in this pod." (pkg/cmd/exec/exec.go before it; `oc rsh` says `oc describe`),
# the TTY warning of `kubectl exec -t` without a terminal, the deprecated `kubectl exec POD COMMAND`
# form, and the API server's warnings ("Warning: ...").
_KUBECTL_PREAMBLE = re.compile(
    r'^(?:Defaulted container "[^"]*" out of: .*'
    r"|Defaulting container name to \S+\."
    r"|Use '(?:kubectl|oc) describe pod/\S* -n \S+' to see all of the containers in this pod\."
    r"|Unable to use a TTY - input is not a terminal or the right kind of file"
    r"|kubectl exec \[POD\] \[COMMAND\] is DEPRECATED and will be removed in a future version\. "
    r"Use (?:kubectl )+exec \[POD\] -- \[COMMAND\] instead\."
    r"|Warning: .*)$"
)


def without_kubectl_preamble(text: str) -> str:
    """`text` without the lines kubectl printed before the command's output (and blank ones)."""
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines) and (not lines[start].strip() or _KUBECTL_PREAMBLE.match(lines[start].strip())):
        start += 1
    return "".join(lines[start:])


def parse_listing(text: str) -> SmiReport:
    """Parse `nvidia-smi -L`, counting the MIG devices listed under each GPU; what kubectl printed
    before it (`kubectl exec POD -- nvidia-smi -L 2>&1`) is left out."""
    text = without_kubectl_preamble(text)
    listed = parse_list(text)
    mig_devices = sum(1 for line in text.splitlines() if line.lstrip().startswith("MIG "))
    gpus = tuple(SmiGpu(index=gpu.index, name=gpu.name, uuid=gpu.uuid) for gpu in listed)
    return SmiReport("list", gpus=gpus, mig_devices=mig_devices)


def parse_nvidia_smi(text: str) -> SmiReport:
    """Parse whichever nvidia-smi output `text` is; ValueError when it is none of them."""
    text = without_kubectl_preamble(text)
    stripped = text.lstrip()
    if stripped.startswith("<?xml") or "<nvidia_smi_log>" in text:
        return parse_xml(text)
    if _Q_HEADER in text:
        return parse_query_text(text)
    if _BANNER.search(text):
        return parse_table(text)
    return parse_listing(text)


_HELP_FIELD = re.compile(r'^"(?P<field>[\w.]+)"', re.MULTILINE)


def driver_version_field(help_query_gpu: str) -> str:
    """The query field naming the driver version: `kmd_version` where `--help-query-gpu` lists it.

    `driver_version` still answers on 590-610 but is deprecated, so a caller that asks the driver
    what it supports keeps working when it is removed.
    """
    fields = set(_HELP_FIELD.findall(help_query_gpu))
    return "kmd_version" if "kmd_version" in fields else "driver_version"
