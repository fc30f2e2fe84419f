"""Which workspace a command may use, and the rule that keeps a planted one out.

Documents arrive in extracted archives, shared drives and synced folders, and any of those
can carry a `.drac` folder of someone else's making. The rule:

- A workspace the user names (`--workspace`, `DRAC_WORKSPACE`, the Python API's path) is
  used: naming it is the user's decision. drac remembers it from then on.
- A workspace drac finds by itself (`.drac` in the current folder or the nearest parent
  folder that has one, as git finds `.git`) is used only when drac made it (or the user
  named it once) for this user: drac records each workspace it creates in the user's state
  folder (`$XDG_STATE_HOME/drac/workspaces`, else `~/.local/state/drac/workspaces`), by its
  real path, the folder's device and inode, and the digest of a random mark drac writes into
  the workspace (`MARK`), so a folder that later appears at the same path is not taken for it
  even where the file system gives it the old folder's inode number; the folder must be a
  real folder (no link) owned by the user.
  Anything else is refused with one line saying how to name it.
- Whichever way it was chosen, nothing inside a workspace is followed through a symbolic
  link (see `refuse_links_at_top` and `checked_inside`), and its database must hold only the
  tables drac makes (`drac.local.schema_check`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from drac.local.errors import LinkInWorkspaceError, UntrustedWorkspaceError
from drac.local.files import write_atomic

DEFAULT_WORKSPACE = Path(".drac")
DATABASE = "drac.sqlite"
TEMPORARY_FOLDER = "tmp"
"""Where files being written wait for their rename (cleared by every writer)."""
MARK = "mark"
"""A random value drac writes into each workspace it records; the record keeps its digest.
Inode numbers are reused: a folder made after the user's workspace was removed can get the
same one, so path, device and inode alone do not tell the two apart."""
MARK_BYTES = 64

TOP_LEVEL_ENTRIES = (
    DATABASE,
    f"{DATABASE}-wal",
    f"{DATABASE}-shm",
    f"{DATABASE}-journal",
    "writer.lock",
    TEMPORARY_FOLDER,
    "documents",
    MARK,
)
"""The workspace's own entries: none of them may be a symbolic link."""


@dataclass(frozen=True)
class WorkspaceChoice:
    """The workspace a command uses and how it was chosen."""

    root: Path
    how: str
    """"named" (by the user), "here" (./.drac), "above" (a parent folder's) or "new"."""

    @property
    def announcement(self) -> str | None:
        """The line a command prints on stderr when it uses a workspace found above the
        current folder (None otherwise)."""
        if self.how == "above":
            return f"drac: using the workspace {self.root}"
        return None


def choose_workspace(named: Path | None, start: Path) -> WorkspaceChoice:
    """The workspace a command run in `start` uses: `named` when given, else `.drac` here
    or in the nearest parent folder that has one (only if it is the user's own, see the
    module's rule), else a new `.drac` here. UntrustedWorkspaceError when the one found
    cannot be used."""
    if named is not None:
        if (named / DATABASE).exists():
            remember_workspace(named)
        return WorkspaceChoice(named, "named")
    for folder in (start, *start.parents):
        candidate = folder / DEFAULT_WORKSPACE
        if (candidate / DATABASE).exists() or candidate.is_symlink():
            shown = DEFAULT_WORKSPACE if folder == start else candidate
            _refuse_unless_own(candidate, shown)
            return WorkspaceChoice(shown, "here" if folder == start else "above")
    here = start / DEFAULT_WORKSPACE
    if _holds_anything(here):
        raise UntrustedWorkspaceError(
            f"{here} exists but holds no drac workspace that drac made; {_how_to_name(here)}"
        )
    return WorkspaceChoice(DEFAULT_WORKSPACE, "new")


def _holds_anything(folder: Path) -> bool:
    """Whether `folder` is there as something other than an empty real folder."""
    try:
        mode = folder.lstat().st_mode
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(mode):
        return True
    return any(folder.iterdir())


