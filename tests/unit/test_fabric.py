"""`verify --level fabric`'s parts one by one: NCCL's per-host lines read from public captures, the
sim's launcher output read back, the per-NIC figures, the splitting of a slow group, the
manifests (Pod Security "restricted" unless asked, validated strictly), and the bad inputs of the
scenario fields and the --fabric-resource flag."""

from __future__ import annotations

import math
from typing import Any

import kubernetes_validate
import pytest

from gpuctl.cli.fabric_options import fabric_resources
from gpuctl.core.render import SUPPORTED_KUBERNETES_VERSIONS
from gpuctl.core.verify.fabric_bisect import GroupBisection, Run, RunVerdict
from gpuctl.core.verify.fabric_pods import headless_service, launcher_pod, ssh_secret, worker_pod
from gpuctl.core.verify.model import ProofOptions, VerifyOptions
from gpuctl.errors import ConfigError
from gpuctl.fabric_expectations import NodeFabric, expected_fabric_busbw, group_key, node_fabric, per_nic
from gpuctl.fabric_nccl import NCCL_VERSION_LINE, SimHost, format_multi_node, host_networks
from gpuctl.kube.nodes import NodeInfo
from gpuctl.nccl_tests import parse_all_reduce
from gpuctl.sim.scenario import parse_scenario

# Verbatim lines of NCCL_DEBUG=INFO output, each from the thread named above it.
# https://github.com/NVIDIA/nccl-tests/issues/294
IB_CAPTURE = (
    "h100-4:739792:739876 [6] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB/SHARP [1]mlx5_2:1/IB/SHARP "
    "[2]mlx5_3:1/IB/SHARP [3]mlx5_4:1/IB/SHARP [4]mlx5_5:1/IB/SHARP [5]mlx5_6:1/IB/SHARP "
    "[6]mlx5_7:1/IB/SHARP [7]mlx5_8:1/IB/SHARP [RO]; OOB ens7:172.27.32.104<0>\n"
    "h100-4:739792:739876 [6] NCCL INFO Using network IBext_v6\n"
)
# https://github.com/NVIDIA/nccl/issues/428
SOCKET_CAPTURE = (
    "ai-vtraining-prd-10-193-84-3:93569:93569 [0] NCCL INFO NET/Socket : Using [0]em1:10.193.84.3<0> "
    "[1]tunl0:10.227.47.12<0>\n"
    "ai-vtraining-prd-10-193-84-3:93569:93569 [0] NCCL INFO Using network Socket\n"
)

# https://github.com/NVIDIA/nccl/issues/1597
EFA_CAPTURE = (
    "8h200-3:6310:6318 [0] NCCL INFO NET/OFI Selected Provider is efa (found 16 nics)\n"
    "8h200-2:6831:6840 [0] NCCL INFO Using network Libfabric\n"
)


def test_efa_hosts_say_their_nics_and_network() -> None:
    hosts = host_networks(EFA_CAPTURE)
    assert hosts["8h200-3"].rdma_nics == 16
    assert hosts["8h200-2"].network == "Libfabric"


def test_a_host_on_infiniband_lists_its_nics_and_network() -> None:
    host = host_networks(IB_CAPTURE)["h100-4"]
    assert host.network == "IBext"
    assert host.rdma_nics == 8


def test_a_host_on_sockets_is_seen_as_such() -> None:
    host = host_networks(SOCKET_CAPTURE)["ai-vtraining-prd-10-193-84-3"]
    assert host.network == "Socket"
    assert host.rdma_nics == 0
    assert host.socket_interfaces == ("[0]em1:10.193.84.3<0>", "[1]tunl0:10.227.47.12<0>")


