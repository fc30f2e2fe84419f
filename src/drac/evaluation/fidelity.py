"""Conversion fidelity: how faithfully a converted Markdown keeps a ground-truth Markdown.

Both texts are parsed into drac's own elements (`drac.parsing.parse_markdown`, what chunks are
built from) and compared on words as `drac.retrieval.text.tokens` reads them (markup removed,
NFKC, case-folded runs of letters and digits):

- words: recall and precision of the multiset of words;
- reading order: the longest common subsequence of the two word sequences, over the words
  both hold (1.0 when every shared word comes in the source's order);
- headings: the source's headings found as headings of the output by text
  (`headings_text_found`) and by text and level (`headings_found`), levels counted from each
  document's top heading (a document whose first heading is `##` has it as level 1);
- tables: each source body cell (not the first, key column) found in one output element
  together with its row's key cell and its column's header (a table row element carries its
  table's header);
- lists: each source list item found, its words in sequence, inside an output list;
- unprintable characters: C0 and C1 controls (but tab and newline), U+FFFD, private use,
  noncharacters, in the output;
- paragraphs split mid-sentence: a source paragraph whose word sequence appears in the output
  across an element boundary that is neither a sentence end nor a line end in the source.

All counts add up (`Fidelity.__add__`), so a corpus is scored by summing its documents.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

from drac.models import Element, ElementKind, ParseConfig
from drac.parsing.markdown import parse_markdown
from drac.retrieval.text import tokens

__all__ = [
    "Fidelity",
    "lcs_length",
    "score_conversion",
    "unprintable_characters",
]

_SENTENCE_END = re.compile(r"[.!?:;]\W*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
# Elements are compared whole: no element is split into pieces for this.
_PARSE = ParseConfig(max_element_chars=10**9, max_elements=10**7)


@dataclass(frozen=True)
class Fidelity:
    """The counts of one or more scored conversions; the ratios are properties."""

    source_words: int = 0
    output_words: int = 0
    matched_words: int = 0
    ordered_words: int = 0
    headings: int = 0
    headings_text_found: int = 0
    headings_found: int = 0
    table_cells: int = 0
    table_cells_found: int = 0
    list_items: int = 0
    list_items_kept: int = 0
    paragraphs: int = 0
    paragraphs_split: int = 0
    unprintable: int = 0
    documents: int = 1

    def __add__(self, other: Fidelity) -> Fidelity:
        return Fidelity(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    @property
    def word_recall(self) -> float:
        """Share of the source's words (with repetitions) found in the output."""
        return _ratio(self.matched_words, self.source_words)

    @property
    def word_precision(self) -> float:
        """Share of the output's words (with repetitions) that the source holds."""
        return _ratio(self.matched_words, self.output_words)

    @property
    def reading_order(self) -> float:
        """Longest common word subsequence over the words both texts hold."""
        return _ratio(self.ordered_words, self.matched_words)

    @property
    def heading_recall(self) -> float:
        """Share of the source's headings found as headings of the same text and level."""
        return _ratio(self.headings_found, self.headings)

    @property
    def heading_text_recall(self) -> float:
        """Share of the source's headings found as headings of the same text, any level."""
        return _ratio(self.headings_text_found, self.headings)

    @property
    def table_fidelity(self) -> float:
        """Share of source table cells found with their row key and column header."""
        return _ratio(self.table_cells_found, self.table_cells)

    @property
    def list_fidelity(self) -> float:
        """Share of source list items found inside an output list."""
        return _ratio(self.list_items_kept, self.list_items)


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def score_conversion(source: str, output: str) -> Fidelity:
    """Score `output` (a converted Markdown) against `source` (the ground-truth Markdown)."""
    source_elements = parse_markdown(source, _PARSE)
    output_elements = parse_markdown(output, _PARSE)
    source_words = tokens(source)
    output_words = tokens(output)
    matched = sum((Counter(source_words) & Counter(output_words)).values())
    headings = _headings(source_elements)
    found_text, found_level = _headings_found(headings, _headings(output_elements))
    cells, cells_found = _table_cells(source_elements, output_elements)
    items, kept = _list_items(source_elements, output_elements)
    paragraphs, split = _split_paragraphs(source_elements, output_elements)
    return Fidelity(
        source_words=len(source_words),
        output_words=len(output_words),
        matched_words=matched,
        ordered_words=lcs_length(source_words, output_words),
        headings=len(headings),
        headings_text_found=found_text,
        headings_found=found_level,
        table_cells=cells,
        table_cells_found=cells_found,
        list_items=items,
        list_items_kept=kept,
        paragraphs=paragraphs,
        paragraphs_split=split,
        unprintable=unprintable_characters(output),
    )


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two word sequences (bit-parallel)."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for position, word in enumerate(a):
        masks[word] = masks.get(word, 0) | (1 << position)
    full = (1 << len(a)) - 1
    row = full
    for word in b:
        match = masks.get(word)
        if match is None:
            continue
        low = row & match
        row = ((row + low) | (row - low)) & full
    return len(a) - row.bit_count()


def unprintable_characters(text: str) -> int:
    """How many characters of `text` are not printable text (controls, U+FFFD, private use)."""
    return sum(1 for char in text if _unprintable(char))


def _unprintable(char: str) -> bool:
    if char in "\n\t":
        return False
    code = ord(char)
    if code == 0xFFFD or (code & 0xFFFE) == 0xFFFE or 0xFDD0 <= code <= 0xFDEF:
        return True
    return unicodedata.category(char) in ("Cc", "Co", "Cs")


def _headings(elements: Iterable[Element]) -> list[tuple[tuple[str, ...], int]]:
    """(words, level) of each heading, levels counted from the document's top one (1)."""
    found = [(tuple(tokens(e.title)), e.level or 1) for e in elements if e.is_heading]
    found = [(words, level) for words, level in found if words]
    top = min((level for _, level in found), default=1)
    return [(words, level - top + 1) for words, level in found]


