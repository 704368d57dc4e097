"""The sim's runtime has Kubernetes' shape: the store at the bottom, controllers over it, the
cluster wiring them. No cycle at all is allowed anywhere (tests/unit/test_import_contract.py); here,
that the wiring stays the top: controllers meet through the store and state.py, never cluster.py.

Every import counts: at module level, inside functions and under `if TYPE_CHECKING:` (a type-only
import still ties a module to the other's shape; what controllers share is a leaf, state.py).
"""

from pathlib import Path

from tests.import_graph import PACKAGE, imports

RUNTIME = "gpuctl.sim.runtime"


def test_the_graph_sees_function_level_and_type_checking_imports(tmp_path: Path) -> None:
    package = tmp_path / "gpuctl"
    (package / "sim" / "runtime").mkdir(parents=True)
    for name in ("__init__.py", "sim/__init__.py", "sim/runtime/__init__.py", "sim/runtime/kubelet.py"):
        (package / name).write_text("")
    (package / "sim" / "runtime" / "cluster.py").write_text("")
    (package / "sim" / "runtime" / "planted.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from gpuctl.sim.runtime.cluster import Cluster\n"
        "def f():\n    from gpuctl.sim.runtime import kubelet\n"
    )
    found = {found.imported for found in imports(package) if found.importer == f"{RUNTIME}.planted"}
    assert found == {"typing", f"{RUNTIME}.cluster", f"{RUNTIME}.kubelet"}


def test_only_the_server_and_the_api_import_the_wiring() -> None:
    """Controllers meet through the store and state.py; cluster.py, which wires them, is the top."""
    importers = {found.importer for found in imports(PACKAGE) if found.imported == f"{RUNTIME}.cluster"}
    assert sorted(name for name in importers if name.startswith(RUNTIME)) == []
    assert importers, "nothing imports the runtime's wiring: has cluster.py moved?"
