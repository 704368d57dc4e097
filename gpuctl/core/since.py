"""`gpuctl explain --since WHEN`: keep the lines of a capture stamped at or after WHEN.

WHEN is a duration before now, as `kubectl logs --since` takes it (`30s`, `30m`, `2h`, and `1d`,
`1h30m`), or a time stamp: ISO 8601 (`2026-12-06 10:00`, `2026-12-06T10:00:00Z`), read in the local
time zone when it names none, as `journalctl --since` reads it.

A line is dated by the stamp it starts with, in the formats the tools print:

- RFC 3339 / ISO 8601: `journalctl -o short-iso` (`2026-12-06T10:00:01+0000`), `kubectl logs
  --timestamps` (`2026-12-06T10:00:01.123456789Z`, after `--prefix`'s `[pod/NAME/CONTAINER]`),
  logfmt's `time="2026-12-06T10:00:01Z"`, syslog RFC 5424 (`<34>1 2026-12-06T10:00:01.003Z ...`);
- `dmesg -T`: `[Sun Dec  6 10:00:01 2026]`, and `dmesg -x --time-format iso`
  (`kern  :err   : 2026-12-06T10:00:01,123456+00:00`: the facility and level before the stamp);
- `journalctl` (short, short-precise) and syslog RFC 3164: `Dec 06 10:00:01 host kernel: ...`;
- klog (the kubelet, device plugins, the GPU Operator): `E1206 10:00:01.123456    1 file.go:12] ...`.

A stamp without a year (journal, klog) is of the current year, or of the last one where that puts
it more than a day in the future; one without a zone is local time. A line without a stamp (a
continuation, a raw `dmesg` uptime stamp `[12345.678]`) goes with the last stamped line before it;
undated lines before the first stamped one cannot be placed and are left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from gpuctl.errors import ConfigError

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(?:\d+[smhd])+")
_DURATION_PART = re.compile(r"(\d+)([smhd])")
_HINT = (
    "give a duration before now (`--since 30m`, `2h`, `1d`) or a time stamp "
    "(`--since '2026-12-06 10:00'`, `2026-12-06T10:00:00Z`)"
)
FORMATS = "journalctl, dmesg -T, kubectl logs --timestamps, klog, RFC 3339 or RFC 5424 syslog"


@dataclass(frozen=True)
class Since:
    """What `--since WHEN` asks for: `moment` and the `word` typed; `now` and `zone` (None: the
    system's) place the stamps that lack a year or a zone."""

    word: str
    moment: datetime
    now: datetime
    zone: tzinfo | None = None


@dataclass(frozen=True)
class SinceCut:
    """The lines kept from a capture, and how many were read, stamped and left out unplaced."""

    text: str
    lines: int  # lines with something on them
    kept: int
    dated: int
    undated_before: int  # lines before the first stamped one, left out


def since(word: str, now: datetime | None = None, zone: tzinfo | None = None) -> Since:
    """The moment `--since WORD` names; ConfigError naming --since when it names none."""
    now = now or datetime.now().astimezone()
    text = word.strip()
    if _DURATION.fullmatch(text):
        seconds = sum(int(count) * _UNITS[unit] for count, unit in _DURATION_PART.findall(text))
        if not seconds:
            raise ConfigError(f"--since {word!r}: a duration of zero keeps nothing", _HINT)
        try:
            return Since(word, now - timedelta(seconds=seconds), now, zone)
        except OverflowError:
            raise ConfigError(f"--since {word!r}: a duration longer than the calendar", _HINT) from None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"--since {word!r} is neither a duration (30m, 2h, 1d) nor a time stamp (2026-12-06 10:00)", _HINT
        ) from None
    return Since(word, _placed(moment, zone), now, zone)


def _placed(stamp: datetime, zone: tzinfo | None) -> datetime:
    """`stamp` with a zone: its own, else `zone`, else the system's local time."""
    if stamp.tzinfo is not None:
        return stamp
    return stamp.replace(tzinfo=zone) if zone is not None else stamp.astimezone()


