"""What the gate writes for a verdict, against the sim's API server (started in-process, a fraction
of a second): the node gate's taint and proven-level annotation (gpuctl.core.gate), the GPUProven
condition (gpuctl.core.node_condition), the per-GPU DeviceTaintRules of DRA nodes
(gpuctl.core.stacks.dra.device_gate) and the three together (gpuctl.core.proof.gate). The functions are
called directly with the verdicts verify would hand them; each test reads the nodes back."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from gpuctl.core.gate import apply_gate, gate_level, gate_new_nodes, gate_taint, proven_annotation
from gpuctl.core.node_condition import Verdict, publish_conditions
from gpuctl.core.proof.gate import GateOptions, gate_verified
from gpuctl.core.proof.verdict import judge
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.dra.device_gate import apply_device_gate
from gpuctl.core.stacks.registry import ALLOCATIONS
from gpuctl.core.verify.model import Check, CudaGpu, GpuCounts, NodeResult, VerifyResult, failed, passed
from gpuctl.defaults import GATE_TAINT_KEY
from gpuctl.errors import UnreachableError
from gpuctl.kube.nodes import Taint
from tests.conftest import SimCluster
from tests.polling import wait_until

Sim = Callable[..., SimCluster]


def nodes_of(cluster: SimCluster) -> dict[str, dict[str, Any]]:
    from kubernetes.client import CoreV1Api

    api = cluster.api_client()
    items = [api.sanitize_for_serialization(item) for item in CoreV1Api(api).list_node().items]
    return {str(item["metadata"]["name"]): item for item in items}


def gate_taints(node: dict[str, Any]) -> list[str]:
    return [
        f"{taint['key']}={taint.get('value', '')}:{taint['effect']}"
        for taint in node["spec"].get("taints") or []
        if taint["key"] in ("gpuctl.io/unproven", "readiness.k8s.io/gpu-proven")
    ]


def proven_level(node: dict[str, Any]) -> str | None:
    value = (node["metadata"].get("annotations") or {}).get("gpuctl.io/proven-level")
    return None if value is None else str(value).split(" ", 1)[0]


def condition(node: dict[str, Any]) -> dict[str, Any] | None:
    found = [c for c in node["status"].get("conditions") or [] if c["type"] == "GPUProven"]
    return found[0] if found else None


def two_gpu_nodes(sim: Sim, **scenario: Any) -> SimCluster:
    return sim({"nodes": [{"name": "gpu-0", "gpus": 4}, {"name": "gpu-1", "gpus": 4}], **scenario})


def test_the_gate_taints_the_failed_and_annotates_the_proven(sim: Sim) -> None:
    cluster = two_gpu_nodes(sim)
    api = cluster.api_client()
    first = apply_gate(api, verdicts={"gpu-0": True, "gpu-1": False, "gone": False}, level="cuda")
    assert (first.gated, first.ungated, first.unchanged, first.failed) == (("gpu-1",), (), ("gpu-0",), ())
    assert first.level == "cuda"
    assert not first.dry_run
    assert first.writes == 2
    assert first.ok
    assert first.refusal() is None
    assert (first.refused, first.refused_hint) == ("", "")
    nodes = nodes_of(cluster)
    assert gate_taints(nodes["gpu-1"]) == ["gpuctl.io/unproven=cuda:NoSchedule"]
    assert gate_taints(nodes["gpu-0"]) == []
    assert proven_level(nodes["gpu-0"]) == "cuda"
    assert proven_level(nodes["gpu-1"]) is None

    again = apply_gate(api, verdicts={"gpu-0": True, "gpu-1": False}, level="cuda")
    assert (again.gated, again.ungated, again.unchanged, again.writes) == ((), (), ("gpu-0", "gpu-1"), 0)

    deeper = apply_gate(api, verdicts={"gpu-0": False, "gpu-1": False}, level="nccl")
    assert (deeper.gated, deeper.unchanged) == (("gpu-0", "gpu-1"), ())  # a new level is a new gate
    nodes = nodes_of(cluster)
    assert gate_taints(nodes["gpu-1"]) == ["gpuctl.io/unproven=nccl:NoSchedule"]
    assert proven_level(nodes["gpu-0"]) is None  # a failed node loses its proof

    recovered = apply_gate(api, verdicts={"gpu-1": True}, level="nccl")
    assert (recovered.gated, recovered.ungated, recovered.unchanged) == ((), ("gpu-1",), ())
    nodes = nodes_of(cluster)
    assert gate_taints(nodes["gpu-1"]) == []
    assert proven_level(nodes["gpu-1"]) == "nccl"
    assert gate_taints(nodes["gpu-0"]) == ["gpuctl.io/unproven=nccl:NoSchedule"]


def test_a_dry_run_writes_nothing(sim: Sim) -> None:
    cluster = two_gpu_nodes(sim)
    dry = apply_gate(cluster.api_client(), verdicts={"gpu-1": False}, level="cuda", dry_run=True)
    assert dry.dry_run
    assert dry.gated == ("gpu-1",)
    assert gate_taints(nodes_of(cluster)["gpu-1"]) == []


def test_the_gate_with_its_own_taint_key(sim: Sim) -> None:
    cluster = two_gpu_nodes(sim)
    key = "readiness.k8s.io/gpu-proven"
    result = apply_gate(
        cluster.api_client(), verdicts={"gpu-0": False, "gpu-1": True}, level="cuda", taint_key=key
    )
    assert result.gated == ("gpu-0",)
    assert gate_taints(nodes_of(cluster)["gpu-0"]) == [f"{key}=cuda:NoSchedule"]
    lifted = apply_gate(cluster.api_client(), verdicts={"gpu-0": True}, level="cuda", taint_key=key)
    assert lifted.ungated == ("gpu-0",)
    assert gate_taints(nodes_of(cluster)["gpu-0"]) == []


def test_new_nodes_are_gated_once_and_a_proven_one_is_left(sim: Sim) -> None:
    cluster = two_gpu_nodes(sim)
    api = cluster.api_client()
    apply_gate(api, verdicts={"gpu-0": True}, level="cuda")
    result = gate_new_nodes(api, nodes=["gpu-0", "gpu-1", "gone"], level="nvidia-smi")
    assert (result.gated, result.unchanged, result.level) == (("gpu-1",), ("gpu-0",), "nvidia-smi")
    nodes = nodes_of(cluster)
    assert gate_taints(nodes["gpu-1"]) == ["gpuctl.io/unproven=nvidia-smi:NoSchedule"]
    assert gate_taints(nodes["gpu-0"]) == []
    again = gate_new_nodes(api, nodes=["gpu-1"], level="cuda")  # gated already: left at its level
    assert (again.gated, again.unchanged, again.writes) == ((), ("gpu-1",), 0)


def test_the_condition_is_published_and_kept_when_a_node_is_not_judged(sim: Sim) -> None:
    cluster = two_gpu_nodes(sim)
    api = cluster.api_client()
    verdicts = {
        "gpu-0": Verdict("True", "cuda", "proven at level cuda by gpuctl verify"),
        "gpu-1": Verdict("False", "cuda.workload", "cuda.workload: GPU 2 failed"),
        "gone": Verdict("False", "node.exists", "expected node gone is not in the cluster"),
    }
    result = publish_conditions(api, verdicts=verdicts)
    assert result.condition_type == "GPUProven"
    assert result.published == (("gpu-0", "True", "cuda"), ("gpu-1", "False", "cuda.workload"))
    assert result.refusal() is None
    assert (result.refused, result.refused_hint) == ("", "")
    nodes = nodes_of(cluster)
    proven, failing = condition(nodes["gpu-0"]), condition(nodes["gpu-1"])
    assert proven is not None
    assert failing is not None
    assert (proven["status"], proven["reason"], proven["message"]) == (
        "True",
        "cuda",
        "proven at level cuda by gpuctl verify",
    )
    assert (failing["status"], failing["reason"]) == ("False", "cuda.workload")
    busy = Verdict("Unknown", "NotJudgedBusy", "not judged: its workloads hold every GPU", judged=False)
    kept = publish_conditions(api, verdicts={"gpu-0": busy}, condition_type="GPUProven")
    assert kept.published == (("gpu-0", "True", "NotJudgedBusy"),)
    after = condition(nodes_of(cluster)["gpu-0"])
    assert after is not None
    assert after["status"] == "True"
    assert after["message"].startswith("not judged: its workloads hold every GPU; status kept from ")
    assert after["lastTransitionTime"] == proven["lastTransitionTime"]


def test_a_condition_of_another_type(sim: Sim) -> None:
    cluster = two_gpu_nodes(sim)
    result = publish_conditions(
        cluster.api_client(),
        verdicts={"gpu-0": Verdict("True", "cuda", "ok")},
        condition_type="example.com/GPUOk",
    )
    assert result.condition_type == "example.com/GPUOk"
    assert result.published == (("gpu-0", "True", "cuda"),)
    types = [c["type"] for c in nodes_of(cluster)["gpu-0"]["status"]["conditions"]]
    assert "example.com/GPUOk" in types
    assert "GPUProven" not in types


def dra_sim(sim: Sim) -> SimCluster:
    return two_gpu_nodes(sim, kubernetesVersion="v1.37.0", gpuAllocation="dra")


def dra_node(name: str, cuda: tuple[CudaGpu, ...] | None, *checks: Check, busy: bool = False) -> NodeResult:
    return NodeResult(name, GpuCounts(4, 4, 4, 4), checks, gpu_allocation=Stack.DRA, cuda=cuda, busy=busy)


def gate_rules(cluster: SimCluster) -> dict[str, dict[str, Any]]:
    from kubernetes.client import ResourceV1Api

    api = cluster.api_client()
    rules = ResourceV1Api(api).list_device_taint_rule(label_selector="gpuctl.io/gate=device").items
    items = [api.sanitize_for_serialization(rule) for rule in rules]
    return {str(item["metadata"]["name"]): item for item in items}


def one_bad(bad: int) -> tuple[CudaGpu, ...]:
    return tuple(
        CudaGpu(index, index != bad, None if index != bad else "uncorrectable ECC") for index in range(4)
    )


def test_one_failed_gpu_gets_a_rule_and_loses_it_once_proven(sim: Sim) -> None:
    cluster = dra_sim(sim)
    api = cluster.api_client()
    cuda_failed = failed("cuda.workload", "GPU 2 failed")
    result = apply_device_gate(api, nodes=[dra_node("gpu-0", one_bad(2), cuda_failed)], level="cuda")
    assert result.gated == ("gpu-0/gpu-2",)
    assert result.lifted == ()
    assert result.confined == ("gpu-0",)
    devices = result.of("gpu-0")
    assert [(d.index, d.device, d.ok, d.gated, d.rule) for d in devices] == [
        (0, "gpu-0", True, False, ""),
        (1, "gpu-1", True, False, ""),
        (2, "gpu-2", False, True, "gpuctl-unproven-gpu-0-gpu-2"),
        (3, "gpu-3", True, False, ""),
    ]
    assert {d.pool for d in devices} == {"gpu-0"}
    assert {d.driver for d in devices} == {"gpu.nvidia.com"}
    assert all(d.uuid.startswith("GPU-") for d in devices)
    assert result.of("gpu-1") == ()
    rules = gate_rules(cluster)
    assert list(rules) == ["gpuctl-unproven-gpu-0-gpu-2"]
    rule = rules["gpuctl-unproven-gpu-0-gpu-2"]
    assert rule["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "gpuctl",
        "gpuctl.io/gate": "device",
        "gpuctl.io/gated-node": "gpu-0",
    }
    assert rule["spec"]["deviceSelector"] == {"driver": "gpu.nvidia.com", "pool": "gpu-0", "device": "gpu-2"}
    assert rule["spec"]["taint"]["key"] == "gpuctl.io/unproven"
    assert rule["spec"]["taint"]["value"] == "cuda"
    assert rule["spec"]["taint"]["effect"] == "NoSchedule"

    still = apply_device_gate(api, nodes=[dra_node("gpu-0", one_bad(2), cuda_failed)], level="cuda")
    assert still.gated == ()  # the rule is there already
    assert [d.gated for d in still.of("gpu-0")] == [False, False, True, False]

    # A failure of the whole node proves nothing GPU by GPU: the rule stays.
    node_failed = dra_node("gpu-0", one_bad(2), cuda_failed, failed("node.ready", "NotReady"))
    whole = apply_device_gate(api, nodes=[node_failed], level="cuda")
    assert (whole.gated, whole.lifted, whole.confined) == ((), (), ())
    assert [d.rule for d in whole.of("gpu-0")] == ["", "", "gpuctl-unproven-gpu-0-gpu-2", ""]
    assert list(gate_rules(cluster)) == ["gpuctl-unproven-gpu-0-gpu-2"]

    # Busy: not judged, no pod ran; the rule stays.
    busy = apply_device_gate(api, nodes=[dra_node("gpu-0", one_bad(9), busy=True)], level="cuda")
    assert busy.lifted == ()

    proven = apply_device_gate(
        api, nodes=[dra_node("gpu-0", one_bad(9), passed("cuda.workload", "4 GPU(s) passed"))], level="cuda"
    )
    assert proven.lifted == ("gpu-0/gpu-2",)
    assert proven.gated == ()
    assert [(d.ok, d.gated) for d in proven.of("gpu-0")] == [(True, False)] * 4
    assert gate_rules(cluster) == {}


def test_every_gpu_failed_is_the_node_s_failure(sim: Sim) -> None:
    cluster = dra_sim(sim)
    every = tuple(CudaGpu(index, False, "error") for index in range(4))
    result = apply_device_gate(
        cluster.api_client(),
        nodes=[dra_node("gpu-1", every, failed("cuda.workload", "every GPU failed"))],
        level="cuda",
    )
    assert (result.gated, result.confined) == ((), ())
    assert [d.ok for d in result.of("gpu-1")] == [False] * 4
    assert gate_rules(cluster) == {}


def test_device_plugin_nodes_and_older_clusters_get_no_device_rules(sim: Sim) -> None:
    cluster = two_gpu_nodes(sim)
    plugin_node = NodeResult(
        "gpu-0", GpuCounts(4, 4, 4, 4), (failed("cuda.workload", "GPU 2"),), cuda=one_bad(2)
    )
    # The device plugin's allocation cannot keep one GPU from pods: it gates nothing.
    plugin = ALLOCATIONS[Stack.DEVICE_PLUGIN]
    assert plugin.apply_device_gate(cluster.api_client(), [plugin_node], "cuda", GATE_TAINT_KEY).devices == ()
    dra = dra_sim(sim)
    ecc = dra_node("gpu-1", one_bad(2), failed("cuda.workload", "GPU 2"))
    busy = dra_node("gpu-0", one_bad(2), failed("cuda.workload", "GPU 2"), busy=True)
    mixed = apply_device_gate(dra.api_client(), nodes=[busy, ecc], level="cuda")
    assert [node for node, _ in mixed.devices] == ["gpu-1"]  # the node judged, not the busy one
    assert mixed.gated == ("gpu-1/gpu-2",)
    older = two_gpu_nodes(sim, kubernetesVersion="v1.34.0", gpuAllocation="dra")
    node = dra_node("gpu-0", one_bad(2), failed("cuda.workload", "GPU 2"))
    result = apply_device_gate(older.api_client(), nodes=[node], level="cuda")
    assert result.devices == ()
    assert result.gated == ()


def verify_result(*nodes: NodeResult) -> VerifyResult:
    return VerifyResult(nodes=nodes, cluster_checks=(), run_id="run-1", namespace="gpuctl-system")


def test_the_gate_after_a_run_writes_taint_condition_and_device_rules(sim: Sim) -> None:
    cluster = dra_sim(sim)
    ecc = dra_node("gpu-0", one_bad(2), failed("cuda.workload", "GPU 2 failed"))
    broken = dra_node("gpu-1", None, failed("node.ready", "NotReady (KubeletNotReady)"))
    outside = dra_node("gpu-9", None)
    result = verify_result(ecc, broken, outside)
    verdicts = {node.name: judge(node) for node in (ecc, broken)}
    gated = gate_verified(cluster.api_client(), result, GateOptions(), "cuda", verdicts)
    gate = gated.gate
    assert gate is not None
    assert gate.gated == ("gpu-1",)  # gpu-0's failure is confined to GPU 2: the node stays open
    assert gate.unchanged == ("gpu-0",)
    assert gate.devices_gated == ("gpu-0/gpu-2",)
    assert gate.devices_lifted == ()
    assert (gate.taint_key, gate.mode, gate.condition_type) == ("gpuctl.io/unproven", "taint", "GPUProven")
    assert gate.conditions == (("gpu-0", "False", "cuda.workload"), ("gpu-1", "False", "node.ready"))
    assert (gate.refused, gate.refused_hint) == ("", "")
    assert [d.gated for d in gated.nodes[0].gpu_devices] == [False, False, True, False]
    assert [(d.ok, d.gated) for d in gated.nodes[1].gpu_devices] == [(None, False)] * 4  # no pod ran
    assert gated.nodes[2] is outside
    nodes = nodes_of(cluster)
    assert gate_taints(nodes["gpu-1"]) == ["gpuctl.io/unproven=cuda:NoSchedule"]
    assert gate_taints(nodes["gpu-0"]) == []


def test_the_gate_in_condition_mode_writes_no_taint(sim: Sim) -> None:
    cluster = two_gpu_nodes(sim)
    bad = NodeResult("gpu-1", GpuCounts(4, 4, 4, 4), (failed("gpu.capacity", "capacity 3"),))
    busy = NodeResult("gpu-0", GpuCounts(4, 4, 4, 4, in_use=4), (passed("gpu.capacity", "ok"),), busy=True)
    verdicts = {"gpu-1": judge(bad), "gpu-0": judge(busy)}
    options = GateOptions(mode="condition", condition_type="GPUProven")
    gated = gate_verified(cluster.api_client(), verify_result(busy, bad), options, "cuda", verdicts)
    gate = gated.gate
    assert gate is not None
    assert gate.mode == "condition"
    assert (gate.gated, gate.ungated, gate.unchanged) == ((), (), ("gpu-1",))  # the busy node is not judged
    assert gate.conditions == (("gpu-0", "Unknown", "NotJudgedBusy"), ("gpu-1", "False", "gpu.capacity"))
    nodes = nodes_of(cluster)
    assert gate_taints(nodes["gpu-1"]) == []


RBAC_HINT = (
    "ask your cluster admin for gpuctl's least-privilege roles (`gpuctl render --rbac` prints them), "
    "or pick another --context"
)


def test_a_refused_gate_write_fails_the_node_or_raises(sim: Sim) -> None:
    cluster = two_gpu_nodes(sim, forbidden=["patch nodes"])
    api = cluster.api_client()
    kept = apply_gate(api, verdicts={"gpu-0": True, "gpu-1": False}, level="cuda", keep_refusal=True)
    assert (kept.gated, kept.ungated, kept.unchanged, kept.failed) == ((), (), (), ("gpu-0", "gpu-1"))
    assert not kept.ok
    assert kept.refused.startswith("not authorised: patch node gpu-")
    assert 'cannot patch resource "nodes"' in kept.refused
    assert kept.refused_hint == RBAC_HINT
    refusal = kept.refusal()
    assert refusal is not None
    assert (refusal.message, refusal.hint) == (kept.refused, RBAC_HINT)
    with pytest.raises(UnreachableError) as raised:
        apply_gate(api, verdicts={"gpu-1": False}, level="cuda")
    assert raised.value.message.startswith("not authorised: patch node gpu-1: 403 Forbidden")
    assert gate_taints(nodes_of(cluster)["gpu-1"]) == []


def test_a_refused_condition_write_is_kept_or_raised(sim: Sim) -> None:
    cluster = two_gpu_nodes(sim, forbidden=["patch nodes/status"])
    api = cluster.api_client()
    verdicts = {"gpu-0": Verdict("True", "cuda", "ok")}
    kept = publish_conditions(api, verdicts=verdicts, keep_refusal=True)
    assert kept.published == ()
    assert kept.refused.startswith("not authorised: patch node gpu-0 status: 403 Forbidden")
    assert kept.refused_hint == RBAC_HINT
    refusal = kept.refusal()
    assert refusal is not None
    assert (refusal.message, refusal.hint) == (kept.refused, RBAC_HINT)
    with pytest.raises(UnreachableError) as raised:
        publish_conditions(api, verdicts=verdicts)
    assert raised.value.message == kept.refused
    assert publish_conditions(api, verdicts={}).refusal() is None


def test_a_refused_device_rule_is_kept_and_the_node_gate_still_written(sim: Sim) -> None:
    cluster = two_gpu_nodes(
        sim, kubernetesVersion="v1.37.0", gpuAllocation="dra", forbidden=["create devicetaintrules"]
    )
    ecc = dra_node("gpu-0", one_bad(2), failed("cuda.workload", "GPU 2 failed"))
    broken = dra_node("gpu-1", None, failed("node.ready", "NotReady"))
    verdicts = {node.name: judge(node) for node in (ecc, broken)}
    gated = gate_verified(cluster.api_client(), verify_result(ecc, broken), GateOptions(), "cuda", verdicts)
    gate = gated.gate
    assert gate is not None
    assert gate.refused.startswith("not authorised: create")
    assert "devicetaintrules" in gate.refused
    assert gate.refused_hint == RBAC_HINT
    assert gate.devices_gated == ()
    # Without the device rule, gpu-0's failure is no longer confined: the node gate takes it.
    assert gate.gated == ("gpu-0", "gpu-1")
    assert gate.conditions == (("gpu-0", "False", "cuda.workload"), ("gpu-1", "False", "node.ready"))
    assert gated.nodes[0].gpu_devices == ()


def test_the_proven_annotation_and_the_gate_level_read_back() -> None:
    when = datetime(2026, 3, 1, 12, 30, 5, tzinfo=timezone(timedelta(hours=2)))
    assert proven_annotation("cuda", when) == "cuda 2026-03-01T10:30:05Z"
    taints = [
        Taint("gpuctl.io/unproven", "nccl", "PreferNoSchedule"),
        Taint("other", "cuda", "NoSchedule"),
        Taint("gpuctl.io/unproven", "cuda", "NoSchedule"),
    ]
    assert gate_level(taints) == "cuda"
    assert gate_level(taints[:2]) is None
    assert gate_level(taints, key="other") == "cuda"
    assert gate_taint("nccl") == Taint("gpuctl.io/unproven", "nccl", "NoSchedule")
    assert gate_taint("nccl", "readiness.k8s.io/gpu") == Taint("readiness.k8s.io/gpu", "nccl", "NoSchedule")


def test_the_gate_keeps_every_other_taint_and_stamps_the_time(sim: Sim) -> None:
    cluster = sim(
        {
            "nodes": [
                {
                    "name": "gpu-0",
                    "gpus": 4,
                    "taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}],
                }
            ]
        }
    )
    before = datetime.now(tz=UTC).replace(microsecond=0)
    apply_gate(cluster.api_client(), verdicts={"gpu-0": False}, level="cuda")
    node = nodes_of(cluster)["gpu-0"]
    assert [(t["key"], t.get("value"), t["effect"]) for t in node["spec"]["taints"]] == [
        ("dedicated", "ml", "NoSchedule"),
        ("gpuctl.io/unproven", "cuda", "NoSchedule"),
    ]
    apply_gate(cluster.api_client(), verdicts={"gpu-0": True}, level="cuda")
    node = nodes_of(cluster)["gpu-0"]
    assert [(t["key"], t.get("value"), t["effect"]) for t in node["spec"]["taints"]] == [
        ("dedicated", "ml", "NoSchedule")
    ]
    stamp = node["metadata"]["annotations"]["gpuctl.io/proven-level"]
    level, _, written = stamp.partition(" ")
    assert level == "cuda"
    assert before <= datetime.strptime(written, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def test_a_gpu_the_driver_reports_unhealthy_gets_a_rule_and_is_listed_unproven(sim: Sim) -> None:
    cluster = sim(
        {
            "kubernetesVersion": "v1.37.0",
            "gpuAllocation": "dra",
            "nodes": [
                {
                    "name": "gpu-xid",
                    "gpus": 4,
                    "gpuHealth": [{"afterSeconds": 0, "gpu": 3, "fault": "xid", "xid": 79}],
                }
            ],
        }
    )
    api = cluster.api_client()
    short = failed("gpu.allocatable", "allocatable 3 < capacity 4")
    ran = tuple(CudaGpu(index, True) for index in range(3))  # the claim got the 3 claimable GPUs
    node = NodeResult("gpu-xid", GpuCounts(4, 4, 3, 3), (short,), gpu_allocation=Stack.DRA, cuda=ran)
    wait_until(
        lambda: apply_device_gate(api, nodes=[node], level="cuda").confined == ("gpu-xid",), "Xid taint"
    )
    rules = gate_rules(cluster)
    assert list(rules) == ["gpuctl-unproven-gpu-xid-gpu-3"]
    result = apply_device_gate(api, nodes=[node], level="cuda")
    assert [(d.index, d.device, d.pool, d.driver, d.ok, d.gated, d.rule) for d in result.of("gpu-xid")] == [
        (0, "gpu-0", "gpu-xid", "gpu.nvidia.com", True, False, ""),
        (1, "gpu-1", "gpu-xid", "gpu.nvidia.com", True, False, ""),
        (2, "gpu-2", "gpu-xid", "gpu.nvidia.com", True, False, ""),
        (3, "gpu-3", "gpu-xid", "gpu.nvidia.com", None, True, "gpuctl-unproven-gpu-xid-gpu-3"),
    ]
    assert all(d.uuid.startswith("GPU-") for d in result.of("gpu-xid"))
    assert len({d.uuid for d in result.of("gpu-xid")}) == 4
    # A CUDA check that reported fewer GPUs than the claim got proves none of them one by one.
    partial = NodeResult("gpu-xid", GpuCounts(4, 4, 3, 3), (short,), gpu_allocation=Stack.DRA, cuda=ran[:2])
    unproven = apply_device_gate(api, nodes=[partial], level="cuda").of("gpu-xid")
    assert [d.ok for d in unproven] == [None, None, None, None]
