"""The simulated cluster behind the API, in Kubernetes' shape: the store at the bottom; the controllers
(scheduler, kubelet and device manager, DaemonSet controller, GPU Operator, DRA driver and claims) over
it, each watching the store for the kinds it reads and keeping its own state in `state.ClusterState`;
`cluster.Cluster` only wires them. Imports neither `api` nor `server`: the API writes to the store, and
calls the cluster only for the deletions an API server itself carries out (`delete_pod`,
`delete_namespace`). No import cycle (`tests/unit/test_sim_runtime_imports.py`)."""
