"""Bad inputs of issue 40: output paths that resolve to a file the command reads (a --report that
is the kubeconfig, a file of KUBECONFIG or the --expect-gpus file; a sim kubeconfig, record or log
that is the scenario or the inventory: gpuctl/output_paths.py), kubeconfig certificates and keys
that are no PEM (gpuctl/kube/kubeconfig_pem.py), and a become password asked for with no terminal
to ask on. Each answer: exit 2, one `error:` line naming the file or flag, one `hint:` line.

That the file read is byte-identical afterwards, and that links planted at or beside a report are
never followed, is tested in tests/cluster/test_output_paths.py."""

from __future__ import annotations

import base64

from tests.bad_inputs_cases import Case, case, kubeconfig

SCENARIO = "nodes:\n  - name: gpu-0\n    gpus: 8\n"
HOSTS = "all:\n  children:\n    gpu_nodes:\n      hosts:\n        n1: {ansible_host: 127.0.0.1}\n"
# A PEM block of the right shape (kubectl would parse its DER later; gpuctl checks the PEM only).
CERTIFICATE = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"
NOT_PEM = base64.b64encode(b"just some bytes, no PEM block\n").decode()


def _outputs_over_inputs() -> list[Case]:
    kc = {"kc": kubeconfig()}
    return [
        case(
            "overwrite-report-is-the-kubeconfig",
            "verify --kubeconfig {dir}/kc --report {dir}/kc",
            2,
            "{dir}/kc",
            kc,
        ),
        case(
            "overwrite-report-is-a-file-of-kubeconfig",
            "verify --report {dir}/b",
            2,
            "{dir}/b",
            {"a": kubeconfig(), "b": kubeconfig()},
            {"KUBECONFIG": "{dir}/a:{dir}/b"},
        ),
        case(
            "overwrite-report-is-a-link-to-the-kubeconfig",
            "verify --kubeconfig {dir}/kc --report {dir}/sub/../kc",
            2,
            "{dir}/kc",
            {**kc, "sub/x": ""},
        ),
        case(
            "overwrite-report-is-the-expect-gpus-file",
            "verify --kubeconfig {kc} --expect-gpus @{dir}/gpus.yaml --report {dir}/gpus.yaml",
            2,
            "{dir}/gpus.yaml",
            {"gpus.yaml": "gpu-0: 8\n"},
        ),
        case(
            "overwrite-sim-record-is-the-scenario",
            "sim up --scenario {dir}/k.sim.json --kubeconfig {dir}/k --detach",
            2,
            "{dir}/k.sim.json",
            {"k.sim.json": SCENARIO},
        ),
        case(
            "overwrite-sim-kubeconfig-is-the-scenario",
            "sim up --scenario {dir}/s.yaml --kubeconfig {dir}/s.yaml --detach",
            2,
            "{dir}/s.yaml",
            {"s.yaml": SCENARIO},
        ),
        case(
            "overwrite-sim-log-is-the-inventory",
            "sim up --hosts-from {dir}/k.sim.log --kubeconfig {dir}/k --detach",
            2,
            "{dir}/k.sim.log",
            {"k.sim.log": "[gpu_nodes]\nn1 ansible_host=127.0.0.1\n"},
        ),
        case(
            "overwrite-sim-kubeconfig-is-the-inventory",
            "sim up --hosts-from {dir}/hosts.yml --kubeconfig {dir}/hosts.yml --detach",
            2,
            "{dir}/hosts.yml",
            {"hosts.yml": HOSTS},
        ),
    ]


def _pem_kubeconfig(cluster: str = "", user: str = "token: x") -> str:
    """A kubeconfig of the sim's cluster whose cluster and user entries carry these fields."""
    return (
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:{{port}}', {cluster}}}}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
        f"users: [{{name: u, user: {{{user}}}}}]\n"
    )


def _not_pem() -> list[Case]:
    """Certificates and keys that are no PEM: exit 2 naming the field, not "is the API server up"."""
    status = "status --kubeconfig {dir}/kc"
    cert = "client-certificate-data: " + base64.b64encode(CERTIFICATE.encode()).decode()
    return [
        case(
            "pem-ca-data-not-base64",
            status,
            2,
            "certificate-authority-data",
            {"kc": _pem_kubeconfig("certificate-authority-data: '!!no base64'")},
        ),
        case(
            "pem-ca-data-not-pem",
            status,
            2,
            "certificate-authority-data",
            {"kc": _pem_kubeconfig(f"certificate-authority-data: {NOT_PEM}")},
        ),
        case(
            "pem-ca-file-not-pem",
            status,
            2,
            "certificate-authority {dir}/ca.crt",
            {"kc": _pem_kubeconfig("certificate-authority: ca.crt"), "ca.crt": "not a certificate\n"},
        ),
        case(
            "pem-client-certificate-data-not-pem",
            status,
            2,
            "client-certificate-data",
            {"kc": _pem_kubeconfig(user=f"client-certificate-data: {NOT_PEM}, client-key-data: {NOT_PEM}")},
        ),
        case(
            "pem-client-key-data-is-a-certificate",
            status,
            2,
            "client-key-data",
            {"kc": _pem_kubeconfig(user=f"{cert}, client-key-data: {cert.split(' ')[1]}")},
        ),
        case(
            "pem-client-key-file-not-pem",
            status,
            2,
            "client-key {dir}/client.key",
            {"kc": _pem_kubeconfig(user=f"{cert}, client-key: client.key"), "client.key": "secret\n"},
        ),
    ]


def _no_terminal() -> list[Case]:
    """-K where standard input is no terminal (the catalogue runs with an empty one)."""
    return [
        case(
            "become-pass-prompt-without-terminal",
            "bootstrap --phase host -i {dir}/hosts.yml -K",
            2,
            "--ask-become-pass",
            {"hosts.yml": HOSTS},
        ),
    ]


def cases() -> list[Case]:
    return [*_outputs_over_inputs(), *_not_pem(), *_no_terminal()]
