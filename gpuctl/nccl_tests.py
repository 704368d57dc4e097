"""nccl-tests' `all_reduce_perf`: the output gpuctl reads, and the same output written for simulated GPUs.

The parser reads what `all_reduce_perf` prints (NVIDIA/nccl-tests, src/common.cu): the `# Using
devices` lines, the table of message sizes with out-of-place and in-place time, algorithm and bus
bandwidth, the `# Out of bounds values` and `# Avg bus bandwidth` lines, and any `NCCL WARN` or
`NCCL failure` line mixed in. The formatter writes exactly that shape, so the simulated cluster
prints what a real node prints and gpuctl parses both the same way (tests/corpus/workloads/ holds
real captures). Standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

# A single-node run over all of a node's GPUs: one process driving every GPU (-g), message sizes
# from 8 B to 8 GiB doubling each step, so the largest size shows the link's sustained bandwidth.
ALL_REDUCE_BINARY = "all_reduce_perf"
LARGEST_SIZE_BYTES = 8 * 1024**3


def all_reduce_args(gpus: int, binary: str = ALL_REDUCE_BINARY) -> tuple[str, ...]:
    """The command line of one node's all-reduce over its `gpus` GPUs."""
    return (binary, "-b", "8", "-e", "8G", "-f", "2", "-g", str(gpus))


@dataclass(frozen=True)
class NcclDevice:
    """One `#  Rank  0 Group  0 Pid 123 on host device  0 [0x1b] NVIDIA H100 80GB HBM3` line."""

    rank: int
    host: str
    device: int
    bus_id: str
    name: str
    pid: int = 0
    group: int = 0


@dataclass(frozen=True)
class NcclRow:
    """One message size of the table: out-of-place and in-place figures (times in µs, GB/s)."""

    size_bytes: int
    count: int
    dtype: str
    redop: str
    out_of_place_time_us: float
    out_of_place_algbw_gbps: float
    out_of_place_busbw_gbps: float
    in_place_time_us: float
    in_place_algbw_gbps: float
    in_place_busbw_gbps: float
    root: int = -1
    out_of_place_wrong: str = "0"
    in_place_wrong: str = "0"

    @property
    def busbw_gbps(self) -> float:
        """The better of the two placements: either one reaching the figure proves the links."""
        return max(self.out_of_place_busbw_gbps, self.in_place_busbw_gbps)


@dataclass(frozen=True)
class NcclRun:
    """Everything gpuctl reads from one `all_reduce_perf` run."""

    devices: tuple[NcclDevice, ...]
    rows: tuple[NcclRow, ...]
    avg_busbw_gbps: float | None  # None: the run ended before its summary
    out_of_bounds: int | None  # values that failed validation; None: no summary line
    warnings: tuple[str, ...]  # `NCCL WARN` lines
    failures: tuple[str, ...]  # `Test NCCL failure` / `NCCL failure` lines
    version: str = ""  # `# nccl-tests version 2.18.3 ...` (2.18 and later print it)
    algorithm: str | None = None  # NVLS | Ring | Tree, from NCCL_DEBUG=INFO lines; None: none said
    transports: tuple[str, ...] = ()  # P2P/CUMEM, SHM, NET/IB, NET/Socket..., in order of first use

    @property
    def largest(self) -> NcclRow | None:
        return max(self.rows, key=lambda row: row.size_bytes, default=None)

    @property
    def busbw_gbps(self) -> float | None:
        """The bus bandwidth at the largest message size: what the links sustain."""
        largest = self.largest
        return None if largest is None else largest.busbw_gbps

    @property
    def completed(self) -> bool:
        return self.avg_busbw_gbps is not None and not self.failures


_DEVICE = re.compile(
    r"^#\s+Rank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?(?:Pid\s+(?P<pid>\d+)\s+)?on\s+"
    r"(?P<host>\S+)\s+device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]*)\]\s+(?P<name>.*?)\s*$"
)
_HEADER = re.compile(r"^#\s+(?:size|bytes)\s")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>\S+)")
_OUT_OF_BOUNDS = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<count>\d+)")
_VERSION = re.compile(r"^# nccl-tests version (?P<version>\S+)")
_WARN = re.compile(r"\bNCCL WARN\b")
_FAILURE = re.compile(r"\bNCCL failure\b")
# Column names of the table header, old and new (nccl-tests before 2.10 had no `root` column and
# named the validation column `error`; 1.x called size `bytes`).
_SIZE_NAMES = ("size", "bytes")


