"""The small rules a verdict rests on, each on both sides of its boundary: a node's ok/proven/busy,
what a person reads first, the busy rule of held GPUs, the gate taint's level, which checks halt an
upgrade, a step's status, and which findings of `explain` are causes and which consequences."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from gpuctl.core.explain import CAUSE, CONSEQUENCE, explain, roles
from gpuctl.core.gate import gate_level, gate_taint
from gpuctl.core.proof.verdict import BUSY, CORDON_CHECK, FAILED, PROVEN, fails_node, is_proven, judge
from gpuctl.core.since import since
from gpuctl.core.upgrade.model import NodePlan
from gpuctl.core.upgrade.run import StepFailed, UpgradeContext, run_step
from gpuctl.core.verify.model import (
    IN_USE_CHECK,
    CheckStatus,
    GpuCounts,
    Held,
    NodeResult,
    OperatorView,
    failed,
    passed,
    skipped,
    warned,
)
from gpuctl.cuda_workload import MARKER, NO_RESULT, VectorAddResult, parse_cuda_check, parse_vector_add
from gpuctl.defaults import GATE_TAINT_EFFECT, GATE_TAINT_KEY
from gpuctl.diagnose import Diagnosis
from gpuctl.diagnose.scan import find_all
from gpuctl.errors import ConfigError, GpuctlError
from gpuctl.kube.nodes import Taint

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
COUNTS = GpuCounts(expected=2, capacity=2, allocatable=2, seen=2)


def _node(*checks: Any, busy: bool = False) -> NodeResult:
    return NodeResult("gpu-0", COUNTS, tuple(checks), busy=busy)


def test_one_failed_check_fails_a_node_and_warnings_and_skips_do_not() -> None:
    fine = _node(passed("a", "ok"), warned("b", "meh"), skipped("c", "n/a"))
    assert (fine.ok, is_proven(fine), judge(fine).verdict) == (True, True, PROVEN)
    broken = _node(passed("a", "ok"), failed("b", "bad"))
    assert (broken.ok, is_proven(broken), judge(broken).verdict) == (False, False, FAILED)
    assert [check.id for check in judge(broken).failures] == ["b"]


def test_a_busy_node_passes_unproven() -> None:
    busy = _node(passed("a", "ok"), warned(IN_USE_CHECK, "all held"), busy=True)
    assert (busy.ok, is_proven(busy), judge(busy).verdict, judge(busy).judged) == (True, False, BUSY, False)
    assert (is_proven(_node(failed("a", "bad"), busy=True)), is_proven(_node(passed("a", "ok")))) == (
        False,
        True,
    )


def test_a_node_its_caller_cordoned_and_drained_is_judged_busy_or_not() -> None:
    """The upgrade's verify step: its own cordon passes, GPUs still held after the drain fail."""
    cordoned = _node(passed("a", "ok"), failed(CORDON_CHECK, "cordoned"))
    assert (judge(cordoned).verdict, judge(cordoned, cordoned=True).verdict) == (FAILED, PROVEN)
    held = _node(passed("a", "ok"), warned(IN_USE_CHECK, "all held"), busy=True)
    assert (judge(held).verdict, judge(held, cordoned=True).verdict) == (BUSY, FAILED)
    assert [check.id for check in judge(held, cordoned=True).failures] == [IN_USE_CHECK]


def test_the_first_problem_is_the_first_failure_before_any_warning() -> None:
    node = _node(passed("a", "ok"), warned("b", "meh"), failed("c", "bad"), failed("d", "worse"))
    assert node.first_problem is not None
    assert node.first_problem.id == "c"
    only_warnings = _node(passed("a", "ok"), warned("b", "meh"), warned("e", "also"))
    assert only_warnings.first_problem is not None
    assert only_warnings.first_problem.id == "b"
    assert _node(passed("a", "ok"), skipped("s", "n/a")).first_problem is None


def test_the_check_constructors_give_their_status_and_fields() -> None:
    made = (passed("p", "m"), failed("f", "m", "h", "d"), warned("w", "m", "h", "d"), skipped("s", "m"))
    assert [(c.id, c.status, c.message) for c in made] == [
        ("p", CheckStatus.PASS, "m"),
        ("f", CheckStatus.FAIL, "m"),
        ("w", CheckStatus.WARN, "m"),
        ("s", CheckStatus.SKIP, "m"),
    ]
    assert [(c.hint, c.diagnosis) for c in made[1:3]] == [("h", "d"), ("h", "d")]
    assert [c.failed for c in made] == [False, True, False, False]


