"""Tables in a PDF text layer, recovered as Markdown pipe tables (offline converter).

PDFium gives text lines, not cells: a table row arrives as a cell per line where cells wrap
(the header "Number of / Bags"), or as one line holding several cells separated by wide gaps.
Lines are first cut into fragments at those gaps; a table is then a run of fragments laid out
in columns: each row starts in the first column and has a cell in at least one more column, a
cell may continue on the lines right below it. Only runs of at least two such rows, the first
defining the columns (the header), become a table; everything else stays prose.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, Protocol

from drac.documents.table_grid import escape_pipes, pipe_table, position_groups

# A gap wider than this many font sizes between two characters separates two cells (word
# spacing is about a third of one, half in a loose justified line; LaTeX's column separation is
# about 0.6 to 1: measured on the corpus, 0.65 keeps 0.617 of the cells against 0.558 at 1.0,
# with no word, heading or paragraph lost).
CELL_GAP = 0.65
_MAX_COLUMNS = 12
# A cell whose middle is this many font sizes from its header cell's middle is centred under it.
_CENTRED = 0.5
# A header cell may start this many font sizes above the header row's first cell.
_HEADER_REACH = 4
# A header cell of more words than this is a sentence.
_HEADER_WORDS = 12
# A line ending this many font sizes or less from its column's widest line fills the column.
_FULL = 0.6
# A table whose body has more empty cells than this share was misread (overlapping columns).
MAX_EMPTY_SHARE = 0.2
# A body of this many rows may leave its last column mostly empty (a column of notes).
_SPARSE_ROWS = 3
# A first cell that is a list marker (or ends with a bullet): the "table" is a list.
_LIST_MARKER = re.compile(r"(?:^(?:[-–—*]|\d{1,3}[.)]|[A-Za-z][.)])$|[•●○◦▪▫■□➢➤►▶✓✔❖◆◇‣⁃∙·]$)")


@dataclass(frozen=True)
class Vocabulary:
    """The document's words (case-folded, with their counts), to tell a word a narrow column
    broke at its edge from two words, and whether its typesetter hyphenates broken words."""

    counts: Mapping[str, int] = field(default_factory=dict)
    hyphenates: bool = False

    def broken(self, before: str, after: str) -> bool:
        """Whether `before` at a full line's end and `after` at the next line's start are one
        word: the document writes them whole elsewhere, or, where the typesetter does not
        hyphenate, `before` is no word the document uses more than twice ("Destinati")."""
        joined = (before + after).casefold()
        if joined in self.counts:
            return True
        return not self.hyphenates and self.counts.get(before.casefold(), 0) <= _RARE


# A word piece the document holds this many times or fewer is no word of its own.
_RARE = 6
_NO_WORDS = Vocabulary()


class Cell(NamedTuple):
    """One gap-separated part of a text line: its horizontal extent, baselines and text."""

    x: float
    right: float
    baseline: float  # of its first visual line
    bottom: float  # the baseline of its last visual line (a wrapped word goes on below)
    text: str


class TextLine(Protocol):
    """What the table finder needs of a line."""

    size: float
    baseline: float
    bold: bool

    def cells(
        self,
        columns: Sequence[float] = (),
        near: Sequence[float] = (),
        own: Sequence[float] = (),
    ) -> list[Cell]:
        """Each gap-separated part of the line, left to right; also cut where another word
        starts at one of `columns` (where the page's cells start) with no space before it;
        after a space, in a line of several parts, where a word starts at one of `near`
        (where cells of its run of lines in one font size start), and in a line of one part
        starting at one of `own` (the columns of the lines right around it), where a number
        or a price does: a cell that ran over into the next."""
        ...


@dataclass
class _Fragment:
    line: int
    x: float
    baseline: float
    size: float
    text: str
    first_of_line: bool
    bold: bool = False
    right: float = 0.0
    bottom: float = 0.0
    alone: bool = False  # the only part of its line


@dataclass
class Table:
    """A recovered table: the lines it replaces (inclusive) and its rows of cell texts."""

    first_line: int
    last_line: int
    rows: list[list[str]] = field(default_factory=list)
    columns: list[float] = field(default_factory=list)
    spans: list[tuple[float, float]] = field(default_factory=list)  # header cells' extents
    cut_row: bool = False  # its first body row has no key: the rest of a row a page break cut

    def markdown(self) -> str:
        """The table as a Markdown pipe table, its first row as header."""
        return pipe_table(self.rows, escape_pipes)


def rejoin_cut_row(previous: Table, table: Table) -> tuple[Table, Table] | None:
    """(`previous` with its last row completed, `table` without it) when `table` starts, under
    the same header, with the rest of `previous`'s last row that a page break cut; else None."""
    if (
        not table.cut_row
        or len(table.rows) < 3
        or len(previous.rows) < 2
        or previous.rows[0] != table.rows[0]
    ):
        return None
    cut = table.rows[1]
    last = [
        _cell_text([a, b]) if a and b else a or b
        for a, b in zip(previous.rows[-1], cut, strict=True)
    ]
    completed = replace(previous, rows=[*previous.rows[:-1], last])
    return completed, replace(table, rows=[table.rows[0], *table.rows[2:]], cut_row=False)


def _cell_text(lines: list[str], full: Sequence[bool] = (), words: Vocabulary = _NO_WORDS) -> str:
    """A cell's lines as one text: a line ending in a hyphen after a letter or digit goes on
    without a space ("A350-" and "900" are "A350-900"), and so does a single word that fills
    its column (`full`) where `words` say it was broken: a word too long for a narrow column,
    broken where it reached the edge ("Destinati" and "on")."""
    text = ""
    for index, line in enumerate(lines):
        glued = len(text) > 1 and text.endswith("-") and text[-2].isalnum()
        if index and not glued and index - 1 < len(full) and full[index - 1]:
            before = lines[index - 1]
            after = _FIRST_WORD.match(line)
            glued = (
                " " not in before
                and before[-1:].isalnum()
                and after is not None
                # a word goes on in lower case, a number in digits ("CW241" and "30")
                and (line[:1].islower() or (line[:1].isdigit() and before[-1].isdigit()))
                and _FIRST_WORD.fullmatch(before) is not None
                and words.broken(before, after.group(0))
            )
        text = f"{text}{line}" if glued or not text else f"{text} {line}"
    return text


_FIRST_WORD = re.compile(r"[^\W_]+")


def find_tables(
    lines: Sequence[TextLine],
    carried: Table | None = None,
    words: Vocabulary = _NO_WORDS,
) -> list[Table]:
    """The tables among a page's lines, in order, none overlapping.

    `carried` is the table that ended the previous page: rows at this page's top laid out in
    its columns continue it, under its header repeated. `words` are the document's words
    (case-folded), to tell a word broken at a narrow column's edge.
    """
    parts = [[cell for cell in line.cells() if cell.text.strip()] for line in lines]
    columns = column_starts(parts)
    start = 0
    for end in [*_size_changes(lines), len(lines)] if columns else ():
        # a word after a space is cut only at the columns of its own run of lines in one
        # font size (a table's lines share one; a list's indent under a heading is no
        # column), not counting list items (their markers and text)
        unlisted = [_unlisted(cells) for cells in parts[start:end]]
        near = column_starts(unlisted)
        for index in range(start, end):
            # a line of one part is cut only at the columns of the lines around it too
            # (another table above on the page has other columns)
            window = unlisted[max(0, index - start - _NEAR) : index - start + _NEAR + 1]
            one = parts[index][0] if len(parts[index]) == 1 else None
            local = (
                column_starts(window)
                if one is not None and _near_column(near, one.x) and " " in one.text.strip()
                else ()
            )
            cut = lines[index].cells(columns, near, local)
            parts[index] = [cell for cell in cut if cell.text.strip()]
        start = end
    fragments = [
        _Fragment(
            index,
            cell.x,
            cell.baseline,
            max(line.size, 1.0),
            cell.text.strip(),
            part == 0,
            line.bold,
            max(cell.right, cell.x),
            cell.bottom,
            len(cells) == 1,
        )
        for index, cells in enumerate(parts)
        for part, cell in enumerate(cells)
        for line in (lines[index],)
    ]
    tables: list[Table] = []
    position = 0
    own = _table_at(fragments, 0, words)[0] if carried is not None and fragments else None
    if carried is not None and fragments and not (own and _own_header(lines, own)):
        # (a table at the top with a header of its own is not a continuation)
        table, end = _continued(fragments, carried, words)
        if table is not None:
            tables.append(table)
            position = end
    while position < len(fragments):
        table, position = _table_at(fragments, position, words)
        if table is not None:
            tables.append(table)
    return tables


def _near_column(columns: Sequence[float], x: float) -> bool:
    """Whether `x` is within _COLUMN_SPREAD points of one of `columns` (ascending)."""
    at = bisect.bisect_left(columns, x - _COLUMN_SPREAD)
    return at < len(columns) and columns[at] <= x + _COLUMN_SPREAD


def _unlisted(cells: Sequence[Cell]) -> list[Cell]:
    """The line's cells, none if it is a list item whose marker is set apart from its text."""
    if cells and _LIST_MARKER.search(cells[0].text.strip()):
        return []
    return list(cells)


def _size_changes(lines: Sequence[TextLine]) -> list[int]:
    """The indexes of the lines set in another font size than the line before."""
    return [
        index
        for index in range(1, len(lines))
        if abs(lines[index].size - lines[index - 1].size) >= 0.5
    ]


def column_starts(parts: Sequence[Sequence[Cell]]) -> list[float]:
    """Where cells of the page start: x positions (within _COLUMN_SPREAD points) at which
    at least _COLUMN_CELLS cells start, but the page's leftmost (its margin)."""
    groups = position_groups((cell.x for cells in parts for cell in cells), _COLUMN_SPREAD)
    found = [group[len(group) // 2] for group in groups if len(group) >= _COLUMN_CELLS]
    margin = groups[0][0] if groups else 0.0
    return found[1:] if found and found[0] - margin <= _COLUMN_SPREAD else found


# A line of one part is cut only at columns of this many lines before and after it (two or
# three rows of a LaTeX table, written cell by cell: 8 lines kept 0.935 of the corpus PDFs'
# cells, 16 0.951, 30 0.952).
_NEAR = 30
# Cells that start within this many points of each other start at one column.
_COLUMN_SPREAD = 2.0
# A column is where at least this many cells start (a header cell and one body cell: the
# other body cells of a column that overflow start nowhere else; 3 kept 0.893 of the
# corpus PDFs' cells against 0.902 at 2).
_COLUMN_CELLS = 2


class _Builder:
    """Grows one table fragment by fragment; `add` says whether the fragment belongs."""

    def __init__(
        self, first: _Fragment, page_top: bool = False, words: Vocabulary = _NO_WORDS
    ) -> None:
        self.page_top = page_top  # whether the table starts the page
        self.words = words
        self.columns: list[float] = [first.x]
        self.spans: list[list[float]] = [[first.x, first.right]]  # header cells' extents
        self.rows: list[dict[int, list[str]]] = [{0: [first.text]}]
        self.row_lines: list[list[int]] = [[first.line]]
        self.rights: list[dict[int, list[float]]] = [{0: [first.right]}]  # as `rows`
        self.row_bottom = self.row_top = first.baseline
        self.previous = self.first = first
        self.previous_column = 0

    def column_of(self, fragment: _Fragment) -> int | None:
        tolerance = 0.8 * fragment.size
        for index, x in enumerate(self.columns):
            if abs(fragment.x - x) <= tolerance:
                return index
        if len(self.rows) > 1 or fragment.baseline < self.row_bottom - fragment.size:
            # a cell centred under its header cell (their middles meet; prose lines that
            # end at one margin do not, unless they start where the "header" does)
            middle = (fragment.x + fragment.right) / 2
            for index, (x0, x1) in enumerate(self.spans):
                if abs(middle - (x0 + x1) / 2) <= _CENTRED * fragment.size:
                    return index
            # a body cell under a header centred over its column starts left of the header
            # text: the first header starting right of it, within its column's width
            for index, x in enumerate(self.columns):
                if x > fragment.x:
                    left = self.columns[index - 1] if index else None
                    return index if left is None or fragment.x - left > tolerance else None
        return None

    def add(self, fragment: _Fragment) -> bool:
        previous, size = self.previous, fragment.size
        column = self.column_of(fragment)
        below = previous.bottom - fragment.baseline
        in_header = len(self.rows) == 1
        shift = abs(fragment.x - previous.x)
        # right under the previous cell's line (whatever header it seems under), or centred
        # under it, or, in no column, a little left or right of it (a centred cell's next line)
        centred_below = (
            shift <= 0.8 * size
            or (column is None and shift <= 1.5 * size)
            or abs(fragment.right + fragment.x - previous.right - previous.x) <= _CENTRED * size
        )
        # a caption right above the table is not its first cell's first line: it differs in
        # size, or in weight from the header line below it
        same_style = abs(fragment.size - previous.size) < 0.5 and (
            fragment.bold == previous.bold or previous is not self.first
        )
        # a header cell of more lines than its neighbours starts above them (the header row is
        # aligned at its bottom); body cells start on one line
        reach = _HEADER_REACH if in_header else 2
        if (
            (column == self.previous_column or centred_below)
            and 0 < below <= 1.7 * size
            and same_style
            # a bullet starts an item, not a line; a dash alone on its line, with no item
            # text beside it, goes on a cell ("Mumbai" / "–" / "Andheri East")
            and not (_LIST_MARKER.match(fragment.text) and not fragment.alone)
        ):
            # the cell continues on the next line (a centred cell's next line starts
            # a little left or right of its first)
            column = self.previous_column
            self._append(column, fragment)
        elif abs(fragment.size - self.first.size) >= 0.5:
            return False  # a table's cells share one font size: a heading above is no row
        elif (
            column == 0 or (column is not None and in_header and self.page_top)
        ) and 0 < self.row_bottom - fragment.baseline <= 3.5 * size:
            # a new row; at a page's top, under a repeated header, the first row may be the
            # rest of one the page break cut (no key cell: it stayed on the page before)
            self.rows.append({})
            self.row_lines.append([])
            self.rights.append({})
            self.row_bottom = self.row_top = fragment.baseline
            self._append(column, fragment)
        elif (
            fragment.x > previous.x + 1.5 * size
            and self.row_bottom - size < fragment.baseline <= self.row_top + reach * size
        ):
            if column is None:
                if not in_header or len(self.columns) >= _MAX_COLUMNS:
                    return False
                self.columns.append(fragment.x)
                column = len(self.columns) - 1
            self._append(column, fragment)
        else:
            return False
        self.previous = fragment
        return True

    def _append(self, column: int, fragment: _Fragment) -> None:
        if len(self.rows) == 1:
            while len(self.spans) <= column:
                self.spans.append([fragment.x, fragment.right])
            span = self.spans[column]
            span[0], span[1] = min(span[0], fragment.x), max(span[1], fragment.right)
        self.rows[-1].setdefault(column, []).append(fragment.text)
        self.rights[-1].setdefault(column, []).append(fragment.right)
        self.row_lines[-1].append(fragment.line)
        self.row_bottom = min(self.row_bottom, fragment.baseline)
        self.row_top = max(self.row_top, fragment.baseline)
        self.previous_column = column

    def list_rows(self) -> int:
        """How many rows from the first are list items (a marker, then the item's text)."""
        count = 0
        for row in self.rows:
            if not _LIST_MARKER.search(" ".join(row.get(0, []))):
                break
            count += 1
        return count

    def table(self) -> Table | None:
        """The table so far, without trailing rows that are not table rows; None if too small."""
        complete = self._complete()
        rows, lines = self.rows[:complete], self.row_lines[:complete]
        width = len(self.columns)
        if width < 2 or len(rows) < 2 or len(rows[0]) < 2:
            return None
        cells = self._cells(rows, self.rights[:complete])
        if _not_a_table(cells):
            return None
        covered = {line for row_lines in lines for line in row_lines}
        first, last = min(covered), max(covered)
        if len(covered) != last - first + 1:
            return None  # another line sits inside the table's span: not a clean table
        spans = [(x0, x1) for x0, x1 in self.spans]
        return Table(
            first_line=first,
            last_line=last,
            rows=cells,
            columns=list(self.columns),
            spans=spans,
            cut_row=self.page_top and 0 not in rows[1],
        )

    def _complete(self) -> int:
        """How many rows from the first are the table's."""
        # the table ends before the first row with a single cell: a lone line is prose
        complete = next((i for i, row in enumerate(self.rows) if len(row) < 2), len(self.rows))
        header = [" ".join(self.rows[0].get(c, [])) for c in range(len(self.columns))]
        repeated = next(
            (
                i
                for i, row in enumerate(self.rows[1:complete], start=1)
                if all(" ".join(row.get(c, [])).endswith(h) for c, h in enumerate(header))
            ),
            complete,
        )
        if repeated > 1:
            complete = repeated  # the header again (under a caption): the next table starts
        width = len(self.columns)
        while complete > 2 and width >= 3 and 2 * len(self.rows[complete - 1]) < width:
            complete -= 1  # a last row filling few of many columns is the text after it
        return complete

    def _cells(
        self, rows: list[dict[int, list[str]]], rights: list[dict[int, list[float]]]
    ) -> list[list[str]]:
        """The rows' cell texts, each cell's lines joined (a line reaching its column's right
        edge is full: a word broken at its end goes on in the next)."""
        width = len(self.columns)
        reach = [
            max((r for row in rights for r in row.get(c, ())), default=0.0) for c in range(width)
        ]
        edge = _FULL * self.first.size
        return [
            [
                _cell_text(
                    row.get(c, []), [r >= reach[c] - edge for r in extents.get(c, ())], self.words
                )
                for c in range(width)
            ]
            for row, extents in zip(rows, rights, strict=True)
        ]


def _not_a_table(cells: list[list[str]]) -> bool:
    """Whether rows laid out in columns are no table after all."""
    if any(len(cell.split()) > _HEADER_WORDS for cell in cells[0]):
        return True  # a header cell holding a sentence: prose with a wide gap, no table
    if _misread(cells[1:]):
        return True  # mostly empty cells: the columns were not recovered; keep it prose
    # a list whose markers stand apart from their text: keep it a list
    return 2 * sum(1 for row in cells if _LIST_MARKER.search(row[0])) >= len(cells)


def _misread(body: list[list[str]]) -> bool:
    """Whether more than MAX_EMPTY_SHARE of the body's cells are empty, besides, in a body
    of _SPARSE_ROWS rows or more, its last column (notes that only some rows fill)."""
    cells = [cell for row in body for cell in (row[:-1] if len(body) >= _SPARSE_ROWS else row)]
    return sum(1 for cell in cells if not cell) > MAX_EMPTY_SHARE * len(cells)


def _own_header(lines: Sequence[TextLine], table: Table) -> bool:
    """Whether the table's first row reads as a header: set in bold above rows that are not,
    or without a digit above a row with one ("Flight No." over "CW251")."""
    bold = [line.bold for line in lines[table.first_line : table.last_line + 1]]
    if bold and bold[0] and not all(bold):
        return True
    digits = [any(char.isdigit() for cell in row for char in cell) for row in table.rows[:2]]
    return len(digits) == 2 and not digits[0] and digits[1]


def _continued(
    fragments: list[_Fragment], carried: Table, words: Vocabulary
) -> tuple[Table | None, int]:
    """The rows at the page's top that go on in `carried`'s columns, under its header."""
    first = fragments[0]
    builder = _Builder(first, words=words)
    builder.columns = list(carried.columns)
    builder.spans = [[x0, x1] for x0, x1 in carried.spans]
    if builder.column_of(first) != 0 or len(carried.rows[0]) != len(carried.columns):
        return None, 0
    builder.rows = [
        {c: [text] for c, text in enumerate(carried.rows[0]) if text},
        {0: [first.text]},
    ]
    builder.row_lines = [[], [first.line]]
    builder.rights = [{}, {0: [first.right]}]
    position = 1
    while position < len(fragments) and builder.add(fragments[position]):
        position += 1
    table = builder.table()
    if table is None or table.rows[0] != carried.rows[0] or table.rows[1] == carried.rows[0]:
        return None, 0  # no rows in its columns, or the page repeats the header itself
    end = 0
    while end < len(fragments) and fragments[end].line <= table.last_line:
        end += 1
    if end > position:
        return None, 0
    if fragments[0].line != table.first_line:
        return None, 0
    return table, end


def _table_at(
    fragments: list[_Fragment], start: int, words: Vocabulary
) -> tuple[Table | None, int]:
    """The table starting at fragment `start` (if any) and where to look next.

    A region laid out in rows that is rejected as a table is skipped whole, so that its own
    second row cannot pass for the header of a smaller table.
    """
    first = fragments[start]
    if not first.first_of_line:
        return None, start + 1
    builder = _Builder(first, page_top=start == 0, words=words)
    position = start + 1
    while position < len(fragments) and builder.add(fragments[position]):
        position += 1
    table = builder.table()
    if table is None:
        skip = len(builder.rows) >= 2 and len(builder.rows[0]) >= 2
        listed = builder.list_rows()
        # a list: skip its items only, a table may start right after; and skip nothing from
        # a heading on (a bold line of one cell ending no sentence: a table may start under it)
        kept = listed or (skip and _heading_row(builder, fragments[start:position]))
        if skip and kept:
            last = max(line for row in builder.row_lines[:kept] for line in row)
            while position > start + 1 and fragments[position - 1].line > last:
                position -= 1
            return None, _line_end(fragments, start, position)
        return None, _line_end(fragments, start, position) if skip else start + 1
    next_line = start + 1 < len(fragments) and fragments[start + 1].first_of_line
    if len(table.columns) > 1 and first.right > table.columns[1] and next_line:
        return None, start + 1  # a line over the second column's start is a caption, no cell
    # end at a line boundary: every fragment of the table's lines belongs to it
    end = start
    while end < len(fragments) and fragments[end].line <= table.last_line:
        end += 1
    if end > position:
        return None, start + 1
    return table, end


def _heading_row(builder: _Builder, fragments: list[_Fragment]) -> int | None:
    """The index of the first row of `builder` (grown over `fragments`) that is a heading
    (a line of one bold cell that ends no sentence), or None."""
    by_line = {fragment.line: fragment for fragment in fragments if fragment.first_of_line}
    for index, (row, lines) in enumerate(zip(builder.rows, builder.row_lines, strict=True)):
        first = by_line.get(lines[0]) if lines else None
        if (
            index
            and len(row) == 1
            and first is not None
            and first.bold
            and first.alone
            and not first.text.rstrip().endswith((".", ",", ";", ":"))
        ):
            return index
    return None


def _line_end(fragments: list[_Fragment], start: int, position: int) -> int:
    """The first fragment at or after `position` that starts a line."""
    while position < len(fragments) and not fragments[position].first_of_line:
        position += 1
    return max(position, start + 1)
