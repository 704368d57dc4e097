"""What a migration's plan says of the GPU sharing the old stack had (gpuctl.core.migrate.plan, from
what each stack says of itself), and a node's outcome from its steps (gpuctl.core.migrate.model)."""

from __future__ import annotations

import pytest

from gpuctl.core.migrate.model import MIGRATION_STEPS, NodeMigration
from gpuctl.core.migrate.plan import carried_sharing, source_of
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.registry import stack_for
from gpuctl.core.upgrade.model import NodePlan, StepResult
from gpuctl.errors import ConfigError, ExitCode
from gpuctl.kube.nodes import NodeInfo, node_from_json


def _node(name: str, labels: dict[str, str], advertised: int = 4) -> NodeInfo:
    resources = {"nvidia.com/gpu": str(advertised)}
    return node_from_json(
        {
            "metadata": {"name": name, "labels": labels},
            "status": {"capacity": resources, "allocatable": resources},
        }
    )


def test_whole_gpus_are_carried_and_nothing_is_left_behind() -> None:
    sharing = carried_sharing([_node("gpu-0", {})], Stack.DEVICE_PLUGIN, Stack.DRA, {"gpu-0": 4})
    assert sharing.carried == (
        "nvidia.com/gpu requests: served by DeviceClass gpu.nvidia.com (extendedResourceName "
        "nvidia.com/gpu), one whole GPU each",
    )
    assert sharing.not_carried == ()
    assert sharing.feature_gates == ()


def test_time_slicing_and_mps_turn_their_gates_on_and_name_the_replicas_dra_cannot_count() -> None:
    nodes = [
        _node("ts", {"nvidia.com/gpu.sharing-strategy": "time-slicing", "nvidia.com/gpu.replicas": "4"}, 16),
        _node("mps", {"nvidia.com/gpu.sharing-strategy": "mps", "nvidia.com/gpu.replicas": "2"}, 8),
        _node("mig", {"nvidia.com/mig.strategy": "mixed"}),
    ]
    sharing = carried_sharing(nodes, Stack.DEVICE_PLUGIN, Stack.DRA, {"ts": 4, "mps": 4, "mig": 4})
    assert sharing.feature_gates == ("TimeSlicingSettings", "MPSSupport")
    assert [note.split(":")[0] for note in sharing.carried] == [
        "nvidia.com/gpu requests",
        "time-slicing",
        "MPS",
        "MIG devices",
    ]
    assert "sharing.strategy TimeSlicing" in sharing.carried[1]
    assert "sharing.strategy MPS" in sharing.carried[2]
    assert [note.split(":")[0] for note in sharing.not_carried] == [
        "time-slicing replicas (4 per GPU)",
        "MPS replicas (2 per GPU) and their per-replica share of threads and memory",
        "MIG strategy mixed",
    ]
    assert sharing.not_carried[0].endswith("(nvidia.com/gpu per node: ts 16 -> 4)")
    assert sharing.not_carried[1].endswith("(nvidia.com/gpu per node: mps 8 -> 4)")


def test_back_to_the_device_plugin_its_flags_decide_the_sharing() -> None:
    sharing = carried_sharing([_node("gpu-0", {})], Stack.DRA, Stack.DEVICE_PLUGIN, {"gpu-0": 4})
    assert sharing.carried == (
        "the device plugin is rendered with this command's --sharing and --mig-strategy",
    )
    assert sharing.not_carried == ()
    assert sharing.feature_gates == ()


def test_a_node_is_migrated_only_once_every_step_passed() -> None:
    plan = NodePlan("gpu-0", "gpu-0", 1, (), (), (), False, 4)
    ok = tuple(StepResult(step, "ok", 0.1, "") for step in MIGRATION_STEPS)
    assert NodeMigration(plan, ok).outcome == "migrated"
    assert NodeMigration(plan, ok[:3]).outcome == "pending"
    assert NodeMigration(plan, (*ok[:3], StepResult("serve", "failed", 5.0, "no slice"))).outcome == "failed"
    assert (
        NodeMigration(plan, (StepResult("cordon", "interrupted", 0.0, "stopped"),)).outcome == "interrupted"
    )


def test_a_cluster_policy_makes_the_operator_the_old_stack_of_a_move_to_dra() -> None:
    assert source_of(Stack.DRA, {Stack.OPERATOR: "ClusterPolicy"}) is Stack.OPERATOR
    assert source_of(Stack.DRA) is Stack.DEVICE_PLUGIN
    assert source_of(Stack.DEVICE_PLUGIN) is Stack.DRA
    assert stack_for(Stack.OPERATOR).leave_labels() == {"nvidia.com/gpu.deploy.device-plugin": "false"}
    assert stack_for(Stack.DEVICE_PLUGIN).leave_labels() == {}
    _refuse_operator("", Stack.DEVICE_PLUGIN)  # no Operator: nothing to refuse
    _refuse_operator("ClusterPolicy", Stack.DRA)


def _refuse_operator(mode: str, target: Stack) -> None:
    """The Operator's refusal, running in `mode`, of a move to `target`, as the plan asks it."""
    modes = {Stack.OPERATOR: mode}
    stack_for(Stack.OPERATOR).refuse_migration(mode, source_of(target, modes), target)


def test_the_operators_modes_that_cannot_move_are_refused_with_what_to_do() -> None:
    for mode, target, starts, hint in (
        ("GPUCluster", Stack.DRA, "the GPU Operator (GPUCluster) serves", "leave the GPUCluster"),
        ("both", Stack.DRA, "the GPU Operator (both) serves", "leave the GPUCluster"),
        (
            "ClusterPolicy",
            Stack.DEVICE_PLUGIN,
            "the GPU Operator (ClusterPolicy) is installed",
            "devicePlugin",
        ),
    ):
        with pytest.raises(ConfigError) as refused:
            _refuse_operator(mode, target)
        assert refused.value.exit_code == ExitCode.USAGE
        assert str(refused.value).startswith(starts)
        assert hint in refused.value.hint
