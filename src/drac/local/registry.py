"""The local DocumentRegistry: document records and their sources (file paths) in SQLite."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from drac.clock import utc_now
from drac.errors import WorkspaceError
from drac.local.database import Database
from drac.models import DocumentRecord, DocumentStatus
from drac.ports import DocumentRegistry, SourceClaim

_COLUMNS = (
    "document_id",
    "source",
    "source_path",
    "sha256",
    "tenant",
    "format",
    "status",
    "pages",
    "active_version",
    "warnings",
    "error",
    "conversion_failures",
    "attempt",
    "table_rows",
    "owner",
    "metadata",
    "verification",
    "created_at",
    "updated_at",
)
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM documents"
_ORDER_WIDTH = 20


class SqliteDocumentRegistry(DocumentRegistry):
    """Documents and sources of one workspace. A source is an absolute file path; its order
    is the workspace's write order (a counter), so the latest ingest of a path wins."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- the port -------------------------------------------------------------------------
    def get(self, document_id: str) -> DocumentRecord | None:
        """The record, or None."""
        rows = self.db.query(f"{_SELECT} WHERE document_id = ?", (document_id,))
        return _record(rows[0]) if rows else None

    def put(self, record: DocumentRecord) -> None:
        """Insert or replace the record (created_at kept, updated_at now)."""
        record.updated_at = utc_now()
        record.created_at = record.created_at or record.updated_at
        values = record.model_dump(mode="json")
        values["warnings"] = json.dumps(record.warnings, ensure_ascii=False)
        values["metadata"] = json.dumps(record.metadata, ensure_ascii=False)
        checked = record.verification
        values["verification"] = checked.model_dump_json() if checked is not None else None
        marks = ", ".join("?" * len(_COLUMNS))
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO documents ({', '.join(_COLUMNS)}) VALUES ({marks})",
                tuple(values[column] for column in _COLUMNS),
            )

    def activate(
        self,
        document_id: str,
        version: int,
        status: DocumentStatus,
        *,
        owner: str | None = None,
    ) -> DocumentRecord | None:
        """Make `version` active with `status` when the document allows it (see the port)."""
        with self.db.transaction():
            record = self.get(document_id)
            if record is None or record.status is DocumentStatus.DELETED:
                return None
            if owner is not None and record.owner != owner:
                return None
            if owner is None and not record.live:
                return None
            if record.active_version is not None and record.active_version >= version:
                return None
            record.active_version = version
            record.status = status
            record.owner = None
            record.error = None
            self.put(record)
            return record

    def mark_deleted(self, document_id: str) -> None:
        """Set DELETED, without an active version or an owner."""
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE documents SET status = ?, active_version = NULL, owner = NULL,"
                " updated_at = ? WHERE document_id = ?",
                (DocumentStatus.DELETED.value, utc_now(), document_id),
            )

    def claim_source(self, source: str, document_id: str, order: str) -> SourceClaim:
        """Point `source` at `document_id` unless a later write of it is recorded."""
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT document_id, ord FROM sources WHERE source = ?", (source,)
            ).fetchone()
            if row is not None and row["ord"] > order:
                return SourceClaim(claimed=False)
            conn.execute(
                "INSERT OR REPLACE INTO sources (source, document_id, ord, updated_at)"
                " VALUES (?, ?, ?, ?)",
                (source, document_id, order, utc_now()),
            )
        previous = row["document_id"] if row is not None else None
        return SourceClaim(claimed=True, previous=previous if previous != document_id else None)

    def release_source(self, source: str, order: str) -> str | None:
        """Forget `source` unless a later write is recorded; return the document it held."""
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT document_id, ord FROM sources WHERE source = ?", (source,)
            ).fetchone()
            if row is None or row["ord"] > order:
                return None
            conn.execute("DELETE FROM sources WHERE source = ?", (source,))
        return str(row["document_id"])

    def sources_of(self, document_id: str) -> list[str]:
        """The paths that hold the document now."""
        rows = self.db.query(
            "SELECT source FROM sources WHERE document_id = ? ORDER BY source", (document_id,)
        )
        return [row["source"] for row in rows]

    # -- local reads ----------------------------------------------------------------------
    def next_order(self) -> str:
        """A source order later than every one recorded (the workspace's write order)."""
        rows = self.db.query("SELECT MAX(ord) AS last FROM sources")
        last = rows[0]["last"]
        return str(int(last) + 1 if last else 1).zfill(_ORDER_WIDTH)

    def source_document(self, source: str) -> str | None:
        """The document a path holds now, if any."""
        rows = self.db.query("SELECT document_id FROM sources WHERE source = ?", (source,))
        return rows[0]["document_id"] if rows else None

    def documents(self) -> list[DocumentRecord]:
        """Every known document, oldest first."""
        return [_record(row) for row in self.db.query(f"{_SELECT} ORDER BY created_at, source")]

    def find(self, reference: str) -> DocumentRecord:
        """A document by id, unique id prefix, file name, stem or path (live ones first)."""
        exact = self.get(reference)
        if exact:
            return exact
        by_path = self.source_document(str(Path(reference).resolve()))
        if by_path:
            return self.get(by_path)  # type: ignore[return-value]
        live = [d for d in self.documents() if d.status is not DocumentStatus.DELETED]
        matches = [
            d
            for d in live
            if d.document_id.startswith(reference)
            or reference in (d.source, d.source_path, Path(d.source).stem)
        ]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise WorkspaceError(f"no document matches {reference!r}")
        names = ", ".join(f"{d.document_id} ({d.source_path or d.source})" for d in matches[:5])
        raise WorkspaceError(f"{reference!r} matches {len(matches)} documents: {names}")


def _record(row: sqlite3.Row | Mapping[str, Any]) -> DocumentRecord:
    data = dict(row)
    data["warnings"] = json.loads(data["warnings"] or "[]")
    data["metadata"] = json.loads(data.get("metadata") or "{}")
    checked = data.get("verification")
    data["verification"] = json.loads(checked) if checked else None
    return DocumentRecord.model_validate(data)
