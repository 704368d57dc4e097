"""Bad inputs of issue 40: the newcomer's classes. Node-by-node flags given where no node is
upgraded (gpuctl/cli/flag_rules.py), tolerations the API server would refuse (the checks of
gpuctl/validation.py). Each answer: exit 2, one `error:` line naming the flag, one `hint:` line."""

from __future__ import annotations

from tests.bad_inputs_cases import Case, case

HOSTS = "all:\n  children:\n    gpu_nodes:\n      hosts:\n        n1: {ansible_host: 127.0.0.1}\n"
HOST = "bootstrap --phase host -i {dir}/hosts.yml"


def _node_by_node() -> list[Case]:
    """The flags of a node-by-node upgrade, where the host phase upgrades no cluster's node."""
    hosts = {"hosts.yml": HOSTS}
    return [
        case(
            "newcomer-max-unavailable-cluster",
            "bootstrap --phase cluster --max-unavailable 2",
            2,
            "--max-unavailable 2",
        ),
        case(
            "newcomer-drain-timeout-verify",
            "bootstrap --phase verify --drain-timeout 60",
            2,
            "--drain-timeout 60",
        ),
        case("newcomer-force-drain-cluster", "bootstrap --phase cluster --force-drain", 2, "--force-drain"),
        # no --kubeconfig and none found: the host phase touches no cluster
        case(
            "newcomer-max-unavailable-no-cluster",
            f"{HOST} --max-unavailable 2",
            2,
            "--max-unavailable",
            hosts,
        ),
        case("newcomer-force-drain-no-cluster", f"{HOST} --force-drain", 2, "--force-drain", hosts),
        case("newcomer-drain-timeout-no-cluster", f"{HOST} --drain-timeout 9", 2, "--drain-timeout", hosts),
    ]


def _tolerations() -> list[Case]:
    """--toleration parts the API server would refuse in every verification pod (422)."""
    verify = "verify --kubeconfig {kc} --toleration"
    return [
        case("newcomer-toleration-key-spaces", f"{verify} 'a b=x'", 2, "key 'a b'"),
        case("newcomer-toleration-key-two-slashes", f"{verify} a/b/c", 2, "key 'a/b/c'"),
        case("newcomer-toleration-key-upper-prefix", f"{verify} Example.com/gpu", 2, "key 'Example.com/gpu'"),
        case("newcomer-toleration-key-too-long", f"{verify} {'k' * 64}", 2, "--toleration"),
        case("newcomer-toleration-value-spaces", f"{verify} 'dedicated=a b:NoSchedule'", 2, "value 'a b'"),
        case("newcomer-toleration-value-dash", f"{verify} dedicated=-gpu", 2, "value '-gpu'"),
        case("newcomer-toleration-value-long", f"{verify} dedicated={'v' * 64}", 2, "--toleration"),
        case("newcomer-toleration-value-no-key", f"{verify} =gpu:NoSchedule", 2, "operator Exists"),
        case(
            "newcomer-toleration-effect-case", f"{verify} dedicated=gpu:noschedule", 2, "effect 'noschedule'"
        ),
    ]


def cases() -> list[Case]:
    return [*_node_by_node(), *_tolerations()]
