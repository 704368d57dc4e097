"""Why a pod is not scheduled, for any pod: kube-scheduler's FailedScheduling reasons, the
cluster-autoscaler's NotTriggerScaleUp reasons and Karpenter's scheduling errors.

Each message lists several reasons (one per node, node group or NodePool); diagnose_scheduling
reads all of them. Within each source the table order is the order in which a reason is reported
as the cause, the GPU's own first: the GPU taint, then GPUs short, then what the nodes that passed
the pod's own selection lack (pods, CPU and memory, ports, volumes, pod (anti-)affinity, spread),
then nodes left out by their state, their taints and the pod's node selection. The other reasons
of the message follow the cause as the rest.

Sources, as the messages are worded there:
- kube-scheduler: https://github.com/kubernetes/kubernetes/tree/v1.34.0/pkg/scheduler/framework/
  plugins (tainttoleration: `node(s) had untolerated taint {%s: %s}`; noderesources `Insufficient
  %v`, `Too many pods`; nodeports, volumebinding, volumezone, interpodaffinity, podtopologyspread,
  nodeunschedulable, nodeaffinity ErrReason constants); older releases' predicate names
  (PodToleratesNodeTaints, MatchNodeSelector, ...) and `had taint {k: v}, that the pod didn't
  tolerate` (v1.18-v1.24) are read as well.
- cluster-autoscaler: https://github.com/kubernetes/autoscaler/blob/cluster-autoscaler-1.34.0/
  cluster-autoscaler/processors/status/eventing_scale_up_processor.go (`pod didn't trigger
  scale-up: ` and `N reason` per node group: the scheduler's reasons run against the group's
  template node, and core/scaleup/orchestrator/skippedreasons.go: `max node group size reached`,
  `in backoff after failed scale-up`, `max cluster %s limit reached`, `max total nodes in cluster
  reached`).
- Karpenter: https://github.com/kubernetes-sigs/karpenter/blob/v1.14.0/pkg/controllers/
  provisioning/scheduling/ (nodeclaim.go InstanceTypeFilterError, scheduler.go `all available
  instance types exceed limits for nodepool`, pkg/scheduling/taints.go `did not tolerate taint`,
  pkg/scheduling/requirements.go `label %q does not have known values`); before v1.0 `no instance
  type satisfied resources %s and requirements %s` and `did not tolerate %s`.
"""

from __future__ import annotations

from gpuctl.diagnose.signatures import sig

# kube-scheduler has worded taints three ways: "had untolerated taint {k: v}" (v1.25+), "had taint
# {k: v}, that the pod didn't tolerate" (v1.18-v1.24) and "had taints that the pod didn't tolerate".
_TAINT = r"had (?:untolerated )?taint \{"
_NODE_FIX = (
    "`kubectl describe node {node}`; on the node: `systemctl status kubelet containerd` and "
    "`journalctl -u kubelet -n 100`"
)
_GPU_TAINT_FIX = (
    "a pod that needs GPUs: request nvidia.com/gpu and tolerate the taint (key nvidia.com/gpu, "
    "operator Exists, effect NoSchedule), or enable the API server's ExtendedResourceToleration "
    "admission plugin, which adds that toleration to every pod requesting nvidia.com/gpu; a pod "
    "that needs no GPU belongs on other nodes"
)
_NODEPOOL = "`kubectl get nodepools -o yaml`"

