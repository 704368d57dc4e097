"""The sim's serving certificate: a fresh self-signed one per sim, for its loopback names.

kubectl, helm and every client-go program send a kubeconfig's credentials only over TLS (client-go
leaves them out of plain-http requests), so a sim that checks a bearer token must serve https. The
certificate is its own CA; the kubeconfig the sim writes carries it as certificate-authority-data,
so clients verify the server as they would a real cluster's. Its key lives in the sim's memory
only (ssl reads it from a file that exists for the length of the load, in a private folder).
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.types import CertificateIssuerPrivateKeyTypes

VALIDITY = datetime.timedelta(days=30)  # longer than any sim runs; not a credential that is reused


@dataclass(frozen=True)
class ServingCertificate:
    certificate_pem: bytes
    key_pem: bytes


def new_serving_certificate() -> ServingCertificate:
    """A P-256 key and a self-signed CA certificate for 127.0.0.1, ::1 and localhost."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    return ServingCertificate(
        certificate_pem=self_signed_pem(key, "gpuctl-sim"),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )


def self_signed_pem(key: CertificateIssuerPrivateKeyTypes, common_name: str) -> bytes:
    """A self-signed CA certificate of `key` for 127.0.0.1, ::1 and localhost, in PEM."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import NameOID

    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    names = [
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("::1")),
        x509.DNSName("localhost"),
    ]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM)


def server_context(serving: ServingCertificate) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    with tempfile.TemporaryDirectory(prefix="gpuctl-sim-tls-") as folder:  # created 0700
        certificate, key = Path(folder) / "tls.crt", Path(folder) / "tls.key"
        certificate.write_bytes(serving.certificate_pem)
        key.write_bytes(serving.key_pem)
        context.load_cert_chain(certificate, key)
    return context


def client_context(certificate_pem: bytes) -> ssl.SSLContext:
    """What a Python client (urllib, http.client) needs to trust this sim and no one else."""
    return ssl.create_default_context(cadata=certificate_pem.decode("ascii"))
