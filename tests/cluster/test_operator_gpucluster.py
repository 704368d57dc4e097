"""The GPU Operator's GPUCluster mode (26.7: nvidia.com/v1alpha1 GPUCluster, a DRA-based singleton
named gpu-cluster that cannot coexist with a ClusterPolicy): `bootstrap --stack operator` refuses
to create a ClusterPolicy beside one, before any write."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cluster.test_bootstrap_cluster import gpu_nodes, scenario
from tests.cluster.test_bootstrap_operator import operator_bootstrap
from tests.helm import needs_helm

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

GPU_CLUSTER_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gpuclusters.nvidia.com"},
    "spec": {
        "group": "nvidia.com",
        "names": {
            "kind": "GPUCluster",
            "listKind": "GPUClusterList",
            "plural": "gpuclusters",
            "singular": "gpucluster",
        },
        "scope": "Cluster",
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


def add_gpu_cluster(cluster: Any) -> None:
    from kubernetes.client import ApiextensionsV1Api, CustomObjectsApi

    api = cluster.api_client()
    ApiextensionsV1Api(api).create_custom_resource_definition(GPU_CLUSTER_CRD)
    body = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "GPUCluster",
        "metadata": {"name": "gpu-cluster"},
        "spec": {"draDriver": {"version": "v0.5.0"}},
    }
    CustomObjectsApi(api).create_cluster_custom_object("nvidia.com", "v1alpha1", "gpuclusters", body)


@needs_helm
def test_bootstrap_refuses_a_cluster_policy_beside_a_gpu_cluster(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    add_gpu_cluster(cluster)
    before = cluster.server.requests_by_verb().get("create", 0)
    code, _, result = operator_bootstrap(cli, cluster)
    assert code == 2, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: GPUCluster gpu-cluster (nvidia.com/v1alpha1) exists")
    assert "cannot coexist" in first
    assert "kubectl delete gpuclusters.nvidia.com gpu-cluster" in result.stderr
    assert cluster.server.requests_by_verb().get("create", 0) == before  # nothing installed


@needs_helm
def test_without_a_gpu_cluster_the_operator_bootstrap_goes_on(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    code, data, result = operator_bootstrap(cli, cluster, "--check")
    assert code == 0, result.output
    assert data["cluster"]["helm"]["action"] == "would-install"