SCHEDULER = (
    # --- the GPUs themselves ------------------------------------------------------------------
    sig(
        "sched.untolerated-gpu-taint", "scheduling", "scheduling",
        _TAINT + r"nvidia\.com/gpu(?=[:}])",
        "the GPU nodes carry the GPU taint nvidia.com/gpu (NoSchedule) and the pod does not tolerate "
        "it: GPU nodes are tainted so that only pods that ask for GPUs land there",
        _GPU_TAINT_FIX + "; `kubectl describe node {node} | grep Taints` shows the taint",
        also=("autoscaler",),
    ),
    # Before sched.insufficient-gpu: a GPU-sharing resource only a vGPU scheduler knows (HAMi's
    # nvidia.com/gpumem and gpucores, the gpushare extender's aliyun.com/gpu-mem) reaching a
    # scheduler that does not know it. Sources: https://github.com/Project-HAMi/HAMi (the admission
    # webhook sets schedulerName: hami-scheduler), AliyunContainerService/gpushare-scheduler-extender.
    sig(
        "sched.vgpu-scheduler-not-used", "scheduling", "sharing",
        r"\d+ Insufficient (?P<resource>nvidia\.com/(?:gpumem|gpucores|gpumem-percentage)|"
        r"aliyun\.com/gpu-(?:mem|count))\b",
        "the pod asks for {resource}, a GPU-sharing resource that only a vGPU scheduler accounts "
        "(HAMi's hami-scheduler for nvidia.com/gpumem and gpucores, the gpushare scheduler extender "
        "for aliyun.com/gpu-mem), but a scheduler that does not know it tried the pod and no node "
        "advertises it: the pod never reached the vGPU scheduler (HAMi not installed or its "
        "admission webhook not running, so schedulerName was not set to hami-scheduler; the pod's "
        "namespace excluded from the webhook; the pod created before HAMi) or the extender is not "
        "configured",
        "`kubectl get pod POD -n {namespace} -o jsonpath='{{.spec.schedulerName}}'` must name the "
        "vGPU scheduler (hami-scheduler); check HAMi's scheduler and webhook run (`kubectl -n "
        "kube-system get pods | grep hami`; install it with `helm install hami hami-charts/hami -n "
        "kube-system`), or set `schedulerName: hami-scheduler` in the pod spec; for gpushare "
        "configure the scheduler extender and run its device plugin on the GPU nodes; then "
        "recreate the pod",
    ),
    sig(
        "sched.insufficient-gpu", "scheduling", "scheduling",
        # DRA's DynamicResources filter says "cannot allocate all claims" for the same situation.
        r"Insufficient nvidia\.com/[\w.-]+|cannot allocate all claims",
        "no node has the GPUs the pod asks for free, for one of three reasons: (1) other pods hold "
        "them; (2) the pod asks for more GPUs than any one node has (a pod's GPUs all come from one "
        "node: 2 never fit on 1-GPU nodes); (3) no node advertises nvidia.com/gpu at all: the GPU "
        "nodes' driver, container toolkit or device plugin is missing or not ready (a GPU node pool "
        "without the driver); under DRA, other claims hold the devices or they are tainted. Where the "
        "GPU nodes are among the nodes the message's other reasons leave out, that reason is the one "
        "to fix",
        "tell them apart: `kubectl get nodes -o custom-columns=NAME:.metadata.name,GPU:.status."
        "allocatable.nvidia\\.com/gpu` lists the GPUs each node advertises (<none> on every GPU "
        "node: (3), `gpuctl verify` names why; a request above every count: (2), request fewer or "
        "add larger nodes), `kubectl describe nodes | grep -A8 Allocated` the GPUs already requested "
        "((1): `kubectl get pods -A -o wide --field-selector spec.nodeName={node}` lists the holders; "
        "wait for them or free GPUs); under DRA `kubectl get resourceclaims -A` and `kubectl get "
        "resourceslices -o yaml`; for `gpuctl verify`'s own pod, which asks for the GPUs {node} had "
        "free, a pod took them meanwhile: rerun it",
    ),
    # --- what the nodes left to the pod lack ---------------------------------------------------
    sig(
        "sched.too-many-pods", "scheduling", "scheduling",
        r"\d+ Too many pods|\d+ Insufficient pods",
        "the nodes run as many pods as their kubelet allows (maxPods: 110 by default, on EKS the "
        "instance type's IP address limit)",
        "`kubectl describe node {node}` (Capacity pods against Non-terminated Pods); raise the "
        "kubelet's maxPods (and the pod address range behind it), remove pods, or add nodes",
    ),
    sig(
        "sched.insufficient-resource", "scheduling", "scheduling",
        # Before Kubernetes 1.10 the count came after the reason: `Insufficient cpu (9)`.
        r"(?:\d+ |^)Insufficient (?P<resource>(?!nvidia\.com/)[\w./-]+)",
        "no node has enough free {resource} for the pod's requests (what the pods on a node request "
        "counts, not what they use)",
        "`kubectl describe nodes | grep -A8 Allocated` shows what each node has requested; lower the "
        "pod's requests, free the nodes, or add nodes",
    ),
    sig(
        "sched.host-ports", "scheduling", "scheduling",
        r"didn't have free ports for the requested pod ports|PodFitsHostPorts",
        "another pod on those nodes already holds a hostPort the pod asks for (a hostNetwork pod "
        "binds all its container ports): often a second copy of a DaemonSet, a second monitoring or "
        "load-balancer stack",
        "`kubectl get pods -A -o wide --field-selector spec.nodeName={node}` and `kubectl describe "
        "pod` (Host Port) find the holder; remove the duplicate or move one of them to another port",
    ),
    sig(
        "sched.volume-zone", "scheduling", "scheduling",
        r"had volume node affinity conflict|had no available volume zone|"
        r"didn't match PersistentVolume's node affinity",
        "the pod's PersistentVolume can only be used from other nodes or zones (a zonal disk in "
        "another zone, a local volume on another node): GPU nodes in one zone and the volume in "
        "another is the usual case",
        "`kubectl describe pv PV` (Node Affinity) against `kubectl get nodes -L "
        "topology.kubernetes.io/zone`; add nodes in the volume's zone, or recreate the volume from a "
        "StorageClass with volumeBindingMode WaitForFirstConsumer, which puts it where the pod lands",
    ),
    sig(
        "sched.volume-unbound", "scheduling", "scheduling",
        r"didn't find available persistent volumes to bind|unbound (?:immediate )?PersistentVolumeClaims|"
        r"bound to non-existent p(?:v|ersistentvolume)|did not have enough free storage|"
        r"persistentvolumeclaim \S+ not found",
        "a PersistentVolumeClaim of the pod is not bound and cannot be: no StorageClass provisions it "
        "(the class it names does not exist, or it names none and the cluster has no default), no "
        "PersistentVolume matches it, the storage is too small, or the claim does not exist",
        "`kubectl get pvc -n {namespace}` and `kubectl describe pvc CLAIM` say why; `kubectl get "
        "storageclass` must list the class the claim names (or a default one)",
    ),
    sig(
        "sched.pod-affinity", "scheduling", "scheduling",
        r"didn't match pod (?:anti-)?affinity rules|didn't satisfy existing pods anti-affinity rules|"
        r"didn't match pod affinity/anti-affinity|MatchInterPodAffinity|"
        r"ExistingPodsAntiAffinityRulesNotMatch",
        "the pod's affinity or anti-affinity to other pods (or a running pod's anti-affinity to it) "
        "rules those nodes out, e.g. required anti-affinity per node with more replicas than nodes, "
        "or a rolling update's new pod beside its old one on a single node",
        "`kubectl get pod POD -o yaml` shows spec.affinity (podAffinity, podAntiAffinity): make a "
        "required rule preferredDuringSchedulingIgnoredDuringExecution, add nodes, lower the "
        "replicas, or roll out with strategy Recreate",
    ),
    sig(
        "sched.topology-spread", "scheduling", "scheduling",
        r"didn't match pod topology spread constraints",
        "placing the pod there would break its topologySpreadConstraints (maxSkew with "
        "whenUnsatisfiable: DoNotSchedule), or the nodes lack the topologyKey label (\"missing "
        "required label\")",
        "compare the pod's spec.topologySpreadConstraints with the nodes' labels (`kubectl get nodes "
        "-L topology.kubernetes.io/zone`): label the nodes, add nodes where the spread is short, or "
        "use whenUnsatisfiable: ScheduleAnyway",
    ),
    # --- nodes left out by their state, their taints and the pod's own selection ----------------
    sig(
        "sched.unschedulable", "scheduling", "scheduling",
        rf"node\(s\) were unschedulable|{_TAINT}node\.kubernetes\.io/unschedulable",
        "the node is cordoned (spec.unschedulable): no new pod lands there",
        "`kubectl uncordon {node}` if the maintenance is over (`kubectl get nodes` shows the "
        "cordoned nodes as SchedulingDisabled)",
    ),
    sig(
        "sched.node-not-ready", "scheduling", "node",
        rf"{_TAINT}node\.kubernetes\.io/not-ready|node\(s\) were not ready",
        "the node is NotReady (the node controller tainted it); a toleration would not help",
        _NODE_FIX,
    ),
    sig(
        "sched.node-unreachable", "scheduling", "node",
        rf"{_TAINT}node\.kubernetes\.io/unreachable",
        "the node controller lost contact with the node's kubelet (node unreachable); a toleration "
        "would not help",
        "check that {node} is up and its kubelet reaches the API server: `kubectl get node {node}`, "
        "then on the node `systemctl status kubelet` and its network",
    ),
    sig(
        "sched.node-pressure", "scheduling", "node",
        rf"{_TAINT}node\.kubernetes\.io/(?P<pressure>memory|disk|pid)-pressure|"
        r"node\(s\) had (?P<condition>memory|disk|pid) pressure",
        "the kubelet reports resource pressure on the node and the scheduler keeps new pods off it",
        "free memory, disk or PIDs on {node} (`kubectl describe node {node}` shows the condition); "
        "the taint goes away by itself once the pressure ends",
    ),
    sig(
        "sched.untolerated-taint", "scheduling", "scheduling",
        r"had untolerated taint|had taints? that the pod didn't tolerate|"
        r"had taint \{[^}]*\}, that the pod didn't tolerate|PodToleratesNodeTaints",
        "the nodes carry a taint the pod does not tolerate",
        "add a toleration for it to the pod (`kubectl describe node {node} | grep Taints` shows it), "
        "or remove it: `kubectl taint nodes {node} KEY-`; for `gpuctl verify`'s own pod: `gpuctl "
        "verify --toleration KEY=VALUE:EFFECT`; where GPU nodes carry a taint of their own (e.g. "
        "`dedicated=gpu:NoSchedule`), the GPU stack's DaemonSets must tolerate it as well, or no "
        "device plugin runs there and the nodes advertise no nvidia.com/gpu: the GPU Operator's "
        "`daemonsets.tolerations` (Helm values, or spec.daemonsets.tolerations of `kubectl edit "
        "clusterpolicy cluster-policy`), the device-plugin chart's `tolerations`; `kubectl get ds "
        "-A -o wide` shows a DESIRED count below the number of GPU nodes",
    ),
    sig(
        "sched.selector-mismatch", "scheduling", "scheduling",
        r"didn't match Pod's node affinity/selector|didn't match node selector|MatchNodeSelector",
        "the pod's nodeSelector or required node affinity does not match those nodes (a label the "
        "nodes lack, or misspelt in the pod); a pod that selects GPU nodes by a label of GPU feature "
        "discovery (nvidia.com/gpu.present=true) waits until the label is there",
        "compare the pod's Node-Selectors (`kubectl describe pod`) with `kubectl get nodes "
        "--show-labels`; for `gpuctl verify`'s own pod, which selects kubernetes.io/hostname: "
        "`kubectl get node {node} -L kubernetes.io/hostname`",
    ),
)  # fmt: skip

