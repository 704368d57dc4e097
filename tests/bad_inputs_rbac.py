"""Bad inputs of issue 40: least privilege. A namespace every cluster has as --verify-namespace
(gpuctl/core/render.py refuses it for --rbac, --verify-cronjob and --verify-deployment: gpuctl's
accounts, pods and Pod Security labels need a namespace of their own). Each answer: exit 2, one
`error:` line naming the flag, one `hint:` line naming a namespace that works.

What the rendered accounts may and may not do on a cluster that evaluates RBAC and admission
policies is tested in tests/cluster/test_rbac_admission.py and tests/cluster/test_rbac_enforce.py."""

from __future__ import annotations

from tests.bad_inputs_cases import Case, case

IMAGE = "--gpuctl-image example.org/gpuctl:0.1.0"


def cases() -> list[Case]:
    return [
        case(
            "rbac-verify-namespace-kube-system",
            "render --rbac --verify-namespace kube-system",
            2,
            "--verify-namespace",
        ),
        case(
            "rbac-verify-namespace-default",
            "render --rbac --verify-namespace default",
            2,
            "--verify-namespace",
        ),
        case(
            "rbac-cronjob-namespace-kube-public",
            f"render --verify-cronjob {IMAGE} --verify-namespace kube-public",
            2,
            "--verify-namespace",
        ),
        case(
            "rbac-deployment-namespace-kube-node-lease",
            f"render --verify-deployment {IMAGE} --verify-namespace kube-node-lease",
            2,
            "--verify-namespace",
        ),
    ]
