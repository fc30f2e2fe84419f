"""The workspace database holds what drac makes and nothing else.

A database that arrives with the documents can carry SQL that runs inside drac's own
transactions: a trigger that rewrites every chunk drac inserts, or copies new document ids
into a table of its own; a view or an extra table for a later query to stumble on. So before
drac runs a single statement of its own on an existing database, its schema is compared with
the one drac creates (`schema.sql`, with the columns and the FTS5 table of earlier drac
versions), and a database holding anything else is refused, naming each object.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from functools import cache
from importlib import resources

LEGACY_COLUMNS = frozenset(
    {"conversion_failures", "attempt", "owner", "metadata", "table_rows", "verification"}
)
"""Columns of `documents` added after the first release: a workspace of an earlier drac
lacks them until it is opened (`drac.local.database` adds them)."""

_LEGACY_FTS = "chunks_fts"
_LEGACY_FTS_SQL = (
    "CREATE VIRTUAL TABLE chunks_fts USING fts5 (chunk_id UNINDEXED, breadcrumb, text,"
    " tokenize = 'unicode61 remove_diacritics 2')"
)
_LEGACY_FTS_SHADOWS = frozenset(
    f"{_LEGACY_FTS}_{part}" for part in ("data", "idx", "content", "docsize", "config")
)
"""The FTS5 table of earlier drac versions, unused now, and the tables FTS5 keeps for it."""

_CONSTRAINT = re.compile(r"\b(CHECK|GENERATED|REFERENCES|AS\s*\()", re.IGNORECASE)


@dataclass(frozen=True)
class ForeignObject:
    """Something in the database that drac does not make."""

    kind: str
    name: str
    why: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name!r} ({self.why})"


@dataclass(frozen=True)
class _Expected:
    tables: dict[str, list[tuple[object, ...]]]
    indexes: dict[str, str]


def _normalised(sql: str | None) -> str:
    text = re.sub(r"\s+", " ", sql or "").replace(" IF NOT EXISTS", "")
    return re.sub(r"\( ", "(", re.sub(r" \)", ")", text)).strip()


@cache
def _expected() -> _Expected:
    """The tables (their columns) and indexes (their SQL) that schema.sql creates."""
    schema = resources.files("drac.local").joinpath("schema.sql").read_text("utf-8")
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(schema)
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
        tables = {
            name: _columns(conn, name)
            for kind, name, _ in rows
            if kind == "table" and not name.startswith("sqlite_")
        }
        indexes = {name: _normalised(sql) for kind, name, sql in rows if kind == "index" and sql}
    finally:
        conn.close()
    return _Expected(tables, indexes)


def _columns(conn: sqlite3.Connection, table: str) -> list[tuple[object, ...]]:
    """(name, type, not null, default, primary key position, hidden) of each column."""
    rows = conn.execute("SELECT * FROM pragma_table_xinfo(?)", (table,)).fetchall()
    return [(row[1], row[2].upper(), row[3], row[4], row[5], row[6]) for row in rows]


def foreign_objects(conn: sqlite3.Connection) -> list[ForeignObject]:
    """Everything in the connected database's schema that drac's own schema does not have
    (an empty list for a database drac made, of this version or an earlier one)."""
    expected = _expected()
    found: list[ForeignObject] = []
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    for kind, name, table, sql in rows:
        problem = _problem(conn, expected, kind, name, table, sql)
        if problem is not None:
            found.append(ForeignObject(kind, name, problem))
    return found


def _problem(
    conn: sqlite3.Connection, expected: _Expected, kind: str, name: str, table: str, sql: str
) -> str | None:
    if kind in ("trigger", "view"):
        return f"drac makes no {kind}s"
    if name.startswith("sqlite_"):
        return None  # SQLite's own (autoindexes, sqlite_sequence, statistics)
    if kind == "index":
        if name not in expected.indexes:
            return "not an index drac makes"
        return None if _normalised(sql) == expected.indexes[name] else "changed from drac's"
    if kind != "table":
        return f"drac makes no {kind}"
    if name == _LEGACY_FTS:
        return None if _normalised(sql) == _LEGACY_FTS_SQL else "changed from drac's"
    if name in _LEGACY_FTS_SHADOWS:
        return None
    if name not in expected.tables:
        return "not a table drac makes"
    return _table_problem(conn, expected.tables[name], name, sql)


def _table_problem(
    conn: sqlite3.Connection, expected: list[tuple[object, ...]], name: str, sql: str
) -> str | None:
    if _CONSTRAINT.search(sql or ""):
        return "has constraints or computed columns drac does not make"
    columns = _columns(conn, name)
    wanted = {column[0]: column for column in expected}
    for column in columns:
        if wanted.get(column[0]) != column:
            return f"column {column[0]!r} is not drac's"
    missing = {str(column[0]) for column in expected} - {str(column[0]) for column in columns}
    if missing - (LEGACY_COLUMNS if name == "documents" else frozenset()):
        return f"lacks the columns {', '.join(sorted(missing))}"
    return None
