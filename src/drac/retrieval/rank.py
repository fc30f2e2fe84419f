"""Rankings of one query over a collection: BM25, dense cosine, and their fusion (`hybrid`:
score-normalised blending; reciprocal-rank fusion `fuse` is kept for the cloud runtime).
`drac eval` and `drac search` both rank through these functions.

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
HYBRID_DENSE_WEIGHT = 0.6
"""The cosine's share in the hybrid blend, unless the embedder says otherwise
(`hybrid_dense_weight`): chosen on one half of the corpus' queries and confirmed on the other
for the reference MiniLM ("Fusion" in BENCHMARKS.md)."""
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


def fuse(
    rankings: Sequence[Ranking], k: int = RRF_K, weights: Sequence[float] | None = None
) -> Ranking:
    """Reciprocal rank fusion: score = sum over rankings holding the item of
    weight / (k + rank) (every weight 1 unless given)."""
    chosen = [1.0] * len(rankings) if weights is None else list(weights)
    if len(chosen) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[int, float] = {}
    for weight, ranking in zip(chosen, rankings, strict=True):
        for rank, (item, _score) in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return rank_scores(scores)


def normalised(ranking: Ranking) -> dict[int, float]:
    """A ranking's scores scaled to [0, 1] by its best and worst (all 1 when they are equal)."""
    if not ranking:
        return {}
    best, worst = ranking[0][1], ranking[-1][1]
    spread = best - worst
    return {item: (score - worst) / spread if spread else 1.0 for item, score in ranking}


def blend(dense: Ranking, lexical: Ranking, dense_weight: float) -> Ranking:
    """Score-normalised blending: dense_weight x normalised cosine + (1 - dense_weight) x
    normalised BM25 (0 for a document without a query term)."""
    if not 0.0 <= dense_weight <= 1.0:
        raise ValueError("dense_weight must be within [0, 1]")
    words = normalised(lexical)
    meaning = normalised(dense)
    items = set(words) | set(meaning)
    return rank_scores(
        {
            item: dense_weight * meaning.get(item, 0.0) + (1 - dense_weight) * words.get(item, 0.0)
            for item in items
        }
    )


def hybrid(dense: Ranking, lexical: Ranking, dense_weight: float = HYBRID_DENSE_WEIGHT) -> Ranking:
    """The hybrid of `drac eval` and `drac search`: score-normalised blending, which beat
    reciprocal-rank fusion (k = 60) on every metric on held-out queries ("Fusion" in
    BENCHMARKS.md)."""
    return blend(dense, lexical, dense_weight)


def hybrid_weight(embedder: object) -> float:
    """The dense weight of the hybrid for an embedder: its `hybrid_dense_weight` (measured for
    that model), else HYBRID_DENSE_WEIGHT."""
    weight = getattr(embedder, "hybrid_dense_weight", None)
    if weight is None:
        weight = getattr(getattr(embedder, "inner", None), "hybrid_dense_weight", None)
    return float(weight) if isinstance(weight, int | float) else HYBRID_DENSE_WEIGHT


def positions(ranking: Ranking) -> list[int]:
    """The positions of a ranking, best first."""
    return [item for item, _score in ranking]
