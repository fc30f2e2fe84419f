"""Evaluate chunk sets against queries: restrict, retrieve, judge, score, group."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from drac.embedders.cache import embed_queries
from drac.evaluation.chunksets import ChunkSet
from drac.evaluation.judge import THRESHOLD, content_words, facts_covered
from drac.evaluation.metrics import QueryMetrics, RankedJudgement, query_metrics, summarise
from drac.evaluation.queries import Query, document_key
from drac.ports import Embedder
from drac.retrieval.bm25 import MemoryTermIndex
from drac.retrieval.rank import (
    Ranking,
    dense_ranking,
    hybrid,
    hybrid_weight,
    lexical_ranking,
    positions,
    unit,
)
from drac.retrieval.text import bm25_terms


class QuerySelection(BaseModel):
    """Which queries an evaluation used, and why the others were left out."""

    model_config = ConfigDict(frozen=True)

    queries: tuple[Query, ...]
    total: int
    documents_in_common: int
    dropped_missing_documents: int
    companies: tuple[str, ...]
    dropped: tuple[str, ...] = ()  # each query left out, with the document names not found
    other_companies: tuple[tuple[str, int], ...] = ()
    """Companies none of whose queries could be used, with their query counts (a chunk set of
    one company's documents): their queries are counted, not named one by one."""

    @property
    def note(self) -> str:
        """One sentence saying how the queries were restricted."""
        if not self.dropped_missing_documents:
            return (
                f"All {self.total} queries used: every supporting document is in every chunk set."
            )
        named = f" Left out: {'; '.join(self.dropped)}." if self.dropped else ""
        if self.other_companies:
            others = ", ".join(f"{name} ({count})" for name, count in self.other_companies)
            named += f" No query of {others} could be used."
        return (
            f"{len(self.queries)} of {self.total} queries used (companies: "
            f"{', '.join(self.companies) or 'none'}): {self.dropped_missing_documents} "
            f"left out because a supporting document is missing from a chunk set "
            f"({self.documents_in_common} documents are in every chunk set).{named}"
        )


class SystemResult(BaseModel):
    """The scores of one chunk set under one retriever."""

    model_config = ConfigDict(frozen=True)

    chunk_set: str
    retriever: str
    chunks: int
    mean_chars: float
    overall: dict[str, float]
    by_query_type: dict[str, dict[str, float]]
    by_company: dict[str, dict[str, float]]

    @property
    def label(self) -> str:
        """`chunk set / retriever` as shown in tables."""
        return f"{self.chunk_set} / {self.retriever}"


class EvalReport(BaseModel):
    """Everything `drac eval` reports."""

    model_config = ConfigDict(frozen=True)

    k: int
    threshold: float
    embedder: str | None
    retrievers: tuple[str, ...]
    selection_note: str
    queries_used: int
    queries_total: int
    group_sizes: dict[str, dict[str, int]]
    results: tuple[SystemResult, ...]
    notes: tuple[str, ...] = ()


def select_queries(queries: Sequence[Query], chunk_sets: Sequence[ChunkSet]) -> QuerySelection:
    """Keep the queries whose supporting documents are all present in every chunk set."""
    common: frozenset[str] | None = None
    for chunk_set in chunk_sets:
        common = chunk_set.documents if common is None else common & chunk_set.documents
    common = common or frozenset()
    kept = tuple(q for q in queries if q.document_keys <= common)
    companies = tuple(sorted({q.company for q in kept}))
    left_out = [q for q in queries if not q.document_keys <= common]
    # a company with no usable query is named once with its count, not query by query
    others = Counter(q.company for q in left_out if q.company not in companies)
    dropped = tuple(_why_dropped(q, common) for q in left_out if q.company in companies)
    return QuerySelection(
        queries=kept,
        total=len(queries),
        documents_in_common=len(common),
        dropped_missing_documents=len(queries) - len(kept),
        companies=companies,
        dropped=dropped,
        other_companies=tuple(sorted(others.items())),
    )


def _why_dropped(query: Query, common: frozenset[str]) -> str:
    """'"<query start>" (Acme): no "Some File.md"' for a query left out."""
    missing = sorted({f.filename for f in query.facts if document_key(f.filename) not in common})
    text = query.text if len(query.text) <= 60 else query.text[:59].rstrip() + "…"
    names = ", ".join(repr(name) for name in missing)
    return f"{text!r} ({query.company}): no {names}"


def judge_rankings(
    chunk_set: ChunkSet,
    queries: Sequence[Query],
    rankings: Sequence[Sequence[int]],
    k: int,
    threshold: float = THRESHOLD,
) -> list[RankedJudgement]:
    """Judge the top-k of each query's ranking, counting relevant chunks in the whole set."""
    chunk_words = [content_words(c.text) for c in chunk_set.chunks]
    judgements: list[RankedJudgement] = []
    for query, ranking in zip(queries, rankings, strict=True):
        facts = [content_words(f.text) for f in query.facts]
        relevant = sum(1 for words in chunk_words if facts_covered(facts, words, threshold))
        covered = tuple(facts_covered(facts, chunk_words[i], threshold) for i in ranking[:k])
        judgements.append(
            RankedJudgement(covered=covered, fact_count=len(facts), relevant_in_set=relevant)
        )
    return judgements


def cutoffs(k: int) -> tuple[int, ...]:
    """The recall/precision cut-offs reported for top-k: 3 and k (just k when k <= 3)."""
    return (3, k) if k > 3 else (k,)


def _grouped(
    queries: Sequence[Query], rows: Sequence[QueryMetrics], key: Callable[[Query], str], k: int
) -> dict[str, dict[str, float]]:
    groups: dict[str, list[QueryMetrics]] = {}
    for query, row in zip(queries, rows, strict=True):
        groups.setdefault(key(query), []).append(row)
    return {name: summarise(items, cutoffs(k)) for name, items in sorted(groups.items())}


def score_system(
    chunk_set: ChunkSet,
    retriever: str,
    queries: Sequence[Query],
    rankings: Sequence[Sequence[int]],
    k: int,
    threshold: float = THRESHOLD,
) -> SystemResult:
    """Judge and score one chunk set's rankings, overall, per query type and per company."""
    judgements = judge_rankings(chunk_set, queries, rankings, k, threshold)
    rows = [query_metrics(j, cutoffs(k), ndcg_k=k) for j in judgements]
    sizes = [len(c.text) for c in chunk_set.chunks]
    return SystemResult(
        chunk_set=chunk_set.name,
        retriever=retriever,
        chunks=len(sizes),
        mean_chars=(sum(sizes) / len(sizes)) if sizes else 0.0,
        overall=summarise(rows, cutoffs(k)),
        by_query_type=_grouped(queries, rows, lambda q: q.query_type, k),
        by_company=_grouped(queries, rows, lambda q: q.company, k),
    )


def evaluate(
    chunk_sets: Sequence[ChunkSet],
    queries: Sequence[Query],
    embedder: Embedder | None = None,
    k: int = 6,
    threshold: float = THRESHOLD,
) -> EvalReport:
    """Evaluate every chunk set with BM25 and, given an embedder, dense cosine and hybrid.

    Queries are first restricted to those whose supporting documents all appear in every
    chunk set, so all systems answer the same questions.
    """
    selection = select_queries(queries, chunk_sets)
    used = list(selection.queries)
    texts = [q.text for q in used]
    retrievers = ("bm25",) if embedder is None else ("dense", "bm25", "hybrid")
    query_vectors = embed_queries(embedder, texts) if embedder is not None and used else []
    results: list[SystemResult] = []
    for chunk_set in chunk_sets:
        by_name = rank_chunk_set([c.text for c in chunk_set.chunks], texts, embedder, query_vectors)
        for name in retrievers:
            rankings = [positions(ranking) for ranking in by_name[name]]
            results.append(score_system(chunk_set, name, used, rankings, k, threshold))
    notes: list[str] = []
    if embedder is None:
        notes.append(
            "No embedder configured: BM25 only (set DRAC_EMBEDDER or --embedder for dense "
            "and hybrid retrieval). Bag-of-words scores favour long overlapping windows."
        )
    group_sizes = {
        "query_type": _counts(used, lambda q: q.query_type),
        "company": _counts(used, lambda q: q.company),
    }
    return EvalReport(
        k=k,
        threshold=threshold,
        embedder=embedder.name if embedder is not None else None,
        retrievers=retrievers,
        selection_note=selection.note,
        queries_used=len(used),
        queries_total=selection.total,
        group_sizes=group_sizes,
        results=tuple(results),
        notes=tuple(notes),
    )


def rank_chunk_set(
    chunk_texts: Sequence[str],
    query_texts: Sequence[str],
    embedder: Embedder | None,
    query_vectors: Sequence[Sequence[float]],
) -> dict[str, list[Ranking]]:
    """Every query's ranking of the chunks by BM25 and, given an embedder, dense and hybrid
    (the rankings `drac search` makes: `drac.retrieval`)."""
    if not query_texts:
        return {"bm25": [], "dense": [], "hybrid": []}
    index = MemoryTermIndex([bm25_terms(text) for text in chunk_texts])
    lexical = [lexical_ranking(index, query) for query in query_texts]
    if embedder is None:
        return {"bm25": lexical}
    units = [unit(vector) for vector in embedder.embed(list(chunk_texts))]
    dense = [dense_ranking(units, vector) for vector in query_vectors]
    weight = hybrid_weight(embedder)
    fused = [hybrid(d, b, weight) for d, b in zip(dense, lexical, strict=True)]
    return {"bm25": lexical, "dense": dense, "hybrid": fused}


def _counts(queries: Sequence[Query], key: Callable[[Query], str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for query in queries:
        counts[key(query)] = counts.get(key(query), 0) + 1
    return dict(sorted(counts.items()))
