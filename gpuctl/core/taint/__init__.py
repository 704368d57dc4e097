"""`gpuctl taint-gpu-nodes`: plan and apply the GPU taint (apply), check the flags (rules), audit
the GPU DaemonSets against it (audit)."""

from gpuctl.core.taint.apply import NodeTaintChange, TaintResult, plan_taints, taint_gpu_nodes
from gpuctl.core.taint.rules import DEFAULT_TAINT, taint_spec

__all__ = ["DEFAULT_TAINT", "NodeTaintChange", "TaintResult", "plan_taints", "taint_gpu_nodes", "taint_spec"]
