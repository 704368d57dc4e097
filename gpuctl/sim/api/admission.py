"""ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1) as kube-apiserver evaluates them,
under `rbac: enforce`: after a create, update or patch has been applied and validated and before
it is stored, every binding whose policy matches the request has the policy's matchConditions,
variables and validations evaluated in CEL (cel-python, the Common Expression Language's Python
implementation) with `object`, `oldObject`, `request`, `namespaceObject`, `params` (always null:
parameter resources are not served) and `variables` bound. A validation that is false denies
the request as the API server does: 422 Invalid, "ValidatingAdmissionPolicy 'P' with binding
'B' denied request: MESSAGE".

Not evaluated: namespace and object selectors (a policy or binding with one matches nothing,
so a fence is never applied more widely than written), the `authorizer` library, audit
annotations, and the Warn and Audit actions (only Deny acts).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpuctl.sim.api.api_errors import ApiError
from gpuctl.sim.api.kinds import ResourceType
from gpuctl.sim.api.tokens import UserInfo
from gpuctl.sim.runtime.store import Store

Obj = dict[str, Any]
GROUP = "admissionregistration.k8s.io"
POLICIES, BINDINGS = f"validatingadmissionpolicies.{GROUP}", f"validatingadmissionpolicybindings.{GROUP}"
# Called with (oldObject, object) of a write about to be stored; raises the denial.
Admit = Callable[[Obj | None, Obj], None]
_CODE_OF_REASON = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}


@dataclass(frozen=True)
class WriteRequest:
    """What a policy is asked about: the resource written, by whom."""

    resource: ResourceType
    subresource: str
    namespace: str
    name: str
    user: UserInfo
    dry_run: bool


class EvaluationError(Exception):
    """An expression that does not compile or whose evaluation fails."""


@functools.lru_cache(maxsize=512)
def _program(expression: str) -> Any:
    import celpy

    try:
        environment = celpy.Environment()
        return environment.program(environment.compile(expression))
    except Exception as error:  # celpy raises its parser's errors: any of them is the policy's fault
        raise EvaluationError(f"compilation failed: {error}") from None


def evaluate(expression: str, activation: Obj) -> Any:
    """`expression`'s value in `activation` (CEL values), EvaluationError when it has none."""
    try:
        return _program(expression).evaluate(activation)
    except EvaluationError:
        raise
    except Exception as error:  # CELEvalError, or the library's own TypeError/KeyError on bad input
        raise EvaluationError(str(error.args[0] if error.args else error)) from None


def admission_for(store: Store, request: WriteRequest) -> Admit | None:
    """The check of `request`'s writes, None when no policy binding exists (the usual cluster)."""
    if not store.items(BINDINGS):
        return None
    return functools.partial(_admit, store, request)


def _admit(store: Store, request: WriteRequest, old: Obj | None, new: Obj) -> None:
    operation = "CREATE" if old is None else "UPDATE"
    request = dataclasses.replace(request, name=request.name or str(new["metadata"].get("name", "")))
    activation: Obj | None = None
    for binding in sorted(store.items(BINDINGS), key=lambda item: item["metadata"]["name"]):
        spec = binding.get("spec") or {}
        policy = store.get(POLICIES, "", str(spec.get("policyName") or ""))
        actions = spec.get("validationActions") or []
        if policy is None or "Deny" not in actions:
            continue
        policy_spec = policy.get("spec") or {}
        if not _matches(policy_spec.get("matchConstraints"), request, operation, required=True):
            continue
        if spec.get("matchResources") and not _matches(spec["matchResources"], request, operation):
            continue
        if activation is None:
            activation = _activation(request, operation, old, new)
        denial = _decide(policy_spec, activation)
        if denial:
            raise _denied(request, policy["metadata"]["name"], binding["metadata"]["name"], *denial)


# -- matching ----------------------------------------------------------------------------------
def _matches(match: Obj | None, request: WriteRequest, operation: str, *, required: bool = False) -> bool:
    """A policy's matchConstraints (its resourceRules are required) or a binding's matchResources."""
    match = match or {}
    if match.get("namespaceSelector", {}).get("matchLabels") or match.get("objectSelector", {}).get(
        "matchLabels"
    ):
        return False  # selectors are not evaluated: match nothing rather than too much
    rules = match.get("resourceRules") or []
    if required and not rules:
        return False
    if rules and not any(_rule_matches(rule, request, operation) for rule in rules):
        return False
    return not any(
        _rule_matches(rule, request, operation) for rule in match.get("excludeResourceRules") or []
    )


