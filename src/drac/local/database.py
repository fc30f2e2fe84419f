"""The workspace's SQLite database: one connection, explicit and nestable transactions.

Every SQLite failure leaves this module as a WorkspaceError that names the database file and
says what to do (a damaged file, a full disk, a busy or read-only workspace).
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from drac.errors import WorkspaceError
from drac.local.errors import DiskFullError, ForeignSchemaError, WorkspaceUnusableError
from drac.local.schema_check import foreign_objects

DAMAGED_DATABASE_FIX = (
    "restore it from a backup, or move the workspace aside and ingest the documents again "
    "(`drac check` lists what else is wrong)"
)
DISK_FULL_FIX = "free some space on that disk and run the command again"


def database_error(path: Path, error: sqlite3.Error) -> WorkspaceError:
    """A SQLite failure as one line naming the file and what to do."""
    code = getattr(error, "sqlite_errorcode", None)
    text = str(error)
    if code == sqlite3.SQLITE_FULL or "disk is full" in text or _disk_is_full(path):
        return DiskFullError(f"{path}: no space left on the device; {DISK_FULL_FIX}")
    if code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT) or "malformed" in text:
        return WorkspaceUnusableError(f"{path} is damaged ({text}); {DAMAGED_DATABASE_FIX}")
    if code == sqlite3.SQLITE_BUSY or "locked" in text:
        return WorkspaceError(f"{path} is busy ({text}): another drac is writing; try again")
    if code == sqlite3.SQLITE_READONLY or "readonly" in text:
        return WorkspaceError(f"{path} cannot be written ({text}); check its permissions")
    if code == sqlite3.SQLITE_CANTOPEN:
        return WorkspaceError(f"{path} cannot be opened ({text}); check the folder's permissions")
    return WorkspaceError(f"{path}: database error ({text}); `drac check` tells what is wrong")


def _disk_is_full(path: Path) -> bool:
    try:
        return shutil.disk_usage(path.parent).free < 64 * 1024
    except OSError:
        return False


class Database:
    """A SQLite connection shared by the workspace adapters (thread-safe via one lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._depth = 0
        schema = resources.files("drac.local").joinpath("schema.sql").read_text("utf-8")
        try:
            self.conn = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=30
            )
            self.conn.row_factory = sqlite3.Row
            with self._lock:
                # no SQL function with side effects may run from the schema's own SQL
                self.conn.execute("PRAGMA trusted_schema = OFF")
                found = foreign_objects(self.conn)
                if found:
                    self.conn.close()
                    raise ForeignSchemaError(str(path), found)
                self.conn.executescript(schema)
                _migrate(self.conn)
        except sqlite3.Error as exc:
            raise database_error(path, exc) from exc

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run the block in one transaction; nested blocks join the outer one."""
        with self._lock:
            try:
                if self._depth == 0:
                    self.conn.execute("BEGIN IMMEDIATE")
                self._depth += 1
                try:
                    yield self.conn
                except BaseException:
                    self._depth -= 1
                    if self._depth == 0:
                        self._rollback()
                    raise
                self._depth -= 1
                if self._depth == 0:
                    self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._depth == 0 and self.conn.in_transaction:
                    self._rollback()
                raise database_error(self.path, exc) from exc

    def _rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back itself
            self.conn.execute("ROLLBACK")

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """Run a read query and return all rows."""
        with self._lock:
            try:
                return self.conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise database_error(self.path, exc) from exc

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            if hasattr(self, "conn"):
                self.conn.close()


_ADDED_COLUMNS = {
    "conversion_failures": "INTEGER NOT NULL DEFAULT 0",
    "attempt": "INTEGER NOT NULL DEFAULT 0",
    "owner": "TEXT",
    "metadata": "TEXT NOT NULL DEFAULT '{}'",
    "table_rows": "TEXT",
    "verification": "TEXT",
}


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a workspace made by an earlier drac up to date: the documents columns added
    since, and a source row for each live document (its one path then)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(documents)")}
    missing = {name: kind for name, kind in _ADDED_COLUMNS.items() if name not in columns}
    if not missing:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for name, kind in missing.items():
            conn.execute(f"ALTER TABLE documents ADD COLUMN {name} {kind}")
        if set(missing) - {"metadata", "table_rows", "verification"}:  # before sources existed
            conn.execute(
                "INSERT OR IGNORE INTO sources (source, document_id, ord, updated_at)"
                " SELECT source_path, document_id, printf('%020d', rowid), updated_at"
                " FROM documents"
                " WHERE source_path IS NOT NULL AND status IN ('INDEXED', 'PARTIAL')"
            )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