def _headings_found(
    source: list[tuple[tuple[str, ...], int]], output: list[tuple[tuple[str, ...], int]]
) -> tuple[int, int]:
    """(by text, by text and level): each output heading matches at most one source heading."""
    by_text = Counter(text for text, _ in output)
    by_level = Counter(output)
    found_text = found_level = 0
    for heading in source:
        if by_text[heading[0]] > 0:
            by_text[heading[0]] -= 1
            found_text += 1
        if by_level[heading] > 0:
            by_level[heading] -= 1
            found_level += 1
    return found_text, found_level


def _table_cells(source: list[Element], output: list[Element]) -> tuple[int, int]:
    """(source body cells, those found in one output element with their row key and header).

    In an output table row the cell must be a cell of its own under a header cell of the
    header's words (merged columns or a promoted header do not count); in any other element
    the cell, key and header words must each appear in sequence.
    """
    rows = [_table_row(e) for e in output if e.kind is ElementKind.TABLE_ROW]
    texts = [tuple(tokens(e.text)) for e in output if e.kind is not ElementKind.TABLE_ROW]
    total = found = 0
    for element in source:
        if element.kind is not ElementKind.TABLE_ROW or not element.table_header:
            continue
        header, row = _table_row(element)
        if len(row) < 2:
            continue
        key = row[0]
        for column, words in enumerate(row[1:], start=1):
            if not words:
                continue
            total += 1
            title = header[column] if column < len(header) else ()
            found += any(
                any(c == words and h == title for c, h in zip(cells, heads, strict=False))
                and key in cells
                for heads, cells in rows
            ) or any(all(_contains(text, n) for n in (words, key, title)) for text in texts)
    return total, found


def _table_row(element: Element) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """(header cells, row cells) of a table row element, each cell as its words."""
    header = element.table_header.splitlines()[0] if element.table_header else ""
    return (
        [tuple(tokens(cell)) for cell in _cells(header)],
        [tuple(tokens(cell)) for cell in _cells(element.text)],
    )


def _cells(row: str) -> list[str]:
    text = row.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", text)]


def _words_of(element: Element) -> tuple[str, ...]:
    """An element's words as a reader of its chunk sees them (a row with its header)."""
    text = element.text
    if element.kind is ElementKind.TABLE_ROW and element.table_header:
        text = element.table_header + "\n" + text
    return tuple(tokens(text))


def _list_items(source: list[Element], output: list[Element]) -> tuple[int, int]:
    """(source list items, those whose words appear in sequence inside an output list)."""
    lists = [tuple(tokens(e.text)) for e in output if e.kind is ElementKind.LIST]
    total = kept = 0
    for element in source:
        if element.kind is not ElementKind.LIST:
            continue
        for item in _items(element.text):
            words = tuple(tokens(item))
            if not words:
                continue
            total += 1
            kept += any(_contains(words_of_list, words) for words_of_list in lists)
    return total, kept


def _items(text: str) -> list[str]:
    """The items of a Markdown list (nested ones too), each with its continuation lines."""
    items: list[str] = []
    for line in text.splitlines():
        match = _LIST_ITEM.match(line)
        if match:
            items.append(line[match.end() :])
        elif items and line.strip():
            items[-1] += " " + line.strip()
    return items


def _split_paragraphs(source: list[Element], output: list[Element]) -> tuple[int, int]:
    """(source paragraphs of two words or more, those cut in the output mid-sentence)."""
    stream: list[str] = []
    starts: set[int] = set()
    for element in output:
        element_words = _words_of(element)
        if element_words:
            starts.add(len(stream))
            stream.extend(element_words)
    index = _Index(stream)
    total = split = 0
    for element in source:
        if element.kind is not ElementKind.PARAGRAPH:
            continue
        words, ends = _words_with_sentence_ends(element.text)
        if len(words) < 2:
            continue
        total += 1
        at = index.find(words)
        if at is None:
            continue
        cuts = [k for k in range(1, len(words)) if at + k in starts]
        split += any(not ends[k - 1] for k in cuts)
    return total, split


def _words_with_sentence_ends(text: str) -> tuple[list[str], list[bool]]:
    """The words of `text` and, for each, whether a sentence or a source line ends after it."""
    words: list[str] = []
    ends: list[bool] = []
    for line in text.splitlines():
        for piece in line.split():
            piece_words = tokens(piece)
            if not piece_words:
                continue
            words.extend(piece_words)
            ends.extend([False] * (len(piece_words) - 1))
            ends.append(bool(_SENTENCE_END.search(piece.rstrip("*_`)]\"'”’"))))
        if ends:
            ends[-1] = True  # a line break the source wrote: its renditions break there too
    return words, ends


class _Index:
    """Finds a word sequence in a long word stream (by its first word's positions)."""

    def __init__(self, stream: list[str]) -> None:
        self.stream = stream
        self.positions: dict[str, list[int]] = {}
        for position, word in enumerate(stream):
            self.positions.setdefault(word, []).append(position)

    def find(self, words: Sequence[str]) -> int | None:
        """The first position where `words` occur contiguously, or None."""
        size = len(words)
        target = list(words)
        for position in self.positions.get(words[0], ()):
            if self.stream[position : position + size] == target:
                return position
        return None


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """Whether `needle` occurs contiguously in `haystack` (an empty needle always does)."""
    if not needle:
        return True
    size = len(needle)
    first = needle[0]
    target = tuple(needle)
    for position, word in enumerate(haystack):
        if word == first and tuple(haystack[position : position + size]) == target:
            return True
    return False
