"""Certificates and keys of a kubeconfig that are no PEM, refused as kubectl refuses them (exit 2
naming the file and field) rather than handed to the client, whose TLS layer then fails every
request with "PEM lib" and gpuctl would blame the network ("is the API server up?").

kubectl (client-go) base64-decodes the `*-data` fields, then looks for PEM blocks: a CA bundle
needs a CERTIFICATE block ("unable to load root certificates: unable to parse bytes as PEM
block"), a client certificate a CERTIFICATE and its key a block whose type is PRIVATE KEY or ends
in " PRIVATE KEY" (crypto/tls: "failed to find any PEM data", "found a certificate rather than a
key"). The same holds for the files the path fields name."""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import Any

from gpuctl.errors import ConfigError
from gpuctl.input_files import read_input_file

# (data field, file field, the block it needs) of clusters[].cluster and users[].user
CLUSTER_PEM = (("certificate-authority-data", "certificate-authority", "CERTIFICATE"),)
USER_PEM = (
    ("client-certificate-data", "client-certificate", "CERTIFICATE"),
    ("client-key-data", "client-key", "PRIVATE KEY"),
)
_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----", re.DOTALL)
_HINT = (
    "put the PEM file's base64 in {data} (`base64 -w0 FILE`) or its path in {file}; "
    "check it with `kubectl config view --minify --raw`"
)


def check_pem(path: Path, owner: str, body: dict[str, Any], fields: tuple[tuple[str, str, str], ...]) -> None:
    """ConfigError (exit 2) naming `path`, `owner` and the field whose certificate or key is no PEM."""
    for data_field, file_field, wanted in fields:
        hint = _HINT.format(data=data_field, file=file_field)
        data = body.get(data_field)
        if isinstance(data, str) and data:
            try:
                decoded = base64.b64decode(re.sub(r"\s+", "", data), validate=True)
            except (binascii.Error, ValueError) as error:
                raise ConfigError(
                    f"{path}: {owner}: {data_field} is not base64 ({error})", hint=hint
                ) from error
            _check_blocks(decoded, f"{path}: {owner}: {data_field}", wanted, hint)
        named = body.get(file_field)
        if isinstance(named, str) and named and not data:
            try:
                content = read_input_file(Path(named), file_field)
            except OSError:
                continue  # kubeconfig_checks named a missing file; an unreadable one is the client's
            _check_blocks(content, f"{path}: {owner}: {file_field} {named}", wanted, hint)


def _check_blocks(content: bytes, where: str, wanted: str, hint: str) -> None:
    found = [(kind.decode(), payload) for kind, payload in _BLOCK.findall(content)]
    if not found:
        raise ConfigError(f"{where}: holds no PEM block (not a {wanted} in PEM form)", hint=hint)
    fitting = [payload for kind, payload in found if kind == wanted or kind.endswith(" " + wanted)]
    if not fitting:
        kinds = ", ".join(dict.fromkeys(kind for kind, _ in found))
        raise ConfigError(f"{where}: holds a {kinds} block, not a {wanted}", hint=hint)
    for payload in fitting:
        # An encrypted legacy key carries "Proc-Type: ..." header lines before its base64.
        text = b"".join(line for line in payload.splitlines() if b":" not in line)
        try:
            base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as error:
            raise ConfigError(f"{where}: its PEM {wanted} block is damaged ({error})", hint=hint) from error
