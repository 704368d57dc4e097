"""NVIDIA's device plugin, from gpuctl's own manifests: the stack (stack.py) and how its GPU
sharing (time-slicing, MPS) is read and proven (sharing.py).

Left empty so that importing one of these modules does not import the stack and, through it, the
verify modules it uses: verify's snapshot reads sharing.py."""
