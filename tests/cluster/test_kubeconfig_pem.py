"""Kubeconfig certificates and keys: real PEM ones (a CA bundle, a client certificate and its key
in each form OpenSSL writes) are accepted, as data and as files; one that is no PEM is refused
with exit 2 naming the file and field, where the client's TLS layer used to fail every request
and gpuctl said "cannot reach the cluster" (exit 3). More refusals: tests/bad_inputs_overwrite.py."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from gpuctl.sim.server.tls import self_signed_pem

FORMATS = {
    "pkcs8": serialization.PrivateFormat.PKCS8,  # -----BEGIN PRIVATE KEY-----
    "traditional": serialization.PrivateFormat.TraditionalOpenSSL,  # BEGIN EC/RSA PRIVATE KEY
}


def _client_pem(key_kind: str) -> tuple[bytes, bytes]:
    """A self-signed client certificate and its key, `key_kind` as "ec-pkcs8" or "rsa-traditional"."""
    kind, form = key_kind.split("-")
    key = ec.generate_private_key(ec.SECP256R1()) if kind == "ec" else rsa.generate_private_key(65537, 2048)
    return (
        self_signed_pem(key, "gpuctl-client"),
        key.private_bytes(serialization.Encoding.PEM, FORMATS[form], serialization.NoEncryption()),
    )


def _with_client_pem(cluster: Any, tmp_path: Path, client: tuple[bytes, bytes], *, as_files: bool) -> Path:
    """The sim's kubeconfig (its CA, its token) plus a client certificate and key, which a server
    that asks for none ignores: a real, complete TLS client configuration."""
    document = yaml.safe_load(cluster.kubeconfig.read_text())
    authority = cluster.server.certificate.certificate_pem
    certificate, key = client
    user = document["users"][0]["user"]
    entry = document["clusters"][0]["cluster"]
    if as_files:
        (tmp_path / "ca.crt").write_bytes(authority)
        del entry["certificate-authority-data"]
        (tmp_path / "client.crt").write_bytes(certificate)
        (tmp_path / "client.key").write_bytes(key)
        entry["certificate-authority"] = "ca.crt"
        user.update({"client-certificate": "client.crt", "client-key": "client.key"})
    else:
        user["client-certificate-data"] = base64.b64encode(certificate).decode()
        user["client-key-data"] = base64.b64encode(key).decode()
    path = tmp_path / "client.kubeconfig"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.mark.parametrize("as_files", [False, True], ids=["data", "files"])
@pytest.mark.parametrize("key_kind", ["ec-pkcs8", "ec-traditional", "rsa-traditional"])
def test_real_certificates_and_keys_are_accepted(
    sim: Any, cli: Any, tmp_path: Path, key_kind: str, as_files: bool
) -> None:
    kubeconfig = _with_client_pem(sim({"nodes": []}), tmp_path, _client_pem(key_kind), as_files=as_files)
    result = cli("status", "--kubeconfig", kubeconfig)
    assert result.exit_code == 0, result.output


def test_a_key_that_is_no_pem_is_a_config_error_not_an_unreachable_cluster(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    certificate, _ = _client_pem("ec-pkcs8")
    kubeconfig = _with_client_pem(sim({"nodes": []}), tmp_path, (certificate, b"not a key\n"), as_files=False)
    result = cli("status", "--kubeconfig", kubeconfig)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {kubeconfig}: user 'gpuctl-sim': client-key-data: holds no PEM")
    assert len(result.stderr.splitlines()) == 2
