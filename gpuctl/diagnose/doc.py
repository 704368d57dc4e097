"""Write the diagnosis table and the catalogues as Markdown:
`python -m gpuctl.diagnose.doc > docs/diagnosis.md`.

The coverage table counts, per catalogue, the corpus items proving it: the items of
tests/corpus/failures/*.yaml whose `expect.signature` is one of its ids, read from the source
checkout this module sits in (left out where there is none, as in an installed package).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

import yaml

from gpuctl.diagnose.catalogue import DEFAULT_RANK, LAYER_RANK, Catalogue, Entry
from gpuctl.diagnose.catalogues import CATALOGUES
from gpuctl.diagnose.signatures import DEFAULT_PLUGIN_RESTART, Signature
from gpuctl.diagnose.table import SIGNATURES

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "corpus" / "failures"

HEADER = """\
# Diagnosis table

`gpuctl verify` matches what it reads — device plugin logs, the verification pod's nvidia-smi
output and container state, kube-scheduler `FailedScheduling` messages, image pull errors, pod
events and node conditions — against this table (`gpuctl/diagnose/table_*.py`). The first
matching row of the right source wins (a row marked *generic* only when no other row matches);
its cause and fix become the check's message and hint, and its id is reported as `diagnosis` in
`--output json` and as the failure `type` in `--output junit`.

`gpuctl explain [FILE|-]` matches any pasted text — pod logs, `kubectl describe` output, events,
nvidia-smi output, journal or dmesg lines — against every row, line by line, and prints each
signature found with its category, cause and fix (`--output json`: `gpuctl.explain/v1`). Lines
matching the same signature twice are reported once; generic rows are left out when a specific
row matched. The same error printed by different components (nvidia-smi, the device plugin, the
container start hook) has one cause, whatever the wording.

Beside the table, the **catalogues** below carry whole published code and message tables (every
Xid, every CUDA error, every NCCL result, ...), one entry per code, each with its cause, fix and
layer: a line the table has no row for is still explained when it prints a code or a message a
catalogue lists. Their ids are `<catalogue>.<code>` (`xid.79`, `cuda.802`).

Every row is tested against real output quoted from public issue threads and repositories
(`tests/corpus/`), and healthy device plugin, GPU operator and nvidia-smi output matches none.

A scheduling message (kube-scheduler's FailedScheduling, the cluster-autoscaler's NotTriggerScaleUp,
Karpenter's) lists several reasons, one per node, node group or NodePool. Every one is read: the
first in the table's order below is the cause (the GPU's own first), and the others follow it in the
cause, each with its id. The verification pod selects exactly one node, so every other node reports
"didn't match Pod's node affinity/selector", which comes last.

An image row's fix names where the image is set: the pod's spec, `gpuctl verify --image` for the
verification pod, and for an image of the GPU Operator's operands (nvcr.io/nvidia/... or a mirror
of it) the ClusterPolicy field that sets it.

A fix that restarts the device plugin on {node} names gpuctl's own DaemonSet below; when the check
read the plugin pod's log (e.g. the GPU Operator's plugin, in its own namespace), the hint names
that pod instead: `kubectl -n NAMESPACE delete pod POD`.

