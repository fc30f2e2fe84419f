"""Okapi BM25 over any term index: in memory for chunk sets (`drac eval`), or the workspace's
stored index (`drac search`); one scoring formula for both.

score(q, d) = sum over query terms t of
    idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
with idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)) (never negative). A query term repeated in
the query counts once per occurrence. Only documents holding a query term get a score.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple, Protocol

K1 = 1.5
B = 0.75


class Posting(NamedTuple):
    """One document holding a term: its position in the collection, term count and length."""

    item: int
    tf: int
    length: int


class TermIndex(Protocol):
    """What BM25 needs of a collection: its size, mean length, and postings of some terms."""

    @property
    def size(self) -> int:
        """Number of documents."""
        ...

    @property
    def avgdl(self) -> float:
        """Mean document length in terms."""
        ...

    def postings(self, terms: Collection[str]) -> Mapping[str, Sequence[Posting]]:
        """The postings of each of these terms (terms in no document may be absent)."""
        ...


def idf(size: int, document_frequency: int) -> float:
    """Inverse document frequency of a term held by `document_frequency` of `size` documents."""
    if document_frequency == 0:
        return 0.0
    return math.log(1.0 + (size - document_frequency + 0.5) / (document_frequency + 0.5))


def bm25_scores(
    index: TermIndex, query_terms: Sequence[str], k1: float = K1, b: float = B
) -> dict[int, float]:
    """The BM25 score of every document holding at least one query term, by position."""
    postings = index.postings(set(query_terms))
    avgdl = index.avgdl or 1.0
    scores: dict[int, float] = {}
    for term in query_terms:
        found = postings.get(term, ())
        weight = idf(index.size, len(found))
        for item, tf, length in found:
            norm = k1 * (1.0 - b + b * length / avgdl)
            scores[item] = scores.get(item, 0.0) + weight * tf * (k1 + 1.0) / (tf + norm)
    return scores


class MemoryTermIndex:
    """A term index held in memory, built from each document's terms."""

    def __init__(self, documents: Sequence[Sequence[str]]) -> None:
        self._size = len(documents)
        lengths = [len(d) for d in documents]
        self._avgdl = (sum(lengths) / self._size) if self._size else 0.0
        self._postings: dict[str, list[Posting]] = {}
        for item, doc in enumerate(documents):
            for term, tf in Counter(doc).items():
                self._postings.setdefault(term, []).append(Posting(item, tf, lengths[item]))

    @property
    def size(self) -> int:
        """Number of documents."""
        return self._size

    @property
    def avgdl(self) -> float:
        """Mean document length in terms."""
        return self._avgdl

    def postings(self, terms: Collection[str]) -> dict[str, list[Posting]]:
        """The postings of the terms that occur."""
        return {t: self._postings[t] for t in terms if t in self._postings}