_MONTHS = {name: number for number, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1
)}  # fmt: skip
_MONTH = r"(?P<month>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_HMS = r"(?P<hms>\d\d:\d\d:\d\d)"
_ISO = re.compile(
    r"(?:\[[^\]\s]+\]\s+)?(?:<\d{1,3}>\d{1,2}\s+)?(?:time=\"?)?"
    r"(?P<iso>\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d(?::?\d\d)?)?)(?=[\s\"\]]|$)",
    re.IGNORECASE,
)
_DMESG_T = re.compile(
    r"\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) " + _MONTH + r" +(?P<day>\d{1,2}) " + _HMS + r" (?P<year>\d{4})\]"
)
_JOURNAL = re.compile(r"(?i:" + _MONTH + r")" + r" +(?P<day>\d{1,2}) " + _HMS + r"(?:\.\d+)?\s")
_KLOG = re.compile(r"[IWEF](?P<mm>\d\d)(?P<day>\d\d) " + _HMS + r"(?:\.\d+)?\s")


# `dmesg -x` (--decode): the facility and the level before the stamp
_DECODED = re.compile(r"[a-z]+\s*:[a-z]+\s*:\s+")


def line_time(line: str, now: datetime, zone: tzinfo | None = None) -> datetime | None:
    """When `line` was printed, by the stamp it starts with; None when it starts with none."""
    text = line.lstrip()
    decoded = _DECODED.match(text)
    if decoded:
        text = text[decoded.end() :]
    found = _ISO.match(text)
    if found:
        try:
            return _placed(datetime.fromisoformat(found.group("iso").replace(",", ".")), zone)
        except ValueError:
            return None
    found = _DMESG_T.match(text)
    if found:
        return _dated(int(found.group("year")), _MONTHS[found.group("month").lower()], found, zone)
    found = _JOURNAL.match(text)
    if found:
        return _this_year(_MONTHS[found.group("month").lower()], found, now, zone)
    found = _KLOG.match(text)
    if found:
        return _this_year(int(found.group("mm")), found, now, zone)
    return None


def _dated(year: int, month: int, found: re.Match[str], zone: tzinfo | None) -> datetime | None:
    hours, minutes, seconds = (int(part) for part in found.group("hms").split(":"))
    try:
        stamp = datetime(year, month, int(found.group("day")), hours, minutes, seconds)
    except ValueError:  # 31 Feb, 25:00: not a stamp
        return None
    return _placed(stamp, zone)


def _this_year(month: int, found: re.Match[str], now: datetime, zone: tzinfo | None) -> datetime | None:
    """A stamp without a year: this year's, or last year's where this year's is over a day ahead
    (a December line read in January); a 29 February of another year is last leap year's."""
    stamp = _dated(now.year, month, found, zone)
    if stamp is None or stamp > now + timedelta(days=1):
        stamp = _dated(now.year - 1, month, found, zone)
    return stamp


def cut(text: str, window: Since) -> SinceCut:
    """The lines of `text` stamped at or after `window.moment`, each undated line with the stamped
    one before it; undated lines before the first stamped one are left out."""
    kept: list[str] = []
    lines = dated = undated_before = 0
    keep: bool | None = None  # the decision of the last stamped line; None before the first
    for line in text.splitlines():
        if not line.strip():
            continue
        lines += 1
        stamp = line_time(line, window.now, window.zone)
        if stamp is not None:
            dated += 1
            keep = stamp >= window.moment
        elif keep is None:
            undated_before += 1
        if keep:
            kept.append(line)
    return SinceCut("".join(f"{line}\n" for line in kept), lines, len(kept), dated, undated_before)


def note(window: Since, result: SinceCut) -> str:
    """What --since kept, in words."""
    moment = window.moment.isoformat(sep=" ", timespec="seconds")
    said = f"--since {window.word}: kept {result.kept} of {result.lines} lines, those from {moment} on"
    if result.undated_before:
        said += f"; {result.undated_before} line(s) before the first time stamp left out (undated)"
    return said
