"""What a node's labels say of its network (gpuctl.fabric_expectations) and the all-reduce figure
the fabric level holds its NICs to: each label read, each fabric, a link speed with a cited row and
one without, and the grouping of nodes that should perform alike."""

from __future__ import annotations

from gpuctl.fabric_expectations import (
    FabricExpectation,
    NodeFabric,
    expected_fabric_busbw,
    fabric_labels,
    group_key,
    node_fabric,
    per_nic,
)


def test_the_labels_read_whole() -> None:
    assert node_fabric(fabric_labels("ib", 8, 400)) == NodeFabric("ib", 8, 400)
    assert node_fabric(fabric_labels("roce", 2, 200)) == NodeFabric("roce", 2, 200)
    assert node_fabric(fabric_labels("efa", 32, 100)) == NodeFabric("efa", 32, 100)
    assert node_fabric({}) == NodeFabric(None, 0, 0)
    assert not node_fabric({}).known
    odd = node_fabric(
        {
            "gpuctl.io/fabric": "infiniband",
            "gpuctl.io/fabric-nics": "eight",
            "gpuctl.io/fabric-link-gbps": "-1",
        }
    )
    assert odd == NodeFabric(None, 0, 0)
    assert not NodeFabric("ib", 0, 400).known
    assert not NodeFabric("ib", 8, 0).known
    assert NodeFabric("ib", 1, 1).known


def test_per_nic_figures_cited_and_derived() -> None:
    assert per_nic(400) == (48.0, "https://github.com/NVIDIA/nccl-tests/issues/290")
    assert per_nic(200) == (24.0, "https://github.com/NVIDIA/nccl/issues/412")
    figure, source = per_nic(100)
    assert figure == 12.0
    assert source == (
        "96% of line rate, as the 400G and 200G rows (https://github.com/NVIDIA/nccl-tests/issues/290, "
        "https://github.com/NVIDIA/nccl/issues/412)"
    )
    assert per_nic(25)[0] == 3.0
    assert per_nic(10)[0] == 1.2
    assert per_nic(1)[0] == 0.1


def test_the_fabric_figure_is_nics_times_the_per_nic_figure() -> None:
    assert expected_fabric_busbw(NodeFabric("ib", 8, 400)) == FabricExpectation(
        384.0, "8 x 400G at 48 GB/s each: https://github.com/NVIDIA/nccl-tests/issues/290"
    )
    odd = expected_fabric_busbw(NodeFabric("efa", 3, 10))
    assert odd is not None
    assert odd.busbw_gbps == 3.6  # 3 x 1.2
    assert odd.source.startswith("3 x 10G at 1.2 GB/s each: 96% of line rate")
    assert expected_fabric_busbw(NodeFabric("none", 8, 400)) is None
    assert expected_fabric_busbw(NodeFabric(None, 8, 400)) is None
    assert expected_fabric_busbw(NodeFabric("ib", 0, 400)) is None


def test_nodes_that_should_perform_alike_share_a_key() -> None:
    labels = {**fabric_labels("ib", 8, 400), "topology.kubernetes.io/zone": "eu-1a", "other": "x"}
    assert group_key(labels, "NVIDIA-H100-80GB-HBM3") == (
        "NVIDIA-H100-80GB-HBM3",
        "ib",
        "8",
        "400",
        "topology.kubernetes.io/zone=eu-1a",
    )
    assert group_key({}, "NVIDIA-H100-80GB-HBM3") == ("NVIDIA-H100-80GB-HBM3", "", "0", "0")
    region = {"topology.kubernetes.io/region": "eu", "topology.kubernetes.io/zone": "eu-1b"}
    assert group_key(region, "p")[4:] == (
        "topology.kubernetes.io/region=eu",
        "topology.kubernetes.io/zone=eu-1b",
    )
