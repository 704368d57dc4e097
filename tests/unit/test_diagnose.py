"""The diagnosis table recognises the real message texts and picks the relevant scheduler reason."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpuctl.diagnose import SIGNATURES, diagnose, diagnose_scheduling, scheduling_reasons
from gpuctl.diagnose.images import image_named, operand_of
from gpuctl.diagnose.scan import find_all
from gpuctl.diagnose.signatures import Signature
from gpuctl.nvidia_smi import DRIVER_MISMATCH, DRIVER_NOT_LOADED

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnosis.md"

PLUGIN_TOOLKIT_MISSING = """\
I1121 10:00:00.000000       1 main.go:235] "Starting NVIDIA Device Plugin" version=<
E1121 10:00:00.100000       1 factory.go:112] Failed to initialize NVML: could not load NVML library.
E1121 10:00:00.100001       1 factory.go:113] If this is a GPU node, did you set the docker default runtime \
to `nvidia`?
E1121 10:00:00.200000       1 factory.go:135] Incompatible strategy detected auto
E1121 10:00:00.200001       1 factory.go:136] If this is a GPU node, did you configure the NVIDIA \
Container Toolkit?
I1121 10:00:00.300000       1 main.go:346] No devices found. Waiting indefinitely.
"""


KNOWN_MESSAGES = [
    # The kubelet's DRA wrappers (pkg/kubelet/cm/dra/manager.go) around a reason no entry lists.
    (
        "Failed to prepare dynamic resources: NodePrepareResources failed for claim default/gpu: "
        "error preparing devices for claim 4e2c: prepare devices failed: unexpected error",
        "events",
        "dra.prepare-failed",
    ),
    (PLUGIN_TOOLKIT_MISSING, "plugin-log", "plugin.nvml-library-missing"),
    (
        "E1121 factory.go:135] Incompatible strategy detected auto",
        "plugin-log",
        "plugin.incompatible-strategy",
    ),
    ("I1121 main.go:346] No devices found. Waiting indefinitely.", "plugin-log", "plugin.no-devices"),
    (
        "I1121 health.go:140] XidCriticalError: Xid=79 on Device=GPU-1; marking device as unhealthy.\n"
        "I1121 server.go:250] 'nvidia.com/gpu' device marked unhealthy: GPU-1",
        "plugin-log",
        "xid.79",  # the Xid the plugin names, the root of the GPU it marked unhealthy
    ),
    ("I1121 server.go:250] 'nvidia.com/gpu' device marked unhealthy: GPU-1", "plugin-log", "plugin.xid"),
    (DRIVER_MISMATCH[0], "nvidia-smi", "smi.driver-mismatch"),
    (DRIVER_NOT_LOADED[0], "nvidia-smi", "smi.driver-not-loaded"),
    ("No devices were found\n", "nvidia-smi", "smi.no-devices"),
    (
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc "
        'create failed: unable to start container process: exec: "nvidia-smi": executable file not '
        "found in $PATH: unknown",
        "nvidia-smi",
        "smi.not-found",
    ),
    (
        "ErrImagePull rpc error: code = NotFound desc = failed to pull and unpack image",
        "image-pull",
        "image.not-found",
    ),
    (
        "ErrImagePull pull access denied, repository does not exist or may require authorization",
        "image-pull",
        "image.unauthorized",
    ),
    (
        'InvalidImageName Failed to apply default image tag "Bad//Image": couldn\'t parse image reference',
        "image-pull",
        "image.invalid-name",
    ),
    ("NotReady KubeletNotReady container runtime network not ready", "node", "node.not-ready"),
    ("allocatable 6 < capacity 8", "node", "node.unhealthy-gpus"),
    (
        "E1121 main.go:132] error starting plugins: failed to create NVML library: nvml: Driver/library "
        "version mismatch",
        "plugin-log",
        "plugin.driver-mismatch",
    ),
    (
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA "
        "Display Driver is properly installed and present in your system.\nPlease also try adding "
        "directory that contains libnvidia-ml.so to your system PATH.",
        "nvidia-smi",
        "smi.nvml-missing",
    ),
    ("gpu-0 is a GPU node but advertises no nvidia.com/gpu", "node", "node.no-gpu-advertised"),
    (
        "E1121 factory.go:112] Failed to initialize NVML: Driver Not Loaded",
        "plugin-log",
        "plugin.driver-not-loaded",
    ),
    # The generic rows: wording no specific row knows.
    (
        "Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: "
        "runc create failed: unable to start container process: error during container init: unknown",
        "runtime",
        "runtime.oci-create-failed",
    ),
    (
        "error running hook #0: error running hook: exit status 1, stdout: , stderr: ",
        "runtime",
        "runtime.hook-failed",
    ),
    ('Back-off pulling image "registry.example/cuda:12"', "image-pull", "image.pull-failed"),
    (
        "FailedCreatePodSandBox Failed to create pod sandbox: rpc error: code = Unknown desc = failed to "
        'setup network for sandbox "0a1b"',
        "events",
        "pod.sandbox-failed",
    ),
    # verify's text for a container that cannot be created or started: its waiting reason and message
    (
        "CreateContainerConfigError: container has runAsNonRoot and image will run as root",
        "runtime",
        "container.config-error",
    ),
    ("CreateContainerError: context deadline exceeded", "runtime", "container.create-error"),
    ("StartError", "runtime", "container.run-error"),
]


@pytest.mark.parametrize(("text", "source", "expected"), KNOWN_MESSAGES)
def test_known_messages_map_to_their_signature(text: str, source: str, expected: str) -> None:
    found = diagnose(text, source, node="gpu-0", namespace="gpuctl-system", image="img")
    assert found is not None
    assert found.signature_id == expected
    assert found.hint
    assert "{" not in found.hint
    assert "\n" not in found.evidence


def test_unknown_text_has_no_diagnosis() -> None:
    assert diagnose("all good here", "plugin-log") is None


def test_hints_name_the_node() -> None:
    found = diagnose(PLUGIN_TOOLKIT_MISSING, "plugin-log", node="gpu-7")
    assert found is not None
    assert "gpu-7" in found.hint


SCHED_TAINT = (
    "0/5 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, 4 node(s) didn't match "
    "Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for "
    "scheduling."
)
SCHED_GPUS = (
    "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node "
    "affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming "
    "pod, 2 Preemption is not helpful for scheduling."
)


def test_scheduling_reasons_are_split() -> None:
    assert scheduling_reasons(SCHED_GPUS) == [
        "1 Insufficient nvidia.com/gpu",
        "2 node(s) didn't match Pod's node affinity/selector",
    ]


SCHEDULING_MESSAGES = [
    (SCHED_TAINT, "sched.untolerated-taint"),
    (
        # Kubernetes 1.34's DynamicResources filter, as a real cluster printed it (an AKS node with
        # NVIDIA's DRA driver v0.4.1; the sim's scheduler words it the same way, without the
        # "still not schedulable" that 1.34 adds).
        "0/2 nodes are available: 1 cannot allocate all claims, 1 node(s) didn't match Pod's node "
        "affinity/selector. still not schedulable, preemption: 0/2 nodes are available: 2 Preemption "
        "is not helpful for scheduling.",
        "sched.insufficient-gpu",
    ),
    (SCHED_GPUS, "sched.insufficient-gpu"),
    (
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
        "sched.selector-mismatch",
    ),
    (
        "0/2 nodes are available: 1 node(s) were unschedulable, 1 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
        "scheduling.",
        "sched.unschedulable",
    ),
    (
        "0/2 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, "
        "1 node(s) "
        "didn't match Pod's node affinity/selector.",
        "sched.node-not-ready",
    ),
]


@pytest.mark.parametrize(("message", "expected"), SCHEDULING_MESSAGES)
def test_the_other_nodes_selection_is_not_the_cause(message: str, expected: str) -> None:
    found = diagnose_scheduling(message, node="gpu-0")
    assert found is not None
    assert found.signature_id == expected
    assert "didn't match" not in found.evidence or expected == "sched.selector-mismatch"


def test_every_reason_of_a_scheduling_message_is_read() -> None:
    """The GPU's reason is the cause; the others follow it with their ids, none dropped."""
    message = (
        "0/5 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, 2 Insufficient "
        "nvidia.com/gpu, 2 node(s) didn't match pod affinity rules. preemption: 0/5 nodes are available: "
        "5 Preemption is not helpful for scheduling."
    )
    assert scheduling_reasons(message) == [
        "1 node(s) had untolerated taint {dedicated: infra}",
        "2 Insufficient nvidia.com/gpu",
        "2 node(s) didn't match pod affinity rules",
    ]
    found = diagnose_scheduling(message, node="gpu-0")
    assert found is not None
    assert (found.signature_id, found.evidence) == ("sched.insufficient-gpu", "2 Insufficient nvidia.com/gpu")
    assert found.cause.endswith(
        "; the message's other reasons: 1 node(s) had untolerated taint {dedicated: infra} "
        "(sched.untolerated-taint); 2 node(s) didn't match pod affinity rules (sched.pod-affinity)"
    )


