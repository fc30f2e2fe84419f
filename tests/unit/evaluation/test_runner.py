from collections.abc import Sequence

import pytest

from drac.evaluation.chunksets import ChunkSet, EvalChunk
from drac.evaluation.queries import Query, SupportingFact
from drac.evaluation.runner import evaluate, select_queries
from drac.ports import Embedder


class LetterEmbedder(Embedder):
    """A real (if crude) embedder for tests: counts of each letter a-z."""

    name = "letters"
    dimension = 26

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return [[float(t.lower().count(chr(97 + i))) for i in range(26)] for t in texts]


def _set(name: str, items: list[tuple[str, str]]) -> ChunkSet:
    return ChunkSet(
        name=name,
        chunks=tuple(EvalChunk(chunk_id=f"{name}{i}", source=s, text=t)
                     for i, (s, t) in enumerate(items)),
    )


F1 = SupportingFact(filename="policy.md", text="premium payment term is eight years")
F2 = SupportingFact(filename="baggage.md", text="baggage allowance is 30 kilograms")
Q1 = Query(company="Acme", query_type="Boolean", text="premium payment term", facts=(F1,))
Q2 = Query(company="Beta", query_type="Temporal", text="baggage allowance", facts=(F2,))


def test_queries_restricted_to_documents_in_every_set():
    a = _set("a", [("policy.pdf", "x"), ("baggage.pdf", "y")])
    b = _set("b", [("policy.md", "x")])
    selection = select_queries([Q1, Q2], [a, b])
    assert selection.queries == (Q1,)
    assert selection.companies == ("Acme",)
    assert "1 of 2 queries used" in selection.note
    assert "1 left out" in selection.note


def test_evaluate_bm25_only_without_embedder_says_so():
    good = _set("good", [("policy.md", "The premium payment term is eight years."),
                         ("policy.md", "Unrelated text about colours.")])
    report = evaluate([good], [Q1])
    assert report.retrievers == ("bm25",)
    assert report.embedder is None
    assert any("BM25 only" in note for note in report.notes)
    result = report.results[0]
    assert result.overall["R@6"] == 1.0
    assert result.overall["MRR"] == 1.0
    assert result.overall["P@3"] == pytest.approx(1 / 3)
    assert result.by_query_type["Boolean"]["R@3"] == 1.0
    assert report.group_sizes == {"query_type": {"Boolean": 1}, "company": {"Acme": 1}}


def test_evaluate_with_embedder_runs_dense_bm25_hybrid_and_embeds_queries_once():
    first = _set("first", [("policy.md", "premium payment term is eight years")])
    second = _set("second", [("policy.md", "premium payment"), ("policy.md", "term eight")])
    embedder = LetterEmbedder()
    report = evaluate([first, second], [Q1], embedder=embedder, k=6)
    assert [r.label for r in report.results] == [
        "first / dense", "first / bm25", "first / hybrid",
        "second / dense", "second / bm25", "second / hybrid",
    ]
    assert embedder.calls == [1, 1, 2]
    assert report.results[0].overall["R@6"] == 1.0
    # the fact is split across the two chunks of `second`: relevant in neither
    assert all(r.overall["R@6"] == 0.0 for r in report.results[3:])
