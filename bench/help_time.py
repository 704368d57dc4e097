"""Median wall time of `gpuctl --help` (target: <= 0.1 s). Run: python bench/help_time.py [runs]."""

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_S = 0.1


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    script = Path(sys.executable).with_name("gpuctl")
    gpuctl = str(script) if script.exists() else shutil.which("gpuctl") or "gpuctl"
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([gpuctl, "--help"], check=True, capture_output=True)
        timings.append(time.perf_counter() - start)
    median = statistics.median(timings)
    spread = f"min {min(timings):.3f}, max {max(timings):.3f}"
    print(f"gpuctl --help: median {median:.3f} s over {runs} runs ({spread})")
    print(f"target {TARGET_S:.2f} s: median/target = {median / TARGET_S:.2f}")


if __name__ == "__main__":
    main()
