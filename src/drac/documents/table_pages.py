"""The file's own tables put on the pages of its PDF, in place of what the text layer made.

Each table read from the file (`drac.documents.file_tables`) is looked for, in document
order, in the page Markdown the offline converter made of LibreOffice's PDF: a run of lines
(table rows, paragraphs, list items: however the text layer read it) whose words are all the
table's words, starting at a line holding the first word of its header. The run may go on
over page breaks (each page may repeat the header, as LibreOffice repeats a DOCX header
row). When the run holds at least `MIN_COVERAGE` of the table's words, its lines are replaced
by the table as a pipe table; a table over several pages is cut there, each piece under the
header, a row going on the page where most of its words are, so each row is cited at its
page. Words before the table's first word on the run's first line (a caption the text layer
ran into the header cell, or a sentence ending before the table) stay as a paragraph above
it; trailing rows the run did not show stay as the text layer read them. A table whose
text is not found so (a word the table does not hold, a heading or a comment in the way,
too little of it shown) is left as the text layer read it: no text is lost, none is added
but the table's own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from drac.documents.file_tables import FileTable
from drac.documents.spreadsheets.rows import pipe_cell

MIN_COVERAGE = 0.8
"""The share of a table's words its run of lines must show for the table to replace it."""
_PIECE_SHARE = 0.25
"""At most this share of a line's words may be pieces of the table's words (a word a narrow
column broke in two, "Destinati" and "on")."""
_SENTENCE_ENDS = (".", ":", "!", "?")
_WORD = re.compile(r"[^\W_]+")
_PAGE = re.compile(r"^<!--\s*Page\s+\d+\s*-->$")
_SEPARATOR = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+$")


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
    lines = ["| " + " | ".join(pipe_cell(cell) for cell in header) + " |"]
    lines.append("|" + " --- |" * len(header))
    lines += ["| " + " | ".join(pipe_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


@dataclass
class _Run:
    """Where a table's text is: per page, its first and last line and the table words there,
    and the words before the table on its first line (a caption run into its header)."""

    lines: dict[int, tuple[int, int]] = field(default_factory=dict)
    consumed: dict[int, int] = field(default_factory=dict)
    end: tuple[int, int] = (0, 0)
    lead: str = ""
    remaining: Counter[str] = field(default_factory=Counter)  # the table words not shown


@dataclass
class _Words:
    """A table's words: all of them (with counts), its header's, and how many in all."""

    everything: Counter[str]
    header: Counter[str]
    first: str
    total: int
    text: str = ""  # the letters and digits of all its cells, header first, in order
    spans: tuple[tuple[int, int, str], ...] = ()  # each word's place in `text`


def _words(text: str) -> list[str]:
    if text.startswith("<!--") or _SEPARATOR.match(text.strip()):
        return []
    return _WORD.findall(text.casefold())


def _cell_words(table: FileTable) -> tuple[list[str], list[list[str]]]:
    header = [w for cell in table.header for w in _WORD.findall(cell.casefold())]
    rows = [[w for cell in row for w in _WORD.findall(cell.casefold())] for row in table.rows]
    return header, rows


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
    spans, position = [], 0
    for word in ordered:
        spans.append((position, position + len(word), word))
        position += len(word)
    known = _Words(
        everything, Counter(header), first[0], sum(everything.values()), "".join(ordered),
        tuple(spans),
    )  # fmt: skip
    page, line = start
    while page < end:
        while line < len(lines[page]):
            at = _first_word(words[page][line], known.first)
            if at != 0 and "".join(words[page][line]).startswith(known.first):
                at = 0  # the first word broken into letters ("S t o r e")
            if at is not None:
                run = _grow(lines, words, (page, line), at, known)
                if run is not None and sum(run.consumed.values()) >= MIN_COVERAGE * known.total:
                    return run
            line += 1
        page, line = page + 1, 0
    return None


def _first_word(found: list[str], first: str) -> int | None:
    """Where in a line the table's first word starts (itself, or its first piece)."""
    for index, word in enumerate(found):
        if word == first or (len(word) >= 2 and first.startswith(word)):
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
    vocabulary = tuple(known.everything)
    run = _Run()
    page, line = start
    last = start  # the last line that held table words
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
            if _PAGE.match(text) or (not found and (not text or _SEPARATOR.match(text))):
                line += 1
                continue
            if not found:
                break  # a comment, or a line of no words
            heading = text.startswith("#") and not run.lead
            if heading and (page, line) == start and not all(w in known.header for w in found):
                break
            broken = not heading and any(word not in known.everything for word in found)
            taken = _take_letters(found, remaining, known) if broken else None
            if taken is None:
                taken = _take(found, remaining, repeat, vocabulary)
            if taken is None and not heading and not broken:
                taken = _take_letters(found, remaining, known)
            mixed = taken is None and not heading and mixed_lines < _MAX_MIXED
            if mixed and all(word in known.text for word in found):
                # cells of two rows broken and run together: table text, if table lines follow
                taken, mixed_lines = _take_whole(found, remaining), mixed_lines + 1
            if taken is None:
                break
            if not mixed:
                mixed_lines = 0
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


def _take(
    found: list[str], remaining: Counter[str], repeat: Counter[str], vocabulary: tuple[str, ...]
) -> int | None:
    """Take a line's words from the table's (or the repeated header's); how many table words
    it held, or None (and nothing taken) when it holds a word the table does not.

    A narrow column breaks a word into pieces ("St or ag e"): pieces that join into a table
    word count as that word; a word run into the next ("24hrstotal") counts as both; a few
    other pieces (the start or end of a table word) are let through."""
    table_words = remaining.copy()
    header_words = repeat.copy()
    taken = pieces = index = 0
    while index < len(found):
        for words in (table_words, header_words):
            end = _joined_word(found, index, words)
            if end is not None:
                words["".join(found[index:end])] -= 1
                taken += end - index if words is table_words else 0
                index = end
                break
            parts = _run_together(found[index], words)
            if parts:
                for part in parts:
                    words[part] -= 1
                taken += len(parts) if words is table_words else 0
                index += 1
                break
        else:
            word = found[index]
            if not any(
                len(whole) > len(word) and (whole.startswith(word) or whole.endswith(word))
                for whole in vocabulary
            ):
                return None
            pieces += 1
            index += 1
    if pieces > max(1.0, _PIECE_SHARE * len(found)):
        return None
    remaining.clear()
    remaining.update(+table_words)
    repeat.clear()
    repeat.update(+header_words)
    return taken


_MAX_PIECES = 8
_MIN_LETTERS = 3
_MAX_MIXED = 2
"""Lines in a row, inside a table's run, whose words are all pieces of the table's text but
in no order the table has (a narrow column's cells broken and run into the next row's)."""


def _take_whole(found: list[str], remaining: Counter[str]) -> int:
    """Take the line's words that are whole table words; how many."""
    taken = 0
    for word in found:
        if remaining[word] > 0:
            remaining[word] -= 1
            taken += 1
    return taken


def _take_letters(found: list[str], remaining: Counter[str], known: _Words) -> int | None:
    """A line whose words a narrow column broke anywhere ("Be ng alu ru Karn atak a"): when
    its letters and digits, run together, are a stretch of the table's, take the table words
    of that stretch; how many, or None when they are not."""
    letters = "".join(found)
    if len(letters) < _MIN_LETTERS:
        return None
    start = known.text.find(letters)
    if start < 0:
        return None
    end = start + len(letters)
    taken = 0
    for low, high, word in known.spans:
        if low < end and high > start and remaining[word] > 0:
            remaining[word] -= 1
            taken += 1
    return taken


def _joined_word(found: list[str], index: int, words: Counter[str]) -> int | None:
    """Where the table word starting at `found[index]` ends: the word itself, or pieces of
    the line that join into one (None when neither is one of `words`)."""
    joined = ""
    for end in range(index, min(len(found), index + _MAX_PIECES)):
        joined += found[end]
        if words[joined] > 0:
            return end + 1
        if end == index and not any(joined in w for w in words):
            return None
    return None


def _run_together(word: str, words: Counter[str]) -> list[str]:
    """Two or three of `words` that make `word` when run together, or []."""
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
    """Per page of the run: the lines to replace and the table piece (header and the rows
    whose middle word falls on that page) that replaces them."""
    header, rows = _cell_words(table)
    count = _shown_rows(rows, run.remaining)
    pages = sorted(run.lines)
    shown = sum(run.consumed.values())
    total = len(header) + sum(len(row) for row in rows[:count])
    scale = min(1.0, shown / total) if total else 1.0
    bounds = []
    reached = 0
    for page in pages:
        reached += run.consumed[page]
        bounds.append(reached)
    owner: dict[int, list[tuple[str, ...]]] = {page: [] for page in pages}
    position = float(len(header))
    for row, row_words in zip(table.rows[:count], rows, strict=False):
        middle = (position + len(row_words) / 2) * scale
        position += len(row_words)
        index = next((i for i, bound in enumerate(bounds) if middle <= bound), len(pages) - 1)
        owner[pages[index]].append(row)
    pieces = {}
    for number, page in enumerate(pages):
        first, last = run.lines[page]
        piece_rows = owner[page]
        text = table_markdown(table.header, piece_rows) if piece_rows or number == 0 else ""
        if number == 0 and run.lead:
            text = f"{run.lead}\n\n{text}"
        pieces[page] = (first, last, text)
    return pieces
