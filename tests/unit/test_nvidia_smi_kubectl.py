"""`nvidia-smi -L` as `kubectl exec POD -- nvidia-smi -L` prints it: kubectl's own lines first.

kubectl writes "Defaulted container %q out of: %s" when the pod has several containers and none
was named (kubernetes/kubectl pkg/cmd/util/podcmd/podcmd.go, FindOrDefaultContainerByName; before
1.21 pkg/cmd/exec/exec.go printed "Defaulting container name to %s." and "Use 'kubectl describe
pod/%s -n %s' to see all of the containers in this pod."). The `nvidia-smi -L` outputs are the
verbatim captures of tests/corpus/nvidia-smi (sources in tests/corpus/nvidia-smi.yaml).
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from gpuctl.cli.main import run
from gpuctl.nvidia_smi_parse import parse_nvidia_smi

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "nvidia-smi"
MIG_LIST = (CORPUS / "linux-nvidia-h100-mig-590.48.01.list.txt").read_text(encoding="utf-8")
H200_LIST = (CORPUS / "linux-nvidia-h200-580.159.04.list.txt").read_text(encoding="utf-8")

# As kubectl printed them for `kubectl -n gpu-operator exec -it nvidia-dcgm-exporter-z2h9r
# nvidia-smi` (NVIDIA/gpu-operator#695): the deprecated form's warning, then the default container.
GPU_OPERATOR_695 = (
    "kubectl exec [POD] [COMMAND] is DEPRECATED and will be removed in a future version. Use kubectl "
    "exec [POD] -- [COMMAND] instead.\n"
    'Defaulted container "nvidia-dcgm-exporter" out of: nvidia-dcgm-exporter, toolkit-validation (init)\n'
)


def _go_quoted(name: str) -> str:
    """Go's %q of a container name (a DNS label: no character needs escaping)."""
    return f'"{name}"'


def _defaulted(container: str, names: str) -> str:
    """kubectl's line, from its format "Defaulted container %q out of: %s\\n"."""
    return f"Defaulted container {_go_quoted(container)} out of: {names}\n"


def _older(container: str, pod: str, namespace: str) -> str:
    """kubectl's lines before 1.21, from their formats."""
    return (
        f"Defaulting container name to {container}.\n"
        f"Use 'kubectl describe pod/{pod} -n {namespace}' to see all of the containers in this pod.\n"
    )


@pytest.mark.parametrize(
    ("preamble", "listing", "gpus", "mig_devices"),
    [
        (_defaulted("nvidia-smi", "nvidia-smi, init (init)"), MIG_LIST, ["NVIDIA H100 80GB HBM3"], 4),
        (GPU_OPERATOR_695, MIG_LIST, ["NVIDIA H100 80GB HBM3"], 4),
        (_defaulted("nvidia-smi", "nvidia-smi, debugger-x2x (ephem)"), H200_LIST, ["NVIDIA H200"], 0),
        (_older("nvidia-smi", "gpu-check", "default"), H200_LIST, ["NVIDIA H200"], 0),
        (
            "Unable to use a TTY - input is not a terminal or the right kind of file\n"
            + _defaulted("nvidia-smi", "nvidia-smi, init (init)"),
            MIG_LIST,
            ["NVIDIA H100 80GB HBM3"],
            4,
        ),
    ],
)
def test_listing_after_kubectl_lines_is_parsed(
    preamble: str, listing: str, gpus: list[str], mig_devices: int
) -> None:
    with pytest.raises(ValueError, match="unexpected nvidia-smi -L line"):
        parse_nvidia_smi("unrelated first line\n" + listing)  # anything else before it is not -L
    report = parse_nvidia_smi(preamble + listing)
    assert report.format == "list"
    assert [gpu.name for gpu in report.gpus] == gpus
    assert all(gpu.uuid.startswith("GPU-") for gpu in report.gpus)
    assert report.mig_devices == mig_devices


def test_explain_shows_the_gpus_of_a_kubectl_exec_capture(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _defaulted("nvidia-smi", "nvidia-smi, init (init)") + MIG_LIST
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert run(["explain", "-", "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["matches"] == []
    assert document["nvidia_smi"]["format"] == "list"
    assert [gpu["name"] for gpu in document["nvidia_smi"]["gpus"]] == ["NVIDIA H100 80GB HBM3"]
    assert document["nvidia_smi"]["mig_devices"] == 4
