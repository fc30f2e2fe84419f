import math

import pytest

from drac.retrieval.bm25 import MemoryTermIndex, bm25_scores
from drac.retrieval.rank import dense_ranking, fuse, lexical_ranking, positions, unit
from drac.retrieval.text import bm25_terms, tokens


def test_bm25_scores_hand_computed():
    index = MemoryTermIndex([["a", "b"], ["a", "a", "c"], ["c"]])
    idf_b = math.log(1 + 2.5 / 1.5)
    assert bm25_scores(index, ["b"]) == pytest.approx({0: idf_b})
    idf_a = math.log(1 + 1.5 / 2.5)
    norm_d1 = 1.5 * (0.25 + 0.75 * 3 / 2)
    assert bm25_scores(index, ["a"]) == pytest.approx(
        {0: idf_a, 1: idf_a * 2 * 2.5 / (2 + norm_d1)}
    )
    assert bm25_scores(index, ["zzz"]) == {}
    # a term repeated in the query counts twice
    assert bm25_scores(index, ["b", "b"])[0] == pytest.approx(2 * idf_b)


def test_tokens_and_bm25_terms_drop_markup_and_stop_words():
    assert tokens("**The** [Premium](http://x.y) <!-- Page 3 --> Velvera's") == [
        "the",
        "premium",
        "velvera",
        "s",
    ]
    assert bm25_terms("The premium of the premium, ﬁne") == ["premium", "premium", "fine"]


def test_lexical_ranking_ranks_only_matching_chunks_ties_by_order():
    chunks = ["The **premium** is due", "Baggage allowance", "premium premium payment", "premium"]
    index = MemoryTermIndex([bm25_terms(t) for t in chunks])
    assert positions(lexical_ranking(index, "premium payment"))[0] == 2
    assert positions(lexical_ranking(index, "nothing matches")) == []
    assert positions(lexical_ranking(index, "the a of")) == []  # stop-words only
    tie = MemoryTermIndex([["xy"], ["xy"]])
    assert positions(lexical_ranking(tie, "xy")) == [0, 1]


def test_dense_ranking_is_cosine():
    chunks = [unit(v) for v in ([1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [0.0, 0.0])]
    assert positions(dense_ranking(chunks, [0.0, 1.0])) == [1, 2, 0, 3]
    ranking = dense_ranking(chunks, [3.0, 0.1])
    assert positions(ranking) == [0, 2, 1, 3]
    assert ranking[0][1] == pytest.approx(3.0 / math.hypot(3.0, 0.1))


def test_reciprocal_rank_fusion_k60_credits_only_ranked_items():
    # item 0: 1/61 + 1/63, item 1: 2/62, item 2: 1/63 + 1/61
    a = [(0, 9.0), (1, 8.0), (2, 7.0)]
    b = [(2, 1.0), (1, 0.5), (0, 0.1)]
    assert positions(fuse([a, b])) == [0, 2, 1]
    fused = dict(fuse([a, [(2, 3.0)]]))
    assert fused[2] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[1] == pytest.approx(1 / 62)
    assert positions(fuse([[(1, 1.0), (0, 0.5)], [(1, 1.0), (0, 0.5)]])) == [1, 0]