def test_the_sims_launcher_output_reads_back() -> None:
    hosts = [
        SimHost("w0", "10.244.0.2", 8, "NVIDIA H100 80GB HBM3", "IB", 8),
        SimHost("w1", "10.244.1.2", 8, "NVIDIA H100 80GB HBM3", "IB", 4, link_layer="RoCE"),
        SimHost("w2", "10.244.2.2", 8, "NVIDIA H100 80GB HBM3", "Socket", 0),
    ]
    text = format_multi_node(hosts, 2.4)
    run = parse_all_reduce(text)
    assert run.completed
    assert len(run.devices) == 24
    assert run.busbw_gbps == pytest.approx(2.4, rel=0.01)
    networks = host_networks(text)
    assert {name: (host.network, host.rdma_nics) for name, host in networks.items()} == {
        "w0": ("IB", 8),
        "w1": ("IB", 4),
        "w2": ("Socket", 0),
    }
    assert networks["w2"].no_rdma_device
    assert "\n# nThread 1 nGpus 1 " in text
    # the NCCL the pinned image ships (its tag: ...-nccl2.30.4-...), from gpuctl.defaults' one pin
    assert f"\n{NCCL_VERSION_LINE}\n" in text
    assert NCCL_VERSION_LINE == "NCCL version 2.30.4+cuda12.9"


def test_per_nic_figures_and_their_sources() -> None:
    figure, source = per_nic(400)
    assert (figure, source) == (48.0, "https://github.com/NVIDIA/nccl-tests/issues/290")
    assert per_nic(200)[0] == 24.0
    assert per_nic(100)[0] == 12.0  # 96 % of the line rate, as the two cited rows
    expectation = expected_fabric_busbw(NodeFabric("ib", 8, 400))
    assert expectation is not None
    assert (expectation.busbw_gbps, expectation.minimum_gbps) == (384.0, 307.2)
    assert expected_fabric_busbw(NodeFabric("none", 0, 0)) is None
    assert expected_fabric_busbw(node_fabric({})) is None


def test_group_keys_keep_apart_what_performs_differently() -> None:
    labels = {"gpuctl.io/fabric": "ib", "gpuctl.io/fabric-nics": "8", "gpuctl.io/fabric-link-gbps": "400"}
    h100 = group_key(labels, "NVIDIA-H100-80GB-HBM3")
    assert h100 == group_key(dict(labels), "NVIDIA-H100-80GB-HBM3")
    assert h100 != group_key({**labels, "gpuctl.io/fabric-nics": "4"}, "NVIDIA-H100-80GB-HBM3")
    assert h100 != group_key(labels, "NVIDIA-H200")
    assert h100 != group_key({**labels, "topology.kubernetes.io/zone": "b"}, "NVIDIA-H100-80GB-HBM3")


def _bisect(members: list[str], slow: set[str]) -> GroupBisection:
    """Run the splitting to its end on a fabric where a run is slow when it holds a `slow` node."""
    bisection = GroupBisection(tuple(members))
    round_no = 0
    while runs := bisection.next_runs():
        round_no += 1
        for run in runs:
            verdict = RunVerdict({}, bool(slow & set(run)), f"run {run}", "check the links")
            bisection.record(run, verdict, round_no)
    return bisection


def _failed(bisection: GroupBisection) -> set[str]:
    return {name for name, decision in bisection.decided.items() if decision.status == "fail"}


