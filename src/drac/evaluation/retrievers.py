"""Retrievers used by evaluation: Okapi BM25, dense cosine, and reciprocal rank fusion.

Every retriever returns, per query, chunk indexes best first (ties broken by chunk order),
over the whole chunk set so that fusion sees complete rankings.
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Sequence

from drac.evaluation.judge import STOP_WORDS, tokens
from drac.ports import Embedder

RRF_K = 60


def bm25_terms(text: str) -> list[str]:
    """Index terms for BM25: the judge's tokens without stop-words (repetitions kept)."""
    return [t for t in tokens(text) if t not in STOP_WORDS]


class BM25:
    """Okapi BM25 over a fixed list of documents.

    score(q, d) = sum over query terms t of
        idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    with idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)) (never negative). A query term
    repeated in the query counts once per occurrence.
    """

    def __init__(self, documents: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75):
        self.k1 = k1
        self.b = b
        self.size = len(documents)
        self.lengths = [len(d) for d in documents]
        self.avgdl = (sum(self.lengths) / self.size) if self.size else 0.0
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for index, doc in enumerate(documents):
            for term, tf in Counter(doc).items():
                self.postings.setdefault(term, []).append((index, tf))

    def idf(self, term: str) -> float:
        """Inverse document frequency of a term (0 for a term in no document)."""
        n = len(self.postings.get(term, ()))
        if n == 0:
            return 0.0
        return math.log(1.0 + (self.size - n + 0.5) / (n + 0.5))

    def scores(self, query: Sequence[str]) -> list[float]:
        """Return the BM25 score of every document for a tokenised query."""
        out = [0.0] * self.size
        avgdl = self.avgdl or 1.0
        for term in query:
            idf = self.idf(term)
            for index, tf in self.postings.get(term, ()):
                norm = self.k1 * (1.0 - self.b + self.b * self.lengths[index] / avgdl)
                out[index] += idf * tf * (self.k1 + 1.0) / (tf + norm)
        return out


def rank_by_scores(scores: Sequence[float]) -> list[int]:
    """Return indexes sorted by descending score, ties by ascending index."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def bm25_rankings(chunk_texts: Sequence[str], query_texts: Sequence[str]) -> list[list[int]]:
    """Rank every chunk for every query with BM25 over `bm25_terms`."""
    index = BM25([bm25_terms(t) for t in chunk_texts])
    return [rank_by_scores(index.scores(bm25_terms(q))) for q in query_texts]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else [0.0 for _ in vector]


def cosine_rankings(
    chunk_vectors: Sequence[Sequence[float]], query_vectors: Sequence[Sequence[float]]
) -> list[list[int]]:
    """Rank every chunk for every query by cosine similarity of their vectors."""
    chunks = [_unit(v) for v in chunk_vectors]
    rankings: list[list[int]] = []
    for query in query_vectors:
        q = _unit(query)
        scores = [sum(map(operator.mul, q, c)) for c in chunks]
        rankings.append(rank_by_scores(scores))
    return rankings


def dense_rankings(
    embedder: Embedder, chunk_texts: Sequence[str], query_texts: Sequence[str]
) -> list[list[int]]:
    """Embed chunks and queries with one embedder and rank chunks by cosine similarity."""
    return cosine_rankings(embedder.embed(list(chunk_texts)), embedder.embed(list(query_texts)))


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[int]], size: int, k: int = RRF_K
) -> list[int]:
    """Fuse several rankings of the same `size` items: score = sum of 1 / (k + rank)."""
    scores = [0.0] * size
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] += 1.0 / (k + rank)
    return rank_by_scores(scores)


def hybrid_rankings(
    first: Sequence[Sequence[int]], second: Sequence[Sequence[int]], size: int, k: int = RRF_K
) -> list[list[int]]:
    """Fuse two retrievers' rankings query by query with reciprocal rank fusion."""
    return [reciprocal_rank_fusion([a, b], size, k) for a, b in zip(first, second, strict=True)]
