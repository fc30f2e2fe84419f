"""The local workspace: a folder of readable files plus a SQLite database with a BM25 index.

Layout under the root (default ./.drac):
    drac.sqlite                              documents, elements, plans, chunks, BM25 terms, ledger
    documents/<id>/source/<file name>        the ingested file, as given
    documents/<id>/normalised.pdf            the PDF an office/HTML/image source was rendered from
    documents/<id>/document.md               the converted Markdown
    documents/<id>/batches.json              model-converted batches, for the next version
    documents/<id>/elements.jsonl            the element table
    documents/<id>/sections.json             the planner sections
    documents/<id>/plans/v0001.json          every plan version
    documents/<id>/chunks/v0001.jsonl        the chunks of every plan version

Files are written (atomically) before the database transaction that makes them current, so
a crash at any point leaves the previous state intact. A document is its content; the paths
it was ingested from are its sources (the `sources` table): the latest ingest of a path wins,
and a document no path holds any more is retired.
"""

from __future__ import annotations

import errno
import json
import shlex
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from drac.commit import Activation, commit_plan, release_source, retire_if_orphaned
from drac.errors import WorkspaceError
from drac.local.database import DAMAGED_DATABASE_FIX, DISK_FULL_FIX, Database
from drac.local.errors import DamagedFile, DiskFullError
from drac.local.files import remove_temporary_files, write_atomic
from drac.local.fts_index import FtsChunkIndex
from drac.local.lock import writer_lock
from drac.local.registry import SqliteDocumentRegistry
from drac.local.stores import (
    SqliteElementTable,
    SqliteLedger,
    SqlitePlanCache,
    SqlitePlanStore,
    SqliteVectorStore,
)
from drac.local.trust import (
    DATABASE,
    TEMPORARY_FOLDER,
    checked_inside,
    refuse_links_at_top,
    remember_workspace,
)
from drac.metadata import Metadata
from drac.models import (
    Chunk,
    DocumentRecord,
    Element,
    LedgerEntry,
    ParsedDocument,
    PlanVersion,
    Section,
    Strategy,
)
from drac.ports import ArtifactStore


