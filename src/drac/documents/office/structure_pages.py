"""The file's own headings and list items given to the pages of its PDF.

Each body paragraph read from the file (`drac.documents.office.file_structure`) is looked for, in
document order, in the page Markdown the offline converter made of LibreOffice's PDF: a run
of text lines (however the text layer read them: a heading, a list item, a paragraph, a
line it split off or ran into the next) whose letters and digits, case and markup ignored,
are exactly the paragraph's, starting where the previous paragraph ended (a line may hold
the end of one paragraph and the start of the next). The run is replaced by the paragraph as
the file has it: a heading at its level, a list item (bullet or number, nested as in the
file) or a paragraph, in the file's words (a word the text layer broke or ran into the next
comes back whole) and its bold. A run going on over a page break is cut there: the first
piece keeps the paragraph's kind and each page keeps its own words, so every word stays on
its page. A paragraph whose text is not found so (a glyph the PDF lost, text the text layer
put elsewhere) leaves the text layer's lines as they are; table rows, page markers and
comments are never touched, and lines no paragraph claims (page headers, footers) stay.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from drac.documents.office.file_structure import FileBlock, Run
from drac.documents.office.markdown_lines import DELIMITER_ROW, LIST_LINE, row_cells
from drac.documents.spreadsheets.rows import paragraph

MAX_COMPARED = 50_000_000
"""Characters compared to place one document's paragraphs (the work stays bounded whatever
the file and its PDF hold)."""
_LOOKAHEAD = 80
"""Text lines searched past where the previous paragraph ended (order kept; no far jump)."""
_MIN_START = 4
"""A line that only starts a paragraph must hold at least this many of its characters."""
_HEADING = re.compile(r"^#{1,6}\s+")
_BULLET = re.compile(r"^(?:[-*+•]\s+)+")
_MARKER = re.compile(r"^\s*(?:\(?[0-9a-zA-Z]{1,4}[.)]|[o▪§])\s+")
"""A number, letter or bullet glyph LibreOffice prints before a list item's text."""
_TYPED = re.compile(r"^\s*([-*+•]|\d{1,9}[.)])[ \t]+(?=\S)")


@dataclass
class _Line:
    """A text line: where it is, its text without a leading Markdown prefix, the letters and
    digits of that text (casefolded) and, for each, its character position."""

    page: int
    index: int
    text: str
    key: str
    positions: list[int]
    table: bool = False  # a pipe-table row: only a whole paragraph or more may claim it
    heading: int = 0  # the level the text layer gave the line (0: no heading)


@dataclass
class _Piece:
    """A paragraph's part on one line: its key offsets there."""

    line: int  # position in the list of text lines
    start: int
    end: int
    marker: int = 0  # of them, the first few are a printed list marker, not the block's


@dataclass
class _Found:
    block: int
    pieces: list[_Piece] = field(default_factory=list)


def place_structure(pages: Sequence[str], blocks: Sequence[FileBlock]) -> list[str]:
    """The pages' Markdown (one string per page, each starting with its page marker) with the
    file's paragraphs put in place of the text layer's lines (module docstring); table cells'
    paragraphs are not placed (the file's tables are `drac.documents.office.table_pages`')."""
    blocks = [block for block in blocks if block.kind != "cell"]
    if not blocks:
        return list(pages)
    lines = [page.split("\n") for page in pages]
    text_lines = [
        _text_line(page, index, line)
        for page, page_lines in enumerate(lines)
        for index, line in enumerate(page_lines)
    ]
    found = _align([t for t in text_lines if t is not None], blocks)
    return _rebuild(lines, [t for t in text_lines if t is not None], blocks, found)


def _text_line(page: int, index: int, line: str) -> _Line | None:
    stripped = line.strip()
    if not stripped or stripped.startswith("<!--") or DELIMITER_ROW.match(stripped):
        return None
    if stripped.startswith("|"):  # a table of the text layer's: a list it took for one?
        text = " ".join(cell for cell in row_cells(stripped) if cell)
    else:
        text = _BULLET.sub("", _HEADING.sub("", stripped))
    key, positions = _key(text)
    if not key:
        return None
    marks = _HEADING.match(stripped)
    level = marks.group(0).count("#") if marks else 0
    return _Line(page, index, text, key, positions, stripped.startswith("|"), level)


def _key(text: str) -> tuple[str, list[int]]:
    """The letters and digits of `text`, casefolded, and the position each comes from."""
    chars: list[str] = []
    positions: list[int] = []
    for position, char in enumerate(text):
        for folded in char.casefold():
            if folded.isalnum():
                chars.append(folded)
                positions.append(position)
    return "".join(chars), positions


