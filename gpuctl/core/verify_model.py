"""Result objects of `gpuctl verify`: frozen, renderer-agnostic."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Status(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    SKIP = "skip"


@dataclass(frozen=True)
class Check:
    """One check with a stable id (e.g. `nvidia-smi.gpus`), a one-line message and a hint."""

    id: str
    status: Status
    message: str
    hint: str = ""
    diagnosis: str = ""  # signature id from gpuctl.diagnose, when one matched

    @property
    def failed(self) -> bool:
        return self.status is Status.FAIL


def passed(id_: str, message: str) -> Check:
    return Check(id_, Status.PASS, message)


def failed(id_: str, message: str, hint: str = "", diagnosis: str = "") -> Check:
    return Check(id_, Status.FAIL, message, hint, diagnosis)


def warned(id_: str, message: str, hint: str = "", diagnosis: str = "") -> Check:
    return Check(id_, Status.WARN, message, hint, diagnosis)


def skipped(id_: str, message: str) -> Check:
    return Check(id_, Status.SKIP, message)


@dataclass(frozen=True)
class GpuCounts:
    expected: int | None
    capacity: int
    allocatable: int
    seen: int | None


@dataclass(frozen=True)
class NodeResult:
    name: str
    gpus: GpuCounts
    checks: tuple[Check, ...]
    product: str = ""
    driver_version: str = ""

    @property
    def ok(self) -> bool:
        return not any(check.failed for check in self.checks)

    @property
    def first_problem(self) -> Check | None:
        """The first failing check, else the first warning: what a person should read first."""
        for wanted in (Status.FAIL, Status.WARN):
            for check in self.checks:
                if check.status is wanted:
                    return check
        return None


@dataclass(frozen=True)
class VerifyResult:
    nodes: tuple[NodeResult, ...]
    cluster_checks: tuple[Check, ...]
    run_id: str
    namespace: str
    pods_created: int = 0
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return all(node.ok for node in self.nodes) and not any(check.failed for check in self.cluster_checks)


@dataclass(frozen=True)
class Toleration:
    key: str
    operator: str  # Equal | Exists
    value: str
    effect: str  # "" = all effects

    def as_dict(self) -> dict[str, str]:
        data = {"key": self.key, "operator": self.operator}
        if self.operator == "Equal":
            data["value"] = self.value
        if self.effect:
            data["effect"] = self.effect
        return data


@dataclass(frozen=True)
class Expectations:
    """What the user says the cluster should have (`--expect-nodes`, `--expect-gpus`)."""

    node_patterns: tuple[str, ...] = ()
    gpus_default: int | None = None
    gpus_by_pattern: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class VerifyOptions:
    expectations: Expectations = field(default_factory=Expectations)
    namespace: str = "gpuctl-system"
    image: str = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
    image_pull_secret: str | None = None
    runtime_class: str | None = None
    timeout_s: float = 300.0
    keep_pods: bool = False
    concurrency: int = 32
    run_pods: bool = True
    allow_empty: bool = False
    tolerations: tuple[Toleration, ...] = ()
