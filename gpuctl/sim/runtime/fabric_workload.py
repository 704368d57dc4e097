"""The multi-node all-reduce in the simulated cluster (`verify --level fabric`): the worker pods'
sshd runs until deleted, and the launcher's `mpirun --host w0.SVC:8,w1.SVC:8 ... all_reduce_perf`
prints what NCCL and nccl-tests print for the worker pods' nodes (gpuctl.fabric_nccl).

A host of `--host` is a worker pod of the launcher's namespace (its `hostname.subdomain`, as the
headless Service's DNS names it). The run sustains what its slowest host carries: its active NICs
(`network.nicsPerNode` less `nicsDown`) at the per-NIC figure (gpuctl.fabric_expectations), a
quarter of it on each of its `nicsSlow` NICs; a host with `ncclTransport: socket` (or no RDMA
fabric, or whose worker was given none of the NICs' resources where the node offers them as
`network.resources`) moves everything over TCP. The cluster hands `outcome` to the kubelet
(ClusterState.container_programs), which knows nothing of MPI.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

from gpuctl import nvidia_smi
from gpuctl.fabric_expectations import per_nic
from gpuctl.fabric_nccl import SimHost, format_multi_node
from gpuctl.sim.runtime.containers import FOREVER, Outcome
from gpuctl.sim.runtime.predicates import pod_other_extended_requests
from gpuctl.sim.runtime.state import ClusterState
from gpuctl.sim.scenario import NodeSpec

Obj = dict[str, Any]
# NCCL over TCP sockets on a node's front-end Ethernet: "not more than 60% of wire speed over 32Gbps"
# (https://github.com/NVIDIA/nccl/issues/209), ~2.4 GB/s.
SOCKET_BUSBW_GBPS = 2.4
SLOW_NIC_SHARE = 0.25  # a 400G port that trained at 100G
# Without GPUDirect RDMA the NIC moves data through host memory: NCCL's maintainer gives 16 of the
# 24 GB/s an HDR NIC carries (https://github.com/NVIDIA/nccl/issues/412).
NO_GDR_SHARE = 16 / 24
# What OpenMPI's launcher prints when a host does not resolve (its ssh's words).
UNRESOLVED = (
    "ssh: Could not resolve hostname {host}: Name or service not known\n"
    "--------------------------------------------------------------------------\n"
    "ORTE was unable to reliably start one or more daemons.\n"
    "--------------------------------------------------------------------------\n"
)


def outcome(cluster: ClusterState, pod: Obj, container: Obj) -> Outcome | None:
    argv = [str(part) for part in (container.get("command") or []) + (container.get("args") or [])]
    binary = os.path.basename(argv[0]) if argv else ""
    if binary == "sshd":
        return Outcome(run_seconds=FOREVER)
    if binary != "mpirun":
        return None
    hosts = _hosts(argv)
    namespace = pod["metadata"]["namespace"]
    workers = {
        f"{dig_spec(p, 'hostname')}.{dig_spec(p, 'subdomain')}": p
        for p in cluster.store.items("pods", namespace)
        if (p.get("status") or {}).get("phase") == "Running" and dig_spec(p, "hostname")
    }
    missing = [host for host in hosts if host not in workers]
    run_seconds = cluster.scenario.pod_run_seconds
    if missing or not hosts:
        return Outcome(log=UNRESOLVED.format(host=missing[0] if missing else "(none)"), exit_code=1)
    sim_hosts = [_sim_host(cluster, workers[host]) for host in hosts]
    busbw = min(
        _host_busbw(cluster.node_spec(workers[host]["spec"]["nodeName"]), workers[host]) for host in hosts
    )
    return Outcome(log=format_multi_node(sim_hosts, busbw), run_seconds=run_seconds)


def dig_spec(pod: Obj, key: str) -> str:
    return str((pod.get("spec") or {}).get(key) or "")


def _hosts(argv: list[str]) -> list[str]:
    """The hosts of `-H`/`--host a:8,b:8`, without their slot counts."""
    for flag, value in itertools.pairwise(argv):
        if flag in ("-H", "--host"):
            return [entry.split(":")[0] for entry in value.split(",") if entry]
    return []


def _uses_rdma(spec: NodeSpec, worker: Obj) -> bool:
    """NCCL finds an RDMA device in the worker: the node has a fabric, the pod was given one of the
    NICs' resources where the node offers them as such, and nothing forces the fallback."""
    offered = {name for name, _ in spec.network.resources}
    requested = set(pod_other_extended_requests(worker))
    given = not offered or bool(offered & requested)
    return spec.network.fabric in ("ib", "roce", "efa") and spec.nccl_transport != "socket" and given


def _host_busbw(spec: NodeSpec, worker: Obj) -> float:
    if not _uses_rdma(spec, worker):
        return SOCKET_BUSBW_GBPS
    figure, _source = per_nic(spec.network.link_gbps)
    active = spec.network.nics_per_node - spec.nics_down
    if active <= 0:
        return SOCKET_BUSBW_GBPS
    slow = min(spec.nics_slow, active)
    # NCCL stripes channels evenly across the NICs: the slowest one paces all of them.
    gdr = 1.0 if spec.gpu_direct_rdma else NO_GDR_SHARE
    return active * figure * (SLOW_NIC_SHARE if slow else 1.0) * gdr


def _sim_host(cluster: ClusterState, worker: Obj) -> SimHost:
    spec = cluster.node_spec(worker["spec"]["nodeName"])
    name = nvidia_smi.product_name(spec.gpu_product)
    active = max(0, spec.network.nics_per_node - spec.nics_down)
    rdma = _uses_rdma(spec, worker) and active > 0
    return SimHost(
        name=dig_spec(worker, "hostname"),
        address=str((worker.get("status") or {}).get("podIP") or "10.244.0.2"),
        gpus=max(1, spec.gpus),
        gpu_name=name,
        network=("Libfabric" if spec.network.fabric == "efa" else "IB") if rdma else "Socket",
        nics=active if rdma else 0,
        link_layer="RoCE" if spec.network.fabric == "roce" else "IB",
        gdr=spec.gpu_direct_rdma,
    )
