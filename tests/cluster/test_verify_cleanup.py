"""Verification pods never outlive `gpuctl verify`; bad input and unreachable clusters exit 2/3."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.interrupt import interrupt_when
from tests.kubectl import KUBECTL, needs_kubectl
from tests.polling import wait_until


def scenario(pod_start: float = 0.05, **top: Any) -> dict[str, Any]:
    return {
        "podStartSeconds": pod_start,
        "devicePlugin": "installed",
        "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 8}],
        **top,
    }


def gpus_advertised(cluster: Any) -> bool:
    return set(cluster.allocatable_gpus().values()) == {8}


def test_pods_are_deleted_after_success_and_failure(sim: Any, cli: Any) -> None:
    cluster = sim(scenario())
    wait_until(lambda: gpus_advertised(cluster), "GPUs advertised")
    ok = cli(["verify", "--kubeconfig", str(cluster.kubeconfig)])
    assert ok.exit_code == 0, ok.stdout + ok.stderr
    assert cluster.verification_pods() == []
    failing = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "--image", "x/does-not-exist:1"])
    assert failing.exit_code == 1
    assert cluster.verification_pods() == []


def test_keep_pods_keeps_them_with_the_restricted_shape(sim: Any, cli: Any) -> None:
    cluster = sim(scenario())
    wait_until(lambda: gpus_advertised(cluster), "GPUs advertised")
    result = cli(
        ["verify", "--kubeconfig", str(cluster.kubeconfig), "--keep-pods", "--namespace", "gpu-check"]
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    pods = cluster.verification_pods()
    assert len(pods) == 2
    pod = pods[0]
    assert pod.metadata.namespace == "gpu-check"
    assert pod.spec.node_selector == {"kubernetes.io/hostname": pod.spec.node_name}
    assert pod.spec.restart_policy == "Never"
    assert pod.spec.active_deadline_seconds > 0
    container = pod.spec.containers[0]
    assert container.resources.limits == {"nvidia.com/gpu": "8"}
    assert container.resources.requests == {"nvidia.com/gpu": "8"}
    security = container.security_context
    assert security.allow_privilege_escalation is False
    assert security.run_as_non_root is True
    assert security.capabilities.drop == ["ALL"]
    assert security.seccomp_profile.type == "RuntimeDefault"
    from kubernetes.client import CoreV1Api

    namespace = CoreV1Api(cluster.api_client()).read_namespace("gpu-check")
    assert namespace.metadata.labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_pods_are_deleted_after_timeout(sim: Any, cli: Any) -> None:
    # Held where the test needs it: Running as soon as bound, and nvidia-smi never finishes.
    cluster = sim(scenario(pod_start=0, podRunSeconds=3600))
    wait_until(lambda: gpus_advertised(cluster), "GPUs advertised")
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "1"])
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    run = next(check for check in report["nodes"][0]["checks"] if check["id"] == "nvidia-smi.run")
    assert run["status"] == "fail"
    assert "timeout" in run["message"]
    assert cluster.verification_pods() == []


def interrupted_verify(
    cluster: Any, signals: list[signal.Signals], *args: str, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run `gpuctl verify`, send `signals` once its pods exist; its exit code and stderr."""
    return interrupt_when(
        ["verify", "--kubeconfig", str(cluster.kubeconfig), *args],
        lambda: len(cluster.verification_pods()) == 2,
        signals,
        env=env,
    )


def test_sigint_deletes_pods_and_exits_130(sim: Any) -> None:
    cluster = sim(scenario(podRunSeconds=120))
    wait_until(lambda: gpus_advertised(cluster), "GPUs advertised")
    env = {**os.environ, "NO_COLOR": "1"}
    exit_code, stderr = interrupted_verify(cluster, [signal.SIGINT], "--timeout", "300", env=env)
    assert exit_code == 130, stderr
    assert "Traceback" not in stderr
    assert cluster.verification_pods() == []


def test_repeated_ctrl_c_does_not_cut_the_cleanup_short(sim: Any) -> None:
    cluster = sim(scenario(podRunSeconds=120))
    wait_until(lambda: gpus_advertised(cluster), "GPUs advertised")
    # An impatient user: the later signals land during the cleanup.
    exit_code, stderr = interrupted_verify(cluster, [signal.SIGINT] * 20)
    assert exit_code == 130, stderr
    assert "Traceback" not in stderr
    assert cluster.verification_pods() == []


def test_sigterm_deletes_pods_too(sim: Any) -> None:
    cluster = sim(scenario(podRunSeconds=120))
    wait_until(lambda: gpus_advertised(cluster), "GPUs advertised")
    exit_code, stderr = interrupted_verify(cluster, [signal.SIGTERM])
    assert exit_code == 130, stderr
    assert cluster.verification_pods() == []


# --- bad input and unreachable clusters --------------------------------------------------------


