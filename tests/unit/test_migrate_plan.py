"""What a migration's plan says of the GPU sharing the old stack had (gpuctl.core.migrate.plan),
and a node's outcome from its steps (gpuctl.core.migrate.model)."""

from __future__ import annotations

from gpuctl.core.migrate.model import MIGRATION_STEPS, NodeMigration
from gpuctl.core.migrate.plan import sharing_notes
from gpuctl.core.stacks import Stack
from gpuctl.core.upgrade.model import NodePlan, StepResult
from gpuctl.kube.nodes import NodeInfo, node_from_json


def _node(name: str, labels: dict[str, str]) -> NodeInfo:
    resources = {"nvidia.com/gpu": "4"}
    return node_from_json(
        {
            "metadata": {"name": name, "labels": labels},
            "status": {"capacity": resources, "allocatable": resources},
        }
    )


def test_whole_gpus_are_carried_and_nothing_is_left_behind() -> None:
    carried, not_carried = sharing_notes([_node("gpu-0", {})], Stack.DEVICE_PLUGIN)
    assert carried == (
        "nvidia.com/gpu requests: served by DeviceClass gpu.nvidia.com (extendedResourceName "
        "nvidia.com/gpu), one whole GPU each",
    )
    assert not_carried == ()


def test_time_slicing_mps_and_mig_strategies_are_named_as_not_carried() -> None:
    nodes = [
        _node("ts", {"nvidia.com/gpu.sharing-strategy": "time-slicing", "nvidia.com/gpu.replicas": "4"}),
        _node("mps", {"nvidia.com/gpu.sharing-strategy": "mps", "nvidia.com/gpu.replicas": "2"}),
        _node("mig", {"nvidia.com/mig.strategy": "mixed"}),
    ]
    carried, not_carried = sharing_notes(nodes, Stack.DEVICE_PLUGIN)
    assert carried[1] == "MIG devices: published by the DRA driver as DeviceClass mig.nvidia.com devices"
    assert [note.split(":")[0] for note in not_carried] == [
        "time-slicing (4 replicas per GPU)",
        "MPS",
        "MIG strategy mixed",
    ]


def test_back_to_the_device_plugin_its_flags_decide_the_sharing() -> None:
    carried, not_carried = sharing_notes([_node("gpu-0", {})], Stack.DRA)
    assert carried == ("the device plugin is rendered with this command's --sharing and --mig-strategy",)
    assert not_carried == ()


def test_a_node_is_migrated_only_once_every_step_passed() -> None:
    plan = NodePlan("gpu-0", "gpu-0", 1, (), (), (), False, 4)
    ok = tuple(StepResult(step, "ok", 0.1, "") for step in MIGRATION_STEPS)
    assert NodeMigration(plan, ok).outcome == "migrated"
    assert NodeMigration(plan, ok[:3]).outcome == "pending"
    assert NodeMigration(plan, (*ok[:3], StepResult("serve", "failed", 5.0, "no slice"))).outcome == "failed"
    assert (
        NodeMigration(plan, (StepResult("cordon", "interrupted", 0.0, "stopped"),)).outcome == "interrupted"
    )
