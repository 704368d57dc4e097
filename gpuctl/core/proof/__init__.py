"""Proof: prove.py runs verify for given nodes at a level, decides each node's verdict (proven,
busy, failed) by one rule (verdict.py) and applies the gate (gate.py: the node taint, the GPUProven
condition, per-GPU rules where a stack keeps GPUs from pods one by one); options.py builds
"verify these nodes" once;
readiness.py is the one wait for a stack to serve its nodes.

Nothing is imported here: the gate's writers (gpuctl.core.node_condition) read the verdict rule,
and a package that loaded the gate first would meet them half-initialized."""
