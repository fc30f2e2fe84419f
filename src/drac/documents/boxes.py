"""Place each element of a PDF-derived document on its page: align the element's words to
the page's text layer (or OCR words) and keep the boxes of the words found, per line.

One code path for every converter (offline, OCR, a vision model's Markdown): the Markdown is
parsed into elements, then each element's text is looked up on the page it starts on (and
the next one, where a model ran a paragraph across the page break). Words are compared
normalised (NFKC, case folded, letters and digits only), so Markdown syntax, table pipes,
escapes and punctuation do not count, and a word hyphenated at a line end matches the whole
word. An element is found by an exact run of its words first, else by a sequence alignment
(difflib) that tolerates words the model changed, added or dropped. An element of which too
little is found says so (`not_aligned`, no box): a box is never guessed.
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher

from drac.documents.layers import PageLayer, read_text_layers
from drac.errors import DocumentError
from drac.ingest import ParsedDocument
from drac.models import Element
from drac.provenance import (
    Box,
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
_SEPARATOR = "\x1f"
_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]{0,200}>")
_SPLIT = re.compile(r"[\s|]+")


def normal_word(text: str) -> str:
    """A word as it is compared: NFKC, case folded, only its letters and digits."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(char for char in folded if char.isalnum())


def markdown_words(text: str) -> list[str]:
    """The words of an element's Markdown, normalised, without link targets, HTML tags,
    entities, pipes and syntax; a word hyphenated before a lower-case word is joined to it."""
    text = html.unescape(_HTML_TAG.sub(" ", _LINK_TARGET.sub("] ", text)))
    raw = [part for part in _SPLIT.split(text) if part]
    words: list[str] = []
    index = 0
    while index < len(raw):
        part = raw[index]
        if _hyphenated(part, raw[index + 1] if index + 1 < len(raw) else ""):
            part = part[:-1] + raw[index + 1]
            index += 1
        word = normal_word(part)
        if word:
            words.append(word)
        index += 1
    return words


def _hyphenated(word: str, following: str) -> bool:
    return len(word) > 1 and word.endswith("-") and following[:1].islower()


class _PageWords:
    """A page's normalised words, each pointing at the layer words it came from."""

    def __init__(self, layer: PageLayer) -> None:
        self.layer = layer
        self.words: list[str] = []
        self.sources: list[tuple[int, ...]] = []
        raw = layer.words
        index = 0
        while index < len(raw):
            text = raw[index][0]
            nxt = raw[index + 1] if index + 1 < len(raw) else None
            if nxt is not None and nxt[5] > raw[index][5] and _hyphenated(text, nxt[0]):
                word, sources = normal_word(text[:-1] + nxt[0]), (index, index + 1)
                index += 2
            else:
                word, sources = normal_word(text), (index,)
                index += 1
            if word:
                self.words.append(word)
                self.sources.append(sources)
        self.joined = _SEPARATOR + _SEPARATOR.join(self.words) + _SEPARATOR
        self.starts: list[int] = []
        offset = 0
        for word in self.words:
            self.starts.append(offset)
            offset += len(word) + 1

    def find(self, words: Sequence[str], from_word: int) -> int | None:
        """The index of the first word of an exact run of `words` at or after `from_word`."""
        if from_word >= len(self.words):
            return None
        needle = _SEPARATOR + _SEPARATOR.join(words) + _SEPARATOR
        found = self.joined.find(needle, self.starts[from_word])
        if found < 0:
            return None
        return bisect.bisect_left(self.starts, found)

    def boxes(self, matched: Iterable[int]) -> tuple[Box, ...]:
        """One box per line of the layer words behind the matched page words."""
        lines: dict[int, list[Box]] = {}
        for index in sorted(set(matched)):
            for source in self.sources[index]:
                text, x0, top, x1, bottom, line = self.layer.words[source]
                lines.setdefault(line, []).append((x0, top, x1, bottom))
        return capped([enclosing(boxes) for boxes in lines.values()])


def align_elements(elements: Sequence[Element], layers: Mapping[int, PageLayer]) -> list[Element]:
    """Each element with its boxes (`Element.boxes`): aligned to the layer of the page it
    starts on, or `not_aligned` with the reason. `layers` maps page numbers to page words."""
    pages = {number: _PageWords(layer) for number, layer in layers.items()}
    cursors: dict[int, int] = {}
    placed: list[Element] = []
    for element in elements:
        boxes = _place(element, pages, cursors)
        placed.append(element.model_copy(update={"boxes": boxes}))
    return placed


def _place(element: Element, pages: Mapping[int, _PageWords], cursors: dict[int, int]) -> ElementBoxes:
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
    cursor = cursors.get(number, 0)
    start = page.find(words, cursor)
    if start is None:
        start = page.find(words, 0)
    if start is not None:
        cursors[number] = start + len(words)
        found = {number: range(start, start + len(words))}
        return _boxes(found, pages, len(words), len(words), source)
    return _fuzzy(element, words, pages, cursors, source)


def _fuzzy(
    element: Element,
    words: list[str],
    pages: Mapping[int, _PageWords],
    cursors: dict[int, int],
    source: str,
) -> ElementBoxes:
    """Align by matching blocks of words: the element's page and the next one."""
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
    matcher = SequenceMatcher(None, tokens, words, autojunk=False)
    shortest = 1 if len(words) <= 2 else 2
    found: dict[int, list[int]] = {}
    matched = 0
    for start, _, size in matcher.get_matching_blocks():
        if size < shortest:
            continue
        matched += size
        for index in range(start, start + size):
            page_number, word = where[index]
            found.setdefault(page_number, []).append(word)
    share = matched / len(words)
    if share < PARTIAL_SHARE:
        return not_aligned(
            f"{round(share * 100)} % of its words were found on page {number}", source
        )  # type: ignore[arg-type]
    if number in found:
        cursors[number] = max(cursors.get(number, 0), max(found[number]) + 1)
    return _boxes(found, pages, matched, len(words), source)


def _boxes(
    found: Mapping[int, Iterable[int]],
    pages: Mapping[int, _PageWords],
    matched: int,
    total: int,
    source: str,
) -> ElementBoxes:
    share = matched / total
    status = BoxStatus.ALIGNED if share >= ALIGNED_SHARE else BoxStatus.PARTIAL
    entries = tuple(
        PageBoxes(page=number, boxes=pages[number].boxes(indices))
        for number, indices in sorted(found.items())
    )
    return ElementBoxes(
        status=status,
        source=source,  # type: ignore[arg-type]
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
