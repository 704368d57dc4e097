"""One polling loop for every test that waits for the simulated cluster (or a node) to settle."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], what: str, timeout: float = 20.0) -> T:
    """Poll `predicate` until it returns something truthy, and return that; fail the test after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    pytest.fail(f"timed out waiting for {what}")