class FileArtifactStore(ArtifactStore):
    """Artifacts as files below a root folder; each written through a temporary file in the
    root's temporary folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.temporary_folder = root / TEMPORARY_FOLDER

    def clear_temporary(self) -> None:
        """Remove what interrupted writes left. The first time (a workspace of an earlier
        drac, whose temporary files sat beside their targets) the documents are swept too."""
        if not self.temporary_folder.is_dir():
            remove_temporary_files(self.root / "documents")
            self.temporary_folder.mkdir(parents=True, exist_ok=True)
        remove_temporary_files(self.temporary_folder, every_file=True)

    def path(self, key: str) -> Path:
        """The file a key maps to; keys are relative POSIX paths without '..', and no folder
        on the way may be a symbolic link (LinkInWorkspaceError)."""
        return checked_inside(self.root, key)

    def put_bytes(self, key: str, data: bytes) -> None:
        """Write the file atomically (DiskFullError when there is no space for it)."""
        path = self.path(key)
        try:
            write_atomic(path, data, self.temporary_folder)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise DiskFullError(
                    f"{path}: no space left on the device; {DISK_FULL_FIX}"
                ) from exc
            raise

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
        database = root / DATABASE
        if not create and not database.exists():
            raise WorkspaceError(f"no drac workspace at {root} (run `drac ingest` first)")
        refuse_links_at_top(root)
        _refuse_an_emptied_database(database, create)
        new = not database.exists()
        self.db = Database(database)
        if new:
            remember_workspace(root)
        self.artifacts = FileArtifactStore(root)
        self.registry = SqliteDocumentRegistry(self.db)
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

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the workspace's single-writer lock (another process writing fails fast);
        temporary files an interrupted writer left are removed first."""
        with writer_lock(self.root):
            self.artifacts.clear_temporary()
            yield

    def document_lock(self, document_id: str) -> threading.Lock:
        """A lock serialising work on one document within this process."""
        with self._locks_guard:
            return self._document_locks.setdefault(document_id, threading.Lock())

    # --- documents -------------------------------------------------------------------
    def documents(self) -> list[DocumentRecord]:
        """Every known document, oldest first."""
        return self.registry.documents()

    def has_live_documents(self) -> bool:
        """Whether any document is searchable (INDEXED or PARTIAL), in one cheap query."""
        rows = self.db.query(
            "SELECT 1 FROM documents WHERE status IN ('INDEXED', 'PARTIAL') LIMIT 1"
        )
        return bool(rows)

    def document_metadata(self) -> dict[str, Metadata]:
        """The metadata of every live document, by document id (one query)."""
        rows = self.db.query(
            "SELECT document_id, metadata FROM documents WHERE status IN ('INDEXED', 'PARTIAL')"
        )
        found: dict[str, Metadata] = {}
        for row in rows:
            try:
                found[row["document_id"]] = json.loads(row["metadata"] or "{}")
            except ValueError as exc:
                raise WorkspaceError(
                    f"{self.db.path}: the metadata of {row['document_id']} is damaged; "
                    f"{self.repair_hint(row['document_id'])}"
                ) from exc
        return found

    def get_document(self, document_id: str) -> DocumentRecord | None:
        """The document with this id, if known."""
        return self.registry.get(document_id)

    def find_document(self, reference: str) -> DocumentRecord:
        """A document by id, unique id prefix, source file name, stem or path."""
        return self.registry.find(reference)

    def save_document(self, record: DocumentRecord) -> None:
        """Insert or update a document record."""
        self.registry.put(record)

    # --- settings --------------------------------------------------------------------
    def saved_strategy(self) -> Strategy | None:
        """The strategy the workspace remembers (of its last full re-plan), if any."""
        rows = self.db.query("SELECT value FROM settings WHERE name = 'strategy'")
        if not rows:
            return None
        try:
            return Strategy.model_validate_json(rows[0]["value"])
        except ValueError:
            return None  # written by another drac version: plan with the default

    def save_strategy(self, strategy: Strategy) -> None:
        """Remember the strategy new ingests and re-plans use when none is asked for."""
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO settings (name, value) VALUES ('strategy', ?)",
                (strategy.model_dump_json(),),
            )

    def save_planning_attempt(self, document_id: str, attempt: Mapping[str, Any] | None) -> None:
        """Remember a document's last planning attempt that stored no plan version (None
        forgets it: the attempt stored one)."""
        name = f"planning-attempt:{document_id}"
        with self.db.transaction() as conn:
            if attempt is None:
                conn.execute("DELETE FROM settings WHERE name = ?", (name,))
            else:
                conn.execute(
                    "INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)",
                    (name, json.dumps(dict(attempt))),
                )

    def planning_attempt(self, document_id: str) -> dict[str, Any] | None:
        """The document's last planning attempt that stored no plan version, if any."""
        rows = self.db.query(
            "SELECT value FROM settings WHERE name = ?", (f"planning-attempt:{document_id}",)
        )
        try:
            found = json.loads(rows[0]["value"]) if rows else None
        except ValueError:
            return None
        return found if isinstance(found, dict) else None

    # --- artifacts -------------------------------------------------------------------
    @staticmethod
    def document_key(document_id: str, name: str) -> str:
        """Artifact key of a file of one document."""
        return f"documents/{document_id}/{name}"

    def get_markdown(self, document_id: str) -> str:
        """The document's converted Markdown (DamagedFile, a KeyError, when it is gone)."""
        return self._document_text(document_id, "document.md")

    def get_elements(self, document_id: str) -> list[Element]:
        """The document's elements in order."""
        return self.elements.get_elements(document_id)

    def get_sections(self, document_id: str) -> list[Section]:
        """The document's planner sections."""
        text = self._document_text(document_id, "sections.json")
        try:
            return [Section.model_validate(item) for item in json.loads(text)]
        except (ValueError, TypeError) as exc:
            raise self._damaged(document_id, "sections.json", exc) from exc

    def plan_chunk_file(self, document_id: str, version: int) -> list[Chunk]:
        """The chunks of one plan version as its file holds them (DamagedFile when the file
        is missing or does not parse)."""
        name = f"chunks/v{version:04d}.jsonl"
        lines = self._document_text(document_id, name, replan=True).splitlines()
        try:
            return [Chunk.model_validate_json(line) for line in lines if line.strip()]
        except ValueError as exc:
            raise self._damaged(document_id, name, exc, replan=True) from exc

    def repair_hint(self, document_id: str, *, replan: bool = False) -> str:
        """What to run to write a document's files again: a re-plan when only plans and
        chunks are needed, else a forced ingest of its file."""
        if replan:
            return f"`drac replan {document_id[:12]}` writes a new plan version"
        record = self.registry.get(document_id)
        source = (record.source_path or record.source) if record else document_id
        return f"`drac ingest --force {shlex.quote(source)}` converts it again"

    def _document_text(self, document_id: str, name: str, *, replan: bool = False) -> str:
        key = self.document_key(document_id, name)
        try:
            return self.artifacts.get_text(key)
        except KeyError as exc:
            path = self.artifacts.path(key)
            raise DamagedFile(
                f"{path} is missing; {self.repair_hint(document_id, replan=replan)}"
            ) from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise self._damaged(document_id, name, exc, replan=replan) from exc

    def _damaged(
        self, document_id: str, name: str, error: Exception, *, replan: bool = False
    ) -> DamagedFile:
        path = self.artifacts.path(self.document_key(document_id, name))
        reason = (str(error).splitlines() or [type(error).__name__])[0][:200]
        return DamagedFile(
            f"{path} is damaged ({reason}); {self.repair_hint(document_id, replan=replan)}"
        )

    # --- commits ---------------------------------------------------------------------
    def commit_ingest(
        self,
        record: DocumentRecord,
        source: bytes,
        parsed: ParsedDocument,
        plan: PlanVersion,
        chunks: Sequence[Chunk],
        normalised_pdf: bytes | None = None,
    ) -> Activation:
        """Store a newly converted document with its first plan, make its chunks active, make
        its path hold it, and retire the document the path held before if no path holds that
        one any more: one transaction, after the files are written. `normalised_pdf` is the
        PDF a non-PDF source was rendered from. On any failure the files it created are
        removed again."""
        created: list[str] = []
        try:
            self._write_ingest_files(record, source, parsed, normalised_pdf, created)
            self._write_plan_files(plan, chunks, created)
            return self._activate_ingest(record, parsed, plan, chunks)
        except BaseException:
            self._remove_new_files(record.document_id, created)
            raise

    def _write_ingest_files(
        self,
        record: DocumentRecord,
        source: bytes,
        parsed: ParsedDocument,
        normalised_pdf: bytes | None,
        created: list[str],
    ) -> None:
        key = self.document_key
        document_id = record.document_id
        self._written_once(created, key(document_id, f"source/{record.source}"), source)
        if normalised_pdf is not None:
            self._written_once(created, key(document_id, "normalised.pdf"), normalised_pdf)
        self._written_once(created, key(document_id, "document.md"), parsed.markdown.encode())
        elements = "".join(element.model_dump_json() + "\n" for element in parsed.elements)
        self._written_once(created, key(document_id, "elements.jsonl"), elements.encode())
        sections = json.dumps([s.model_dump(mode="json") for s in parsed.sections], indent=1)
        self._written_once(created, key(document_id, "sections.json"), sections.encode())

    def _activate_ingest(
        self,
        record: DocumentRecord,
        parsed: ParsedDocument,
        plan: PlanVersion,
        chunks: Sequence[Chunk],
    ) -> Activation:
        with self.db.transaction():
            order = self.registry.next_order()
            record.owner = f"ingest:{order}"
            record.attempt += 1
            self.registry.put(record)
            self.elements.put_elements(record.document_id, parsed.elements)
            activation = commit_plan(
                self.registry,
                self.plans,
                self.index,
                plan,
                chunks,
                record.status,
                owner=record.owner,
            )
            self.add_source(record.source_path or record.source, record.document_id, order)
        return activation

    def _written_once(self, keys: list[str], key: str, data: bytes) -> None:
        """Write an artifact and remember it when it is new (to remove it on failure)."""
        if not self.artifacts.path(key).exists():
            keys.append(key)
        self.artifacts.put_bytes(key, data)

    def _remove_new_files(self, document_id: str, keys: Sequence[str]) -> None:
        """Remove the files a failed commit created, and the document's folders it left
        empty: a document that failed leaves nothing behind."""
        for key in keys:
            self.artifacts.path(key).unlink(missing_ok=True)
        folder = self.root / "documents" / document_id
        for parent in sorted({self.artifacts.path(k).parent for k in keys}, reverse=True):
            while parent != folder.parent and parent.is_relative_to(folder):
                try:
                    parent.rmdir()
                except OSError:
                    break
                parent = parent.parent

    def commit_plan(self, plan: PlanVersion, chunks: Sequence[Chunk]) -> Activation:
        """Store a new plan version of a live document and make its chunks the active ones."""
        created: list[str] = []
        try:
            self._write_plan_files(plan, chunks, created)
            with self.db.transaction():
                record = self.registry.get(plan.document_id)
                if record is None:
                    raise WorkspaceError(f"document {plan.document_id} is not in the workspace")
                return commit_plan(
                    self.registry, self.plans, self.index, plan, chunks, record.status
                )
        except BaseException:
            self._remove_new_files(plan.document_id, created)
            raise

    def add_source(self, path: str, document_id: str, order: str | None = None) -> bool:
        """Make `path` hold the document; retire the document it held before when no path
        holds that one any more. Return False when a later write of the path is recorded."""
        with self.db.transaction():
            order = order or self.registry.next_order()
            claim = self.registry.claim_source(path, document_id, order)
            if claim.previous is not None:
                retire_if_orphaned(self.registry, self.index, claim.previous)
            return claim.claimed

    def remove_source(self, path: str) -> str | None:
        """Forget a path; return the id of the document retired because no path holds it."""
        with self.db.transaction():
            return release_source(self.registry, self.index, path, self.registry.next_order())

    def _write_plan_files(
        self, plan: PlanVersion, chunks: Sequence[Chunk], created: list[str]
    ) -> None:
        name = f"v{plan.version:04d}"
        self._written_once(
            created,
            self.document_key(plan.document_id, f"plans/{name}.json"),
            plan.model_dump_json(indent=1).encode(),
        )
        self._written_once(
            created,
            self.document_key(plan.document_id, f"chunks/{name}.jsonl"),
            "".join(chunk.model_dump_json() + "\n" for chunk in chunks).encode(),
        )

    # --- reads -----------------------------------------------------------------------
    def active_chunks(self, document_id: str | None = None) -> list[Chunk]:
        """Chunks of the active plan versions of live documents (of one document, or all)."""
        return self.index.chunks(document_id)

    def ledger_entries(self) -> list[LedgerEntry]:
        """Every recorded model call."""
        return self.ledger.entries()

    def record(self, entry: LedgerEntry) -> None:
        """Record one model call in the ledger."""
        self.ledger.record(entry)


def _refuse_an_emptied_database(database: Path, create: bool) -> None:
    """A 0-byte database beside stored documents is damage, not an empty workspace (SQLite
    would read it as one, and `status` would say "no documents")."""
    try:
        empty = database.stat().st_size == 0
    except FileNotFoundError:
        return
    holds_documents = (database.parent / "documents").is_dir()
    if empty and holds_documents:
        raise WorkspaceError(
            f"{database} is empty (0 bytes) although the workspace holds documents; "
            f"{DAMAGED_DATABASE_FIX}"
        )
    if empty and not create:
        raise WorkspaceError(
            f"no drac workspace at {database.parent} ({database.name} is empty; "
            "run `drac ingest` first)"
        )