def _assert_one_line_error(result: Any, code: int, *fragments: str) -> None:
    assert result.exit_code == code, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert "error:" in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--expect-gpus", "eight"], "--expect-gpus"),
        (["--expect-gpus", "gpu-0=-1"], "--expect-gpus"),
        (["--expect-gpus", "gpu-0"], "--expect-gpus"),
        (["--expect-gpus", "@/nonexistent/gpus.yaml"], "/nonexistent/gpus.yaml"),
        (["--expect-nodes", "GPU_0"], "--expect-nodes"),
        (["--toleration", "=x:Bad"], "--toleration"),
        (["--namespace", "Not_Valid"], "--namespace"),
        (["--image", "with space"], "--image"),
    ],
)
def test_bad_flags_exit_2(sim: Any, cli: Any, args: list[str], fragment: str) -> None:
    cluster = sim(scenario())
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), *args])
    _assert_one_line_error(result, 2, fragment)


def test_bad_expect_gpus_file_exits_2(sim: Any, cli: Any, tmp_path: Path) -> None:
    cluster = sim(scenario())
    mapping = tmp_path / "gpus.yaml"
    mapping.write_text("gpu-0: [8\n", encoding="utf-8")
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "--expect-gpus", f"@{mapping}"])
    _assert_one_line_error(result, 2, "invalid YAML")


def test_expect_gpus_file_is_used(sim: Any, cli: Any, tmp_path: Path) -> None:
    cluster = sim(scenario())
    wait_until(lambda: gpus_advertised(cluster), "GPUs advertised")
    mapping = tmp_path / "gpus.yaml"
    mapping.write_text("gpu-*: 8\n", encoding="utf-8")
    result = cli(
        ["verify", "--kubeconfig", str(cluster.kubeconfig), "--expect-gpus", f"@{mapping}", "-o", "json"]
    )
    assert result.exit_code == 0, result.stdout
    assert [n["gpus"]["expected"] for n in json.loads(result.stdout)["nodes"]] == [8, 8]


def test_missing_kubeconfig_exits_2(cli: Any, tmp_path: Path) -> None:
    result = cli(["verify", "--kubeconfig", str(tmp_path / "nope")])
    _assert_one_line_error(result, 2, "nope")


def test_unknown_context_exits_2(sim: Any, cli: Any) -> None:
    cluster = sim(scenario())
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "--context", "no-such-context"])
    _assert_one_line_error(result, 2, "no-such-context")


def test_stopped_cluster_exits_3(sim: Any, cli: Any) -> None:
    cluster = sim(scenario())
    cluster.server.stop()
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig)])
    _assert_one_line_error(result, 3, "list nodes")


def test_forbidden_pod_creation_exits_3_naming_verb_and_resource(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(forbidden=["create pods"]))
    wait_until(lambda: gpus_advertised(cluster), "GPUs advertised")
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig)])
    _assert_one_line_error(result, 3, "create", "pods")
    assert cluster.verification_pods() == []


@needs_kubectl
def test_keep_pods_names_the_pods_kept_and_the_command_that_removes_them(sim: Any, cli: Any) -> None:
    cluster = sim(scenario())
    wait_until(lambda: gpus_advertised(cluster), "GPUs advertised")
    table = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "--keep-pods"])
    assert table.exit_code == 0, table.output
    kept = sorted(pod.metadata.name for pod in cluster.verification_pods())
    assert len(kept) == 2
    assert all(name in table.stdout for name in kept)
    line = next(line for line in table.stdout.splitlines() if "kubectl" in line)
    removal = line[line.index("`") + 1 : line.rindex("`")].split()
    report = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "--keep-pods", "-o", "json"])
    document = json.loads(report.stdout)
    assert len(document["kept_pods"]) == 2
    assert document["cleanup_command"] in report.stderr  # said on stderr too: stdout is the document
    # The printed command, run by a real kubectl, removes the first run's pods and only those.
    assert removal[0] == "kubectl"
    done = subprocess.run(
        [KUBECTL, "--kubeconfig", str(cluster.kubeconfig), *removal[1:]],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HOME": str(cluster.kubeconfig.parent)},
    )
    assert done.returncode == 0, done.stderr
    left = sorted(pod.metadata.name for pod in cluster.verification_pods())
    assert left == sorted(document["kept_pods"])


def test_verify_removes_the_namespace_it_created_when_it_created_no_pod(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(forbidden=["create pods"]))
    wait_until(lambda: gpus_advertised(cluster), "GPUs advertised")
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "--namespace", "fresh-check"])
    assert result.exit_code == 3, result.output
    assert "create pods" in result.stderr
    from kubernetes.client import CoreV1Api

    def namespace_gone() -> bool:
        names = [item.metadata.name for item in CoreV1Api(cluster.api_client()).list_namespace().items]
        return "fresh-check" not in names

    wait_until(namespace_gone, "namespace fresh-check deleted (a real one is Terminating a while)")
