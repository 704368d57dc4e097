"""The Kubernetes API rules the sim serves, HTTP-agnostic: `router.Api` takes a request and answers it.
Imports `runtime` (the cluster and its store), never `server`."""