@pytest.mark.parametrize(
    ("devices", "free", "busy"),
    [(0, 0, False), (1, 0, True), (1, 1, False), (4, 0, True), (3, 1, False), (2, -1, True)],
)
def test_busy_is_every_gpu_held_and_none_free(devices: int, free: int, busy: bool) -> None:
    assert Held(devices=devices, free=free).busy is busy


def test_the_gate_level_is_the_value_of_the_gate_taint_with_the_gate_effect() -> None:
    taint = gate_taint("cuda")
    assert (taint.key, taint.value, taint.effect) == (GATE_TAINT_KEY, "cuda", GATE_TAINT_EFFECT)
    assert gate_level([Taint("other", "x", GATE_TAINT_EFFECT), taint]) == "cuda"
    assert gate_level([Taint(GATE_TAINT_KEY, "cuda", "PreferNoSchedule")]) is None
    assert gate_level([Taint("other", "cuda", GATE_TAINT_EFFECT)]) is None
    assert gate_level([]) is None
    assert gate_level([gate_taint("smi", "example.com/gate")], "example.com/gate") == "smi"


@pytest.mark.parametrize(
    ("check", "busy", "halts"),
    [
        (failed("nvidia-smi.gpus", "1 GPU(s) seen, 2 requested"), False, True),
        (failed(CORDON_CHECK, "cordoned"), False, False),  # the upgrade cordoned it itself
        (passed("nvidia-smi.gpus", "2 seen"), False, False),
        (warned(IN_USE_CHECK, "all held"), True, True),  # drained, yet held: not proven
        (warned(IN_USE_CHECK, "all held"), False, False),
        (passed(IN_USE_CHECK, "1 held"), False, False),
        (warned("device-plugin.log", "odd line"), True, False),
    ],
)
def test_which_checks_halt_an_upgrade(check: Any, busy: bool, halts: bool) -> None:
    assert fails_node(check, busy=busy, cordoned=True) is halts


PLAN = NodePlan(
    host="host-0",
    node="gpu-0",
    batch=1,
    changes=(),
    evict=(),
    refused=(),
    cordoned_before=False,
    expected_gpus=2,
)


def _context(stop: bool = False) -> tuple[UpgradeContext, list[tuple[str, str, str | None]]]:
    """A context for run_step, which reads only should_stop and on_step (None: not needed)."""
    seen: list[tuple[str, str, str | None]] = []
    context = UpgradeContext(
        api_client=cast(Any, None),
        options=cast(Any, None),
        run_hosts=cast(Any, None),
        stack=cast(Any, None),
        proof=cast(Any, None),
        gate=False,
        timeout_s=1.0,
        should_stop=lambda: stop,
        on_step=lambda node, step, result: seen.append((node, step, result.status if result else None)),
    )
    return context, seen


def _raise(error: Exception) -> Any:
    def action(_: NodePlan) -> str:
        raise error

    return action


def test_a_step_is_ok_failed_or_interrupted() -> None:
    context, seen = _context()
    ok = run_step("drain", PLAN, lambda node: f"drained {node.node}", context)
    assert (ok.step, ok.status, ok.message) == ("drain", "ok", "drained gpu-0")
    assert seen == [("gpu-0", "drain", None), ("gpu-0", "drain", "ok")]
    halted = run_step("verify", PLAN, _raise(StepFailed("nvidia-smi.gpus: 1 seen", "look")), context)
    assert (halted.status, halted.message, halted.hint) == ("failed", "nvidia-smi.gpus: 1 seen", "look")
    error = run_step("cordon", PLAN, _raise(GpuctlError("not authorised", hint="ask")), context)
    assert (error.status, error.message, error.hint) == ("failed", "not authorised", "ask")
    stopping, seen_stopping = _context(stop=True)
    stopped = run_step("host", PLAN, lambda _: "never", stopping)
    assert (stopped.status, seen_stopping) == ("interrupted", [])


def _finding(category: str) -> Diagnosis:
    return Diagnosis("row", "evidence", "cause", "hint", category)


def test_findings_of_the_roots_rank_are_causes_and_higher_ranks_consequences() -> None:
    assert roles([]) == []
    driver = _finding("driver")
    assert roles([driver]) == [CAUSE]
    same = replace(driver, signature_id="other")
    later = _finding("scheduling")
    assert driver.rank < later.rank  # the driver layer explains a pod that cannot be scheduled
    assert roles([driver, same, later]) == [CAUSE, CAUSE, CONSEQUENCE]