def _rule_matches(rule: Obj, request: WriteRequest, operation: str) -> bool:
    resource = request.resource
    names = rule.get("resourceNames") or []
    return (
        _listed(rule.get("apiGroups"), resource.group)
        and _listed(rule.get("apiVersions"), resource.version)
        and _listed(rule.get("operations"), operation)
        and _resource_listed(rule.get("resources") or [], resource.plural, request.subresource)
        and (not names or request.name in names)
    )


def _listed(allowed: Sequence[str] | None, value: str) -> bool:
    return any(item in ("*", value) for item in allowed or [])


def _resource_listed(resources: Sequence[str], plural: str, subresource: str) -> bool:
    """ "nodes" is the resource alone, "nodes/status" that subresource, "*" every resource,
    "*/*" everything, "nodes/*" every subresource of nodes (RuleWithOperations)."""
    wanted = f"{plural}/{subresource}" if subresource else plural
    for entry in resources:
        main, _, sub = entry.partition("/")
        if entry in (wanted, "*/*") or (entry == "*" and not subresource):
            return True
        if sub == "*" and main == plural and subresource:
            return True
        if main == "*" and sub == subresource and subresource:
            return True
    return False


# -- evaluation --------------------------------------------------------------------------------
def _activation(request: WriteRequest, operation: str, old: Obj | None, new: Obj) -> Obj:
    from celpy.adapter import json_to_cel

    resource = request.resource
    user = request.user
    review = {
        "kind": {"group": resource.group, "version": resource.version, "kind": resource.kind},
        "resource": {"group": resource.group, "version": resource.version, "resource": resource.plural},
        "subResource": request.subresource,
        "name": request.name,
        "namespace": request.namespace,
        "operation": operation,
        "userInfo": {"username": user.name, "groups": list(user.groups)},
        "dryRun": request.dry_run,
    }
    return {
        "object": json_to_cel(new),
        "oldObject": json_to_cel(old),
        "request": json_to_cel(review),
        "params": json_to_cel(None),
        "namespaceObject": json_to_cel(None),
    }


def _decide(spec: Obj, activation: Obj) -> tuple[str, str] | None:
    """(message, reason) of the first denial of a policy whose matchConditions all hold, None when
    the request passes (or an error is ignored under failurePolicy: Ignore)."""
    fail = spec.get("failurePolicy", "Fail") != "Ignore"
    try:
        for condition in spec.get("matchConditions") or []:
            if not _true(evaluate(str(condition.get("expression", "")), activation)):
                return None
    except EvaluationError as error:
        return (f"failed to evaluate match conditions: {error}", "Invalid") if fail else None
    bound = dict(activation, variables=_variables(spec.get("variables") or [], activation))
    for validation in spec.get("validations") or []:
        expression = str(validation.get("expression", ""))
        try:
            allowed = _true(evaluate(expression, bound))
        except EvaluationError as error:
            if fail:
                return f"expression '{expression}' resulted in error: {error}", "Invalid"
            continue
        if not allowed:
            return _message(validation, expression, bound), str(validation.get("reason") or "Invalid")
    return None


def _true(value: Any) -> bool:
    """A CEL `true` (a non-bool result is a failed check, as kube-apiserver's type check makes it)."""
    from celpy.celtypes import BoolType

    return isinstance(value, BoolType) and bool(value)


def _variables(variables: list[Obj], activation: Obj) -> Any:
    """The policy's variables, each seeing those before it; one that fails is an error only for
    the expressions that use it (kube-apiserver evaluates them lazily)."""
    import celpy
    from celpy.evaluation import CELEvalError

    values = celpy.celtypes.MapType()
    for variable in variables:
        name = celpy.celtypes.StringType(str(variable.get("name", "")))
        try:
            values[name] = evaluate(str(variable.get("expression", "")), dict(activation, variables=values))
        except EvaluationError as error:
            values[name] = CELEvalError(str(error))  # type: ignore[assignment]  # an error is a CEL value too
    return values


def _message(validation: Obj, expression: str, activation: Obj) -> str:
    if validation.get("messageExpression"):
        try:
            said = evaluate(str(validation["messageExpression"]), activation)
            if isinstance(said, str) and said.strip():
                return str(said)
        except EvaluationError:
            pass  # kube-apiserver falls back to the static message
    return str(validation.get("message") or f"failed expression: {expression}")


def _denied(request: WriteRequest, policy: str, binding: str, message: str, reason: str) -> ApiError:
    """admission.NewForbidden's wording, with the validation's reason and its code."""
    said = f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {message}"
    resource = request.resource
    qualified = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
    details = {
        "name": request.name,
        "group": resource.group,
        "kind": resource.plural,
        "causes": [{"message": said}],
    }
    code = _CODE_OF_REASON.get(reason, 422)
    return ApiError(code, reason, f'{qualified} "{request.name}" is forbidden: {said}', details)
