"""gpuctl/kube/field_ownership.py: what server-side apply will do, read from managedFields as the
API server writes them (fieldsV1 trees of the shape a real cluster returns)."""

from __future__ import annotations

import copy
from typing import Any

from gpuctl.kube.field_ownership import (
    adopted_managed_fields,
    foreign_items,
    is_subset,
    undeclared_owned,
    without_items,
)

SOCKETS = "/var/lib/kubelet/device-plugins"
OLD_VOLUME = 'k:{"name":"device-plugin"}'
NEW_VOLUME = 'k:{"name":"kubelet-device-plugins-dir"}'
CONTAINER = 'k:{"name":"ctr"}'
VOLUMES = ("f:spec", "f:template", "f:spec", "f:volumes")


def _pod_spec(*volumes: str, env: tuple[str, ...] = ("A",)) -> dict[str, Any]:
    return {
        "containers": [
            {
                "name": "ctr",
                "env": [{"name": name, "value": "1"} for name in env],
                "volumeMounts": [{"name": volumes[0], "mountPath": SOCKETS}],
            }
        ],
        "volumes": [{"name": name, "hostPath": {"path": SOCKETS}} for name in volumes],
    }


def _daemonset(*volumes: str, managed: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "plugin", "namespace": "kube-system", "resourceVersion": "7"}
    if managed is not None:
        metadata["managedFields"] = managed
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": metadata,
        "spec": {"template": {"spec": _pod_spec(*volumes, **spec)}},
    }


def _volume_fields(name: str) -> dict[str, Any]:
    return {f'k:{{"name":"{name}"}}': {".": {}, "f:name": {}, "f:hostPath": {"f:path": {}}}}


def _entry(manager: str, operation: str, *volumes: str, env: tuple[str, ...] = ()) -> dict[str, Any]:
    container: dict[str, Any] = {".": {}, "f:name": {}}
    if env:
        container["f:env"] = {
            f'k:{{"name":"{name}"}}': {".": {}, "f:name": {}, "f:value": {}} for name in env
        }
    volumes_tree: dict[str, Any] = {}
    for name in volumes:
        volumes_tree.update(_volume_fields(name))
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": "apps/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:spec": {
                "f:template": {"f:spec": {"f:containers": {CONTAINER: container}, "f:volumes": volumes_tree}}
            }
        },
    }


def test_lists_merged_by_key_may_hold_other_items_in_any_order() -> None:
    live = _daemonset("zzz", "kubelet-device-plugins-dir", env=("B", "A"))
    wanted = _daemonset("kubelet-device-plugins-dir", env=("A",))
    wanted["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = live["spec"]["template"]["spec"][
        "containers"
    ][0]["volumeMounts"]
    assert is_subset(wanted, live)
    wanted["spec"]["template"]["spec"]["volumes"][0]["hostPath"]["path"] = "/elsewhere"
    assert not is_subset(wanted, live)


def test_an_atomic_list_must_match_element_by_element() -> None:
    assert is_subset({"tolerations": [{"key": "a"}]}, {"tolerations": [{"key": "a", "effect": ""}]})
    assert not is_subset({"tolerations": [{"key": "a"}]}, {"tolerations": [{"key": "a"}, {"key": "b"}]})


def test_what_gpuctl_applied_and_no_longer_renders_must_be_sent() -> None:
    live = _daemonset("kubelet-device-plugins-dir", env=("A", "CONFIG_FILE"))
    live["metadata"]["managedFields"] = [
        _entry("gpuctl", "Apply", "kubelet-device-plugins-dir", env=("A", "CONFIG_FILE"))
    ]
    wanted = _daemonset("kubelet-device-plugins-dir", env=("A",))
    assert undeclared_owned(wanted, live, "gpuctl") == [
        '.spec.template.spec.containers[name="ctr"].env[name="CONFIG_FILE"]',
        '.spec.template.spec.containers[name="ctr"].env[name="CONFIG_FILE"].name',
        '.spec.template.spec.containers[name="ctr"].env[name="CONFIG_FILE"].value',
    ]
    assert (
        undeclared_owned(_daemonset("kubelet-device-plugins-dir", env=("A", "CONFIG_FILE")), live, "gpuctl")
        == []
    )


def test_items_another_manager_added_to_declared_lists_are_found_and_adopted() -> None:
    foreign = _entry("kubectl-client-side-apply", "Update", "device-plugin", env=("A",))
    mine = _entry("gpuctl", "Apply", "kubelet-device-plugins-dir", env=("A",))
    status = {
        "manager": "kube-controller-manager",
        "operation": "Update",
        "subresource": "status",
        "fieldsV1": {},
    }
    live = _daemonset("device-plugin", "kubelet-device-plugins-dir", managed=[foreign, mine, status])
    wanted = _daemonset("kubelet-device-plugins-dir")
    found = foreign_items(wanted, live, "gpuctl")
    assert found == {(*VOLUMES, OLD_VOLUME): ["kubectl-client-side-apply"]}

    before = copy.deepcopy(live)
    adopted = adopted_managed_fields(live, list(found), "gpuctl")
    assert live == before  # a new list, the object untouched
    by_manager = {entry["manager"]: entry for entry in adopted}
    assert set(by_manager) == {"kubectl-client-side-apply", "gpuctl", "kube-controller-manager"}
    assert OLD_VOLUME in by_manager["gpuctl"]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:volumes"]
    assert NEW_VOLUME in by_manager["gpuctl"]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:volumes"]
    # The foreign entry keeps its other fields; the emptied volumes node is gone, not a leaf.
    kept = by_manager["kubectl-client-side-apply"]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]
    assert "f:volumes" not in kept
    assert CONTAINER in kept["f:containers"]

    removed = without_items(live, list(found))
    assert [volume["name"] for volume in removed["spec"]["template"]["spec"]["volumes"]] == [
        "kubelet-device-plugins-dir"
    ]


def test_an_object_gpuctl_never_applied_gets_an_applier_entry_and_empty_entries_go() -> None:
    foreign = _entry("kubectl-create", "Update", "device-plugin")
    foreign["fieldsV1"] = {
        "f:spec": {"f:template": {"f:spec": {"f:volumes": _volume_fields("device-plugin")}}}
    }
    live = _daemonset("device-plugin", managed=[foreign])
    items = [(*VOLUMES, OLD_VOLUME)]
    adopted = adopted_managed_fields(live, items, "gpuctl")
    assert [(entry["manager"], entry["operation"]) for entry in adopted] == [("gpuctl", "Apply")]
    assert adopted[0]["fieldsV1"] == {
        "f:spec": {"f:template": {"f:spec": {"f:volumes": _volume_fields("device-plugin")}}}
    }
