"""Acceptance: an interrupted `gpuctl verify` deletes its pods even when SIGINT was inherited ignored."""

from __future__ import annotations

import signal
from typing import Any

from tests.interrupt import interrupt_when
from tests.polling import wait_until


def _gpus_advertised(cluster: Any) -> bool:
    return set(cluster.allocatable_gpus().values()) == {4}


# What `gpuctl verify &` in a non-interactive shell (a CI script) gets: SIGINT set to SIG_IGN,
# kept across exec.
IGNORE_SIGINT_THEN_EXEC = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def test_sigint_cleans_up_when_started_as_a_background_job(sim: Any) -> None:
    scenario = {
        "podStartSeconds": 0.05,
        "podRunSeconds": 120,
        "devicePlugin": "installed",
        "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 4}],
    }
    cluster = sim(scenario)
    wait_until(lambda: _gpus_advertised(cluster), "GPUs advertised")
    code, stderr = interrupt_when(
        ["verify", "--kubeconfig", str(cluster.kubeconfig)],
        lambda: len(cluster.verification_pods()) == 2,
        [signal.SIGINT],
        launcher=("-c", IGNORE_SIGINT_THEN_EXEC),
    )
    assert code == 130, stderr
    assert "Traceback" not in stderr
    assert cluster.verification_pods() == []


def test_sigterm_stops_bootstrap_in_its_verify_phase_and_deletes_the_pods(sim: Any) -> None:
    scenario = {
        "podStartSeconds": 0.05,
        "podRunSeconds": 120,
        "devicePlugin": "installed",
        "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 4, "labels": {"nvidia.com/gpu.count": "4"}}],
    }
    cluster = sim(scenario)
    wait_until(lambda: _gpus_advertised(cluster), "GPUs advertised")
    code, stderr = interrupt_when(
        ["bootstrap", "--phase", "verify", "--kubeconfig", str(cluster.kubeconfig)],
        lambda: len(cluster.verification_pods()) == 2,
        [signal.SIGTERM],
    )
    assert code == 130, stderr
    assert "interrupted:" in stderr
    assert "Traceback" not in stderr
    assert cluster.verification_pods() == []
