"""nvidia-smi: the output formats gpuctl reads, and a faithful emulation for simulated GPUs.

The emulation serves the simulated cluster's containers and the test nodes' stand-in driver
package, so what gpuctl parses in tests is byte-for-byte what it parses on real GPUs. Standard
library only: the stand-in package embeds this file.
"""

from __future__ import annotations

import functools
import hashlib
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

# What `gpuctl verify` runs in each verification pod: one call gives count, identity, memory, driver.
VERIFY_QUERY_FIELDS = ("index", "uuid", "name", "memory.total", "driver_version", "pci.bus_id")
VERIFY_ARGS = (
    "nvidia-smi",
    "--query-gpu=" + ",".join(VERIFY_QUERY_FIELDS),
    "--format=csv,noheader,nounits",
)

# (stdout, exit code) of nvidia-smi on hosts where it cannot reach a working driver.
DRIVER_NOT_LOADED = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n\n",
    9,
)
DRIVER_MISMATCH = (
    "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.127\n",
    18,
)

# PCI bus numbers of the eight GPUs of an HGX H100 baseboard, in nvidia-smi index order.
HGX_PCI_BUSES = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)

# Driver branch → the CUDA version nvidia-smi's banner shows (590, 595 and 610 as captured on real
# machines, tests/corpus/nvidia-smi/); a branch not listed shows its nearest older branch's.
_CUDA_BY_BRANCH = {
    470: "11.4", 525: "12.0", 535: "12.2", 545: "12.3", 550: "12.4", 555: "12.5", 560: "12.6",
    565: "12.7", 570: "12.8", 575: "12.9", 580: "13.0", 590: "13.1", 595: "13.2", 610: "13.3",
}  # fmt: skip
# From 610 the banner names the kernel driver "KMD Version" and CUDA "CUDA UMD Version".
KMD_BANNER_BRANCH = 610
# nvidia-smi's default table shows at most 27 characters of a GPU's name, cutting longer ones.
TABLE_NAME_WIDTH = 27

_DNS_NAMESPACE = uuid.NAMESPACE_DNS.bytes

_UNITS = {"memory.total": "MiB", "memory.used": "MiB", "memory.free": "MiB", "power.draw": "W",
          "utilization.gpu": "%", "utilization.memory": "%"}  # fmt: skip


@dataclass(frozen=True)
class MigDevice:
    """A MIG device as `nvidia-smi -L` lists it under its parent GPU."""

    index: int
    profile: str  # 1g.10gb
    uuid: str


@dataclass(frozen=True)
class Gpu:
    index: int
    uuid: str
    name: str
    memory_total_mib: int
    driver_version: str
    pci_bus_id: str
    cuda_version: str = "12.4"
    mig_devices: tuple[MigDevice, ...] = ()  # the MIG devices visible here; empty: MIG off


def mig_uuid(node_name: str, gpu_index: int, mig_index: int) -> str:
    """A stable MIG device UUID (MIG-…) for a simulated node's GPU and MIG device index."""
    return "MIG-" + _uuid5(f"{node_name}.gpu{gpu_index}.mig{mig_index}.gpuctl")


@dataclass(frozen=True)
class ListedGpu:
    """One line of `nvidia-smi -L`."""

    index: int
    name: str
    uuid: str


def product_name(product: str) -> str:
    """'NVIDIA-H100-80GB-HBM3' (the GFD label form) → 'NVIDIA H100 80GB HBM3' (nvidia-smi's)."""
    return product.replace("-", " ").strip()


def pci_bus_id(index: int) -> str:
    """nvidia-smi's 'pci.bus_id' for GPU `index`: HGX bus numbers first, then consecutive ones."""
    bus = HGX_PCI_BUSES[index] if index < len(HGX_PCI_BUSES) else 0xE0 + index
    return f"00000000:{bus:02X}:00.0"


def _branch(driver_version: str) -> int:
    major = driver_version.split(".", maxsplit=1)[0]
    return int(major) if major.isdigit() else 550


