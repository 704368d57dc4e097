"""How a benchmark's raw HTTP client reaches a detached sim: the kubeconfig `sim up` wrote holds the
sim's bearer token and the certificate it serves TLS with."""

from __future__ import annotations

import base64
import ssl
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpuctl.sim.server.tls import client_context


@dataclass(frozen=True)
class SimAccess:
    url: str
    token: str
    tls: ssl.SSLContext

    @classmethod
    def from_kubeconfig(cls, kubeconfig: Path) -> SimAccess:
        config = yaml.safe_load(kubeconfig.read_text(encoding="utf-8"))
        cluster = config["clusters"][0]["cluster"]
        authority = base64.b64decode(cluster["certificate-authority-data"])
        return cls(cluster["server"], config["users"][0]["user"]["token"], client_context(authority))

    def open(self, path: str, timeout: float = 30) -> Any:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {self.token}"})
        return urllib.request.urlopen(request, timeout=timeout, context=self.tls)
