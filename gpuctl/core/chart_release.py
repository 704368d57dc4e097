"""One Helm release brought to a wanted chart version and values, idempotently: for every stack
installed from a chart (gpuctl.core.stacks.chart.ChartStack).

The upgrade is skipped when the release is `deployed` with the same chart (`helm list`'s
name-version) and the same user-supplied values (`helm get values -o json`), so a second run sends
nothing. A release an interrupted helm left pending is put back first: uninstalled when it never
deployed, rolled back otherwise; helm then installs or upgrades it as usual.
"""

from __future__ import annotations

import difflib
import tarfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from gpuctl.diagnose import hit_diagnosis, root_first
from gpuctl.diagnose.catalogues.helm import CATALOGUE as HELM_ERRORS
from gpuctl.errors import ConfigError
from gpuctl.helm import PENDING_STATES, Chart, Helm, HelmError, Release, display


@dataclass(frozen=True)
class HelmOutcome:
    """What gpuctl did with helm: `installed`, `upgraded`, `unchanged`, or with --check
    `would-install`, `would-upgrade`, `unchanged`."""

    command: str  # the exact helm command (values on its stdin)
    action: str
    helm_version: str
    chart: str  # name-version wanted
    deployed_chart: str  # name-version deployed before ("" when no release)
    release_status: str  # of the release before ("" when none)
    values: dict[str, Any] = field(default_factory=dict)
    repaired: str = ""  # "uninstalled" or "rolled back" when a pending release was put back first
    diff: str = ""  # deployed → wanted chart and values, unified (empty when unchanged)

    @property
    def writes(self) -> int:
        return int(self.action in ("installed", "upgraded")) + int(bool(self.repaired))


def _unchanged(
    release: Release | None, chart: str, deployed_values: dict[str, Any], values: dict[str, Any]
) -> bool:
    return (
        release is not None
        and release.status == "deployed"
        and release.chart == chart
        and deployed_values == values
    )


def values_diff(old_chart: str, old: dict[str, Any], new_chart: str, new: dict[str, Any]) -> str:
    """What the upgrade changes, as a unified diff of the chart and the values (YAML)."""
    before = f"# chart: {old_chart or '(no release)'}\n" + (
        yaml.safe_dump(old, sort_keys=True) if old else ""
    )
    after = f"# chart: {new_chart}\n" + yaml.safe_dump(new, sort_keys=True)
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), "deployed", "gpuctl", n=2
    )
    return "".join(lines)


def install_release(
    helm: Helm, name: str, namespace: str, chart: Chart, values_yaml: str, *, check: bool
) -> HelmOutcome:
    """`helm upgrade --install` release `name` of `chart` in `namespace` with exactly these values,
    unless the release already runs that chart version with them; with `check`, only helm's reads.
    A failing helm's error carries the helm catalogue's cause and fix of its message."""
    try:
        return _install_release(helm, name, namespace, chart, values_yaml, check=check)
    except HelmError as error:
        raise explained(error) from error


def explained(error: HelmError) -> HelmError:
    """`error` with what the helm catalogue says of Helm's message (the entry nearest the root)
    after its hint, the failed command staying first; `error` itself where no entry matches."""
    hits = HELM_ERRORS.find(error.message)
    if not hits:
        return error
    found = root_first([hit_diagnosis(hit, error.message, {}) for hit in hits])[0]
    return HelmError(error.message, hint=f"{error.hint}; {found.cause}; fix: {found.hint}")


def _install_release(
    helm: Helm, name: str, namespace: str, chart: Chart, values_yaml: str, *, check: bool
) -> HelmOutcome:
    version = helm.version()
    wanted = chart_identity(chart)
    values: dict[str, Any] = yaml.safe_load(values_yaml) or {}
    release = helm.release(name, namespace)
    deployed = helm.values(name, namespace) if release is not None else {}
    command = display(helm.upgrade_install_command(name, namespace, chart))
    outcome = HelmOutcome(
        command, "unchanged", version, wanted,
        release.chart if release else "", release.status if release else "", values,
    )  # fmt: skip
    if _unchanged(release, wanted, deployed, values):
        return outcome
    outcome = replace(outcome, diff=values_diff(release.chart if release else "", deployed, wanted, values))
    if check:
        return replace(outcome, action="would-upgrade" if release else "would-install")
    repaired = ""
    if release is not None and release.status in PENDING_STATES:
        if release.status == "pending-install" or release.revision <= 1:
            helm.uninstall(name, namespace)
            repaired, release = "uninstalled", None
        else:
            helm.rollback(name, namespace)
            repaired = "rolled back"
    helm.upgrade_install(name, namespace, chart, values_yaml)
    return replace(outcome, action="upgraded" if release else "installed", repaired=repaired)


def chart_identity(chart: Chart) -> str:
    """`name-version` as `helm list` reports a release's chart; for a local chart (a folder or a
    packaged .tgz) the name and version of its Chart.yaml, which helm records in the release. A
    chart version is immutable (helm's own rule for repositories), so the same name-version with
    the same values is the same release: a rerun with the same package upgrades nothing."""
    if chart.is_local:
        meta = _chart_metadata(Path(chart.reference))
        return f"{meta.get('name', '')}-{meta.get('version', '')}"
    name = chart.reference.rstrip("/").rsplit("/", 1)[-1]
    return f"{name}-{chart.version}" if chart.version else name


def _chart_metadata(path: Path) -> dict[str, Any]:
    """The Chart.yaml of a chart folder or of a packaged chart (`NAME/Chart.yaml` in the .tgz)."""
    try:
        text = _packaged_chart_yaml(path) if path.is_file() else (path / "Chart.yaml").read_bytes()
        meta = yaml.safe_load(text) if text is not None else None
    except (OSError, tarfile.TarError, yaml.YAMLError, EOFError) as error:
        raise ConfigError(
            f"--chart {path}: cannot read its Chart.yaml: {getattr(error, 'strerror', None) or error}",
            hint="pass a chart folder or a chart packaged with `helm package`",
        ) from error
    if not isinstance(meta, dict) or not meta.get("name") or not meta.get("version"):
        raise ConfigError(
            f"--chart {path}: no Helm chart there (no Chart.yaml with a name and a version)",
            hint="pass a chart folder or a chart packaged with `helm package`",
        )
    return meta


def _packaged_chart_yaml(path: Path) -> bytes | None:
    """The top folder's Chart.yaml of a packaged chart (not those of its bundled dependencies)."""
    with tarfile.open(path, "r:*") as archive:
        for member in archive:
            parts = member.name.strip("/").split("/")
            if member.isfile() and parts[1:] == ["Chart.yaml"]:  # NAME/Chart.yaml
                extracted = archive.extractfile(member)
                return extracted.read() if extracted is not None else None
    return None