def parse_all_reduce(text: str) -> NcclRun:
    """Read `all_reduce_perf` output; lines it does not know (NCCL INFO, MPI noise) are skipped."""
    devices: list[NcclDevice] = []
    rows: list[NcclRow] = []
    columns: list[str] = []
    avg: float | None = None
    out_of_bounds: int | None = None
    warnings: list[str] = []
    failures: list[str] = []
    info = [line for line in text.splitlines() if _INFO.search(line)]
    version = next((found["version"] for line in text.splitlines() if (found := _VERSION.match(line))), "")
    for line in text.splitlines():
        if _INFO.search(line):
            continue
        if _WARN.search(line):
            warnings.append(line.strip())
        elif _FAILURE.search(line):
            failures.append(line.strip())
        elif device := _DEVICE.match(line):
            devices.append(_device(device))
        elif _HEADER.match(line):
            columns = line.lstrip("#").split()
        elif average := _AVG.match(line):
            avg = float(average["value"])
        elif bounds := _OUT_OF_BOUNDS.match(line):
            out_of_bounds = int(bounds["count"])
        elif columns and (row := _row(line.split(), columns)) is not None:
            rows.append(row)
    return NcclRun(
        tuple(devices), tuple(rows), avg, out_of_bounds, tuple(warnings), tuple(failures),
        version=version, algorithm=nccl_algorithm(info), transports=nccl_transports(info),
    )  # fmt: skip


# --- what NCCL_DEBUG=INFO says NCCL chose (NVIDIA/nccl: src/transport/nvls.cc, src/transport.cc) ---
_INFO = re.compile(r"\bNCCL INFO\b")
# NVLS set up: the NVLS buffers of each rank, or the channel summary with NVLS channels.
_NVLS_USED = re.compile(r"NCCL INFO (?:NVLS comm 0x|Connected NVLS|.*\b[1-9]\d* nvls channels)")
# NVLS off: no multicast on the device, or no NVLS channel. (Rings are built on NVLS runs too, so
# ring lines alone say nothing.)
_NVLS_OFF = re.compile(r"NCCL INFO (?:NVLS multicast support is not available|.*\b0 nvls channels)")
_ALGO_SET = re.compile(r"NCCL INFO NCCL_ALGO set by environment to (?P<algos>\S+)")
_VIA = re.compile(r"\bvia (?P<path>[A-Za-z0-9_]+(?:/[A-Za-z0-9_]+)?)")


def nccl_algorithm(info_lines: Sequence[str]) -> str | None:
    """NVLS when NCCL built NVLink SHARP buffers or channels, Ring when it said NVLS is off (no
    multicast, no NVLS channel), None when the run printed no such line (NCCL_DEBUG unset)."""
    # NCCL_ALGO limits what runs even where NVLS buffers were set up (`NCCL_ALGO set by environment
    # to ring,tree` beside `16 nvls channels`): the first algorithm it allows, as NCCL names it.
    forced = next((found["algos"] for line in info_lines if (found := _ALGO_SET.search(line))), None)
    if forced is not None and "nvls" not in forced.lower():
        first = forced.rstrip(".").split(",")[0].strip()
        return {"ring": "Ring", "tree": "Tree"}.get(first.lower(), first)
    if any(_NVLS_USED.search(line) for line in info_lines):
        return "NVLS"
    return "Ring" if any(_NVLS_OFF.search(line) for line in info_lines) else None


def nccl_transports(info_lines: Sequence[str]) -> tuple[str, ...]:
    """The transports of the `Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read` lines, as
    `P2P/CUMEM`, `P2P/direct`, `SHM/direct`, `NET/IB`, `NET/Socket` (IB plugins such as
    `NET/IBext_v8` read as `NET/IB`), in order of first use."""
    seen: dict[str, None] = {}
    for line in info_lines:
        found = _VIA.search(line)
        if found:
            path = found["path"]
            seen.setdefault("NET/IB" if path.startswith("NET/IB") else path)
    return tuple(seen)


