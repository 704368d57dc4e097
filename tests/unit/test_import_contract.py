"""The package's architecture, as imports: cli → report → core → the boundaries (kube, hosts, helm,
diagnose) → leaves, the sim beside core; each third-party client behind its one boundary; no import
cycle anywhere. Every import counts: module level, inside functions and under TYPE_CHECKING, because
a function-level import is the usual way a cycle hides.

A rule here says which way a dependency may point, not how long a module may be: split modules by
cohesion, never to meet a count."""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "gpuctl"

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
}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str  # a gpuctl module, or a third-party top-level package
    line: int


def module_name(package: Path, source: Path) -> str:
    parts = list(source.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "leaf"
    if parts[1] == "__main__":
        return "cli"
    return parts[1] if parts[1] in ALLOWED else "leaf"


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
        base = ".".join([*anchor, base] if base else anchor)
    for alias in node.names:
        yield f"{base}.{alias.name}"


def imports(package: Path) -> list[Import]:
    """Every import of every module of the package, resolved to a module of it or a top-level
    third-party package name."""
    sources = {module_name(package, source): source for source in package.rglob("*.py")}
    found: list[Import] = []
    for module, source in sources.items():
        is_package = source.name == "__init__.py"
        for node in ast.walk(ast.parse(source.read_text(), filename=str(source))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _targets(node, module, is_package):
                if target.split(".")[0] != package.name:
                    found.append(Import(module, target.split(".")[0], node.lineno))
                    continue
                imported = target
                while imported not in sources and "." in imported:
                    imported = imported.rsplit(".", 1)[0]  # `from pkg.mod import name` → pkg.mod
                if imported != module:
                    found.append(Import(module, imported, node.lineno))
    return found


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


def cycles(package: Path) -> list[list[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for found in imports(package):
        graph.setdefault(found.importer, set())
        if found.imported.startswith(f"{package.name}."):
            graph[found.importer].add(found.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph.get(module, ())):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = [stack.pop()]
            while component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return components


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
