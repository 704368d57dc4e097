"""The sim's field sets and ownership (gpuctl/sim/api/fieldsets.py, ownership.py), without a server:
what an apply owns, how fieldsV1 spells it, and what updates and applies do to other managers."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpuctl.sim.api import fieldsets, kinds, ownership
from gpuctl.sim.api.api_errors import ApiError
from gpuctl.sim.api.ownership import Writer

DAEMONSETS = kinds.lookup("apps", "v1", "daemonsets")
CONFIGMAPS = kinds.lookup("", "v1", "configmaps")
CTR = 'k:{"name":"ctr"}'


def _daemonset(image: str = "plugin:1", mig: str = "none") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "plugin", "namespace": "kube-system", "labels": {"app": "plugin"}},
        "spec": {
            "selector": {"matchLabels": {"app": "plugin"}},
            "template": {
                "spec": {
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                    "containers": [
                        {
                            "name": "ctr",
                            "image": image,
                            "env": [{"name": "MIG_STRATEGY", "value": mig}],
                            "ports": [{"containerPort": 8080}],
                        }
                    ],
                }
            },
        },
    }


def _fields(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    entry = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == manager)
    return dict(entry["fieldsV1"])


def test_an_applied_configuration_owns_its_leaves_and_list_items() -> None:
    owned = fieldsets.applied(_daemonset())
    assert fieldsets.to_fields_v1(p for p in owned if p[0] == ("f", "spec")) == {
        "f:spec": {
            "f:selector": {},  # LabelSelector is atomic: one value
            "f:template": {
                "f:spec": {
                    "f:containers": {
                        CTR: {
                            ".": {},
                            "f:env": {'k:{"name":"MIG_STRATEGY"}': {".": {}, "f:name": {}, "f:value": {}}},
                            "f:image": {},
                            "f:name": {},
                            "f:ports": {  # keyed by containerPort and protocol, which defaults to TCP
                                'k:{"containerPort":8080,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}
                            },
                        }
                    },
                    "f:tolerations": {},  # no list type: atomic
                }
            },
        }
    }
    assert (("f", "metadata"), ("f", "labels"), ("f", "app")) in owned


def test_fields_v1_round_trips_and_names_fields_like_the_api_server() -> None:
    daemonset = _daemonset()
    daemonset["metadata"]["finalizers"] = ["a/b"]
    owned = fieldsets.applied(daemonset)
    encoded = fieldsets.to_fields_v1(owned)
    assert encoded["f:metadata"]["f:finalizers"] == {'v:"a/b"': {}}  # a set list
    assert fieldsets.from_fields_v1(encoded) == owned
    port = next(p for p in owned if fieldsets.field_name(p[:-1]) == "ports")
    assert fieldsets.path_string(port) == (
        '.spec.template.spec.containers[name="ctr"].ports[containerPort=8080,protocol="TCP"]'
    )
    assert fieldsets.path_string((("f", "metadata"), ("f", "finalizers"), ("v", "a/b"))) == (
        '.metadata.finalizers[="a/b"]'
    )


def test_a_list_with_duplicate_keys_is_one_value() -> None:
    env = [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]
    path: fieldsets.FieldPath = (("f", "env"),)
    assert fieldsets.list_keys(path, env) is None
    assert fieldsets.list_keys(path, env[:1]) == ("name",)


def test_the_default_manager_is_the_user_agent_product() -> None:
    assert Writer(user_agent="kubectl/v1.31.2 (linux/amd64) kubernetes/5864a46").manager == "kubectl"
    assert Writer(user_agent="OpenAPI-Generator/31.0.0/python").manager == "OpenAPI-Generator"
    assert Writer("kubectl-edit", "kubectl/v1.31.2").manager == "kubectl-edit"


def test_an_update_takes_what_it_changes_from_the_applier() -> None:
    live = ownership.apply(DAEMONSETS, None, _daemonset(), Writer("gpuctl"), "")
    edited = copy.deepcopy(live)
    edited["spec"]["template"]["spec"]["containers"][0]["image"] = "plugin:2"
    edited["metadata"]["labels"]["team"] = "gpu"
    ownership.record_update(DAEMONSETS, live, edited, Writer("kubectl-edit"), "")
    edit = _fields(edited, "kubectl-edit")
    assert edit == {
        "f:metadata": {"f:labels": {"f:team": {}}},
        "f:spec": {"f:template": {"f:spec": {"f:containers": {CTR: {"f:image": {}}}}}},
    }
    assert "f:image" not in _fields(edited, "gpuctl")["f:spec"]["f:template"]["f:spec"]["f:containers"][CTR]
    entry = next(e for e in edited["metadata"]["managedFields"] if e["manager"] == "kubectl-edit")
    assert (entry["operation"], entry["apiVersion"]) == ("Update", "apps/v1")


def test_a_create_owns_the_maps_it_creates_but_not_the_structs() -> None:
    created = _daemonset()
    ownership.record_update(DAEMONSETS, None, created, Writer("kubectl-create"), "")
    fields = _fields(created, "kubectl-create")
    assert fields["f:metadata"]["f:labels"] == {".": {}, "f:app": {}}
    assert "." not in fields["f:spec"]
    assert fields["f:spec"]["f:template"]["f:spec"]["f:containers"][CTR]["f:env"]["."] == {}


def _conflicted(live: dict[str, Any], config: dict[str, Any]) -> ApiError:
    with pytest.raises(ApiError) as refused:
        ownership.apply(DAEMONSETS, live, config, Writer("gpuctl"), "")
    return refused.value


def test_applying_over_other_managers_fields_is_a_conflict_naming_each() -> None:
    live = ownership.apply(DAEMONSETS, None, _daemonset(), Writer("gpuctl"), "")
    changes = (
        ("kubectl-edit", {"image": "plugin:2"}),
        ("kubectl-set", {"image": "plugin:2", "mig": "mixed"}),
    )
    for manager, change in changes:
        changed = ownership.merge(copy.deepcopy(live), _daemonset(**change))
        ownership.record_update(DAEMONSETS, live, changed, Writer(manager), "")
        live = changed
    error = _conflicted(live, _daemonset())
    assert (error.code, error.reason) == (409, "Conflict")
    image = '.spec.template.spec.containers[name="ctr"].image'
    mig = '.spec.template.spec.containers[name="ctr"].env[name="MIG_STRATEGY"].value'
    assert error.message == (
        f'Apply failed with 2 conflicts: conflicts with "kubectl-edit" using apps/v1:\n- {image}\n'
        f'conflicts with "kubectl-set" using apps/v1:\n- {mig}'
    )
    assert error.details == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "kubectl-edit" using apps/v1',
                "field": image,
            },
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "kubectl-set" using apps/v1',
                "field": mig,
            },
        ]
    }
    one = _conflicted(live, _daemonset(mig="mixed"))
    assert one.message == f'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: {image}'
    # the same values: shared, no conflict
    shared = ownership.apply(
        DAEMONSETS, live, _daemonset(image="plugin:2", mig="mixed"), Writer("gpuctl"), ""
    )
    assert "f:image" in _fields(shared, "gpuctl")["f:spec"]["f:template"]["f:spec"]["f:containers"][CTR]
    assert "kubectl-edit" in {entry["manager"] for entry in shared["metadata"]["managedFields"]}


def test_force_takes_the_fields_over() -> None:
    live = ownership.apply(DAEMONSETS, None, _daemonset(), Writer("gpuctl"), "")
    edited = ownership.merge(copy.deepcopy(live), _daemonset(image="plugin:2"))
    ownership.record_update(DAEMONSETS, live, edited, Writer("kubectl-edit"), "")
    forced = ownership.apply(DAEMONSETS, edited, _daemonset(), Writer("gpuctl", force=True), "")
    assert forced["spec"]["template"]["spec"]["containers"][0]["image"] == "plugin:1"
    assert [entry["manager"] for entry in forced["metadata"]["managedFields"]] == ["gpuctl"]


def test_an_applier_that_drops_a_field_removes_it_unless_someone_else_owns_it() -> None:
    def configmap(**data: str) -> dict[str, Any]:
        configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
        return configmap | ({"data": data} if data else {})

    live = ownership.apply(CONFIGMAPS, None, configmap(a="1", b="2"), Writer("gpuctl"), "")
    live = ownership.apply(CONFIGMAPS, live, configmap(b="2"), Writer("other"), "")
    dropped = ownership.apply(CONFIGMAPS, live, configmap(), Writer("gpuctl"), "")
    assert dropped["data"] == {"b": "2"}
    emptied = ownership.apply(CONFIGMAPS, dropped, configmap(), Writer("other"), "")
    assert "data" not in emptied
    assert "managedFields" not in emptied["metadata"]


def test_an_apply_that_changes_nothing_keeps_its_entry() -> None:
    live = ownership.apply(DAEMONSETS, None, _daemonset(), Writer("gpuctl"), "")
    live["metadata"]["managedFields"][0]["time"] = "2020-01-01T00:00:00Z"
    again = ownership.apply(DAEMONSETS, live, _daemonset(), Writer("gpuctl"), "")
    assert again == live
