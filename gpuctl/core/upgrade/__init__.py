"""Node-by-node upgrades inside `gpuctl bootstrap`: plan.py finds the nodes the host phase would
change, run.py takes them out of service a batch at a time and proves each before it returns
(gpuctl.core.proof.prove), phase.py runs a plan in a worker thread, model.py holds the results.
gpuctl.core.bootstrap.host_phase fits it into the host phase: bootstrap imports the upgrade, and
the upgrade imports bootstrap only for types."""

from gpuctl.core.upgrade.model import (
    STEPS,
    NodePlan,
    NodeUpgrade,
    StepResult,
    UpgradeOptions,
    UpgradePlan,
    UpgradeResult,
)

__all__ = ["STEPS", "NodePlan", "NodeUpgrade", "StepResult", "UpgradeOptions", "UpgradePlan", "UpgradeResult"]
