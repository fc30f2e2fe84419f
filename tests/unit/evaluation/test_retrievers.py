import math

import pytest

from drac.evaluation.retrievers import (
    BM25,
    bm25_rankings,
    cosine_rankings,
    hybrid_rankings,
    reciprocal_rank_fusion,
)


def test_bm25_scores_hand_computed():
    index = BM25([["a", "b"], ["a", "a", "c"], ["c"]])
    idf_b = math.log(1 + 2.5 / 1.5)
    assert index.scores(["b"]) == pytest.approx([idf_b, 0.0, 0.0])
    idf_a = math.log(1 + 1.5 / 2.5)
    norm_d1 = 1.5 * (0.25 + 0.75 * 3 / 2)
    assert index.scores(["a"]) == pytest.approx(
        [idf_a, idf_a * 2 * 2.5 / (2 + norm_d1), 0.0]
    )
    assert index.scores(["zzz"]) == [0.0, 0.0, 0.0]


def test_bm25_rankings_use_judge_tokens_and_break_ties_by_order():
    chunks = ["The **premium** is due", "Baggage allowance", "premium premium payment"]
    assert bm25_rankings(chunks, ["premium payment"])[0][0] == 2
    assert bm25_rankings(chunks, ["nothing matches"])[0] == [0, 1, 2]


def test_cosine_rankings():
    chunks = [[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]
    assert cosine_rankings(chunks, [[0.0, 1.0]]) == [[1, 2, 0]]
    assert cosine_rankings(chunks, [[3.0, 0.1]]) == [[0, 2, 1]]


def test_reciprocal_rank_fusion_k60():
    # item 0: 1/61 + 1/63, item 1: 2/62, item 2: 1/63 + 1/61
    assert reciprocal_rank_fusion([[0, 1, 2], [2, 1, 0]], 3) == [0, 2, 1]
    assert reciprocal_rank_fusion([[1, 0], [1, 0]], 2) == [1, 0]
    assert hybrid_rankings([[0, 1]], [[1, 0]], 2, k=60) == [[0, 1]]
