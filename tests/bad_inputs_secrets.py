"""Bad inputs of issue 40: secrets in Pushgateway URLs, TLS flags and kept artefacts.

A URL's password is never printed: where a case's URL holds one, the error line must name the URL
as redact_url shows it (`alice:xxxxx@`), which it can only do with the password gone. What the
catalogue cannot express (a password sent as basic auth, a gateway's answer, an https gateway's
certificate) is tested in tests/cluster/test_pushgateway_secrets.py."""

from __future__ import annotations

from tests.bad_inputs_cases import Case, case, kubeconfig

VERIFY = "verify --kubeconfig {kc}"
HTTPS = "--pushgateway https://gw.invalid:9091"
NOT_PEM = "just text, no certificate\n"
HOSTS = "all:\n  children:\n    gpu_nodes:\n      hosts:\n        n1: {ansible_host: 127.0.0.1}\n"
MIRROR = "gpuctl_cuda_repo_url: ftp://alice:S3cret@mirror.invalid/cuda/\n"
BAD_BASE64 = "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n"


# A real CA certificate (PEM) the sim made once, fixed here so that docs/bad-inputs.md, which quotes
# the start of the file, is the same on every run (a CA file is only loaded: its dates do not count).
CERTIFICATE = """\
-----BEGIN CERTIFICATE-----
MIIBbTCCAROgAwIBAgIUMf+kkQoaz5RiOjposH7xRLJI4QIwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKZ3B1Y3RsLXNpbTAeFw0yNjEyMDYxOTIzMjhaFw0yNzAxMDUx
OTI4MjhaMBUxEzARBgNVBAMMCmdwdWN0bC1zaW0wWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAATwmOt042O6RDOpHT5kzXqG6Q1hSLNh1Wq5JIIVnrsFo7Ao6ONrEdvt
TXoAVLIslbvAq2+D+swHgCs85YW+82Sro0EwPzAsBgNVHREEJTAjhwR/AAABhxAA
AAAAAAAAAAAAAAAAAAABgglsb2NhbGhvc3QwDwYDVR0TAQH/BAUwAwEB/zAKBggq
hkjOPQQDAgNIADBFAiEAowzzl5EL9Wii+P/GOwMH3ifWW/0XHFsttjM1NzF/37gC
ICI+lX9CMZtYLN8rW7MNDp0vSwk3/K75hBTcTUxKdzvb
-----END CERTIFICATE-----
"""


def _passwords() -> list[Case]:
    """URLs holding a password, refused: the error names them with the password redacted."""
    return [
        case(
            "secret-pushgateway-url-with-password",
            f"{VERIFY} --pushgateway ftp://alice:S3cret@gw.invalid:9091",
            2,
            "--pushgateway 'ftp://alice:xxxxx@gw.invalid:9091'",
        ),
        case(
            "secret-pushgateway-token-in-url",
            f"{VERIFY} --pushgateway 'https://tok3n@gw.invalid:9091/?x=1'",
            2,
            "--pushgateway 'https://xxxxx@gw.invalid:9091/?x=1'",
        ),
        case(
            "secret-kubeconfig-server-with-password",
            "status --kubeconfig {dir}/kc",
            2,
            "server 'ftp://alice:xxxxx@api.invalid:6443'",
            {"kc": kubeconfig(server="ftp://alice:S3cret@api.invalid:6443")},
        ),
        case(
            "secret-inventory-mirror-url-with-password",
            "preflight --inventory {dir}/hosts.yml",
            2,
            "'ftp://alice:xxxxx@mirror.invalid/cuda/'",
            {"hosts.yml": HOSTS, "group_vars/all.yml": MIRROR},
        ),
        case(
            "secret-pushgateway-ca-with-http-gateway",
            f"{VERIFY} --pushgateway http://alice:S3cret@gw.invalid:9091 --pushgateway-ca {{dir}}/ca.crt",
            2,
            "--pushgateway http://alice:xxxxx@gw.invalid:9091 is not https",
            {"ca.crt": NOT_PEM},
        ),
    ]


def _certificate_authorities() -> list[Case]:
    """--pushgateway-ca files that cannot be a CA: named with the flag, before the cluster is read."""
    ca = f"{VERIFY} {HTTPS} --pushgateway-ca"
    return [
        case(
            "secret-pushgateway-ca-alone", f"{VERIFY} --pushgateway-ca {{dir}}/ca.crt", 2, "--pushgateway-ca"
        ),
        case("secret-pushgateway-ca-missing", f"{ca} {{dir}}/ca.crt", 2, "--pushgateway-ca {dir}/ca.crt"),
        case(
            "secret-pushgateway-ca-not-pem",
            f"{ca} {{dir}}/ca.crt",
            2,
            "--pushgateway-ca {dir}/ca.crt",
            {"ca.crt": NOT_PEM},
        ),
        case(
            "secret-pushgateway-ca-bad-base64",
            f"{ca} {{dir}}/ca.crt",
            2,
            "--pushgateway-ca {dir}/ca.crt",
            {"ca.crt": BAD_BASE64},
        ),
        case(
            "secret-pushgateway-ca-empty",
            f"{ca} {{dir}}/ca.crt",
            2,
            "--pushgateway-ca {dir}/ca.crt",
            {"ca.crt": ""},
        ),
        case("secret-pushgateway-ca-folder", f"{ca} {{dir}}", 2, "{dir}"),
        case("secret-pushgateway-ca-device", f"{ca} /dev/zero", 2, "/dev/zero"),
        case(
            "secret-report-overwrites-pushgateway-ca",
            f"{ca} {{dir}}/ca.crt --report {{dir}}/ca.crt",
            2,
            "{dir}/ca.crt",
            {"ca.crt": CERTIFICATE},
        ),
    ]


def cases() -> list[Case]:
    return [*_passwords(), *_certificate_authorities()]
