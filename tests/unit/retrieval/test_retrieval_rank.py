import math

import pytest

from drac.retrieval.bm25 import MemoryTermIndex, bm25_scores
from drac.retrieval.rank import (
    HYBRID_DENSE_WEIGHT,
    blend,
    dense_ranking,
    fuse,
    hybrid,
    hybrid_weight,
    lexical_ranking,
    normalised,
    positions,
    unit,
)
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


def test_weighted_reciprocal_rank_fusion():
    a = [(0, 9.0), (1, 8.0)]
    b = [(1, 1.0), (0, 0.5)]
    fused = dict(fuse([a, b], k=10, weights=(0.7, 0.3)))
    assert fused[0] == pytest.approx(0.7 / 11 + 0.3 / 12)
    assert fused[1] == pytest.approx(0.7 / 12 + 0.3 / 11)
    assert positions(fuse([a, b], k=10, weights=(0.2, 0.8))) == [1, 0]
    with pytest.raises(ValueError, match="one weight per ranking"):
        fuse([a, b], weights=(1.0,))


def test_normalised_scores_span_zero_to_one():
    assert normalised([(3, 10.0), (1, 6.0), (2, 2.0)]) == {3: 1.0, 1: 0.5, 2: 0.0}
    assert normalised([(4, 0.3), (5, 0.3)]) == {4: 1.0, 5: 1.0}  # one score: all equal
    assert normalised([]) == {}


def test_blend_weighs_normalised_cosine_against_normalised_bm25():
    dense = [(0, 0.9), (1, 0.5), (2, 0.1)]  # normalised 1, 0.5, 0
    lexical = [(2, 12.0), (1, 4.0)]  # normalised 1, 0; item 0 holds no query term
    blended = dict(blend(dense, lexical, 0.6))
    assert blended == pytest.approx({0: 0.6, 1: 0.3, 2: 0.4})
    assert positions(blend(dense, lexical, 0.6)) == [0, 2, 1]
    assert positions(blend(dense, lexical, 0.3)) == [2, 0, 1]  # words weigh more
    assert positions(blend(dense, lexical, 1.0)) == positions(dense)
    # words alone: BM25's best first (its worst match scales to 0, as a chunk without a term)
    assert positions(blend(dense, lexical, 0.0))[0] == positions(lexical)[0]
    with pytest.raises(ValueError, match="dense_weight"):
        blend(dense, lexical, 1.5)


def test_hybrid_is_the_measured_blend_with_the_embedders_own_weight():
    dense = [(0, 0.9), (1, 0.5), (2, 0.1)]
    lexical = [(2, 12.0), (1, 4.0)]
    assert hybrid(dense, lexical) == blend(dense, lexical, HYBRID_DENSE_WEIGHT)

    class Tuned:
        hybrid_dense_weight = 0.8

    class Wrapper:
        inner = Tuned()

    assert hybrid_weight(Tuned()) == hybrid_weight(Wrapper()) == 0.8
    assert hybrid_weight(object()) == HYBRID_DENSE_WEIGHT
    from drac.embedders.embedded import EmbeddedE5Embedder

    assert hybrid_weight(EmbeddedE5Embedder()) == 0.8  # nothing loaded to read it
