"""DeviceTaintRules (resource.k8s.io/v1, Kubernetes 1.37): listed by label, created and deleted;
a rule already there (409) or already gone (404) is no error."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.kube.client import api_call
from gpuctl.kube.dra import api_path
from gpuctl.kube.raw import JsonDict, get_list, name_of
from gpuctl.kube.rest_requests import request_json

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

RULES = "devicetaintrules"
VERSION = "v1"


def rule_names(api_client: ApiClient, selector: str) -> set[str] | None:
    """The names of the rules `selector` selects; None where DeviceTaintRules are not served
    (before Kubernetes 1.37, or DRADeviceTaints off)."""
    from kubernetes.client.exceptions import ApiException

    try:
        with api_call("list", RULES):
            body = get_list(api_client, api_path(VERSION, RULES), query={"labelSelector": selector})
    except ApiException as error:
        if error.status == 404:
            return None
        raise
    return {name_of(rule) for rule in body.get("items") or []}


def create_rule(api_client: ApiClient, manifest: JsonDict) -> None:
    from kubernetes.client.exceptions import ApiException

    try:
        with api_call("create", RULES):
            request_json(api_client, "POST", api_path(VERSION, RULES), body=manifest)
    except ApiException as error:
        if error.status != 409:  # already there: another run created it first
            raise


def delete_rule(api_client: ApiClient, name: str) -> None:
    from kubernetes.client.exceptions import ApiException

    try:
        with api_call("delete", f"devicetaintrule {name}"):
            request_json(api_client, "DELETE", api_path(VERSION, RULES) + "/{name}", name=name)
    except ApiException as error:
        if error.status != 404:  # gone already
            raise
