"""The package's architecture, as imports: cli → report → core → the boundaries (kube, hosts, helm,
diagnose) → leaves, the sim beside core; each third-party client behind its one boundary; no import
cycle anywhere. Every import counts: module level, inside functions and under TYPE_CHECKING, because
a function-level import is the usual way a cycle hides.

A rule here says which way a dependency may point, not how long a module may be: split modules by
cohesion, never to meet a count."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.import_graph import PACKAGE, cycles, imports

# Which layers a layer may import (its own included). A layer is the first package below gpuctl;
# modules directly under gpuctl (errors, defaults, shell, ...) are leaves that anything may import.
BOUNDARIES = ("kube", "hosts", "helm", "diagnose")
ALLOWED: dict[str, frozenset[str]] = {
    "cli": frozenset({"cli", "report", "core", "sim", *BOUNDARIES, "leaf"}),
    "report": frozenset({"report", "core", "diagnose", "leaf"}),
    "core": frozenset({"core", *BOUNDARIES, "leaf"}),
    "kube": frozenset({"kube", "leaf"}),
    "hosts": frozenset({"hosts", "leaf"}),
    "helm": frozenset({"helm", "leaf"}),
    "diagnose": frozenset({"diagnose", "leaf"}),
    # The simulated cluster is a program of its own beside core: it reuses the SSH boundary for its
    # host-backed nodes and the leaves (nvidia-smi's output format), and nothing but the CLI starts it.
    "sim": frozenset({"sim", "hosts", "leaf"}),
    "leaf": frozenset({"leaf"}),
}
# Third-party clients and who may import them: one boundary each.
CLIENTS: dict[str, tuple[str, ...]] = {
    # The sim's API takes its object schemas from the client's generated models (gpuctl.sim.api).
    "kubernetes": ("gpuctl.kube", "gpuctl.sim.api"),
    "ansible": ("gpuctl.hosts",),
    "ansible_runner": ("gpuctl.hosts",),
    "paramiko": ("gpuctl.hosts", "gpuctl.sim.server.host_links"),
    "typer": ("gpuctl.cli",),
    "click": ("gpuctl.cli",),
    "rich": ("gpuctl.cli", "gpuctl.report"),
    "jinja2": ("gpuctl.templating",),
    "prometheus_client": ("gpuctl.report.metrics",),  # verify's exporter: an output like the others
}


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "leaf"
    if parts[1] == "__main__":
        return "cli"
    return parts[1] if parts[1] in ALLOWED else "leaf"


def layer_violations(package: Path) -> list[str]:
    return [
        f"{found.importer}:{found.line} imports {found.imported} "
        f"({layer(found.importer)} → {layer(found.imported)})"
        for found in imports(package)
        if found.imported.startswith(f"{package.name}.") or found.imported == package.name
        if layer(found.imported) not in ALLOWED[layer(found.importer)]
    ]


def client_violations(package: Path) -> list[str]:
    return [
        f"{found.importer}:{found.line} imports {found.imported} (only {', '.join(owners)} may)"
        for found in imports(package)
        if (owners := CLIENTS.get(found.imported))
        if not any(found.importer == owner or found.importer.startswith(f"{owner}.") for owner in owners)
    ]


def test_layers_import_downwards_only() -> None:
    assert layer_violations(PACKAGE) == []


def test_each_client_library_stays_behind_its_boundary() -> None:
    assert client_violations(PACKAGE) == []


def test_no_import_cycles_function_level_included() -> None:
    assert cycles(PACKAGE) == []


def test_every_package_has_a_layer() -> None:
    """A new sub-package must be placed in the layering, not fall through as a leaf."""
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert packages <= set(ALLOWED), packages - set(ALLOWED)


def _planted_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "gpuctl"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_the_checks_catch_a_planted_upward_import(tmp_path: Path) -> None:
    copy = _planted_copy(tmp_path)
    errors = copy / "errors.py"
    errors.write_text(errors.read_text() + "\n\ndef _late() -> None:\n    from gpuctl.report import verify\n")
    kube = next((copy / "kube").glob("*.py"))
    kube.write_text(kube.read_text() + "\nimport gpuctl.core.status\nimport ansible_runner\n")

    violations = layer_violations(copy)
    assert any("gpuctl.errors:" in line and "(leaf → report)" in line for line in violations)
    assert any("imports gpuctl.core.status (kube → core)" in line for line in violations)
    assert any("imports ansible_runner (only gpuctl.hosts may)" in line for line in client_violations(copy))


def test_the_checks_catch_a_planted_function_level_cycle(tmp_path: Path) -> None:
    copy = _planted_copy(tmp_path)
    (copy / "leaf_a.py").write_text("def a() -> None:\n    from gpuctl import leaf_b\n")
    (copy / "leaf_b.py").write_text("from gpuctl.leaf_a import a\n")
    assert ["gpuctl.leaf_a", "gpuctl.leaf_b"] in cycles(copy)