def parse_all_reduce_json(text: str) -> NcclRun:
    """Read the report `all_reduce_perf -J FILE` writes (nccl-tests 2.17 and later, src/util.cu):
    `config.devices`, `results` (each size's `out_of_place`/`in_place` time, `alg_bw`, `bus_bw`,
    `nwrong`), `out_of_bounds.count`, `average_bus_bandwidth.bandwidth` and `errors`. A text that
    is not such a report reads as a run with that failure."""
    try:
        report = json.loads(text)
    except ValueError as error:
        return NcclRun((), (), None, None, (), (f"not an nccl-tests JSON report: {error}",))
    if not isinstance(report, dict):
        return NcclRun((), (), None, None, (), ("not an nccl-tests JSON report: not an object",))
    config = report.get("config") or {}
    devices = tuple(_json_device(device) for device in config.get("devices") or [])
    rows = tuple(row for row in map(_json_row, report.get("results") or []) if row is not None)
    average = (report.get("average_bus_bandwidth") or {}).get("bandwidth")
    bounds = (report.get("out_of_bounds") or {}).get("count")
    errors = tuple(str(error) for error in report.get("errors") or [] if error)
    return NcclRun(
        devices, rows, None if average is None else float(average), None if bounds is None else int(bounds),
        (), errors,
    )  # fmt: skip


def _json_device(device: dict[str, Any]) -> NcclDevice:
    return NcclDevice(
        rank=int(device.get("rank", 0)),
        host=str(device.get("hostname", "")),
        device=int(device.get("device", 0)),
        bus_id=str(device.get("device_hex", "")),
        name=str(device.get("device_info", "")),
        pid=int(device.get("pid", 0)),
        group=int(device.get("group", 0)),
    )


def _json_row(result: dict[str, Any]) -> NcclRow | None:
    """One `results` entry; `out_of_place` is null when only in-place ran (trace replay)."""
    in_place = result.get("in_place")
    if not isinstance(in_place, dict) or "size" not in result:
        return None
    out_of_place = result.get("out_of_place") or in_place

    def figures(placement: dict[str, Any]) -> tuple[float, float, float, str]:
        wrong = placement.get("nwrong")
        time_us = placement.get("time", placement.get("cpu_time", 0.0))
        return (float(time_us), float(placement.get("alg_bw", 0.0)), float(placement.get("bus_bw", 0.0)),
                "N/A" if wrong is None else f"{float(wrong):g}")  # fmt: skip

    out_time, out_algbw, out_busbw, out_wrong = figures(out_of_place)
    in_time, in_algbw, in_busbw, in_wrong = figures(in_place)
    return NcclRow(
        size_bytes=int(result["size"]), count=int(result.get("count", 0)), dtype=str(result.get("type", "")),
        redop=str(result.get("redop", "")), root=int(str(result.get("root", "-1")).strip() or -1),
        out_of_place_time_us=out_time, out_of_place_algbw_gbps=out_algbw, out_of_place_busbw_gbps=out_busbw,
        in_place_time_us=in_time, in_place_algbw_gbps=in_algbw, in_place_busbw_gbps=in_busbw,
        out_of_place_wrong=out_wrong, in_place_wrong=in_wrong,
    )  # fmt: skip


def _device(match: re.Match[str]) -> NcclDevice:
    return NcclDevice(
        rank=int(match["rank"]),
        host=match["host"],
        device=int(match["device"]),
        bus_id=match["bus"],
        name=match["name"],
        pid=int(match["pid"] or 0),
        group=int(match["group"] or 0),
    )


def _row(fields: list[str], columns: list[str]) -> NcclRow | None:
    """A table row under `columns` (the header's names), or None when the line is not one."""
    if len(fields) != len(columns) or not fields[0].isdigit():
        return None
    time, algbw, busbw = (_positions(columns, name) for name in ("time", "algbw", "busbw"))
    wrong = _positions(columns, "#wrong") or _positions(columns, "error")
    try:
        return NcclRow(
            size_bytes=int(fields[_first(columns, _SIZE_NAMES)]),
            count=int(fields[1]),
            dtype=fields[2],
            redop=fields[3],
            root=int(fields[columns.index("root")]) if "root" in columns else -1,
            out_of_place_time_us=float(fields[time[0]]),
            out_of_place_algbw_gbps=float(fields[algbw[0]]),
            out_of_place_busbw_gbps=float(fields[busbw[0]]),
            out_of_place_wrong=fields[wrong[0]] if wrong else "0",
            in_place_time_us=float(fields[time[1]]),
            in_place_algbw_gbps=float(fields[algbw[1]]),
            in_place_busbw_gbps=float(fields[busbw[1]]),
            in_place_wrong=fields[wrong[1]] if len(wrong) > 1 else "0",
        )
    except (ValueError, IndexError):
        return None


