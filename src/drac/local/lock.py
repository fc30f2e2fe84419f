"""One writer per workspace: a second `drac ingest`/`replan` on the same folder stops at once."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from drac.errors import WorkspaceError


@contextmanager
def writer_lock(root: Path) -> Iterator[None]:
    """Hold the workspace's writer lock for the block; WorkspaceError if another process has it."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "writer.lock"
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise WorkspaceError(
                f"workspace {root} is being written by {holder}; wait for it to finish"
            ) from exc
        handle.seek(0)
        handle.truncate()
        handle.write(f"drac pid {os.getpid()}")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)
