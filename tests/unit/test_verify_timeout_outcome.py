"""A verification pod never scheduled before --timeout is a pod.scheduled failure, said once."""

from __future__ import annotations

from gpuctl.core.verify.pod_judgement import evaluate
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