AUTOSCALER = (
    sig(
        "autoscaler.insufficient-gpu", "autoscaler", "autoscaling",
        r"\d+ Insufficient (?P<resource>nvidia\.com/[\w.-]+)",
        "a node the group would add has too few {resource} in the cluster-autoscaler's template of "
        "it: a group scaled to zero has no node to copy, so the template comes from the cloud's "
        "instance type data or the group's tags and lacks the GPUs unless they are declared, or the "
        "group's instance type has fewer GPUs than the pod asks for",
        "declare the GPUs of a group that scales from zero (AWS: the Auto Scaling group tag "
        "`k8s.io/cluster-autoscaler/node-template/resources/{resource}: COUNT`, with "
        "`.../node-template/label/...` tags for the labels the pod selects), or ask for at most the "
        "GPUs one instance has; the autoscaler's log names the group (`kubectl -n kube-system logs "
        "deploy/cluster-autoscaler | grep -i predicate`)",
    ),
    sig(
        "autoscaler.max-size", "autoscaler", "autoscaling",
        r"max node group size reached",
        "the node groups that could take the pod are at their maximum size",
        "raise the group's maximum (the cloud's node group or Auto Scaling group max size, or the "
        "autoscaler's `--nodes=MIN:MAX:GROUP`), or free room on the nodes it has",
    ),
    sig(
        "autoscaler.cluster-limit", "autoscaler", "autoscaling",
        r"max (?:cluster [\w ,./-]+? )?limit reached|max total nodes in cluster reached",
        "a cluster-wide limit of the autoscaler is reached (total nodes, cores, memory or GPUs), so "
        "it adds no node to any group",
        "raise the limit: the autoscaler's `--max-nodes-total`, `--cores-total`, `--memory-total` "
        "and `--gpu-total` (GKE: the cluster's autoscaling resource limits), or lower what the pods "
        "request",
    ),
    sig(
        "autoscaler.backoff", "autoscaler", "autoscaling",
        r"in backoff after failed scale-up",
        "the group's last scale-up failed (cloud quota for the instance type, often the GPU quota, "
        "no capacity in the zone, a launch template error) and the autoscaler waits before trying "
        "it again",
        "`kubectl -n kube-system describe configmap cluster-autoscaler-status` and the autoscaler's "
        "log name the failure; raise the cloud's GPU quota or allow other zones or instance types",
        transient=True,
    ),
)  # fmt: skip

