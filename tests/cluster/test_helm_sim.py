"""A real helm (v4) against the simulated cluster: the stand-in gpu-operator chart (tests/charts)
installs its CRD and ClusterPolicy, upgrades, reports values, lists and uninstalls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpuctl import defaults
from tests.helm import OPERATOR_CHART, Helm, needs_helm
from tests.kubectl import Kubectl, needs_kubectl

pytestmark = [needs_helm, needs_kubectl]
CHART = str(OPERATOR_CHART)
RELEASE, NAMESPACE = defaults.OPERATOR_RELEASE, defaults.OPERATOR_NAMESPACE
INSTALL = (
    "upgrade",
    "--install",
    RELEASE,
    CHART,
    "-n",
    NAMESPACE,
    "--create-namespace",
    "--wait",
    "--timeout",
    "60s",
)


def test_install_upgrade_list_values_uninstall(sim: Any, tmp_path: Path) -> None:
    cluster = sim({"nodes": [{"name": "cpu-0"}]})
    helm, kubectl = Helm(cluster, tmp_path / "helm"), Kubectl(cluster, tmp_path)
    helm.ok(*INSTALL, "--set", "driver.enabled=false")
    assert (
        kubectl.ok("get", "crd", "-o", "name")
        == "customresourcedefinition.apiextensions.k8s.io/clusterpolicies.nvidia.com\n"
    )
    policy = json.loads(kubectl.ok("get", "clusterpolicies", "cluster-policy", "-o", "json"))
    assert policy["spec"]["driver"]["enabled"] is False
    assert policy["metadata"]["annotations"]["meta.helm.sh/release-namespace"] == NAMESPACE

    helm.ok(*INSTALL, "--set", "driver.enabled=false")  # the same values again: a no-op upgrade
    releases = helm.json("list", "-n", NAMESPACE)
    assert [(r["name"], r["revision"], r["status"], r["chart"]) for r in releases] == [
        (RELEASE, "2", "deployed", "gpu-operator-v26.7.2")
    ]
    assert helm.json("get", "values", RELEASE, "-n", NAMESPACE) == {"driver": {"enabled": False}}
    secrets = kubectl.ok("get", "secrets", "-n", NAMESPACE, "-l", "owner=helm", "-o", "name").split()
    assert secrets == [f"secret/sh.helm.release.v1.{RELEASE}.v1", f"secret/sh.helm.release.v1.{RELEASE}.v2"]

    helm.ok("uninstall", RELEASE, "-n", NAMESPACE, "--wait")
    assert kubectl.ok("get", "clusterpolicies", "-o", "name") == ""
    assert helm.json("list", "-A") == []
    # helm never deletes the CRDs of a chart's crds/ directory
    assert "clusterpolicies.nvidia.com" in kubectl.ok("get", "crd")
