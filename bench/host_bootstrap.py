"""Wall time of `gpuctl bootstrap --phase host` on real SSH test nodes: prints figures, asserts nothing.

    sudo python bench/host_bootstrap.py [--gpus 8] [--sizes 1,3] [--workdir /tmp/gpuctl-bench]

For each size: bring up fresh (bare) test nodes, time a full host bootstrap, then time the no-op
re-run (which must report changed=0), then tear the nodes down. Also times `gpuctl preflight`.
Needs what the host test tier needs (root, debootstrap, systemd-nspawn: .ci/install-host-deps.sh).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.hosts.nodes when run as a script

from gpuctl.core.bootstrap import BootstrapResult, run_host_bootstrap  # noqa: E402 - after sys.path
from gpuctl.core.preflight import run_preflight  # noqa: E402 - after sys.path
from tests.hosts.nodes import down, up  # noqa: E402 - after sys.path


def timed_bootstrap(inventory: Path) -> tuple[float, BootstrapResult]:
    start = time.perf_counter()
    result = run_host_bootstrap(inventory_path=inventory)
    return time.perf_counter() - start, result


def describe(result: BootstrapResult) -> str:
    changed = sum(host.changed for host in result.hosts)
    verdict = "ok" if result.ok else f"FAILED ({'; '.join(task.message for task in result.failed_tasks[:2])})"
    return f"{verdict}, changed={changed}"


def bench_size(nodes: int, gpus: int, workdir: Path) -> None:
    inventory = workdir / f"bench-{nodes}" / "hosts.yml"
    inventory.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    up(nodes=nodes, gpus=gpus, inventory=inventory, log=lambda _: None)
    print(f"{nodes} node(s): test nodes up in {time.perf_counter() - start:.1f} s")
    try:
        start = time.perf_counter()
        preflight = run_preflight(inventory_path=inventory)
        print(f"{nodes} node(s): preflight {time.perf_counter() - start:.2f} s (ok={preflight.ok})")
        seconds, result = timed_bootstrap(inventory)
        print(f"{nodes} node(s): full host bootstrap {seconds:.1f} s ({describe(result)})")
        seconds, result = timed_bootstrap(inventory)
        print(f"{nodes} node(s): no-op re-run {seconds:.1f} s ({describe(result)})")
    finally:
        down(inventory, log=lambda _: None)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--sizes", default="1,3", help="comma-separated node counts")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gpuctl-bench-"))
    for size in (int(part) for part in args.sizes.split(",")):
        bench_size(size, args.gpus, workdir)


if __name__ == "__main__":
    main()
