"""One owner for proof: `gpuctl verify`, bootstrap's verify phase and the upgrade's verify step all
prove through gpuctl.core.proof.prove, and nothing else composes a node's verdict (proven, busy,
failed) or applies the gate. Read from the source with `ast`, so a second rule fails here however
it is spelled: a caller that writes the gate itself, reads a node's `busy` to judge it, or asks
for the retired `NodeResult.proven`. Bootstrap imports the upgrade; the upgrade imports bootstrap
only for types, so each of their modules loads alone."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.import_graph import PACKAGE, module_name

# The three callers of proof, and the name each must call.
CALLERS = ("gpuctl/cli/verify.py", "gpuctl/core/bootstrap/phases.py", "gpuctl/core/upgrade/run.py")
# What applies a verdict to the cluster: called from gpuctl.core.proof only (prove → gate).
GATE_WRITERS = frozenset({"apply_gate", "publish_conditions", "apply_device_gate", "gate_verified"})
# The DRA stack's apply_device_gate is the interface method the gate calls (never anyone else).
GATE_OWNERS = frozenset(
    {"gpuctl/core/proof/gate.py", "gpuctl/core/proof/prove.py", "gpuctl/core/stacks/dra/stack.py"}
)
# Where a node's `busy` may be read: where it is measured (verify, the stacks), the one rule, the
# device gate in the DRA stack's folder (which GPUs a run proved, not the node's verdict) and the
# JSON report's field.
BUSY_READERS = ("gpuctl/core/verify/", "gpuctl/core/stacks/", "gpuctl/core/proof/verdict.py")
BUSY_READERS_FILES = frozenset({"gpuctl/report/verify.py"})
# Who runs verify itself rather than prove: proof, the demo (no verdict, no gate) and the
# migration's last whole-cluster check after every node moved and was proven (no gate either).
VERIFY_RUNNERS = ("gpuctl/core/proof/", "gpuctl/core/verify/")
VERIFY_RUNNERS_FILES = frozenset({"gpuctl/core/demo.py", "gpuctl/core/migrate/run.py"})


def _sources(package: Path) -> dict[str, ast.Module]:
    root = package.parent
    return {
        source.relative_to(root).as_posix(): ast.parse(source.read_text(encoding="utf-8"))
        for source in sorted(package.rglob("*.py"))
    }


def _called_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
    return names


def _imported_from(tree: ast.AST, name: str) -> set[str]:
    """The modules `name` is imported from in this file."""
    return {
        node.module or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and any(alias.name == name for alias in node.names)
    }


def verdict_composers(package: Path) -> list[str]:
    """Every place outside gpuctl.core.proof that judges a node or applies the gate itself."""
    found: list[str] = []
    for path, tree in _sources(package).items():
        if path not in GATE_OWNERS:
            found += [f"{path}: calls {name}" for name in sorted(_called_names(tree) & GATE_WRITERS)]
        runs_verify = "verify" in _called_names(tree) and "gpuctl.core.verify.run" in _imported_from(
            tree, "verify"
        )
        if runs_verify and not path.startswith(VERIFY_RUNNERS) and path not in VERIFY_RUNNERS_FILES:
            found.append(f"{path}: runs verify itself, not gpuctl.core.proof.prove")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "proven":
                found.append(f"{path}:{node.lineno}: reads .proven (gpuctl.core.proof.verdict.is_proven)")
            busy_allowed = path.startswith(BUSY_READERS) or path in BUSY_READERS_FILES
            if isinstance(node, ast.Attribute) and node.attr == "busy" and not busy_allowed:
                found.append(f"{path}:{node.lineno}: reads .busy to judge a node")
    return found


def runtime_imports_between(package: Path, importer: str, imported: str) -> list[str]:
    """Imports of package `imported` by modules of package `importer` that run (not under TYPE_CHECKING)."""
    found: list[str] = []
    for path, tree in _sources(package).items():
        if not module_name(package, package.parent / path).startswith(importer + "."):
            continue
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or id(node) in typing_only:
                continue
            if (node.module or "").startswith(imported):
                found.append(f"{path}:{node.lineno}: from {node.module} import ...")
    return found


def test_the_three_paths_prove_through_the_one_prove() -> None:
    trees = _sources(PACKAGE)
    for caller in CALLERS:
        tree = trees[caller]
        assert "prove" in _called_names(tree), f"{caller} does not call prove()"
        assert _imported_from(tree, "prove") == {"gpuctl.core.proof.prove"}, caller


def test_nothing_but_proof_composes_a_verdict_or_applies_the_gate() -> None:
    assert verdict_composers(PACKAGE) == []


def test_the_check_catches_a_planted_second_verdict_rule(tmp_path: Path) -> None:
    package = tmp_path / "gpuctl"
    (package / "core" / "upgrade").mkdir(parents=True)
    (package / "core" / "upgrade" / "step.py").write_text(
        "from gpuctl.core.gate import apply_gate\n"
        "from gpuctl.core.verify.run import verify\n"
        "def prove_node(api_client, options, node):\n"
        "    found = verify(api_client, options).nodes[0]\n"
        "    proven = found.ok and not found.busy\n"
        "    apply_gate(api_client, verdicts={node: proven}, level='smi')\n"
        "    return found.proven\n",
        encoding="utf-8",
    )
    found = verdict_composers(package)
    assert len(found) == 4, found
    assert any("calls apply_gate" in line for line in found)
    assert any("runs verify itself" in line for line in found)
    assert any("reads .busy" in line for line in found)
    assert any("reads .proven" in line for line in found)


def test_the_upgrade_imports_bootstrap_only_for_types() -> None:
    assert runtime_imports_between(PACKAGE, "gpuctl.core.upgrade", "gpuctl.core.bootstrap") == []


def test_the_check_catches_a_planted_runtime_import(tmp_path: Path) -> None:
    package = tmp_path / "gpuctl"
    (package / "core" / "upgrade").mkdir(parents=True)
    (package / "core" / "upgrade" / "step.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from gpuctl.core.bootstrap.cluster import ClusterResult\n"
        "if TYPE_CHECKING:\n"
        "    from gpuctl.core.bootstrap.host import BootstrapResult\n",
        encoding="utf-8",
    )
    found = runtime_imports_between(package, "gpuctl.core.upgrade", "gpuctl.core.bootstrap")
    assert found == ["gpuctl/core/upgrade/step.py:2: from gpuctl.core.bootstrap.cluster import ..."]


@pytest.mark.parametrize(
    "module",
    [
        "gpuctl.core.upgrade.run",
        "gpuctl.core.upgrade.phase",
        "gpuctl.core.bootstrap.host_phase",
        "gpuctl.core.proof.prove",
    ],
)
def test_each_module_loads_alone(module: str) -> None:
    """A fresh interpreter per module: an import cycle shows only when its module is loaded first."""
    loaded = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, check=False
    )
    assert loaded.returncode == 0, loaded.stderr
