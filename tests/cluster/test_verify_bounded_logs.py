"""Bounded reads: a verification pod whose nvidia-smi writes megabytes (a hostile or broken
image) costs verify no more memory than one that writes a line, because every pod-log read
carries limitBytes (gpuctl/kube/pods.py LOG_LIMIT_BYTES) and the API server cuts the log there.
verify runs as a user runs it, a process of its own; its peak RSS is read from /proc (VmHWM) as it
exits: the rusage of a child also counts the test process it was forked from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from gpuctl.kube.pods import LOG_LIMIT_BYTES
from tests.cluster.test_verify_modes import check, node, scenario, wait_for_gpus

HOSTILE_BYTES = 16 * 1024 * 1024
# What one verify may grow by for the hostile log: a small multiple of the limit, far below the log.
GROWTH_KIB = 8 * 1024


# `python -m gpuctl ...` that writes its own peak RSS (KiB) to the file $PEAK as it exits
PEAK_OF_GPUCTL = """
import atexit, os, re, runpy, sys
def peak():
    status = open("/proc/self/status").read()
    open(os.environ["PEAK"], "w").write(re.search(r"VmHWM:\\s+(\\d+)", status)[1])
atexit.register(peak)
sys.argv = ["gpuctl", *sys.argv[1:]]
runpy.run_module("gpuctl", run_name="__main__")
"""


def _verify(cluster: Any, peak: Path) -> tuple[int, dict[str, Any], int]:
    """(exit code, the JSON report, peak RSS in KiB) of `gpuctl verify` run as its own process."""
    argv = ["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "60"]
    done = subprocess.run(
        [sys.executable, "-c", PEAK_OF_GPUCTL, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PEAK": str(peak)},
        check=False,
    )
    return done.returncode, json.loads(done.stdout), int(peak.read_text(encoding="utf-8"))


def _failing_smi(sim: Any, stdout: str) -> Any:
    cluster = sim(scenario({"name": "gpu-0", "gpus": 1, "nvidiaSmi": {"stdout": stdout, "exitCode": 1}}))
    wait_for_gpus(cluster, "gpu-0", 1)
    return cluster


def test_a_multi_megabyte_log_costs_verify_no_memory_and_still_fails_the_node(
    sim: Any, tmp_path: Path
) -> None:
    assert LOG_LIMIT_BYTES * 16 <= HOSTILE_BYTES
    line = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
    small_code, _, small_rss = _verify(_failing_smi(sim, line), tmp_path / "small")
    hostile = line + ("x" * 1023 + "\n") * (HOSTILE_BYTES // 1024)
    code, report, rss = _verify(_failing_smi(sim, hostile), tmp_path / "hostile")

    assert (small_code, code) == (1, 1)
    failed = check(node(report, "gpu-0"), "nvidia-smi.run")
    assert failed["status"] == "fail"
    assert failed["message"].startswith("nvidia-smi exited 1 (Error): NVIDIA-SMI has failed"), failed
    assert rss - small_rss < GROWTH_KIB, f"verify grew {rss - small_rss} KiB reading a 16 MiB log"
