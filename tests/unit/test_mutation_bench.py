"""bench/mutation.py's inputs hold: the mutmut release that runs is in the range the test extra
declares, and every module it mutates and every test file it runs them against exists."""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path
from types import ModuleType

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_bench", REPO / "bench" / "mutation.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_installed_mutmut_is_in_the_declared_range() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [Requirement(line) for line in extras["optional-dependencies"]["test"]]
    (mutmut,) = [requirement for requirement in requirements if requirement.name == "mutmut"]
    assert mutmut.specifier.contains(version("mutmut")), (str(mutmut), version("mutmut"))
    assert not mutmut.specifier.contains("2.5.1")  # mutmut 2's configuration is another one
    assert not mutmut.specifier.contains("4.0.0")


def test_every_mutated_module_and_every_test_file_exists() -> None:
    bench = _bench()
    assert bench.MODULES
    for path in (*bench.MODULES, *bench.TESTS):
        assert (REPO / path).is_file(), path
    # The nccl level is looked at last: its modules close the list.
    assert [path for path in bench.MODULES if "nccl" in path] == list(bench.MODULES[-2:])


def test_a_survivor_is_named_by_the_line_of_the_original_it_changes() -> None:
    """The bench names a mutant by its function's `def` line in the original file plus the offset of
    the first line mutmut changed in its copy of that function."""
    bench = _bench()
    source = (REPO / "gpuctl" / "core" / "verify" / "model.py").read_text(encoding="utf-8")
    start = bench._original_start(source, "xǁHeldǁbusy")
    lines = source.splitlines()
    assert re.match(r"\s+def busy\(self\) -> bool:", lines[start - 1])
    assert "return self.devices > 0 and self.free <= 0" in lines[start + 1]
    assert lines[bench._original_start(source, "x_failed") - 1].startswith("def failed(")
