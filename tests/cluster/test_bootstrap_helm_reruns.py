"""`bootstrap --stack operator` with a real helm: a packaged chart (`helm package`'s .tgz) is
installed once and a rerun upgrades nothing; a chart whose install fails leaves no GPU taint
behind (the taint goes on only once helm has succeeded)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.test_bootstrap_cluster import gpu_nodes, scenario, writes
from tests.helm import HELM, OPERATOR_CHART, Helm, needs_helm

pytestmark = [needs_helm, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

BROKEN_CHART = Path(__file__).resolve().parents[1] / "charts" / "broken-gpu-operator"
NAMESPACE = "gpu-operator"


def _bootstrap(cli: Any, cluster: Any, chart: Path, *args: str) -> Any:
    result = cli(
        "bootstrap", "--phase", "cluster", "--stack", "operator", "--kubeconfig", cluster.kubeconfig,
        "--helm", HELM, "--chart", chart, "--timeout", "30", *args,
    )  # fmt: skip
    assert "Traceback" not in result.output
    return result


def _gpu_taints(cluster: Any) -> dict[str, list[str]]:
    from kubernetes.client import CoreV1Api

    nodes = CoreV1Api(cluster.api_client()).list_node().items
    return {node.metadata.name: [taint.key for taint in node.spec.taints or []] for node in nodes}


def test_a_packaged_chart_is_installed_once_and_a_rerun_upgrades_nothing(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    packaged = subprocess.run(
        [HELM, "package", str(OPERATOR_CHART), "--destination", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=True,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert packaged.returncode == 0
    (package,) = tmp_path.glob("gpu-operator-*.tgz")
    cluster = sim(scenario(gpu_nodes(count=1)))

    first = _bootstrap(cli, cluster, package, "-o", "json")
    assert first.exit_code == 0, first.output
    helm = json.loads(first.stdout)["cluster"]["helm"]
    assert (helm["action"], helm["chart"]) == ("installed", "gpu-operator-v26.7.2")
    assert "--version" not in helm["command"]  # helm ignores it for a local chart

    before = writes(cluster)
    again = _bootstrap(cli, cluster, package, "-o", "json")
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)["cluster"]
    assert (report["helm"]["action"], report["helm"]["deployed_chart"]) == (
        "unchanged",
        "gpu-operator-v26.7.2",
    )
    assert report["writes"] == 0
    assert writes(cluster) == before  # helm sent nothing either: no new release revision
    (release,) = Helm(cluster, tmp_path / "helm").json("list", "-n", NAMESPACE)
    assert release["revision"] == "1"


def test_a_file_that_is_no_packaged_chart_is_exit_2_before_any_write(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    bogus = tmp_path / "gpu-operator.tgz"
    bogus.write_text("not a tarball\n", encoding="utf-8")
    result = _bootstrap(cli, cluster, bogus)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0].startswith(f"error: --chart {bogus}: cannot read its Chart.yaml")
    assert result.stderr.splitlines()[1].startswith("hint: ")
    assert writes(cluster) == 0


def test_a_failed_install_leaves_no_taint_and_a_rerun_with_a_good_chart_taints(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    cluster = sim(scenario(gpu_nodes(count=2)))
    failed = _bootstrap(cli, cluster, BROKEN_CHART)
    assert failed.exit_code == 1, failed.output
    lines = failed.stderr.splitlines()
    assert lines[0].startswith("error: helm failed: ")
    assert "this stand-in chart cannot be installed" in lines[0]
    assert lines[1].startswith("hint: the command was: ")
    assert _gpu_taints(cluster) == {"cpu-0": [], "gpu-0": [], "gpu-1": []}
    assert Helm(cluster, tmp_path / "helm").json("list", "-A") == []

    fixed = _bootstrap(cli, cluster, OPERATOR_CHART)
    assert fixed.exit_code == 0, fixed.output
    # the GPU taint, and the gate on nodes never proven (bootstrap's verify phase lifts it)
    gated = ["nvidia.com/gpu", "gpuctl.io/unproven"]
    assert _gpu_taints(cluster) == {"cpu-0": [], "gpu-0": gated, "gpu-1": gated}
