"""Bad inputs of issue 42's multi-node level: the --fabric-resource flag and the scenario's network
fields, each refused in one line naming the flag or the field path."""

from __future__ import annotations

from tests.bad_inputs_cases import Case, case

UP = "sim up --scenario {dir}/s.yaml --kubeconfig {dir}/out.kubeconfig --detach"


def cases() -> list[Case]:
    fabric = "verify --level fabric --fabric-resource "
    flags = [
        case(f"flags-verify-fabric-resource-{name}", fabric + value, 2, f"--fabric-resource '{value}'")
        for name, value in (("no-count", "rdma/ib"), ("no-domain", "ib=1"), ("gpu", "nvidia.com/gpu=8"))
    ]
    flags.append(
        case(
            "flags-verify-fabric-resource-without-fabric",
            "verify --level nccl --fabric-resource rdma/ib=1",
            2,
            "--fabric-resource",
        )
    )
    scenarios = {
        "network-fabric": ("network: {fabric: myrinet}\nnodes: [{name: g}]\n", "network.fabric"),
        "nics-down-over": (
            "network: {fabric: ib, nicsPerNode: 4}\nnodes: [{name: g, gpus: 8, nicsDown: 5}]\n",
            "nodes[0].nicsDown",
        ),
        "nccl-transport": ("nodes: [{name: g, ncclTransport: tcp}]\n", "nodes[0].ncclTransport"),
        "network-resource": (
            "network: {resources: {rdma: 1}}\nnodes: [{name: g}]\n",
            "network.resources.rdma",
        ),
        "mpi-operator": ("mpiOperator: yes\nnodes: [{name: g}]\n", "mpiOperator"),
    }
    return [
        *flags,
        *(
            case(f"scenario-{name}", UP, 2, field, {"s.yaml": text})
            for name, (text, field) in scenarios.items()
        ),
    ]
