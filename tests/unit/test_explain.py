"""`gpuctl explain` through the real entry point, and the event diagnosis verify will call."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from gpuctl.cli.main import run
from gpuctl.diagnose import diagnose_events

# A stuck verification pod as `kubectl describe pod` prints it; the event messages are real ones
# (NVIDIA/gpu-operator#730, kubernetes/minikube#12944).
DESCRIBE = """\
Name:             gpuctl-verify-gpu-0-x7k2p
Namespace:        gpuctl-system
Node:             gpu-0/10.0.0.4
Labels:           app.kubernetes.io/component=verify
                  app.kubernetes.io/managed-by=gpuctl
Status:           Pending
Containers:
  nvidia-smi:
    Image:      nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
    State:          Waiting
      Reason:       ContainerCreating
    Limits:
      nvidia.com/gpu:  8
Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s
                             nvidia.com/gpu:NoSchedule op=Exists
Events:
  Type     Reason                  Age                   From               Message
  ----     ------                  ----                  ----               -------
""" + "".join(
    line + "\n"
    for line in (
        "  Normal   Scheduled               2m11s                 default-scheduler  Successfully "
        "assigned gpuctl-system/gpuctl-verify-gpu-0-x7k2p to gpu-0",
        "  Warning  FailedCreatePodSandBox  12s (x10 over 2m11s)  kubelet            Failed to create "
        "pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "
        '"nvidia" is configured',
        '  Warning  Failed   17h (x26 over 19h)     kubelet     Failed to pull image "selenium/hub": rpc '
        'error: code = Unknown desc = Error response from daemon: Get "https://registry-1.docker.io/v2/": '
        "x509: certificate signed by unknown authority",
        "  Warning  Failed   17h (x26 over 19h)     kubelet     Error: ErrImagePull",
    )
)


def _explain(
    args: list[str], stdin: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = run(["explain", *args])
    return code, capsys.readouterr().out


def test_describe_of_a_stuck_pod_is_explained(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _explain(["-", "--output", "json"], DESCRIBE, monkeypatch, capsys)
    assert code == 0
    document = json.loads(out)
    assert document["schema"] == "gpuctl.explain/v1"
    assert [m["id"] for m in document["matches"]] == ["runtime.no-nvidia-runtime", "image.tls"]
    for match in document["matches"]:
        assert set(match) >= {"id", "category", "cause", "fix", "line"}
        assert "{" not in match["fix"]
    # Tolerations name the not-ready/unreachable taints: no failure; the generic ErrImagePull line
    # is dropped because the x509 line says why the pull failed.


def test_table_output_and_nothing_found(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _explain([], DESCRIBE, monkeypatch, capsys)
    assert code == 0
    assert "runtime.no-nvidia-runtime" in out
    assert "cause:" in out
    assert "fix:" in out
    code, out = _explain([], "all good\n", monkeypatch, capsys)
    assert (code, out.strip()) == (0, "no known failure signature found")


def test_file_argument_and_nvidia_smi_summary(capsys: pytest.CaptureFixture[str]) -> None:
    corpus = Path(__file__).resolve().parents[1] / "corpus" / "nvidia-smi"
    code = run(["explain", str(corpus / "linux-nvidia-h100-mig-590.48.01.table.txt"), "-o", "json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert document["matches"] == []
    assert document["nvidia_smi"]["driver_version"] == "590.48.01"
    assert document["nvidia_smi"]["mig_devices"] == 4


@pytest.mark.parametrize("kind", ["missing", "directory", "binary"])
def test_bad_input_is_exit_2_with_one_line(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "input"
    if kind == "directory":
        target.mkdir()
    elif kind == "binary":
        target.write_bytes(b"\x7fELF\x00\x01")
    assert run(["explain", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert str(target) in err
    assert "hint:" in err
    assert "Traceback" not in err


def test_events_of_a_stuck_pod_are_terminal_or_transient() -> None:
    sandbox = (
        "FailedCreatePodSandBox",
        'failed to get sandbox runtime: no runtime for "nvidia" is configured',
    )
    mount = ("FailedMount", "Unable to attach or mount volumes: unmounted volumes=[nv-firmware]")
    found = diagnose_events([mount, sandbox], node="gpu-0")
    assert found is not None
    assert found.signature_id == "runtime.no-nvidia-runtime"
    assert found.terminal
    assert "gpu-0" in found.hint
    found = diagnose_events([sandbox, mount])
    assert found is not None
    assert found.signature_id == "pod.failed-mount"
    assert not found.terminal
    hook = (
        "Failed",
        "Error: failed to create containerd task: ... nvidia-container-cli: requirement error: "
        "unsatisfied condition: cuda>=12.4, please update your driver",
    )
    found = diagnose_events([hook])
    assert found is not None
    assert found.signature_id == "runtime.cuda-requirement"
    assert "550.54.14" in found.cause
    assert diagnose_events([("Pulling", "Pulling image")]) is None


# Real kernel lines of one machine (akash-network/support#244: Xid 43, an application's fault) and
# of another (NVIDIA/NVSentinel#155: Xid 79, the GPU fell off the bus, and the driver's own message
# saying so), as tests/corpus/failures.yaml quotes them; the application's line is printed first.
# The findings are told apart by their lines: which catalogue or table row names them may change.
XID43 = (
    "[Wed Jul 31 23:14:18 2024] NVRM: Xid (PCI:0000:00:05): 43, pid=1045242, name=pt_main_thread, Ch 00000008"
)
XID79 = "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus"
FALLEN = "               NVRM: fallen off the bus and is not responding to commands."


def _roles(document: dict[str, object]) -> list[tuple[str, str]]:
    matches = document["matches"]
    assert isinstance(matches, list)
    return [(match["line"], match["role"]) for match in matches]


def test_root_cause_first_and_the_rest_as_its_consequences(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _explain(["-o", "json"], f"{XID43}\n{XID79}\n", monkeypatch, capsys)
    assert code == 0
    document = json.loads(out)
    assert _roles(document) == [(XID79, "cause"), (XID43, "consequence")]
    cause, consequence = (match["id"] for match in document["matches"])
    assert document["cause"] == cause
    _, out = _explain([], f"{XID43}\n{XID79}\n", monkeypatch, capsys)
    assert f"root cause: {cause}; the 1 other finding(s) are consequences of it" in out
    assert f"1. {cause} [" in out
    assert f"2. {consequence} [application] (consequence of {cause})" in out


def test_findings_of_one_layer_are_independent_causes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = _explain(["-o", "json"], f"{XID43}\n{XID79}\n{FALLEN}\n", monkeypatch, capsys)
    document = json.loads(out)
    assert _roles(document) == [(XID79, "cause"), (FALLEN.strip(), "cause"), (XID43, "consequence")]
    _, out = _explain([], f"{XID79}\n{FALLEN}\n", monkeypatch, capsys)
    assert "2 independent causes" in out
    assert "consequence" not in out
    _, out = _explain(["-o", "json"], "all good\n", monkeypatch, capsys)
    assert json.loads(out)["cause"] is None
