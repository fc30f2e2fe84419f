"""The local workspace: a folder of readable files plus a SQLite database with a BM25 index.

Layout under the root (default ./.drac):
    drac.sqlite                              documents, elements, plans, chunks, BM25 terms, ledger
    documents/<id>/source/<file name>        the ingested file, as given
    documents/<id>/normalised.pdf            the PDF an office/HTML/image source was rendered from
    documents/<id>/document.md               the converted Markdown
    documents/<id>/elements.jsonl            the element table
    documents/<id>/sections.json             the planner sections
    documents/<id>/plans/v0001.json          every plan version
    documents/<id>/chunks/v0001.jsonl        the chunks of every plan version

Files are written (atomically) before the database transaction that makes them current, so
a crash at any point leaves the previous state intact.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path, PurePosixPath

from drac.clock import utc_now
from drac.errors import WorkspaceError
from drac.local.database import Database
from drac.local.files import write_atomic
from drac.local.fts_index import FtsChunkIndex
from drac.local.lock import writer_lock
from drac.local.stores import (
    SqliteElementTable,
    SqliteLedger,
    SqlitePlanCache,
    SqlitePlanStore,
    SqliteVectorStore,
)
from drac.models import (
    Chunk,
    DocumentRecord,
    DocumentStatus,
    Element,
    LedgerEntry,
    PlanVersion,
    Section,
)
from drac.ports import ArtifactStore

DEFAULT_WORKSPACE = Path(".drac")
_RECORD_COLUMNS = (
    "document_id, source, source_path, sha256, tenant, format, status, pages, active_version,"
    " warnings, error, created_at, updated_at"
)


class FileArtifactStore(ArtifactStore):
    """Artifacts as files below a root folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        """The file a key maps to; keys are relative POSIX paths without '..'."""
        parts = PurePosixPath(key).parts
        if not parts or key.startswith("/") or ".." in parts:
            raise ValueError(f"invalid artifact key {key!r}")
        return self.root.joinpath(*parts)

    def put_bytes(self, key: str, data: bytes) -> None:
        """Write the file atomically."""
        write_atomic(self.path(key), data)

    def get_bytes(self, key: str) -> bytes:
        """Read the file; KeyError when absent."""
        try:
            return self.path(key).read_bytes()
        except FileNotFoundError as exc:
            raise KeyError(key) from exc


