"""The sim's runtime has Kubernetes' shape: the store at the bottom, controllers over it, the
cluster wiring them; no import cycle among its modules, nor through the API or the server.

Every import counts: at module level, inside functions and under `if TYPE_CHECKING:` (a type-only
import still ties a module to the other's shape; what controllers share is a leaf, state.py).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "gpuctl" / "sim"
RUNTIME = "gpuctl.sim.runtime"


def module_name(source: Path) -> str:
    name = ".".join(source.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def sim_imports(source: Path, modules: set[str]) -> set[str]:
    """The sim modules `source` imports anywhere in it (`from package import module` included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in modules)
    return found


def import_graph() -> dict[str, set[str]]:
    sources = {module_name(source): source for source in SIM.rglob("*.py")}
    modules = set(sources)
    return {name: sim_imports(source, modules) - {name} for name, source in sources.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for imported in sorted(graph.get(name, ())):
            if imported not in index:
                visit(imported)
                low[name] = min(low[name], low[imported])
            elif imported in on_stack:
                low[name] = min(low[name], index[imported])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == name:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_function_level_and_type_checking_imports(tmp_path: Path) -> None:
    source = tmp_path / "planted.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from gpuctl.sim.runtime.cluster import Cluster\n"
        "def f():\n    from gpuctl.sim.runtime import kubelet\n"
    )
    modules = {f"{RUNTIME}.cluster", f"{RUNTIME}.kubelet", f"{RUNTIME}.store"}
    assert sim_imports(source, modules) == {f"{RUNTIME}.cluster", f"{RUNTIME}.kubelet"}


def test_no_import_cycle_touches_the_sim_runtime() -> None:
    touching = [cycle for cycle in cycles(import_graph()) if any(m.startswith(RUNTIME) for m in cycle)]
    assert touching == []


def test_only_the_server_and_the_api_import_the_wiring() -> None:
    """Controllers meet through the store and state.py; cluster.py, which wires them, is the top."""
    graph = import_graph()
    importers = sorted(name for name, imported in graph.items() if f"{RUNTIME}.cluster" in imported)
    assert [name for name in importers if name.startswith(RUNTIME)] == []
