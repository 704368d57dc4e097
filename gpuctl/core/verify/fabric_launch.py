"""One round of multi-node all-reduces on the cluster (`verify --level fabric`): for each run its
headless Service and worker pods, then, once every worker runs, its launcher; the launchers'
logs; and everything the round created deleted before the next round needs the GPUs back.

Requests per round: one create per Service and pod, a pod list every WAIT_POLL_S while the
workers start, one watch on the launchers, one log read per launcher, one deletecollection of
the round's pods and a list and delete of its Services. The SSH Secret is made once per verify
run. Pods carry the run's labels too, so verify's own cleanup (Ctrl-C, errors) removes them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from gpuctl.core.verify.fabric_pods import (
    FABRIC_ROLE_LABEL,
    FABRIC_ROUND_LABEL,
    LAUNCHER,
    WORKER,
    headless_service,
    launcher_pod,
    run_name,
    ssh_secret,
    worker_host,
    worker_pod,
)
from gpuctl.core.verify.pod_manifest import NODE_ANNOTATION
from gpuctl.kube import fabric_objects
from gpuctl.kube.fabric_objects import SECRETS, SERVICES
from gpuctl.kube.pod_states import PodOutcome

if TYPE_CHECKING:
    from gpuctl.core.verify.model import VerifyOptions
    from gpuctl.core.verify.progress import PodProgress
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.pods import PodBatch
    from gpuctl.kube.raw import JsonDict

WAIT_POLL_S = 0.2  # between pod lists while the workers start


@dataclass
class RunOutput:
    """What one run left to judge: the launcher's outcome and log (None: it never started, see
    `worker_failures`), and which node each worker hostname (w0, w1 ...) is."""

    nodes: tuple[NodeInfo, ...]
    hostnames: dict[str, NodeInfo]
    launcher: PodOutcome | None = None
    worker_failures: dict[str, PodOutcome] = field(default_factory=dict)  # node name → its worker's end


class FabricLauncher:
    """Runs rounds of multi-node all-reduces in `options.namespace` and cleans up after each."""

    def __init__(
        self,
        api_client: ApiClient,
        batch: PodBatch,
        options: VerifyOptions,
        run_id: str,
        progress: PodProgress | None = None,
    ) -> None:
        self.api_client = api_client
        self.batch = batch
        self.options = options
        self.run_id = run_id
        self.progress = progress
        self.secret = f"gpuctl-verify-{run_id}-ssh"
        self.secret_made = False
        self.pods_created = 0
        self.refused: dict[str, PodOutcome] = {}  # pods of the last creation the API refused
        self.round_workers: set[str] = set()  # the worker pods of the round under way

    def run_round(self, round_no: int, runs: list[tuple[tuple[NodeInfo, int], ...]]) -> list[RunOutput]:
        """Each run's output; `runs`: per run its nodes with the GPUs each worker takes."""
        if not self.secret_made:
            fabric_objects.create(
                self.api_client, self.options.namespace, SECRETS, ssh_secret(self.run_id, self.secret)
            )
            self.secret_made = True
        selector = f"{FABRIC_ROUND_LABEL}={self.run_id}-{round_no}"
        try:
            return self._round(round_no, runs, time.monotonic() + self.options.timeout_s)
        finally:
            self._delete_round(selector)

    def _round(
        self, round_no: int, runs: list[tuple[tuple[NodeInfo, int], ...]], deadline: float
    ) -> list[RunOutput]:
        outputs: list[RunOutput] = []
        workers: list[JsonDict] = []
        launchers: dict[int, JsonDict] = {}
        for index, run in enumerate(runs):
            service = run_name(self.run_id, round_no, index)
            names = (self.run_id, service, round_no)
            fabric_objects.create(
                self.api_client,
                self.options.namespace,
                SERVICES,
                headless_service(self.run_id, service, round_no),
            )
            pods = [
                worker_pod(node, gpus, i, names, self.options, secret=self.secret)
                for i, (node, gpus) in enumerate(run)
            ]
            workers += pods
            hosts = [(worker_host(i, service), gpus) for i, (_, gpus) in enumerate(run)]
            launchers[index] = launcher_pod(run[0][0], hosts, names, self.options, secret=self.secret)
            outputs.append(
                RunOutput(tuple(node for node, _ in run), {f"w{i}": node for i, (node, _) in enumerate(run)})
            )
        if self.progress is not None:
            self.progress.planned(
                nodes=len(workers), pods=len(workers) + len(launchers), timeout_s=self.options.timeout_s
            )
        self.round_workers = {pod["metadata"]["name"] for pod in workers}
        self._create(workers)
        started = self._wait_for_workers(round_no, outputs, workers, deadline)
        ready = {index: pod for index, pod in launchers.items() if index in started}
        self._create(list(ready.values()))
        launcher_names = {pod["metadata"]["name"]: index for index, pod in ready.items()}
        ended = dict(self.refused)
        following = set(launcher_names) - ended.keys()
        ended |= self.batch.follow(following, deadline, self._finished) if following else {}
        for name, index in launcher_names.items():
            outcome = ended.get(name) or PodOutcome(name, "timeout", "Running")
            if outcome.state in ("succeeded", "failed"):
                ranks = sum(gpus for _, gpus in runs[index])
                log = fabric_objects.read_launcher_log(
                    self.api_client, self.options.namespace, name, LAUNCHER, ranks
                )
                outcome = replace(outcome, log=log)
            outputs[index].launcher = outcome
        return outputs

    def _finished(self, outcome: PodOutcome) -> None:
        if self.progress is not None:
            self.progress.finished(outcome.name)

    def _create(self, pods: list[JsonDict]) -> None:
        on_created = self.progress.created if self.progress is not None else None
        futures = self.batch.create_all(iter(pods), len(pods), on_created)
        failed = [outcome for future in futures for outcome in future.result()]
        self.pods_created += len(pods) - len(failed)
        # a worker the API refused: its run cannot start, and the refusal names the cause
        self.refused = {outcome.name: outcome for outcome in failed}

    def _wait_for_workers(
        self, round_no: int, outputs: list[RunOutput], workers: list[JsonDict], deadline: float
    ) -> set[int]:
        """Poll until every run's workers run or one of them ended; the runs whose workers all run."""
        selector = f"{FABRIC_ROUND_LABEL}={self.run_id}-{round_no}"
        node_of = {
            pod["metadata"]["name"]: pod["metadata"]["annotations"][NODE_ANNOTATION] for pod in workers
        }
        run_of = {
            pod["metadata"]["name"]: index
            for index, output in enumerate(outputs)
            for pod in workers
            if pod["spec"]["subdomain"] == run_name(self.run_id, round_no, index)
        }
        refused = dict(self.refused)
        while True:
            phases = fabric_objects.pod_phases(self.api_client, self.options.namespace, selector)
            waiting = False
            for name, index in run_of.items():
                phase = phases.get(name)
                node = node_of[name]
                ended = refused.get(name) or (phase.ended if phase is not None else None)
                if ended is not None:
                    outputs[index].worker_failures[node] = ended
                elif phase is None or not phase.running:
                    waiting = True
            if not waiting or time.monotonic() >= deadline:
                break
            time.sleep(WAIT_POLL_S)
        for name, index in run_of.items():
            phase = phases.get(name)
            node = node_of[name]
            if (phase is None or not phase.running) and node not in outputs[index].worker_failures:
                outputs[index].worker_failures[node] = PodOutcome(name, "timeout", "Pending")
        return {index for index, output in enumerate(outputs) if not output.worker_failures}

    def _delete_round(self, selector: str) -> None:
        """The round's pods go at once (their GPUs are the next round's), its Services with them;
        with --keep-pods the launchers stay (their logs), the workers still go."""
        pods = f"{selector},{FABRIC_ROLE_LABEL}={WORKER}" if self.options.keep_pods else selector
        fabric_objects.delete_pods(self.api_client, self.options.namespace, pods)
        self.batch.forget(self.round_workers)
        fabric_objects.delete_labelled(self.api_client, self.options.namespace, SERVICES, selector)

    def clean_up(self) -> None:
        """What the run made besides its pods: the SSH Secret (and any Service a failed round left)."""
        if not self.secret_made:
            return
        selector = f"gpuctl.io/verify-run={self.run_id}"
        fabric_objects.delete_labelled(self.api_client, self.options.namespace, SERVICES, selector)
        fabric_objects.delete_labelled(self.api_client, self.options.namespace, SECRETS, selector)
