"""A round of multi-node all-reduces as Kubeflow MPI Operator MPIJobs (kubeflow.org/v2beta1), where
that CRD is served: the field's way to launch MPI on Kubernetes. The operator makes the SSH keys,
the headless Service, the workers `<job>-worker-<i>` and the launcher; gpuctl writes one MPIJob
per run, with the same worker and launcher containers as its own launcher (fabric_pods.py), the
workers held to the run's nodes by node affinity and each taking all of its node's GPUs, so one
lands on each. The pod templates carry the run's labels: verify's cleanup finds the pods as it
finds its own.

Requests per round: one create per MPIJob, a pod list every WAIT_POLL_S until the launchers end,
one log read per launcher, then a list and delete of the round's MPIJobs and one deletecollection
of its pods (the operator's garbage collection would remove them too, later).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuctl.core.verify.fabric_launch import WAIT_POLL_S, RunOutput
from gpuctl.core.verify.fabric_pods import (
    FABRIC_ROLE_LABEL,
    FABRIC_ROUND_LABEL,
    LAUNCHER,
    WORKER,
    fabric_labels,
    launcher_pod,
    mpirun_command,
    run_name,
    worker_pod,
)
from gpuctl.kube import fabric_objects
from gpuctl.kube.fabric_objects import MPIJOBS
from gpuctl.kube.nodes import HOSTNAME_LABEL
from gpuctl.kube.pod_states import PodOutcome

if TYPE_CHECKING:
    from gpuctl.core.verify.model import VerifyOptions
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.raw import JsonDict

Run = tuple[tuple["NodeInfo", int], ...]


def mpijob(run_id: str, job: str, round_no: int, run: Run, options: VerifyOptions) -> JsonDict:
    """The MPIJob of one run: `len(run)` workers of `gpus` GPUs each on the run's nodes."""
    names = (run_id, job, round_no)
    gpus = min(gpus for _, gpus in run)
    first = run[0][0]
    worker = worker_pod(first, gpus, 0, names, options, secret="")
    launcher = launcher_pod(first, [], names, options, secret="")
    hosts = [(f"{job}-worker-{index}.{job}", gpus) for index in range(len(run))]
    launcher["spec"]["containers"][0]["command"] = mpirun_command(hosts, ssh_args="")
    for pod in (worker, launcher):
        # the operator mounts its own SSH keys (sshAuthMountPath) and names the pods itself
        pod["spec"]["volumes"] = [volume for volume in pod["spec"]["volumes"] if volume["name"] != "ssh"]
        container = pod["spec"]["containers"][0]
        container["volumeMounts"] = [mount for mount in container["volumeMounts"] if mount["name"] != "ssh"]
        for key in ("hostname", "subdomain"):
            pod["spec"].pop(key, None)
    worker["spec"]["containers"][0]["command"] = ["/usr/sbin/sshd", "-De"]
    del worker["spec"]["nodeSelector"]
    hostnames = [node.hostname for node, _ in run]
    worker["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": HOSTNAME_LABEL, "operator": "In", "values": hostnames}]}
                ]
            }
        }
    }
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": job, "labels": fabric_labels(run_id, job, round_no, "mpijob")},
        "spec": {
            "slotsPerWorker": gpus,
            "sshAuthMountPath": "/home/mpiuser/.ssh",
            "mpiImplementation": "OpenMPI",
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 0},
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "restartPolicy": "Never", "template": _template(launcher)},
                "Worker": {"replicas": len(run), "restartPolicy": "Never", "template": _template(worker)},
            },
        },
    }


def _template(pod: JsonDict) -> JsonDict:
    return {"metadata": {"labels": pod["metadata"]["labels"]}, "spec": pod["spec"]}