@functools.lru_cache(maxsize=256)
def cuda_version_for(driver_version: str) -> str:
    branch = _branch(driver_version)
    known = [known for known in _CUDA_BY_BRANCH if known <= branch]
    return _CUDA_BY_BRANCH[max(known)] if known else "11.4"


def _uuid5(name: str) -> str:
    """str(uuid.uuid5(uuid.NAMESPACE_DNS, name)), without building UUID objects (a node's GPUs are
    named for every pod that runs nvidia-smi there)."""
    digest = bytearray(hashlib.sha1(_DNS_NAMESPACE + name.encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    text = digest.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def fake_gpus(node_name: str, count: int, product: str, memory_mib: int, driver_version: str) -> list[Gpu]:
    """The GPUs of a simulated node: stable UUIDs derived from the node name and index."""
    name, cuda = product_name(product), cuda_version_for(driver_version)
    return [
        Gpu(index, "GPU-" + _uuid5(f"{node_name}.gpu{index}.gpuctl"), name, memory_mib, driver_version,
            pci_bus_id(index), cuda)
        for index in range(count)
    ]  # fmt: skip


def _mig_mode(gpu: Gpu, _count: int) -> str:
    return "Enabled" if gpu.mig_devices else "Disabled"


# Every field `--query-gpu` answers, by name: its value for `gpu` of `count` GPUs. A query works
# out only the fields it names (a verification pod asks for 6 of them, for each of 8 GPUs).
_FIELDS: dict[str, Callable[[Gpu, int], str]] = {
    "index": lambda gpu, _: str(gpu.index),
    "uuid": lambda gpu, _: gpu.uuid,
    "gpu_uuid": lambda gpu, _: gpu.uuid,
    "name": lambda gpu, _: gpu.name,
    "gpu_name": lambda gpu, _: gpu.name,
    "memory.total": lambda gpu, _: str(gpu.memory_total_mib),
    "memory.used": lambda _gpu, _: "0",
    "memory.free": lambda gpu, _: str(gpu.memory_total_mib),
    "driver_version": lambda gpu, _: gpu.driver_version,
    "pci.bus_id": lambda gpu, _: gpu.pci_bus_id,
    "gpu_bus_id": lambda gpu, _: gpu.pci_bus_id,
    "count": lambda _gpu, count: str(count),
    "persistence_mode": lambda _gpu, _: "Enabled",
    "temperature.gpu": lambda _gpu, _: "31",
    "utilization.gpu": lambda _gpu, _: "0",
    "utilization.memory": lambda _gpu, _: "0",
    "power.draw": lambda _gpu, _: "69.85",
    "compute_cap": lambda _gpu, _: "9.0",
    "mig.mode.current": _mig_mode,
    "mig.mode.pending": _mig_mode,
    "serial": lambda gpu, _: str(1650923000000 + gpu.index),
}


def _query(gpus: list[Gpu], fields: list[str], format_options: set[str]) -> tuple[str, int]:
    for field in fields:
        if field not in _FIELDS:
            return f'Field "{field}" is not a valid field to query.\n\n', 2
    lines = []
    if "noheader" not in format_options:
        lines.append(", ".join(f"{f} [{_UNITS[f]}]" if f in _UNITS else f for f in fields))
    units = {} if "nounits" in format_options else _UNITS
    columns = [(_FIELDS[field], f" {units[field]}" if field in units else "") for field in fields]
    count = len(gpus)
    for gpu in gpus:
        lines.append(", ".join(value(gpu, count) + unit for value, unit in columns))
    return "".join(line + "\n" for line in lines), 0


_GPU_RULE = "+-----------------------------------------+------------------------+----------------------+"
_WIDE_RULE = "+-----------------------------------------------------------------------------------------+"
_GPU_HEADER = (
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
    "|                                         |                        |               MIG M. |",
    "|=========================================+========================+======================|",
)
_NO_PROCESSES = (
    _WIDE_RULE,
    "| Processes:                                                                              |",
    "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
    "|        ID   ID                                                               Usage      |",
    "|=========================================================================================|",
    "|  No running processes found                                                             |",
    _WIDE_RULE,
)


def _banner(driver: str, cuda: str) -> str:
    if _branch(driver) >= KMD_BANNER_BRANCH:
        return f"| NVIDIA-SMI {driver:<23}KMD Version: {driver:<14}CUDA UMD Version: {cuda:<9}|"
    return f"| NVIDIA-SMI {driver:<23}Driver Version: {driver:<15}CUDA Version: {cuda:<9}|"


def table_name(name: str) -> str:
    """The name as the default table prints it: names over 27 characters end in '...'."""
    return name if len(name) <= TABLE_NAME_WIDTH else name[: TABLE_NAME_WIDTH - 3] + "..."


def _gpu_rows(gpu: Gpu) -> list[str]:
    """A GPU's three rows (identity, usage, MIG mode), as a datacenter GPU without MIG shows them."""
    persistence, display, ecc, fan, temperature, perf = "On", "Off", "0", "N/A", "31C", "P0"
    power, power_cap, utilisation, compute = "69W", "700W", "0%", "Default"
    mig = "Enabled" if gpu.mig_devices else "Disabled"
    used, total = "0MiB", f"{gpu.memory_total_mib}MiB"
    return [
        f"|{gpu.index:>4}  {table_name(gpu.name):<27}    {persistence:<4}|{gpu.pci_bus_id:>19} {display:>3} |"
        f"{ecc:>21} |",
        f"|{fan:>4}   {temperature:>3}    {perf:<2}{power:>16} / {power_cap:>5} |{used:>11} / {total:>9} |"
        f"{utilisation:>8}      {compute:>7} |",
        f"|{'':41}|{'':24}|{mig:>21} |",
        _GPU_RULE,
    ]


def _table(gpus: list[Gpu]) -> str:
    """nvidia-smi's default output, shaped like the real one of the driver's branch."""
    driver = gpus[0].driver_version if gpus else "N/A"
    cuda = gpus[0].cuda_version if gpus else "N/A"
    lines = [time.ctime() + "       ", _WIDE_RULE, _banner(driver, cuda), _GPU_RULE, *_GPU_HEADER]
    for gpu in gpus:
        lines += _gpu_rows(gpu)
    lines += ["", *_NO_PROCESSES]
    return "\n".join(lines) + "\n"


def _select(gpus: list[Gpu], selector: str) -> list[Gpu] | None:
    chosen = []
    for part in selector.split(","):
        matches = [g for g in gpus if part.strip() in (str(g.index), g.uuid, g.pci_bus_id)]
        if not matches:
            return None
        chosen += matches
    return chosen


@dataclass(frozen=True)
class SmiRun:
    """One nvidia-smi run: what it printed, its exit code, and what `-f FILE` wrote to FILE."""

    stdout: str
    exit_code: int
    file_path: str = ""  # the file `-f`/`--filename` named ("" without one, or when the run failed)
    file_text: str = ""  # what nvidia-smi wrote to it: the output stdout would have shown


def split_output_file(args: list[str]) -> tuple[list[str], str]:
    """nvidia-smi's arguments without its output-file option (`-f FILE`, `--filename FILE`,
    `--filename=FILE`: "redirect query output to the specified file in place of stdout"), and the
    file it names ("" when none; a trailing `-f` without its file is left for the parser to refuse).
    """
    kept: list[str] = []
    path = ""
    rest = iter(args)
    for arg in rest:
        if arg in ("-f", "--filename"):
            named = next(rest, None)
            if named is None:
                kept.append(arg)
            else:
                path = named
        elif arg.startswith("--filename="):
            path = arg.split("=", 1)[1]
        else:
            kept.append(arg)
    return kept, path


def run_with_file(args: list[str], gpus: list[Gpu]) -> SmiRun:
    """`nvidia-smi ARGS`, output file included. With `-f FILE` a run that succeeds prints nothing
    on stdout and FILE holds its output, as a real H200 (driver 580.159.04) does; an error (no
    device, a bad field) is emulated on stdout, with no file written."""
    command, path = split_output_file(args)
    text, code = _run(command, gpus)
    if path and code == 0:
        return SmiRun("", code, path, text)
    return SmiRun(text, code)


def run_nvidia_smi(args: list[str], gpus: list[Gpu]) -> tuple[str, int]:
    """What `nvidia-smi ARGS` prints (stdout, exit code) on a host whose visible GPUs are `gpus`.

    With `-f FILE` a successful run prints nothing: its output went to FILE (see run_with_file).
    """
    run = run_with_file(args, gpus)
    return run.stdout, run.exit_code


def _run(args: list[str], gpus: list[Gpu]) -> tuple[str, int]:  # noqa: PLR0911 - one return per nvidia-smi outcome
    """(stdout, exit code) of `nvidia-smi ARGS` printing to stdout (no output file)."""
    if not gpus:
        return "No devices were found\n", 6
    query: list[str] | None = None
    format_options: set[str] | None = None
    listing = False
    remaining = list(args)
    while remaining:
        arg = remaining.pop(0)
        if arg in ("-L", "--list-gpus"):
            listing = True
        elif arg.startswith("--query-gpu="):
            query = [f.strip() for f in arg.split("=", 1)[1].split(",") if f.strip()]
        elif arg.startswith("--format="):
            format_options = {o.strip() for o in arg.split("=", 1)[1].split(",")}
        elif (arg in ("-i", "--id") and remaining) or arg.startswith("--id="):
            selector = remaining.pop(0) if "=" not in arg else arg.split("=", 1)[1]
            selected = _select(gpus, selector)
            if selected is None:
                return "No devices were found\n", 6
            gpus = selected
        else:
            return (
                "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n",
                2,
            )
    if listing:
        return "".join(_list_lines(g) for g in gpus), 0
    if query is not None:
        if format_options is None or "csv" not in format_options:
            return "Format option must be specified when querying.\n\n", 2
        return _query(gpus, query, format_options)
    return _table(gpus), 0


def _list_lines(gpu: Gpu) -> str:
    """A GPU's `-L` line and, indented under it, one line per MIG device (as drivers print them)."""
    lines = [f"GPU {gpu.index}: {gpu.name} (UUID: {gpu.uuid})"]
    lines += [f"  MIG {mig.profile:<11} Device {mig.index:>2}: (UUID: {mig.uuid})" for mig in gpu.mig_devices]
    return "".join(line + "\n" for line in lines)


_LIST_LINE = re.compile(r"^GPU (\d+): (.+?) \(UUID: (GPU-[0-9a-fA-F-]+)\)\s*$")


def parse_list(text: str) -> list[ListedGpu]:
    """Parse `nvidia-smi -L`; MIG device lines are skipped. Raises ValueError on other lines."""
    listed = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("MIG "):
            continue
        match = _LIST_LINE.match(line.strip())
        if match is None:
            raise ValueError(f"unexpected nvidia-smi -L line: {line.strip()[:120]!r}")
        listed.append(ListedGpu(int(match.group(1)), match.group(2), match.group(3)))
    return listed


_UNIT_SUFFIXES = (" MiB", " W", " %")  # each a space and a word: the last space starts it


def _strip_unit(value: str) -> str:
    return value.rsplit(" ", 1)[0] if value.endswith(_UNIT_SUFFIXES) else value


def parse_query_csv(text: str, fields: tuple[str, ...] | list[str]) -> list[dict[str, str]]:
    """Parse `--query-gpu=FIELDS --format=csv[,noheader][,nounits]` output into one dict per GPU.

    Accepts a header line and unit suffixes. Raises ValueError when a row has the wrong shape,
    which is how NVML error text printed instead of CSV is told apart from data.
    """
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.split(",")]
        if cells[0] == fields[0] or cells[0].startswith(f"{fields[0]} ["):
            continue  # header
        if len(cells) != len(fields):
            raise ValueError(
                f"expected {len(fields)} comma-separated values, got {len(cells)}: {line.strip()[:120]!r}"
            )
        rows.append({field: _strip_unit(cell) for field, cell in zip(fields, cells, strict=True)})
    return rows
