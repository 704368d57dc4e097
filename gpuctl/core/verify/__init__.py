"""`gpuctl verify`: prove every GPU node, diagnose the rest.

run.py orchestrates and is where to start reading; it calls each part directly:
node_checks (read-only per node), cluster_checks, pod_manifest (the verification pod),
pod_run (create, follow, clean up), pod_judgement (scheduling, image pull, nvidia-smi output),
expectations (--expect-nodes/--expect-gpus/--toleration), model (options and results).
"""

from gpuctl.core.verify.expectations import parse_expectations, parse_toleration
from gpuctl.core.verify.model import Check, CheckStatus, NodeResult, VerifyOptions, VerifyResult
from gpuctl.core.verify.run import verify

__all__ = [
    "Check",
    "CheckStatus",
    "NodeResult",
    "VerifyOptions",
    "VerifyResult",
    "parse_expectations",
    "parse_toleration",
    "verify",
]
