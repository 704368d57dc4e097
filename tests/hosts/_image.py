"""A node image: what `gpuctl bootstrap --phase host` with the role defaults leaves on a bare node,
kept as an overlay layer, so that tests whose subject is not the bare bootstrap start from hosts
gpuctl already prepared instead of bootstrapping bare nodes again.

Built once per test session, for real: one bare node comes up, gpuctl's host phase runs against it
over SSH, the node is halted (its systemd stops cleanly) and its upper dir is copied as the layer.
`up(image=...)` puts that layer between a node's own upper dir and the cached rootfs (copy on
write: every node changes only its own upper dir). A node from the image boots as a prepared host
does after a reboot: the driver and toolkit installed and held, the nvidia runtime configured, the
CDI spec written anew at boot by the toolkit's refresh unit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.hosts._state import HarnessState, stop_processes
from tests.hosts.nodes import down, harness_dir, state_path, up

IMAGE_GPUS = 2
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


def build_image(work: Path, log: Callable[[str], None]) -> Path:
    """Bootstrap one bare node with gpuctl's host phase and keep its upper dir: the image's layer."""
    started = time.monotonic()
    inventory = work / "build" / "hosts.yml"
    up(nodes=1, gpus=IMAGE_GPUS, inventory=inventory, log=log)
    layer = work / "layer"
    try:
        _bootstrap(inventory)
        _halt(inventory)
        upper = harness_dir(inventory) / "node-0" / "upper"
        subprocess.run(["cp", "-a", str(upper), str(layer)], check=True, capture_output=True)
    finally:
        down(inventory, log=log)
    for name in IDENTITY:
        subprocess.run(["rm", "-rf", str(layer / name)], check=True)
    log(f"image: a bootstrapped node image in {time.monotonic() - started:.1f} s: {layer}")
    return layer


def _bootstrap(inventory: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpuctl", "bootstrap", "--phase", "host", "-i", str(inventory), "-o", "json"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        report = done.stdout[-3000:]
        raise RuntimeError(
            f"the node image's bootstrap failed ({done.returncode}): {report}{done.stderr[-3000:]}"
        )
    hosts = json.loads(done.stdout)["hosts"]
    if not all(host["ok"] for host in hosts):
        raise RuntimeError(f"the node image's bootstrap left a host not ok: {hosts}")


def _halt(inventory: Path) -> None:
    """Stop the node's systemd-nspawn (SIGTERM: the node halts cleanly, its files all written)."""
    state = HarnessState.load(state_path(inventory))
    nspawn = [r for r in state.resources if r["kind"] == "process" and r["name"].startswith("systemd-nspawn")]
    left = stop_processes(nspawn)
    if left:
        raise RuntimeError(f"the node image's node did not stop: {', '.join(left)}")
