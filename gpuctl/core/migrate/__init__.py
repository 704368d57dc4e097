"""Moving a cluster's GPU nodes from one stack to another (the pairs of registry.MIGRATIONS) under
running work, node by node with the upgrade's machinery (gpuctl.core.upgrade.run): plan.py says
which nodes move and refuses a cluster that cannot keep its workloads as they are, stacks.py holds
the old stack to the nodes it still serves and installs and removes the stacks, run.py moves the
nodes a batch at a time, model.py holds the results. What leaving or taking a node means for a
stack is the stack's own (the migration part of gpuctl.core.stacks.base.ClusterStack)."""

from gpuctl.core.migrate.model import (
    MIGRATION_STEPS,
    STACK_LABEL,
    MigrationPlan,
    MigrationResult,
    NodeMigration,
)
from gpuctl.core.migrate.run import MigrationRequest, run_migration

__all__ = [
    "MIGRATION_STEPS",
    "STACK_LABEL",
    "MigrationPlan",
    "MigrationRequest",
    "MigrationResult",
    "NodeMigration",
    "run_migration",
]
