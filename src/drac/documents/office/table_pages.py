"""The file's own tables put on the pages of its PDF, in place of what the text layer made.

Each table read from the file (`drac.documents.office.file_tables`) is looked for, in document
order, in the page Markdown the offline converter made of LibreOffice's PDF: a run of lines
(table rows, paragraphs, list items: however the text layer read it) whose words are all the
table's words, starting at a line holding the first word of its header. The run may go on
over page breaks (each page may repeat the header, as LibreOffice repeats a DOCX header
row). When the run holds at least `MIN_COVERAGE` of the table's words, its lines are replaced
by the table as a pipe table (a table wider than the page, whose last columns LibreOffice
cut off, is measured by the columns shown, and placed whole); a table over several pages
is one table, with one header, on the page where it starts (as a paragraph a page break
cuts stays one on its first page): the file holds one header, and a header repeated per
page would read as rows the table does not have. Words before the table's first word on the run's
first line (a caption the text layer ran into the header cell, or a sentence ending before
the table) stay as a paragraph above it; trailing rows the run did not show stay as the
text layer read them. A table whose text is not found so (a word the table does not hold, a
heading or a comment in the way, too little of it shown) is left as the text layer read it:
no text is lost, none is added but the table's own.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from drac.documents.office.file_tables import FileTable
from drac.documents.office.markdown_lines import DELIMITER_ROW
from drac.documents.spreadsheets.rows import pipe_cell
from drac.documents.table_grid import pipe_table

MIN_COVERAGE = 0.8
"""The share of a table's words its run of lines must show for the table to replace it
(of the columns the page shows: see `_clipped_columns`)."""
_CLIPPED_SHARE = 0.9
"""A last column of which the run left this share of words unseen was cut off the page."""
_PIECE_SHARE = 0.25
"""At most this share of a line's words may be pieces of the table's words (a word a narrow
column broke in two, "Destinati" and "on")."""
_SENTENCE_ENDS = (".", ":", "!", "?")
_WORD = re.compile(r"[^\W_]+")
_PAGE = re.compile(r"^<!--\s*Page\s+\d+\s*-->$")


def place_tables(
    pages: Sequence[str], tables: Sequence[FileTable], *, slide_pages: bool = False
) -> list[str]:
    """The pages' Markdown (one string per page, each starting with its page marker) with each
    table found in them replaced by the file's table (the module docstring says how).

    `slide_pages`: page N is shown slide N (a deck), so a slide's table is looked for on its
    own page only."""
    lines = [page.split("\n") for page in pages]
    words = [[_words(line) for line in page] for page in lines]
    replacements: dict[int, list[tuple[int, int, str]]] = {}  # page -> (first, last, text)
    cursor = (0, 0)
    for table in tables:
        if slide_pages and table.slide is not None:
            if table.slide > len(pages):
                continue
            start = max(cursor, (table.slide - 1, 0))
            end = table.slide  # a slide's table stays on its page
        else:
            start, end = cursor, len(pages)
        run = _find_run(lines, words, table, start, end)
        if run is None:
            continue
        for page, (first, last, text) in _pieces(table, run).items():
            replacements.setdefault(page, []).append((first, last, text))
        cursor = run.end
    out = []
    for index, page_lines in enumerate(lines):
        for first, last, text in sorted(replacements.get(index, ()), reverse=True):
            page_lines[first : last + 1] = [text] if text else []
        out.append(re.sub(r"\n{3,}", "\n\n", "\n".join(page_lines)).strip("\n"))
    return out


def table_markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A pipe table of `header` and `rows`, each cell escaped (pipes, newlines, comments)."""
    return pipe_table([header, *rows], pipe_cell)


@dataclass
class _Run:
    """Where a table's text is: per page, its first and last line and the table words there,
    and the words before the table on its first line (a caption run into its header)."""

    lines: dict[int, tuple[int, int]] = field(default_factory=dict)
    consumed: dict[int, int] = field(default_factory=dict)
    end: tuple[int, int] = (0, 0)
    lead: str = ""
    remaining: Counter[str] = field(default_factory=Counter)  # the table words not shown
    clipped: frozenset[int] = frozenset()  # last columns the page did not show at all


