"""NCCL's results and warnings: every `ncclResult_t` (nccl.h), the `NCCL WARN` messages of each
subsystem (shared memory, sockets and bootstrap, InfiniBand/RoCE, P2P, NVLink SHARP, multi-node
NVLink, NVML, proxy, allocation, init), the InfiniBand work-completion statuses NCCL prints,
nccl-tests' own failures (timeout, wrong results) and PyTorch's NCCL watchdog and rendezvous.

How they reach gpuctl: nccl-tests prints `Test NCCL failure common.cu:891 'unhandled system error
(run with NCCL_DEBUG=INFO for details) / <last error>'` (before 2.13: `NCCL failure FILE:LINE
'<result>'`); PyTorch raises `NCCL error in: FILE:LINE, <result>, NCCL version 2.x` followed by
`ncclSystemError: ...` and NCCL's last `WARN` text; NCCL itself prints `HOST:PID:TID [DEV]
FILE:LINE NCCL WARN <message>` with NCCL_DEBUG=WARN or INFO. A result (`unhandled system error`)
only says which kind of call failed; the WARN line before it names the cause, so results rank
last (layer `application`) and the WARN entries, on their own layer, come first: NVLS and
multi-node NVLink on `fabric`, P2P on `nvlink`/`hardware`, /dev/shm on `runtime` (the container's
/dev/shm is the runtime's and the pod's setting), RDMA setup on `config`, sockets and InfiniBand
completions on `network`.

The WARN messages carry variable parts (paths, sizes, addresses), so each entry lists the fixed
text of the message, as NCCL's source prints it, up to its first variable part; messages whose
wording changed across releases (2.7 to 2.30) are listed in each spelling.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry
from gpuctl.diagnose.catalogues.cuda import NODE_MESSAGES

_REPO = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1"
_OLD = "https://github.com/NVIDIA/nccl/blob/v2.18.3-1"
_GUIDE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"
_RDMA = "https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/enum_strs.c"
_TORCH = "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp"

_DEBUG = (
    "rerun with `NCCL_DEBUG=WARN` (or `INFO` for the whole setup) in the pod's environment and "
    "read the `NCCL WARN` line printed before this one: it names the call that failed"
)
_SHM_FIX = (
    "give the pod a memory-backed /dev/shm larger than the 64 MiB a container gets: a volume "
    "`emptyDir: {{medium: Memory, sizeLimit: 1Gi}}` mounted at /dev/shm (Docker: `--shm-size=1g` or "
    "`--ipc=host`); check it from inside the pod with `df -h /dev/shm`"
)
_IFNAME_FIX = (
    "list the pod's interfaces (`kubectl exec POD -- ip -br addr`) and name the one that reaches the "
    "other ranks: `NCCL_SOCKET_IFNAME=eth0` (with hostNetwork, the node's NIC, e.g. `bond0`; "
    "`NCCL_SOCKET_IFNAME=^docker,lo,veth` excludes the unusable ones); every rank needs one"
)
_PEER_FIX = (
    "find the rank that failed first (`kubectl get pods -o wide` for restarts and OOMKilled, "
    "`kubectl logs POD --previous`): its own error is the cause; if every rank was alive, allow TCP "
    "between the pods on all ports (NetworkPolicy, host firewall) and pin the interface with "
    "`NCCL_SOCKET_IFNAME`"
)
_IB_LINK_FIX = (
    "on {node} and the peer: `ibstat` (ports Active, LinkUp, same rate), `ibv_devinfo`, and the "
    "switch/cable counters (`perfquery`, `mlxlink -d DEV -c`); on RoCE set the GID of the routable "
    "address (`NCCL_IB_GID_INDEX=3`, `show_gids`) and a lossless class (PFC/ECN); on a rail-optimised "
    "fabric, where NICs of different rails cannot reach each other, `NCCL_CROSS_NIC=0`; a long "
    "`NCCL_IB_TIMEOUT` (e.g. 22) rides out a congested fabric"
)
_GDR_FIX = (
    "on {node}: load the GPUDirect RDMA module (`sudo modprobe nvidia-peermem`; GPU Operator: "
    "`driver.rdma.enabled=true`) or use DMA-BUF (open kernel modules, `NCCL_DMABUF_ENABLE=1`); "
    "disable PCIe ACS on the switches between GPU and NIC (`sudo lspci -vvv | grep ACSCtl`, BIOS or "
    "setpci); `NCCL_NET_GDR_LEVEL=0` confirms it (GPUDirect off)"
)
_RDMA_POD_FIX = (
    "request the RDMA device in the pod (e.g. `resources.limits: rdma/rdma_shared_device_a: 1` with "
    "the RDMA shared device plugin, or the SR-IOV network resource) so /dev/infiniband is mounted, "
    "give the container `securityContext.capabilities.add: [IPC_LOCK]` and an unlimited memlock "
    "(containerd: `LimitMEMLOCK=infinity` on {node}; check `ulimit -l` in the pod)"
)
_HOST_CHECK = "on {node}: `ibstat` and `ibv_devinfo` (the HCA's ports and firmware), `dmesg | grep -i mlx5`"
_NVLS_FIX = (
    "on {node}: `systemctl status nvidia-fabricmanager` and `nvidia-smi -q | grep -A2 Fabric` "
    "(State Completed, Status Success; GB200 also needs IMEX: `systemctl status nvidia-imex`); "
    "after Fabric Manager was stopped or restarted the GPUs must be reset before it starts again "
    "(Fabric Manager user guide, GPU reset): drain {node} (`kubectl drain {node} "
    "--ignore-daemonsets`), `sudo systemctl stop nvidia-fabricmanager`, `sudo nvidia-smi -r` "
    "with no process on the GPUs, `sudo systemctl start nvidia-fabricmanager`, or simply reboot "
    "{node}; `NCCL_NVLS_ENABLE=0` works around it meanwhile (slower all-reduce)"
)


def _result(
    code: str,
    enum: str,
    cupy: str,
    cause: str,
    fix: str,
    *,
    message: str = "",
    warnings: tuple[str, ...] = (),
) -> Entry:
    """An `ncclResult_t`: read as the short message `code` by the readers, found by its enum name
    (PyTorch prints `ncclSystemError: ...`), CuPy's `NCCL_ERROR_...` name, its full message where
    that is distinctive enough to be a fixed text, and the WARN texts that only come with it."""
    names = tuple(name for name in (enum, cupy, message) if name)
    return Entry(code, enum, cause, fix, "application", aliases=names, texts=names + warnings)


RESULTS = (
    _result(
        "unhandled cuda error",
        "ncclUnhandledCudaError",
        "NCCL_ERROR_UNHANDLED_CUDA_ERROR",
        "a CUDA call inside NCCL failed (ncclResult 1); the `NCCL WARN Cuda failure '...'` line "
        "before it names the CUDA error",
        "run `gpuctl verify --level cuda` on {node} first (it names the CUDA error per GPU); " + _DEBUG,
        message="unhandled cuda error",
    ),
    _result(
        "unhandled system error",
        "ncclSystemError",
        "NCCL_ERROR_SYSTEM_ERROR",
        "a system call or external library call inside NCCL failed (ncclResult 2): most often "
        "/dev/shm is too small in the container, no usable network interface, a socket to a peer "
        "that closed, or an InfiniBand verbs call",
        _SHM_FIX + "; " + _DEBUG,
        message="unhandled system error",
    ),
    _result(
        "internal error",
        "ncclInternalError",
        "NCCL_ERROR_INTERNAL_ERROR",
        "an internal check of NCCL failed (ncclResult 3): often a configuration it cannot use "
        "(no network interface for bootstrap, ranks that disagree on the topology, a missing "
        "InfiniBand verbs provider) rather than a bug",
        _DEBUG + "; check that every rank runs the same NCCL version (`NCCL_DEBUG=VERSION`)",
        message="internal error - please report this issue to the NCCL developers",
    ),
    _result(
        "invalid argument",
        "ncclInvalidArgument",
        "NCCL_ERROR_INVALID_ARGUMENT",
        "the program passed NCCL an invalid value (ncclResult 4): a bad pointer, count, rank or device",
        _DEBUG + "; the WARN line names the argument",
        warnings=("Invalid rank requested", "Invalid device count requested"),
    ),
    _result(
        "invalid usage",
        "ncclInvalidUsage",
        "NCCL_ERROR_INVALID_USAGE",
        "NCCL was used wrongly (ncclResult 5): two ranks on one GPU, mismatched collectives across "
        "ranks, or a communicator used after an error",
        _DEBUG + "; give each rank its own GPU (`CUDA_VISIBLE_DEVICES`, one GPU per rank)",
        warnings=(
            "Attempt to use communicator before the previous operation returned ncclSuccess",
            "improper usage of ncclCommInitRank",
        ),
    ),
    _result(
        "remote error",
        "ncclRemoteError",
        "NCCL_ERROR_REMOTE_ERROR",
        "a peer failed (ncclResult 6): the remote process exited, or the network between the ranks "
        "dropped the connection",
        _PEER_FIX,
        message="remote process exited or there was a network error",
    ),
    _result(
        "in progress",
        "ncclInProgress",
        "NCCL_ERROR_IN_PROGRESS",
        "a non-blocking NCCL call was still in progress (ncclResult 7) when the program treated it "
        "as failed or used the communicator",
        "poll `ncclCommGetAsyncError` until it is no longer ncclInProgress before using the "
        "communicator; " + _DEBUG,
        message="NCCL operation in progress",
    ),
    _result(
        "timeout",
        "ncclTimeout",
        "",
        "an NCCL operation timed out (ncclResult 8): a peer stopped progressing (hung, dead, or unreachable)",
        _PEER_FIX,
    ),
)

SHM = (
    Entry(
        "shm-create",
        "shared memory segment not created",
        "NCCL could not create its shared memory segment in /dev/shm: the container's /dev/shm "
        "(64 MiB by default) is too small or full, or not writable",
        _SHM_FIX + "; remove stale `/dev/shm/nccl-*` files of crashed runs; `NCCL_SHM_DISABLE=1` "
        "avoids it at a cost in speed",
        "runtime",
        texts=(
            "Error while creating shared memory segment",
            "Call to posix_fallocate failed",
            "Call to shm_open failed",
            "Error: failed to extend /dev/shm",
            "Error: failed to create shared memory file",
            "Could not map /dev/shm",
        ),
        source=f"{_REPO}/src/os/linux.cc",
    ),
    Entry(
        "shm-attach",
        "shared memory segment not found",
        "a rank could not open the shared memory segment another rank created: the ranks do not "
        "share one /dev/shm (separate pods or containers without a shared IPC namespace), or the "
        "host deleted it (systemd-logind RemoveIPC=yes)",
        "run the ranks of one node in one pod (or share the host's: `hostIPC: true`), mount the same "
        "memory-backed /dev/shm for all of them, and on {node} set `RemoveIPC=no` in "
        "/etc/systemd/logind.conf",
        "runtime",
        texts=("Error while attaching to shared memory segment",),
        source=f"{_REPO}/src/os/linux.cc",
    ),
)

SOCKETS = (
    Entry(
        "socket-interface",
        "no usable network interface",
        "NCCL found no network interface to use for bootstrap or its socket transport: "
        "`NCCL_SOCKET_IFNAME` names an interface the pod does not have, or the pod has only "
        "loopback/docker interfaces (or only IPv6 where the peers use IPv4)",
        _IFNAME_FIX,
        "network",
        texts=(
            "Bootstrap : no socket interface found",
            "NET/Socket : no interface found",
            "NET/Socket : No usable listening interface found",
            "NET/IB : No IP interface found",
            "Net : No interface found in the same subnet as remote address",
            "verify NCCL_OOB_NET_IFNAME",
            "nor AF_INET6",
            "Socket creation failed",
        ),
        source=f"{_OLD}/src/bootstrap.cc",
    ),
    Entry(
        "socket-interface-bridge",
        "NCCL chose a host-local bridge interface",
        "NCCL picked a host-local bridge (docker0, virbr0) for bootstrap or its socket transport: "
        "its address is the same private one on every node and reaches no other node, so the "
        "ranks' connections fail or hang; NCCL excludes docker* by default, so "
        "`NCCL_SOCKET_IFNAME` names it, or no other interface was up",
        _IFNAME_FIX,
        "network",
        # NCCL's INFO lines (bootstrap.cc, net_socket.cc) naming the interface it uses, as
        # `Bootstrap : Using docker0:172.17.0.1<0>` and `NET/Socket : Using [0]docker0:...`.
        texts=(
            "Bootstrap : Using docker0:",
            "Bootstrap : Using [0]docker0:",
            "NET/Socket : Using [0]docker0:",
            "Bootstrap : Using virbr0:",
            "Bootstrap : Using [0]virbr0:",
            "NET/Socket : Using [0]virbr0:",
        ),
        source=f"{_REPO}/src/bootstrap.cc",
    ),
    Entry(
        "socket-connect",
        "peer not reachable",
        "a rank could not connect to a peer's socket: the address NCCL picked is not routable "
        "between the pods (docker0, a link-local or second interface), a firewall or NetworkPolicy "
        "drops the ports, or the peer is not listening (not started, crashed)",
        _IFNAME_FIX + "; allow TCP between the pods on all ports",
        "network",
        texts=(
            "Net : Connect to",
            "SocketStartConnect: Connect to",
            "SocketPollConnect: Connect to",
            "SocketStartConnect: exceeded",
            "SocketPollConnect: exceeded",
            "SocketPollConnect to",
            "SocketPollConnect poll()",
            "Call to connect failed",
            "exceeded error retry count",
            "Invalid NCCL_COMM_ID",
            "NCCL WARN Connect to",
        ),
        source=f"{_OLD}/src/misc/socket.cc",
    ),
    Entry(
        "peer-closed",
        "peer connection lost",
        "a socket to another rank was closed or failed mid-run: that rank exited (crashed, "
        "OOM-killed, evicted) or the network between the nodes dropped the connection",
        _PEER_FIX,
        "network",
        texts=(
            "Connection closed by remote peer",
            "Net : Call to recv from",
            "ProgressOpt: Call to recv from",
            "ProgressOpt: Call to send to",
            "NET/Socket : socket progress error",
            "Socket recv failed while polling",
        ),
        source=f"{_OLD}/src/misc/socket.cc",
    ),
    Entry(
        "unique-id-exchange",
        "rank 0 unreachable at rendezvous (PyTorch)",
        "a rank could not fetch NCCL's unique id from rank 0 through PyTorch's key-value store "
        "(MASTER_ADDR:MASTER_PORT): rank 0 crashed or never started, or the store's address is not "
        "reachable from this pod",
        "read rank 0's log first (`kubectl logs POD-0 --previous`); check that MASTER_ADDR resolves "
        "and MASTER_PORT is reachable from every pod (a headless Service for rank 0, no "
        "NetworkPolicy dropping it)",
        "network",
        texts=("ncclUniqueId from [0] via c10d key-value store",),
        source=_TORCH,
    ),
    Entry(
        "c10d-store-connect",
        "rendezvous store unreachable (PyTorch)",
        "a rank could not connect to PyTorch's rendezvous store (the c10d TCPStore of rank 0 at "
        "MASTER_ADDR:MASTER_PORT, or torchrun's --rdzv_endpoint) before its timeout: rank 0 has not "
        "started or crashed, the address is the wrong one (a hostname that resolves differently on "
        "the nodes or to 127.0.1.1 through /etc/hosts, an IP another host also has, a Service "
        "without endpoints while rank 0 is not Ready), or the port is blocked between the pods",
        "from the failing pod: `getent hosts MASTER_ADDR` and `timeout 3 bash -c '</dev/tcp/"
        "MASTER_ADDR/MASTER_PORT'`; read rank 0's log first (`kubectl logs POD-0 --previous`); on "
        "Kubernetes point MASTER_ADDR (or --rdzv_endpoint, the same on every node) at rank 0's "
        "headless Service with `publishNotReadyAddresses: true`, and allow the port in any "
        "NetworkPolicy",
        "network",
        texts=(
            "The client socket has timed out after",
            "The client socket has failed to connect to",
            "TCP client failed to connect/validate to host",
            "The connection to the C10d store has failed",
        ),
        source="https://github.com/pytorch/pytorch/blob/v2.9.0/torch/csrc/distributed/c10d/socket.cpp",
    ),
    Entry(
        "no-transport",
        "no transport between two ranks",
        "NCCL found no way to connect two ranks: the transports that could (P2P, shared memory, "
        "the network) are all disabled or unusable for that pair: `NCCL_P2P_DISABLE=1` and "
        "`NCCL_SHM_DISABLE=1` between GPUs of one node (or two pods on one node that share no IPC "
        "namespace and /dev/shm), or no network transport (`NCCL_NET` naming a network that is "
        "not there, `NCCL_IB_DISABLE=1` with no socket interface) between nodes",
        "print the transports' settings in every pod (`env | grep ^NCCL_`) and unset the "
        "disabling ones; for two pods on one node either let NCCL use the network between them or "
        "give them a shared IPC namespace and /dev/shm; " + _DEBUG,
        "config",
        texts=("No transport found for rank", "has no transport for"),
        source=f"{_REPO}/src/transport.cc",
    ),
    Entry(
        "net-plugin-init",
        "no network transport could start",
        "NCCL could initialise none of its network transports: the plugin named by "
        "`NCCL_NET_PLUGIN`/`NCCL_NET` is not in the image or failed, InfiniBand is disabled or "
        "has no device in the container, and the socket transport found no usable interface",
        "in the pod: `env | grep -e NCCL_NET -e NCCL_IB -e NCCL_SOCKET`; drop a `NCCL_NET`/"
        "`NCCL_NET_PLUGIN` naming a plugin the image lacks (or install it), mount the RDMA devices, "
        "or name a usable interface: " + _IFNAME_FIX,
        "config",
        texts=("Failed to initialize any NET plugin",),
        source=f"{_REPO}/src/plugin/net.cc",
    ),
    Entry(
        "comm-id-address",
        "bootstrap address unusable (NCCL_COMM_ID)",
        "NCCL could not use the bootstrap address it was given: `NCCL_COMM_ID` is not "
        "`<IPv4 or hostname>:<port>` (`[IPv6]:port`), or its host name does not resolve in the pod",
        "set `NCCL_COMM_ID=ADDRESS:PORT` of rank 0 (a resolvable Service name or its IP) in every "
        "rank, or unset it and let the framework exchange the unique id; check `getent hosts "
        "HOST` in the pod",
        "network",
        texts=(
            "Net : No valid <IPv4_or_hostname>:<port> pair found",
            "Net : No valid [IPv6]:port pair found",
            "Net : error encountered when getting address info",
        ),
        source=f"{_REPO}/src/misc/socket.cc",
    ),
    Entry(
        "bootstrap-mismatch",
        "ranks disagree",
        "the ranks of one job disagree (rank count, NCCL version, collective sizes, NCCL_PROTO or "
        "NCCL_ALGO): ranks of two jobs met on one NCCL_COMM_ID or port, the images carry different "
        "NCCL versions or environments, or the program called different collectives on different ranks",
        "run one image (one NCCL version, one set of NCCL_* variables) for every rank and a fresh "
        "rendezvous address per job; `NCCL_DEBUG=VERSION` prints each rank's version",
        "config",
        texts=(
            "Bootstrap Root : mismatch",
            "Mismatched NCCL version detected",
            "Message truncated : received",
            "socketFinalizeAccept: wrong",
            "message truncated : receiving",
            "collective mismatch error",
            "may be caused by a collective mismatch around rank",
            "posted incorrect receive info",
            "does not contain rank",
        ),
        source=f"{_REPO}/src/init.cc",
    ),
)

# The topology search of src/graph: each rank builds the rings and trees from its own view of the
# node's topology, so a view that differs between ranks, or a bug in reading it, breaks them.
TOPOLOGY = (
    Entry(
        "ring-loop",
        "ring does not loop back to start",
        "the ranks computed different rings from their views of the topology, so NCCL's ring check "
        "failed (ncclInternalError): a known NCCL bug (2.19 reads PCI link speeds it did not "
        "initialise where sysfs gives no max_link_speed, so ranks order the GPUs differently; "
        "fixed in 2.20; older releases had others), or the ranks were given different topology "
        "inputs (NCCL_HOSTID shared by two nodes, NCCL_TOPO_FILE or NCCL_GRAPH_FILE on some ranks, "
        "different NCCL versions or NCCL_* variables)",
        "upgrade NCCL to 2.20 or newer (the framework image's NCCL: `NCCL_DEBUG=VERSION` prints it; "
        "PyTorch wheels pin nvidia-nccl-cu12); give every rank the same NCCL_* variables and unset "
        "NCCL_HOSTID unless each host's is unique; as a workaround give every rank one topology "
        "(NCCL_TOPO_FILE from `NCCL_TOPO_DUMP_FILE` of one node) or one graph (NCCL_GRAPH_FILE)",
        "config",
        texts=("does not loop back to start",),
        source=f"{_REPO}/src/graph/rings.cc",
    ),
    Entry(
        "graph-file-mismatch",
        "NCCL_GRAPH_FILE names a GPU this node lacks",
        "the graph file given in NCCL_GRAPH_FILE names a GPU (dev) that this node's topology has "
        "not: it was dumped on another machine or with other GPUs visible (CUDA_VISIBLE_DEVICES, "
        "another GPU count per pod), so NCCL cannot build its channels",
        "unset NCCL_GRAPH_FILE, or dump the graph again on a node of this shape with the same "
        "visible GPUs (`NCCL_GRAPH_DUMP_FILE=/tmp/graph.xml`) and use that one",
        "config",
        texts=("XML Import Channel : dev",),
        source=f"{_REPO}/src/graph/search.cc",
    ),
    Entry(
        "graph-search-fallback",
        "no path found for a topology pattern",
        "NCCL's topology search found no channel of the wanted speed for a pattern (ring, tree, "
        "NVLS) and fell back to the GPUs' simple order: a warning, not a failure, on nodes whose "
        "GPUs have no fast path between them (NCCL_P2P_DISABLE=1, GPUs behind different CPUs or "
        "with P2P blocked by ACS/IOMMU, a VM without P2P); collectives run, slower, and the search "
        "can take minutes at start",
        "nothing, where the job runs; for speed, enable P2P between the GPUs (no NCCL_P2P_DISABLE, "
        "ACS off on the PCIe switches, IOMMU passthrough) and check `nvidia-smi topo -m`; if a "
        "job fails, the error after this warning is its cause",
        "advisory",
        texts=("Could not find a path for pattern",),
        source=f"{_REPO}/src/graph/search.cc",
    ),
)

IB_SETUP = (
    Entry(
        "ib-memory-registration",
        "RDMA memory registration failed",
        "NCCL could not register memory with the InfiniBand/RoCE NIC (ibv_reg_mr): the pod's locked "
        "memory limit is too low (`Cannot allocate memory`), or GPU memory cannot be registered "
        "because GPUDirect RDMA is not available (nvidia-peermem not loaded, no DMA-BUF)",
        _RDMA_POD_FIX + "; " + _GDR_FIX,
        "config",
        texts=(
            "Call to ibv_reg_mr",
            "Call to ibv_reg_dmabuf_mr",
            "Unable to use GIN: Peermem is not supported",
        ),
        source=f"{_REPO}/src/misc/ibvwrap.cc",
    ),
    Entry(
        "ib-qp-rtr-timeout",
        "RDMA queue pair timed out reaching the peer",
        "NCCL could not bring an InfiniBand/RoCE queue pair to RTR (ready to receive) with the "
        "peer's NIC: the address (GID) of the remote NIC cannot be reached from this one. On a "
        "rail-optimised fabric (NIC N of every node on switch rail N, no routing between rails) "
        "NCCL paired NICs of different rails (cross-NIC connections, which NCCL allows by "
        "default); on RoCE the GID index names a link-local, IPv6 or RoCE v1 address instead of "
        "the routable RoCE v2 one",
        "set `NCCL_CROSS_NIC=0` in the pods' environment on a rail-optimised fabric (each NIC "
        "talks only to the same-index NIC of the peers); on RoCE set `NCCL_IB_GID_INDEX` to the "
        "RoCE v2 GID of the NIC's routable IPv4 address (`show_gids` or `ibv_devinfo -v -d "
        "mlx5_0`: usually 3); check each NIC reaches the peer's same-index NIC outside NCCL "
        "(`ib_write_bw -d mlx5_0 -x 3 PEER` from perftest) and, where ranks must cross rails, the "
        "routing between them",
        "network",
        texts=(
            # 2.19+: `Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1,
            # curr state INIT, next state RTR, local GID index 3, ...`; before: `with error ...`.
            "Call to ibv_modify_qp failed with 110 Connection timed out",
            "Call to ibv_modify_qp failed with error Connection timed out",
        ),
        source=f"{_REPO}/src/misc/ibvwrap.cc",
    ),
    Entry(
        "ib-modify-qp",
        "RDMA queue pair not connected",
        "NCCL could not bring an InfiniBand/RoCE queue pair up to the peer (ibv_modify_qp): the port "
        "is down, the GID index names no usable address (RoCE), the two sides use different "
        "link types (IB and RoCE), or on a rail-optimised fabric (each NIC index on its own "
        "switch or subnet) NCCL paired NICs of different rails, which cannot reach each other",
        _IB_LINK_FIX + "; pin the NICs with `NCCL_IB_HCA=mlx5_0,...` (in the same order on every node)",
        "network",
        texts=("Call to ibv_modify_qp",),
        source=f"{_REPO}/src/misc/ibvwrap.cc",
    ),
    Entry(
        "ib-verbs",
        "InfiniBand verbs call failed",
        "an InfiniBand verbs call of NCCL failed or the HCA cannot be opened in the container: "
        "/dev/infiniband is not mounted (no RDMA resource requested), the locked memory limit is "
        "too low, or the HCA is in error",
        _RDMA_POD_FIX + "; " + _HOST_CHECK + "; `NCCL_IB_DISABLE=1` falls back to sockets",
        "config",
        texts=(
            "Call to ibv_",
            "NET/IB : Unable to open device",
            "NET/IB : Unable to query device",
            "NET/IB : Unable to query port",
            "ibv_post_send() failed",
            "ibv_post_recv() failed",
        ),
        source=f"{_REPO}/src/transport/net_ib/init.cc",
    ),
    Entry(
        "ib-incompatible",
        "incompatible NICs",
        "the ranks chose NICs of different link layers or properties (InfiniBand against RoCE, "
        "different speeds) for one connection",
        "select NICs of one kind on every node with `NCCL_IB_HCA` (e.g. `=mlx5_0,mlx5_1`); "
        "`ibv_devinfo | grep link_layer` on {node}",
        "config",
        texts=(
            "Attempted to connect incompatible devices",
            "device is incompatible with the local",
            "Attempted to merge incompatible devices",
        ),
        source=f"{_REPO}/src/transport/net_ib/connect.cc",
    ),
    Entry(
        "ib-async-event",
        "HCA error event",
        "the InfiniBand/RoCE adapter reported an error event (port error, fatal QP/CQ event, "
        "catastrophic error): the link went down or the adapter failed",
        _HOST_CHECK + "; reseat or replace the cable, update the NIC firmware, and drain {node} "
        "(`kubectl drain {node} --ignore-daemonsets`) if the port keeps failing",
        "network",
        texts=("NET/IB : Got async event", "async fatal event"),
        source=f"{_REPO}/src/transport/net_ib/common.cc",
    ),
    Entry(
        "mlx5-completion-error",
        "NVIDIA/Mellanox NIC reported a failed work completion",
        "the mlx5 verbs provider (rdma-core) got a work completion with error from the NIC (the "
        "dump after it holds the vendor syndrome): an InfiniBand/RoCE transfer failed, so the "
        "collective's peer sees the connection drop (NCCL's remote error follows): a flapping or "
        "faulty link, a peer that died, or GPUDirect RDMA blocked by PCIe ACS",
        _IB_LINK_FIX,
        "network",
        texts=("got completion with error",),
        source="https://github.com/linux-rdma/rdma-core/blob/master/providers/mlx5/cq.c",
    ),
)


def _wc(number: int, name: str, text: str, cause: str, fix: str) -> Entry:
    """An InfiniBand work-completion status as NCCL prints it (`Got completion from peer ... with
    status=12` or `with error 12`), read by its number."""
    return Entry(
        f"ibv-wc-{name.lower().replace('_', '-')}",
        f"IBV_WC_{name} ({text})",
        f"an InfiniBand/RoCE transfer failed with work-completion status {number} ({text}): {cause}",
        fix,
        "network",
        aliases=(str(number), f"IBV_WC_{name}"),
        source=_RDMA,
    )


_WC_INTERNAL = (
    "a local error of the adapter or its driver (NCCL and the NIC driver or firmware disagree)",
    _HOST_CHECK + "; update the MOFED/DOCA driver and NIC firmware, and the NCCL net plugin to match NCCL",
)
_WC_REMOTE = (
    "the peer's adapter rejected the request: the remote rank failed or deregistered its memory, or "
    "GPUDirect RDMA is broken on the peer",
    "read the peer rank's log first; " + _GDR_FIX.replace("{node}", "the peer"),
)
_WC_RETRY = (
    "the peer did not answer within the transport's retries: a link down or flapping, a wrong "
    "RoCE GID or missing lossless configuration, or a peer that died",
    _IB_LINK_FIX,
)
WORK_COMPLETIONS = (
    _wc(1, "LOC_LEN_ERR", "local length error", *_WC_INTERNAL),
    _wc(2, "LOC_QP_OP_ERR", "local QP operation error", *_WC_INTERNAL),
    _wc(3, "LOC_EEC_OP_ERR", "local EE context operation error", *_WC_INTERNAL),
    _wc(
        4,
        "LOC_PROT_ERR",
        "local protection error",
        "the NIC could not access the registered memory: in most cases PCIe ACS (or an IOMMU) "
        "breaks GPUDirect RDMA between the NIC and the GPU",
        _GDR_FIX,
    ),
    _wc(
        5,
        "WR_FLUSH_ERR",
        "Work Request Flushed Error",
        "the queue pair was already in error after an earlier failure (the first completion error "
        "in the log is the cause), or NICs of one node cannot reach each other",
        "look for the first `Got completion` line of the run; " + _IB_LINK_FIX,
    ),
    _wc(6, "MW_BIND_ERR", "memory management operation error", *_WC_INTERNAL),
    _wc(7, "BAD_RESP_ERR", "bad response error", *_WC_REMOTE),
    _wc(
        8,
        "LOC_ACCESS_ERR",
        "local access error",
        "the memory registration does not allow the access",
        _GDR_FIX,
    ),
    _wc(9, "REM_INV_REQ_ERR", "remote invalid request error", *_WC_REMOTE),
    _wc(10, "REM_ACCESS_ERR", "remote access error", *_WC_REMOTE),
    _wc(11, "REM_OP_ERR", "remote operation error", *_WC_REMOTE),
    _wc(12, "RETRY_EXC_ERR", "transport retry counter exceeded", *_WC_RETRY),
    _wc(
        13,
        "RNR_RETRY_EXC_ERR",
        "RNR retry counter exceeded",
        "the peer posted no receive buffer in time: the remote rank is hung or gone",
        _PEER_FIX,
    ),
    _wc(14, "LOC_RDD_VIOL_ERR", "local RDD violation error", *_WC_INTERNAL),
    _wc(15, "REM_INV_RD_REQ_ERR", "remote invalid RD request", *_WC_REMOTE),
    _wc(16, "REM_ABORT_ERR", "aborted error", *_WC_REMOTE),
    _wc(17, "INV_EECN_ERR", "invalid EE context number", *_WC_INTERNAL),
    _wc(18, "INV_EEC_STATE_ERR", "invalid EE context state", *_WC_INTERNAL),
    _wc(
        19,
        "FATAL_ERR",
        "fatal error",
        "the adapter hit a fatal error",
        _HOST_CHECK + "; reset the NIC (`mlxfwreset`) or drain and reboot {node}",
    ),
    _wc(20, "RESP_TIMEOUT_ERR", "response timeout error", *_WC_RETRY),
    _wc(21, "GENERAL_ERR", "general error", *_WC_INTERNAL),
    _wc(22, "TM_ERR", "TM error", *_WC_INTERNAL),
    _wc(23, "TM_RNDV_INCOMPLETE", "TM software rendezvous", *_WC_INTERNAL),
)

GPU_PATHS = (
    Entry(
        "p2p-disabled-nvlink",
        "P2P disabled between NVLink-connected GPUs",
        "the driver reports P2P disabled between two GPUs that NVLink connects: an NVLink or "
        "NVSwitch fault (or Fabric Manager not running on an HGX board)",
        "on {node}: `nvidia-smi nvlink -s` (every link up), `nvidia-smi topo -p2p r`, "
        "`systemctl status nvidia-fabricmanager`; drain {node} (`kubectl drain {node} "
        "--ignore-daemonsets`) and reset the GPUs (`nvidia-smi -r`) or reboot",
        "nvlink",
        texts=("P2P is disabled between NVLINK connected GPUs",),
        source=f"{_REPO}/src/graph/paths.cc",
    ),
    Entry(
        "p2p-peer-access",
        "GPU peer access failed",
        "NCCL could not enable peer access or map another GPU's memory through CUDA IPC: PCIe ACS or "
        "an IOMMU blocks P2P, or the ranks run in containers that cannot share CUDA IPC handles",
        "on {node}: `nvidia-smi topo -p2p r`; `sudo lspci -vvv | grep ACSCtl` (disable ACS), boot "
        "with `iommu=pt`; run the ranks of one node in one pod; `NCCL_P2P_DISABLE=1` confirms it",
        "hardware",
        texts=(
            "failed to peer with device",
            "failed to open CUDA IPC handle",
            "cudaIpcGetMemHandle failed",
            "cudaIpcOpenMemHandle failed",
        ),
        source=f"{_REPO}/src/transport/p2p.cc",
    ),
    Entry(
        "nvls",
        "NVLink SHARP multicast failed",
        "NVLink SHARP (NVLS) multicast memory could not be set up: the NVSwitch fabric or Fabric "
        "Manager is in error (CUDA multicast calls fail), most often because Fabric Manager was "
        "stopped and started again without a GPU reset in between, while the GPUs kept the "
        "multicast state of its previous run",
        _NVLS_FIX,
        "fabric",
        aliases=("nvls",),
        texts=("Failed to bind NVLink SHARP (NVLS) Multicast memory",),
        source=f"{_REPO}/src/transport/nvls.cc",
    ),
    Entry(
        "mnnvl",
        "multi-node NVLink (IMEX) not working",
        "multi-node NVLink (GB200 NVL72 and the like) is available but cannot be used: the container "
        "has no IMEX channel (/dev/nvidia-caps-imex-channels) or the IMEX domain of the nodes is "
        "not up, so NVLink fabric memory cannot be exported or imported",
        "on Kubernetes run the pods in a ComputeDomain of the NVIDIA DRA driver (it starts IMEX and "
        "mounts the channel), check `nvidia-imex-ctl -N` on {node} and `ls /dev/nvidia-caps-imex-channels` "
        "in the pod; `NCCL_MNNVL_ENABLE=0` works around it without multi-node NVLink",
        "fabric",
        texts=(
            "is available but not working on this system",
            "MNNVL is not supported on this system",
            "cuMemExportToShareableHandle (FABRIC) failed",
            "cuMemImportFromShareableHandle failed",
            "FABRIC handle not valid",
        ),
        source=f"{_REPO}/src/mnnvl.cc",
    ),
    Entry(
        "duplicate-gpu",
        "two ranks on one GPU",
        "two ranks of one communicator use the same GPU: the pods were given one GPU twice "
        "(time-slicing or MPS sharing, a wrong CUDA_VISIBLE_DEVICES) or a rank selected the wrong device",
        "give each rank its own GPU: one `nvidia.com/gpu` per rank without sharing, and "
        "`torch.cuda.set_device(local_rank)`; NCCL_MULTI_RANK_GPU_ENABLE=1 only where sharing is meant",
        "config",
        texts=("Duplicate GPU detected", "Multiple Ranks are using the same GPU"),
        source=f"{_OLD}/src/init.cc",
    ),
)

RUNTIME = (
    Entry(
        "cuda-failure",
        "CUDA call failed inside NCCL",
        "a CUDA call inside NCCL failed: '{error}'",
        "run `gpuctl verify --level cuda` on {node} (it names the CUDA error per GPU); check that "
        "the image's NCCL was built for this CUDA and GPU architecture",
        "application",
        aliases=("failure",),
    ),
    Entry(
        "gpu-memory",
        "GPU memory exhausted",
        "NCCL could not allocate its buffers in GPU memory: the GPU is full (the program, or another "
        "process on the same GPU)",
        "on {node}: `nvidia-smi` (memory used and processes per GPU); leave room for NCCL's buffers "
        "or lower `NCCL_BUFFSIZE`",
        "application",
        aliases=("CUDA malloc", "CUDA calloc", "CUDA calloc async", "out of memory"),
        texts=("[Rem Allocator] Allocation failed",),
        source=f"{_REPO}/src/include/alloc.h",
    ),
    Entry(
        "host-memory",
        "host memory exhausted",
        "NCCL could not allocate host memory (or pinned host memory): the container's memory limit "
        "is reached",
        "raise the pod's `resources.limits.memory`; `kubectl describe pod POD` shows OOMKilled",
        "config",
        aliases=("malloc", "CUDA host alloc"),
        source=f"{_REPO}/src/include/alloc.h",
    ),
    Entry(
        "proxy",
        "NCCL proxy thread failed",
        "NCCL's proxy thread (which drives the network and shared-memory transfers) failed an "
        "operation, usually after an earlier error of a peer or transport",
        "read the WARN lines before this one and the other ranks' logs; " + _DEBUG,
        "application",
        texts=(
            # Not "[Proxy Service" alone: NCCL_DEBUG=INFO prints "[Proxy Service] Device 0 CPU
            # core 29" for every healthy rank.
            "] Failed to execute operation",
            "[Service thread] Error encountered progressing operation",
            "[Proxy Progress] Failed to set CUDA device",
            "ncclProxyCallBlockingUDS call to",
            "Proxy Call to rank",
        ),
        source=f"{_REPO}/src/proxy.cc",
    ),
    Entry(
        "watchdog-timeout",
        "collective timed out",
        "a collective did not finish within its timeout (PyTorch's NCCL watchdog, nccl-tests' `-T`, "
        "a stuck watchdog): a rank hung or died, the ranks called different collectives, or the "
        "network stalled",
        "look for the first error of any rank (`kubectl logs POD --previous` on each); rerun with "
        "`NCCL_DEBUG=INFO TORCH_NCCL_ASYNC_ERROR_HANDLING=1`; raise the timeout "
        "(`init_process_group(timeout=...)`) only for known-slow steps",
        "application",
        texts=(
            "Watchdog caught collective operation timeout",
            "ProcessGroupNCCL's watchdog got stuck",
            "Some NCCL operations have failed or timed out",
            "due to a collective timeout",
            "NCCL communicator was aborted",
            "Test timeout (",
        ),
        source=_TORCH,
    ),
    Entry(
        "wrong-results",
        "nccl-tests found wrong values",
        "the collective produced wrong values (nccl-tests' out-of-bounds count is not 0): data was "
        "corrupted between the GPUs (NVLink or PCIe errors, failing GPU memory) or by a driver or "
        "NCCL fault",
        "on {node}: `sudo dmesg | grep -i xid`, `nvidia-smi nvlink -e` (error counters), "
        "`nvidia-smi -q -d ECC`; run `dcgmi diag -r 3`; drain {node} (`kubectl drain {node} "
        "--ignore-daemonsets`) until the faulty GPU or link is found",
        "hardware",
        aliases=("FAILED",),
        source="https://github.com/NVIDIA/nccl-tests/blob/master/src/util.cu",
    ),
    Entry(
        "library-version",
        "NCCL library and application versions differ",
        "the NCCL library loaded is not the one the program was built for (an older libnccl found "
        "first, e.g. through LD_LIBRARY_PATH or a system package shadowing the framework's own)",
        "use the NCCL the framework ships (drop the LD_LIBRARY_PATH/LD_PRELOAD override) or install "
        "the version it was built with; `python -c 'import torch; print(torch.cuda.nccl.version())'` "
        "shows the one PyTorch expects",
        "packages",
        texts=(
            "NCCL library is too old",
            "The application was compiled with too old version of NCCL",
            # 2.30 (src/dev_runtime.cc): the device API's check.
            "NCCL library is not backwards compatible",
        ),
        source=f"{_REPO}/src/init.cc",
    ),
    Entry(
        "nvml",
        "NVML unusable inside NCCL",
        "NCCL cannot use NVML in the container: the driver's libnvidia-ml.so.1 was not injected "
        "(NVIDIA_DRIVER_CAPABILITIES without `utility`, no NVIDIA runtime), or NVML does not see "
        "the GPU CUDA gave the rank",
        "run the pod with the NVIDIA runtime (`runtimeClassName: nvidia` or the default runtime) and "
        "`NVIDIA_DRIVER_CAPABILITIES=compute,utility`; `kubectl exec POD -- nvidia-smi -L` must list "
        "the pod's GPUs",
        "toolkit",
        texts=(
            "Failed to open libnvidia-ml.so.1",
            "nvmlInit_v2() failed",
            "nvmlDeviceGetHandleByPciBusId() failed",
            "No NVML device handle",
        ),
        source=f"{_REPO}/src/misc/nvmlwrap.cc",
    ),
)

CATALOGUE = Catalogue(
    id="nccl",
    title="NCCL results and warnings",
    source=f"{_REPO}/src/nccl.h.in",
    version="NCCL 2.30.7 (ncclResult_t, ncclGetErrorString); WARN texts of releases 2.7 to 2.30",
    entries=(*RESULTS, *SHM, *SOCKETS, *TOPOLOGY, *IB_SETUP, *WORK_COMPLETIONS, *GPU_PATHS, *RUNTIME),
    applies_to=("nccl-workload", "cuda-workload"),
    readers=(
        # Each reader starts with a literal, so it only runs on text holding it. The short results
        # (`internal error`, `invalid usage`, `timeout`) are read where NCCL's callers print them:
        # PyTorch `NCCL error in: FILE:LINE, internal error - please report ...`, `NCCL error: ...`,
        r"NCCL error(?: in: \S+,|:) (?P<code>[a-z][a-z ]{1,70}[a-z])",
        # nccl-tests `Test NCCL failure common.cu:891 'invalid usage (run with ...'`.
        r"NCCL failure \S+:\d+ '(?P<code>[a-z][a-z ]{1,70}[a-z])",
        # InfiniBand completions: `with error 12,`, `with status=12 `, `with status=IBV_WC_...(12)`.
        r"Got completion (?:from peer \S+ )?with (?:error |status=)(?:\w+\()?(?P<code>\d+)",
        # `transport/nvls.cc:254 NCCL WARN Cuda failure 401 '...'`: the multicast calls of NVLS.
        r"transport/(?P<code>nvls)\.cc:\d+ (?:\(\w+\) )?NCCL WARN Cuda failure",
        # `Cuda failure 'out of memory'` is NCCL's own allocation failing: before the generic reader,
        # so that at one place it comes first.
        r"Cuda failure(?: \d+)? '(?P<code>out of memory)'",
        # `NCCL WARN Cuda failure 'named symbol not found'`, nccl-tests' `Test CUDA failure
        # common.cu:1013 '...'` (the group `code` reads `failure`, an alias of the entry, after the
        # literal). A CUDA message whose entry names a cause below the program (`'system not yet
        # initialized'`, 711's `'peer mapping resources exhausted'`) is the CUDA catalogue's finding.
        rf"Cuda (?P<code>failure)(?!(?: \d+| \S+:\d+)? '(?:{NODE_MESSAGES})')(?: \d+| \S+:\d+)? "
        r"'?(?P<error>[^'\n]{1,160})",
        # NCCL's allocation failures: `Failed to CUDA calloc 6291456 bytes`, `Failed to malloc ...`.
        r"Failed to (?P<code>(?:CUDA )?(?:malloc|calloc async|calloc|host alloc)) \d+ bytes",
        # nccl-tests' summary `# Out of bounds values : 50 FAILED` (0 reads `OK`).
        r"Out of bounds values\s*: [1-9]\d* (?P<code>FAILED)",
    ),
    unknown=Entry(
        "?",
        "a result or status not in the catalogue",
        "NCCL reported '{code}', which this catalogue does not list (a newer NCCL or network plugin)",
        _DEBUG + "; NCCL's troubleshooting guide lists the usual causes (" + _GUIDE + ")",
        "application",
    ),
)
