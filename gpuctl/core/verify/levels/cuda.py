"""`--level cuda`: NVIDIA's vectorAdd sample on every GPU the pod gets, one after the other
(gpuctl.cuda_workload's script), judged per GPU; a failure is explained by the diagnosis table's
rows for what the CUDA runtime prints (source `cuda-workload`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.core.verify.levels.base import ProofLevel
from gpuctl.core.verify.model import CudaGpu, PodEvaluation, failed, passed
from gpuctl.cuda_workload import NO_RESULT, cuda_check_script, parse_cuda_check

if TYPE_CHECKING:
    from gpuctl.core.verify.model import ProofOptions, VerifyOptions
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.pods import PodOutcome

CHECK_ID = "cuda.workload"


class CudaLevel(ProofLevel):
    name = "cuda"
    check_id = CHECK_ID
    container = "cuda-check"
    title = "the CUDA check"
    diagnosis_source = "cuda-workload"

    def image(self, proof: ProofOptions) -> str:
        return proof.cuda_image

    def command(self, gpus: int) -> tuple[str, ...]:
        return ("sh", "-c", cuda_check_script(gpus))

    def judge_output(
        self, text: str, outcome: PodOutcome, node: NodeInfo, gpus: int, options: VerifyOptions
    ) -> PodEvaluation:
        ran = {gpu.index: gpu for gpu in parse_cuda_check(text).gpus}
        results = tuple(
            CudaGpu(index, ran[index].passed, ran[index].error)
            if index in ran
            else CudaGpu(index, False, NO_RESULT)
            for index in sorted({*ran, *range(gpus)})
        )
        broken = [gpu for gpu in results if not gpu.ok]
        if not broken and outcome.exit_code in (0, None):
            return PodEvaluation(
                (passed(CHECK_ID, f"vectorAdd passed on {len(results)} GPU(s)"),), cuda=results
            )
        found = self.diagnose_output(text, node, options)
        if ran and broken:
            which = ", ".join(str(gpu.index) for gpu in broken)
            message = (
                f"vectorAdd failed on {len(broken)} of {len(results)} GPU(s) (GPU {which}): {broken[0].error}"
            )
        else:
            first = next(
                (line.strip() for line in text.splitlines() if line.strip()), outcome.reason or outcome.state
            )
            message = f"{self.title} exited {outcome.exit_code} without a result per GPU: {first}"
        if found is None:
            return PodEvaluation(
                (failed(CHECK_ID, message[:300], self.logs_hint(outcome, options)),), cuda=results
            )
        check = failed(CHECK_ID, f"{message[:240]} — {found.cause}", found.hint, found.signature_id)
        return PodEvaluation((check,), cuda=results)


CUDA = CudaLevel()