def test_the_pre_1_10_wording_is_split_into_its_reasons() -> None:
    """`No nodes are available that match all of the following predicates::` put each reason's
    node count after it; every reason is read (line from argoproj/argo-workflows#190)."""
    message = (
        "No nodes are available that match all of the following predicates:: Insufficient cpu (9), "
        "Insufficient memory (15), MatchNodeSelector (18)."
    )
    assert scheduling_reasons(message) == [
        "Insufficient cpu (9)",
        "Insufficient memory (15)",
        "MatchNodeSelector (18)",
    ]
    found = diagnose_scheduling(message)
    assert found is not None
    assert found.signature_id == "sched.insufficient-resource"
    assert found.cause.endswith(
        "; the message's other reasons: Insufficient memory (15) (sched.insufficient-resource); "
        "MatchNodeSelector (18) (sched.selector-mismatch)"
    )


def test_the_gpu_taint_comes_before_the_nodes_without_gpus() -> None:
    message = (
        "0/7 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, "
        "1 node(s) had untolerated taint {nvidia.com/gpu: present}, 5 Insufficient nvidia.com/gpu."
    )
    found = diagnose_scheduling(message)
    assert found is not None
    assert found.signature_id == "sched.untolerated-gpu-taint"
    assert "ExtendedResourceToleration" in found.hint
    assert "(sched.node-not-ready)" in found.cause
    assert "(sched.insufficient-gpu)" in found.cause


