"""NVIDIA's DRA driver (Helm): the stack (stack.py), its ResourceSlice and kubelet-plugin checks
(checks.py) and the ResourceClaims a verification run holds (run.py).

Left empty so that importing one of these modules does not import the stack and, through it, the
verify modules it uses: verify's snapshot reads checks.py."""
