"""`drac search` over a workspace: BM25 from the stored term index, dense from vectors cached
in the workspace (embedded once per chunk text, normally at ingest: `embed_active_chunks`),
hybrid by the fusion of `drac.retrieval.rank.hybrid`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from drac.embedders.cache import CachingEmbedder
from drac.embedders.errors import EmbedderUnavailable
from drac.errors import ModelCallError
from drac.filters import MetadataFilter, predicate
from drac.local.workspace import Workspace
from drac.metadata import Metadata
from drac.models import Chunk
from drac.ports import Embedder, SearchHit
from drac.retrieval.rank import (
    Mode,
    Ranking,
    dense_ranking,
    hybrid,
    hybrid_weight,
    lexical_ranking,
    unit,
)

Announce = Callable[[int], None]
Progress = Callable[[int, int], None]
EMBED_BATCH = 64
"""Chunk texts embedded per call (the progress bar moves once per call): enough for the
embedded model's threads to share several forward batches."""


class SearchResult(BaseModel):
    """The hits of one query, best first, and how they were found."""

    model_config = ConfigDict(frozen=True)

    query: str
    mode: Mode
    embedder: str | None = None
    hits: tuple[SearchHit, ...]
    embedded: int = 0
    """Chunk and query texts embedded by this search (0 once everything is cached)."""
    note: str | None = None
    """Why the search fell back to BM25, when it did."""


class EmbedReport(BaseModel):
    """What `embed_active_chunks` did."""

    model_config = ConfigDict(frozen=True)

    embedder: str
    chunks: int
    embedded: int
    seconds: float


class _Announcing(Embedder):
    """Passes chunk texts to the real embedder, saying first how many (only uncached ones
    arrive), once the model has loaded."""

    def __init__(self, inner: Embedder, announce: Announce | None) -> None:
        self.inner = inner
        self.name = inner.name
        self.announce = announce
        self.count = 0

    @property
    def identity(self) -> str:
        return str(getattr(self.inner, "identity", self.inner.name))

    @property
    def dimension(self) -> int:  # type: ignore[override]
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if texts:
            load_model(self.inner)
            self.count += len(texts)
            if self.announce is not None:
                self.announce(len(texts))
        return self.inner.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self.count += len(texts)
        method = getattr(self.inner, "embed_queries", None)
        return method(texts) if callable(method) else self.inner.embed(texts)


def load_model(embedder: Embedder) -> None:
    """Load a local model now where the embedder has one to load (no-op otherwise)."""
    load = getattr(embedder, "load", None)
    if callable(load):
        load()


def default_mode(embedder: Embedder | None) -> Mode:
    """Hybrid when an embedder is configured, else BM25."""
    return Mode.BM25 if embedder is None else Mode.HYBRID


def search_workspace(
    ws: Workspace,
    query: str,
    *,
    mode: Mode,
    k: int = 6,
    embedder: Embedder | None = None,
    announce: Announce | None = None,
    fallback: bool = False,
    metadata_filter: MetadataFilter | None = None,
) -> SearchResult:
    """The k best active chunks for a query; `announce(n)` is told before n chunk texts are
    embedded (never for the query itself). With `fallback`, an embedder that cannot run turns
    the search into BM25 with a `note` saying why, instead of raising. With `metadata_filter`
    only chunks of documents whose metadata passes it are ranked (as OpenSearch filters
    inside its search); each hit carries its document's metadata.

    Raises ValueError when a dense or hybrid search has no embedder.
    """
    if mode is not Mode.BM25 and embedder is None:
        raise ValueError(f"--mode {mode.value} needs an embedder (--embedder or DRAC_EMBEDDER)")
    if not query.strip():
        return SearchResult(query=query, mode=mode, hits=())
    metadata = ws.document_metadata()
    chunks = ws.active_chunks()
    if metadata_filter is not None:
        passes = predicate(metadata_filter)
        passing = {document for document, values in metadata.items() if passes(values)}
        chunks = [c for c in chunks if c.document_id in passing]
    rankings: dict[Mode, Ranking] = {}
    if mode is not Mode.DENSE or fallback:
        terms = ws.index.term_index([c.chunk_id for c in chunks])
        rankings[Mode.BM25] = lexical_ranking(terms, query)
    counting: _Announcing | None = None
    if embedder is not None and mode is not Mode.BM25:
        counting = _Announcing(embedder, announce)
        cached = CachingEmbedder(counting, ws.vectors)
        try:
            vectors = cached.embed([c.text for c in chunks]) if chunks else []
            query_vector = cached.embed_queries([query])[0]
        except (EmbedderUnavailable, ModelCallError) as exc:
            if not fallback:
                raise
            reason = f"{embedder.name}: {exc}"
            return _bm25_result(query, chunks, rankings[Mode.BM25], k, reason, metadata)
        rankings[Mode.DENSE] = dense_ranking([unit(v) for v in vectors], query_vector)
    if mode is Mode.HYBRID:
        rankings[Mode.HYBRID] = hybrid(
            rankings[Mode.DENSE], rankings[Mode.BM25], hybrid_weight(embedder)
        )
    hits = _hits(chunks, rankings[mode][:k], metadata)
    return SearchResult(
        query=query,
        mode=mode,
        embedder=embedder.name if embedder is not None else None,
        hits=hits,
        embedded=counting.count if counting is not None else 0,
    )


def _hits(
    chunks: Sequence[Chunk], ranking: Ranking, metadata: dict[str, Metadata]
) -> tuple[SearchHit, ...]:
    return tuple(
        SearchHit(chunk=chunks[i], score=score, metadata=metadata.get(chunks[i].document_id, {}))
        for i, score in ranking
    )


def _bm25_result(
    query: str,
    chunks: Sequence[Chunk],
    ranking: Ranking,
    k: int,
    reason: str,
    metadata: dict[str, Metadata],
) -> SearchResult:
    hits = _hits(chunks, ranking[:k], metadata)
    return SearchResult(
        query=query, mode=Mode.BM25, hits=hits, note=f"BM25 only: embedder unavailable ({reason})"
    )


def embed_active_chunks(
    ws: Workspace, embedder: Embedder, progress: Progress | None = None, batch: int = EMBED_BATCH
) -> EmbedReport:
    """Embed the active chunk texts the workspace's vector cache lacks (only those), `batch`
    a call, telling `progress(done, total)` after each; what `drac search` then reads."""
    started = time.perf_counter()
    cached = CachingEmbedder(embedder, ws.vectors)
    texts = [c.text for c in ws.active_chunks()]
    missing = cached.missing(texts)
    if missing:
        load_model(embedder)
        if progress is not None:
            progress(0, len(missing))
    for start in range(0, len(missing), batch):
        cached.embed(missing[start : start + batch])
        if progress is not None:
            progress(min(start + batch, len(missing)), len(missing))
    return EmbedReport(
        embedder=embedder.name,
        chunks=len(texts),
        embedded=len(missing),
        seconds=time.perf_counter() - started,
    )
