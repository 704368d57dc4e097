"""Who may talk to the simulated cluster: the holder of its bearer token, over a loopback address.

A sim started with `--hosts-from` runs pod commands on real hosts over the operator's SSH session,
so a request that reaches it is as good as a shell there. Three checks stand before the API, in
the order a request meets them, each answered the way a real API server answers:
- `Host` must name a loopback address with the sim's own port (421). A web page the operator
  visits can make the browser send requests to 127.0.0.1 under a name of its own (DNS
  rebinding); such a request carries that name, not a loopback one.
- `Authorization: Bearer <token>` must carry the sim's random token (401, as for any bad
  credential), which exists only in the kubeconfig the sim wrote, readable by its owner alone,
  or a ServiceAccount token the sim issued (TokenRequest API) and that has not expired. Who the
  token is, and what that user may do, is the API's to decide (sim/api/tokens.py, authz.py).
- A body must be of a Kubernetes media type (415). A browser's cross-origin "simple" POST can
  only send text/plain, form or multipart bodies, and says so in Content-Type, so none of those
  gets near the API. No Content-Type at all reads as JSON, as the API server reads it (the
  official Python client sends creates without one).
The checks run before a body is read: a refused client cannot make the sim buffer its upload.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from gpuctl.sim.api.api_errors import ApiError
from gpuctl.sim.api.messages import Response, encode
from gpuctl.sim.api.tokens import TokenRegistry, bearer_token

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
# What a real API server decodes: JSON and its patch flavours, YAML (and apply-patch+yaml),
# protobuf. CBOR is left out: the sim does not decode it.
_MEDIA_TYPES = frozenset({"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"})
_MEDIA_SUFFIXES = ("+json", "+yaml")


def new_token() -> str:
    """A bearer token for one sim: 256 random bits, URL-safe (a kubeconfig holds it as is)."""
    return secrets.token_urlsafe(32)


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def accepted_media_type(content_type: str) -> bool:
    media_type = _media_type(content_type)
    return (
        media_type in _MEDIA_TYPES
        or media_type == ""
        or (media_type.startswith("application/") and media_type.endswith(_MEDIA_SUFFIXES))
    )


class AccessGate:
    """The three checks for one serving sim: its token, its port and the names it answers to."""

    def __init__(self, token: str, port: int, tokens: TokenRegistry | None = None) -> None:
        self.token = token
        self.tokens = tokens or TokenRegistry(token)
        self._hosts = {f"{name}:{port}" for name in LOOPBACK_NAMES}

    def trust_front(self, port: int) -> None:
        """Also answer to loopback names with `port`: a TLS terminator on this machine that
        relays to the sim (as the in-cluster tests put one in front of it) keeps the client's
        Host, which names the front's port."""
        self._hosts |= {f"{name}:{port}" for name in LOOPBACK_NAMES}

    def refusal(self, headers: Mapping[str, str]) -> Response | None:
        """The answer to a request that may not reach the API, None for one that may.
        `headers` are keyed by lower-case name."""
        host = headers.get("host", "").strip().lower()
        if host not in self._hosts:
            return _status(
                421,
                "BadRequest",
                f"the Host header {host!r} is not this server's loopback address: "
                "the simulated cluster answers only to 127.0.0.1, localhost or [::1] with its port",
            )
        if self.tokens.user(bearer_token(headers.get("authorization", ""))) is None:
            return _status(401, "Unauthorized", "Unauthorized")
        content_type = headers.get("content-type", "")
        if _has_body(headers) and not accepted_media_type(content_type):
            return _status(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format ({_media_type(content_type)!r}) - "
                "accepted media types include: application/json, application/yaml, "
                "application/vnd.kubernetes.protobuf",
            )
        return None


def _has_body(headers: Mapping[str, str]) -> bool:
    return headers.get("content-length", "0").strip() not in ("", "0") or "transfer-encoding" in headers


def _status(code: int, reason: str, message: str) -> Response:
    return Response(code, encode(ApiError(code, reason, message).status()))
