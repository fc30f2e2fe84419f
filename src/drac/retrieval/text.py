"""The one tokenisation of drac's retrieval, shared by `drac search`, `drac eval`'s BM25 and the
evaluation's relevance judge (`drac.evaluation.judge` documents the rules).

1. Markup that is not content is removed: HTML comments (`<!-- Page 3 -->`), link targets
   (`[text](url)` keeps `text`) and the characters `* _ ` # > | ~`.
2. NFKC normalisation and case folding.
3. Tokens are maximal runs of letters and digits (`[^\\W_]+`).
4. BM25 and the judge drop `STOP_WORDS` (English function words and single letters).
"""

from __future__ import annotations

import re
import unicodedata

TOKENISER = "words-v1"
"""Names this tokenisation; a stored term index made by another one is rebuilt."""

# English function words (the widely used NLTK list, contractions split at the apostrophe as
# the tokenizer does) plus every single letter. Numbers are content words: they carry facts.
_STOP_WORDS_TEXT = """
    a about above after again against ain all am an and any are aren as at be because been
    before being below between both but by can couldn d did didn do does doesn doing don down
    during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how i if in into is isn it its itself just ll m ma me mightn more
    most mustn my myself needn no nor not now o of off on once only or other our ours
    ourselves out over own re s same shan she should shouldn so some such t than that the
    their theirs them themselves then there these they this those through to too under until
    up ve very was wasn we were weren what when where which while who whom why will with won
    wouldn y you your yours yourself yourselves
    b c e f g h j k l n p q r u v w x z
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS_TEXT.split())

# an unclosed "<!--" must not make the search quadratic: no comment may contain "<!--"
_COMMENT = re.compile(r"<!--(?:(?!<!--).)*?-->", re.DOTALL)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"[*_`#>|~]")
_TOKEN = re.compile(r"[^\W_]+")


def strip_markdown(text: str) -> str:
    """Return text without Markdown/HTML markup that is not content."""
    text = _COMMENT.sub(" ", text)
    text = _LINK.sub(r"\1", text)
    return _MARKUP.sub(" ", text)


def tokens(text: str) -> list[str]:
    """Return the normalised word tokens of a text, markup removed, stop-words kept."""
    normalised = unicodedata.normalize("NFKC", strip_markdown(text)).casefold()
    return _TOKEN.findall(normalised)


def bm25_terms(text: str) -> list[str]:
    """Index terms for BM25: the tokens without stop-words (repetitions kept)."""
    return [t for t in tokens(text) if t not in STOP_WORDS]