def test_insufficient_gpus_names_its_three_causes_and_the_commands_that_tell_them_apart() -> None:
    found = diagnose_scheduling("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", node="gpu-0")
    assert found is not None
    assert "other pods hold them" in found.cause
    assert "more GPUs than any one node has" in found.cause
    assert "no node advertises nvidia.com/gpu at all" in found.cause
    assert "kubectl describe nodes | grep -A8 Allocated" in found.hint
    assert (
        "kubectl get nodes -o custom-columns=NAME:.metadata.name,GPU:.status.allocatable.nvidia\\.com/gpu"
        in found.hint
    )


AUTOSCALER_MESSAGES = [
    (
        "pod didn't trigger scale-up: 1 node(s) had untolerated taint {nvidia.com/gpu: true}, "
        "2 max node group size reached",
        "sched.untolerated-gpu-taint",
    ),
    (
        "pod didn't trigger scale-up (it wouldn't fit if a new node is added): 1 Insufficient cpu, "
        "3 max node group size reached",
        "autoscaler.max-size",
    ),
    ("pod didn't trigger scale-up: max total nodes in cluster reached", "autoscaler.cluster-limit"),
    (
        "pod didn't trigger scale-up: 2 node(s) didn't match pod topology spread constraints",
        "sched.topology-spread",
    ),
]


@pytest.mark.parametrize(("message", "expected"), AUTOSCALER_MESSAGES)
def test_the_autoscalers_reasons_are_its_own_rows_then_the_schedulers(message: str, expected: str) -> None:
    found = diagnose_scheduling(message)
    assert found is not None
    assert found.signature_id == expected


def test_karpenter_reads_one_error_per_nodepool() -> None:
    message = (
        'Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"180m"}, '
        'incompatible requirements, label "workload" does not have known values; incompatible with '
        'nodepool "gpu", daemonset overhead={"cpu":"180m"}, did not tolerate taint '
        "(taint=nvidia.com/gpu=present:NoSchedule)"
    )
    assert len(scheduling_reasons(message)) == 2
    found = diagnose_scheduling(message)
    assert found is not None
    assert found.signature_id == "karpenter.untolerated-taint"
    assert "nvidia.com/gpu=present:NoSchedule" in found.hint
    assert "(karpenter.requirements)" in found.cause


