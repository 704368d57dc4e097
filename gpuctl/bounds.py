"""Every number a user gives gpuctl (a flag or an environment variable), with the range it must
be in, checked here and nowhere else.

Python reads `inf`, `nan`, `1e400` and `1e12` as floats; none of them is a sane number of seconds,
and each ended in a hang (`--interval inf`), an internal error (`time.sleep` or a socket timeout
refusing 1e12 s) or a silent no-op. A value outside its range is a usage error (exit 2) naming
the flag or variable and the range, with an example.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from gpuctl.errors import ConfigError


@dataclass(frozen=True)
class Bound:
    """A flag's or an environment variable's range: `low` to `high` (both allowed), in `unit`."""

    name: str  # --timeout, GPUCTL_REQUEST_TIMEOUT: as the error names it
    low: float
    high: float
    unit: str  # what the number counts, for the error: "seconds", "requests at a time"
    example: str
    integer: bool = False

    def parse(self, raw: str | float) -> float:
        """`raw` (as typed, or a default) as a number in range; ConfigError naming it otherwise."""
        try:
            value = float(int(str(raw).strip())) if self.integer else float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not self.low <= value <= self.high:
            raise ConfigError(f"{self._given(raw)}: {self.describe()}", hint=self._hint())
        return value

    def accepts(self, raw: str) -> bool:
        """Whether `raw` is in range (for a value gpuctl uses when sane and ignores otherwise)."""
        try:
            self.parse(raw)
        except ConfigError:
            return False
        return True

    def count(self, raw: str | float) -> int:
        """`raw` as a whole number in range (a Bound with integer=True)."""
        return int(self.parse(raw))

    def describe(self) -> str:
        kind = "a whole number" if self.integer else "a number"
        return f"must be {kind} of {self.unit} from {self.low:g} to {self.high:g}"

    def _given(self, raw: str | float) -> str:
        if self.name.startswith("-"):
            return f"{self.name} {raw}"
        return f"{self.name}={str(raw)!r}"

    def _hint(self) -> str:
        if self.name.startswith("-"):
            return f"e.g. {self.name} {self.example}"
        return f"unset {self.name} or set it to e.g. {self.example}"


def from_environment(bound: Bound, default: float) -> float:
    """The variable `bound.name` as a number in range; `default` when it is unset or blank."""
    raw = os.environ.get(bound.name, "")
    return bound.parse(raw) if raw.strip() else default


DAY_S = 24 * 3600.0

# Flags
WAIT_TIMEOUT = Bound("--timeout", 1, DAY_S, "seconds", "300")
WATCH_INTERVAL = Bound("--interval", 5, DAY_S, "seconds", "300")
CONCURRENCY = Bound("--concurrency", 1, 256, "requests at a time", "32", integer=True)
# Time-slicing and MPS replicas per GPU; 1 would share nothing (gpuctl.core.render.MAX_REPLICAS).
REPLICAS = Bound("--replicas", 2, 1024, "replicas per GPU", "4", integer=True)
# The all-reduce bus bandwidth a node must reach (`verify --level nccl`): NVLink 5 is 1,800 GB/s.
MIN_BUSBW = Bound("--min-busbw", 0.1, 10_000, "GB/s", "300")
# bootstrap's node-by-node upgrade: nodes out of service at once, and how long one drain may take.
MAX_UNAVAILABLE = Bound("--max-unavailable", 1, 10_000, "nodes at a time", "2", integer=True)
DRAIN_TIMEOUT = Bound("--drain-timeout", 1, DAY_S, "seconds", "600")

# Environment variables
REQUEST_TIMEOUT = Bound("GPUCTL_REQUEST_TIMEOUT", 0.1, 3600, "seconds", "60")
EXEC_TIMEOUT = Bound("GPUCTL_EXEC_TIMEOUT", 1, 3600, "seconds", "120")
# The terminal's width, for output that is not a terminal: a shell's setting, not gpuctl's, so a
# value out of range is ignored (as ls and rich ignore it), not refused. 0 printed nothing.
COLUMNS = Bound("COLUMNS", 20, 10_000, "columns", "120", integer=True)
