"""The sim's sub-packages import downwards only (server → api → runtime, all → scenario), as
gpuctl/sim/__init__.py says: an import cycle stays inside one sub-package."""

import ast
from pathlib import Path

SIM = Path(__file__).resolve().parents[2] / "gpuctl" / "sim"
# What each part of the sim may import from the sim; scenario.py is the input of every layer.
ALLOWED = {
    "server": {"server", "api", "runtime", "scenario"},
    "api": {"api", "runtime", "scenario"},
    "runtime": {"runtime", "scenario"},
    "scenario": {"scenario"},
}


def _sim_parts_imported(source: Path) -> set[str]:
    """The sim's parts a module imports, anywhere in it (also inside functions and TYPE_CHECKING)."""
    parts: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name.startswith("gpuctl.sim."):
                parts.add(name.split(".")[2])
    return parts


def test_every_sim_module_belongs_to_a_layer() -> None:
    for source in SIM.rglob("*.py"):
        part = source.relative_to(SIM).parts[0].removesuffix(".py")
        assert part in {*ALLOWED, "__init__"}, f"{source}: not in server, api, runtime or scenario"


def test_sim_layers_import_downwards_only() -> None:
    upward = []
    for part, allowed in ALLOWED.items():
        sources = [SIM / "scenario.py"] if part == "scenario" else sorted((SIM / part).rglob("*.py"))
        for source in sources:
            for imported in _sim_parts_imported(source) - allowed:
                upward.append(f"{source.relative_to(SIM)} imports gpuctl.sim.{imported}")
    assert upward == []


def test_the_sim_package_init_imports_nothing() -> None:
    """Importing one sim module runs its packages' inits: they stay docstrings, so none drags in the rest."""
    for init in SIM.rglob("__init__.py"):
        tree = ast.parse(init.read_text())
        assert not [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)], init
