"""CustomResourceDefinition objects as the API server stores them: the status its naming and
establishing controllers write, and the ClusterPolicy CRD of NVIDIA's GPU Operator (for scenarios
that start with the Operator installed)."""

from __future__ import annotations

from typing import Any

from gpuctl.sim.runtime.store import rfc3339

Obj = dict[str, Any]


def established_status(crd: Obj) -> Obj:
    """NamesAccepted and Established, as the API server writes them once the names are free."""
    spec = crd.get("spec") or {}
    now = rfc3339()
    storage = [v.get("name") for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("storage")]
    return {
        "acceptedNames": dict(spec.get("names") or {}),
        "conditions": [
            {
                "type": "NamesAccepted",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "NoConflicts",
                "message": "no conflicts found",
            },
            {
                "type": "Established",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
            },
        ],
        "storedVersions": storage[:1],
    }


def cluster_policy_crd() -> Obj:
    """clusterpolicies.nvidia.com: cluster-scoped, v1, status subresource, a Status column."""
    crd: Obj = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "clusterpolicies.nvidia.com", "generation": 1},
        "spec": {
            "group": "nvidia.com",
            "names": {
                "kind": "ClusterPolicy",
                "listKind": "ClusterPolicyList",
                "plural": "clusterpolicies",
                "singular": "clusterpolicy",
            },
            "scope": "Cluster",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"jsonPath": ".status.state", "name": "Status", "type": "string"},
                        {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
                    ],
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }
    crd["status"] = established_status(crd)
    return crd
