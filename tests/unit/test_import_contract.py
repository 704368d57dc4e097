"""The package's architecture, as imports: cli → report → core → the boundaries (kube, hosts, helm,
diagnose) → leaves, the sim beside core; each third-party client behind its one boundary; no import
cycle anywhere. Every import counts: module level, inside functions and under TYPE_CHECKING, because
a function-level import is the usual way a cycle hides.

A rule here says which way a dependency may point, not how long a module may be: split modules by
cohesion, never to meet a count."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.import_graph import PACKAGE, cycles, graph_cycles, imports

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


# The sub-packages of gpuctl/core (a module directly under core, render_options or status, counts
# as one) that import each other in a ring today. The moves of each stack into its own folder could
# not break these: the stacks build on verify's checks and pods, verify asks the stacks through the
# registry, and render_options names `Stack`. Listed whole, so a new ring, or a known one that grows,
# still fails.
KNOWN_SUBPACKAGE_CYCLES: list[list[str]] = [
    ["bootstrap", "migrate", "upgrade"],
    ["explain", "explain_subject"],
    ["node_condition", "proof"],
    ["render_options", "stacks", "verify"],
]


def subpackage_graph(package: Path) -> dict[str, set[str]]:
    """gpuctl/core's imports between its sub-packages, each module counted in the one it lies in."""

    def subpackage(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 2 and parts[1] == "core" else None

    graph: dict[str, set[str]] = {}
    for found in imports(package):
        importer, imported = subpackage(found.importer), subpackage(found.imported)
        if importer and imported and importer != imported:
            graph.setdefault(importer, set()).add(imported)
    return graph


def new_subpackage_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    return [cycle for cycle in graph_cycles(graph) if cycle not in KNOWN_SUBPACKAGE_CYCLES]


def test_no_new_import_cycle_between_core_subpackages() -> None:
    assert new_subpackage_cycles(subpackage_graph(PACKAGE)) == []


def test_the_subpackage_check_catches_a_planted_cycle(tmp_path: Path) -> None:
    graph = subpackage_graph(PACKAGE)
    # A synthetic edge closing a ring that is not listed: status imports stacks, so stacks → status.
    assert new_subpackage_cycles(graph | {"stacks": graph["stacks"] | {"status"}}) != []
    # The same through the source: a function-level import planted in a copy of the package.
    copy = _planted_copy(tmp_path)
    chart = copy / "core" / "stacks" / "chart.py"
    chart.write_text(chart.read_text() + "\n\ndef _late() -> None:\n    from gpuctl.core import status\n")
    assert any("status" in cycle for cycle in new_subpackage_cycles(subpackage_graph(copy)))


# Modules outside gpuctl/core/stacks/ that import a module of one stack's folder instead of going
# through the registry or the stack interface (base.py). Each is a proof module that verify, status
# or migrate reads for every node whatever its stack (the snapshot reads the DRA inventory, the
# Operator's view and the sharing plan for the whole cluster), so it is shared data rather than
# one stack's behaviour; listed so that a new such import fails.
KNOWN_STACK_FOLDER_IMPORTS: frozenset[tuple[str, str]] = frozenset(
    {
        ("gpuctl.core.status", "gpuctl.core.stacks.device_plugin.sharing"),
        ("gpuctl.core.verify.node_checks", "gpuctl.core.stacks.device_plugin.sharing"),
        ("gpuctl.core.verify.snapshot", "gpuctl.core.stacks.device_plugin.sharing"),
    }
)


def stack_folder_imports(package: Path) -> set[tuple[str, str]]:
    """(importer, imported) for each import of a stack folder's module from outside core/stacks."""
    stacks = package / "core" / "stacks"
    folders = {path.parent.name for path in stacks.glob("*/__init__.py")}
    inside = f"{package.name}.core.stacks"
    return {
        (found.importer, found.imported)
        for found in imports(package)
        if found.imported.split(".")[:3] == [package.name, "core", "stacks"]
        if len(found.imported.split(".")) > 3 and found.imported.split(".")[3] in folders
        if not (found.importer == inside or found.importer.startswith(f"{inside}."))
    }


def test_stack_folders_are_reached_through_the_registry() -> None:
    assert stack_folder_imports(PACKAGE) - KNOWN_STACK_FOLDER_IMPORTS == set()


def test_the_stack_folder_check_catches_a_planted_import(tmp_path: Path) -> None:
    copy = _planted_copy(tmp_path)
    status = copy / "core" / "status.py"
    planted = "\n\ndef _late() -> None:\n    from gpuctl.core.stacks.dra import stack\n"
    status.write_text(status.read_text() + planted)
    assert stack_folder_imports(copy) - KNOWN_STACK_FOLDER_IMPORTS == {
        ("gpuctl.core.status", "gpuctl.core.stacks.dra.stack")
    }


# A stack's name, as the code spells it: its `Stack` member, its folder, its chart or its word in
# prose. Outside its folder under core/stacks/ and the registry, core/, cli/ and report/ reach a
# stack through the interface (base.py) and its declarations, so nothing there names one.
STACK_NAME = re.compile(
    r"(?<!\w)(DRA|dra|Stack\.OPERATOR|Stack\.DEVICE_PLUGIN|device_plugin|gpu-operator|gpu_operator|operator)(?!\w)"
)
NAMING_FREE = ("core", "cli", "report")
NAMING_ALLOWED = ("core/stacks/",)  # the stacks' folders and the registry beside them
# The files that still name a stack, with the most lines that may do so and why: each number may
# only go down, and a file that names none any more must leave the list.
KNOWN_STACK_NAMES: dict[str, tuple[int, str]] = {
    "cli/bootstrap.py": (
        12,
        "bootstrap's help text names the stacks; the Operator's and DRA's settings built from its flags",
    ),
    "cli/demo.py": (1, "the simulated cluster's device_plugin setting"),
    "cli/render.py": (8, "render's --gpu-operator flag and help name the stacks"),
    "cli/stack_options.py": (6, "the Operator's and DRA's options (flags and help)"),
    "cli/taint.py": (1, "prose: the Operator's validator among the GPU DaemonSets"),
    "cli/verify.py": (1, "help: the per-GPU rules on DRA nodes"),
    "cli/version.py": (1, "prose: the pinned charts"),
    "core/components.py": (4, "the pinned versions table names each chart and the --stack that uses it"),
    "core/explain_subject/node.py": (3, "explain reads the Operator's operand pods for a node"),
    "core/explain_subject/pod.py": (2, "Kubernetes' DRA API (a pod's ResourceClaims), not the stack"),
    "core/explain_subject/subject.py": (
        5,
        "Kubernetes' DRA API: explain finds GPU nodes by their ResourceSlices too",
    ),
    "core/node_condition.py": (1, "prose: a public source, NVIDIA/gpu-operator's pull request"),
    "core/render.py": (2, "a hint naming --gpu-operator; prometheus-operator"),
    "core/render_options.py": (3, "render's options hold each chart stack's settings; prometheus-operator"),
    "core/status.py": (1, "reads the device plugin's sharing plan for every node"),
    "core/taint/apply.py": (3, "Kubernetes' DRA API: the GPU nodes are found by their ResourceSlices too"),
    "core/taint/audit.py": (5, "not a stack: a toleration's operator"),
    "core/verify/cluster_checks.py": (
        3,
        "the hint names the stacks that install a plugin; a toleration's operator",
    ),
    "core/verify/expectations.py": (2, "not a stack: a toleration's operator"),
    "core/verify/fabric_mpijob.py": (4, "not a stack: the MPI operator, and a node affinity's operator"),
    "core/verify/model.py": (
        13,
        "the result model: its OperatorView (JSON gpu_operator) and prose on claims; a toleration's operator",
    ),
    "core/verify/node_checks.py": (1, "reads the device plugin's sharing plan for every node"),
    "core/verify/snapshot.py": (1, "reads the device plugin's sharing plan for every node"),
    "report/bootstrap_migration.py": (1, "the migration's report line on the DRA driver's root"),
    "report/html_page.py": (7, "the HTML page's GPU Operator section (its JSON key gpu_operator)"),
    "report/status.py": (1, "the hint names the stacks to install when no GPU node is found"),
    "report/verify.py": (14, "verify's report of the Operator's view (its JSON gpu_operator and its lines)"),
}


def stack_name_lines(package: Path) -> dict[str, int]:
    """Per file of core/, cli/ and report/ outside core/stacks/: the lines that name a stack."""
    found: dict[str, int] = {}
    for part in NAMING_FREE:
        for source in sorted((package / part).rglob("*.py")):
            path = source.relative_to(package).as_posix()
            if path.startswith(NAMING_ALLOWED):
                continue
            lines = sum(
                1 for line in source.read_text(encoding="utf-8").splitlines() if STACK_NAME.search(line)
            )
            if lines:
                found[path] = lines
    return found


def stack_naming_problems(found: dict[str, int]) -> list[str]:
    problems = [
        f"{path}: {lines} lines name a stack (at most {KNOWN_STACK_NAMES.get(path, (0, ''))[0]})"
        for path, lines in found.items()
        if lines > KNOWN_STACK_NAMES.get(path, (0, ""))[0]
    ]
    problems += [
        f"{path}: names no stack now, drop it from KNOWN_STACK_NAMES"
        for path in KNOWN_STACK_NAMES
        if path not in found
    ]
    return problems


def test_no_stack_is_named_outside_its_folder() -> None:
    assert stack_naming_problems(stack_name_lines(PACKAGE)) == []


def test_the_stack_name_check_catches_a_planted_name(tmp_path: Path) -> None:
    copy = _planted_copy(tmp_path)
    status = copy / "report" / "tables.py"
    status.write_text(
        status.read_text() + "\n\ndef _late(stack: object) -> bool:\n    return stack is Stack.DRA\n"
    )
    found = stack_name_lines(copy)
    assert found["report/tables.py"] == KNOWN_STACK_NAMES.get("report/tables.py", (0, ""))[0] + 1
    assert stack_naming_problems(found) == [
        f"report/tables.py: {found['report/tables.py']} lines name a stack "
        f"(at most {found['report/tables.py'] - 1})"
    ]
    # Inside a stack's folder its name is its own.
    (copy / "core" / "stacks" / "dra" / "planted.py").write_text('"""DRA: Stack.DRA"""\n')
    assert stack_name_lines(copy) == found