def _refuse_unless_own(candidate: Path, shown: Path) -> None:
    try:
        info = candidate.lstat()
    except OSError as exc:
        raise UntrustedWorkspaceError(f"cannot read {shown}: {exc}") from exc
    if stat.S_ISLNK(info.st_mode):
        reason = "it is a symbolic link"
    elif info.st_uid != os.geteuid():
        reason = "it belongs to another user"
    elif not _remembered(candidate, info):
        reason = "drac did not make it for you (it may have come with the documents)"
    else:
        return
    raise UntrustedWorkspaceError(
        f"not using the workspace {shown}: {reason}; {_how_to_name(shown)}"
    )


def _how_to_name(path: Path) -> str:
    return (
        f"to use it anyway, name it once: --workspace {path} (or DRAC_WORKSPACE={path}); "
        "to make a new one here, name another folder"
    )


def state_folder() -> Path:
    """Where drac keeps what it knows of this user's workspaces."""
    base = os.environ.get("XDG_STATE_HOME", "").strip()
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "state"
    return root / "drac" / "workspaces"


def _record_path(real: str) -> Path:
    return state_folder() / f"{hashlib.sha256(os.fsencode(real)).hexdigest()[:32]}.json"


def remember_workspace(root: Path) -> bool:
    """Record `root` as a workspace of this user's (made by drac or named by the user); False
    when the state folder or the workspace's mark cannot be written (the workspace then has
    to be named)."""
    try:
        real = os.path.realpath(root)
        info = os.stat(real)
        if _remembered(Path(real), info, legacy=False):
            return True
        token = secrets.token_hex(16)
        refuse_links_at_top(Path(real))
        write_atomic(Path(real) / MARK, token.encode("ascii"))
        record = {
            "path": real,
            "device": info.st_dev,
            "inode": info.st_ino,
            "mark": _digest(token.encode("ascii")),
        }
        write_atomic(_record_path(real), json.dumps(record).encode())
    except (OSError, ValueError, LinkInWorkspaceError):
        return False
    return True


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_mark(root: Path) -> bytes | None:
    """The workspace's mark, read without following a link; None when it is not a file."""
    try:
        handle = os.open(root / MARK, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(handle, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            return None
        return stream.read(MARK_BYTES + 1)


def _remembered(candidate: Path, info: os.stat_result, *, legacy: bool = True) -> bool:
    """Whether `candidate` is the folder recorded at its path: the same device and inode and
    the mark whose digest the record keeps. A record written before marks existed (no
    "mark") is matched by device and inode alone when `legacy` allows it, and gains a mark."""
    real = os.path.realpath(candidate)
    try:
        record = json.loads(_record_path(real).read_text("utf-8"))
    except (OSError, ValueError):
        return False
    same_folder = bool(
        isinstance(record, dict)
        and record.get("path") == real
        and record.get("device") == info.st_dev
        and record.get("inode") == info.st_ino
    )
    if not same_folder:
        return False
    if "mark" not in record:
        return legacy and remember_workspace(Path(real))
    mark = _read_mark(Path(real))
    return mark is not None and len(mark) <= MARK_BYTES and _digest(mark) == record["mark"]


def refuse_links_at_top(root: Path) -> None:
    """LinkInWorkspaceError when one of the workspace's own entries (its database, lock,
    temporary folder or documents folder) is a symbolic link."""
    for name in TOP_LEVEL_ENTRIES:
        entry = root / name
        if entry.is_symlink():
            raise LinkInWorkspaceError(
                f"{entry} is a symbolic link: drac never follows a link inside a workspace "
                "(one that came with the documents could make it read, write or delete files "
                "elsewhere); move the workspace aside and ingest into a new one"
            )


def checked_inside(root: Path, key: str) -> Path:
    """The path of `key` (a relative POSIX path without '..') below root, after checking
    that neither it nor any folder on the way is a symbolic link (ValueError for a bad key,
    LinkInWorkspaceError for a link)."""
    parts = PurePosixPath(key).parts
    if not parts or key.startswith("/") or ".." in parts:
        raise ValueError(f"invalid artifact key {key!r}")
    path = root
    for part in parts:
        path = path / part
        if path.is_symlink():
            raise LinkInWorkspaceError(
                f"{path} is a symbolic link: drac never follows a link inside a workspace; "
                "remove it (`drac check` lists every one)"
            )
    return path