class _Affixes:
    """Whether a piece is the start (or the end) of a longer table word, in log time: a
    hostile table of thousands of rows must not make each piece a scan of all its words."""

    def __init__(self, vocabulary: Iterable[str]) -> None:
        self._words = sorted(vocabulary)
        self._backwards = sorted(word[::-1] for word in self._words)

    def starts(self, piece: str) -> bool:
        """Whether `piece` starts a table word longer than itself."""
        return _begins_longer(self._words, piece)

    def starts_or_ends(self, piece: str) -> bool:
        """Whether `piece` starts or ends a table word longer than itself."""
        return self.starts(piece) or _begins_longer(self._backwards, piece[::-1])


def _begins_longer(ordered: list[str], piece: str) -> bool:
    at = bisect_left(ordered, piece)
    if at < len(ordered) and ordered[at] == piece:
        at += 1  # the word itself: a longer one sorts right after it, if any
    return at < len(ordered) and ordered[at].startswith(piece)


@dataclass
class _Words:
    """A table's words: all of them (with counts), its header's, its first, and the
    starts and ends of them all."""

    everything: Counter[str]
    header: Counter[str]
    first: str
    affixes: _Affixes
    letters: _Letters


def _words(text: str) -> list[str]:
    if text.startswith("<!--") or DELIMITER_ROW.match(text.strip()):
        return []
    return _WORD.findall(text.casefold())


def _cell_words(
    table: FileTable, without: frozenset[int] = frozenset()
) -> tuple[list[str], list[list[str]]]:
    """The words of the header and of each row, leaving out the columns `without`."""

    def words(cells: Sequence[str]) -> list[str]:
        kept = (cell for column, cell in enumerate(cells) if column not in without)
        return [w for cell in kept for w in _WORD.findall(cell.casefold())]

    return words(table.header), [words(row) for row in table.rows]


def _clipped_columns(table: FileTable, remaining: Counter[str]) -> frozenset[int]:
    """The table's last columns of which the run showed (almost) no word: LibreOffice cuts
    a table wider than the page at its right edge (an HTML table of 11 columns shows 8)."""
    left = remaining.copy()
    clipped: set[int] = set()
    for column in reversed(range(1, len(table.header))):
        words = _cell_words(table, frozenset(range(len(table.header))) - {column})
        column_words = words[0] + [w for row in words[1] for w in row]
        unseen = 0
        for word in column_words:
            if left[word] > 0:
                left[word] -= 1
                unseen += 1
        if not column_words or unseen < _CLIPPED_SHARE * len(column_words):
            break
        clipped.add(column)
    return frozenset(clipped)


def _covers(run: _Run, table: FileTable) -> bool:
    """Whether the run showed enough of the table: `MIN_COVERAGE` of the words of the
    columns the page shows, and at least half of its columns."""
    if 2 * len(run.clipped) > len(table.header):
        return False
    header, rows = _cell_words(table, run.clipped)
    shown = len(header) + sum(len(row) for row in rows)
    return sum(run.consumed.values()) >= MIN_COVERAGE * shown


def _find_run(
    lines: list[list[str]],
    words: list[list[list[str]]],
    table: FileTable,
    start: tuple[int, int],
    end: int,
) -> _Run | None:
    """The first run of lines from `start` (before page `end`) that shows the table."""
    header, rows = _cell_words(table)
    everything = Counter(header + [w for row in rows for w in row])
    first = (header or next((row for row in rows if row), []))[:1]
    if not first:
        return None
    ordered = header + [w for row in rows for w in row]
    known = _Words(everything, Counter(header), first[0], _Affixes(everything), _Letters(ordered))
    page, line = start
    while page < end:
        while line < len(lines[page]):
            at = _first_word(words[page][line], known.first)
            if at is not None:
                run = _grow(lines, words, (page, line), at, known)
                if run is not None:
                    run.clipped = _clipped_columns(table, run.remaining)
                    if _covers(run, table):
                        return run
            line += 1
        page, line = page + 1, 0
    return None


