"""The REST layer: routes a request to discovery, list/get/watch, writes, logs; HTTP-agnostic."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpuctl.sim.api import (
    admission,
    authz,
    crds,
    discovery,
    evictions,
    kinds,
    openapi,
    paging,
    protobuf,
    tokens,
    writes,
)
from gpuctl.sim.api.api_errors import ApiError, bad_request, forbidden, not_found
from gpuctl.sim.api.encoded import encode_list, encode_object
from gpuctl.sim.api.messages import Request, Response, Route, encode
from gpuctl.sim.api.ownership import Writer
from gpuctl.sim.api.selectors import SelectorError
from gpuctl.sim.api.validation import FieldValidation, warning_header
from gpuctl.sim.api.watch import watch_response

if TYPE_CHECKING:
    from gpuctl.sim.runtime.cluster import Cluster

Obj = dict[str, Any]
__all__ = ["Api", "Request", "Response"]


class Api:
    def __init__(
        self, cluster: Cluster, server_address: str, token_registry: tokens.TokenRegistry | None = None
    ) -> None:
        self.cluster = cluster
        self.server_address = server_address
        self.tokens = token_registry or tokens.TokenRegistry("")
        self.access = authz.AccessControl(
            cluster.store, self.tokens, enforce=cluster.scenario.rbac == "enforce"
        )
        self.gates = kinds.gates_for(cluster.scenario.uses_dra, cluster.scenario.dra_137)
        self.lists = paging.Selections()
        self.snapshots = paging.Snapshots(cluster.scenario.list_token_ttl_seconds)
        if cluster.scenario.watch_ttl_seconds:
            cluster.store.compact_every(cluster.scenario.watch_ttl_seconds)
        if cluster.scenario.event_ttl_seconds:
            cluster.store.expire_after("events", cluster.scenario.event_ttl_seconds)

    # -- entry point ---------------------------------------------------------------------------
    def handle(self, request: Request) -> tuple[Response, str]:
        """The response and the verb it counts as (list, watch, patch ... or discovery)."""
        try:
            user = self.access.user(request)
            self.access.authorise(request, user)  # before routing, as the API server's filters
            route = self._route(request.path)
            if route is None:
                return _openapi(request.path, self.gates) or self._non_resource(request), "discovery"
            verb = self._verb(request, route)
            self._authorise(verb, route, user.name)
            return self._dispatch(request, route, verb), verb
        except ApiError as error:
            return Response(error.code, encode(error.status())), "error"
        except SelectorError as error:
            return Response(400, encode(bad_request(str(error)).status())), "error"

    def refusal(self, request: Request) -> Response | None:
        """The 401 or 403 for a request served outside the routes (GET /metrics), None when
        its sender may have it: authorised as the API server authorises a non-resource URL."""
        try:
            self.access.authorise(request, self.access.user(request))
        except ApiError as error:
            return Response(error.code, encode(error.status()))
        return None

    def _version(self) -> Obj:
        version = self.cluster.scenario.kubernetes_version
        return {
            "major": version[1:].split(".")[0],
            "minor": version.split(".")[1],
            "gitVersion": version,
            "gitCommit": "0000000000000000000000000000000000000000",
            "gitTreeState": "clean",
            "buildDate": "2024-10-22T20:28:14Z",
            "goVersion": "go1.22.8",
            "compiler": "gc",
            "platform": "linux/amd64",
        }

    def _non_resource(self, request: Request) -> Response:
        path = request.path
        if path in ("/healthz", "/readyz", "/livez"):
            return Response(200, b"ok", "text/plain")
        if aggregated := discovery.aggregated(path, request.header("accept"), self.cluster.store, self.gates):
            return aggregated
        documents: dict[str, Callable[[], Obj | None]] = {  # built only for the path asked for
            "/version": self._version,
            "/api": lambda: kinds.api_versions(self.server_address),
            "/apis": lambda: kinds.api_group_list(kinds.ungated(crds.served(self.cluster.store), self.gates)),
            "/api/v1": lambda: kinds.api_resource_list("", "v1"),
        }
        if path in documents and (document := documents[path]()) is not None:
            return Response(200, encode(document))
        parts, served = path.strip("/").split("/"), kinds.ungated(crds.served(self.cluster.store), self.gates)
        if parts[0] == "apis" and len(parts) == 2 and (group := kinds.api_group(parts[1], served)):
            return Response(200, encode(group))
        if (
            parts[0] == "apis"
            and len(parts) == 3
            and (listing := kinds.api_resource_list(parts[1], parts[2], served))
        ):
            return Response(200, encode(listing))
        error = ApiError(404, "NotFound", "the server could not find the requested resource", {})
        return Response(404, encode(error.status()))

    def _route(self, path: str) -> Route | None:
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif parts[0] == "apis" and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        watch = bool(rest) and rest[0] == "watch"
        rest = rest[1:] if watch else rest
        if not rest:
            return None
        namespace = ""
        if rest[0] == "namespaces" and len(rest) >= 3:
            candidate = crds.lookup(self.cluster.store, group, version, rest[2])
            if candidate is not None and candidate.namespaced:
                namespace, rest = rest[1], rest[2:]
        resource = crds.lookup(self.cluster.store, group, version, rest[0])
        if resource is None or len(rest) > 3 or kinds.gated_off(resource, self.gates):
            raise ApiError(404, "NotFound", "the server could not find the requested resource", {})
        name = rest[1] if len(rest) > 1 else ""
        subresource = rest[2] if len(rest) > 2 else ""
        if subresource and subresource not in resource.subresources:
            raise ApiError(404, "NotFound", "the server could not find the requested resource", {})
        return Route(resource, namespace, name, subresource, watch)

    def _verb(self, request: Request, route: Route) -> str:
        method = request.method
        if method == "GET":
            if route.name:
                return "get"
            return "watch" if route.watch or request.flag("watch") else "list"
        collection = {"POST": "create", "DELETE": "deletecollection"}
        item = {"PUT": "update", "PATCH": "patch", "DELETE": "delete", "POST": "create"}
        verb = (item if route.name else collection).get(method)
        if verb is None:
            raise ApiError(
                405,
                "MethodNotAllowed",
                f"the server does not allow this method on the requested resource ({method})",
            )
        return verb

    def _authorise(self, verb: str, route: Route, user: str) -> None:
        plural = route.resource.plural + (f"/{route.subresource}" if route.subresource else "")
        if (
            f"{verb} {plural}" in self.cluster.scenario.forbidden
            or f"{verb} {route.resource.plural}" in self.cluster.scenario.forbidden
        ):
            raise forbidden(verb, plural, route.resource.group, route.namespace, user=user, name=route.name)
        if verb not in route.resource.verbs:
            raise ApiError(
                405,
                "MethodNotAllowed",
                f"the server does not allow this method on the requested resource ({verb})",
            )

    # -- dispatch ------------------------------------------------------------------------------
    def _dispatch(self, request: Request, route: Route, verb: str) -> Response:
        if verb == "watch":
            return self._watch(request, route)
        with self.cluster.store.lock:
            if verb == "list":
                return self._list(request, route)
            if verb == "get":
                return self._get(request, route)
            return self._write(request, route, verb)

    def namespace_filter(self, route: Route) -> str | None:
        return route.namespace if route.resource.namespaced and route.namespace else None

    def matching(self, request: Request, route: Route) -> list[Obj]:
        """The objects a list or watch selects, sorted by namespace and name (do not mutate)."""
        selectors = (request.query.get("labelSelector"), request.query.get("fieldSelector"))
        namespace, resource = self.namespace_filter(route), route.resource.key
        return self.lists.get(
            (resource, namespace, *selectors),
            self.cluster.store.generation(resource),
            lambda: paging.select_sorted(self.cluster.store.items(resource, namespace), *selectors),
        )

    def _wants_table(self, request: Request) -> bool:
        return "as=Table" in request.header("accept")

    def _table(self, request: Request, route: Route, items: list[Obj], version: str) -> Response:
        include = request.query.get("includeObject", "")
        return Response(200, encode(crds.table(self.cluster.store, route.resource, items, version, include)))

    def _list(self, request: Request, route: Route) -> Response:
        items = self.matching(request, route)
        version = str(self.cluster.store.resource_version)
        if self._wants_table(request):
            return self._table(request, route, items, version)
        items, metadata = paging.page(items, request.query, version, self.snapshots)
        listing = {
            "kind": f"{route.resource.kind}List",
            "apiVersion": route.resource.api_version,
            "metadata": metadata,
            "items": items,
        }
        return Response(200, encode_list(listing))

    def _lookup(self, route: Route) -> Obj:
        obj = self.cluster.store.get(
            route.resource.key, route.namespace if route.resource.namespaced else "", route.name
        )
        if obj is None:
            raise not_found(route.resource.plural, route.name, route.resource.group)
        return obj

    def _get(self, request: Request, route: Route) -> Response:
        obj = self._lookup(route)
        if route.subresource == "log":
            return Response(200, self._log(request, obj).encode(), "text/plain")
        if self._wants_table(request):
            version = obj["metadata"]["resourceVersion"]
            return self._table(request, route, [obj], version)
        return Response(200, encode_object(obj))

    def _log(self, request: Request, pod: Obj) -> str:
        container = _log_container(request, pod)
        runtime = self.cluster.runtime.get(pod["metadata"]["uid"])
        if runtime is None or container not in runtime.logs:
            reason = _waiting_reason(pod, container) or "ContainerCreating"
            raise bad_request(
                f'container "{container}" in pod "{pod["metadata"]["name"]}" is waiting to start: {reason}'
            )
        log = runtime.logs[container]
        if request.query.get("previous") in {"true", "1"}:
            log = _previous_log(pod, container, runtime.previous_logs, log)
        return _trim_log(request, log() if callable(log) else log)

    # -- writes --------------------------------------------------------------------------------
    def _body(self, request: Request, route: Route) -> Obj:
        if protobuf.is_protobuf(request.header("content-type")):
            return protobuf.request_object(request.body, route.resource)
        try:
            body = json.loads(request.body or b"{}")
        except ValueError as error:
            raise bad_request(f"error decoding request body: {error}") from None
        if not isinstance(body, dict):
            raise bad_request("the request body must be a JSON object")
        return body

    def _dry_run(self, request: Request, options: Obj | None = None) -> bool:
        if request.query.get("dryRun") == "All":
            return True
        return bool(options and "All" in (options.get("dryRun") or []))

    def _write(self, request: Request, route: Route, verb: str) -> Response:
        writers = {"create": self._create, "update": self._update, "patch": self._patch}
        if verb in writers:
            return writers[verb](request, route)
        return self._delete(request, route, collection=verb == "deletecollection")

    def _create(self, request: Request, route: Route) -> Response:
        if route.resource.kind == "SelfSubjectAccessReview":
            user = self.access.user(request)
            return Response(201, encode(self._access_review(self._body(request, route), user)))
        if route.subresource == "token":
            body = self._body(request, route)
            issued = tokens.token_request(self.cluster.store, self.tokens, route.namespace, route.name, body)
            return Response(201, encode(issued))
        if route.subresource == "eviction":
            body = self._body(request, route)
            return evictions.evict(self.cluster, route.namespace, route.name, body, self._dry_run(request))
        fields = FieldValidation.from_query(request.query.get("fieldValidation"), "CreateOptions")
        created = writes.create(
            self.cluster,
            route.resource,
            route.namespace,
            self._body(request, route),
            self._dry_run(request),
            writer=Writer.of(request),
            fields=fields,
            admit=self._admission(request, route),
        )
        return _warned(Response(201, encode_object(created)), fields)

    def _update(self, request: Request, route: Route) -> Response:
        fields = FieldValidation.from_query(request.query.get("fieldValidation"), "UpdateOptions")
        result = writes.update(
            self.cluster,
            route.resource,
            route.namespace,
            route.name,
            subresource=route.subresource,
            body=self._body(request, route),
            dry_run=self._dry_run(request),
            writer=Writer.of(request),
            fields=fields,
            admit=self._admission(request, route),
        )
        return _warned(Response(200, encode_object(result)), fields)

    def _patch(self, request: Request, route: Route) -> Response:
        fields = FieldValidation.from_query(request.query.get("fieldValidation"), "PatchOptions")
        patched, was_created = writes.patch(
            self.cluster,
            route.resource,
            route.namespace,
            route.name,
            subresource=route.subresource,
            body=request.body,
            content_type=request.header("content-type").split(";")[0].strip(),
            writer=Writer.of(request),
            dry_run=self._dry_run(request),
            fields=fields,
            admit=self._admission(request, route),
        )
        return _warned(Response(201 if was_created else 200, encode_object(patched)), fields)

    def _admission(self, request: Request, route: Route) -> admission.Admit | None:
        """The ValidatingAdmissionPolicies' check of a write, evaluated under `rbac: enforce`."""
        if not self.access.enforce:
            return None
        user = self.access.user(request)
        write = admission.WriteRequest(
            route.resource, route.subresource, route.namespace, route.name, user, self._dry_run(request)
        )
        return admission.admission_for(self.cluster.store, write)

    def _delete(self, request: Request, route: Route, *, collection: bool) -> Response:
        cluster, resource = self.cluster, route.resource
        options = self._body(request, route) if request.body.strip() else {}
        grace = self._grace(request, options)
        dry_run = self._dry_run(request, options)
        if not collection:
            deleted = writes.delete(
                cluster, resource, route.namespace, route.name, grace=grace, dry_run=dry_run
            )
            return Response(200, encode_object(deleted))
        items = [
            writes.delete(
                cluster,
                resource,
                obj["metadata"].get("namespace", ""),
                obj["metadata"]["name"],
                grace=grace,
                dry_run=dry_run,
            )
            for obj in self.matching(request, route)
        ]
        listing = {
            "kind": f"{resource.kind}List",
            "apiVersion": resource.api_version,
            "metadata": {"resourceVersion": str(cluster.store.resource_version)},
            "items": items,
        }
        return Response(200, encode_list(listing))

    def _grace(self, request: Request, options: Obj) -> int | None:
        value = request.query.get("gracePeriodSeconds", options.get("gracePeriodSeconds"))
        if value is None or value == "":
            return None
        try:
            return int(value)
        except (TypeError, ValueError):
            raise bad_request(f"invalid gracePeriodSeconds {value!r}") from None

    def _access_review(self, body: Obj, user: tokens.UserInfo) -> Obj:
        attributes = (body.get("spec") or {}).get("resourceAttributes") or {}
        resource = attributes.get("resource", "")
        if attributes.get("subresource"):
            resource += "/" + attributes["subresource"]
        denied = f"{attributes.get('verb', '')} {resource}" in self.cluster.scenario.forbidden
        review = dict(body, kind="SelfSubjectAccessReview", apiVersion="authorization.k8s.io/v1")
        review["metadata"] = {"creationTimestamp": None}
        review["status"] = self.access.review(body.get("spec") or {}, user, denied)
        return review

    def _watch(self, request: Request, route: Route) -> Response:
        namespace = self.namespace_filter(route)
        return watch_response(
            self.cluster.store,
            request,
            route,
            namespace,
            lambda: self.matching(request, route),
            ttl_seconds=self.cluster.scenario.watch_ttl_seconds,
        )


