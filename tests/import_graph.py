"""gpuctl's import graph, read from the source with `ast`: every import counts, at module level,
inside functions and under TYPE_CHECKING (a function-level import is the usual way a cycle hides)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "gpuctl"


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str  # a gpuctl module, or a third-party top-level package
    line: int


def module_name(package: Path, source: Path) -> str:
    parts = list(source.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


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


def cycles(package: Path) -> list[list[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for found in imports(package):
        graph.setdefault(found.importer, set())
        if found.imported.startswith(f"{package.name}."):
            graph[found.importer].add(found.imported)
    return graph_cycles(graph)


def graph_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """A graph's strongly connected components of more than one node (Tarjan), each sorted; apart
    from cycles() so a check can run it on a coarser graph (sub-packages) or a synthetic one."""
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
