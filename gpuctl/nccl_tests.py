"""nccl-tests' `all_reduce_perf`: the output gpuctl reads, and the same output written for simulated GPUs.

The parser reads what `all_reduce_perf` prints (NVIDIA/nccl-tests, src/common.cu): the `# Using
devices` lines, the table of message sizes with out-of-place and in-place time, algorithm and bus
bandwidth, the `# Out of bounds values` and `# Avg bus bandwidth` lines, and any `NCCL WARN` or
`NCCL failure` line mixed in. The formatter writes exactly that shape, so the simulated cluster
prints what a real node prints and gpuctl parses both the same way (tests/corpus/workloads/ holds
real captures). Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

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
    for line in text.splitlines():
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
    return NcclRun(tuple(devices), tuple(rows), avg, out_of_bounds, tuple(warnings), tuple(failures))


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


# --- the formatter: what all_reduce_perf prints (nccl-tests src/common.cu, 2.10 and later) ------
_TABLE_HEADER = (
    "#                                                              out-of-place                       in-place          \n"  # noqa: E501 - byte for byte
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"  # noqa: E501 - byte for byte
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"  # noqa: E501 - byte for byte
)  # fmt: skip


def format_all_reduce(
    devices: Sequence[NcclDevice],
    rows: Sequence[NcclRow],
    *,
    avg_busbw_gbps: float | None = None,
    out_of_bounds: int = 0,
) -> str:
    """`all_reduce_perf -b 8 -e 8G -f 2 -g N` output for `devices`, one line per row, then the
    summary (its average is the mean of every row's two bus bandwidths unless given)."""
    lines = [_banner(len(devices), rows), "#", "# Using devices", *map(format_device, devices), "#"]
    table = "".join(f"{format_row(row)}\n" for row in rows)
    average = avg_busbw_gbps if avg_busbw_gbps is not None else _mean_busbw(rows)
    summary = f"# Out of bounds values : {out_of_bounds} {'FAILED' if out_of_bounds else 'OK'}\n"
    summary += f"# Avg bus bandwidth    : {average:g} \n"
    return "\n".join(lines) + "\n" + _TABLE_HEADER + table + summary


def _banner(gpus: int, rows: Sequence[NcclRow]) -> str:
    smallest = min((row.size_bytes for row in rows), default=8)
    largest = max((row.size_bytes for row in rows), default=LARGEST_SIZE_BYTES)
    return (
        f"# nThread 1 nGpus {gpus} minBytes {smallest} maxBytes {largest} step: 2(factor) "
        "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
    )


def format_device(device: NcclDevice) -> str:
    return (
        f"#  Rank {device.rank:2d} Group {device.group:2d} Pid {device.pid:6d} on {device.host:>10} "
        f"device {device.device:2d} [{device.bus_id}] {device.name}"
    )


def format_row(row: NcclRow) -> str:
    head = f"{row.size_bytes:12d}  {row.count:12d}  {row.dtype:>8}  {row.redop:>6}  {row.root:6d}"
    out_of_place = _placement(
        row.out_of_place_time_us, row.out_of_place_algbw_gbps, row.out_of_place_busbw_gbps
    )
    in_place = _placement(row.in_place_time_us, row.in_place_algbw_gbps, row.in_place_busbw_gbps)
    return f"{head}{out_of_place}  {row.out_of_place_wrong:>5}{in_place}  {row.in_place_wrong:>5}"


def _placement(time_us: float, algbw: float, busbw: float) -> str:
    return f"  {_time(time_us):>7}  {algbw:6.2f}  {busbw:6.2f}"


def _time(time_us: float) -> str:
    """nccl-tests shows fewer decimals as the time grows: 42.56, 135.8, 12646."""
    if time_us >= 10000:
        return f"{time_us:.0f}"
    return f"{time_us:.1f}" if time_us >= 100 else f"{time_us:.2f}"


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
