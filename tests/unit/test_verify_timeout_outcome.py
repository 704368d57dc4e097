"""A verification pod never scheduled before --timeout is a pod.scheduled failure, said once."""

from __future__ import annotations

from gpuctl.core.verify.pod_judgement import evaluate, stuck_for_good
from gpuctl.kube.nodes import NodeInfo
from gpuctl.kube.pods import PodOutcome


def _node() -> NodeInfo:
    return NodeInfo("gpu-0", {}, {}, (), True, "", "", False, 8, 8)


def test_never_scheduled_pending_pod_fails_pod_scheduled() -> None:
    outcome = PodOutcome("gpuctl-verify-ab-gpu-0", "timeout", "Pending")
    checks = {c.id: c for c in evaluate(outcome, _node(), 8, "gpuctl-verify", "img").checks}
    assert checks["pod.scheduled"].failed
    assert "--timeout" in checks["pod.scheduled"].message
    assert "--timeout" in checks["pod.scheduled"].hint
    assert "describe pod gpuctl-verify-ab-gpu-0" in checks["pod.scheduled"].hint
    assert not checks["pod.image"].failed


def test_bound_pending_pod_fails_pod_image_once() -> None:
    outcome = PodOutcome("p", "timeout", "Pending", node_name="gpu-0")
    checks = {c.id: c for c in evaluate(outcome, _node(), 8, "ns", "img").checks}
    assert not checks["pod.scheduled"].failed
    assert checks["pod.image"].failed
    assert checks["pod.image"].message.count("Pending") == 1


SANDBOX = (
    "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: "
    'no runtime for "nvidia" is configured'
)
CONTAINERD_DOWN = (
    "Failed to create pod sandbox: rpc error: code = Unavailable desc = connection error: desc = "
    '"transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused"'
)


def test_terminal_sandbox_failure_ends_the_wait_and_fails_pod_image_with_its_diagnosis() -> None:
    events = (("FailedCreatePodSandBox", SANDBOX),)
    assert stuck_for_good(events)
    outcome = PodOutcome("p", "stuck", "Pending", node_name="gpu-0", events=events)
    checks = {c.id: c for c in evaluate(outcome, _node(), 8, "ns", "img").checks}
    assert checks["pod.image"].failed
    assert checks["pod.image"].diagnosis == "runtime.no-nvidia-runtime"
    assert "--timeout" not in checks["pod.image"].message
    assert "gpu-0" in checks["pod.image"].hint
    assert checks["nvidia-smi.run"].status.value == "skip"


def test_transient_failure_keeps_waiting_and_is_reported_at_timeout() -> None:
    events = (("FailedCreatePodSandBox", CONTAINERD_DOWN), ("FailedMount", "MountVolume.SetUp failed"))
    assert not stuck_for_good(events)
    outcome = PodOutcome("p", "timeout", "Pending", node_name="gpu-0", events=events)
    image = {c.id: c for c in evaluate(outcome, _node(), 8, "ns", "img").checks}["pod.image"]
    assert image.failed
    assert image.diagnosis == "pod.failed-mount"  # the newest event with a known signature
    assert "--timeout" in image.message
    assert "MountVolume.SetUp failed" in image.message


def test_unbound_stuck_pod_fails_pod_scheduled() -> None:
    events = (("FailedCreatePodSandBox", SANDBOX),)
    outcome = PodOutcome("p", "stuck", "Pending", events=events)
    checks = {c.id: c for c in evaluate(outcome, _node(), 8, "ns", "img").checks}
    assert checks["pod.scheduled"].failed
    assert checks["pod.scheduled"].diagnosis == "runtime.no-nvidia-runtime"
    assert checks["pod.image"].status.value == "skip"