def _align(lines: list[_Line], blocks: Sequence[FileBlock]) -> list[_Found]:
    """Each block's run of lines, in order from where the previous one ended (until
    `MAX_COMPARED` characters were compared: the blocks after that are not placed)."""
    found: list[_Found] = []
    cursor = (0, 0)  # (text line, key offset in it)
    budget = [MAX_COMPARED]
    for number, block in enumerate(blocks):
        key = _key(block.text)[0]
        if not key:
            continue
        if budget[0] <= 0:
            break
        for start in range(cursor[0], min(len(lines), cursor[0] + _LOOKAHEAD)):
            offset = cursor[1] if start == cursor[0] else 0
            pieces = _run(lines, start, offset, key, budget)
            if pieces is not None:
                found.append(_Found(number, pieces))
                last = pieces[-1]
                whole = last.end >= len(lines[last.line].key)
                cursor = (last.line + 1, 0) if whole else (last.line, last.end)
                break
    return found


def _run(
    lines: list[_Line], start: int, offset: int, key: str, budget: list[int]
) -> list[_Piece] | None:
    """The pieces of lines from `start` (at key `offset`) that spell `key`, or None; the
    characters compared are taken from `budget`."""
    pieces: list[_Piece] = []
    matched = 0
    index = start
    while index < len(lines):
        line = lines[index]
        begin = offset if index == start else 0
        marker = _after_marker(line, key) if begin == 0 and matched == 0 else 0
        at = begin + marker
        if at >= len(line.key) or line.key[at] != key[matched]:
            return None
        rest = line.key[at:]
        budget[0] -= len(rest)
        left = len(key) - matched
        if key.startswith(rest, matched):
            if matched == 0 and len(rest) < min(_MIN_START, len(key)):
                return None
            pieces.append(_Piece(index, begin, len(line.key), marker))
            matched += len(rest)
        elif len(rest) > left and rest.startswith(key[matched:]) and not line.table:
            pieces.append(_Piece(index, begin, at + left, marker))
            return pieces
        else:
            return None
        if matched == len(key):
            return pieces
        if index + 1 < len(lines) and lines[index + 1].page - line.page > 1:
            return None
        index += 1
    return None


def _after_marker(line: _Line, key: str) -> int:
    """Where a paragraph's text starts on a line that begins with a printed list marker
    ("1.", "a)", a bullet glyph) the file's text does not hold (its numbering's)."""
    if line.key.startswith(key[: _MIN_START + 1]):
        return 0
    marker = _MARKER.match(line.text)
    if marker is None:
        return 0
    return sum(1 for position in line.positions if position < marker.end())


def _rebuild(
    lines: list[list[str]],
    text_lines: list[_Line],
    blocks: Sequence[FileBlock],
    found: list[_Found],
) -> list[str]:
    """The pages with each found block's pieces in place of the lines they cover."""
    covers: dict[tuple[int, int], list[tuple[int, int, list[str]]]] = {}
    widths = _indents(blocks)
    styled = any(block.kind == "heading" for block in blocks)
    for item in found:
        block = blocks[item.block]
        first_line = text_lines[item.pieces[0].line]
        if not styled and block.kind == "paragraph" and first_line.heading:
            # a file that marks no heading (its author set them by font alone): the text
            # layer's heading, found by that font, stays one
            block = block.model_copy(update={"kind": "heading", "level": first_line.heading})
        plain = block.text
        plain_positions = _key(plain)[1]
        by_page: dict[int, list[_Piece]] = {}
        for piece in item.pieces:
            by_page.setdefault(text_lines[piece.line].page, []).append(piece)
        done = 0  # key characters of the block given out so far
        first_page = True
        for page_pieces in by_page.values():
            size = sum(piece.end - piece.start - piece.marker for piece in page_pieces)
            begin = 0 if done == 0 else plain_positions[done]
            done += size
            end = len(plain) if done >= len(plain_positions) else plain_positions[done]
            text = _render(block, _slice(block.runs, begin, end), first_page, widths[item.block])
            first_page = False
            for number, piece in enumerate(page_pieces):
                line = text_lines[piece.line]
                covers.setdefault((line.page, line.index), []).append(
                    (piece.start, piece.end, text if number == 0 else [])
                )
    where = {(line.page, line.index): line for line in text_lines}
    out = []
    for page, page_lines in enumerate(lines):
        rebuilt: list[tuple[str, bool]] = []
        for index, raw in enumerate(page_lines):
            cover = covers.get((page, index))
            if cover is None:
                if DELIMITER_ROW.match(raw.strip()) and (page, index - 1) in covers:
                    continue  # the header of a table the file says is no table
                rebuilt.append((raw, False))
                continue
            parts = _covered(where[(page, index)], sorted(cover, key=lambda c: c[0]))
            rebuilt.extend((part, True) for part in parts)
        out.append(re.sub(r"\n{3,}", "\n\n", "\n".join(_spaced(rebuilt))).strip("\n"))
    return out


def _covered(line: _Line, cover: list[tuple[int, int, list[str]]]) -> list[str]:
    """A line's replacement: the blocks' renderings, and its text no block claims."""
    out: list[str] = []
    reached = 0
    for start, end, text in cover:
        if start > reached:
            out.extend(["", _leftover(line, reached, start), ""])
        out.extend(text)
        reached = max(reached, end)
    if reached < len(line.key):
        out.extend(["", _leftover(line, reached, len(line.key)), ""])
    return out


