"""Failure signatures → cause → fix: match log lines, pod states, events and scheduler messages."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from gpuctl.diagnose.catalogue import DEFAULT_RANK, LAYER_RANK, Hit
from gpuctl.diagnose.catalogues import entry_of, find_hits
from gpuctl.diagnose.cuda import min_driver_for
from gpuctl.diagnose.images import image_named, operand_of
from gpuctl.diagnose.literals import may_match, required_literals
from gpuctl.diagnose.signatures import DEFAULT_PLUGIN_RESTART, Signature
from gpuctl.diagnose.table import SIGNATURES
from gpuctl.shell import command_line

__all__ = [
    "SIGNATURES",
    "Diagnosis",
    "Signature",
    "diagnose",
    "diagnose_events",
    "diagnose_scheduling",
    "scheduling_diagnosis",
    "scheduling_reasons",
    "signature_of",
]


@dataclass(frozen=True)
class Diagnosis:
    """A matched signature: which one, the evidence line, and the cause and hint filled in.

    `terminal` is False when waiting may clear the failure up (a transient signature).
    """

    signature_id: str
    evidence: str
    cause: str
    hint: str
    category: str = ""
    terminal: bool = True

    @property
    def rank(self) -> int:
        """How near the root of a failure this is (catalogue.LAYER_RANK): a lower rank explains
        a higher one found with it; generic fallbacks last."""
        signature = _BY_ID.get(self.signature_id)
        if signature is not None and signature.generic:
            return DEFAULT_RANK + 100
        return LAYER_RANK.get(self.category, DEFAULT_RANK)


class _Defaulting(dict[str, str]):
    """A value the caller does not know reads as its name in capitals (`kubectl describe node
    NODE`), as a placeholder for the reader to fill in."""

    def __missing__(self, key: str) -> str:
        return key.upper()


def _context(groups: Mapping[str, Any], context: dict[str, str]) -> dict[str, str]:
    # The caller's node, namespace and image go into the hints' commands as shell words; a
    # `plugin_restart` the caller passes is a whole command line already.
    filled = {
        key: value if key == "plugin_restart" else command_line(value) for key, value in context.items()
    }
    filled.setdefault("plugin_restart", DEFAULT_PLUGIN_RESTART.format_map(_Defaulting(filled)))
    filled.update({key: value for key, value in groups.items() if value})
    if "cuda" in filled:
        filled["min_driver"] = min_driver_for(filled["cuda"])
    return filled


def evidence_line(text: str, match: re.Match[str]) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    line = text[start : end if end >= 0 else len(text)].strip()
    return line[:300]


def make_diagnosis(
    signature: Signature, match: re.Match[str], evidence: str, context: dict[str, str]
) -> Diagnosis:
    groups = match.groupdict()
    if signature.applies_to("image-pull"):
        # The image the line names is the one that failed (an init container's, an operand's).
        groups = {"image": image_named(evidence), **{key: value for key, value in groups.items() if value}}
    values = _Defaulting(_context(groups, context))
    return Diagnosis(
        signature.id,
        evidence,
        signature.cause.format_map(values),
        signature.hint.format_map(values) + _operand_hint(signature, values),
        signature.category,
        not signature.transient,
    )


def _operand_hint(signature: Signature, values: _Defaulting) -> str:
    """The row's advice for an image of the GPU Operator's operands ("" for any other image)."""
    operand = operand_of(values["image"]) if signature.operand_hint else None
    if operand is None:
        return ""
    return "; " + signature.operand_hint.format_map(
        _Defaulting(values, operand=operand.name, field=operand.field)
    )


def _ordered(source: str) -> tuple[Signature, ...]:
    """Specific signatures first (table order), generic fallbacks after them."""
    applicable = [s for s in SIGNATURES if s.applies_to(source)]
    return tuple(s for s in applicable if not s.generic) + tuple(s for s in applicable if s.generic)


_SOURCES = {source for s in SIGNATURES for source in (s.source, *s.also)}
_BY_SOURCE = {source: _ordered(source) for source in _SOURCES}


# One pass over a healthy log instead of one per signature: most logs match nothing.
def any_of(rows: Iterable[Signature]) -> re.Pattern[str]:
    """One regex matching wherever any of `rows` matches (named groups dropped: they repeat)."""
    patterns = (re.sub(r"\(\?P<\w+>", "(?:", row.pattern.pattern) for row in rows)
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns), re.IGNORECASE)


_ANY_OF_SOURCE = {source: any_of(rows) for source, rows in _BY_SOURCE.items()}


_LITERALS = {signature.pattern: required_literals(signature.pattern) for signature in SIGNATURES}


def _candidates(text: str, source: str) -> tuple[Signature, ...]:
    """The signatures of `source` that may match `text`, in table order."""
    if text.isascii():
        lowered = text.lower()
        return tuple(s for s in _BY_SOURCE.get(source, ()) if may_match(_LITERALS[s.pattern], lowered))
    prefilter = _ANY_OF_SOURCE.get(source)
    if prefilter is None or not prefilter.search(text):
        return ()
    return _BY_SOURCE[source]


_BY_ID = {signature.id: signature for signature in SIGNATURES}
_GENERIC = frozenset(signature.id for signature in SIGNATURES if signature.generic)


def signature_of(signature_id: str) -> Signature | None:
    """The table's row with this id, or a catalogue entry's as a row (None for "" or an id
    neither has)."""
    found = _BY_ID.get(signature_id)
    if found is not None:
        return found
    entry = entry_of(signature_id)
    if entry is None:
        return None
    catalogue, row = entry
    return Signature(
        signature_id,
        catalogue.applies_to[0] if catalogue.applies_to else "",
        re.compile(re.escape(row.code)),
        row.cause,
        row.fix,
        row.layer,
        catalogue.applies_to[1:],
        transient=row.transient,
    )


def hit_diagnosis(hit: Hit, evidence: str, context: dict[str, str]) -> Diagnosis:
    """A catalogue entry found in a line, as a diagnosis with its cause and fix filled in."""
    values = _Defaulting(_context(hit.groups, context))
    return Diagnosis(
        hit.id,
        evidence[:300],
        hit.entry.cause.format_map(values),
        hit.entry.fix.format_map(values),
        hit.entry.layer,
        not hit.entry.transient,
    )


def catalogue_diagnoses(text: str, source: str | None, context: dict[str, str]) -> list[Diagnosis]:
    """Every catalogue entry found in `text` (of the catalogues applying to `source`; None: all),
    each once with its first line as the evidence, in text order."""
    found: dict[str, Diagnosis] = {}
    detail_keys: set[str] = set()
    explained: set[str] = set()  # lines where an entry other than an errno detail was found
    for hit in find_hits(text, source):
        start = text.rfind("\n", 0, hit.at) + 1
        end = text.find("\n", hit.at)
        line = text[start : end if end >= 0 else len(text)].strip()
        if hit.entry.detail:
            detail_keys.add(hit.key)
        else:
            explained.add(line[:300])
        if hit.key not in found:
            found[hit.key] = hit_diagnosis(hit, line, context)
    # An errno detail (apt.disk-full's "No space left on device") on a line another entry explains
    # (NCCL's /dev/shm segment) is that entry's detail, not a second cause.
    return [
        diagnosis
        for key, diagnosis in found.items()
        if key not in detail_keys or diagnosis.evidence not in explained
    ]


def root_first(found: list[Diagnosis]) -> list[Diagnosis]:
    """`found` with the one that explains the others first: lowest rank, then first found."""
    return sorted(found, key=lambda diagnosis: diagnosis.rank)


def diagnose(text: str, source: str, **context: str) -> Diagnosis | None:
    """What explains `text` read from `source`: the first table row of `source` that matches
    (table order = priority), unless a catalogue entry found on another line is nearer the root
    (a lower rank), e.g. an NVLink Xid before the application Xid it caused, or the row is a
    generic one. None when nothing matches."""
    row = table_diagnosis(text, source, context)
    entries = catalogue_diagnoses(text, source, context)
    if row is not None and row.signature_id not in _GENERIC:
        # On its own line a specific row wins, as in find_all: it was written for that text
        entries = [entry for entry in entries if entry.evidence != row.evidence]
    found = [*([row] if row else []), *entries]
    return root_first(found)[0] if found else None


def table_diagnosis(text: str, source: str, context: dict[str, str]) -> Diagnosis | None:
    """The first row of the table for `source` that matches `text` (table order = priority)."""
    for signature in _candidates(text, source):
        match = signature.pattern.search(text)
        if match:
            return make_diagnosis(signature, match, evidence_line(text, match), context)
    return None


# A scheduling message lists its reasons after these (kube-scheduler: one per node, the
# cluster-autoscaler: one per node group, each `N reason`); Karpenter's lists one error per
# NodePool, `; ` between them. The autoscaler's reasons are the scheduler's, run on a group's
# template node, so its own rows come first and the scheduler's after them.
# Kubernetes before 1.10 worded it `No nodes are available that match all of the following
# predicates:: Insufficient cpu (9), MatchNodeSelector (18).`: the reasons carry their node counts
# after them, so they are told apart by the capital each starts with.
_NODES_ARE_AVAILABLE = re.compile(
    r"nodes are available(?P<old> that match all of the following predicates:)?: "
    r"(?P<reasons>.*?)(?:\.\s+[^.]*?preemption:|\.*\s*$)",
    re.DOTALL,
)
_PREDICATES = re.compile(r",\s(?=[A-Z])")
_SCALE_UP = re.compile(
    r"didn.t trigger scale-up(?: \(it wouldn.t fit if a new node is added\))?:?\s*(?P<reasons>.*)", re.DOTALL
)
_KARPENTER = re.compile(
    r"incompatible with (?:nodepool|provisioner)|did not tolerate|no instance type|limits for nodepool|"
    r"limits have been exhausted|incompatible requirements|Failed to schedule pod,",
    re.IGNORECASE,
)
# A line of one of those messages, or a FailedScheduling event, or a reason quoted alone.
SCHEDULING_LINE = re.compile(
    r"nodes are available:|nodes are available that match all|FailedScheduling|didn.t trigger scale-up|"
    r"incompatible with (?:nodepool|provisioner)|node\(s\) (?:had|didn.t|were|did not)|"
    r"no instance type (?:satisfied|has|had|met|which)|limits for nodepool"
)
_COUNTED = re.compile(r",\s(?=\d+ )")
_NODEPOOLS = re.compile(r";\s*")
_SCHEDULER_SOURCES = ("scheduling",)
_AUTOSCALER_SOURCES = ("autoscaler", "scheduling")
_KARPENTER_SOURCES = ("karpenter",)
_REASON_CHARS = 160  # of a reason quoted after the cause
# A GPU pod's message that joins `Insufficient nvidia.com/gpu` (from the nodes without GPUs, or
# none free) to a taint of the cluster's own that the pod does not tolerate (`dedicated: gpu`,
# `workload: aiml`, old wording `had taint {k: v}, that the pod didn't tolerate`): the tainted
# nodes are the GPU nodes kept for pods that tolerate the taint, so that taint is the cause where
# every node of the message is one or the other
# (https://github.com/NVIDIA/gpu-operator/issues/156: the validator pod, 9 nodes without GPUs and
# the GPU node's `workload: aiml`). Kubernetes' own taints (control plane, node state), the
# autoscaler's and Karpenter's, and a taint the message does not name, keep their place.
_OWN_TAINT = re.compile(
    r"had (?:untolerated )?taint \{(?!node-role\.kubernetes\.io/|node\.kubernetes\.io/|"
    r"node\.cloudprovider\.kubernetes\.io/|karpenter\.sh/|ToBeDeletedByClusterAutoscaler|"
    r"DeletionCandidateOfClusterAutoscaler)"
)
_GPUS_SHORT = frozenset({"sched.insufficient-gpu", "autoscaler.insufficient-gpu"})
_GPU_NODES_TAINTED = (
    "; every other node is short of GPUs (Insufficient nvidia.com/gpu: no GPUs there, or none "
    "free) or tainted by Kubernetes, so the nodes with this taint are the GPU nodes: tolerate it in "
    "the pod, and in the GPU Operator's or device plugin's DaemonSets (or no device plugin runs "
    "there); if they are not GPU nodes, the GPUs are all taken (sched.insufficient-gpu)"
)


def _read_scheduling(message: str) -> tuple[tuple[str, ...], list[str]]:
    """The table sources that explain `message`, in order, and its reasons."""
    scale_up = _SCALE_UP.search(message)
    if scale_up:
        return _AUTOSCALER_SOURCES, _parts(scale_up.group("reasons"), _COUNTED)
    nodes = _NODES_ARE_AVAILABLE.search(message)
    if nodes is None and _KARPENTER.search(message):
        return _KARPENTER_SOURCES, _parts(message, _NODEPOOLS)
    between = _PREDICATES if nodes and nodes.group("old") else _COUNTED
    return _SCHEDULER_SOURCES, _parts(nodes.group("reasons") if nodes else message, between)


def _parts(body: str, between: re.Pattern[str]) -> list[str]:
    parts = (part.strip().rstrip(".") for part in between.split(body))
    return list(dict.fromkeys(part for part in parts if part))


def scheduling_reasons(message: str) -> list[str]:
    """Split a FailedScheduling (or NotTriggerScaleUp, or Karpenter) message into its reasons,
    e.g. `1 Insufficient nvidia.com/gpu`."""
    return _read_scheduling(message)[1]


_ROWS: dict[tuple[str, ...], tuple[Signature, ...]] = {
    sources: tuple(dict.fromkeys(row for source in sources for row in _BY_SOURCE.get(source, ())))
    for sources in (_SCHEDULER_SOURCES, _AUTOSCALER_SOURCES, _KARPENTER_SOURCES)
}
# The sources whose rows are read only through scheduling_diagnosis.
SCHEDULING_SOURCES = frozenset(source for sources in _ROWS for source in sources)


def _reason_diagnosis(
    reason: str, rows: tuple[Signature, ...], evidence: str, context: dict[str, str]
) -> tuple[int, Diagnosis] | None:
    """The first row of `rows` matching `reason` and its place (its priority as the cause); else
    a catalogue entry the reason names (a DRA claim's), after every row."""
    for place, row in enumerate(rows):
        match = row.pattern.search(reason)
        if match:
            return place, make_diagnosis(row, match, evidence, context)
    found = catalogue_diagnoses(reason, None, context)
    return (len(rows), replace(found[0], evidence=evidence)) if found else None


def scheduling_diagnosis(message: str, context: dict[str, str], evidence: str = "") -> Diagnosis | None:
    """Why a pod is not scheduled, for any pod, from the kube-scheduler's FailedScheduling, the
    cluster-autoscaler's NotTriggerScaleUp or Karpenter's message: every reason of it is read
    (one per node, node group or NodePool), the one the table puts first is the cause (the GPU's
    own before the rest: table_scheduling.py), and the others follow it in the cause, each with
    its id, so none is dropped. The evidence is the cause's reason, or `evidence` when given."""
    sources, reasons = _read_scheduling(message)
    rows = _ROWS[sources]
    found = {reason: _reason_diagnosis(reason, rows, evidence or reason, context) for reason in reasons}
    diagnosed = {reason: ranked for reason, ranked in found.items() if ranked}
    if not diagnosed:
        return None
    for reason in _gpu_nodes_tainted(diagnosed):
        diagnosis = diagnosed[reason][1]
        diagnosed[reason] = (-1, replace(diagnosis, cause=diagnosis.cause + _GPU_NODES_TAINTED))
    cause_reason = min(diagnosed, key=lambda reason: diagnosed[reason][0])
    cause = diagnosed[cause_reason][1]
    rest = [_quoted(reason, diagnosed.get(reason)) for reason in reasons if reason != cause_reason]
    if not rest:
        return cause
    return replace(cause, cause=f"{cause.cause}; the message's other reasons: {'; '.join(rest)}")


def _gpu_nodes_tainted(diagnosed: Mapping[str, tuple[int, Diagnosis]]) -> list[str]:
    """The reasons naming a taint of the cluster's own where every node of the message is short of
    GPUs or tainted (_OWN_TAINT); none where another reason (affinity, CPU, ...) leaves the GPU
    nodes undecided."""
    kinds = {reason: ranked[1].signature_id for reason, ranked in diagnosed.items()}
    if not any(kind in _GPUS_SHORT for kind in kinds.values()):
        return []
    tainted = [reason for reason, kind in kinds.items() if kind == "sched.untolerated-taint"]
    own = [reason for reason in tainted if _OWN_TAINT.search(reason)]
    others = [reason for reason, kind in kinds.items() if kind not in _GPUS_SHORT and reason not in own]
    return own if all("taint" in reason for reason in others) else []


def _quoted(reason: str, found: tuple[int, Diagnosis] | None) -> str:
    text = reason if len(reason) <= _REASON_CHARS else reason[: _REASON_CHARS - 3] + "..."
    return f"{text} ({found[1].signature_id})" if found else text


def diagnose_scheduling(message: str, **context: str) -> Diagnosis | None:
    """Why a pod is not scheduled (scheduling_diagnosis), the evidence being the cause's reason."""
    return scheduling_diagnosis(message, context)


_EVENT_SOURCES = ("events", "runtime", "image-pull")


def diagnose_events(events: Iterable[tuple[str, str]], **context: str) -> Diagnosis | None:
    """Diagnose a pod stuck in Pending/ContainerCreating from its events, newest last.

    `events` are (reason, message) pairs of the pod's Warning events. The newest event with a
    known signature wins; its `terminal` says whether waiting longer can help.
    """
    for reason, message in reversed(list(events)):
        text = f"{reason} {message}"
        for source in _EVENT_SOURCES:
            found = diagnose(text, source, **context)
            if found is not None:
                return found
    return None
