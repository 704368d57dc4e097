"""The simulated GPU cluster: a local Kubernetes API server with a scheduler, a kubelet and a
device plugin, driven by a scenario file (see docs/scenario.md)."""
