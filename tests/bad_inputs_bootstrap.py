"""Bad inputs of issue 33's bootstrap classes: the connection variables of inventory hosts
(gpuctl/hosts/connection_vars.py: an `ansible_port` of 0 no longer becomes 22, a become of
"perhaps" no longer becomes false), inventory key files that are not there (gpuctl/hosts/ssh.py),
and bootstrap's phase and flag mistakes. Each answer: exit 2 before any host or cluster is
touched, one `error:` line naming the host and variable (or the flag), one `hint:` line."""

from __future__ import annotations

from tests.bad_inputs_cases import Case, case

HOSTS = "all:\n  children:\n    gpu_nodes:\n      hosts:\n        n1: {ansible_host: 127.0.0.1}\n"
PREFLIGHT = "preflight --inventory {dir}/hosts.yml"
HOST_PHASE = "bootstrap --phase host --inventory {dir}/hosts.yml"


def _hosts(variables: str) -> dict[str, str]:
    """hosts.yml whose host n1 also has these variables (YAML flow mapping entries)."""
    return {"hosts.yml": HOSTS.replace("127.0.0.1}", f"127.0.0.1, {variables}}}")}


def _ports() -> list[Case]:
    """ansible_port: anything but a TCP port number is refused, 0 included."""
    values = {
        "zero": "0",
        "negative": "-22",
        "too-big": "65536",
        "float": "22.5",
        "bool": "true",
        "list": "[22]",
        "mapping": "{port: 22}",
        "two-words": "'22 2222'",
        "template": "'{{ ssh_port }}'",
        "hex": "'0x16'",
    }
    cases = [
        case(f"host-port-{name}", PREFLIGHT, 2, "host n1: ansible_port", _hosts(f"ansible_port: {value}"))
        for name, value in values.items()
    ]
    return [
        *cases,
        case("host-ssh-port-zero", PREFLIGHT, 2, "ansible_ssh_port", _hosts("ansible_ssh_port: 0")),
        case(
            "host-port-zero-in-group-vars",
            PREFLIGHT,
            2,
            "host n1: ansible_port",
            {"hosts.yml": HOSTS, "group_vars/gpu_nodes.yml": "ansible_port: 0\n"},
        ),
        case(
            "host-port-zero-in-host-vars",
            PREFLIGHT,
            2,
            "host n1: ansible_port",
            {"hosts.yml": HOSTS, "host_vars/n1.yml": "ansible_port: 0\n"},
        ),
        case(
            "host-port-zero-ini",
            "preflight --inventory {dir}/hosts.ini",
            2,
            "host n1: ansible_port",
            {"hosts.ini": "[gpu_nodes]\nn1 ansible_host=127.0.0.1 ansible_port=0\n"},
        ),
        case(
            "host-port-negative-ini-group",
            "preflight --inventory {dir}/hosts.ini",
            2,
            "host n1: ansible_port",
            {"hosts.ini": "[gpu_nodes]\nn1 ansible_host=127.0.0.1\n[gpu_nodes:vars]\nansible_port=-1\n"},
        ),
        case("host-port-zero-host-phase", HOST_PHASE, 2, "host n1: ansible_port", _hosts("ansible_port: 0")),
        case(
            "host-port-zero-phase-all",
            f"{HOST_PHASE.replace('host', 'all', 1)} --kubeconfig {{kc}}",
            2,
            "host n1: ansible_port",
            _hosts("ansible_port: 0"),
        ),
        case(
            "host-port-zero-verify-phase",
            "bootstrap --phase verify --inventory {dir}/hosts.yml --kubeconfig {kc}",
            2,
            "host n1: ansible_port",
            _hosts("ansible_port: 0"),
        ),
        case(
            "host-port-zero-hosts-from",
            "sim up --hosts-from {dir}/hosts.yml --kubeconfig {dir}/k --detach",
            2,
            "host n1: ansible_port",
            _hosts("ansible_port: 0"),
        ),
    ]


def _names_and_switches() -> list[Case]:
    """ansible_host, ansible_user, ansible_become: what ssh and Ansible would misread."""
    return [
        case("host-address-list", PREFLIGHT, 2, "host n1: ansible_host", _hosts("ansible_host: [a, b]")),
        case(
            "host-address-two-words",
            PREFLIGHT,
            2,
            "host n1: ansible_host",
            {"hosts.yml": HOSTS.replace("127.0.0.1", "'10.0.0.1 10.0.0.2'")},
        ),
        case(
            "host-ssh-host-mapping",
            PREFLIGHT,
            2,
            "host n1: ansible_ssh_host",
            {"hosts.yml": HOSTS.replace("ansible_host: 127.0.0.1", "ansible_ssh_host: {ip: 10.0.0.1}")},
        ),
        case("host-user-list", PREFLIGHT, 2, "host n1: ansible_user", _hosts("ansible_user: [root]")),
        case(
            "host-user-two-words", PREFLIGHT, 2, "host n1: ansible_user", _hosts("ansible_user: 'gpu admin'")
        ),
        case(
            "host-ssh-user-mapping", PREFLIGHT, 2, "ansible_ssh_user", _hosts("ansible_ssh_user: {name: x}")
        ),
        case("host-become-word", PREFLIGHT, 2, "host n1: ansible_become", _hosts("ansible_become: perhaps")),
        case("host-become-number", PREFLIGHT, 2, "host n1: ansible_become", _hosts("ansible_become: 2")),
        case("host-become-list", HOST_PHASE, 2, "host n1: ansible_become", _hosts("ansible_become: [yes]")),
    ]