SCHEDULING_ROWS = [s for s in SIGNATURES if s.source in ("scheduling", "autoscaler", "karpenter")]
IMAGE_ROWS = [s for s in SIGNATURES if s.id.startswith("image.")]


@pytest.mark.parametrize("row", SCHEDULING_ROWS + IMAGE_ROWS, ids=lambda row: row.id)
def test_scheduling_and_image_rows_speak_of_any_pod(row: Signature) -> None:
    """gpuctl verify's own advice comes after the general fix, marked as for its own pod."""
    assert "verification" not in row.cause
    for flag in ("--toleration", "--image ", "--image-pull-secret"):
        at = row.hint.find(flag)
        assert at < 0 or "gpuctl verify`'s own pod" in row.hint[:at], (row.id, flag)


PULL_FAILED = 'Failed to pull image "{image}": rpc error: code = NotFound desc = {image}: not found'


def test_an_image_row_names_the_image_the_line_pulls() -> None:
    line = PULL_FAILED.format(image="registry.example/team/trainer:2.1")
    found = diagnose(line, "image-pull", node="gpu-0", namespace="ml", image="nvcr.io/nvidia/cuda:12.4.1")
    assert found is not None
    assert found.signature_id == "image.not-found"
    assert "registry.example/team/trainer:2.1 does not exist" in found.cause
    assert "`crictl pull registry.example/team/trainer:2.1` on gpu-0" in found.hint
    assert "ClusterPolicy" not in found.hint
    unnamed = diagnose("Error: ErrImagePull", "image-pull", namespace="ml")
    assert unnamed is not None
    assert "crictl pull IMAGE` on NODE" in unnamed.hint


def test_an_operands_withdrawn_digest_is_fixed_in_the_clusterpolicy() -> None:
    image = "nvcr.io/nvidia/k8s/dcgm-exporter@sha256:" + "0123456789abcdef" * 4
    found = diagnose(PULL_FAILED.format(image=image), "image-pull")
    assert found is not None
    assert found.signature_id == "image.digest-withdrawn"
    assert "the GPU Operator's DCGM exporter" in found.hint
    assert "upgrade the GPU Operator" in found.hint
    assert "spec.dcgmExporter.version" in found.hint


@pytest.mark.parametrize(
    ("line", "image"),
    [
        (
            'Back-off pulling image "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"',
            "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
        ),
        ("Error response from daemon: manifest for nvidia/cuda:latest not found", "nvidia/cuda:latest"),
        ('msg="PullImage \\"nvcr.io/nvidia/driver:550.90.07\\" failed"', "nvcr.io/nvidia/driver:550.90.07"),
        ("pull access denied for private/trainer, repository does not exist", "private/trainer"),
        ("ErrImagePull", ""),
    ],
)
def test_the_image_a_pull_line_names(line: str, image: str) -> None:
    assert image_named(line) == image


def test_operands_are_known_by_their_path_under_nvidia() -> None:
    operand = operand_of("harbor.example/mirror/nvidia/cloud-native/k8s-mig-manager:v0.15.0")
    assert operand is not None
    assert operand.field == "migManager"
    assert operand_of("nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04") is None
    assert operand_of("example/mynvidia/driver:1") is None


def test_explain_reads_a_scheduling_line_as_one_message() -> None:
    """Every node short of GPUs or under the cluster's own taint: the tainted node is the GPU node,
    its taint the cause (as in NVIDIA/gpu-operator#156)."""
    found = find_all(
        "  Warning  FailedScheduling  11s  default-scheduler  0/3 nodes are available: 1 node(s) had "
        "untolerated taint {dedicated: gpu}, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling.\n"
    )
    assert [d.signature_id for d in found] == ["sched.untolerated-taint"]
    assert "FailedScheduling" in found[0].evidence
    assert "the nodes with this taint are the GPU nodes" in found[0].cause
    assert "2 Insufficient nvidia.com/gpu (sched.insufficient-gpu)" in found[0].cause
    assert "daemonsets.tolerations" in found[0].hint


