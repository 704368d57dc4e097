"""The stacks' seam, shown: a fourth stack is one new folder under core/stacks/, one entry in the
registry and one member of the `Stack` enum (the name `--stack` and the JSON output use), and
nothing else changes for it to be listed and rendered. The throwaway stack lives in a copy of the
package, run in a child interpreter so the real one stays untouched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.import_graph import PACKAGE

_STACK = '''"""A throwaway stack: the device plugin's manifests under another name."""

from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.device_plugin.stack import DevicePluginStack


class ExampleStack(DevicePluginStack):
    stack = Stack.EXAMPLE


EXAMPLE = ExampleStack()
'''

_PROBE = """
import json
import gpuctl
from gpuctl.core.render_options import RenderOptions
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.registry import STACKS, stack_for
files = stack_for(Stack.EXAMPLE).render(RenderOptions(stack=Stack.EXAMPLE))
stacks = [stack.value for stack in STACKS]
names = [rendered.filename for rendered in files]
print(json.dumps({"package": gpuctl.__file__, "stacks": stacks, "files": names}))
"""


def _add_line(path: Path, after: str, line: str) -> None:
    text = path.read_text()
    assert after in text, after
    path.write_text(text.replace(after, f"{after}\n{line}", 1))


def test_a_new_stack_is_one_folder_and_one_registry_entry(tmp_path: Path) -> None:
    copy = tmp_path / "gpuctl"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    # Outside an installed wheel the templates are found beside the package, as in the checkout.
    (tmp_path / "templates").symlink_to(PACKAGE.parent / "templates")
    stacks = copy / "core" / "stacks"

    (stacks / "example").mkdir()
    (stacks / "example" / "__init__.py").write_text('"""A throwaway stack."""\n')
    (stacks / "example" / "stack.py").write_text(_STACK)
    _add_line(stacks / "__init__.py", '    DRA = "dra"', '    EXAMPLE = "example"')
    registry = stacks / "registry.py"
    _add_line(
        registry,
        "from gpuctl.core.stacks.dra.stack import DRA",
        "from gpuctl.core.stacks.example.stack import EXAMPLE",
    )
    registry.write_text(registry.read_text().replace("OPERATOR, DRA)}", "OPERATOR, DRA, EXAMPLE)}"))

    environment = os.environ | {"PYTHONPATH": str(tmp_path)}
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert Path(found["package"]).is_relative_to(tmp_path), "the child imported the real package"
    assert found["stacks"] == ["device-plugin", "operator", "dra", "example"]
    assert found["files"], "the new stack rendered nothing"
