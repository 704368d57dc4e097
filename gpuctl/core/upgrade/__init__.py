"""Node-by-node upgrades inside `gpuctl bootstrap`: plan.py finds the nodes the host phase would
change, run.py takes them out of service a batch at a time and proves each before it returns,
phase.py fits that into the host phase, model.py holds the results."""

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
