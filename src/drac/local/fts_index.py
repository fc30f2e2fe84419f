"""The local ChunkIndex: active chunks in SQLite with an FTS5 (BM25) full-text index."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

from drac.local.database import Database
from drac.models import Chunk
from drac.ports import ChunkIndex, SearchHit

_WORD = re.compile(r"\w+", re.UNICODE)
_ACTIVE_JOIN = (
    "JOIN documents d ON d.document_id = c.document_id AND d.active_version = c.plan_version"
    " AND d.status IN ('INDEXED', 'PARTIAL')"
)


def fts_query(text: str) -> str:
    """An FTS5 query matching any of the words of free text (quoted, so no syntax leaks)."""
    words = dict.fromkeys(word.lower() for word in _WORD.findall(text))
    return " OR ".join(f'"{word}"' for word in words)


class FtsChunkIndex(ChunkIndex):
    """Active chunks, searchable with BM25 over breadcrumb and text."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def upsert(
        self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]] | None = None
    ) -> None:
        """Add or replace chunks by chunk_id (vectors are not used locally)."""
        with self.db.transaction() as conn:
            for seq, chunk in enumerate(chunks):
                self._remove(conn, "chunk_id = ?", (chunk.chunk_id,))
                conn.execute(
                    "INSERT INTO chunks (chunk_id, document_id, plan_version, seq, data)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (
                        chunk.chunk_id,
                        chunk.document_id,
                        chunk.plan_version,
                        seq,
                        chunk.model_dump_json(),
                    ),
                )
                conn.execute(
                    "INSERT INTO chunks_fts (chunk_id, breadcrumb, text) VALUES (?, ?, ?)",
                    (chunk.chunk_id, chunk.breadcrumb, chunk.text),
                )

    def delete(self, document_id: str, plan_version: int | None = None) -> int:
        """Remove a document's chunks (one version or all); return how many."""
        with self.db.transaction() as conn:
            if plan_version is None:
                return self._remove(conn, "document_id = ?", (document_id,))
            return self._remove(
                conn, "document_id = ? AND plan_version = ?", (document_id, plan_version)
            )

    def delete_other_versions(self, document_id: str, keep_version: int) -> int:
        """Remove the document's chunks of every version but `keep_version`."""
        with self.db.transaction() as conn:
            return self._remove(
                conn, "document_id = ? AND plan_version != ?", (document_id, keep_version)
            )

    @staticmethod
    def _remove(conn: sqlite3.Connection, where: str, params: tuple[object, ...]) -> int:
        query = f"SELECT chunk_id FROM chunks WHERE {where}"
        ids = [row[0] for row in conn.execute(query, params)]
        conn.executemany("DELETE FROM chunks_fts WHERE chunk_id = ?", [(i,) for i in ids])
        conn.execute(f"DELETE FROM chunks WHERE {where}", params)
        return len(ids)

    def search(self, query: str, k: int = 6) -> list[SearchHit]:
        """The k best chunks by BM25 (breadcrumb weighted half of text), of the active plan
        versions of live documents only."""
        match = fts_query(query)
        if not match:
            return []
        rows = self.db.query(
            "SELECT c.data AS data, bm25(chunks_fts, 0.0, 0.5, 1.0) AS score"
            " FROM chunks_fts JOIN chunks c ON c.chunk_id = chunks_fts.chunk_id"
            f" {_ACTIVE_JOIN} WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?",
            (match, k),
        )
        return [
            SearchHit(chunk=Chunk.model_validate_json(row["data"]), score=-float(row["score"]))
            for row in rows
        ]

    def chunks(self, document_id: str | None = None) -> list[Chunk]:
        """Chunks of the active plan versions of live documents (of one document, or all),
        in document and chunk order."""
        where, params = "", ()
        if document_id is not None:
            where, params = "WHERE c.document_id = ?", (document_id,)
        rows = self.db.query(
            f"SELECT c.data AS data FROM chunks c {_ACTIVE_JOIN} {where}"
            " ORDER BY c.document_id, c.seq",
            params,
        )
        return [Chunk.model_validate_json(row["data"]) for row in rows]

    def stored_chunks(self) -> list[tuple[str, int]]:
        """(document id, plan version) of every chunk stored, active or not (for checks)."""
        rows = self.db.query("SELECT document_id, plan_version FROM chunks ORDER BY chunk_id")
        return [(row["document_id"], int(row["plan_version"])) for row in rows]