def _openapi(path: str, gates: frozenset[str]) -> Response | None:
    """GET /openapi/v3 and /openapi/v3/<api/v1 | apis/GROUP/VERSION> (any ?hash= is ignored): the
    group/versions the scenario serves, as discovery lists them."""
    if path == "/openapi/v3":
        return Response(200, encode(openapi.root_document(gates)))
    if path.startswith("/openapi/v3/"):
        document = openapi.group_version_document(path.removeprefix("/openapi/v3/"), gates)
        return None if document is None else Response(200, document)
    return None


def _warned(response: Response, fields: FieldValidation) -> Response:
    """Add a `Warning: 299` header per unknown field that fieldValidation=Warn dropped."""
    response.headers += [("Warning", warning_header(message)) for message in fields.warnings]
    return response


def _log_container(request: Request, pod: Obj) -> str:
    """The container whose log is asked for; a pod with one container needs no name."""
    names = [container["name"] for container in pod["spec"].get("containers") or []]
    container = request.query.get("container") or (names[0] if len(names) == 1 else "")
    pod_name = pod["metadata"]["name"]
    if not container:
        raise bad_request(
            f"a container name must be specified for pod {pod_name}, choose one of: [{' '.join(names)}]"
        )
    if container not in names + [c["name"] for c in pod["spec"].get("initContainers") or []]:
        raise bad_request(f"container {container} is not valid for pod {pod_name}")
    return container


def _previous_log(pod: Obj, container: str, previous: dict[str, Any], current: Any) -> Any:
    """The log of the container's last terminated run (`previous=true`): kept from before its
    restart, else (not restarted yet, backing off) the current one, which is that run's."""
    if container in previous:
        return previous[container]
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    if any(s.get("name") == container and (s.get("lastState") or {}).get("terminated") for s in statuses):
        return current
    pod_name = pod["metadata"]["name"]
    raise bad_request(f'previous terminated container "{container}" in pod "{pod_name}" not found')


def _waiting_reason(pod: Obj, container: str) -> str:
    for status in pod.get("status", {}).get("containerStatuses") or []:
        if status.get("name") == container:
            return str(status.get("state", {}).get("waiting", {}).get("reason") or "")
    return ""


def _trim_log(request: Request, text: str) -> str:
    """Apply tailLines, then limitBytes, as the kubelet does."""
    tail = request.query.get("tailLines")
    if tail:
        try:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[-int(tail) :]) if int(tail) > 0 else ""
        except ValueError:
            raise bad_request(f"invalid tailLines {tail!r}") from None
    limit = request.query.get("limitBytes")
    if limit and limit.isdigit():
        text = text.encode()[: int(limit)].decode(errors="ignore")
    return text
