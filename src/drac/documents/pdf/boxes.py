"""Place each element of a PDF-derived document on its page: align the element's words to
the page's text layer (or OCR words) and keep the boxes of the words found, per line.

One code path for every converter (offline, OCR, a vision model's Markdown): the Markdown is
parsed into elements, then each element's text is looked up on the page it starts on (and
the next one, where a model ran a paragraph across the page break). Text is compared
normalised (NFKC, case folded, letters and digits only), so Markdown syntax, table pipes,
escapes, punctuation and where a word was hyphenated or cut do not count. An element is found
by an exact run of its letters and digits, from word start to word end, first (after the
previous element's place on the page, else anywhere on it); else by a sequence alignment of
its words (difflib) that tolerates words the model changed, added or dropped. An element of
which too little is found says so (`not_aligned`, no box): a box is never guessed.
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher

from drac.documents.pdf.layers import PageLayer, read_text_layers
from drac.documents.sandbox.containment import BudgetExceeded
from drac.errors import DocumentError
from drac.models import Element, ParsedDocument
from drac.provenance import (
    Box,
    BoxSource,
    BoxStatus,
    ElementBoxes,
    PageBoxes,
    capped,
    enclosing,
    not_aligned,
)

ALIGNED_SHARE = 0.9
"""An element is aligned when at least this share of its words is found."""
PARTIAL_SHARE = 0.5
"""Below this share nothing is kept: a few common words found here and there place nothing."""
REORDER_ROUNDS = 4
"""Alignment rounds of an element's words left over: a page whose text layer runs in another
order (columns, a rotated page) than the Markdown is still matched, part by part."""
MAX_WINDOW_WORK = 20_000
"""Matches of a page word with an equal element word one alignment round may try (each page
word counts as often as the element holds it: difflib's work, about 6 us a match at worst,
so a hostile page of one word repeated costs a tenth of a second, an honest page
hundreds of matches); past it, a window of the page around the previous element's place."""
MAX_DOCUMENT_WORK = 1_000_000
MAX_PAGE_WORK = 2_000
"""A document's alignments may try MAX_DOCUMENT_WORK matches plus MAX_PAGE_WORK a page in
all (at worst a few seconds, about a minute for a 5,000-page document of hostile pages);
past it, the elements left say they were not looked for."""
_USED = "\x00"
"""Stands for a page word already matched (no element word equals it)."""
_LINK_TARGET = re.compile(r'\]\([^()\[\]\s"]*+(?:\s++"[^"]*+")?\)')
"""A link's or image's target (`](url "title")`); no bracket in the URL, so each start scans
only to the next bracket: linear on hostile text such as `](` repeated."""
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]{0,200}>")
_WORD = re.compile(r"[^\W\d_]+|\d+")


