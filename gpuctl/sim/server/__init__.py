"""The sim served over HTTP: `http_server.SimServer` (and its kubeconfig), and `process`, which runs it
in the foreground or detached for `gpuctl sim up/down`. Imports `api` and `runtime`, nothing imports it."""
