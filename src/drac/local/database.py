"""The workspace's SQLite database: one connection, explicit and nestable transactions."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any


class Database:
    """A SQLite connection shared by the workspace adapters (thread-safe via one lock)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        self.conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        self._depth = 0
        schema = resources.files("drac.local").joinpath("schema.sql").read_text("utf-8")
        with self._lock:
            self.conn.executescript(schema)
            _migrate(self.conn)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run the block in one transaction; nested blocks join the outer one."""
        with self._lock:
            if self._depth == 0:
                self.conn.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield self.conn
            except BaseException:
                self._depth -= 1
                if self._depth == 0:
                    self.conn.execute("ROLLBACK")
                raise
            self._depth -= 1
            if self._depth == 0:
                self.conn.execute("COMMIT")

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """Run a read query and return all rows."""
        with self._lock:
            return self.conn.execute(sql, params).fetchall()

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self.conn.close()


_ADDED_COLUMNS = {
    "conversion_failures": "INTEGER NOT NULL DEFAULT 0",
    "attempt": "INTEGER NOT NULL DEFAULT 0",
    "owner": "TEXT",
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
        conn.execute(
            "INSERT OR IGNORE INTO sources (source, document_id, ord, updated_at)"
            " SELECT source_path, document_id, printf('%020d', rowid), updated_at FROM documents"
            " WHERE source_path IS NOT NULL AND status IN ('INDEXED', 'PARTIAL')"
        )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
