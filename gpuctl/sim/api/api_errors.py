"""API errors as the API server returns them: a meta/v1 Status object with reason and code."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str, details: Obj | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> Obj:
        status: Obj = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            status["details"] = self.details
        return status


def not_found(plural: str, name: str, group: str = "") -> ApiError:
    qualified = f"{plural}.{group}" if group else plural
    return ApiError(
        404, "NotFound", f'{qualified} "{name}" not found', {"name": name, "group": group, "kind": plural}
    )


def already_exists(plural: str, name: str, group: str = "") -> ApiError:
    qualified = f"{plural}.{group}" if group else plural
    return ApiError(
        409,
        "AlreadyExists",
        f'{qualified} "{name}" already exists',
        {"name": name, "group": group, "kind": plural},
    )


def conflict(plural: str, name: str, group: str = "") -> ApiError:
    qualified = f"{plural}.{group}" if group else plural
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
        {"name": name, "group": group, "kind": plural},
    )


def invalid(kind: str, name: str, errors: list[str], group: str = "") -> ApiError:
    causes = []
    for error in errors:
        field, _, message = error.partition(": ")
        causes.append({"reason": "FieldValueInvalid", "message": message, "field": field})
    return ApiError(
        422,
        "Invalid",
        f'{kind} "{name}" is invalid: {errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"}',
        {"name": name, "group": group, "kind": kind, "causes": causes},
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def forbidden(
    verb: str,
    plural: str,
    group: str,
    namespace: str,
    *,
    user: str = "gpuctl-sim",
    name: str = "",
    reason: str = "",
) -> ApiError:
    """The authorization filter's 403 (apiserver responsewriters.Forbidden + NewForbidden):
    `plural` may carry a subresource ("pods/log"), which only the "cannot" part names."""
    resource = plural.split("/", 1)[0]
    qualified = f"{resource}.{group}" if group else resource
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    said = f'User "{user}" cannot {verb} resource "{plural}" in API group "{group}" {scope}'
    named = f' "{name}"' if name else ""
    message = f"{qualified}{named} is forbidden: {said}" + (f": {reason}" if reason else "")
    details = {"name": name, "group": group, "kind": resource} if name else {"group": group, "kind": resource}
    return ApiError(403, "Forbidden", message, details)


def forbidden_path(verb: str, path: str, *, user: str, reason: str = "") -> ApiError:
    """The 403 of a non-resource request (discovery, /version, /openapi)."""
    message = f'forbidden: User "{user}" cannot {verb} path "{path}"' + (f": {reason}" if reason else "")
    return ApiError(403, "Forbidden", message, {})
