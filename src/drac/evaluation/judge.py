"""The relevance judge of the D-RAC paper's retrieval protocol.

A chunk is relevant to a query when it contains at least 60% of the *content words* of ONE
of the query's supporting facts. Content words, precisely:

1. Markdown markup is removed first, on both the fact and the chunk, so a Markdown chunk is
   not penalised against a plain-text fact (or the reverse): HTML comments such as
   `<!-- Page 3 -->`, link targets (`[text](url)` keeps `text`), and emphasis/markup
   characters (`*`, `_`, `` ` ``, `#`, `>`, `|`, `~`) are dropped.
2. The text is Unicode-normalised (NFKC) and case-folded.
3. Tokens are maximal runs of letters and digits (the regex `[^\\W_]+`), so punctuation is
   never a token and `Velvera's` gives `velvera` + `s`.
4. Tokens in `STOP_WORDS` (the classic English function-word list, plus single letters)
   are dropped.

Steps 1-3 and the stop-words are `drac.retrieval.text`, the tokenisation BM25 uses too.

Words are compared as sets: repetition neither helps nor hurts. A fact that has no content
words at all (stop-words only) can never be judged present, so it never makes a chunk
relevant. Each fact is judged against one chunk at a time: a fact split across two chunks
counts for neither unless one of them alone holds 60% of its words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from drac.retrieval.text import STOP_WORDS, strip_markdown, tokens

__all__ = [
    "STOP_WORDS",
    "THRESHOLD",
    "content_words",
    "coverage",
    "covers",
    "facts_covered",
    "is_relevant",
    "strip_markdown",
    "tokens",
]

THRESHOLD = 0.6


def content_words(text: str) -> frozenset[str]:
    """Return the set of content words of a text: its tokens minus `STOP_WORDS`."""
    return frozenset(t for t in tokens(text) if t not in STOP_WORDS)


def coverage(fact_words: frozenset[str], chunk_words: frozenset[str]) -> float:
    """Return the share of a fact's content words present in a chunk (0.0 when none)."""
    if not fact_words:
        return 0.0
    return len(fact_words & chunk_words) / len(fact_words)


def covers(
    fact_words: frozenset[str], chunk_words: frozenset[str], threshold: float = THRESHOLD
) -> bool:
    """Return True when the chunk holds at least `threshold` of the fact's content words."""
    return bool(fact_words) and coverage(fact_words, chunk_words) >= threshold - 1e-12


def facts_covered(
    facts_words: Sequence[frozenset[str]],
    chunk_words: frozenset[str],
    threshold: float = THRESHOLD,
) -> frozenset[int]:
    """Return the indexes of the facts a chunk covers."""
    return frozenset(i for i, fw in enumerate(facts_words) if covers(fw, chunk_words, threshold))


def is_relevant(chunk_text: str, fact_texts: Iterable[str], threshold: float = THRESHOLD) -> bool:
    """Return True when the chunk covers at least one of the facts (the paper's judge)."""
    chunk_words = content_words(chunk_text)
    return any(covers(content_words(f), chunk_words, threshold) for f in fact_texts)
