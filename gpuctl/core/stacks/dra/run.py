"""The DRA part of one verification run: the claim template its pods use, a watch that records
what the scheduler allocated to each pod's claim, and the cleanup of both."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.core.verify.pod_manifest import COMPONENT, MANAGED_BY, RUN_ID_LABEL, run_selector
from gpuctl.defaults import DRA_DEVICE_CLASS
from gpuctl.kube.claims import (
    ClaimAllocation,
    ClaimWatch,
    claim_template,
    create_template,
    delete_run_objects,
)

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient


class DraRun:
    """Create the run's ResourceClaimTemplate, watch its claims, and always delete both."""

    def __init__(
        self,
        api_client: ApiClient,
        version: str,
        namespace: str,
        run_id: str,
        *,
        watch_all: bool = False,
        tolerated: tuple[str, ...] = (),
    ) -> None:
        self.api_client = api_client
        self.version = version
        self.namespace = namespace
        self.template = f"gpuctl-verify-{run_id}"
        self.selector = run_selector(run_id)
        # Kubernetes 1.37: the claim the scheduler creates for a pod's nvidia.com/gpu carries no
        # label of the run, so the namespace's claims are watched (each is kept by its pod's name).
        self.watch_selector = "" if watch_all else self.selector
        self.labels = {MANAGED_BY: "gpuctl", COMPONENT: "verify", RUN_ID_LABEL: run_id}
        self.watch: ClaimWatch | None = None
        self.created = False
        self.allocations: dict[str, ClaimAllocation] = {}
        self.tolerated = tolerated  # device taint keys of gpuctl's gate: gated GPUs are proven again

    def start(self) -> None:
        """Watch first, so that no allocation is missed; then create the template."""
        self.watch = ClaimWatch(self.api_client, self.version, self.namespace, self.watch_selector)
        self.watch.start()
        self.created = True  # set before the request: an interrupted create is cleaned up too
        template = claim_template(self.version, self.template, self.labels, DRA_DEVICE_CLASS, self.tolerated)
        create_template(self.api_client, self.version, self.namespace, template)

    def finish(self) -> dict[str, ClaimAllocation]:
        """Stop watching; verification pod name → what its claim was allocated."""
        if self.watch is not None:
            self.allocations = self.watch.stop()
            self.watch = None
        return self.allocations

    def clean_up(self) -> None:
        self.finish()
        if self.created:
            delete_run_objects(self.api_client, self.version, self.namespace, self.selector)
