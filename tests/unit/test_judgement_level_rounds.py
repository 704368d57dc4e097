"""The rounds of the deeper levels (gpuctl.core.verify.levels.rounds) through one `gpuctl verify
--level nccl` against a small simulated cluster: a node that fails a level gets every later
level's check as a skip naming the check it failed; a node a level does not apply to passes it
with the reason; a node that passes runs every level, one pod per level; `--level fabric` runs the
multi-node all-reduce over the nodes that passed every level before it."""

from __future__ import annotations

import json
from typing import Any

from gpuctl.core.verify.levels.rounds import not_run
from gpuctl.core.verify.model import ProofOptions, VerifyOptions
from tests.polling import wait_until

HGX = {"gpus": 8, "interconnect": "nvswitch", "gpuProduct": "NVIDIA-H100-80GB-HBM3"}
SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [
        {"name": "hgx-ok", **HGX},
        {"name": "hgx-fm", **HGX, "host": {"fabricManager": "stopped"}},
        {"name": "one-gpu", "gpus": 1},
    ],
}


def checks_of(report: dict[str, Any], name: str) -> dict[str, tuple[str, str]]:
    (node,) = [node for node in report["nodes"] if node["name"] == name]
    return {check["id"]: (check["status"], check["message"]) for check in node["checks"]}


def test_each_level_runs_only_where_the_one_before_passed(cli: Any, sim: Any) -> None:
    cluster = sim(SCENARIO)
    wait_until(lambda: cluster.allocatable_gpus().get("hgx-ok") == 8, "GPUs advertised")
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--level", "nccl"])
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    healthy = checks_of(report, "hgx-ok")
    assert healthy["cuda.workload"][0] == "pass"
    assert healthy["nccl.all-reduce"][0] == "pass"
    broken = checks_of(report, "hgx-fm")
    assert broken["cuda.workload"][0] == "fail"
    assert broken["nccl.all-reduce"] == ("skip", "not run: cuda.workload failed")
    single = checks_of(report, "one-gpu")
    assert single["cuda.workload"][0] == "pass"
    assert single["nccl.all-reduce"] == ("pass", "not applicable: 1 GPU")
    nodes = {node["name"]: node for node in report["nodes"]}
    assert [gpu["ok"] for gpu in nodes["hgx-ok"]["cuda"]] == [True] * 8
    assert [gpu["index"] for gpu in nodes["hgx-ok"]["cuda"]] == list(range(8))
    assert nodes["hgx-fm"]["cuda"][0]["ok"] is False
    assert nodes["one-gpu"]["cuda"] == [{"index": 0, "ok": True, "error": None}]
    assert nodes["hgx-ok"]["nccl"]["gpus"] == 8
    assert nodes["hgx-fm"]["nccl"] is None
    assert cluster.verification_pods() == []


IB_400G = {"fabric": "ib", "nicsPerNode": 8, "linkGbps": 400}
FABRIC_SCENARIO = {
    "podStartSeconds": 0.05,
    "podRunSeconds": 0.05,
    "devicePlugin": "installed",
    "network": IB_400G,
    "nodes": [
        {"name": "hgx-a", **HGX},
        {"name": "hgx-b", **HGX},
        {"name": "hgx-fm", **HGX, "host": {"fabricManager": "stopped"}},
        {"name": "hgx-no-nvls", **HGX, "nvls": False},
    ],
}


def test_the_fabric_round_runs_over_the_nodes_that_passed_every_level(cli: Any, sim: Any) -> None:
    cluster = sim(FABRIC_SCENARIO)
    wait_until(lambda: list(cluster.allocatable_gpus().values()) == [8] * 4, "GPUs advertised")
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--level", "fabric"])
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    for name in ("hgx-a", "hgx-b"):
        checks = checks_of(report, name)
        assert checks["nccl.all-reduce"][0] == "pass"
        status, message = checks["fabric.all-reduce"]
        # the two nodes that passed every level, and only they, ran the multi-node all-reduce
        assert (status, message.split(" all-reduce ")[0]) == ("pass", "2-node")
        assert "expected 384 GB/s (8 x 400G" in message
    assert checks_of(report, "hgx-fm")["fabric.all-reduce"] == ("skip", "not run: cuda.workload failed")
    no_nvls = checks_of(report, "hgx-no-nvls")
    assert no_nvls["nccl.all-reduce"][0] == "fail"
    assert no_nvls["fabric.all-reduce"] == ("skip", "not run: nccl.all-reduce failed")
    # each level's check after the one before it, the fabric's last
    for node in report["nodes"]:
        ids = [check["id"] for check in node["checks"]]
        deeper = [i for i in ids if i in ("cuda.workload", "nccl.all-reduce", "fabric.all-reduce")]
        assert deeper == ["cuda.workload", "nccl.all-reduce", "fabric.all-reduce"], node["name"]


def test_a_node_no_pod_ran_on_gets_every_deeper_check_skipped_with_the_reason() -> None:
    def skips(level: str) -> list[tuple[str, str, str]]:
        evaluations = not_run(VerifyOptions(proof=ProofOptions(level=level)), "--no-pods")
        return [(c.id, c.status.value, c.message) for e in evaluations for c in e.checks]

    assert skips("fabric") == [
        ("cuda.workload", "skip", "--no-pods"),
        ("nccl.all-reduce", "skip", "--no-pods"),
        ("fabric.all-reduce", "skip", "--no-pods"),
    ]
    assert skips("nccl") == [("cuda.workload", "skip", "--no-pods"), ("nccl.all-reduce", "skip", "--no-pods")]
    assert skips("cuda") == [("cuda.workload", "skip", "--no-pods")]
