"""Bad inputs of issue 40: the simulated cluster (host-backed nodes, lifetimes): the scenario's
eventTTLSeconds and idleTimeoutSeconds take seconds from 0 to a day, nothing else."""

from __future__ import annotations

from tests.bad_inputs_cases import Case, case

UP = "sim up --scenario {dir}/s.yaml --kubeconfig {dir}/out.kubeconfig --detach"


def cases() -> list[Case]:
    values = {"negative": "-1", "text": "an hour", "nan": ".nan", "over-a-day": "90000"}
    return [
        case(
            f"scenario-{field}-{name}", UP, 2, field, {"s.yaml": f"{field}: {value}\nnodes: [{{name: g}}]\n"}
        )
        for field in ("eventTTLSeconds", "idleTimeoutSeconds")
        for name, value in values.items()
    ]
