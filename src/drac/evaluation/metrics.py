"""Retrieval metrics of one ranked result list, and their averages.

Definitions (k is the cut-off, 6 by default; all metrics are averaged over queries):

- relevant chunk: one that covers at least one of the query's supporting facts (`judge`).
- R@k (recall): share of the query's supporting facts covered by at least one of the top-k
  chunks. A query with two facts whose top-6 covers one of them scores 0.5.
- P@k (precision): relevant chunks among the top-k, divided by k (a shorter list is padded
  with non-relevant ranks).
- MRR: 1 / rank of the first relevant chunk within the top-k, 0 when none (MRR@k).
- NDCG@k: binary gains, DCG = sum(rel_i / log2(i + 1)) over ranks i = 1..k; the ideal DCG
  puts min(k, number of relevant chunks in the whole chunk set) relevant chunks first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict


class RankedJudgement(BaseModel):
    """What the judge says about one query's ranked list."""

    model_config = ConfigDict(frozen=True)

    covered: tuple[frozenset[int], ...]
    """For each retrieved chunk in rank order, the indexes of the facts it covers."""
    fact_count: int
    """How many supporting facts the query has."""
    relevant_in_set: int
    """How many chunks of the whole chunk set are relevant to the query."""


class QueryMetrics(BaseModel):
    """The metrics of one query."""

    model_config = ConfigDict(frozen=True)

    recall: dict[int, float]
    precision: dict[int, float]
    mrr: float
    ndcg: float


METRIC_NAMES = ("R@6", "R@3", "P@3", "P@6", "MRR", "NDCG@6")


def recall_at(judgement: RankedJudgement, k: int) -> float:
    """Share of the query's facts covered by at least one of the top-k chunks."""
    if judgement.fact_count == 0:
        return 0.0
    found: set[int] = set()
    for facts in judgement.covered[:k]:
        found |= facts
    return len(found) / judgement.fact_count


def precision_at(judgement: RankedJudgement, k: int) -> float:
    """Relevant chunks among the top-k, divided by k."""
    return sum(1 for facts in judgement.covered[:k] if facts) / k


def reciprocal_rank(judgement: RankedJudgement, k: int) -> float:
    """1 / rank of the first relevant chunk within the top-k, else 0."""
    for rank, facts in enumerate(judgement.covered[:k], start=1):
        if facts:
            return 1.0 / rank
    return 0.0


def ndcg_at(judgement: RankedJudgement, k: int) -> float:
    """Binary-gain NDCG@k with the ideal list drawn from the whole chunk set."""
    dcg = sum(
        1.0 / math.log2(rank + 1)
        for rank, facts in enumerate(judgement.covered[:k], start=1)
        if facts
    )
    ideal_hits = min(k, judgement.relevant_in_set)
    idcg = sum(1.0 / math.log2(rank + 1) for rank in range(1, ideal_hits + 1))
    return dcg / idcg if idcg else 0.0


def query_metrics(
    judgement: RankedJudgement, ks: Sequence[int] = (3, 6), ndcg_k: int = 6
) -> QueryMetrics:
    """Compute every metric of one query's judged ranked list."""
    top = max(ks)
    return QueryMetrics(
        recall={k: recall_at(judgement, k) for k in ks},
        precision={k: precision_at(judgement, k) for k in ks},
        mrr=reciprocal_rank(judgement, top),
        ndcg=ndcg_at(judgement, ndcg_k),
    )


def summarise(rows: Sequence[QueryMetrics], ks: Sequence[int] = (3, 6)) -> dict[str, float]:
    """Average per-query metrics into the named columns (R@k, P@k, MRR, NDCG@k)."""
    n = len(rows)
    if n == 0:
        return {}
    top = max(ks)
    out: dict[str, float] = {}
    for k in sorted(ks, reverse=True):
        out[f"R@{k}"] = sum(r.recall[k] for r in rows) / n
    for k in sorted(ks):
        out[f"P@{k}"] = sum(r.precision[k] for r in rows) / n
    out["MRR"] = sum(r.mrr for r in rows) / n
    out[f"NDCG@{top}"] = sum(r.ndcg for r in rows) / n
    return out