def test_a_node_the_operator_does_not_validate_reads_as_absent() -> None:
    view = OperatorView("gpu-operator", (("gpu-0", "ready"), ("gpu-1", "waiting: cuda")), ())
    assert (view.state_of("gpu-0"), view.state_of("gpu-1"), view.state_of("gpu-9")) == (
        "ready",
        "waiting: cuda",
        "absent",
    )


def test_a_vector_add_run_that_printed_nothing_fails_with_no_output() -> None:
    assert parse_vector_add("") == VectorAddResult(passed=False, error="no output")
    assert parse_vector_add("\n   \n") == VectorAddResult(passed=False, error="no output")
    assert parse_vector_add("[Vector addition of 50000 elements]\nSegmentation fault\n\n") == VectorAddResult(
        passed=False, error="Segmentation fault"
    )
    (gpu,) = parse_cuda_check(f"{MARKER} gpu 0 begin\n{MARKER} gpu 0 exit 139\n").gpus
    assert (gpu.passed, gpu.exit_code, gpu.error) == (False, 139, "no output")


def test_explain_reports_each_finding_with_its_cause_fix_line_and_role() -> None:
    text = (
        "Failed to allocate device vector A (error code CUDA driver version is insufficient for CUDA "
        "runtime version)!\n[Vector addition of 50000 elements]\n"
    )
    found = find_all(text)
    assert found
    result = explain(text=text)
    assert [(m.id, m.category, m.cause, m.fix, m.line) for m in result.matches] == [
        (d.signature_id, d.category, d.cause, d.hint, d.evidence) for d in found
    ]
    assert result.matches[0].id == "cuda.driver-too-old"
    assert result.matches[0].role == CAUSE
    assert result.nvidia_smi is None  # no nvidia-smi output in it: no GPU table either


def test_a_warning_or_failure_without_hint_or_diagnosis_has_empty_ones() -> None:
    for check in (warned("w", "m"), failed("f", "m")):
        assert (check.hint, check.diagnosis) == ("", "")


def test_vector_add_results_are_exactly_pass_or_the_named_error() -> None:
    capture = (CORPUS / "workloads" / "vectoradd-pass.txt").read_text(encoding="utf-8")
    assert parse_vector_add(capture) == VectorAddResult(passed=True, error=None)
    failure = "Failed to allocate device vector A (error code no CUDA-capable device is detected)!\n"
    result = parse_vector_add(failure + "[Vector addition of 50000 elements]\n")
    assert (result.passed is False, result.error) == (True, "no CUDA-capable device is detected")
    wrong = parse_vector_add(
        "[Vector addition of 50000 elements]\nResult verification failed at element 7!\n"
    )
    assert (wrong.passed is False, wrong.error) == (True, "Result verification failed at element 7")


def test_each_gpus_result_keeps_its_own_output() -> None:
    capture = (CORPUS / "workloads" / "vectoradd-pass.txt").read_text(encoding="utf-8")
    text = f"{MARKER} gpu 0 begin\n{capture}{MARKER} gpu 0 exit 0\n{MARKER} gpu 1 begin\n[Vector addition"
    finished, cut_off = parse_cuda_check(text).gpus
    assert (finished.passed, finished.output) == (True, capture.rstrip("\n"))
    assert (cut_off.passed, cut_off.error, cut_off.output) == (False, NO_RESULT, "[Vector addition")


def test_explain_shows_an_nvidia_smi_table_only_when_there_is_one() -> None:
    assert explain(text="").nvidia_smi is None  # nothing to read: no table, not an empty one
    table = (CORPUS / "nvidia-smi" / "linux-nvidia-h100-80gb-hbm3-590.48.01.table.txt").read_text(
        encoding="utf-8"
    )
    now = datetime(2026, 1, 2, tzinfo=UTC)
    recent = explain(
        text="2026-01-01T00:00:00Z nvidia-smi\n" + table, since=since("2025-12-01T00:00:00Z", now, UTC)
    )
    assert recent.nvidia_smi is not None
    assert recent.nvidia_smi == explain(text=table).nvidia_smi


def test_explain_since_without_any_time_stamp_says_how_to_get_them() -> None:
    with pytest.raises(ConfigError) as refused:
        explain(text="no stamp here\n", since=since("1h"))
    assert refused.value.hint == (
        "drop --since, or capture with time stamps: `journalctl -o short-iso`, `dmesg -T`, "
        "`kubectl logs POD --timestamps`"
    )
