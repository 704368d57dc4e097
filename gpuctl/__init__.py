"""gpuctl: take Kubernetes GPU nodes from bare metal to proven GPU-ready, and keep proving it."""

__version__ = "0.1.0"