@pytest.mark.parametrize("size", [3, 4, 8, 64, 1000])
def test_one_slow_node_is_found_in_about_log2_rounds(size: int) -> None:
    members = [f"n{index}" for index in range(size)]
    bisection = _bisect(members, {members[size // 3]})
    assert _failed(bisection) == {members[size // 3]}
    assert set(bisection.decided) == set(members)
    # halves down to a pair, then one round paired with a node that passed; three nodes have no
    # halves that pass, so their suspects first run with each other (two rounds more)
    assert bisection.rounds <= (math.ceil(math.log2(size)) + 1 if size >= 4 else 5)


def test_two_slow_nodes_are_both_found_and_only_they() -> None:
    members = [f"n{index}" for index in range(16)]
    bisection = _bisect(members, {"n2", "n11"})
    assert _failed(bisection) == {"n2", "n11"}


def test_a_slow_pair_with_no_node_that_passed_fails_both() -> None:
    bisection = _bisect(["a", "b"], {"b"})
    assert _failed(bisection) == {"a", "b"}
    assert "a" in bisection.decided["b"].message


def test_a_healthy_group_takes_one_round() -> None:
    bisection = _bisect([f"n{index}" for index in range(100)], set())
    assert bisection.rounds == 1
    assert _failed(bisection) == set()


def test_named_nodes_fail_alone_and_the_rest_run_again() -> None:
    bisection = GroupBisection(("a", "b", "c", "d"))
    run: Run = bisection.next_runs()[0]
    bisection.record(run, RunVerdict({"c": ("sockets", "hint")}, True, "slow"), 1)
    assert bisection.decided["c"].status == "fail"
    assert bisection.next_runs() == [("a", "b", "d")]


def _node(**labels: str) -> NodeInfo:
    return NodeInfo(
        name="gpu-0",
        labels={"kubernetes.io/hostname": "gpu-0", **labels},
        annotations={},
        taints=(),
        ready=True,
        ready_reason="KubeletReady",
        ready_message="",
        unschedulable=False,
        gpu_capacity=8,
        gpu_allocatable=8,
    )


def _options(**proof: Any) -> VerifyOptions:
    return VerifyOptions(proof=ProofOptions(level="fabric", **proof))


def _containers(pod: dict[str, Any]) -> dict[str, Any]:
    return pod["spec"]["containers"][0]  # type: ignore[no-any-return]


def test_the_pods_are_restricted_unless_asked() -> None:
    names = ("abcd1234", "gpuctl-verify-abcd1234-f1g0", 1)
    for pod in (
        worker_pod(_node(), 8, 0, names, _options(), secret="s"),
        launcher_pod(_node(), [("w0.svc", 8)], names, _options(), secret="s"),
    ):
        security = _containers(pod)["securityContext"]
        assert security["capabilities"] == {"drop": ["ALL"]}
        assert security["runAsNonRoot"] is True
        assert security["allowPrivilegeEscalation"] is False
        assert security["seccompProfile"] == {"type": "RuntimeDefault"}
        assert "hostNetwork" not in pod["spec"]
    asked = _options(fabric_ipc_lock=True, fabric_host_network=True, fabric_resources=(("rdma/ib", 1),))
    worker = worker_pod(_node(), 8, 3, names, asked, secret="s")
    assert _containers(worker)["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert worker["spec"]["hostNetwork"] is True
    assert _containers(worker)["resources"]["requests"] == {"nvidia.com/gpu": "8", "rdma/ib": "1"}
    assert (worker["spec"]["hostname"], worker["spec"]["subdomain"]) == ("w3", names[1])


@pytest.mark.parametrize("version", SUPPORTED_KUBERNETES_VERSIONS)
def test_the_manifests_validate_strictly(version: str) -> None:
    names = ("abcd1234", "gpuctl-verify-abcd1234-f1g0", 1)
    asked = _options(fabric_ipc_lock=True, fabric_host_network=True, fabric_resources=(("rdma/ib", 1),))
    for document in (
        worker_pod(_node(), 8, 0, names, asked, secret="s"),
        launcher_pod(_node(), [("w0.svc", 8), ("w1.svc", 8)], names, asked, secret="s"),
        headless_service(names[0], names[1], 1),
        ssh_secret(names[0], "gpuctl-verify-abcd1234-ssh"),
    ):
        kubernetes_validate.validate(document, version, strict=True)


def test_the_launcher_runs_one_rank_per_gpu_over_the_workers() -> None:
    names = ("abcd1234", "svc", 1)
    command = _containers(
        launcher_pod(_node(), [("w0.svc", 8), ("w1.svc", 4)], names, _options(), secret="s")
    )["command"]
    assert command[:5] == ["mpirun", "-np", "12", "-H", "w0.svc:8,w1.svc:4"]
    assert "NCCL_DEBUG=INFO" in command
    assert command[-9:] == [
        "/opt/nccl-tests/build/all_reduce_perf",
        "-b",
        "8",
        "-e",
        "8G",
        "-f",
        "2",
        "-g",
        "1",
    ]


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("rdma", "NAME=COUNT"),
        ("rdma/ib=0", "NAME=COUNT"),
        ("rdma/ib=x", "NAME=COUNT"),
        ("nvidia.com/gpu=8", "GPUs"),
    ],
)
def test_bad_fabric_resources_are_refused(value: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as raised:
        fabric_resources([value])
    assert "--fabric-resource" in raised.value.message
    assert fragment in raised.value.message


def test_fabric_resources_parse() -> None:
    assert fabric_resources(["rdma/ib=1", "vpc.amazonaws.com/efa=4"]) == (
        ("rdma/ib", 1),
        ("vpc.amazonaws.com/efa", 4),
    )


@pytest.mark.parametrize(
    ("scenario", "fragment"),
    [
        ({"network": {"fabric": "myrinet"}}, "network.fabric: must be one of ib, roce, efa, none"),
        (
            {"nodes": [{"name": "n", "gpus": 8, "network": {"nicsPerNode": 4}, "nicsDown": 5}]},
            "nodes[0].nicsDown",
        ),
        ({"nodes": [{"name": "n", "nicsSlow": 1}]}, "nodes[0].nicsSlow: must be <= network.nicsPerNode (0)"),
        ({"nodes": [{"name": "n", "ncclTransport": "tcp"}]}, "nodes[0].ncclTransport"),
        ({"network": {"resources": {"rdma": 1}}}, "network.resources.rdma"),
        ({"network": {"resources": {"rdma/ib": 0}}}, "network.resources.rdma/ib: must be a whole number"),
    ],
)
def test_bad_scenario_network_fields_name_their_path(scenario: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_scenario(scenario, "s.yaml")
    assert raised.value.message.startswith("s.yaml: ")
    assert fragment in raised.value.message


def test_network_defaults_and_per_node_overrides() -> None:
    scenario = parse_scenario(
        {
            "network": {"fabric": "ib", "resources": {"rdma/ib": 1}},
            "nodes": [
                {"name": "a", "gpus": 8},
                {"name": "b", "gpus": 8, "network": {"fabric": "roce", "linkGbps": 200}},
            ],
        }
    )
    a, b = scenario.nodes
    assert (a.network.fabric, a.network.nics_per_node, a.network.link_gbps) == ("ib", 8, 400)
    assert (b.network.fabric, b.network.nics_per_node, b.network.link_gbps) == ("roce", 8, 200)
    assert b.network.resources == (("rdma/ib", 1),)
    assert parse_scenario({"nodes": [{"name": "c"}]}).nodes[0].network.fabric == ""


# https://github.com/NVIDIA/nccl/issues/707 and https://github.com/NVIDIA/nccl/issues/1814
CHANNEL_CAPTURES = (
    "10-90-43-152:120890:121560 [0] NCCL INFO Channel 01 : 0[87000] -> 2[c7000] [send] via NET/IB/5/GDRDMA\n"
    "hostname-test:984:1257 [4] NCCL INFO Channel 06/0 : 36[4] -> 20[4] [send] via NET/IBext_v8/3\n"
)


def test_channels_say_whether_gpudirect_rdma_is_used() -> None:
    hosts = host_networks(CHANNEL_CAPTURES)
    assert hosts["10-90-43-152"].gdr is True
    assert hosts["hostname-test"].gdr is False
    assert host_networks(IB_CAPTURE)["h100-4"].gdr is None
