"""`drac search` over a workspace: BM25 from the stored term index, dense from vectors cached
in the workspace (embedded once per chunk text), hybrid by reciprocal-rank fusion."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from drac.embedders.cache import CachingEmbedder
from drac.local.workspace import Workspace
from drac.ports import Embedder, SearchHit
from drac.retrieval.rank import Mode, Ranking, dense_ranking, fuse, lexical_ranking, unit

Announce = Callable[[int], None]


class SearchResult(BaseModel):
    """The hits of one query, best first, and how they were found."""

    model_config = ConfigDict(frozen=True)

    query: str
    mode: Mode
    embedder: str | None = None
    hits: tuple[SearchHit, ...]
    embedded: int = 0
    """Chunk and query texts embedded by this search (0 once everything is cached)."""


class _Announcing(Embedder):
    """Passes texts to the real embedder, saying first how many (only uncached ones arrive)."""

    def __init__(self, inner: Embedder, announce: Announce | None) -> None:
        self.inner = inner
        self.name = inner.name
        self.announce = announce
        self.count = 0

    @property
    def dimension(self) -> int:  # type: ignore[override]
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.count += len(texts)
        if self.announce is not None:
            self.announce(len(texts))
        return self.inner.embed(texts)


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
) -> SearchResult:
    """The k best active chunks for a query; `announce(n)` is told before n texts are embedded.

    Raises ValueError when a dense or hybrid search has no embedder.
    """
    if mode is not Mode.BM25 and embedder is None:
        raise ValueError(f"--mode {mode.value} needs an embedder (--embedder or DRAC_EMBEDDER)")
    if not query.strip():
        return SearchResult(query=query, mode=mode, hits=())
    chunks = ws.active_chunks()
    rankings: dict[Mode, Ranking] = {}
    if mode is not Mode.DENSE:
        terms = ws.index.term_index([c.chunk_id for c in chunks])
        rankings[Mode.BM25] = lexical_ranking(terms, query)
    counting: _Announcing | None = None
    if embedder is not None and mode is not Mode.BM25:
        counting = _Announcing(embedder, announce)
        cached = CachingEmbedder(counting, ws.vectors)
        vectors = cached.embed([c.text for c in chunks]) if chunks else []
        query_vector = cached.embed([query])[0]
        rankings[Mode.DENSE] = dense_ranking([unit(v) for v in vectors], query_vector)
    if mode is Mode.HYBRID:
        rankings[Mode.HYBRID] = fuse([rankings[Mode.DENSE], rankings[Mode.BM25]])
    hits = tuple(SearchHit(chunk=chunks[i], score=score) for i, score in rankings[mode][:k])
    return SearchResult(
        query=query,
        mode=mode,
        embedder=embedder.name if embedder is not None else None,
        hits=hits,
        embedded=counting.count if counting is not None else 0,
    )
