"""The simulated cluster behind the API: `cluster.Cluster` wires the store, the engine (timers), the
scheduler, the kubelet and the DaemonSet controller. Imports neither `api` nor `server`: the API tells it
what to do (hooks such as `pod_created`, `delete_namespace`)."""
