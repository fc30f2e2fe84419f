"""A slide's own lines given to its page's Markdown: wrapped lines joined, list items marked.

LibreOffice's PDF of a slide breaks every text line the slide wraps, and its text layer cannot
tell a bullet from a paragraph, so the page's Markdown has a title or a sentence over two
blocks (the second sometimes taken for a heading) and bullets as paragraphs. The deck's lines
(`drac.documents.office.slides.SlideLine`) say where each line starts and ends and what it is. Each
deck line is found on the page by its words (letters and digits, case and markup ignored),
whole and in sequence; the page's blocks are then cut where one deck line ends and the next
starts inside a block, joined where one deck line runs over several, and a block that is one
deck bullet or numbered item becomes a list item at its nesting level. A pipe table whose every
word is found in the deck's lines (bullets whose bold lead the text layer set apart as a
column) is read as those lines. Only the text layer's characters are kept (no text is added or
removed but list markers, heading and emphasis marks and table pipes); lines not found, other
tables and comments are left as they are.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from drac.documents.office.markdown_lines import DELIMITER_ROW, LIST_LINE, row_cells
from drac.documents.office.slides import SlideLine, SlideText, apply_headings

__all__ = ["apply_lines", "apply_slide"]

_MAX_PAGE_WORDS = 20_000
_MAX_SLIDE_CHARS = 40_000
"""A page of more words, or a slide of more characters (at most half as many words), is left
as it is."""
_MAX_CANDIDATES = 64
"""Places tried for one line's first word (a page of one repeated word stays linear)."""
_RENDERED_NUMBER = re.compile(r"^(\**)\d{1,3}[.)]\s*")
_RENDERED_BULLET = re.compile(r"^(\**)[\u2022\u2013\u25aa\u25cf-]\s*")
_ADJACENT_BOLD = re.compile(r"\*\*(\s+)\*\*")
_LEADING_MARK = re.compile(r"\**(?:[-*+\u2022\u2013\u25aa\u25cf]|\d{1,3}[.)])?\**")
_EDGE = re.compile(r"[.:;!?)\]\u2013\u2014|]|\*\*|\s-\s")
_WORD = re.compile(r"[^\W_]+")
# a number the text layer read as a list marker stays in the body: it may be the start of
# a deck line typed with its number ("1. Best Digital Transformation Bank – South Asia"), and
# a number LibreOffice drew is a word no deck line holds (it goes with the next line)
_UNIT = re.compile(r"^(?P<marker>\s*(?:#{1,6}\s+|[-*+\u2022]\s+|\\(?=[#>])))?")


def apply_slide(markdown: str, slide: SlideText) -> str:
    """One page's Markdown with the slide's lines applied (`apply_lines`), then its headings
    (`drac.documents.office.slides.apply_headings`)."""
    return apply_headings(apply_lines(markdown, slide.lines), slide.headings)


@dataclass
class _Unit:
    """One text line of the page: its marker (heading, list or escape) and body."""

    index: int
    marker: str
    body: str
    words: list[tuple[str, int, int]]  # (key, start, end) in body


@dataclass
class _Piece:
    """A run of one unit's body that belongs to one deck line (or to none found)."""

    unit: _Unit
    start: int
    end: int
    line: int | None
    first: bool  # starts its unit


@dataclass
class _Block:
    """Pieces of the page's text that become one block."""

    pieces: list[_Piece] = field(default_factory=list)


def apply_lines(markdown: str, lines: Sequence[SlideLine]) -> str:
    """Return one page's Markdown with its blocks cut, joined and marked by the deck's lines.

    A pipe table of the text layer whose every word is found in the deck's lines (bullets
    LibreOffice set apart from their text, which the text layer took for columns; the deck's
    own tables are never among its lines) is read as those lines. The page is returned
    unchanged when no deck line is found on it or nothing changes.
    """
    if not lines or sum(len(line.text) for line in lines) > _MAX_SLIDE_CHARS:
        return markdown  # matching costs the deck's words times `_MAX_CANDIDATES`
    page_lines = markdown.split("\n")
    opened, rows = _open_tables(page_lines)
    out = _apply(opened, lines, rows) if rows else None
    if out is None:
        out = _apply(page_lines, lines, set())
    if out is None:
        return markdown
    return markdown if out == markdown.strip("\n") else out


