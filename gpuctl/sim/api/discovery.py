"""Aggregated discovery (apidiscovery.k8s.io/v2, GA in Kubernetes 1.30): `/api` and `/apis` answer
every group, version and resource in one document when the client's Accept asks for an
APIGroupDiscoveryList, as kubectl and helm (client-go) do; other clients get the legacy documents
(kinds.py). The resource types include those of the stored CRDs, so a new CRD is discovered with
the next request."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuctl.sim.api import crds
from gpuctl.sim.api.kinds import NO_GATES, ResourceType, groups, subresource, ungated
from gpuctl.sim.api.messages import Response, encode
from gpuctl.sim.runtime.store import Store

Obj = dict[str, Any]
CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"


def wanted_version(accept: str) -> str:
    """v2 or v2beta1 when Accept lists an APIGroupDiscoveryList (first one listed wins); else ""."""
    for media_range in accept.split(","):
        params = dict(part.strip().split("=", 1) for part in media_range.split(";")[1:] if "=" in part)
        aggregated = params.get("g") == "apidiscovery.k8s.io" and params.get("as") == "APIGroupDiscoveryList"
        if aggregated and params.get("v") in ("v2", "v2beta1"):
            return params["v"]
    return ""


def _resource(resource: ResourceType) -> Obj:
    kind = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    entry: Obj = {
        "resource": resource.plural,
        "responseKind": kind,
        "scope": "Namespaced" if resource.namespaced else "Cluster",
        "singularResource": resource.kind.lower(),
        "verbs": list(resource.verbs),
    }
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource.categories:
        entry["categories"] = list(resource.categories)
    subresources = [
        {
            "subresource": sub,
            "responseKind": {"group": answer.group, "version": answer.version, "kind": answer.kind},
            "verbs": list(answer.verbs),
        }
        for sub in resource.subresources
        for answer in (subresource(resource, sub),)
    ]
    if subresources:
        entry["subresources"] = subresources
    return entry


def group_discovery_list(served: Sequence[ResourceType], core: bool, version: str) -> Obj:
    """The document of `/api` (core=True: the legacy core group) or `/apis` (every named group)."""
    names = [""] if core else list(groups(served))
    items = []
    for name in names:
        versions = ["v1"] if core else groups(served)[name]
        items.append(
            {
                "metadata": {"name": name, "creationTimestamp": None},
                "versions": [
                    {
                        "version": group_version,
                        "resources": [
                            _resource(r) for r in served if (r.group, r.version) == (name, group_version)
                        ],
                        "freshness": "Current",
                    }
                    for group_version in versions
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }


def aggregated(path: str, accept: str, store: Store, gates: frozenset[str] = NO_GATES) -> Response | None:
    """The aggregated document for `/api` or `/apis` when Accept asks for one; None otherwise.
    `gates`: the gated groups the scenario serves (resource.k8s.io with DRA)."""
    version = wanted_version(accept) if path in ("/api", "/apis") else ""
    if not version:
        return None
    document = group_discovery_list(ungated(crds.served(store), gates), path == "/api", version)
    return Response(200, encode(document), CONTENT_TYPE.format(version=version))
