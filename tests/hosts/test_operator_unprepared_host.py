"""The GPU Operator stack with one inventory host the host phase never prepared: the chart goes in
with the Operator's driver and toolkit containers off (gpuctl's default), so that host has no
driver; `bootstrap --phase cluster --stack operator` must name it and the way out (the host phase,
or the Operator's driver), while the prepared host passes. Real hosts behind a sim, a real helm.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helm import needs_helm
from tests.hosts.test_operator_on_hosts import GPUS, OperatorCluster, bootstrap, gpuctl, operator_cluster

pytestmark = [pytest.mark.hosts, pytest.mark.slow, needs_helm]


@pytest.fixture(scope="module")
def cluster(node_image: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorCluster]:
    """The host to be prepared starts from the node image (its host phase below finds nothing to do);
    the other is bare, and the last test bootstraps it for real."""
    work = tmp_path_factory.mktemp("operator-unprepared")
    with operator_cluster(work, image=node_image, image_nodes=1) as started:
        yield started


def test_a_host_the_host_phase_skipped_is_named_with_the_way_out(cluster: OperatorCluster) -> None:
    prepared, skipped = cluster.nodes
    code, report, stderr = bootstrap(cluster, "--phase", "host", "--limit", prepared.name)
    assert code == 0, stderr[-2000:]
    assert [host["name"] for host in report["hosts"]] == [prepared.name]

    code, report, stderr = bootstrap(cluster, "--phase", "cluster", "--timeout", "10")
    assert code == 1, json.dumps(report, indent=2)[:4000] + stderr[-2000:]
    assert report["expected_gpus"] == {prepared.name: GPUS, skipped.name: GPUS}  # the PCI bus, driver or not
    assert report["cluster"]["helm"]["values"]["driver"] == {"enabled": False}
    nodes = {node["name"]: node for node in report["cluster"]["nodes"]}
    assert (nodes[prepared.name]["ready"], nodes[prepared.name]["operator_validator"]) == (True, "ready")
    unprepared = nodes[skipped.name]
    assert (unprepared["ready"], unprepared["allocatable"]) == (False, 0)
    # NFD found the GPUs on the PCI bus, so the Operator runs its validator there; it waits for a driver.
    assert unprepared["operator_validator"] == "waiting: driver-validation", unprepared
    assert "waits on driver-validation" in unprepared["problem"]["message"]
    assert "gpuctl bootstrap --phase host" in unprepared["problem"]["hint"]
    assert "--operator-driver" in unprepared["problem"]["hint"]


def test_explain_with_the_inventory_reads_the_unprepared_host_over_ssh(cluster: OperatorCluster) -> None:
    """`explain node/NAME --inventory` joins the host's own state (the one host probe, over SSH) to
    what the cluster shows: the host the host phase skipped has no working driver, and the fix is
    the host phase for that host."""
    prepared, skipped = cluster.nodes
    explained = _explain_node(cluster, skipped.name)
    assert [match["id"] for match in explained["matches"]] == ["host.driver-not-working"], explained
    fix = explained["matches"][0]["fix"]
    assert f"gpuctl bootstrap --phase host -i {cluster.inventory} --limit {skipped.name}" in fix
    assert f"host {skipped.name} probe" in [item["source"] for item in explained["evidence"]]

    working = _explain_node(cluster, prepared.name)
    source = f"host {prepared.name} probe"
    host_lines = [item["text"] for item in working["evidence"] if item["source"] == source]
    assert host_lines, working
    assert host_lines[0].startswith("driver working"), working


def _explain_node(cluster: OperatorCluster, node: str) -> dict[str, Any]:
    result = gpuctl(
        "explain", f"node/{node}", "--inventory", str(cluster.inventory),
        "--kubeconfig", str(cluster.kubeconfig), "-o", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    explained: dict[str, Any] = json.loads(result.stdout)
    return explained


def test_the_host_phase_on_it_and_a_rerun_pass(cluster: OperatorCluster) -> None:
    _, skipped = cluster.nodes
    code, report, stderr = bootstrap(cluster, "--phase", "host", "--limit", skipped.name)
    assert code == 0, stderr[-2000:]
    code, report, stderr = bootstrap(cluster, "--phase", "cluster")
    assert code == 0, json.dumps(report, indent=2)[:4000] + stderr[-2000:]
    assert report["cluster"]["helm"]["action"] == "unchanged"
    assert [(n["operator_validator"], n["allocatable"]) for n in report["cluster"]["nodes"]] == [
        ("ready", GPUS),
        ("ready", GPUS),
    ]