def _key_files() -> list[Case]:
    """The inventory's private key: missing, a folder, not a path."""
    missing = "ansible_ssh_private_key_file: '{dir}/id_missing'"
    return [
        case("host-key-missing", PREFLIGHT, 2, "host n1: ansible_ssh_private_key_file", _hosts(missing)),
        case(
            "host-key-folder",
            PREFLIGHT,
            2,
            "host n1: ansible_ssh_private_key_file",
            _hosts("ansible_ssh_private_key_file: '{dir}'"),
        ),
        case(
            "host-key-list",
            PREFLIGHT,
            2,
            "host n1: ansible_ssh_private_key_file",
            _hosts("ansible_ssh_private_key_file: ['{dir}/a', '{dir}/b']"),
        ),
        case(
            "host-private-key-file-missing",
            PREFLIGHT,
            2,
            "host n1: ansible_private_key_file",
            _hosts("ansible_private_key_file: '{dir}/id_gone'"),
        ),
        case("host-key-missing-host-phase", HOST_PHASE, 2, "ansible_ssh_private_key_file", _hosts(missing)),
        case(
            "host-key-missing-in-group-vars",
            PREFLIGHT,
            2,
            "host n1: ansible_ssh_private_key_file",
            {
                "hosts.yml": HOSTS,
                "group_vars/all.yml": "ansible_ssh_private_key_file: /nonexistent/id_ed25519\n",
            },
        ),
    ]


def _bootstrap_flags() -> list[Case]:
    """bootstrap's own phase and flag mistakes."""
    cluster = "bootstrap --phase cluster --kubeconfig {kc}"
    return [
        case("bootstrap-phase-capitalised", "bootstrap --phase Cluster", 2, "--phase"),
        case("bootstrap-phase-list", "bootstrap --phase host,cluster", 2, "--phase"),
        case("bootstrap-phase-empty", "bootstrap --phase ''", 2, "--phase"),
        case("bootstrap-timeout-zero", f"{cluster} --timeout 0", 2, "--timeout"),
        case("bootstrap-timeout-inf", f"{cluster} --timeout inf", 2, "--timeout"),
        case("bootstrap-timeout-nan", f"{cluster} --timeout nan", 2, "--timeout"),
        case("bootstrap-timeout-huge", f"{cluster} --timeout 1e12", 2, "--timeout"),
        case("bootstrap-output-junit", f"{cluster} -o junit", 2, "'-o'"),
        case("bootstrap-helm-missing", f"{cluster} --stack operator --helm {{dir}}/none", 2, "--helm"),
        case(
            "bootstrap-helm-not-executable",
            f"{cluster} --stack operator --helm {{dir}}/helm",
            2,
            "--helm",
            {"helm": "#!/bin/sh\necho v3.16.2\n"},
        ),
        case(
            "bootstrap-host-matches-no-node",
            f"{cluster} --inventory {{dir}}/hosts.yml",
            2,
            "host n1 matches no Kubernetes node",
            {"hosts.yml": HOSTS},
        ),
        case(
            "bootstrap-node-name-matches-no-node",
            f"{cluster} --inventory {{dir}}/hosts.yml",
            2,
            "host n1 matches no Kubernetes node",
            _hosts("gpuctl_node_name: gpu-9"),
        ),
        case(
            "bootstrap-limit-matches-nothing", f"{HOST_PHASE} --limit n9", 2, "--limit", {"hosts.yml": HOSTS}
        ),
        case(
            "bootstrap-inventory-no-gpu-group",
            HOST_PHASE,
            2,
            "gpu_nodes",
            {"hosts.yml": "all:\n  hosts:\n    n1: {ansible_host: 127.0.0.1}\n"},
        ),
        case("bootstrap-inventory-empty-folder", "bootstrap --phase host --inventory {dir}", 2, "{dir}"),
    ]


def cases() -> list[Case]:
    return [*_ports(), *_names_and_switches(), *_key_files(), *_bootstrap_flags()]
