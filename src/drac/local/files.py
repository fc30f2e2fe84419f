"""Crash-safe file writes: readers see the old file or the new one, never half of either."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

_NAME_IN_TEMPORARY = 40
"""Characters of the target's name kept in its temporary file's name (at most 160 bytes, so
the temporary name stays under the 255-byte limit whatever the target's name)."""


def write_atomic(path: Path, data: bytes, temporary_folder: Path | None = None) -> None:
    """Write data to path via a synced temporary file renamed over it. The temporary file is
    made in `temporary_folder` (on the same file system) or beside the target."""
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = temporary_folder or path.parent
    folder.mkdir(parents=True, exist_ok=True)
    prefix = f".{path.name[:_NAME_IN_TEMPORARY]}."
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


_TEMPORARY_NAME = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")
"""What `write_atomic` names a temporary file: `.<name>.<8 random characters>.tmp`."""


def is_temporary_name(name: str) -> bool:
    """Whether a file name is one `write_atomic` gives its temporary files."""
    return _TEMPORARY_NAME.fullmatch(name) is not None


def remove_temporary_files(folder: Path, *, every_file: bool = False) -> int:
    """Remove the temporary files `write_atomic` leaves when a process is killed mid-write
    anywhere below folder (names of its pattern, or `every_file` in a folder of nothing
    else); return how many there were."""
    removed = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            if every_file or is_temporary_name(name):
                Path(parent, name).unlink(missing_ok=True)
                removed += 1
    return removed


def shown_path(path: Path | str) -> str:
    """The path as drac stores and prints it: bytes that are not UTF-8 (as in a file name
    from another system) become U+FFFD replacement characters."""
    return os.fsencode(path).decode("utf-8", "replace")
