"""DRA pieces that need no cluster: the scenario fields, ResourceSlice parsing across API
versions, claim allocations, and the sim's CEL subset."""

from __future__ import annotations

import pytest

from gpuctl.errors import ConfigError
from gpuctl.kube.claims import allocation_of, claim_template
from gpuctl.kube.dra import nodes_from_slices, same_version
from gpuctl.sim.runtime.dra import node_devices, semver
from gpuctl.sim.runtime.dra_claims import SliceDevice, _matches
from gpuctl.sim.scenario import NodeSpec, parse_scenario


def test_gpu_allocation_defaults_and_per_node_override() -> None:
    scenario = parse_scenario(
        {
            "gpuAllocation": "dra",
            "nodes": [{"name": "a", "gpus": 1}, {"name": "b", "gpuAllocation": "device-plugin"}],
        }
    )
    assert [node.gpu_allocation for node in scenario.nodes] == ["dra", "device-plugin"]
    assert scenario.uses_dra
    assert scenario.dra_driver == "installed"
    assert not parse_scenario({"nodes": [{"name": "a"}]}).uses_dra


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"gpuAllocation": "plugin"},
            "scenario: gpuAllocation: must be one of device-plugin, dra, got 'plugin'",
        ),
        ({"nodes": [{"name": "a", "gpuAllocation": 1}]}, "scenario: nodes[0].gpuAllocation: must be one of"),
        ({"draDriver": "yes"}, "scenario: draDriver: must be one of installed, absent"),
    ],
)
def test_bad_dra_fields_name_the_field(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_scenario(data)
    assert message in caught.value.message


def _slice(node: str, devices: list[dict[str, object]], driver: str = "gpu.nvidia.com") -> dict[str, object]:
    return {"spec": {"driver": driver, "nodeName": node, "devices": devices}}


def test_slices_group_by_node_in_v1_and_v1beta1_shapes() -> None:
    v1 = {"name": "gpu-0", "attributes": {"type": {"string": "gpu"}, "uuid": {"string": "GPU-1"}}}
    tainted = {
        "name": "gpu-1",
        "attributes": {"type": {"string": "gpu"}, "driverVersion": {"version": "550.90.7"}},
        "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}, {"key": "soft", "effect": "None"}],
    }
    beta1 = {
        "name": "mig-0",
        "basic": {"attributes": {"type": {"string": "mig"}, "productName": {"string": "A100"}}},
    }
    other = _slice("n1", [v1], driver="other.example.com")
    nodes = nodes_from_slices([_slice("n1", [v1, tainted]), _slice("n1", [beta1]), other, _slice("", [v1])])
    assert list(nodes) == ["n1"]
    node = nodes["n1"]
    assert (node.gpus, node.mig_devices) == (2, 1)
    assert [device.taints for device in node.tainted] == [("k=v:NoSchedule",)]
    assert node.driver_version == "550.90.7"
    assert node.product == "A100"


def test_published_driver_versions_compare_with_nvidia_smi() -> None:
    assert same_version("550.90.7", "550.90.07")
    assert not same_version("550.90.7", "550.90.12")
    assert not same_version("", "550.90.07")
    assert semver("550.90.07") == "550.90.7"
    assert semver("570.86") == "570.86.0"


def test_allocation_of_a_claim_names_its_pod_node_and_devices() -> None:
    claim = {
        "metadata": {"name": "p-gpus-x", "ownerReferences": [{"kind": "Pod", "name": "p"}]},
        "status": {
            "allocation": {
                "devices": {"results": [{"device": "gpu-0"}, {"device": "gpu-1"}]},
                "nodeSelector": {
                    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "values": ["n1"]}]}]
                },
            }
        },
    }
    found = allocation_of(claim)
    assert found is not None
    assert (found.claim, found.pod, found.node, found.devices) == ("p-gpus-x", "p", "n1", ("gpu-0", "gpu-1"))
    assert allocation_of({"metadata": {"name": "pending"}, "status": {}}) is None


def test_claim_template_shape_per_version() -> None:
    v1 = claim_template("v1", "t", {"a": "b"}, "gpu.nvidia.com")
    request = v1["spec"]["spec"]["devices"]["requests"][0]
    assert request == {
        "name": "gpus",
        "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"},
    }
    assert v1["spec"]["metadata"]["labels"] == {"a": "b"}
    beta1 = claim_template("v1beta1", "t", {}, "gpu.nvidia.com")["spec"]["spec"]["devices"]["requests"][0]
    assert beta1 == {"name": "gpus", "deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}


def test_sim_cel_subset() -> None:
    spec = NodeSpec(name="n", gpus=2, unhealthy_gpus=1)
    devices = node_devices(spec)
    assert [d.get("taints") is not None for d in devices] == [False, True]
    device = SliceDevice("gpu.nvidia.com", "n", "n", devices[0])
    gpu_class = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
    assert _matches(gpu_class, device) is True
    assert _matches(gpu_class.replace("'gpu'", "'mig'"), device) is False
    assert _matches('device.driver == "other"', device) is False
    assert (
        _matches("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", device) is None
    )
