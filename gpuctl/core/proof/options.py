""" "Verify these nodes": the one place the callers of proof turn the GPUs each node must show into
verify's options (bootstrap's verify phase, the upgrade's verify step, the readiness wait's
diagnosis)."""

from __future__ import annotations

from collections.abc import Mapping

from gpuctl.core.verify.model import Expectations, ProofOptions, Toleration, VerifyOptions


def node_options(
    expected: Mapping[str, int | None],
    *,
    proof: ProofOptions | None = None,
    timeout_s: float = 300.0,
    run_pods: bool = True,
    tolerations: tuple[Toleration, ...] = (),
) -> VerifyOptions:
    """Verify's options that hold each named node to its GPUs (None: at least one, as verify
    finds it), at `proof`'s level."""
    gpus = tuple((node, count) for node, count in expected.items() if count is not None)
    return VerifyOptions(
        expectations=Expectations(node_patterns=tuple(expected), gpus_by_pattern=gpus),
        timeout_s=timeout_s,
        run_pods=run_pods,
        tolerations=tolerations,
        proof=proof or ProofOptions(),
    )
