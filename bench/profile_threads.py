"""Run `python -m gpuctl ARGS...` under cProfile in every thread, and write the merged stats.

`python -m cProfile` sees the main thread only, and gpuctl verify does most of its work on a
thread pool and in watch reader threads; this profiles each thread and adds them up.

    python bench/profile_threads.py OUT.prof verify --kubeconfig ... -o json
"""

from __future__ import annotations

import cProfile
import pstats
import runpy
import sys
import threading
from typing import Any

_profiles: list[cProfile.Profile] = []
_lock = threading.Lock()
_thread_run = threading.Thread.run


def _profiled_run(self: threading.Thread) -> None:
    profile = cProfile.Profile()
    with _lock:
        _profiles.append(profile)
    profile.enable()
    try:
        _thread_run(self)
    finally:
        profile.disable()


def main() -> None:
    out, args = sys.argv[1], sys.argv[2:]
    threading.Thread.run = _profiled_run  # type: ignore[method-assign]
    main_profile = cProfile.Profile()
    sys.argv = ["gpuctl", *args]
    code: Any = 0
    main_profile.enable()
    try:
        runpy.run_module("gpuctl", run_name="__main__", alter_sys=True)
    except SystemExit as exit_:
        code = exit_.code
    finally:
        main_profile.disable()
        stats = pstats.Stats(main_profile)
        with _lock:
            for profile in _profiles:
                stats.add(profile)
        stats.dump_stats(out)
    sys.exit(code)


if __name__ == "__main__":
    main()
