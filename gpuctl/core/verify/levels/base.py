"""The interface of a proof level deeper than nvidia-smi (see __init__.py)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuctl.core.verify.model import PodEvaluation, PodWorkload, failed
from gpuctl.core.verify.pod_judgement import pod_start_problem
from gpuctl.diagnose import diagnose
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.core.verify.model import ProofOptions, VerifyOptions
    from gpuctl.diagnose import Diagnosis
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.pods import PodOutcome


class ProofLevel(ABC):
    """One level deeper than nvidia-smi: what its pod runs, and how its output is judged."""

    name: str  # as --level names it
    check_id: str
    container: str  # the pod's container (its log holds the output)
    title: str  # what the pod runs, in messages: "the CUDA check"
    diagnosis_source: str  # the diagnosis table's source for its output: "cuda-workload"
    memory_shm: bool = False

    @abstractmethod
    def image(self, proof: ProofOptions) -> str:
        """The image its pods run (--cuda-image, --nccl-image)."""

    @abstractmethod
    def command(self, gpus: int) -> tuple[str, ...]:
        """The command of a pod given `gpus` GPUs."""

    def not_applicable(self, gpus: int) -> str:
        """Why the level proves nothing on a pod of `gpus` GPUs (it passes), "" when it applies."""
        del gpus
        return ""

    @abstractmethod
    def judge_output(
        self, text: str, outcome: PodOutcome, node: NodeInfo, gpus: int, options: VerifyOptions
    ) -> PodEvaluation:
        """The verdict on what a pod that ran printed (`text`: its log)."""

    def workload(self, gpus: int, proof: ProofOptions) -> PodWorkload:
        return PodWorkload(self.name, self.container, self.image(proof), self.command(gpus), self.memory_shm)

    def judge(self, outcome: PodOutcome, node: NodeInfo, gpus: int, options: VerifyOptions) -> PodEvaluation:
        """A pod that never ran fails the check with the diagnosis of why; one that ran is judged
        by its output."""
        problem = pod_start_problem(outcome, node, options.namespace, self.image(options.proof))
        if problem is not None:
            check = replace(problem, id=self.check_id, message=f"{self.title} pod: {problem.message}")
            return PodEvaluation((check,))
        if outcome.state == "timeout":
            check = failed(
                self.check_id,
                f"{self.title} did not finish before --timeout ran out (pod {outcome.phase or 'Running'})",
                "rerun with a larger --timeout, and --keep-pods to inspect the pod",
            )
            return PodEvaluation((check,))
        return self.judge_output(outcome.log or outcome.message, outcome, node, gpus, options)

    def diagnose_output(self, text: str, node: NodeInfo, options: VerifyOptions) -> Diagnosis | None:
        """What the diagnosis table makes of the pod's output, hints filled in for this node."""
        return diagnose(
            text,
            self.diagnosis_source,
            node=node.name,
            namespace=options.namespace,
            image=self.image(options.proof),
        )

    def logs_hint(self, outcome: PodOutcome, options: VerifyOptions) -> str:
        logs = command_line("kubectl", "-n", options.namespace, "logs", outcome.name)
        return f"`{logs}` (rerun with --keep-pods)"
