"""Crash-safe file writes: readers see the old file or the new one, never half of either."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    """Write data to path via a synced temporary file renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def shown_path(path: Path | str) -> str:
    """The path as drac stores and prints it: bytes that are not UTF-8 (as in a file name
    from another system) become U+FFFD replacement characters."""
    return os.fsencode(path).decode("utf-8", "replace")