def _first_word(found: list[str], first: str) -> int | None:
    """Where in a line the table's first word starts: itself, its first piece, or pieces
    that join into it ("S t o r e")."""
    for index, word in enumerate(found):
        if word == first or (len(word) >= 2 and first.startswith(word)):
            return index
        joined = word
        for piece in found[index + 1 : index + _MAX_PIECES]:
            if not first.startswith(joined):
                break
            joined += piece
            if joined == first:
                return index
    return None


def _grow(
    lines: list[list[str]],
    words: list[list[list[str]]],
    start: tuple[int, int],
    at: int,
    known: _Words,
) -> _Run | None:
    """The lines from `start` on that hold only the table's words (see module docstring);
    on the first line, the words before the `at`-th belong to the text before the table."""
    remaining = known.everything.copy()
    repeat: Counter[str] = Counter()  # the header once more on each page the table goes on
    run = _Run()
    page, line = start
    last = start  # the last line that held table words
    known.letters.reached = 0
    mixed_lines = 0  # lines in a row of table text in no order (see `_MAX_MIXED`)
    while page < len(lines):
        page_lines = lines[page]
        while line < len(page_lines):
            text = page_lines[line].strip()
            found = words[page][line]
            if (page, line) == start and at:
                # a caption the text layer ran into the header's first cell or a heading,
                # or a paragraph it ran into the table; inside a sentence, the first word
                # is just a word
                run.lead = _lead(text, at, found)
                if not text.startswith(("|", "#")) and not run.lead.endswith(_SENTENCE_ENDS):
                    run.lead = ""
                if not run.lead:
                    return None
                found = found[at:]
            if _PAGE.match(text) or (not found and (not text or DELIMITER_ROW.match(text))):
                line += 1
                continue
            if not found:
                break  # a comment, or a line of no words
            heading = text.startswith("#") and not run.lead
            if heading and (page, line) == start and not all(w in known.header for w in found):
                break
            broken = not heading and any(word not in known.everything for word in found)
            known.letters.near(sum(run.consumed.values()))
            taken = known.letters.take(found, remaining) if broken else None
            if taken is None:
                taken = _take(found, remaining, repeat, known.affixes)
            if taken is None and not heading and not broken:
                taken = known.letters.take(found, remaining)
            mixed = taken is None and not heading and mixed_lines < _MAX_MIXED
            if mixed and known.letters.pieces(found):
                # cells of two rows broken and run together: table text, if table lines follow
                taken, mixed_lines = _take_whole(found, remaining), mixed_lines + 1
            else:
                mixed_lines = 0
            if taken is None:
                break
            first, _ = run.lines.get(page, (line, line))
            run.lines[page] = (first, line)  # a repeated header, a piece: table lines too
            run.consumed[page] = run.consumed.get(page, 0) + taken
            if taken and (not heading or (page, line) == start):
                # a heading of table words (a bold header line the text layer took for one)
                # is the table's only when table lines follow it
                last = (page, line)
            line += 1
            if not remaining:
                break
        else:
            page, line = page + 1, 0
            # the header repeated at the page's top, and once more where the text layer
            # made it the key of the row the page break cut
            repeat = known.header + known.header
            continue
        break
    run.remaining = remaining
    return _finished(run, last)


def _lead(text: str, at: int, found: list[str]) -> str:
    """The text of a line before its `at`-th word, without table pipes ("" if not found)."""
    if len(text.casefold()) != len(text):
        return ""
    spans = list(_WORD.finditer(text.casefold()))
    if len(spans) != len(found) or at >= len(spans):
        return ""
    lead = text[: spans[at].start()].strip().strip("|").strip()
    return lead.removesuffix("**").rstrip() if lead.count("**") % 2 else lead