def words_of(text: str) -> list[str]:
    """Text as it is compared: NFKC, case folded, cut into runs of letters and runs of digits
    (punctuation, spaces, pipes and hyphens between them do not count)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def markdown_words(text: str) -> list[str]:
    """The words of an element's Markdown (`words_of`), without link targets, HTML tags,
    entities and syntax."""
    return words_of(html.unescape(_HTML_TAG.sub(" ", _LINK_TARGET.sub("] ", text))))


class _PageWords:
    """A page's words: all their letters and digits in one string (to find an element's text
    however the page cut it into words: `VL-` `001`, `Experi-` `ence`), and the runs of
    letters and digits (to align a changed text), each pointing at the layer word it is in."""

    def __init__(self, layer: PageLayer) -> None:
        self.layer = layer
        self.words: list[str] = []
        self.word_of: list[int] = []
        self.word_at: list[int] = []  # where each of `words` starts in `text`
        self.starts: list[int] = []
        self.owner: list[int] = []
        begins: set[int] = set()
        ends: set[int] = set()
        parts: list[str] = []
        offset = 0
        for index, word in enumerate(layer.words):
            found = words_of(word[0])
            if not found:
                continue
            self.words.extend(found)
            self.word_of.extend([index] * len(found))
            at = offset
            for part in found:
                self.word_at.append(at)
                at += len(part)
            text = "".join(found)
            begins.add(offset)
            self.starts.append(offset)
            self.owner.append(index)
            parts.append(text)
            offset += len(text)
            ends.add(offset)
        self.text = "".join(parts)
        self.begins = begins
        self.ends = ends

    def find(self, text: str, from_char: int) -> int | None:
        """Where `text` starts at a word's start and ends at a word's end, at or after
        `from_char` (a character offset into `self.text`)."""
        found = self.text.find(text, from_char)
        while found >= 0:
            if found in self.begins and found + len(text) in self.ends:
                return found
            found = self.text.find(text, found + 1)
        return None

    def words_in(self, start: int, end: int) -> range:
        """The layer words (as indices into `self.owner`) covering characters [start, end)."""
        first = bisect.bisect_right(self.starts, start) - 1
        last = bisect.bisect_left(self.starts, end)
        return range(first, last)

    def boxes(self, layer_words: Iterable[int]) -> tuple[Box, ...]:
        """One box per line of these layer words."""
        lines: dict[int, list[Box]] = {}
        for index in sorted(set(layer_words)):
            _, x0, top, x1, bottom, line = self.layer.words[index]
            lines.setdefault(line, []).append((x0, top, x1, bottom))
        return capped([enclosing(boxes) for boxes in lines.values()])


def align_elements(elements: Sequence[Element], layers: Mapping[int, PageLayer]) -> list[Element]:
    """Each element with its boxes (`Element.boxes`): aligned to the layer of the page it
    starts on, or `not_aligned` with the reason. `layers` maps page numbers to page words."""
    pages = {number: _PageWords(layer) for number, layer in layers.items()}
    cursors: dict[int, int] = {}
    budget = _Budget(MAX_DOCUMENT_WORK + MAX_PAGE_WORK * len(layers))
    headers: dict[tuple[str | None, str], tuple[PageBoxes, ...]] = {}
    placed: list[Element] = []
    for element in elements:
        header = element.table_header
        key = (element.table_id, header or "")
        if header and key not in headers:  # the header's lines come before the first row
            found = _place(element.model_copy(update={"text": header}), pages, cursors, budget)
            headers[key] = found.pages
        boxes = _place(element, pages, cursors, budget)
        if header and headers[key]:
            boxes = boxes.model_copy(update={"header": headers[key]})
        placed.append(element.model_copy(update={"boxes": boxes}))
    return placed


class _Budget:
    """What is left of a document's alignment work (matches of a page word with an element
    word difflib may try)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.left = total


def _place(
    element: Element, pages: Mapping[int, _PageWords], cursors: dict[int, int], budget: _Budget
) -> ElementBoxes:
    number = element.page
    page = pages.get(number)
    if page is None:
        return not_aligned(f"page {number} has no text layer to align to")
    source = page.layer.source
    if not page.words:
        what = "OCR read no text" if source == "ocr" else "the page has no text layer"
        return not_aligned(f"{what} on page {number}", source)
    words = markdown_words(element.text)
    if not words:
        return not_aligned("the element has no words to look for", source)
    text = "".join(words)
    cursor = cursors.get(number, 0)
    start = page.find(text, cursor)
    if start is None:
        start = page.find(text, 0)
    if start is not None:
        cursors[number] = start + len(text)
        found = {number: [page.owner[i] for i in page.words_in(start, start + len(text))]}
        return _boxes(found, pages, len(words), len(words), source)
    return _fuzzy(element, words, pages, cursors, source, budget)