def test_a_kubernetes_taint_beside_gpus_short_leaves_the_gpus_the_cause() -> None:
    """The control plane's taint is Kubernetes' own: the GPUs short stay the cause."""
    found = diagnose_scheduling(
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }. preemption: 0/2 nodes are available: 1 No preemption "
        "victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )
    assert found is not None
    assert found.signature_id == "sched.insufficient-gpu"


def test_signature_ids_are_unique_and_complete() -> None:
    ids = [signature.id for signature in SIGNATURES]
    assert len(ids) == len(set(ids))
    for signature in SIGNATURES:
        assert signature.cause, signature.id
        assert signature.hint, signature.id


def test_docs_list_every_signature() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [signature.id for signature in SIGNATURES if f"`{signature.id}`" not in text]
    assert not missing, f"docs/diagnosis.md lacks {missing}: regenerate with `python -m gpuctl.diagnose.doc`"


def test_docs_are_the_generated_table_whole() -> None:
    """Causes, fixes, order and prose too, not just the ids: regenerate and compare."""
    from gpuctl.diagnose.doc import corpus_counts, markdown

    assert DOC.read_text(encoding="utf-8") == markdown(corpus_counts()), (
        "docs/diagnosis.md is stale: regenerate with `python -m gpuctl.diagnose.doc > docs/diagnosis.md`"
    )


def test_every_signature_is_proven_by_an_example() -> None:
    """Each row of the table is matched by a message here or by a real one in tests/corpus
    (failures.yaml and the catalogues' files under failures/)."""
    corpus = [
        item
        for path in [CORPUS / "failures.yaml", *sorted((CORPUS / "failures").glob("*.yaml"))]
        for item in yaml.safe_load(path.read_text(encoding="utf-8")) or ()
    ]
    proven = {expected for _, _, expected in KNOWN_MESSAGES} | {
        expected for _, expected in [*SCHEDULING_MESSAGES, *AUTOSCALER_MESSAGES]
    }
    proven |= {item["expect"]["signature"] for item in corpus}
    assert [signature.id for signature in SIGNATURES if signature.id not in proven] == []


def _corpus_text(family: str, item_id: str) -> str:
    items = yaml.safe_load((CORPUS / "failures" / f"{family}.yaml").read_text())
    return str(next(item["text"] for item in items if item["id"] == item_id))


def test_errno_detail_on_an_nccl_shm_line_is_not_a_second_cause() -> None:
    """NCCL's "No space left on device" is about /dev/shm: apt.disk-full stands back on its lines
    (pytorch/ci-infra#490), and still explains a line no other entry reads."""
    for item_id in ("nccl-shm-create-ci-runner-pods", "nccl-shm-create-xgboost-ci-docker"):
        ids = [d.signature_id for d in find_all(_corpus_text("nccl", item_id))]
        assert ids[0] == "nccl.shm-create", ids
        assert "apt.disk-full" not in ids, ids
    assert [d.signature_id for d in find_all("E: Write error - write (28: No space left on device)")] == [
        "apt.disk-full"
    ]


def test_cdi_spec_generated_before_the_driver_is_not_read_as_driver_not_loaded() -> None:
    found = find_all(_corpus_text("container-toolkit", "ct-cdi-refresh-before-driver-loaded"))
    assert found[0].signature_id == "runtime.cdi-generated-before-driver"
    assert "nvidia-cdi-refresh" in found[0].hint


def test_nvidia_smi_prefixes_read_nvml_codes_and_systemd_lines_are_not_nvml() -> None:
    """nvidia-smi mig's `Failed to display compute instances: Insufficient Permissions`
    (Project-HAMi/HAMi#1044) is NVML code 4; systemd's `Failed to get unit file state ...: Unknown
    error N` is not an NVML code."""
    assert (
        find_all(_corpus_text("nvml", "nvml-smi-mig-lci-insufficient-permissions"))[0].signature_id
        == "nvml.4"
    )
    line = "Failed to get unit file state for nvidia-fabricmanager.service: Unknown error 1540613216"
    assert not any(d.signature_id.startswith("nvml.") for d in find_all(line))
