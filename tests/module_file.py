"""Import a Python file outside any package (an Ansible plugin, a script sent to hosts) by its path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load(path: Path) -> ModuleType:
    """The module in `path`, executed once, named after the file; sys.path is left as it is."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