Hints use `{node}`, `{namespace}` and `{image}` (`NODE`, `NAMESPACE`, `IMAGE` where the text does not
name them; an image pull line's own image wins) and the named groups of the pattern.

This file is generated: `python -m gpuctl.diagnose.doc > docs/diagnosis.md`.
"""

VERIFY = """\
## How `gpuctl verify` works

- **GPU nodes** are nodes with `nvidia.com/gpu` capacity, or the labels
  `feature.node.kubernetes.io/pci-10de.present=true` (NFD), `nvidia.com/gpu.present=true` or
  `nvidia.com/gpu.count>0` (GFD/operator), or named by the user. A GPU node advertising no GPU fails.
- **Expectations**: `--expect-nodes a,b,gpu-*` (names or shell globs; a name that is not in the
  cluster fails as `node.exists`, a glob matching nothing fails `cluster.expected-nodes`);
  `--expect-gpus 8` (every GPU node), `--expect-gpus 'gpu-0=8,dgx-*=4'` (first match wins) or
  `--expect-gpus @gpus.yaml` (a YAML mapping of name/glob to count).
- **Per-node checks**, in order: `node.ready`, `node.schedulable`, `gpu.capacity`,
  `gpu.allocatable`, `device-plugin.pod`, `device-plugin.log`, `gpu.in-use` (only where the
  node's workloads hold GPUs), `taint.toleration`,
  `pod.scheduled`, `pod.image`, `nvidia-smi.run`, `nvidia-smi.gpus`, `nvidia-smi.product`,
  `nvidia-smi.memory`, `nvidia-smi.driver`. **Cluster checks**: `cluster.gpu-nodes`,
  `cluster.device-plugin`, `cluster.daemonset-tolerations`, `cluster.runtimeclass`,
  `cluster.driver-drift`.
- **Verification pod** (one per Ready, schedulable GPU node with allocatable GPUs): namespace
  `--namespace` (default `gpuctl-system`, created with `pod-security.kubernetes.io/enforce=restricted`),
  `nodeSelector kubernetes.io/hostname`, tolerations for the node's GPU taints (`nvidia.com/*` or
  keys containing `gpu`) plus `--toleration`, requests and limits `nvidia.com/gpu` = allocatable
  less what the node's running pods hold
  (a node whose workloads hold every GPU gets no pod: `gpu.in-use` warns that this run did not
  prove it, and `--gate` leaves its gate as it was),
  runs `nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version,pci.bus_id
  --format=csv,noheader,nounits -f /dev/termination-log` (its answer becomes the container's
  termination message, which arrives in the pod's status on the watch; on MIG nodes
  `nvidia-smi -L` runs first and both print to the log) as uid 65534 without privilege
  escalation, capabilities or non-default seccomp, `restartPolicy: Never`,
  `activeDeadlineSeconds` = `--timeout` + 60.
  Labels `app.kubernetes.io/managed-by=gpuctl`, `app.kubernetes.io/component=verify`,
  `gpuctl.io/verify-run=<run id>`; all pods of a run are deleted with one deletecollection on
  success, failure, timeout, Ctrl-C and SIGTERM (unless `--keep-pods`).
- **Fail fast**: an image pull error (`ErrImagePull`, `ImagePullBackOff`, `InvalidImageName`) or an
  `Unschedulable` condition ends the wait for that node at once. So does a pod still Pending whose
  own Warning events (`FailedCreatePodSandBox`, `FailedMount`, ...) match a signature that waiting
  will not clear (e.g. `runtime.no-nvidia-runtime`): `pod.image` (`pod.scheduled` if unbound)
  fails with its cause, hint and id. Transient ones (`pod.failed-mount`, `pod.sandbox-failed`,
  `runtime.containerd-down`) keep the wait going and are reported if `--timeout` runs out.
- **API budget**: a constant handful of requests plus one per GPU node (create the pod: its
  answer comes back in its status on the watch). Logs are read only where they explain a problem,
  as each read is proxied by the API server to the node's kubelet: a verification pod's log when
  nvidia-smi failed (its error is on stdout; `terminationMessagePolicy: FallbackToLogsOnError` also
  puts the log's tail in the message) or on MIG nodes; the device plugin's (DRA: kubelet plugin's)
  log, last 200 lines, of a node whose GPUs are missing, short of allocatable or of
  `--expect-gpus`, whose plugin pod is not ready or restarted, where no pod runs, or whose pod
  failed or warned, and of every node with `--no-pods`. Elsewhere `device-plugin.log` is `skip`
  ("not read: the node advertises its GPUs and its verification pod proved them"). Pods are
  followed by one watch on the run's label, their Warning events by one watch on the namespace.
  With `--keep-pods`, a pod's answer is
  `kubectl -n NS get pod NAME -o jsonpath='{.status.containerStatuses[0].state.terminated.message}'`.
"""

SOURCES = {
    "runtime": "Container start hook, CDI and OCI runtime (container StartError messages, events)",
    "plugin-log": "Device plugin log (last 200 lines of the plugin pod on the node)",
    "nvidia-smi": "nvidia-smi in the verification pod (log and container termination message)",
    "scheduling": "kube-scheduler FailedScheduling (pod condition or event)",
    "autoscaler": "cluster-autoscaler NotTriggerScaleUp (its own reasons; the scheduler's rows after them)",
    "karpenter": "Karpenter FailedScheduling and provisioner errors (one per NodePool)",
    "kernel": "Kernel driver messages (dmesg, journal: NVRM, Xid)",
    "image-pull": "Image pull (container waiting reason and message, Failed events)",
    "events": "Pod events (FailedCreatePodSandBox, FailedMount)",
    "node": "Node state",
    "operator-driver": "GPU Operator driver container log (`bootstrap --stack operator`)",
    "operand": "GPU Operator and DRA operand logs (MIG manager, DCGM exporter, IMEX daemon)",
    "host": "The host: apt, DKMS, modprobe, systemd units (`bootstrap --phase host` task failures, journal)",
    "cuda-workload": "CUDA check (`verify --level cuda`: vectorAdd on every GPU)",
    "nccl-workload": "NCCL all-reduce (`verify --level nccl`: nccl-tests all_reduce_perf)",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


class _Kept(dict[str, str]):
    """A placeholder the reader fills in (`{node}`) stays as it is written."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def shown(template: str) -> str:
    """A cause or fix template as a user reads it: `{{`/`}}` (a literal brace, as in a jsonpath)
    become single braces, `{plugin_restart}` the default command, other placeholders stay."""
    restart = DEFAULT_PLUGIN_RESTART.format_map(_Kept())
    return template.format_map(_Kept(plugin_restart=restart))


def _row(signature: Signature) -> str:
    flags = [word for word, on in (("generic", signature.generic), ("transient", signature.transient)) if on]
    category = signature.category + (f" ({', '.join(flags)})" if flags else "")
    also = f" Also read from: {', '.join(signature.also)}." if signature.also else ""
    hint = shown(signature.hint)
    if signature.operand_hint:
        hint += f" For a GPU Operator operand's image: {shown(signature.operand_hint)}."
    return (
        f"| `{signature.id}` | {category} | `{_cell(signature.pattern.pattern)}` | "
        f"{_cell(shown(signature.cause))}{also} | {_cell(hint)} |"
    )


def markdown(corpus: Mapping[str, int] | None = None) -> str:
    """The whole document; `corpus`: the corpus items proving each catalogue, by its id (None: the
    coverage table has no corpus column)."""
    lines = [HEADER, coverage(corpus), ordering(), VERIFY]
    for source, title in SOURCES.items():
        lines += [
            f"\n## {title}\n",
            "| id | category | signature (regex) | cause | fix |",
            "|---|---|---|---|---|",
        ]
        lines += [_row(signature) for signature in SIGNATURES if signature.source == source]
    lines += [_catalogue(catalogue) for catalogue in CATALOGUES]
    return "\n".join(lines) + "\n"


def corpus_counts(folder: Path = CORPUS) -> dict[str, int] | None:
    """How many items of `folder`/*.yaml expect an entry of each catalogue (`expect.signature`
    starting with `<catalogue id>.`), by catalogue id; None where `folder` is not there."""
    if not folder.is_dir():
        return None
    counts = dict.fromkeys((catalogue.id for catalogue in CATALOGUES), 0)
    for path in sorted(folder.glob("*.yaml")):
        for item in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            signature = str((item.get("expect") or {}).get("signature", ""))
            catalogue_id = signature.partition(".")[0]
            if catalogue_id in counts and "." in signature:
                counts[catalogue_id] += 1
    return counts


def _link(catalogue: Catalogue) -> str:
    return f"<{catalogue.source}>" if catalogue.source else "(no source yet)"


def coverage(corpus: Mapping[str, int] | None = None) -> str:
    """The table of catalogues: entries, entries with a cause and a fix, corpus items proving it."""
    header = "| catalogue | id | entries | with a fix | corpus items | source |"
    lines = [
        "\n## Catalogues\n",
        "Each catalogue, its entries, those with a cause and a fix (a test fails for one without),",
        "and the real lines of `tests/corpus/failures/*.yaml` that prove its entries are found.\n",
        header if corpus is not None else header.replace(" corpus items |", ""),
        "|---|---|---|---|---|---|" if corpus is not None else "|---|---|---|---|---|",
    ]
    for catalogue in CATALOGUES:
        fixed = sum(1 for entry in catalogue.entries if entry.cause.strip() and entry.fix.strip())
        cells = [
            f"[{_cell(catalogue.title)}](#{_anchor(catalogue)})",
            f"`{catalogue.id}`",
            str(len(catalogue.entries)),
            str(fixed),
            *([str(corpus.get(catalogue.id, 0))] if corpus is not None else []),
            _link(catalogue),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ordering() -> str:
    """The rule that puts the root cause first, with the layers' ranks."""
    ranks: dict[int, list[str]] = {}
    for layer, rank in LAYER_RANK.items():
        ranks.setdefault(rank, []).append(f"`{layer}`")
    rows = [f"| {rank} | {', '.join(layers)} |" for rank, layers in sorted(ranks.items())]
    return "\n".join([
        "\n## Several lines, one cause\n",
        "When a log holds several failures, the one that explains the others is reported first and the",
        "rest as its consequences (`gpuctl explain`: `role` `cause` or `consequence` per match and",
        "`cause` in `--output json`; verify and bootstrap report the first). The order is the layer's",
        "rank below, lowest first: the fabric's and the GPU's own faults make every program on them",
        "fail with errors of their own (NVIDIA's Xid catalogue: act on NVLink, NVSwitch and GPU errors",
        "first; Xid 79 is triggered by an Xid 74 before it), a driver or toolkit fault stops",
        "containers before any program runs, and the network's and the application's errors come last.",
        "Findings of one rank are independent causes; a layer not listed ranks",
        f"{DEFAULT_RANK}, and the table's generic fallback rows after everything.",
        "Sources: <https://docs.nvidia.com/deploy/xid-errors/> (the Xid catalogue's recommended actions",
        "and its per-Xid notes), <https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/>",
        "(CUDA 802 while Fabric Manager is not running).\n",
        "| rank | layers |",
        "|---|---|",
        *rows,
    ])  # fmt: skip


def _anchor(catalogue: Catalogue) -> str:
    """GitHub's anchor of the catalogue's heading."""
    heading = f"catalogue {catalogue.id} {catalogue.title}".lower()
    return "".join(c if c.isalnum() or c in "-_ " else "" for c in heading).replace(" ", "-")


def _code(text: str) -> str:
    """`text` as inline code, whatever backticks it holds."""
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


def _entry_row(catalogue: Catalogue, entry: Entry) -> str:
    layer = entry.layer + (" (transient)" if entry.transient else "")
    name = _cell(entry.name) + (f" ([source](<{entry.source}>))" if entry.source else "")
    return (
        f"| `{catalogue.diagnosis_id(entry)}` | {name} | {layer} | {_cell(shown(entry.cause))} | "
        f"{_cell(shown(entry.fix))} |"
    )


def _catalogue(catalogue: Catalogue) -> str:
    """A catalogue's section: where it comes from, what reads its codes, and every entry."""
    where = ", ".join(f"`{source}`" for source in catalogue.applies_to) or "none yet"
    lines = [
        f"\n## Catalogue {catalogue.id}: {catalogue.title}\n",
        f"Source: {_link(catalogue)}" + (f", {catalogue.version}" if catalogue.version else "") + ".",
        f"Looked for in what `gpuctl verify` reads: {where}; `gpuctl explain` looks for it in any text.",
    ]
    if catalogue.readers:
        lines += [
            "",
            "Readers (a line's code is read by the group `code` and looked up among the entries):",
            "",
        ]
        lines += [f"- {_code(reader)}" for reader in catalogue.readers]
    if catalogue.unknown is not None:
        lines += [
            "",
            f"A code read that no entry lists (`{catalogue.id}.unknown`): cause: "
            f"{shown(catalogue.unknown.cause).rstrip('.')}; fix: "
            f"{shown(catalogue.unknown.fix).rstrip('.')}.",
        ]
    lines += ["", "| id | name | layer | cause | fix |", "|---|---|---|---|---|"]
    lines += [_entry_row(catalogue, entry) for entry in catalogue.entries]
    if not catalogue.entries:
        lines.append("| | (no entries yet) | | | |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(markdown(corpus_counts()))