def _apply(page_lines: list[str], lines: Sequence[SlideLine], required: set[int]) -> str | None:
    """The page rewritten by the deck's lines; None when nothing of the deck is found, or a
    line of `required` has a word found in none of them."""
    units = [_unit(i, text) for i, text in enumerate(page_lines) if _is_text(text)]
    words = [(unit, word) for unit in units for word in unit.words]
    if not words or len(words) > _MAX_PAGE_WORDS:
        return None
    labels = _labels([key for _, (key, _, _) in words], lines, _edges(words))
    if not any(label is not None for label in labels):
        return None
    unfound = {unit.index for (unit, _), label in zip(words, labels, strict=True) if label is None}
    if unfound & required:
        return None
    blocks = _blocks(units, words, labels, page_lines)
    return _assemble(page_lines, blocks, lines)


def _open_tables(page_lines: list[str]) -> tuple[list[str], set[int]]:
    """The page with each pipe-table row as a line of its cells' text (the delimiter row
    blank), and the indexes of those lines."""
    opened = list(page_lines)
    rows: set[int] = set()
    for index, line in enumerate(page_lines):
        if not line.startswith("|"):
            continue
        if DELIMITER_ROW.match(line):
            opened[index] = ""
            continue
        cells = row_cells(line)
        text = ""
        for cell in filter(None, cells):
            text += cell if not text or cell[0] in ",.:;)" else " " + cell
        opened[index] = text
        rows.add(index)
    return opened, rows


