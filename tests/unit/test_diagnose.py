"""The diagnosis table recognises the real message texts and picks the relevant scheduler reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuctl.diagnose import SIGNATURES, diagnose, diagnose_scheduling, scheduling_reasons
from gpuctl.nvidia_smi import DRIVER_MISMATCH, DRIVER_NOT_LOADED

DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnosis.md"

PLUGIN_TOOLKIT_MISSING = """\
I1121 10:00:00.000000       1 main.go:235] "Starting NVIDIA Device Plugin" version=<
E1121 10:00:00.100000       1 factory.go:112] Failed to initialize NVML: could not load NVML library.
E1121 10:00:00.100001       1 factory.go:113] If this is a GPU node, did you set the docker default runtime \
to `nvidia`?
E1121 10:00:00.200000       1 factory.go:135] Incompatible strategy detected auto
E1121 10:00:00.200001       1 factory.go:136] If this is a GPU node, did you configure the NVIDIA \
Container Toolkit?
I1121 10:00:00.300000       1 main.go:346] No devices found. Waiting indefinitely.
"""


@pytest.mark.parametrize(
    ("text", "source", "expected"),
    [
        (PLUGIN_TOOLKIT_MISSING, "plugin-log", "plugin.nvml-library-missing"),
        (
            "E1121 factory.go:135] Incompatible strategy detected auto",
            "plugin-log",
            "plugin.incompatible-strategy",
        ),
        ("I1121 main.go:346] No devices found. Waiting indefinitely.", "plugin-log", "plugin.no-devices"),
        (
            "I1121 health.go:140] XidCriticalError: Xid=79 on Device=GPU-1; marking device as unhealthy.\n"
            "I1121 server.go:250] 'nvidia.com/gpu' device marked unhealthy: GPU-1",
            "plugin-log",
            "plugin.xid",
        ),
        (DRIVER_MISMATCH[0], "nvidia-smi", "smi.driver-mismatch"),
        (DRIVER_NOT_LOADED[0], "nvidia-smi", "smi.driver-not-loaded"),
        ("No devices were found\n", "nvidia-smi", "smi.no-devices"),
        (
            "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc "
            'create failed: unable to start container process: exec: "nvidia-smi": executable file not '
            "found in $PATH: unknown",
            "nvidia-smi",
            "smi.not-found",
        ),
        (
            "ErrImagePull rpc error: code = NotFound desc = failed to pull and unpack image",
            "image-pull",
            "image.not-found",
        ),
        (
            "ErrImagePull pull access denied, repository does not exist or may require authorization",
            "image-pull",
            "image.unauthorized",
        ),
        (
            'InvalidImageName Failed to apply default image tag "Bad//Image": '
            "couldn't parse image reference",
            "image-pull",
            "image.invalid-name",
        ),
        ("NotReady KubeletNotReady container runtime network not ready", "node", "node.not-ready"),
        ("allocatable 6 < capacity 8", "node", "node.unhealthy-gpus"),
    ],
)
def test_known_messages_map_to_their_signature(text: str, source: str, expected: str) -> None:
    found = diagnose(text, source, node="gpu-0", namespace="gpuctl-system", image="img")
    assert found is not None
    assert found.signature_id == expected
    assert found.hint
    assert "{" not in found.hint
    assert "\n" not in found.evidence


def test_unknown_text_has_no_diagnosis() -> None:
    assert diagnose("all good here", "plugin-log") is None


def test_hints_name_the_node() -> None:
    found = diagnose(PLUGIN_TOOLKIT_MISSING, "plugin-log", node="gpu-7")
    assert found is not None
    assert "gpu-7" in found.hint


SCHED_TAINT = (
    "0/5 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, 4 node(s) didn't match "
    "Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for "
    "scheduling."
)
SCHED_GPUS = (
    "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node "
    "affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming "
    "pod, 2 Preemption is not helpful for scheduling."
)


def test_scheduling_reasons_are_split() -> None:
    assert scheduling_reasons(SCHED_GPUS) == [
        "1 Insufficient nvidia.com/gpu",
        "2 node(s) didn't match Pod's node affinity/selector",
    ]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (SCHED_TAINT, "sched.untolerated-taint"),
        (SCHED_GPUS, "sched.insufficient-gpu"),
        (
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
            "sched.selector-mismatch",
        ),
        (
            "0/2 nodes are available: 1 node(s) were unschedulable, 1 node(s) didn't match Pod's node "
            "affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
            "scheduling.",
            "sched.unschedulable",
        ),
    ],
)
def test_scheduling_diagnosis_ignores_the_other_nodes(message: str, expected: str) -> None:
    found = diagnose_scheduling(message, node="gpu-0")
    assert found is not None
    assert found.signature_id == expected
    assert "didn't match" not in found.evidence or expected == "sched.selector-mismatch"


def test_signature_ids_are_unique_and_complete() -> None:
    ids = [signature.id for signature in SIGNATURES]
    assert len(ids) == len(set(ids))
    for signature in SIGNATURES:
        assert signature.cause, signature.id
        assert signature.hint, signature.id


def test_docs_list_every_signature() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [signature.id for signature in SIGNATURES if f"`{signature.id}`" not in text]
    assert not missing, f"docs/diagnosis.md lacks {missing}: regenerate with `python -m gpuctl.diagnose.doc`"
