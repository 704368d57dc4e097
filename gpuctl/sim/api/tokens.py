"""Who a bearer token is: the sim's own admin token, or a ServiceAccount token the TokenRequest API
(`POST .../serviceaccounts/NAME/token`, what `kubectl create token` sends) handed out.

As on a real cluster, a ServiceAccount token names its account and is bound to that object: it
stops working when it expires or when the ServiceAccount it was issued for is deleted (or
re-created: another uid). Tokens are opaque random strings kept here, not signed JWTs: nothing in
gpuctl or kubectl reads a token's claims.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpuctl.sim.api.api_errors import ApiError, not_found
from gpuctl.sim.runtime.store import Store, rfc3339

Obj = dict[str, Any]

AUTHENTICATED = "system:authenticated"
# The API server's defaults for a TokenRequest without them (kubeadm's --api-audiences is the
# issuer, https://kubernetes.default.svc.cluster.local).
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600  # "may not specify a duration less than 10 minutes"
MAX_EXPIRATION_SECONDS = 1 << 32
DEFAULT_AUDIENCES = ("https://kubernetes.default.svc.cluster.local",)
# The API server accepts a ServiceAccount token only where its audiences include the server's own
# (--api-audiences): a token requested for another service (a vault, a webhook) is no credential
# here, or any service handed one could replay it against the cluster.
API_AUDIENCE = DEFAULT_AUDIENCES[0]


@dataclass(frozen=True)
class UserInfo:
    """An authenticated requester, as the API server's authenticators describe one."""

    name: str
    groups: tuple[str, ...]
    # A ServiceAccount's (namespace, name, uid): its token is valid only while that object is.
    service_account: tuple[str, str, str] | None = None


# The holder of the sim's kubeconfig: a cluster admin, as kubeadm's admin.conf user is (its
# certificate's organisation is system:masters). The name stays what 403s have always named.
ADMIN = UserInfo("gpuctl-sim", ("system:masters", AUTHENTICATED))


def service_account_user(namespace: str, name: str, uid: str) -> UserInfo:
    return UserInfo(
        f"system:serviceaccount:{namespace}:{name}",
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED),
        (namespace, name, uid),
    )


@dataclass(frozen=True)
class _Issued:
    user: UserInfo
    expires_at: float
    for_api: bool  # its audiences include the API server's


class TokenRegistry:
    """The admin token and the ServiceAccount tokens issued since the sim started."""

    def __init__(self, admin_token: str, clock: Callable[[], float] = time.time) -> None:
        self.admin_token = admin_token
        self._clock = clock
        self._issued: dict[str, _Issued] = {}
        self._lock = threading.Lock()

    def user(self, token: str) -> UserInfo | None:
        """Who `token` is, None for an unknown or expired one or one issued for another audience
        (the caller answers 401)."""
        if not token:
            return None
        if hmac.compare_digest(token.encode(), self.admin_token.encode()):
            return ADMIN
        with self._lock:
            issued = self._issued.get(token)
            if issued is not None and issued.expires_at <= self._clock():
                del self._issued[token]
                issued = None
        return None if issued is None or not issued.for_api else issued.user

    def issue(
        self, user: UserInfo, expiration_seconds: int, audiences: tuple[str, ...] = DEFAULT_AUDIENCES
    ) -> tuple[str, float]:
        """A new token for `user`, valid for `audiences`, and the moment it expires."""
        token = secrets.token_urlsafe(32)
        expires_at = self._clock() + expiration_seconds
        with self._lock:
            self._issued[token] = _Issued(user, expires_at, API_AUDIENCE in audiences)
        return token, expires_at


def bearer_token(authorization: str) -> str:
    """The token of an `Authorization: Bearer TOKEN` header, "" for any other."""
    scheme, _, credential = authorization.strip().partition(" ")
    return credential.strip() if scheme.lower() == "bearer" else ""


def still_bound(store: Store, user: UserInfo) -> bool:
    """A ServiceAccount token's account still exists (the same object, not one re-created)."""
    if user.service_account is None:
        return True
    namespace, name, uid = user.service_account
    account = store.get("serviceaccounts", namespace, name)
    return account is not None and account["metadata"].get("uid") == uid


def token_request(store: Store, registry: TokenRegistry, namespace: str, name: str, body: Obj) -> Obj:
    """The answer to `POST /api/v1/namespaces/NS/serviceaccounts/NAME/token`: the TokenRequest
    with `status.token` and `status.expirationTimestamp` (caller holds the store's lock)."""
    account = store.get("serviceaccounts", namespace, name)
    if account is None:
        raise not_found("serviceaccounts", name)
    spec = dict(body.get("spec") or {})
    seconds = spec.get("expirationSeconds") or DEFAULT_EXPIRATION_SECONDS
    _check_expiration(name, seconds)
    user = service_account_user(namespace, name, account["metadata"]["uid"])
    audiences = tuple(spec.get("audiences") or DEFAULT_AUDIENCES)
    token, expires_at = registry.issue(user, int(seconds), audiences)
    spec.update(
        audiences=list(audiences),
        expirationSeconds=int(seconds),
        boundObjectRef=spec.get("boundObjectRef"),
    )
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": rfc3339()},
        "spec": spec,
        "status": {"token": token, "expirationTimestamp": rfc3339(expires_at)},
    }


def _check_expiration(name: str, seconds: Any) -> None:
    """The API server's validation of spec.expirationSeconds."""
    problem = ""
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        problem = "must be an integer"
    elif seconds < MIN_EXPIRATION_SECONDS:
        problem = "may not specify a duration less than 10 minutes"
    elif seconds > MAX_EXPIRATION_SECONDS:
        problem = "may not specify a duration larger than 2^32 seconds"
    if problem:
        field = f"spec.expirationSeconds: Invalid value: {seconds!r}: {problem}"
        raise ApiError(
            422,
            "Invalid",
            f'TokenRequest.authentication.k8s.io "{name}" is invalid: {field}',
            {"name": name, "group": "authentication.k8s.io", "kind": "TokenRequest"},
        )
