"""The GPU Operator (Helm): the stack (stack.py), its operands' state on a node (state.py) and its
validator and ClusterPolicy checks (checks.py).

Left empty so that importing one of these modules does not import the stack and, through it, the
verify modules it uses: verify's snapshot and run read checks.py."""
