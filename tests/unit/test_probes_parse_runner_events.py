"""ansible-runner events → per-host progress and failing tasks (event shapes as ansible-runner 2.4 emits)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuctl.hosts.events import ProgressState, failure_message
from gpuctl.hosts.runner import RunRequest, command_line, control_path_dir, runner_envvars


def event(kind: str, **data: Any) -> dict[str, Any]:
    return {"event": kind, "event_data": data, "stdout": data.pop("stdout", "")}


def test_counts_current_task_and_failures() -> None:
    state = ProgressState()
    state.add_host("n0")
    state.add_host("n1")
    for item in (
        event("playbook_on_play_start", play="Driver | install"),
        event("runner_on_start", host="n0", task="Driver | install packages"),
        event("runner_on_ok", host="n0", task="Driver | install packages", res={"changed": True}),
        event("runner_on_ok", host="n1", task="Driver | install packages", res={"changed": False}),
        event("runner_on_skipped", host="n1", task="Driver | blacklist nouveau"),
        event("runner_on_start", host="n1", task="Toolkit | install"),
        event(
            "runner_on_failed",
            host="n1",
            task="Toolkit | install",
            res={"msg": "No package matching 'nvidia-container-toolkit=9.9.9-1' is available"},
            resolved_action="ansible.builtin.apt",
        ),
        event("runner_on_failed", host="n0", task="Ignored", ignore_errors=True, res={"msg": "x"}),
    ):
        state.apply(item)
    play, (n0, n1) = state.snapshot()
    assert play == "Driver | install"
    assert (n0.ok, n0.changed, n0.failed, n0.current_task) == (1, 1, 0, "Driver | install packages")
    assert (n1.ok, n1.changed, n1.skipped, n1.failed) == (1, 0, 1, 1)
    (failed,) = state.failed_tasks
    assert (failed.host, failed.task, failed.action) == ("n1", "Toolkit | install", "ansible.builtin.apt")
    assert "9.9.9-1" in failed.message


def test_stats_event_is_authoritative_and_unreachable_is_reported() -> None:
    state = ProgressState()
    state.apply(event("runner_on_unreachable", host="dead", task="Gathering Facts", res={"msg": "timed out"}))
    state.apply(
        event(
            "playbook_on_stats",
            ok={"n0": 12},
            changed={"n0": 5},
            dark={"dead": 1},
            failures={},
            skipped={"n0": 3},
        )
    )
    _, hosts = state.snapshot()
    by_name = {host.name: host for host in hosts}
    assert (by_name["n0"].ok, by_name["n0"].changed, by_name["n0"].skipped, by_name["n0"].done) == (
        12,
        5,
        3,
        True,
    )
    assert by_name["dead"].unreachable == 1
    assert state.final_stats_seen
    assert state.failed_tasks[0].unreachable


def test_stdout_tail_is_kept_for_errors_before_any_task() -> None:
    state = ProgressState()
    state.apply({"event": "error", "stdout": "ERROR! the role 'nvidia_driver' was not found\n\nmore"})
    assert list(state.tail) == ["ERROR! the role 'nvidia_driver' was not found", "more"]


def test_failure_message_picks_the_telling_line() -> None:
    assert failure_message({"msg": "first\nsecond"}) == "first second"
    command = {"msg": "non-zero return code", "stderr": "line1\nE: Unable to locate package foo\n", "rc": 100}
    assert failure_message(command) == "non-zero return code: line1 | E: Unable to locate package foo"
    loop = {
        "msg": "One or more items failed",
        "results": [{"failed": False}, {"failed": True, "msg": "item 2 broke"}],
    }
    assert failure_message(loop) == "item 2 broke"
    assert failure_message({}) == "task failed without a message"
    assert len(failure_message({"msg": "x" * 1000})) == 400


def test_command_line_and_environment() -> None:
    request = RunRequest(
        playbook=Path("/p/site.yml"),
        inventory=Path("/i.yml"),
        check=True,
        become_password="pw",
        extra_args=("-e", "a=b c", "-vv"),
    )
    assert command_line(request) == "--check --diff --ask-become-pass -e 'a=b c' -vv"
    env = runner_envvars(Path("/tmp/x"))
    assert env["ANSIBLE_HOST_KEY_CHECKING"] == "True"
    assert env["ANSIBLE_RETRY_FILES_ENABLED"] == "False"
    assert env["ANSIBLE_CALLBACKS_ENABLED"] == "gpuctl_prefork"
    assert "pw" not in " ".join(env.values())


def test_ssh_control_sockets_stay_short_under_a_long_tmpdir(tmp_path: Path) -> None:
    short = Path("/tmp/gpuctl-bootstrap-abcd1234")
    assert control_path_dir(short) == short / "cp"
    long_private_dir = tmp_path / ("deeply-nested-" * 6) / "gpuctl-bootstrap-abcd1234"
    control_dir = control_path_dir(long_private_dir)
    try:
        assert len(str(control_dir / ("0" * 40))) < 108  # sun_path limit of a Unix socket
        assert runner_envvars(long_private_dir, control_dir)["ANSIBLE_SSH_CONTROL_PATH_DIR"] == str(
            control_dir
        )
    finally:
        control_dir.rmdir()


def test_a_sudo_password_failure_names_the_two_ways_to_give_one() -> None:
    from gpuctl.core.bootstrap import failed_task_hint
    from gpuctl.hosts.events import FailedTask

    missing = FailedTask("n0", "Preflight | gather facts", "Task failed: Missing sudo password")
    assert failed_task_hint(missing, "hosts.yml") == (
        "sudo on n0 asks for a password: set GPUCTL_BECOME_PASSWORD or pass --ask-become-pass, "
        "then `gpuctl bootstrap --phase host --inventory hosts.yml --limit n0`"
    )
    wrong = FailedTask("n0", "Preflight | gather facts", "Task failed: Incorrect sudo password")
    assert failed_task_hint(wrong, "hosts.yml").startswith(
        "sudo on n0 refused the password: set GPUCTL_BECOME"
    )
    other = FailedTask("n0", "Driver | install", "No package matching 'x'")
    assert "GPUCTL_BECOME_PASSWORD" not in failed_task_hint(other, "hosts.yml")
