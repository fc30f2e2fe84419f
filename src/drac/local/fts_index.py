"""The local ChunkIndex: active chunks in SQLite with a BM25 term index.

The index stores each active chunk's term counts under `drac.retrieval`'s tokenisation, so
`drac search` ranks exactly as `drac eval` measures (one BM25, one tokeniser). Chunks indexed
by an older tokeniser, or by nothing (workspaces made before this index), are indexed again on
the next search.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from drac.errors import WorkspaceError
from drac.local.database import Database
from drac.models import Chunk
from drac.ports import ChunkIndex, SearchHit
from drac.retrieval.bm25 import Posting
from drac.retrieval.rank import lexical_ranking
from drac.retrieval.text import TOKENISER, bm25_terms

_BATCH = 500  # SQLite host parameters per statement stay well under its limit


class StoredTermIndex:
    """The workspace's BM25 term index over a list of chunks, positions as listed."""

    def __init__(self, db: Database, chunk_ids: Sequence[str], lengths: Mapping[str, int]):
        self.db = db
        self.positions = {chunk_id: i for i, chunk_id in enumerate(chunk_ids)}
        self.lengths = {c: lengths[c] for c in self.positions if c in lengths}
        self._avgdl = sum(self.lengths.values()) / len(self.lengths) if self.lengths else 0.0

    @property
    def size(self) -> int:
        """Number of indexed chunks."""
        return len(self.lengths)

    @property
    def avgdl(self) -> float:
        """Mean chunk length in terms."""
        return self._avgdl

    def postings(self, terms: Collection[str]) -> dict[str, list[Posting]]:
        """The postings of these terms among the listed chunks, in chunk order."""
        found: dict[str, list[Posting]] = {}
        wanted = list(terms)
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            rows = self.db.query(
                "SELECT term, chunk_id, tf FROM bm25_postings"
                f" WHERE term IN ({','.join('?' * len(batch))})",
                tuple(batch),
            )
            for row in rows:
                chunk_id = row["chunk_id"]
                if chunk_id in self.lengths:
                    posting = Posting(self.positions[chunk_id], row["tf"], self.lengths[chunk_id])
                    found.setdefault(row["term"], []).append(posting)
        for postings in found.values():
            postings.sort()
        return found


class FtsChunkIndex(ChunkIndex):
    """Active chunks, searchable with BM25 (the evaluation's tokens, stop-words dropped)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def upsert(
        self,
        chunks: Sequence[Chunk],
        vectors: Sequence[Sequence[float]] | None = None,
        metadata: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Add or replace chunks by chunk_id (vectors are cached elsewhere locally, metadata
        is read from the documents table at search)."""
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
                _index_terms(conn, chunk.chunk_id, chunk.text)

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
        ids = [(row[0],) for row in conn.execute(query, params)]
        conn.executemany("DELETE FROM bm25_postings WHERE chunk_id = ?", ids)
        conn.executemany("DELETE FROM bm25_docs WHERE chunk_id = ?", ids)
        conn.execute(f"DELETE FROM chunks WHERE {where}", params)
        return len(ids)

    def term_index(self, chunk_ids: Sequence[str] | None = None) -> StoredTermIndex:
        """The BM25 term index over these chunks (default: every active chunk, in order)."""
        self._refresh_terms()
        if chunk_ids is None:
            chunk_ids = [row[0] for row in self.db.query(_ACTIVE_IDS)]
        lengths = {
            row[0]: row[1] for row in self.db.query("SELECT chunk_id, length FROM bm25_docs")
        }
        return StoredTermIndex(self.db, chunk_ids, lengths)

    def _refresh_terms(self) -> None:
        if not self.db.query(_STALE + " LIMIT 1", (TOKENISER,)):
            return
        with self.db.transaction() as conn:
            for chunk_id, data in conn.execute(_STALE, (TOKENISER,)).fetchall():
                conn.execute("DELETE FROM bm25_postings WHERE chunk_id = ?", (chunk_id,))
                _index_terms(conn, chunk_id, self._chunk(chunk_id, data).text)

    def search(self, query: str, k: int = 6) -> list[SearchHit]:
        """The k best chunks by BM25, of the active plan versions of live documents."""
        ids = [row[0] for row in self.db.query(_ACTIVE_IDS)]
        ranking = lexical_ranking(self.term_index(ids), query)[:k]
        if not ranking:
            return []
        wanted = [ids[item] for item, _score in ranking]
        rows = self.db.query(
            f"SELECT chunk_id, data FROM chunks WHERE chunk_id IN ({','.join('?' * len(wanted))})",
            tuple(wanted),
        )
        data = {row[0]: row[1] for row in rows}
        return [
            SearchHit(chunk=self._chunk(chunk_id, data[chunk_id]), score=score)
            for chunk_id, (_item, score) in zip(wanted, ranking, strict=True)
            if chunk_id in data
        ]

    def chunks(self, document_id: str | None = None) -> list[Chunk]:
        """Chunks of the active plan versions of live documents (of one document, or all),
        in document and chunk order."""
        where, params = "", tuple[str, ...]()
        if document_id is not None:
            where, params = "WHERE c.document_id = ?", (document_id,)
        rows = self.db.query(
            f"SELECT c.chunk_id AS chunk_id, c.data AS data FROM chunks c {_ACTIVE_JOIN} {where}"
            " ORDER BY c.document_id, c.seq",
            params,
        )
        return [self._chunk(row["chunk_id"], row["data"]) for row in rows]

    def _chunk(self, chunk_id: str, data: str) -> Chunk:
        """A stored chunk row; a damaged one is a WorkspaceError saying how to write it anew."""
        try:
            return Chunk.model_validate_json(data)
        except ValueError as exc:
            document = chunk_id.split("-")[0]
            raise WorkspaceError(
                f"{self.db.path}: the stored chunk {chunk_id} is damaged ({_first_line(exc)});"
                f" `drac replan {document}` writes the document's chunks again"
            ) from exc

    def stored_chunks(self) -> list[tuple[str, int]]:
        """(document id, plan version) of every chunk stored, active or not (for checks)."""
        rows = self.db.query("SELECT document_id, plan_version FROM chunks ORDER BY chunk_id")
        return [(row["document_id"], int(row["plan_version"])) for row in rows]


# Only the active plan version of a live document is searched or exported, whatever else a
# failed or concurrent run left in the table.
_ACTIVE_JOIN = (
    "JOIN documents d ON d.document_id = c.document_id AND d.active_version = c.plan_version"
    " AND d.status IN ('INDEXED', 'PARTIAL')"
)
_ACTIVE_IDS = f"SELECT c.chunk_id FROM chunks c {_ACTIVE_JOIN} ORDER BY c.document_id, c.seq"
_STALE = (
    "SELECT c.chunk_id, c.data FROM chunks c LEFT JOIN bm25_docs d ON d.chunk_id = c.chunk_id"
    " WHERE d.chunk_id IS NULL OR d.tokeniser != ?"
)


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _index_terms(conn: sqlite3.Connection, chunk_id: str, text: str) -> None:
    terms = bm25_terms(text)
    conn.execute(
        "INSERT OR REPLACE INTO bm25_docs (chunk_id, length, tokeniser) VALUES (?, ?, ?)",
        (chunk_id, len(terms), TOKENISER),
    )
    conn.executemany(
        "INSERT INTO bm25_postings (term, chunk_id, tf) VALUES (?, ?, ?)",
        [(term, chunk_id, tf) for term, tf in Counter(terms).items()],
    )