class _Pending:
    """A line's words taken from a counter, kept apart until the whole line is known to be
    the table's (copying the counter for each line made a long table quadratic)."""

    def __init__(self, base: Counter[str]) -> None:
        self.base = base
        self.taken: Counter[str] = Counter()

    def __getitem__(self, word: str) -> int:
        return self.base[word] - self.taken[word]

    def take(self, word: str) -> None:
        """Take one of `word` (the caller has checked that one is left)."""
        self.taken[word] += 1

    def commit(self) -> None:
        """Take the words from the counter itself (a word none is left of leaves it)."""
        for word, count in self.taken.items():
            left = self.base[word] - count
            if left > 0:
                self.base[word] = left
            else:
                self.base.pop(word, None)


def _take(
    found: list[str], remaining: Counter[str], repeat: Counter[str], affixes: _Affixes
) -> int | None:
    """Take a line's words from the table's (or the repeated header's); how many table words
    it held, or None (and nothing taken) when it holds a word the table does not.

    A narrow column breaks a word into pieces ("St or ag e"): pieces that join into a table
    word count as that word; a word run into the next ("24hrstotal") counts as both; a few
    other pieces (the start or end of a table word, in one or more pieces) are let through."""
    table_words, header_words = _Pending(remaining), _Pending(repeat)
    taken = pieces = index = 0
    while index < len(found):
        for words in (table_words, header_words):
            end = _joined_word(found, index, words, affixes)
            if end is not None:
                words.take("".join(found[index:end]))
                taken += end - index if words is table_words else 0
                index = end
                break
            parts = _run_together(found[index], words)
            if parts:
                for part in parts:
                    words.take(part)
                taken += len(parts) if words is table_words else 0
                index += 1
                break
        else:
            end = _cut_word(found, index, affixes)
            if end is None:
                return None
            pieces += 1
            index = end
    if pieces > max(1.0, _PIECE_SHARE * len(found)):
        return None
    table_words.commit()
    header_words.commit()
    return taken


_MAX_PIECES = 8
_MAX_RUN_TOGETHER = 64
_MIN_LETTERS = 3
_MAX_MIXED = 2
"""Lines in a row, inside a table's run, whose words are all pieces of the table's text but
in no order the table has (a narrow column's cells broken and run into the next row's)."""
_LETTERS_WINDOW = 8192
"""Letters of the table's text, from where the previous line's stretch ended, searched for a
line's stretch (the text layer keeps the table's order; a search of the whole text for each
line would make a long table quadratic)."""