class Workspace:
    """All local state of drac, behind the same ports the cloud runtime implements."""

    def __init__(self, root: Path, *, create: bool = True) -> None:
        self.root = root
        if not create and not (root / "drac.sqlite").exists():
            raise WorkspaceError(f"no drac workspace at {root} (run `drac ingest` first)")
        self.db = Database(root / "drac.sqlite")
        self.artifacts = FileArtifactStore(root)
        self.elements = SqliteElementTable(self.db)
        self.plans = SqlitePlanStore(self.db)
        self.plan_cache = SqlitePlanCache(self.db)
        self.ledger = SqliteLedger(self.db)
        self.index = FtsChunkIndex(self.db)
        self.vectors = SqliteVectorStore(self.db)
        self._locks_guard = threading.Lock()
        self._document_locks: dict[str, threading.Lock] = {}

    def close(self) -> None:
        """Release the database."""
        self.db.close()

    def writing(self) -> AbstractContextManager[None]:
        """Hold the workspace's single-writer lock (another process writing fails fast)."""
        return writer_lock(self.root)

    def document_lock(self, document_id: str) -> threading.Lock:
        """A lock serialising work on one document within this process."""
        with self._locks_guard:
            return self._document_locks.setdefault(document_id, threading.Lock())

    # --- documents -------------------------------------------------------------------
    def documents(self) -> list[DocumentRecord]:
        """Every known document, oldest first."""
        rows = self.db.query(f"SELECT {_RECORD_COLUMNS} FROM documents ORDER BY created_at, source")
        return [_record(row) for row in rows]

    def get_document(self, document_id: str) -> DocumentRecord | None:
        """The document with this id, if known."""
        rows = self.db.query(
            f"SELECT {_RECORD_COLUMNS} FROM documents WHERE document_id = ?", (document_id,)
        )
        return _record(rows[0]) if rows else None

    def find_document(self, reference: str) -> DocumentRecord:
        """A document by id, unique id prefix, source file name or source path."""
        exact = self.get_document(reference)
        if exact:
            return exact
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

    def documents_at_path(self, source_path: str) -> list[DocumentRecord]:
        """Live documents ingested from this path (any content)."""
        rows = self.db.query(
            f"SELECT {_RECORD_COLUMNS} FROM documents WHERE source_path = ? AND status != ?",
            (source_path, DocumentStatus.DELETED.value),
        )
        return [_record(row) for row in rows]

    def save_document(self, record: DocumentRecord) -> None:
        """Insert or update a document record."""
        record.updated_at = utc_now()
        record.created_at = record.created_at or record.updated_at
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO documents ({_RECORD_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.document_id,
                    record.source,
                    record.source_path,
                    record.sha256,
                    record.tenant,
                    record.format,
                    record.status.value,
                    record.pages,
                    record.active_version,
                    json.dumps(record.warnings, ensure_ascii=False),
                    record.error,
                    record.created_at,
                    record.updated_at,
                ),
            )

    # --- artifacts -------------------------------------------------------------------
    @staticmethod
    def document_key(document_id: str, name: str) -> str:
        """Artifact key of a file of one document."""
        return f"documents/{document_id}/{name}"

    def get_markdown(self, document_id: str) -> str:
        """The document's converted Markdown."""
        return self.artifacts.get_text(self.document_key(document_id, "document.md"))

    def get_elements(self, document_id: str) -> list[Element]:
        """The document's elements in order."""
        return self.elements.get_elements(document_id)

    def get_sections(self, document_id: str) -> list[Section]:
        """The document's planner sections."""
        data = json.loads(self.artifacts.get_text(self.document_key(document_id, "sections.json")))
        return [Section.model_validate(item) for item in data]

    # --- commits ---------------------------------------------------------------------
    def commit_ingest(
        self,
        record: DocumentRecord,
        source: bytes,
        markdown: str,
        elements: Sequence[Element],
        sections: Sequence[Section],
        plan: PlanVersion,
        chunks: Sequence[Chunk],
        replaces: Sequence[DocumentRecord] = (),
        normalised_pdf: bytes | None = None,
    ) -> None:
        """Store a newly converted document with its first plan and make its chunks active.

        Documents in `replaces` (older content of the same path) are retired in the same
        transaction. `normalised_pdf` is the PDF a non-PDF source was rendered from.
        """
        key = self.document_key
        self.artifacts.put_bytes(key(record.document_id, f"source/{record.source}"), source)
        if normalised_pdf is not None:
            self.artifacts.put_bytes(key(record.document_id, "normalised.pdf"), normalised_pdf)
        self.artifacts.put_text(key(record.document_id, "document.md"), markdown)
        self.artifacts.put_text(
            key(record.document_id, "elements.jsonl"),
            "".join(element.model_dump_json() + "\n" for element in elements),
        )
        sections_json = json.dumps([s.model_dump(mode="json") for s in sections], indent=1)
        self.artifacts.put_text(key(record.document_id, "sections.json"), sections_json)
        self._write_plan_files(plan, chunks)
        with self.db.transaction():
            self.elements.put_elements(record.document_id, elements)
            self._activate(record, plan, chunks)
            for old in replaces:
                self.index.delete(old.document_id)
                old.status = DocumentStatus.DELETED
                old.warnings = [*old.warnings, f"replaced by {record.document_id}"]
                self.save_document(old)

    def commit_plan(
        self, record: DocumentRecord, plan: PlanVersion, chunks: Sequence[Chunk]
    ) -> None:
        """Store a new plan version of a stored document and make its chunks the active ones."""
        self._write_plan_files(plan, chunks)
        with self.db.transaction():
            self._activate(record, plan, chunks)

    def _write_plan_files(self, plan: PlanVersion, chunks: Sequence[Chunk]) -> None:
        name = f"v{plan.version:04d}"
        self.artifacts.put_text(
            self.document_key(plan.document_id, f"plans/{name}.json"),
            plan.model_dump_json(indent=1),
        )
        self.artifacts.put_text(
            self.document_key(plan.document_id, f"chunks/{name}.jsonl"),
            "".join(chunk.model_dump_json() + "\n" for chunk in chunks),
        )

    def _activate(self, record: DocumentRecord, plan: PlanVersion, chunks: Sequence[Chunk]) -> None:
        self.plans.save_plan(plan)
        self.index.delete(record.document_id)
        self.index.upsert(chunks)
        record.active_version = plan.version
        self.save_document(record)

    def delete_document(self, record: DocumentRecord) -> int:
        """Remove a document's chunks from the index and mark it DELETED (files are kept)."""
        with self.db.transaction():
            removed = self.index.delete(record.document_id)
            record.status = DocumentStatus.DELETED
            self.save_document(record)
        return removed

    # --- reads -----------------------------------------------------------------------
    def active_chunks(self, document_id: str | None = None) -> list[Chunk]:
        """Chunks of the active plan versions (of one document, or all)."""
        return self.index.chunks(document_id)

    def ledger_entries(self) -> list[LedgerEntry]:
        """Every recorded model call."""
        return self.ledger.entries()

    def record(self, entry: LedgerEntry) -> None:
        """Record one model call in the ledger."""
        self.ledger.record(entry)


def _record(row: object) -> DocumentRecord:
    data = dict(row)  # type: ignore[call-overload]
    data["warnings"] = json.loads(data["warnings"] or "[]")
    return DocumentRecord.model_validate(data)
