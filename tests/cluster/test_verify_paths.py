"""Verify paths no other test reaches: the product, memory and driver comparisons, output that is
not nvidia-smi's, the DaemonSet toleration audit and expected nodes that do not exist."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.polling import wait_until

H100 = "NVIDIA H100 80GB HBM3"


def smi_rows(*rows: tuple[str, int, str]) -> dict[str, Any]:
    """What nvidia-smi --query-gpu prints: one row per (product, MiB, driver)."""
    lines = [
        f"{index}, GPU-{index:08x}-0000-0000-0000-000000000000, {product}, {memory}, {driver}, "
        f"00000000:{index + 1:02X}:00.0"
        for index, (product, memory, driver) in enumerate(rows)
    ]
    return {"stdout": "\n".join(lines) + "\n", "exitCode": 0}


def run_verify(sim: Any, cli: Any, nodes: list[dict[str, Any]], *args: str) -> dict[str, Any]:
    cluster = sim({"devicePlugin": "installed", "podStartSeconds": 0.05, "nodes": nodes})
    gpu_nodes = [node["name"] for node in nodes if node.get("gpus") and not node.get("taints")]
    wait_until(lambda: all(cluster.allocatable_gpus().get(n, 0) > 0 for n in gpu_nodes), "GPUs advertised")
    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "-o", "json", *args)
    assert "Traceback" not in result.output
    report: dict[str, Any] = json.loads(result.stdout)
    report["exit_code"] = result.exit_code
    return report


def check(report: dict[str, Any], node: str, check_id: str) -> dict[str, Any]:
    item = next(n for n in report["nodes"] if n["name"] == node)
    return next(c for c in item["checks"] if c["id"] == check_id)


def cluster_check(report: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(c for c in report["cluster_checks"] if c["id"] == check_id)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (
            [("NVIDIA A100-SXM4-80GB", 81559, "550.90.07")],
            (
                "nvidia-smi.product",
                "fail",
                "nvidia-smi shows 'NVIDIA A100-SXM4-80GB', node label says 'NVIDIA-H100-80GB-HBM3'",
            ),
        ),
        (
            [(H100, 40960, "550.90.07")],
            ("nvidia-smi.memory", "fail", "40960 MiB per GPU, node label says 81559"),
        ),
        (
            [(H100, 81559, "550.90.07"), ("NVIDIA A100-SXM4-80GB", 81559, "550.90.07")],
            ("nvidia-smi.product", "warn", "mixed products: NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3"),
        ),
        (
            [(H100, 81559, "550.90.07"), (H100, 81920, "550.90.07")],
            ("nvidia-smi.memory", "warn", "GPUs differ in memory: [81559, 81920] MiB"),
        ),
        (
            [(H100, 81559, "550.90.07"), (H100, 81559, "535.183.01")],
            ("nvidia-smi.driver", "warn", "several driver versions: ['535.183.01', '550.90.07']"),
        ),
    ],
)
def test_what_nvidia_smi_shows_is_compared_with_the_node(
    sim: Any, cli: Any, rows: list[tuple[str, int, str]], expected: tuple[str, str, str]
) -> None:
    check_id, status, message = expected
    node = {"name": "gpu-0", "gpus": len(rows), "nvidiaSmi": smi_rows(*rows)}
    report = run_verify(sim, cli, [node])
    found = check(report, "gpu-0", check_id)
    assert found["status"] == status, found
    assert message in found["message"]
    assert report["exit_code"] == (1 if status == "fail" else 0)


def test_output_that_is_not_nvidia_smi_fails_the_run(sim: Any, cli: Any) -> None:
    node = {"name": "gpu-0", "gpus": 1, "nvidiaSmi": {"stdout": "hello from a shell image\n", "exitCode": 0}}
    report = run_verify(sim, cli, [node])
    run = check(report, "gpu-0", "nvidia-smi.run")
    assert run["status"] == "fail"
    assert run["message"].startswith("unexpected nvidia-smi output: ")
    assert "CUDA image" in run["hint"]
    assert check(report, "gpu-0", "nvidia-smi.gpus")["status"] == "skip"
    assert report["exit_code"] == 1


def test_nodes_on_different_drivers_warn_of_drift(sim: Any, cli: Any) -> None:
    report = run_verify(
        sim, cli, [{"name": "gpu-0", "gpus": 1}, {"name": "gpu-1", "gpus": 1, "driverVersion": "535.183.01"}]
    )
    drift = cluster_check(report, "cluster.driver-drift")
    assert drift["status"] == "warn"
    assert (
        drift["message"]
        == "driver versions differ between nodes: 550.90.07 on 1 node(s), 535.183.01 on 1 node(s)"
    )


def test_a_device_plugin_that_does_not_tolerate_a_gpu_taint_fails(sim: Any, cli: Any) -> None:
    tainted = {
        "name": "gpu-ml-0",
        "gpus": 8,
        "taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}],
    }
    report = run_verify(sim, cli, [{"name": "gpu-0", "gpus": 8}, tainted])
    audit = cluster_check(report, "cluster.daemonset-tolerations")
    assert audit["status"] == "fail"
    assert (
        audit["message"]
        == "kube-system/nvidia-device-plugin-daemonset does not tolerate dedicated=ml:NoSchedule"
    )
    assert "gpuctl taint-gpu-nodes --dry-run" in audit["hint"]
    assert report["exit_code"] == 1


def test_an_expected_node_glob_matching_nothing_fails(sim: Any, cli: Any) -> None:
    report = run_verify(sim, cli, [{"name": "gpu-0", "gpus": 8}], "--expect-nodes", "gpu-*,dgx-*")
    expected = cluster_check(report, "cluster.expected-nodes")
    assert expected["status"] == "fail"
    assert "dgx-*" in expected["message"]
    assert "gpu-*" not in expected["message"]
    assert report["exit_code"] == 1