class _Letters:
    """A table's letters and digits run together (header first, row by row), and where each
    word is in them: for lines whose words a narrow column broke anywhere."""

    def __init__(self, ordered: list[str]) -> None:
        self.text = "".join(ordered)
        self.starts: list[int] = []
        self.words = ordered
        position = 0
        for word in ordered:
            self.starts.append(position)
            position += len(word)
        self.reached = 0  # where the last stretch found ended

    def near(self, taken: int) -> None:
        """The run has taken `taken` table words: its next stretch is about there."""
        if self.starts:
            self.reached = max(self.reached, self.starts[min(taken, len(self.starts) - 1)])

    def _window(self) -> tuple[int, int]:
        low = max(0, self.reached - _LETTERS_WINDOW // 4)
        return low, min(len(self.text), self.reached + _LETTERS_WINDOW)

    def take(self, found: list[str], remaining: Counter[str]) -> int | None:
        """A line ("Be ng alu ru Karn atak a") whose letters run together are a stretch of
        the table's: take the table words of that stretch; how many, or None (nothing
        taken) when they are not one."""
        letters = "".join(found)
        if len(letters) < _MIN_LETTERS:
            return None
        low, high = self._window()
        start = self.text.find(letters, low, high)
        if start < 0:
            return None
        end = start + len(letters)
        self.reached = end
        taken = 0
        index = max(0, bisect_left(self.starts, start + 1) - 1)
        while index < len(self.words) and self.starts[index] < end:
            if _take_one(remaining, self.words[index]):
                taken += 1
            index += 1
        return taken

    def pieces(self, found: list[str]) -> bool:
        """Whether every word of the line is a piece of the table's text near the last
        stretch found."""
        low, high = self._window()
        return all(self.text.find(word, low, high) >= 0 for word in found)


def _take_one(remaining: Counter[str], word: str) -> bool:
    """Take one of `word` if one is left (a word none is left of leaves the counter)."""
    left = remaining.get(word, 0)
    if left <= 0:
        return False
    if left == 1:
        del remaining[word]
    else:
        remaining[word] = left - 1
    return True


def _take_whole(found: list[str], remaining: Counter[str]) -> int:
    """Take the line's words that are whole table words; how many."""
    return sum(_take_one(remaining, word) for word in found)


def _joined_word(found: list[str], index: int, words: _Pending, affixes: _Affixes) -> int | None:
    """Where the table word starting at `found[index]` ends: the longest run of the line's
    pieces that joins into one of `words` ("Co unt ry" is "country" even where "co" is a
    table word too), else the word itself (None when neither is one of `words`)."""
    joined = ""
    longest = None
    for end in range(index, min(len(found), index + _MAX_PIECES)):
        joined += found[end]
        if words[joined] > 0:
            longest = end + 1
        if not affixes.starts(joined):
            break
    return longest


def _cut_word(found: list[str], index: int, affixes: _Affixes) -> int | None:
    """Where the piece of a table word starting at `found[index]` ends: the longest run of
    the line's pieces that joins into the start or the end of a table word (the rest of it
    is past a line or page break: "40 21 71" of "4021711"); None when there is none."""
    joined = ""
    longest = None
    for end in range(index, min(len(found), index + _MAX_PIECES)):
        joined += found[end]
        if not affixes.starts_or_ends(joined):
            break
        longest = end + 1
    return longest


def _run_together(word: str, words: _Pending) -> list[str]:
    """Two or three of `words` that make `word` when run together, or []."""
    if len(word) > _MAX_RUN_TOGETHER:
        return []  # a long word is no cells run together (and would cost its length squared)
    for cut in range(1, len(word)):
        head, tail = word[:cut], word[cut:]
        if words[head] <= 0:
            continue
        if words[tail] > (1 if tail == head else 0):
            return [head, tail]
        for second in range(1, len(tail)):
            middle, rest = tail[:second], tail[second:]
            if words[middle] > 0 and words[rest] > 0 and len({head, middle, rest}) == 3:
                return [head, middle, rest]
    return []


def _finished(run: _Run, last: tuple[int, int]) -> _Run | None:
    """The run up to its last line of table words (lines after it are the text layer's)."""
    page, line = last
    if page not in run.lines or not run.consumed.get(page):
        return None
    for later in [number for number in run.lines if number > page]:
        del run.lines[later], run.consumed[later]
    run.lines[page] = (run.lines[page][0], line)
    run.end = (page, line + 1)
    return run


def _shown_rows(rows: list[list[str]], remaining: Counter[str]) -> int:
    """How many rows from the first the run showed: trailing rows whose words mostly were
    not in it are left to the text layer (where the run stopped, the text layer holds them
    run into other text)."""
    left = remaining.copy()
    count = len(rows)
    for row in reversed(rows):
        missing = 0
        for word in row:
            if left[word] > 0:
                left[word] -= 1
                missing += 1
        if not row or 2 * missing < len(row):
            break
        count -= 1
    return count


def _pieces(table: FileTable, run: _Run) -> dict[int, tuple[int, int, str]]:
    """Per page of the run: the lines to replace and what replaces them: the whole table
    (one header, the rows the run showed) on its first page, nothing on the others."""
    _, rows = _cell_words(table, run.clipped)
    count = _shown_rows(rows, run.remaining)
    pieces = {}
    for number, page in enumerate(sorted(run.lines)):
        first, last = run.lines[page]
        text = table_markdown(table.header, table.rows[:count]) if number == 0 else ""
        if number == 0 and run.lead:
            text = f"{run.lead}\n\n{text}"
        pieces[page] = (first, last, text)
    return pieces
