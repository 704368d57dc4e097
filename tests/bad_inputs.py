"""The catalogue of bad inputs: every command, file format and environment variable a user can get
wrong, each with the exit code and the one error line gpuctl answers with.

tests/cluster/test_bad_inputs_catalogue.py runs every case in-process and checks its answer;
docs/bad-inputs.md is generated from the same run (`python -m tests.bad_inputs > docs/bad-inputs.md`
with a simulated cluster started by the module itself), so the document never drifts from the code.

In `argv`, `files` and `env`: {dir} is the case's own folder (its files are written there), {kc} a
kubeconfig of a running simulated cluster, {port} that cluster's port.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import signal
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.bad_inputs_cases import CASES, Case

CASE_SECONDS = 20


class CaseTooLong(BaseException):
    """Raised by the alarm: a BaseException, so gpuctl's own error handling does not swallow it."""


def _too_long(_signal: int, _frame: object) -> None:
    raise CaseTooLong


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class Places:
    """What the placeholders stand for in one run."""

    root: Path
    kubeconfig: Path
    port: int

    def fill(self, text: str, case_dir: Path) -> str:
        # str.replace, not format: the files are YAML, full of braces
        filled = text.replace("{dir}", str(case_dir)).replace("{kc}", str(self.kubeconfig))
        return filled.replace("{port}", str(self.port))


@contextlib.contextmanager
def environment(values: Mapping[str, str | None]) -> Iterator[None]:
    """Set (a None value: unset) these environment variables for the block, then put them back."""
    saved = {name: os.environ.get(name) for name in values}
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_case(case: Case, places: Places) -> Outcome:
    """Write the case's files, run gpuctl in-process with its argv and environment."""
    from gpuctl.cli.main import run

    case_dir = places.root / case.name
    case_dir.mkdir(parents=True, exist_ok=True)
    for name, text in case.files.items():
        path = case_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(places.fill(text, case_dir), encoding="utf-8")
    argv = [places.fill(arg, case_dir) for arg in case.argv]
    env = {name: places.fill(value, case_dir) for name, value in case.env.items()}
    # Byte-backed streams, as a terminal's or a pipe's are (ansible looks for .buffer)
    out, err = (
        io.TextIOWrapper(io.BytesIO(), encoding="utf-8"),
        io.TextIOWrapper(io.BytesIO(), encoding="utf-8"),
    )
    stdin = sys.stdin
    sys.stdin = io.StringIO("")
    # A bad input that is not refused may start real work (a watch, pods): cut it short.
    previous = signal.signal(signal.SIGALRM, _too_long)
    signal.alarm(CASE_SECONDS)
    try:
        with environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(argv)
    except CaseTooLong:
        code = -1
        err.write(f"(still running after {CASE_SECONDS} s: the input was not refused)\n")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        sys.stdin = stdin
    return Outcome(code, _text(out), _text(err))


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", "replace")


def problems(case: Case, outcome: Outcome, places: Places) -> list[str]:
    """What is wrong with the answer to `case`: empty when it is right."""
    found = []
    if outcome.code != case.code:
        found.append(f"exit {outcome.code}, expected {case.code}")
    lines = outcome.stderr.splitlines()
    if "Traceback" in outcome.stdout + outcome.stderr or "internal error" in outcome.stderr:
        found.append("a traceback or an internal error")
    if not lines or not lines[0].startswith("error: "):
        found.append("no `error:` line first on stderr")
    elif places.fill(case.names, places.root / case.name) not in lines[0]:
        found.append(f"the error line does not name {case.names!r}")
    if len(lines) != 2 or not lines[1].startswith("hint: ") or len(lines[1]) <= len("hint: "):
        found.append("not exactly an `error:` line and a `hint:` line")
    return found


def document_line(case: Case, outcome: Outcome, places: Places) -> str:
    """One row of docs/bad-inputs.md: machine paths and ports replaced by placeholders."""

    def plain(text: str) -> str:
        text = text.replace(str(places.root / case.name), "DIR").replace(
            str(places.kubeconfig), "SIM.kubeconfig"
        )
        text = text.replace(str(places.root), "ROOT")
        text = re.sub(rf"\b{places.port}\b", "PORT", text)
        return text.replace("|", "\\|").replace("\n", " ")

    case_dir = places.root / case.name
    command = " ".join(("gpuctl", *(shlex.quote(places.fill(arg, case_dir)) for arg in case.argv)))
    setup = ", ".join(f"{name}: `{_short(text)}`" for name, text in case.files.items())
    setup += ", ".join(f"{name}={value!r}" for name, value in case.env.items())
    message = "<br>".join(plain(line) for line in outcome.stderr.splitlines())
    return f"| {case.name} | `{plain(command)}` | {plain(setup) or '-'} | {outcome.code} | {message} |"


def _short(text: str) -> str:
    flat = text.strip().replace("\n", "⏎")
    if not flat.isprintable():
        flat = repr(text)
    return flat if len(flat) <= 70 else flat[:67] + "..."


HEADER = """# Bad inputs and what gpuctl answers

Every row is a case of `tests/bad_inputs_cases.py`, run by
`tests/cluster/test_bad_inputs_catalogue.py`, which checks that each answer is one `error:` line
naming the file, field, flag or variable, one `hint:` line, the exit code below, and no traceback;
this page is regenerated from the same run (`python -m tests.bad_inputs > docs/bad-inputs.md`) and a
test fails when it is stale. DIR is the case's folder, ROOT the run's (HOME is ROOT/home), SIM a
simulated cluster on port PORT.
Exit codes: 2 usage or configuration error, 3 cannot reach or be authorised by the cluster.

| case | command | files / environment | exit | stderr |
|---|---|---|---|---|
"""


def document(outcomes: list[tuple[Case, Outcome]], places: Places) -> str:
    rows = [document_line(case, outcome, places) for case, outcome in outcomes]
    return HEADER + "\n".join(rows) + f"\n\n{len(rows)} bad inputs.\n"


def run_all(root: Path) -> tuple[list[tuple[Case, Outcome]], Places]:
    """Start a simulated cluster, run every case against it, stop it."""
    from gpuctl.sim.scenario import parse_scenario
    from gpuctl.sim.server.http_server import SimServer

    server = SimServer(parse_scenario({"nodes": [{"name": "gpu-0", "gpus": 8}]}, "scenario")).start()
    try:
        kubeconfig = server.write_kubeconfig(root / "sim.kubeconfig")
        places = Places(root=root, kubeconfig=kubeconfig, port=int(server.url.rsplit(":", 1)[1]))
        return [(case, run_case(case, places)) for case in CASES], places
    finally:
        server.stop()


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        home.mkdir()
        with environment({"HOME": str(home)}):
            os.environ.pop("KUBECONFIG", None)
            results, used = run_all(Path(folder))
            sys.stdout.write(document(results, used))