KARPENTER = (
    sig(
        "karpenter.limits", "karpenter", "autoscaling",
        r"exceed limits for nodepool|node limits have been exhausted for nodepool|"
        r"exceed(?:s|ed)? (?:the )?limits? for provisioner",
        "the NodePool's spec.limits (nvidia.com/gpu, cpu, memory or nodes) are used up by the nodes "
        "it has, so Karpenter launches none there",
        f"{_NODEPOOL} shows spec.limits against status.resources; raise the limit (a nvidia.com/gpu "
        "limit counts every GPU of the pool's nodes) or remove idle nodes of the pool",
    ),
    sig(
        "karpenter.untolerated-taint", "karpenter", "autoscaling",
        r"did not tolerate (?:taint \(taint=)?(?P<taint>[^\s;)\"\\]+)",
        "the NodePool taints its nodes {taint} and the pod does not tolerate it, so Karpenter will not "
        "use that pool for it (on a GPU pool that is the design for pods that ask for no GPU)",
        "a pod meant for that pool: add a toleration for {taint} (a GPU pool's: key nvidia.com/gpu, "
        "operator Exists); otherwise the pool is not for it, and the message's other NodePools say "
        "why they do not fit",
    ),
    sig(
        "karpenter.gpu-instance-types", "karpenter", "autoscaling",
        r"no instance type[^;]*?nvidia\.com/gpu\W{1,8}(?P<gpus>\d+)",
        "no instance type the NodePool allows can hold the pod: it asks for {gpus} nvidia.com/gpu "
        "(with its CPU and memory and the DaemonSet overhead), and the pool's requirements (instance "
        "families, categories, types, sizes) admit no instance type with that many GPUs and that much "
        "CPU and memory, or none of those is offered in the pool's zones and capacity types (the "
        "message's last parenthesis says which)",
        f"{_NODEPOOL} (spec.template.spec.requirements): allow instance types with {{gpus}} GPUs and "
        "enough CPU and memory for the request plus the overhead (AWS: `karpenter.k8s.aws/"
        "instance-gpu-count`, families g5, g6, p4d, p5), widen its zones and capacity types, or ask "
        "for fewer GPUs per pod",
    ),
    sig(
        "karpenter.requirements", "karpenter", "autoscaling",
        r"incompatible requirements|does not have known values|invalid nodeSelector",
        "the pod's nodeSelector or node affinity asks for a label, or a value of it, that the "
        "NodePool does not give its nodes (\"does not have known values\": no requirement or label "
        "of the pool sets it), so Karpenter cannot make a node the pod would select",
        "add the label to the NodePool (spec.template.metadata.labels, or a requirement with that key "
        f"and value), or drop it from the pod's nodeSelector or affinity; {_NODEPOOL} shows what each "
        "pool offers",
    ),
    sig(
        "karpenter.no-instance-type", "karpenter", "autoscaling",
        r"no instance type (?:satisfied|has|had|met|which)",
        "no instance type the NodePool allows fits the pod's requests plus the DaemonSet overhead "
        "within the pool's requirements and the offerings available (zones, capacity types, the "
        "cloud's capacity); the message's last parenthesis names which of requirements, resources "
        "and offerings failed",
        f"{_NODEPOOL}: widen the instance families, sizes, zones or capacity types, or lower the "
        "pod's requests",
    ),
)  # fmt: skip

SCHEDULING = (*SCHEDULER, *AUTOSCALER, *KARPENTER)
