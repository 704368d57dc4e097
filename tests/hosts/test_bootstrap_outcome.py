"""A host is `ok` in gpuctl.bootstrap/v1 only when it is prepared: its play ran to the recap.

Fed with runner events as ansible-runner emits them; no test nodes needed. The run itself is
cancelled for real in tests/hosts/test_bootstrap.py::test_ctrl_c_cancels_the_run_cleanly.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from gpuctl.core.bootstrap import BootstrapResult, host_outcomes
from gpuctl.hosts.events import ProgressState
from gpuctl.report.bootstrap import host_json as to_json
from gpuctl.report.bootstrap import print_host_table as print_table

HOSTS = ("n0", "n1")


def event(kind: str, **data: Any) -> dict[str, Any]:
    return {"event": kind, "event_data": data}


def passed_two_tasks(*, recap: bool) -> ProgressState:
    state = ProgressState()
    for name in HOSTS:
        state.add_host(name)
        state.apply(event("runner_on_ok", host=name, task="Ping | ping", res={"changed": False}))
        state.apply(event("runner_on_start", host=name, task="Ping | sleep on request"))
    if recap:
        state.apply(event("playbook_on_stats", ok=dict.fromkeys(HOSTS, 2), failures={}, dark={}))
    return state


def result(state: ProgressState, *, interrupted: bool) -> BootstrapResult:
    return BootstrapResult(
        phase="host",
        check=False,
        inventory="hosts.yml",
        playbook="site.yml",
        status="canceled" if interrupted else "successful",
        hosts=host_outcomes(state, set(HOSTS)),
        failed_tasks=(),
        duration_s=3.0,
        interrupted=interrupted,
    )


def table(outcome: BootstrapResult) -> str:
    console = Console(width=120, record=True, force_terminal=False)
    print_table(outcome, console)
    return console.export_text()


def test_cancelled_run_leaves_no_host_ok() -> None:
    cancelled = result(passed_two_tasks(recap=False), interrupted=True)
    report = to_json(cancelled)
    assert report["ok"] is False
    assert [host["ok"] for host in report["hosts"]] == [False, False]
    assert [host["ok_tasks"] for host in report["hosts"]] == [1, 1]  # the counts still show progress
    text = table(cancelled)
    rows = [line.split() for line in text.splitlines() if line.startswith(HOSTS)]
    assert [row[1] for row in rows] == ["CANCELLED", "CANCELLED"]
    assert "0 of 2 host(s) prepared" in text


def test_run_stopped_before_its_recap_leaves_no_host_ok() -> None:
    stopped = result(passed_two_tasks(recap=False), interrupted=False)
    assert [host["ok"] for host in to_json(stopped)["hosts"]] == [False, False]
    assert "INCOMPLETE" in table(stopped)


def test_completed_run_marks_hosts_ok() -> None:
    done = result(passed_two_tasks(recap=True), interrupted=False)
    report = to_json(done)
    assert report["ok"] is True
    assert [host["ok"] for host in report["hosts"]] == [True, True]
    assert "2 of 2 host(s) prepared" in table(done)