def _positions(columns: list[str], name: str) -> list[int]:
    return [index for index, column in enumerate(columns) if column == name]


def _first(columns: list[str], names: Sequence[str]) -> int:
    return next((columns.index(name) for name in names if name in columns), 0)


# --- the formatter: what all_reduce_perf prints, in the layout of the release that prints it -----
# "2.10": nccl-tests 2.10 to 2.16 (src/common.cu): the `# nThread` banner first, fixed-point
# columns. "2.17": from 2.17.4 (src/util.cu, JSON output, 2025-10) through 2.18.x: a version banner
# and `# Collective test starting/concluded` lines, numbers through getFloatStr (fewer decimals as
# they grow), `#wrong` as %6g. PINNED_LAYOUT is the layout of the release the pinned image runs.
Layout = Literal["2.10", "2.17"]
# The coreweave/nccl-tests build (the NCCL_TESTS_IMAGE tag's suffix) → the nccl-tests release it
# compiles: commit 2eedd7c set NCCL_TESTS_COMMITISH=f727aa2a (NVIDIA/nccl-tests, NCCL_TESTS_VERSION
# 2.18.3) in its Dockerfile. A new pin needs its row here and a capture of that release in
# tests/corpus/workloads.yaml.
NCCL_TESTS_BY_BUILD = {"2eedd7c": "2.18.3"}
PINNED_LAYOUT: Layout = "2.17"
# What the pinned image's banner says: nccl-tests 2.18.3 built against and running NCCL 2.30.4
# (NCCL_VERSION_CODE = major*10000 + minor*100 + patch).
PINNED_BANNER = "# nccl-tests version 2.18.3 nccl-headers=23004 nccl-library=23004"

_TABLE_HEADER = {
    "2.10": (
        "#                                                              out-of-place                       in-place          \n"  # noqa: E501 - byte for byte
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"  # noqa: E501 - byte for byte
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"  # noqa: E501 - byte for byte
    ),
    "2.17": (
        "#                                                              out-of-place                       in-place          \n"  # noqa: E501 - byte for byte
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"  # noqa: E501 - byte for byte
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n"  # noqa: E501 - byte for byte
    ),
}  # fmt: skip


def format_all_reduce(
    devices: Sequence[NcclDevice],
    rows: Sequence[NcclRow],
    *,
    avg_busbw_gbps: float | None = None,
    out_of_bounds: int = 0,
    layout: Layout = PINNED_LAYOUT,
    info_lines: Sequence[str] = (),
) -> str:
    """`all_reduce_perf -b 8 -e 8G -f 2 -g N` output for `devices`, one line per row, then the
    summary (its average is the mean of every row's two bus bandwidths unless given). `info_lines`
    (NCCL_DEBUG=INFO) come where NCCL prints them: after the device lines, while it sets up."""
    average = avg_busbw_gbps if avg_busbw_gbps is not None else _mean_busbw(rows)
    table = "".join(f"{format_row(row, layout)}\n" for row in rows)
    summary = f"# Out of bounds values : {out_of_bounds} {'FAILED' if out_of_bounds else 'OK'}\n"
    summary += f"# Avg bus bandwidth    : {average:g} \n"
    devices_lines = [*map(format_device, devices), *info_lines]
    if layout == "2.10":
        lines = [_banner(len(devices), rows, layout), "#", "# Using devices", *devices_lines, "#"]
        return "\n".join(lines) + "\n" + _TABLE_HEADER[layout] + table + summary
    head = [
        PINNED_BANNER,
        f"# Collective test starting: {ALL_REDUCE_BINARY}",
        _banner(len(devices), rows, layout),
    ]
    lines = [*head, "#", "# Using devices", *devices_lines, "#"]
    # src/common.cu: writeResultFooter, finalizeFooter ("#"), then writeErrors ("" when none).
    tail = f"#\n# Collective test concluded: {ALL_REDUCE_BINARY}\n#\n\n"
    return "\n".join(lines) + "\n" + _TABLE_HEADER[layout] + table + summary + tail


