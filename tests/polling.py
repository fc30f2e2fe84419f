"""Waiting in tests for something another process does."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    """Poll `condition` every 50 ms until it holds; fail the test after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)
