"""A container's termination message, as the kubelet sets `state.terminated.message`.

The kubelet reads the tail (at most 4,096 bytes) of the file the container wrote at its
`terminationMessagePath` (default /dev/termination-log, a file the kubelet mounts writable for
any user). When that file is empty and the policy is `FallbackToLogsOnError`, a container that
exited non-zero gets the tail of its log instead: the last 80 lines, at most 2,048 bytes.

What a simulated container writes to a file: nvidia-smi's `-f FILE` / `--filename=FILE`
("redirect query output to the specified file in place of stdout"). Its error text (a driver it
cannot reach) is not query output: it stays on stdout, the container's log.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gpuctl import nvidia_smi
from gpuctl.sim.runtime.containers import Outcome

DEFAULT_PATH = "/dev/termination-log"
MAX_MESSAGE_BYTES = 4096
FALLBACK_LOG_LINES = 80
FALLBACK_LOG_BYTES = 2048


def split_output_file(argv: list[str]) -> tuple[list[str], str]:
    """(argv without nvidia-smi's output-file option, the file it names or "")."""
    if not argv or argv[0].rsplit("/", 1)[-1] != "nvidia-smi":
        return argv, ""
    kept, path = nvidia_smi.split_output_file(argv[1:])
    return [argv[0], *kept], path


def run_redirected(run: Callable[[list[str]], Outcome], argv: list[str]) -> Outcome:
    """Run `argv`; when it names an output file and succeeds, its output went to that file."""
    command, path = split_output_file(argv)
    return redirected(run(command), path)


def redirected(outcome: Outcome, path: str) -> Outcome:
    """`outcome` with its output in the file at `path` ("": none) when it succeeded; a command
    still running is redirected once it ended (its end is the outcome passed then)."""
    if not path or outcome.exit_code != 0 or outcome.start_error or outcome.running is not None:
        return outcome
    return replace(outcome, log="", file_path=path, file_text=outcome.log)


def _tail_bytes(text: str, limit: int) -> str:
    data = text.encode()
    return data[-limit:].decode(errors="replace") if len(data) > limit else text


def message(container: dict[str, Any], outcome: Outcome, log: str) -> str:
    """`state.terminated.message` of `container` after `outcome` ("" when the kubelet sets none)."""
    if outcome.start_error:
        return outcome.start_error
    path = container.get("terminationMessagePath") or DEFAULT_PATH
    if outcome.file_path == path and outcome.file_text:
        return _tail_bytes(outcome.file_text, MAX_MESSAGE_BYTES)
    if container.get("terminationMessagePolicy") == "FallbackToLogsOnError" and outcome.exit_code != 0:
        last_lines = "".join(log.splitlines(keepends=True)[-FALLBACK_LOG_LINES:])
        return _tail_bytes(last_lines, FALLBACK_LOG_BYTES)
    return ""
