import math

import pytest

from drac.evaluation.metrics import (
    RankedJudgement,
    ndcg_at,
    precision_at,
    query_metrics,
    recall_at,
    reciprocal_rank,
    summarise,
)

# Ranked list of 6 chunks for a query with 2 facts:
# rank 1 covers nothing, rank 2 covers fact 0, rank 3 nothing, rank 4 covers fact 0 again,
# rank 5 covers fact 1, rank 6 nothing. 3 relevant chunks exist in the whole set.
J = RankedJudgement(
    covered=(frozenset(), frozenset({0}), frozenset(), frozenset({0}), frozenset({1}), frozenset()),
    fact_count=2,
    relevant_in_set=3,
)


def test_recall_counts_distinct_facts_covered_in_top_k():
    assert recall_at(J, 1) == 0.0
    assert recall_at(J, 3) == 0.5
    assert recall_at(J, 4) == 0.5  # the same fact twice counts once
    assert recall_at(J, 6) == 1.0


def test_precision_divides_by_k():
    assert precision_at(J, 3) == pytest.approx(1 / 3)
    assert precision_at(J, 6) == pytest.approx(3 / 6)
    short = RankedJudgement(covered=(frozenset({0}),), fact_count=1, relevant_in_set=1)
    assert precision_at(short, 3) == pytest.approx(1 / 3)


def test_reciprocal_rank_within_k():
    assert reciprocal_rank(J, 6) == 0.5
    assert reciprocal_rank(J, 1) == 0.0


def test_ndcg_hand_computed():
    dcg = 1 / math.log2(3) + 1 / math.log2(5) + 1 / math.log2(6)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at(J, 6) == pytest.approx(dcg / idcg)
    assert ndcg_at(J, 6) == pytest.approx(0.6797, abs=1e-4)


def test_ndcg_is_one_for_a_perfect_list_and_zero_without_relevant_chunks():
    perfect = RankedJudgement(
        covered=(frozenset({0}), frozenset({0}), frozenset()), fact_count=1, relevant_in_set=2
    )
    assert ndcg_at(perfect, 6) == pytest.approx(1.0)
    none = RankedJudgement(covered=(frozenset(),) * 6, fact_count=1, relevant_in_set=0)
    assert ndcg_at(none, 6) == 0.0


def test_summarise_averages_queries_and_names_columns():
    other = RankedJudgement(covered=(frozenset({0}),) + (frozenset(),) * 5, fact_count=1,
                            relevant_in_set=1)
    rows = [query_metrics(J), query_metrics(other)]
    out = summarise(rows)
    assert list(out) == ["R@6", "R@3", "P@3", "P@6", "MRR", "NDCG@6"]
    assert out["R@6"] == pytest.approx((1.0 + 1.0) / 2)
    assert out["R@3"] == pytest.approx((0.5 + 1.0) / 2)
    assert out["P@3"] == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert out["P@6"] == pytest.approx((0.5 + 1 / 6) / 2)
    assert out["MRR"] == pytest.approx((0.5 + 1.0) / 2)
    assert summarise([]) == {}