def _is_text(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(("|", "<!--"))


def _unit(index: int, text: str) -> _Unit:
    match = _UNIT.match(text)
    marker = match.group("marker") or "" if match else ""
    body = text[len(marker) :]
    words = [(_key(m.group()), m.start(), m.end()) for m in _WORD.finditer(body)]
    return _Unit(index=index, marker=marker, body=body, words=words)


def _key(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold()


def _line_words(line: SlideLine) -> list[str]:
    return [_key(m.group()) for m in _WORD.finditer(line.text)]


def _labels(stream: list[str], lines: Sequence[SlideLine], edges: list[bool]) -> list[int | None]:
    """For each page word, the deck line it was found in. Each deck line is found whole, at
    its first free place after the line before it in the deck (else before); lines of three
    words or more are placed first, and a shorter one only where it starts or ends at an edge
    (`edges[k]`: a block starts, or punctuation stands, between word k - 1 and word k), so
    that a short line does not take words out of a sentence."""
    positions: dict[str, list[int]] = {}
    for position, word in enumerate(stream):
        positions.setdefault(word, []).append(position)
    labels: list[int | None] = [None] * len(stream)
    found_lines: list[int] = []  # deck indexes of the lines placed, sorted
    ends: dict[int, int] = {}
    keyed = [(number, _line_words(line)) for number, line in enumerate(lines)]
    order = sorted((item for item in keyed if item[1]), key=lambda item: len(item[1]) < 3)
    for number, words in order:
        earlier = bisect.bisect_left(found_lines, number)
        after = ends[found_lines[earlier - 1]] if earlier else 0
        short = len(words) < 3
        found = _place(stream, positions.get(words[0], []), words, labels, after, edges, short)
        if found is None:
            continue
        labels[found : found + len(words)] = [number] * len(words)
        bisect.insort(found_lines, number)
        ends[number] = found + len(words)
    return labels


def _place(
    stream: list[str],
    starts: list[int],
    words: list[str],
    labels: list[int | None],
    after: int,
    edges: list[bool],
    short: bool,
) -> int | None:
    """The first free place of `words` at or after `after`, else before it (a title the
    text layer puts after the body); at most `_MAX_CANDIDATES` places tried each way."""
    size = len(words)
    split = bisect.bisect_left(starts, after)
    for candidates in (starts[split : split + _MAX_CANDIDATES], starts[:split][:_MAX_CANDIDATES]):
        for at in candidates:
            if stream[at : at + size] != words or not _free(labels, at, size):
                continue
            if short and not (edges[at] or at + size >= len(stream) or edges[at + size]):
                continue
            return at
    return None


def _edges(words: list[tuple[_Unit, tuple[str, int, int]]]) -> list[bool]:
    """For each page word, whether a block starts or punctuation stands right before it."""
    edges: list[bool] = []
    for k, (unit, (_, start, _)) in enumerate(words):
        previous = words[k - 1] if k else None
        if previous is None or previous[0] is not unit:
            edges.append(True)
            continue
        gap = unit.body[previous[1][2] : start]
        edges.append(bool(_EDGE.search(gap)))
    return edges


def _free(labels: list[int | None], at: int, size: int) -> bool:
    return all(label is None for label in labels[at : at + size])


def _blocks(
    units: list[_Unit],
    words: list[tuple[_Unit, tuple[str, int, int]]],
    labels: list[int | None],
    page_lines: list[str],
) -> list[_Block]:
    """The page's text cut into pieces at deck-line boundaries, pieces of one deck line on
    neighbouring text lines (nothing but blank lines between) joined into one block."""
    by_unit: dict[int, list[int | None]] = {}
    spans: dict[int, list[tuple[int, int]]] = {}
    for (unit, (_, start, end)), label in zip(words, labels, strict=True):
        by_unit.setdefault(unit.index, []).append(label)
        spans.setdefault(unit.index, []).append((start, end))
    blocks: list[_Block] = []
    previous: _Unit | None = None
    for unit in units:
        pieces = _cut(unit, by_unit.get(unit.index, []), spans.get(unit.index, []))
        for piece in pieces:
            last = blocks[-1].pieces[-1] if blocks else None
            if (
                last is not None
                and piece.first
                and previous is not None
                and last.unit is previous
                and last.end >= len(previous.body.rstrip())
                and piece.line is not None
                and last.line == piece.line
                and _neighbours(page_lines, previous.index, unit.index)
            ):
                blocks[-1].pieces.append(piece)
            else:
                blocks.append(_Block([piece]))
        previous = unit
    return blocks


def _neighbours(page_lines: list[str], first: int, second: int) -> bool:
    return all(not line.strip() for line in page_lines[first + 1 : second])


def _cut(unit: _Unit, labels: list[int | None], spans: list[tuple[int, int]]) -> list[_Piece]:
    """A unit's body as pieces, cut where the words found in one deck line give way to those
    of another (words found in none, such as a drawn list number, go with the next line)."""
    if not spans:
        return [_Piece(unit, 0, len(unit.body), None, True)]
    pieces: list[_Piece] = []
    start = 0
    current: int | None = None  # the deck line of the piece being built
    unfound = 0  # where the run of unfound words before this one starts
    for k, label in enumerate(labels):
        if label is None:
            continue
        if current is not None and label != current:
            first = unfound if unfound < k else k
            cut = _cut_at(unit.body, spans[first - 1][1], spans[first][0])
            pieces.append(_Piece(unit, start, cut, current, not pieces))
            start = cut
        current = label
        unfound = k + 1
    pieces.append(_Piece(unit, start, len(unit.body), current, not pieces))
    return pieces


def _cut_at(body: str, end: int, start: int) -> int:
    """Where to cut between two words: after the gap's last mark that ends the first line
    (closing emphasis, punctuation), so that opening emphasis and a list marker drawn or
    typed before the second line's text go with it."""
    gap = body[end:start]
    cut = len(gap)
    for token in reversed(list(re.finditer(r"\S+", gap))):
        if not _LEADING_MARK.fullmatch(token.group()):
            break
        cut = token.start()
    if cut == len(gap):  # nothing leads the second line: cut at the gap's last space
        space = max(gap.rfind(" "), gap.rfind("\t"))
        return end + space + 1 if space >= 0 else start - len(gap) + len(gap.rstrip("*_"))
    return end + cut


def _piece_text(piece: _Piece) -> str:
    return piece.unit.body[piece.start : piece.end].strip()


def _kept(block: _Block) -> bool:
    """Whether the block is one whole text line of the page, as the text layer had it."""
    piece = block.pieces[0]
    return len(block.pieces) == 1 and piece.first and piece.end >= len(piece.unit.body.rstrip())


def _deck_line(block: _Block, lines: Sequence[SlideLine]) -> SlideLine | None:
    """The deck line the whole block was found in, if one."""
    label = block.pieces[0].line
    if label is None or any(piece.line != label for piece in block.pieces):
        return None
    return lines[label]


def _body(block: _Block, deck: SlideLine | None) -> str:
    """The block's text: its pieces joined, bold marks paired (the whole text bold when the
    deck sets the whole line bold), neighbouring bold runs made one."""
    text = " ".join(filter(None, map(_piece_text, block.pieces)))
    if deck is not None and deck.bold and text.replace("**", "").strip():
        return "**" + text.replace("**", "").strip() + "**"
    return _ADJACENT_BOLD.sub(r"\1", _balanced(text))


def _balanced(text: str) -> str:
    """The text with its bold marks paired (a cut can leave one mark on each side)."""
    if text.count("**") % 2 == 0:
        return text
    if text.startswith("**"):
        return text[2:].lstrip()
    if text.endswith("**"):
        return text[:-2].rstrip()
    return text.replace("**", "", 1)


def _assemble(page_lines: list[str], blocks: list[_Block], lines: Sequence[SlideLine]) -> str:
    """The page with each block in place of its text lines: a block the text layer had as
    one line kept as it was (unless the deck makes it a list item), others rewritten."""
    starting: dict[int, list[_Block]] = {}
    inside: set[int] = set()
    for block in blocks:
        starting.setdefault(block.pieces[0].unit.index, []).append(block)
        inside.update(piece.unit.index for piece in block.pieces)
    out: list[str] = []
    widths: list[int] = []  # marker width of the open list item at each level
    for index, text in enumerate(page_lines):
        if index not in inside:
            if text.strip():
                widths = []
            out.append(text)
            continue
        for block in starting.get(index, []):
            deck = _deck_line(block, lines)
            body = _body(block, deck)
            if deck is not None and deck.kind in ("bullet", "number") and body:
                level = min(deck.level, len(widths))
                marker = "- " if deck.kind == "bullet" else f"{deck.number}. "
                body = _without_rendered_marker(body, deck)
                widths = [*widths[:level], len(marker)]
                blanks = len(out) - len(_rstrip_blank(out))
                if blanks and len(out) > blanks and LIST_LINE.match(out[-blanks - 1]):
                    del out[-blanks:]  # items of one list stay together
                if out and out[-1].strip() and not LIST_LINE.match(out[-1]):
                    out.append("")
                out.append(" " * sum(widths[:level]) + marker + _escape(body))
                continue
            widths = []
            if _kept(block):
                out.append(page_lines[index])
            elif body:
                out.extend(["", _escape(body), ""])
    joined = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", joined).strip("\n")


def _without_rendered_marker(body: str, deck: SlideLine) -> str:
    """The body without the bullet or number LibreOffice drew before it (the deck's own
    text never starts with it), emphasis kept."""
    rendered = _RENDERED_NUMBER if deck.kind == "number" else _RENDERED_BULLET
    match = rendered.match(body)
    if match is None or rendered.match(deck.text):
        return body
    return match.group(1) + body[match.end() :]


def _rstrip_blank(lines: list[str]) -> list[str]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end]


def _escape(text: str) -> str:
    """Text that Markdown would read as a heading, quote or list marker, escaped."""
    if text.startswith(("#", ">")) or LIST_LINE.match(text):
        return "\\" + text
    return text
