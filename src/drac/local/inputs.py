"""What the paths given to `ingest` expand to, and how their files are read: folders walked
without following links, only regular files opened, sizes checked before and while reading,
and each document's metadata sidecar read under the same rules (all of it untrusted)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel

from drac.errors import DocumentError, DracError, MetadataError
from drac.local.files import shown_path
from drac.local.outcome import Outcome
from drac.metadata import MAX_SIDECAR_BYTES, Metadata, is_sidecar, parse_sidecar, sidecar_name

DOCUMENT_SUFFIXES = frozenset(
    {".pdf", ".docx", ".pptx", ".xlsx", ".html", ".htm", ".md", ".markdown", ".txt"}
    | {".xlsm", ".xls", ".ods", ".csv", ".tsv"}
    | {".png", ".jpg", ".jpeg", ".tif", ".tiff"}
)
"""File endings picked up when a folder is ingested (files named explicitly are always tried)."""


class Skipped(BaseModel):
    """An entry of a folder that was not ingested, and why."""

    path: str
    reason: str


class Inputs(NamedTuple):
    """What the paths given to `ingest` expand to."""

    files: list[Path]
    failed: list[Outcome]
    skipped: list[Skipped]


SYMLINK_SKIPPED = "symbolic link (links in a folder are not followed)"
SIDECAR_SKIPPED = "metadata sidecar (read with its document, never ingested itself)"


def walk_inputs(paths: Sequence[Path]) -> Inputs:
    """Expand folders (recursively) into the files to ingest: regular files with a known
    document ending. Symbolic links inside a folder are not followed, and FIFOs, sockets,
    devices, hidden entries and other endings are skipped; each skipped entry is listed with
    its reason. A path named here that is missing or not a regular file is a FAILED outcome
    (a link named here is followed: the user chose it)."""
    files: list[Path] = []
    failed: list[Outcome] = []
    skipped: list[Skipped] = []
    for path in paths:
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            missing = isinstance(exc, FileNotFoundError)
            reason = "no such file or folder" if missing else failure_reason(exc)
            failed.append(Outcome(path=shown_path(path), status="FAILED", error=reason))
            continue
        if stat.S_ISDIR(mode):
            _walk(path, files, skipped)
        elif is_sidecar(path.name):
            skipped.append(Skipped(path=shown_path(path), reason=SIDECAR_SKIPPED))
        elif stat.S_ISREG(mode):
            files.append(path)
        else:
            error = f"{_special_kind(mode)}, not a regular file"
            failed.append(Outcome(path=shown_path(path), status="FAILED", error=error))
    return Inputs(list(dict.fromkeys(files)), failed, skipped)


def collect_inputs(paths: Sequence[Path]) -> tuple[list[Path], list[Outcome]]:
    """The files `walk_inputs` finds, and the FAILED outcomes of paths that are not there."""
    inputs = walk_inputs(paths)
    return inputs.files, inputs.failed


def _walk(folder: Path, files: list[Path], skipped: list[Skipped]) -> None:
    """Add the folder's documents to `files`, never through a link (lstat only)."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError as exc:
        unreadable = f"not readable ({failure_reason(exc)})"
        skipped.append(Skipped(path=shown_path(folder), reason=unreadable))
        return
    for entry in entries:
        path = Path(entry.path)
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError as exc:
            skipped.append(Skipped(path=shown_path(path), reason=failure_reason(exc)))
            continue
        reason = None
        if stat.S_ISLNK(mode):
            reason = SYMLINK_SKIPPED
        elif entry.name.startswith("."):
            reason = "hidden (the name starts with a dot)"
        elif stat.S_ISDIR(mode):
            _walk(path, files, skipped)
        elif is_sidecar(entry.name):
            reason = SIDECAR_SKIPPED
        elif not stat.S_ISREG(mode):
            reason = _special_kind(mode)
        elif path.suffix.lower() not in DOCUMENT_SUFFIXES:
            reason = f"not a document file ending ({path.suffix or 'none'})"
        else:
            files.append(path)
        if reason is not None:
            skipped.append(Skipped(path=shown_path(path), reason=reason))


def _special_kind(mode: int) -> str:
    """What a file that is not regular is, in words."""
    kinds = (
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")


def read_sidecar(document: Path) -> Metadata:
    """The metadata of the document's sidecar (`<file>.metadata.json` beside it), or none
    when there is no sidecar. The sidecar is untrusted like the document: a link is never
    followed, nothing but a regular file of at most MAX_SIDECAR_BYTES is read, and
    MetadataError names the sidecar and the key that breaks a limit."""
    sidecar = document.with_name(sidecar_name(document.name))
    shown = shown_path(sidecar)
    try:
        mode = sidecar.lstat().st_mode
    except FileNotFoundError:
        return {}
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:  # a 255-byte name leaves no room for a sidecar's
            return {}
        raise MetadataError(f"{shown}: not readable ({failure_reason(exc)})") from exc
    if stat.S_ISLNK(mode):
        raise MetadataError(f"{shown}: a symbolic link (a sidecar's link is never followed)")
    size = sidecar.lstat().st_size
    if stat.S_ISREG(mode) and size > MAX_SIDECAR_BYTES:
        raise MetadataError(
            f"{shown}: {size:,} bytes, more than the {MAX_SIDECAR_BYTES // 1024} KiB limit"
        )
    try:
        data = read_limited(sidecar, MAX_SIDECAR_BYTES, follow_symlinks=False)
    except (DocumentError, OSError) as exc:
        raise MetadataError(f"{shown}: {failure_reason(exc)}") from exc
    return parse_sidecar(data, shown)


def read_limited(path: Path, max_bytes: int, follow_symlinks: bool = True) -> bytes:
    """The file's bytes, its size checked before reading, and never more than the limit read
    (a file may grow after `stat`). Only a regular file is opened (a FIFO or device would
    block or never end), and the open file is checked again, so a swap after the check is
    caught; without `follow_symlinks` a link is not opened at all."""
    limit = f"{max_bytes / 1048576:.0f} MiB limit"
    try:
        mode = (path.stat() if follow_symlinks else path.lstat()).st_mode
        if not stat.S_ISREG(mode):
            raise DocumentError(_not_regular(mode))
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            handle = os.open(path, flags | (0 if follow_symlinks else os.O_NOFOLLOW))
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise DocumentError(SYMLINK_SKIPPED) from exc
            raise
        with os.fdopen(handle, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise DocumentError(_not_regular(info.st_mode))
            size = info.st_size
            if size > max_bytes:
                raise DocumentError(f"file is {size / 1048576:.1f} MiB, more than the {limit}")
            data = file.read(size + 1)
            if len(data) > size:  # grown since `stat`: read on, up to the limit
                data += file.read(max_bytes + 1 - len(data))
    except PermissionError as exc:
        raise DocumentError("permission denied") from exc
    if len(data) > max_bytes:
        raise DocumentError(f"file grew past the {limit} while it was read")
    return data


def _not_regular(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if stat.S_ISLNK(mode):
        return SYMLINK_SKIPPED
    return f"{_special_kind(mode)}, not a regular file"


def failure_reason(error: Exception) -> str:
    """An error as the short reason an outcome or a skipped entry gives."""
    if isinstance(error, OSError) and not isinstance(error, DracError):
        return error.strerror or str(error)
    return str(error) or type(error).__name__