def _leftover(line: _Line, start: int, end: int) -> str:
    """The line's characters from key offset `start` to `end`, as a paragraph."""
    begin = line.positions[start] if start else 0
    stop = line.positions[end] if end < len(line.positions) else len(line.text)
    return _safe(line.text[begin:stop].strip())


def _spaced(lines: list[tuple[str, bool]]) -> list[str]:
    """The lines, with a blank line between a placed line and its neighbour unless both are
    list items (a paragraph right after an item would be read as the item's continuation,
    one right after a paragraph as part of it), and none between two placed items."""
    out: list[tuple[str, bool]] = []
    for line, placed in lines:
        item = placed and bool(LIST_LINE.match(line))
        if item:
            while len(out) > 1 and not out[-1][0].strip() and _placed_item(out[-2]):
                out.pop()  # the text layer's gap inside what the file has as one list
        if out and out[-1][0].strip() and line.strip() and (placed or out[-1][1]):
            both_items = bool(LIST_LINE.match(out[-1][0])) and bool(LIST_LINE.match(line))
            if not both_items:
                out.append(("", False))
        out.append((line, placed))
    return [line for line, _ in out]


def _placed_item(line: tuple[str, bool]) -> bool:
    return line[1] and bool(LIST_LINE.match(line[0]))


def _slice(runs: Sequence[Run], begin: int, end: int) -> list[Run]:
    """The runs' text from character `begin` to `end` of their joined text."""
    out: list[Run] = []
    position = 0
    for run in runs:
        low, high = max(begin - position, 0), min(end - position, len(run.text))
        if low < high:
            out.append(Run(text=run.text[low:high], bold=run.bold))
        position += len(run.text)
    return out


def _indents(blocks: Sequence[FileBlock]) -> list[int]:
    """Each list item's indentation: the content columns of the items it is nested in."""
    widths: list[int] = []
    columns: list[int] = []  # content column of the open item at each depth
    for block in blocks:
        if block.kind != "item":
            columns = []
            widths.append(0)
            continue
        del columns[block.level :]
        indent = columns[-1] if columns else 0
        while len(columns) < block.level:
            columns.append(indent)  # a level skipped: its items would sit here
        widths.append(indent)
        columns.append(indent + len(_marker(block)) + 1)
    return widths


def _marker(block: FileBlock) -> str:
    return f"{block.number}." if block.ordered else "-"


def _render(block: FileBlock, runs: list[Run], first: bool, indent: int) -> list[str]:
    """A block's (piece of) text as Markdown: a line the file breaks it at stays a line (in a
    list item, indented under it; in a paragraph, one starting with a list marker is a list
    item, as a reader sees it); a comment opener in the file's text is defused (no page
    marker can be forged)."""
    return [text.replace("<!--", "&lt;!--") for text in _markdown(block, runs, first, indent)]


def _markdown(block: FileBlock, runs: list[Run], first: bool, indent: int) -> list[str]:
    if block.kind == "heading" and first:
        text = " ".join("".join(run.text for run in runs).split())
        return ["#" * block.level + " " + text]
    lines = [line for line in (_typed(part) for part in _broken(runs)) if line]
    if not lines:
        return []
    if block.kind == "item" and first:
        marker = _marker(block)
        under = " " * (indent + len(marker) + 1)
        head = " " * indent + marker + " " + lines[0]
        return ["\n".join([head, *(under + _safe(line) for line in lines[1:])])]
    return ["\n".join(line if LIST_LINE.match(line) else _safe(line) for line in lines)]


def _typed(runs: list[Run]) -> str:
    """A line of runs as Markdown; one whose text starts with a typed list marker ("1. ",
    "- ", "• ") is a list item, its marker set before its emphasis."""
    text = "".join(run.text for run in runs)
    marker = _TYPED.match(text)
    if marker is None:
        return _emphasised(runs)
    sign = "-" if marker.group(1) in "•*+" else marker.group(1)
    return f"{sign} {_emphasised(_slice(runs, marker.end(), len(text)))}"


def _broken(runs: list[Run]) -> list[list[Run]]:
    """The runs cut at the file's line breaks."""
    lines: list[list[Run]] = [[]]
    for run in runs:
        for number, part in enumerate(run.text.split("\n")):
            if number:
                lines.append([])
            if part:
                lines[-1].append(Run(text=part, bold=run.bold))
    return lines


def _emphasised(runs: list[Run]) -> str:
    """Runs as Markdown, bold runs between `**` (spaces kept outside the markers)."""
    parts: list[str] = []
    for run in runs:
        if not run.bold or not run.text.strip():
            parts.append(run.text)
            continue
        core = run.text.strip()
        lead = run.text[: len(run.text) - len(run.text.lstrip())]
        tail = run.text[len(run.text.rstrip()) :]
        parts.append(f"{lead}**{core}**{tail}")
    return " ".join("".join(parts).split())


def _safe(text: str) -> str:
    """Text as a paragraph line (a leading block or table marker escaped)."""
    if text.startswith("|"):
        return "\\" + text
    return paragraph(text.replace("<!--", "&lt;!--"))
