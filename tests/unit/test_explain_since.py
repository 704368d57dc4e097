"""`gpuctl explain --since WHEN`: the lines of a journal, dmesg or pod log capture stamped from WHEN on.

The lines are real ones: those of tests/corpus/failures.yaml by id (each with its source there), the
others quoted below with theirs.
"""

from __future__ import annotations

import io
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from gpuctl.cli.main import run
from gpuctl.core.since import cut, line_time, since
from gpuctl.errors import ConfigError

CORPUS = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "corpus" / "failures.yaml").read_text(encoding="utf-8")
)
LINES = {item["id"]: item["text"] for item in CORPUS}
XID43 = LINES["xid43-dmesg"]  # dmesg -T, 2024-07-31 23:14:18
XID31 = LINES["xid31-dmesg"]  # dmesg -T, 2024-08-05 03:54:13
XID94 = LINES["xid94-dmesg"]  # dmesg -T, 2024-08-09 13:32:56
KLOG = LINES["plugin-mps-daemon-not-running"]  # E0423 06:04:56.558122: no year
JOURNAL = LINES["image-unauthorized-nvcr"]  # Sep 01 18:01:25 gh200-1 containerd[1768487]: ...
RFC3339 = LINES["operator-validator-driver-chroot-no-smi"]  # 2024-10-24T09:25:48.178993123+08:00
LOGFMT = LINES["dcgm-exporter-hostengine-no-nvml"]  # time="2024-01-08T08:21:30Z" level=fatal ...
# A raw dmesg message's continuation line (NVIDIA/NVSentinel#155): no stamp of its own.
CONTINUATION = next(
    item["text"]
    for item in CORPUS
    if item["source"].endswith("NVSentinel/issues/155") and "[" not in item["text"]
)
# NVIDIA/NVSentinel#155: raw dmesg, stamped with the seconds since boot, which date nothing.
UPTIME = "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0"
# CachyOS/linux-cachyos#1019: journalctl under a locale that writes the month in lower case.
LOWER_MONTH = (
    "sep 03 13:25:15 cachyos kernel: NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  610.57.04  "
    "Release Build  (notroot@)  Fri Aug 28 12:12:04 UTC 2026"
)
# leptonai/gpud#870: `dmesg --decode --time-format iso`, the facility and level first.
DECODED = (
    "syslog:err   : 2025-05-27T04:18:56,089671+00:00 NVRM: Xid (PCI:0000:04:00): 79, GPU has fallen off "
    "the bus"
)
# RFC 5424 section 6.5, example 1.
RFC5424 = (
    "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - BOM'su root' failed for lonvick on "
    "/dev/pts/8"
)

# `kubectl logs --prefix --timestamps`: kubectl puts "[pod/%s/%s] " (pod, container) before each line
# (kubernetes/kubectl pkg/cmd/logs/logs.go, addPrefixIfNeeded); here before the validator's line.
PREFIXED = "[pod/nvidia-operator-validator-x2x7q/driver-validation] " + RFC3339

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (XID43, datetime(2024, 7, 31, 23, 14, 18, tzinfo=UTC)),
        (KLOG, datetime(2026, 4, 23, 6, 4, 56, tzinfo=UTC)),
        (JOURNAL, datetime(2026, 9, 1, 18, 1, 25, tzinfo=UTC)),
        (LOWER_MONTH, datetime(2026, 9, 3, 13, 25, 15, tzinfo=UTC)),
        (RFC3339, datetime(2024, 10, 24, 1, 25, 48, 178993, tzinfo=UTC)),
        (PREFIXED, datetime(2024, 10, 24, 1, 25, 48, 178993, tzinfo=UTC)),
        (LOGFMT, datetime(2024, 1, 8, 8, 21, 30, tzinfo=UTC)),
        (DECODED, datetime(2025, 5, 27, 4, 18, 56, 89671, tzinfo=UTC)),
        (RFC5424, datetime(2003, 10, 11, 22, 14, 15, 3000, tzinfo=UTC)),
        (UPTIME, None),
        (CONTINUATION, None),
    ],
)
def test_each_stamp_format_dates_its_line(line: str, expected: datetime | None) -> None:
    assert line_time(line, NOW, UTC) == expected


