"""The simulated GPU cluster: a local Kubernetes API server with a scheduler, a kubelet and a
device plugin, driven by a scenario file (see docs/scenario.md).

Three sub-packages, each importing only the ones below it (never upwards, no cycle between them):

    server   the HTTP server on loopback, its kubeconfig, `gpuctl sim up/down` as processes
      ↓
    api      the Kubernetes API rules: routing, discovery and OpenAPI, reads, writes and patches,
      ↓      watches, tables, field validation, protobuf bodies, Status errors
    runtime  the cluster behind the API: the object store and its watch history, the scheduler,
             the kubelet and containers, the DaemonSet controller and device plugin, failures

`scenario.py` (with the shipped `scenarios/*.yaml`) is the input of all three and imports none of them.
Nothing here imports kubernetes at module level, so `gpuctl --help` stays fast.
"""
