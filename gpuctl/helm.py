"""The user's own `helm` (3.x or 4.x), driven as a subprocess: locate it, check its version,
`upgrade --install` a release with a values file, read a deployed release back, render a chart.

Generic on purpose: the GPU Operator and the DRA driver stacks both install a chart through it.
Helm's own error text is surfaced verbatim (exit 1); a missing or unsupported helm is exit 2.
Standard library only, so gpuctl.core may use it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuctl.errors import ConfigError, ExitCode, GpuctlError
from gpuctl.urls import redact_url

SUPPORTED_MAJORS = (3, 4)
INSTALL_HINT = "install Helm 3 or 4 (https://helm.sh/docs/intro/install/) or pass --helm PATH"
# helm prints e.g. "v3.16.2+g13654a5" (3.x) or "v4.2.3+g43e8b7f" (4.x) for `helm version --short`.
_VERSION_RE = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
# A release stuck mid-operation (an interrupted helm) refuses every later upgrade.
PENDING_STATES = ("pending-install", "pending-upgrade", "pending-rollback")
COMMAND_TIMEOUT_S = 600.0


class HelmError(GpuctlError):
    """helm ran and failed: its own message, the command that failed (exit 1)."""

    exit_code = ExitCode.CHECK_FAILED


@dataclass(frozen=True)
class Chart:
    """What to install: a repo reference (`nvidia/gpu-operator`, with `repo_url`), an `oci://`
    reference, a local chart directory or a packaged chart (`helm package`'s .tgz); `version`
    pins a repo or OCI chart (helm ignores it for a local one)."""

    reference: str
    version: str = ""
    repo_url: str = ""  # --repo, for a `repo/name` reference the user has not `helm repo add`ed

    @property
    def is_local(self) -> bool:
        return self.is_packaged or Path(self.reference).is_dir()

    @property
    def is_packaged(self) -> bool:
        return Path(self.reference).is_file()

    def args(self) -> list[str]:
        """The chart arguments of install/upgrade/template."""
        if self.is_local:
            return [self.reference]
        args = [self.reference]
        if self.repo_url and not self.reference.startswith("oci://"):
            # `--repo URL` takes the bare chart name, not `repo/name`.
            args = [self.reference.rsplit("/", 1)[-1], "--repo", self.repo_url]
        return args + (["--version", self.version] if self.version else [])


@dataclass(frozen=True)
class Release:
    """A deployed release as `helm list -o json` reports it."""

    name: str
    namespace: str
    status: str  # deployed, failed, pending-install, ...
    chart: str  # name-version, e.g. gpu-operator-v26.7.0
    app_version: str
    revision: int


def find_helm(explicit: Path | None = None, *, hint: str = INSTALL_HINT) -> Path:
    """`explicit` (--helm) when given and executable, else `helm` on PATH; ConfigError (exit 2)."""
    if explicit is not None:
        if explicit.is_file() and os.access(explicit, os.X_OK):
            return explicit
        raise ConfigError(f"--helm {explicit}: not an executable file", hint=hint)
    found = shutil.which("helm")
    if found is None:
        raise ConfigError("helm not found on PATH", hint=hint)
    return Path(found)


def parse_version(text: str) -> tuple[int, int, int] | None:
    match = _VERSION_RE.search(text)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def supported_version(text: str, binary: str = "helm") -> str:
    """`v3.16.2` / `v4.2.3` out of `helm version --short`; ConfigError for any other major."""
    parsed = parse_version(text)
    if parsed is None or parsed[0] not in SUPPORTED_MAJORS:
        raise ConfigError(
            f"helm {binary}: version {text.strip() or '?'} is not supported (Helm 3.x or 4.x)",
            hint=INSTALL_HINT,
        )
    return "v{}.{}.{}".format(*parsed)


@dataclass(frozen=True)
class Helm:
    """One helm binary, pointed at the cluster gpuctl talks to (kubeconfig/context as given)."""

    binary: Path
    kubeconfig: Path | None = None
    context: str | None = None
    timeout_s: float = COMMAND_TIMEOUT_S

    def base(self) -> list[str]:
        args = [str(self.binary)]
        if self.kubeconfig is not None:
            args += ["--kubeconfig", str(self.kubeconfig)]
        if self.context:
            args += ["--kube-context", self.context]
        return args

    def run(self, args: Sequence[str], stdin: str | None = None) -> str:
        """Run `helm ARGS` (values on stdin for `--values -`); its stdout, or HelmError with its
        own message."""
        command = [*self.base(), *args]
        try:
            done = subprocess.run(
                command, input=stdin, capture_output=True, text=True, timeout=self.timeout_s, check=False
            )
        except subprocess.TimeoutExpired as error:
            raise HelmError(
                f"`{display(command)}` ran past {self.timeout_s:.0f} s",
                hint="check the cluster's API server, then rerun: helm resumes from where it stopped",
            ) from error
        except OSError as error:
            raise ConfigError(
                f"helm {self.binary}: cannot run: {error.strerror or error}", hint=INSTALL_HINT
            ) from error
        if done.returncode != 0:
            message = _last_error(done.stderr) or f"exit status {done.returncode}"
            raise HelmError(
                f"helm failed: {redact_url(message)}", hint=f"the command was: {display(command)}"
            )
        return done.stdout

    def version(self) -> str:
        """helm's version (`v4.2.3`); ConfigError when it is not Helm 3 or 4."""
        return supported_version(self.run(["version", "--short"]), str(self.binary))

    def release(self, name: str, namespace: str) -> Release | None:
        """The release `name` in `namespace` (any state), or None when there is none."""
        # The state flags, not --all: Helm 4 dropped --all, both majors take these.
        states = ["--deployed", "--failed", "--pending"]
        listed = self.run(
            ["list", "-n", namespace, *states, "--filter", f"^{re.escape(name)}$", "-o", "json"]
        )
        for item in json.loads(listed or "[]"):
            if item.get("name") == name:
                return Release(
                    name,
                    str(item.get("namespace") or namespace),
                    str(item.get("status") or ""),
                    str(item.get("chart") or ""),
                    str(item.get("app_version") or ""),
                    int(item.get("revision") or 0),
                )
        return None

    def values(self, name: str, namespace: str) -> dict[str, Any]:
        """The user-supplied values of a deployed release (`helm get values -o json`)."""
        loaded = json.loads(self.run(["get", "values", name, "-n", namespace, "-o", "json"]) or "null")
        return loaded if isinstance(loaded, dict) else {}

    def upgrade_install_command(self, name: str, namespace: str, chart: Chart) -> list[str]:
        """The whole `helm upgrade --install` command line, the values read from stdin."""
        return [*self.base(), *upgrade_install_args(name, namespace, chart)]

    def upgrade_install(self, name: str, namespace: str, chart: Chart, values: str) -> str:
        return self.run(upgrade_install_args(name, namespace, chart), stdin=values)

    def uninstall(self, name: str, namespace: str) -> str:
        return self.run(["uninstall", name, "-n", namespace])

    def rollback(self, name: str, namespace: str) -> str:
        return self.run(["rollback", name, "-n", namespace])

    def template(self, name: str, namespace: str, chart: Chart, values: str) -> str:
        """The manifests the chart renders with these values (no cluster needed)."""
        return self.run(
            ["template", name, *chart.args(), "--namespace", namespace, "--values", "-"], stdin=values
        )


def upgrade_install_args(name: str, namespace: str, chart: Chart, values_file: str = "-") -> list[str]:
    """`upgrade --install` with exactly these values (--reset-values: nothing kept from an earlier
    revision), the namespace created; no --wait, the caller waits and diagnoses itself."""
    return [
        "upgrade", "--install", name, *chart.args(),
        "--namespace", namespace, "--create-namespace", "--values", values_file, "--reset-values",
    ]  # fmt: skip


def display(command: Sequence[str]) -> str:
    """`command` as a shell line to show: a chart or repo URL's password redacted."""
    return redact_url(shlex.join(command))


def _last_error(stderr: str) -> str:
    """helm's own message: its `Error: ...` line (4.x may log it as level=ERROR), else the last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("Error:"):
            return line.removeprefix("Error:").strip()
    return lines[-1] if lines else ""