def test_a_stamp_without_a_year_is_never_a_day_ahead() -> None:
    january = datetime(2026, 1, 10, tzinfo=UTC)
    assert line_time(KLOG, january, UTC) == datetime(2025, 4, 23, 6, 4, 56, tzinfo=UTC)
    assert line_time(JOURNAL, january, UTC) == datetime(2025, 9, 1, 18, 1, 25, tzinfo=UTC)
    # a clock a few hours behind the log's is still this year
    assert line_time(JOURNAL, datetime(2026, 9, 1, 12, tzinfo=UTC), UTC) == datetime(
        2026, 9, 1, 18, 1, 25, tzinfo=UTC
    )


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("30m", NOW - timedelta(minutes=30)),
        ("2h", NOW - timedelta(hours=2)),
        ("1d", NOW - timedelta(days=1)),
        ("1h30m", NOW - timedelta(minutes=90)),
        ("45s", NOW - timedelta(seconds=45)),
        ("2026-12-06 10:00", datetime(2026, 12, 6, 10, tzinfo=UTC)),
        ("2026-12-06T10:00:00+02:00", datetime(2026, 12, 6, 8, tzinfo=UTC)),
        ("2026-12-06T10:00:01.123Z", datetime(2026, 12, 6, 10, 0, 1, 123000, tzinfo=UTC)),
    ],
)
def test_when_is_a_duration_or_a_time_stamp(word: str, expected: datetime) -> None:
    assert since(word, NOW, UTC).moment == expected


@pytest.mark.parametrize("word", ["5x", "yesterday", "", "-1h", "0s", "2h ago", "99999999999d", "2026-13-01"])
def test_a_bad_when_names_since(word: str) -> None:
    with pytest.raises(ConfigError, match="--since") as raised:
        since(word, NOW, UTC)
    assert "--since" in raised.value.hint


def test_undated_lines_go_with_the_stamped_line_before_them() -> None:
    text = "\n".join((UPTIME, XID43, CONTINUATION, XID31, XID94, CONTINUATION)) + "\n"
    kept = cut(text, since("2024-08-01", NOW, UTC))
    assert kept.text == "\n".join((XID31, XID94, CONTINUATION)) + "\n"
    assert (kept.lines, kept.kept, kept.dated, kept.undated_before) == (6, 3, 3, 1)


def _explain(args: list[str], stdin: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    return run(["explain", *args])


def test_explain_since_keeps_the_recent_lines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "\n".join((UPTIME, XID43, CONTINUATION, XID31, XID94)) + "\n"
    assert _explain(["-", "-o", "json"], text, monkeypatch) == 0
    everything = json.loads(capsys.readouterr().out)
    assert XID43 in [match["line"] for match in everything["matches"]]
    assert everything["since"] is None

    assert _explain(["-", "--since", "2024-08-01T00:00:00Z", "-o", "json"], text, monkeypatch) == 0
    document = json.loads(capsys.readouterr().out)
    lines = [match["line"] for match in document["matches"]]
    assert XID43 not in lines
    assert CONTINUATION.strip() not in lines  # it follows XID 43, from before --since
    assert [(match["line"], match["role"]) for match in document["matches"]] == [
        (XID94, "cause"),
        (XID31, "consequence"),
    ]
    assert document["since"] == {
        "from": "2024-08-01T00:00:00+00:00",
        "lines": 5,
        "kept": 2,
        "undated_before": 1,
    }
    assert "kept 2 of 5 lines" in document["note"]

    assert _explain(["-", "--since", "2024-08-01T00:00:00Z"], text, monkeypatch) == 0
    out = capsys.readouterr().out
    assert "--since 2024-08-01T00:00:00Z: kept 2 of 5 lines" in out
    assert "1 line(s) before the first time stamp left out" in out


def test_explain_since_with_nothing_recent_finds_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _explain(["-", "--since", "1h", "-o", "json"], XID94 + "\n", monkeypatch) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["matches"] == []
    assert document["since"]["kept"] == 0


@pytest.mark.parametrize(
    ("args", "stdin", "named"),
    [
        (["-", "--since", "5x"], XID94, "--since '5x'"),
        (["-", "--since", "2h"], "Events:\n  Warning  Failed  kubelet  Error: ErrImagePull\n", "--since 2h"),
        (["pod/gpu-check", "-n", "default", "--since", "1h"], "", "--since"),
        (["node/gpu-0", "--since", "1h"], "", "--since"),
    ],
)
def test_since_refused_is_exit_2_with_one_line(
    args: list[str],
    stdin: str,
    named: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _explain(args, stdin, monkeypatch) == 2
    err = capsys.readouterr().err
    first, hint = err.strip().splitlines()
    assert first.startswith("error: ")
    assert named in first
    assert hint.startswith("hint: ")
    assert "Traceback" not in err