def mpijob_round(
    api_client: ApiClient, options: VerifyOptions, names: tuple[str, int], runs: list[Run]
) -> list[RunOutput]:
    """Each run's output, its MPIJob created, its launcher followed until it ends or --timeout."""
    run_id, round_no = names
    deadline = time.monotonic() + options.timeout_s
    jobs = [run_name(run_id, round_no, index) for index in range(len(runs))]
    for job, run in zip(jobs, runs, strict=True):
        fabric_objects.create(
            api_client, options.namespace, MPIJOBS, mpijob(run_id, job, round_no, run, options)
        )
    outputs = [RunOutput(tuple(node for node, _ in run), {}) for run in runs]
    selector = f"{FABRIC_ROUND_LABEL}={run_id}-{round_no}"
    while True:
        phases = fabric_objects.pod_phases(api_client, options.namespace, selector)
        settled = all(_settled(job, run, phases) for job, run in zip(jobs, runs, strict=True))
        if settled or time.monotonic() >= deadline:
            break
        time.sleep(WAIT_POLL_S)
    for job, output, run in zip(jobs, outputs, runs, strict=True):
        _finish((api_client, options), job, output, run, phases)
    return outputs


def _workers(job: str, run: Run) -> list[str]:
    return [f"{job}-worker-{index}" for index in range(len(run))]


def _settled(job: str, run: Run, phases: dict[str, fabric_objects.PodPhase]) -> bool:
    """The run has an end: its launcher ended, or a worker did (the launcher never comes)."""
    launcher = phases.get(f"{job}-launcher")
    if launcher is not None and launcher.ended is not None:
        return True
    return any(
        (phase := phases.get(name)) is not None and phase.ended is not None for name in _workers(job, run)
    )


def _finish(
    cluster: tuple[ApiClient, VerifyOptions],
    job: str,
    output: RunOutput,
    run: Run,
    phases: dict[str, fabric_objects.PodPhase],
) -> None:
    by_hostname = {node.hostname: node for node, _ in run}
    by_name = {node.name: node for node, _ in run}
    for name in _workers(job, run):
        phase = phases.get(name)
        node = by_name.get(phase.node) or by_hostname.get(phase.node) if phase is not None else None
        if phase is not None and node is not None:
            output.hostnames[name] = node
        if phase is not None and phase.ended is not None and node is not None:
            output.worker_failures[node.name] = phase.ended
    placed = {node.name for node in output.hostnames.values()}
    unplaced = [node for node, _ in run if node.name not in placed]
    launcher = phases.get(f"{job}-launcher")
    if launcher is None or launcher.ended is None:
        waiting = "Pending" if launcher is None else "Running"
        for node in unplaced:  # a worker the scheduler never placed: not on its node
            output.worker_failures.setdefault(node.name, PodOutcome(f"{job}-worker", "timeout", "Pending"))
        if launcher is not None or not output.worker_failures:
            output.launcher = PodOutcome(f"{job}-launcher", "timeout", waiting)
        return
    api_client, options = cluster
    ranks = sum(gpus for _, gpus in run)
    log = fabric_objects.read_launcher_log(api_client, options.namespace, launcher.name, LAUNCHER, ranks)
    output.launcher = replace(launcher.ended, log=log, node_name=launcher.node)


class MpiJobLauncher:
    """Runs rounds of multi-node all-reduces as MPIJobs and cleans up after each (FabricLauncher's
    interface)."""

    def __init__(self, api_client: ApiClient, options: VerifyOptions, run_id: str) -> None:
        self.api_client = api_client
        self.options = options
        self.run_id = run_id

    def run_round(self, round_no: int, runs: list[Run]) -> list[RunOutput]:
        selector = f"{FABRIC_ROUND_LABEL}={self.run_id}-{round_no}"
        try:
            return mpijob_round(self.api_client, self.options, (self.run_id, round_no), runs)
        finally:
            delete_round(self.api_client, self.options, selector)

    def clean_up(self) -> None:
        """An MPIJob a failed round left (its pods go with verify's own cleanup)."""
        selector = f"gpuctl.io/verify-run={self.run_id}"
        fabric_objects.delete_labelled(self.api_client, self.options.namespace, MPIJOBS, selector)


def delete_round(api_client: ApiClient, options: VerifyOptions, selector: str) -> None:
    """The round's MPIJobs, and their pods at once (the next round needs the GPUs)."""
    fabric_objects.delete_labelled(api_client, options.namespace, MPIJOBS, selector)
    pods = f"{selector},{FABRIC_ROLE_LABEL}={WORKER}" if options.keep_pods else selector
    fabric_objects.delete_pods(api_client, options.namespace, pods)
