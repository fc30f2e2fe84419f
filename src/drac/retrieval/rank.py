"""Rankings of one query over a collection: BM25, dense cosine, and their reciprocal-rank
fusion. `drac eval` and `drac search` both rank through these functions.

A ranking is a list of (position, score), best first, ties broken by position; BM25 ranks only
the documents that hold a query term, dense ranks every document.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from enum import StrEnum

from drac.retrieval.bm25 import TermIndex, bm25_scores
from drac.retrieval.text import bm25_terms

RRF_K = 60
Ranking = list[tuple[int, float]]


class Mode(StrEnum):
    """How a query is matched: words (BM25), meaning (dense vectors), or both fused."""

    BM25 = "bm25"
    DENSE = "dense"
    HYBRID = "hybrid"


def rank_scores(scores: Mapping[int, float]) -> Ranking:
    """Positions sorted by descending score, ties by ascending position."""
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def lexical_ranking(index: TermIndex, query: str) -> Ranking:
    """BM25 ranking of the documents holding any of the query's terms."""
    return rank_scores(bm25_scores(index, bm25_terms(query)))


def unit(vector: Sequence[float]) -> list[float]:
    """The vector scaled to length 1 (all zeros stays all zeros)."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else [0.0 for _ in vector]


def dense_ranking(
    unit_vectors: Sequence[Sequence[float]], query_vector: Sequence[float]
) -> Ranking:
    """Cosine-similarity ranking of every document; document vectors must be `unit` already."""
    query = unit(query_vector)
    return rank_scores(
        {item: sum(map(operator.mul, query, vector)) for item, vector in enumerate(unit_vectors)}
    )


def fuse(rankings: Sequence[Ranking], k: int = RRF_K) -> Ranking:
    """Reciprocal rank fusion: score = sum over rankings holding the item of 1 / (k + rank)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, (item, _score) in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return rank_scores(scores)


def positions(ranking: Ranking) -> list[int]:
    """The positions of a ranking, best first."""
    return [item for item, _score in ranking]
