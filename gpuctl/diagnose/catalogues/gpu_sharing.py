"""GPU sharing by a vGPU layer: HAMi (its in-container limiter HAMi-core, formerly 4pdvGPU, and
its scheduler extender's filter reasons).

HAMi-core (`libvgpu.so`, preloaded into every container that asks for `nvidia.com/gpumem` or
`nvidia.com/gpucores`) counts the container's device memory against its slice and refuses an
allocation past it, printing `[HAMI-core ERROR (pid:... allocator.c:53)]: Device 0 OOM USED /
LIMIT` before the program's own CUDA out-of-memory error; its processes share a region in
`/tmp/cudevshr.cache` (CUDA_DEVICE_MEMORY_SHARED_CACHE). The entries are its `LOG_ERROR` and
`LOG_WARN` messages (src/allocator/allocator.c, src/multiprocess/multiprocess_memory_limit.c).

HAMi's scheduler rejects a card with one of the reason codes of pkg/device/common/common.go,
counted per node (`3/8 CardInsufficientMemory` in its log) or per reason in its FilteringFailed
event (`2 nodes CardInsufficientMemory(node-a,node-b)`); the codes and what to do are HAMi's
troubleshooting page (Project-HAMi/website docs/troubleshooting/scheduling-failures.md). The
kube-scheduler's own `Insufficient nvidia.com/gpumem` is the table's scheduling rows.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_CORE = "https://github.com/Project-HAMi/HAMi-core/blob/8f3a89c67b037d8fdfe6c4cd4d8c4f0cd6504811/"
_ALLOCATOR = _CORE + "src/allocator/allocator.c"
_SHARED = _CORE + "src/multiprocess/multiprocess_memory_limit.c"
_HAMI = "https://github.com/Project-HAMi/HAMi/blob/4707fb02c91c545bc7343ce26dba4c32919f9a3e/"
_REASONS = _HAMI + "pkg/device/common/common.go"
_SCHEDULER = _HAMI + "pkg/scheduler/scheduler.go"
_TROUBLESHOOTING = (
    "https://github.com/Project-HAMi/website/blob/8920a77377810d4a0b945a1debc09f311536cafd/"
    "docs/troubleshooting/scheduling-failures.md"
)

_POD_LIMITS = (
    "`kubectl get pod POD -n NAMESPACE -o jsonpath='{{.spec.containers[*].resources.limits}}'` shows "
    "the slice asked for"
)
_SCHED_LOG = "`kubectl -n kube-system logs deploy/hami-scheduler -c vgpu-scheduler-extender`"
_NODE_USAGE = (
    "`kubectl get node {node} -o jsonpath='{{.metadata.annotations.hami\\.io/node-nvidia-register}}'` "
    "lists each card's memory and cores as HAMi registered them"
)
_STALE_REGION = (
    "stop every process of the container (delete the pod), remove the shared region "
    "(`rm -f /tmp/cudevshr.cache` in the container, or the path CUDA_DEVICE_MEMORY_SHARED_CACHE "
    "names) and start it again; do not mount /tmp from the host or share it between pods"
)

_CORE_ENTRIES = (
    Entry(
        "oom",
        "vGPU memory limit reached",
        "the container asked for more device memory than its HAMi slice allows (the `USED / LIMIT` "
        "bytes on the line): HAMi-core refused the allocation, so the program then fails with "
        "CUDA out of memory although the physical GPU may have memory free. HAMi counts what the "
        "container allocated, including each CUDA context (a few hundred MiB per process)",
        "raise the pod's `nvidia.com/gpumem` (MiB) or `nvidia.com/gpumem-percentage` to what the "
        "program needs plus its contexts, or make the program use less (smaller batch, "
        "PYTORCH_CUDA_ALLOC_CONF, a framework memory fraction below the slice); " + _POD_LIMITS,
        "config",
        aliases=("OOM",),
        source=_ALLOCATOR,
    ),
    Entry(
        "allocate-failed",
        "device memory allocation failed under HAMi",
        "HAMi-core's allocation on the real GPU failed with the CUDA driver error in `res=` (2: "
        "out of memory): the card itself is full, because the slices HAMi put on it add up to "
        "more than it has (deviceMemoryScaling above 1, or another pod or a process outside "
        "Kubernetes using the card) or the program's slice is larger than what is left",
        "on {node}: `nvidia-smi` shows who uses the card; keep devicememoryScaling at 1 in HAMi's "
        "device plugin config unless oversubscription is wanted, move processes that are not pods "
        "off the GPU, or lower the pods' `nvidia.com/gpumem` so the slices fit the card; " + _NODE_USAGE,
        "config",
        texts=("cuMemoryAllocate failed res=",),
        source=_ALLOCATOR,
    ),
    Entry(
        "limit-inconsistency",
        "vGPU limits differ from the shared region",
        "a process of the container started with other memory limits than the shared region "
        "(/tmp/cudevshr.cache) the container's first process created: the region is left over "
        "from a container with another slice (a restarted container keeping /tmp, a /tmp shared "
        "between containers or pods), or processes see different CUDA_DEVICE_MEMORY_LIMIT "
        "variables; HAMi then enforces the region's limits, not the pod's",
        _STALE_REGION,
        "config",
        texts=("Limit inconsistency detected for",),
        source=_SHARED,
    ),
    Entry(
        "shared-region-failed",
        "HAMi-core shared region unusable",
        "HAMi-core could not open, map, lock or write its shared region (/tmp/cudevshr.cache): a "
        "process holding its lock was killed (the errno on the line: 4 is an interrupted call), "
        "/tmp is read-only or full, or the region was written by another HAMi-core version",
        _STALE_REGION + "; keep the HAMi device plugin and its libvgpu.so at one version",
        "config",
        texts=(
            "Failed to lock shrreg",
            "Fail to lock shrreg",
            "Fail to open shrreg",
            "Fail to map shrreg",
            "Fail to init shrreg",
            "Fail to write shrreg",
            "Fail to create new shrreg file",
            "Uninitialized shrreg",
            "Delete /tmp/cudevshr.cache and restart all processes",
            "is different from the file's version number",
            "Postinit lock timeout after",
        ),
        source=_SHARED,
    ),
    Entry(
        "invalid-limit",
        "vGPU memory limit not readable",
        "HAMi-core could not read the container's memory limit variable (CUDA_DEVICE_MEMORY_LIMIT "
        "or CUDA_DEVICE_MEMORY_LIMIT_<N>, set by HAMi's device plugin from `nvidia.com/gpumem`): "
        "its value is not a size or overflows, so no limit is enforced for that device",
        "set `nvidia.com/gpumem` as a whole number of MiB (or `nvidia.com/gpumem-percentage`) in "
        "the pod's limits and do not set CUDA_DEVICE_MEMORY_LIMIT by hand; " + _POD_LIMITS,
        "config",
        texts=("invalid device memory limit", "Limit overflow: CUDA_DEVICE"),
        source=_SHARED,
    ),
)

_RESOURCES = "`nvidia.com/gpu`, `nvidia.com/gpumem` and `nvidia.com/gpucores`"

_FILTER_ENTRIES = (
    Entry(
        "cardinsufficientmemory",
        "no card with enough free vGPU memory",
        "HAMi's scheduler found no card whose unallocated memory (total minus what HAMi gave other "
        "pods, not what they use now) covers the pod's `nvidia.com/gpumem`",
        "lower the pod's `nvidia.com/gpumem`, wait for or delete pods holding the cards, or add GPU "
        "nodes; " + _NODE_USAGE,
        "config",
        aliases=("CardInsufficientMemory",),
        source=_TROUBLESHOOTING,
    ),
    Entry(
        "cardinsufficientcore",
        "no card with enough free compute share",
        "HAMi's scheduler found no card with the compute percentage the pod asks in "
        "`nvidia.com/gpucores` left over after the other pods' shares (CardComputeUnitsExhausted: "
        "the pod asks no cores and every card's compute is fully committed)",
        "lower the pod's `nvidia.com/gpucores` (or give a pod without it an explicit value), or "
        "free cards (pods asking 100 cores take a card whole); " + _NODE_USAGE,
        "config",
        aliases=("CardInsufficientCore", "CardComputeUnitsExhausted"),
        source=_TROUBLESHOOTING,
    ),
    Entry(
        "cardtimeslicingexhausted",
        "card holds its maximum number of tasks",
        "every card already runs as many pods as HAMi's split count allows (deviceSplitCount, 10 "
        "by default), whatever memory is left",
        "raise `devicePlugin.deviceSplitCount` in HAMi's Helm values (then restart hami-device-"
        "plugin on {node}), or spread the pods over more GPUs",
        "config",
        aliases=("CardTimeSlicingExhausted",),
        source=_TROUBLESHOOTING,
    ),
    Entry(
        "cardtypemismatch",
        "card type not the one asked for",
        "the pod restricts the GPU model (annotation `nvidia.com/use-gputype` or "
        "`nvidia.com/nouse-gputype`) or the sharing mode (`nvidia.com/vgpu-mode`), and no card "
        "of the node matches (CardNotFoundCustomFilterRule: a vendor's own filter rule refused it)",
        "correct or remove the pod's GPU type annotations (the type is HAMi's name, e.g. "
        "`NVIDIA-NVIDIA A100-SXM4-80GB`); " + _NODE_USAGE,
        "config",
        aliases=("CardTypeMismatch", "CardNotFoundCustomFilterRule"),
        source=_TROUBLESHOOTING,
    ),
    Entry(
        "carduuidmismatch",
        "card UUID not the one asked for",
        "the pod pins or excludes GPUs by UUID (annotation `nvidia.com/use-gpuuuid` or "
        "`nvidia.com/nouse-gpuuuid`) and no card of the node is allowed",
        "correct the UUIDs in the pod's annotations (`nvidia-smi -L` on {node} lists them) or "
        "remove the annotation",
        "config",
        aliases=("CardUuidMismatch",),
        source=_TROUBLESHOOTING,
    ),
    Entry(
        "numanotfit",
        "cards not on one NUMA node",
        "the pod asks for all its cards on one NUMA node (annotation `nvidia.com/numa-bind: "
        '"true"`) and the candidate cards span a NUMA boundary',
        "ask for fewer cards, drop the NUMA binding, or free cards on one NUMA node of {node} "
        "(`nvidia-smi topo -m` shows the NUMA affinity)",
        "config",
        aliases=("NumaNotFit",),
        source=_TROUBLESHOOTING,
    ),
    Entry(
        "exclusivedeviceallocateconflict",
        "exclusive card already shared",
        "the pod asks for a card exclusively (100 cores, or an exclusive mode) and every card "
        "already serves another pod, or a pod holds a card exclusively that this one would share",
        "wait for or move the pods on the cards, or ask for a share (`nvidia.com/gpucores` below "
        "100) instead of a whole card",
        "config",
        aliases=("ExclusiveDeviceAllocateConflict",),
        source=_TROUBLESHOOTING,
    ),
    Entry(
        "cardnothealth",
        "card unhealthy or cordoned",
        "HAMi's device plugin marked the card unhealthy (an Xid or the GPU lost: its log says which) "
        "or the card is cordoned, so the scheduler skips it",
        "on {node}: `nvidia-smi -q` and `dmesg | grep -i xid` for the card; after fixing it, restart "
        "hami-device-plugin on {node} so it registers the card healthy again",
        "hardware",
        aliases=("CardNotHealth", "CardCordoned"),
        source=_TROUBLESHOOTING,
    ),
    Entry(
        "cardmigtopologyinfeasible",
        "no MIG placement for the request",
        "the card is in MIG mode (HAMi's dynamic MIG) and no allowed MIG profile with a free "
        "placement matches the memory asked for, although memory may be free in total",
        "ask for memory matching a real MIG profile size of the card (`nvidia-smi mig -lgip`) or "
        "drain the card so its layout can be rebuilt",
        "mig",
        aliases=("CardMigTopologyInfeasible",),
        source=_TROUBLESHOOTING,
    ),
    Entry(
        "nodeinsufficientdevice",
        "node has fewer cards than asked for",
        "the pod asks for more cards (`nvidia.com/gpu`) than the node has, or than it has free "
        "with the memory and cores asked for each (AllocatedCardsInsufficientRequest: `2/8` "
        "counts the cards that did fit); HAMi does not split one container's cards over nodes",
        "lower the pod's `nvidia.com/gpu` to at most the node's card count, or ask less memory per "
        "card; " + _NODE_USAGE,
        "config",
        aliases=("NodeInsufficientDevice", "AllocatedCardsInsufficientRequest"),
        texts=("request devices nums cannot exceed the total number of devices on the node",),
        source=_TROUBLESHOOTING,
    ),
    # HAMi's node lock (pkg/util/nodelock: the hami.io/mutex.lock annotation the scheduler sets
    # before binding and the device plugin's Allocate removes) and the device plugin's Allocate
    # that finds no pod HAMi bound to the node (pkg/device-plugin/nvidiadevice: `no binding pod
    # found on node %s, which is unexpected`).
    Entry(
        "node-locked",
        "HAMi node lock held",
        "HAMi's scheduler refused to bind the pod: another pod's binding holds the node's lock "
        "(the hami.io/mutex.lock annotation) and has not released it, because that pod's Allocate "
        "never reached the HAMi device plugin on the node (the plugin not running there, the pod "
        "deleted or failed before it started); the lock expires after 5 minutes",
        "check the HAMi device plugin runs on the node (`kubectl -n kube-system get pods -o wide | "
        "grep hami-device-plugin`) and `kubectl get node NODE -o yaml | grep hami.io`; a stale "
        "lock can be removed with `kubectl annotate node NODE hami.io/mutex.lock-`; upgrade HAMi "
        "where the lock is not released after a failed binding",
        "plugin",
        texts=("has been locked within 5 minutes",),
        source=_HAMI + "pkg/util/nodelock/nodelock.go",
        transient=True,
    ),
    Entry(
        "no-binding-pod",
        "HAMi device plugin found no pod bound by HAMi",
        "the kubelet asked HAMi's device plugin for GPUs for a pod that HAMi's scheduler did not "
        "bind to this node (it carries none of HAMi's binding annotations), so the plugin refused "
        "it (UnexpectedAdmissionError): the pod was scheduled by the default scheduler because "
        "HAMi's admission webhook did not set `schedulerName: hami-scheduler` (the webhook "
        "unreachable, its namespace excluded, the pod created before HAMi), or nodeName was set "
        "directly",
        "check `kubectl get pod POD -o jsonpath='{{.spec.schedulerName}}'` names hami-scheduler and "
        "that the webhook answers (`kubectl get mutatingwebhookconfiguration | grep hami`, the "
        "hami-scheduler Service reachable from the API server); then recreate the pod",
        "plugin",
        texts=("no binding pod found on node",),
        source=_HAMI + "pkg/device-plugin/nvidiadevice/server.go",
    ),
    Entry(
        "resourcequotanotfit",
        "HAMi resource quota exceeded",
        "the namespace's ResourceQuota on HAMi's resources (`limits.nvidia.com/gpumem`, ...) "
        "has not enough left for the pod",
        "`kubectl describe resourcequota -n NAMESPACE`; raise the quota or lower the pod's " + _RESOURCES,
        "config",
        aliases=("ResourceQuotaNotFit",),
        source=_TROUBLESHOOTING,
    ),
    Entry(
        "modenotfit",
        "card in another sharing mode",
        "the node cannot run the virtualization mode the pod asks for on that vendor's devices "
        "(HAMi-core sharing on a node that does not support it, no profile matching the request)",
        "ask for a mode the node's devices support (the vendor's HAMi user guide), or move the "
        "pod to nodes configured for that mode",
        "config",
        aliases=("ModeNotFit",),
        source=_TROUBLESHOOTING,
    ),
    Entry(
        "nodeunfitpod",
        "no HAMi card fits the pod",
        "HAMi's scheduler extender found no card on the node with room for the pod's "
        + _RESOURCES
        + " (as HAMi accounts them: pods still terminating count until they are gone); its "
        "FilteringFailed events and its log name the card-level reason",
        "`kubectl describe pod POD -n NAMESPACE` (FilteringFailed events from hami-scheduler) and "
        + _SCHED_LOG
        + " (the `reason=` of NodeUnfitPod) say which limit; lower the request or free cards",
        "config",
        aliases=("NodeUnfitPod", "do not meet"),
        texts=("all node scores do not meet",),
        source=_SCHEDULER,
    ),
)

_CODES = "|".join(code for entry in _FILTER_ENTRIES for code in entry.aliases if code != "NodeUnfitPod")

CATALOGUE = Catalogue(
    id="gpu-sharing",
    title="GPU sharing (HAMi vGPU limiter and scheduler)",
    source=_REASONS,
    version="HAMi 4707fb0 (2026-08), HAMi-core 8f3a89c (2026-06)",
    entries=_CORE_ENTRIES + _FILTER_ENTRIES,
    applies_to=("cuda-workload", "nccl-workload", "events", "scheduling", "plugin-log"),
    readers=(
        # HAMi-core's allocator: `Device 0 OOM 3171158016 / 3145728000`.
        r"(?-i:(?:HAMI-core|4pdvGPU) ERROR)[^\]]{0,120}\]: Device (?P<gpu>\d+) (?P<code>OOM) "
        r"(?P<used>\d+) / (?P<limit>\d+)",
        # The scheduler's reasons: `3/8 CardInsufficientMemory` (per node, in its log) and
        # `2 nodes CardInsufficientMemory(node-a,node-b)` (its FilteringFailed event).
        r"\b\d+/\d+ (?P<code>(?-i:" + _CODES + r"))\b",
        r"\b\d+ nodes (?:failed: )?(?P<code>(?-i:" + _CODES + r"))\b",
        # kube-scheduler's message after the extender filtered: `1 NodeUnfitPod`.
        r"nodes are available: (?:[^.]*, )?\d+ (?P<code>(?-i:NodeUnfitPod))\b",
        r"(?-i:no available node), \d+ nodes (?P<code>do not meet)",
    ),
)
