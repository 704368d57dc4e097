"""Kubeflow's MPI Operator, kept small (scenario `mpiOperator: installed`): the MPIJob CRD
(kubeflow.org/v2beta1) is served, and an MPIJob gets what the operator's controller makes for it
(kubeflow/mpi-operator, pkg/controller/mpi_job_controller.go): a headless Service named after the
job, worker pods `<job>-worker-<i>` (hostname the pod's name, subdomain the job's, the job's
labels `training.kubeflow.org/job-name`, `job-role`, `replica-index` added to the template's),
and once every worker runs, the launcher pod. Deleting the MPIJob deletes them (the garbage
collector's part). The real operator wraps the launcher in a batch/v1 Job and names its pod with
a suffix; here the launcher pod is `<job>-launcher`, owned by the MPIJob.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime import crd_objects, defaults, kubelet
from gpuctl.sim.runtime.disruption import controller_of
from gpuctl.sim.runtime.store import Change, clone

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]
MPIJOBS = "mpijobs.kubeflow.org"
PASS = "mpi-operator"
JOB_NAME = "training.kubeflow.org/job-name"
JOB_ROLE = "training.kubeflow.org/job-role"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
OPERATOR_NAME = "training.kubeflow.org/operator-name"


def mpijob_crd() -> Obj:
    """mpijobs.kubeflow.org: namespaced, v2beta1 served and stored, status subresource."""
    crd: Obj = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": MPIJOBS, "generation": 1},
        "spec": {
            "group": "kubeflow.org",
            "names": {"kind": "MPIJob", "listKind": "MPIJobList", "plural": "mpijobs", "singular": "mpijob"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v2beta1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }
    crd["status"] = crd_objects.established_status(crd)
    return crd


def install(cluster: ClusterState, created: float) -> None:
    cluster.store.add("customresourcedefinitions.apiextensions.k8s.io", mpijob_crd(), created)


def watch(cluster: ClusterState) -> None:
    cluster.store.watch(MPIJOBS, lambda _: cluster.controller_soon(PASS))
    cluster.store.watch("pods", lambda change: _pod_changed(cluster, change))


def _pod_changed(cluster: ClusterState, change: Change) -> None:
    if JOB_NAME in (change.obj["metadata"].get("labels") or {}):
        cluster.controller_soon(PASS)


def reconcile(cluster: ClusterState) -> None:
    jobs = cluster.store.items(MPIJOBS)
    live = {job["metadata"]["uid"] for job in jobs}
    for job in jobs:
        _reconcile(cluster, job)
    for resource in ("pods", "services"):  # what a deleted MPIJob owned
        for obj in cluster.store.items(resource):
            owner = controller_of(obj)
            if owner is None or owner.get("kind") != "MPIJob" or owner.get("uid") in live:
                continue
            if resource == "pods":
                kubelet.delete_pod(cluster, obj, 0)
            else:
                cluster.store.remove(resource, obj["metadata"]["namespace"], obj["metadata"]["name"])


def _reconcile(cluster: ClusterState, job: Obj) -> None:
    meta = job["metadata"]
    namespace, name = meta["namespace"], meta["name"]
    replicas = (job.get("spec") or {}).get("mpiReplicaSpecs") or {}
    if cluster.store.get("services", namespace, name) is None:
        cluster.store.add("services", _service(job))
    workers = int((replicas.get("Worker") or {}).get("replicas", 0))
    running = 0
    for index in range(workers):
        pod = cluster.store.get("pods", namespace, f"{name}-worker-{index}")
        if pod is None:
            pod = _create_pod(cluster, job, "Worker", f"{name}-worker-{index}", index)
        running += (pod.get("status") or {}).get("phase") == "Running"
    launcher = f"{name}-launcher"
    if running == workers and cluster.store.get("pods", namespace, launcher) is None:
        _create_pod(cluster, job, "Launcher", launcher, 0)


def _owner(job: Obj) -> Obj:
    meta = job["metadata"]
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _labels(job: Obj, role: str) -> dict[str, str]:
    return {OPERATOR_NAME: "mpi-operator", JOB_NAME: job["metadata"]["name"], JOB_ROLE: role}


def _service(job: Obj) -> Obj:
    meta = job["metadata"]
    return {
        "kind": "Service",
        "apiVersion": "v1",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "labels": _labels(job, "worker"),
            "ownerReferences": [_owner(job)],
        },
        "spec": {"clusterIP": "None", "selector": _labels(job, "worker"), "publishNotReadyAddresses": True},
    }


def _create_pod(cluster: ClusterState, job: Obj, replica_type: str, name: str, index: int) -> Obj:
    meta = job["metadata"]
    spec = (job.get("spec") or {}).get("mpiReplicaSpecs", {}).get(replica_type) or {}
    template = clone(spec.get("template") or {})
    role = replica_type.lower()
    labels = {**(template.get("metadata", {}).get("labels") or {}), **_labels(job, role)}
    if role == "worker":
        labels[REPLICA_INDEX] = str(index)
    pod_spec = template.get("spec") or {}
    pod_spec["hostname"] = name
    pod_spec["subdomain"] = meta["name"]
    pod = {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": labels,
            "annotations": dict(template.get("metadata", {}).get("annotations") or {}),
            "ownerReferences": [_owner(job)],
        },
        "spec": pod_spec,
    }
    defaults.apply_pod_defaults(pod)
    created = cluster.store.add("pods", pod)
    cluster.record_event(job, "SuccessfulCreatePod", f"Created pod: {name}", component="mpi-job-controller")
    return created
