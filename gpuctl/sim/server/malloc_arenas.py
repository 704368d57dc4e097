"""glibc's malloc arenas, bounded in the process that serves a simulated cluster.

glibc gives threads that contend for malloc arenas of their own, up to eight per core. The sim
serves each connection in its own thread, and Python hands every object over 512 bytes (a pod's
JSON, a status dict's table) to malloc: freed in one thread's arena, that memory is reused by
that arena only, so the RSS of a sim serving verify after verify grew by tens of MB more than its
live objects (bench/sim_memory.py: +60 MB against +26 MB over four 1,000-node verifies with two
arenas, in the same run of each). M_ARENA_MAX is mallopt(3)'s documented knob, the one the
MALLOC_ARENA_MAX environment variable sets; the threads share the GIL anyway, so two arenas cost
no measurable contention.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time

M_ARENA_MAX = -8  # mallopt(3), <malloc.h>
ARENAS = 2


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Bound this process's malloc arenas; False where the C library has no such knob (not
    glibc: macOS, musl's stub)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(M_ARENA_MAX, arenas))


def trim_every(seconds: float) -> bool:
    """Hand the C library's free memory back to the system every `seconds`, in a daemon thread
    (malloc_trim(3)): after a verify's pods and their requests are freed, the heap keeps holes
    between the objects that live on, which the process would reuse but the system still counts.
    False where the C library has no malloc_trim."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        malloc_trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    malloc_trim.argtypes = (ctypes.c_size_t,)

    def trim() -> None:
        while True:
            time.sleep(seconds)
            malloc_trim(0)

    threading.Thread(target=trim, name="gpuctl-sim-malloc-trim", daemon=True).start()
    return True