def _banner(gpus: int, rows: Sequence[NcclRow], layout: Layout) -> str:
    smallest = min((row.size_bytes for row in rows), default=8)
    largest = max((row.size_bytes for row in rows), default=LARGEST_SIZE_BYTES)
    if layout == "2.10":
        return (
            f"# nThread 1 nGpus {gpus} minBytes {smallest} maxBytes {largest} step: 2(factor) "
            "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
        )
    return (
        f"# nThread 1 nGpus {gpus} minBytes {smallest} maxBytes {largest} step: 2(factor) "
        "warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0"
    )


def format_device(device: NcclDevice) -> str:
    return (
        f"#  Rank {device.rank:2d} Group {device.group:2d} Pid {device.pid:6d} on {device.host:>10} "
        f"device {device.device:2d} [{device.bus_id}] {device.name}"
    )


def format_row(row: NcclRow, layout: Layout = PINNED_LAYOUT) -> str:
    head = f"{row.size_bytes:12d}  {row.count:12d}  {row.dtype:>8}  {row.redop:>6}  {row.root:6d}"
    out_of_place = (row.out_of_place_time_us, row.out_of_place_algbw_gbps, row.out_of_place_busbw_gbps)
    in_place = (row.in_place_time_us, row.in_place_algbw_gbps, row.in_place_busbw_gbps)
    placements = ((*out_of_place, row.out_of_place_wrong), (*in_place, row.in_place_wrong))
    if layout == "2.10":
        body = "".join(
            f"  {_time(time):>7}  {algbw:6.2f}  {busbw:6.2f}  {wrong:>5}"
            for time, algbw, busbw, wrong in placements
        )
    else:
        body = "".join(
            f"  {_float(time, 7)}  {_float(algbw, 6)}  {_float(busbw, 6)}  {_wrong(wrong):>6}"
            for time, algbw, busbw, wrong in placements
        )
    return head + body


def _time(time_us: float) -> str:
    """nccl-tests before 2.17 shows fewer decimals as the time grows: 42.56, 135.8, 12646."""
    if time_us >= 10000:
        return f"{time_us:.0f}"
    return f"{time_us:.1f}" if time_us >= 100 else f"{time_us:.2f}"


def _float(value: float, width: int) -> str:
    """src/util.cu getFloatStr: two decimals while the integer part leaves room, then one, then none."""
    power = 0
    bound = 1
    while value >= bound:
        power += 1
        bound *= 10
    if power < width - 2:
        return f"{value:{width}.2f}"
    if power < width - 1:
        return f"{value:{width}.1f}"
    if power < width + 1:
        return f"{value:{width}.0f}"
    # (getFloatStr's `width >= 8` branch is never reached: `width >= 7` comes first)
    return f"{value:{width}.1e}" if width >= 7 else f"{value:{width}.0e}"


def _wrong(wrong: str) -> str:
    """`#wrong` printed with %6g: the count of wrong elements."""
    try:
        return f"{float(wrong):g}"
    except ValueError:
        return wrong


def _mean_busbw(rows: Sequence[NcclRow]) -> float:
    figures = [figure for row in rows for figure in (row.out_of_place_busbw_gbps, row.in_place_busbw_gbps)]
    return sum(figures) / len(figures) if figures else 0.0


def all_reduce_rows(gpus: int, busbw_gbps: float, sizes: Sequence[int] | None = None) -> tuple[NcclRow, ...]:
    """Table rows of an all-reduce over `gpus` GPUs whose links sustain `busbw_gbps`: small messages
    pay a fixed latency, large ones approach the link figure (the shape of real runs)."""
    factor = 2 * (gpus - 1) / gpus  # busbw = algbw * 2(n-1)/n for all-reduce (nccl-tests PERFORMANCE.md)
    latency_us = 20.0
    rows = []
    for size in sizes or [8 * 2**step for step in range(31)]:
        time_us = latency_us + size / (busbw_gbps / factor * 1000)
        algbw = size / time_us / 1000
        rows.append(
            NcclRow(
                size_bytes=size, count=size // 4, dtype="float", redop="sum",
                out_of_place_time_us=time_us, out_of_place_algbw_gbps=algbw,
                out_of_place_busbw_gbps=algbw * factor, in_place_time_us=time_us,
                in_place_algbw_gbps=algbw, in_place_busbw_gbps=algbw * factor,
            )
        )  # fmt: skip
    return tuple(rows)
