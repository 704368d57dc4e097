"""gpuctl/validation.py: what the CronJob controller, the container runtime and helm accept, and
render's --out written all or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuctl.validation import (
    chart_version_problem,
    cron_problem,
    dns_subdomain_problem,
    image_problem,
    label_key_problem,
    label_value_problem,
    subject_name_problem,
)

# Schedules Kubernetes' CronJob controller (robfig/cron's standard parser) takes.
GOOD_SCHEDULES = [
    "*/30 * * * *",
    "0 0 * * 0",
    "0 0 * * sun-sat",
    "0 6-18/2 * jan-jun MON-FRI",
    "5/15 * * * *",
    "0,15,30,45 * 1-31 * *",
    "? ? ? ? ?",
    "  0 0 * * *  ",
    "@hourly",
    "@midnight",
    "@every 90s",
    "@every 1h30m",
]
# And the reason it refuses each of these.
BAD_SCHEDULES = [
    ("61 * * * *", "minute '61' is not 0-59"),
    ("0 24 * * *", "hour '24' is not 0-23"),
    ("0 0 0 * *", "day of month '0' is not 1-31"),
    ("0 0 * 13 *", "month '13' is not 1-12 or jan-dec"),
    ("0 0 * * 7", "day of week '7' is not 0-6 or sun-sat"),
    ("0 0 * * funday", "day of week 'funday'"),
    ("30-10 * * * *", "the range starts after it ends"),
    ("*/0 * * * *", "the step after '/' must be a positive number"),
    ("*/ * * * *", "the step after '/' must be a positive number"),
    ("1,,2 * * * *", "minute '' is not 0-59"),
    ("-5 * * * *", "minute '' is not 0-59"),
    ("0 0 L * *", "day of month 'L'"),
    ("* * * *", "not a five-field cron schedule"),
    ("* * * * * *", "not a five-field cron schedule"),
    ("", "not a five-field cron schedule"),
    ("hourly", "not a five-field cron schedule"),
    ("@HOURLY", "unknown '@HOURLY'"),
    ("@every", "unknown '@every'"),
    ("@every soon", "unknown '@every'"),
    ("TZ=UTC 0 * * * *", "a time zone cannot be part of the schedule"),
    ("CRON_TZ=Europe/Paris 0 * * * *", "a time zone cannot be part of the schedule"),
]


@pytest.mark.parametrize("schedule", GOOD_SCHEDULES)
def test_schedules_the_controller_takes(schedule: str) -> None:
    assert cron_problem(schedule) == ""


@pytest.mark.parametrize(("schedule", "reason"), BAD_SCHEDULES)
def test_schedules_the_controller_refuses(schedule: str, reason: str) -> None:
    assert reason in cron_problem(schedule)


@pytest.mark.parametrize(
    "reference",
    [
        "busybox",
        "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
        "registry.example:5000/team/gpuctl:0.1.0_rc1",
        "localhost/gpuctl",
        "[::1]:5000/gpuctl:1",
        "nvcr.io/nvidia/cuda@sha256:" + "a" * 64,
        "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04@sha256:" + "a" * 64,
        "Registry.Example/gpuctl:1",  # upper case is fine in a registry host, not in a repository
    ],
)
def test_image_references_the_runtime_takes(reference: str) -> None:
    assert image_problem(reference) == ""


@pytest.mark.parametrize(
    ("reference", "reason"),
    [
        ("", "empty"),
        ("  ", "empty"),
        ("nvcr.io/NVIDIA/cuda:12", "the repository must be lower-case"),
        ("cuda:", "not an image reference"),
        ("cuda:-1", "not an image reference"),
        ("cuda latest", "not an image reference"),
        ("@sha256:abc", "not an image reference"),
        ("cuda@sha256:abc", "not an image reference"),
        ("a//b", "not an image reference"),
        ("cuda:" + "x" * 129, "not an image reference"),
        ("a" * 256, "longer than 255 characters"),
    ],
)
def test_image_references_the_runtime_refuses(reference: str, reason: str) -> None:
    assert reason in image_problem(reference)


def test_label_and_name_rules() -> None:
    assert label_key_problem("nvidia.com/gpu.present") == ""
    assert label_key_problem("k" * 63) == ""
    assert "name part" in label_key_problem("k" * 64)
    assert "prefix" in label_key_problem("p" * 254 + "/k")
    assert "prefix" in label_key_problem("Example.com/k")
    assert label_value_problem("") == ""
    assert label_value_problem("a.b_c-1") == ""
    assert "at most 63" in label_value_problem("v" * 64)
    assert "at most 63" in label_value_problem("-v")
    assert dns_subdomain_problem("gpuctl.ci-1") == ""
    assert dns_subdomain_problem("a" * 254) != ""
    assert dns_subdomain_problem("Bad_Name") != ""
    assert subject_name_problem("system:serviceaccount:ci:gpuctl") == ""
    assert subject_name_problem(" bob") != ""
    assert subject_name_problem("bo\nb") != ""


def test_chart_versions_helm_would_pin() -> None:
    assert chart_version_problem("v25.3.0") == ""
    assert chart_version_problem(">=25.0.0") == ""
    assert "helm would install the newest chart" in chart_version_problem("")
    assert "no spaces" in chart_version_problem("25 3")


def test_out_is_written_all_or_nothing(cli: Any, tmp_path: Path) -> None:
    """A file render cannot put in place (here a folder in its way) leaves the folder as it was:
    the earlier render's files unchanged, no half-written file and no staged copy left behind."""
    out = tmp_path / "manifests"
    assert cli("render", "--out", out).exit_code == 0
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    (out / "rbac-verify.yaml").mkdir()  # in the way of one of the second render's later files
    result = cli("render", "--sharing", "time-slicing", "--rbac", "--out", out)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: --out {out}: cannot write {out / 'rbac-verify.yaml'}: ")
    assert result.stdout == ""
    after = {path.name: path.read_bytes() for path in out.iterdir() if path.is_file()}
    assert after == before
    assert sorted(path.name for path in out.iterdir()) == sorted([*before, "rbac-verify.yaml"])