def _fuzzy(
    element: Element,
    words: list[str],
    pages: Mapping[int, _PageWords],
    cursors: dict[int, int],
    source: BoxSource,
    budget: _Budget,
) -> ElementBoxes:
    """Align by matching blocks of words: the element's page and the next one (a window of
    them around the previous element's place when that is more than MAX_WINDOW_WORK)."""
    number = element.page
    candidates = [(number, pages[number])]
    following = pages.get(number + 1)
    if following is not None and following.words:
        candidates.append((number + 1, following))
    tokens: list[str] = []
    where: list[tuple[int, int]] = []
    for page_number, page in candidates:
        tokens.extend(page.words)
        where.extend((page_number, index) for index in range(len(page.words)))
    counts = Counter(words)
    cost = sum(counts.get(token, 0) for token in tokens)
    width = len(tokens)
    here = bisect.bisect_left(pages[number].word_at, cursors.get(number, 0))
    while cost > MAX_WINDOW_WORK and width > 1:  # a window around the previous place instead
        width = max(1, min(width - 1, width * MAX_WINDOW_WORK // cost))
        first = min(max(0, here - width // 4), len(tokens) - width)
        tokens, where = tokens[first : first + width], where[first : first + width]
        here -= first
        cost = sum(counts.get(token, 0) for token in tokens)
    if budget.left < cost or cost > MAX_WINDOW_WORK:
        return not_aligned(
            f"not looked for: the document's alignment work ({budget.total:,} word "
            "matches) is spent",
            source,
        )
    shortest = 1 if len(words) <= 2 else 2
    found: dict[int, list[int]] = {}
    matched = 0
    wanted: list[str | None] = list(words)
    for _ in range(REORDER_ROUNDS):  # each round aligns what is left: reordered parts too
        added = 0
        budget.left -= cost  # each round costs at most the first's
        matcher = SequenceMatcher(None, tokens, wanted, autojunk=False)
        for start, at, size in matcher.get_matching_blocks():
            if size < shortest:
                continue
            added += size
            for offset in range(size):
                page_number, word = where[start + offset]
                found.setdefault(page_number, []).append(pages[page_number].word_of[word])
                tokens[start + offset] = _USED
                wanted[at + offset] = None
        matched += added
        if not added or matched == len(words):
            break
    share = matched / len(words)
    if share < PARTIAL_SHARE:
        return not_aligned(
            f"{round(share * 100)} % of its words were found on page {number}", source
        )
    if number in found:
        page = pages[number]
        after = bisect.bisect_right(page.owner, max(found[number]))  # the next word's place
        end = page.starts[after] if after < len(page.starts) else len(page.text)
        cursors[number] = max(cursors.get(number, 0), end)
    return _boxes(found, pages, matched, len(words), source)


def _boxes(
    found: Mapping[int, Iterable[int]],
    pages: Mapping[int, _PageWords],
    matched: int,
    total: int,
    source: BoxSource,
) -> ElementBoxes:
    share = matched / total
    status = BoxStatus.ALIGNED if share >= ALIGNED_SHARE else BoxStatus.PARTIAL
    entries = tuple(
        PageBoxes(page=number, boxes=pages[number].boxes(indices))
        for number, indices in sorted(found.items())
    )
    return ElementBoxes(
        status=status,
        source=source,
        coverage=round(share, 3),
        pages=tuple(entry for entry in entries if entry.boxes),
    )


def place_elements(
    elements: Sequence[Element],
    pdf: bytes,
    *,
    max_pages: int = 5000,
    ocr: Mapping[int, PageLayer] | None = None,
) -> list[Element]:
    """The elements with their boxes on the PDF's pages: the text layer of each page their
    text is on (read in the contained pdfium worker), OCR words where `ocr` has the page."""
    wanted = sorted({n for element in elements for n in (element.page, element.page + 1)})
    try:
        layers = {layer.number: layer for layer in read_text_layers(pdf, max_pages, wanted)}
    except BudgetExceeded:
        raise  # the document's whole budget, not this reader's failure
    except DocumentError as exc:  # the conversion succeeded: keep it, without boxes
        reason = f"the text layer could not be read ({exc})"
        return [element.model_copy(update={"boxes": not_aligned(reason)}) for element in elements]
    for number, layer in (ocr or {}).items():
        if number not in layers or not layers[number].words:
            layers[number] = layer
    return align_elements(elements, layers)


def aligned_share(elements: Sequence[Element]) -> tuple[int, int]:
    """How many of the content elements are aligned, and how many were placed at all."""
    placed = [e for e in elements if e.boxes is not None and not e.is_heading]
    aligned = sum(1 for e in placed if e.boxes and e.boxes.status is BoxStatus.ALIGNED)
    return aligned, len(placed)


def with_boxes(
    parsed: ParsedDocument,
    pdf: bytes,
    *,
    max_pages: int = 5000,
    ocr: Mapping[int, PageLayer] | None = None,
) -> ParsedDocument:
    """The parsed document with every element placed on the PDF's pages (`place_elements`);
    its Markdown and sections are unchanged."""
    elements = place_elements(parsed.elements, pdf, max_pages=max_pages, ocr=ocr)
    return parsed.model_copy(update={"elements": tuple(elements)})
