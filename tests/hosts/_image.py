"""A node image: what `gpuctl bootstrap --phase host` with the role defaults leaves on a bare node,
kept as an overlay layer, so that tests whose subject is not the bare bootstrap start from hosts
gpuctl already prepared instead of bootstrapping bare nodes again.

Built once per test session, for real: one bare node comes up, gpuctl's host phase runs against it
over SSH, the node is halted (its systemd stops cleanly) and its upper dir is copied as the layer.
`up(image=...)` puts that layer between a node's own upper dir and the cached rootfs (copy on
write: every node changes only its own upper dir). A node from the image boots as a prepared host
does after a reboot: the driver and toolkit installed and held, the nvidia runtime configured, the
CDI spec written anew at boot by the toolkit's refresh unit.

The build's own bootstrap report is kept with the layer (`NodeImage.report`): tests whose subject is
what a bare bootstrap leaves can read that run instead of bootstrapping bare nodes of their own. An
image can be built with other role variables (`extra_args`, such as the older pins of
tests/hosts/test_pins.py), so that several modules share one bootstrap on those pins.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.hosts._state import HarnessState, stop_processes
from tests.hosts.nodes import down, harness_dir, state_path, up

IMAGE_GPUS = 2
# The older driver branch and toolkit pins (both in the test mirror): the older-pins image.
OLDER_DRIVER_BRANCH = "570"
OLDER_TOOLKIT = "1.16.2-1"
OLDER_PINS = (
    "-e", f"gpuctl_driver_branch={OLDER_DRIVER_BRANCH}", "-e", f"gpuctl_toolkit_version={OLDER_TOOLKIT}",
)  # fmt: skip
# The node's identity, which every node writes anew (tests/hosts/_node.py prepare_root): left out of
# the layer so that no node ever starts with another one's host key, machine-id or admin key.
IDENTITY = (
    "etc/ssh/ssh_host_ed25519_key",
    "etc/ssh/ssh_host_ed25519_key.pub",
    "etc/machine-id",
    "etc/hostname",
    "etc/hosts",
    "home/gpuadmin/.ssh",
)


@dataclass(frozen=True)
class NodeImage:
    """An image's layer (for `up(image=...)`) and the report of the bootstrap that made it."""

    layer: Path
    report: dict[str, Any]  # `gpuctl bootstrap --phase host -o json` on the bare node
    extra_args: tuple[str, ...]  # the Ansible arguments that run had after `--`


def build_image(work: Path, log: Callable[[str], None], extra_args: tuple[str, ...] = ()) -> NodeImage:
    """Bootstrap one bare node with gpuctl's host phase (`extra_args` after `--`) and keep its upper
    dir: the image's layer."""
    started = time.monotonic()
    inventory = work / "build" / "hosts.yml"
    up(nodes=1, gpus=IMAGE_GPUS, inventory=inventory, log=log)
    layer = work / "layer"
    try:
        report = _bootstrap(inventory, extra_args)
        _halt(inventory)
        upper = harness_dir(inventory) / "node-0" / "upper"
        subprocess.run(["cp", "-a", str(upper), str(layer)], check=True, capture_output=True)
    finally:
        down(inventory, log=log)
    for name in IDENTITY:
        subprocess.run(["rm", "-rf", str(layer / name)], check=True)
    log(f"image: a bootstrapped node image in {time.monotonic() - started:.1f} s: {layer}")
    return NodeImage(layer, report, extra_args)


def _bootstrap(inventory: Path, extra_args: tuple[str, ...]) -> dict[str, Any]:
    argv = [sys.executable, "-m", "gpuctl", "bootstrap", "--phase", "host", "-i", str(inventory)]
    argv += ["-o", "json", *(["--", *extra_args] if extra_args else [])]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        output = done.stdout[-3000:] + done.stderr[-3000:]
        raise RuntimeError(f"the node image's bootstrap failed ({done.returncode}): {output}")
    report: dict[str, Any] = json.loads(done.stdout)
    hosts = report["hosts"]
    if not all(host["ok"] for host in hosts):
        raise RuntimeError(f"the node image's bootstrap left a host not ok: {hosts}")
    return report


def _halt(inventory: Path) -> None:
    """Stop the node's systemd-nspawn (SIGTERM: the node halts cleanly, its files all written)."""
    state = HarnessState.load(state_path(inventory))
    nspawn = [r for r in state.resources if r["kind"] == "process" and r["name"].startswith("systemd-nspawn")]
    left = stop_processes(nspawn)
    if left:
        raise RuntimeError(f"the node image's node did not stop: {', '.join(left)}")
