"""`gpuctl verify`: prove every GPU node, diagnose the rest.

run.py orchestrates and is where to start reading (`from gpuctl.core.verify.run import verify`);
it asks each node's GPU allocation (gpuctl.core.stacks) for what differs between the ways a node
hands out its GPUs, and calls each part directly: snapshot (the read-only phase's reads), node_checks
(read-only per node), cluster_checks, pod_manifest (the verification pod), pod_run (create,
follow, clean up), pod_judgement (scheduling, image pull, nvidia-smi output), expectations
(--expect-nodes/--expect-gpus/--toleration), model (options and results).

This file imports only the leaves (model, expectations): the stacks import verify's check modules,
and verify's run imports the stacks.
"""

from gpuctl.core.verify.expectations import parse_expectations, parse_toleration
from gpuctl.core.verify.model import Check, CheckStatus, NodeResult, VerifyOptions, VerifyResult

__all__ = [
    "Check",
    "CheckStatus",
    "NodeResult",
    "VerifyOptions",
    "VerifyResult",
    "parse_expectations",
    "parse_toleration",
]
