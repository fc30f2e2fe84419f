"""A page's lines grouped into Markdown blocks: headings, list items, paragraphs, tables."""

from __future__ import annotations

from drac.documents.offline.headings import HeadingScale, list_marker
from drac.documents.offline.lines import HEADING_END, Line
from drac.documents.offline.tables import Table, Vocabulary, find_tables, rejoin_cut_row

_HEADING_MAX_LINES = 3
_HEADING_MAX_CHARS = 200


class Blocks:
    """Groups a page's lines into Markdown blocks: headings, list items and paragraphs."""

    def __init__(self, scale: HeadingScale, words: Vocabulary | None = None) -> None:
        self.scale = scale
        self.words = words or Vocabulary()  # the document's words (cut words in table cells)
        self.blocks: list[tuple[str, str]] = []
        self.current: list[Line] = []
        self.kind = ""  # "heading", "item", "para"
        self.heading_level = 0
        self.list_stack: list[tuple[float, int]] = []  # (bullet x, child indent)
        self.item_prefix = ""
        self.last_table: Table | None = None  # the page's last block, when it is a table
        self.completed: Table | None = None  # `carried` with its cut last row completed

    def markdown(self, lines: list[Line], carried: Table | None = None) -> str:
        """Return the lines as Markdown: blocks apart by a blank line, list items kept tight,
        tables as pipe tables (`carried`: the previous page's closing table, which rows at
        this page's top continue under its header)."""
        tables = {table.first_line: table for table in find_tables(lines, carried, self.words)}
        rejoined = rejoin_cut_row(carried, tables[0]) if carried and 0 in tables else None
        if rejoined is not None:
            self.completed, tables[0] = rejoined
        index = 0
        self.last_table = None
        while index < len(lines):
            table = tables.get(index)
            if table is None:
                self._add(lines[index])
                self.last_table = None
                index += 1
                continue
            self._flush()
            self.list_stack = []
            self.blocks.append(("table", table.markdown()))
            self.last_table = table
            index = table.last_line + 1
        self._flush()
        out, out_kind = "", ""
        for kind, block in self.blocks:
            separator = "\n" if kind == "item" and out_kind == "item" else "\n\n"
            out = f"{out}{separator}{block}" if out else block
            out_kind = kind
        return out

    def _add(self, line: Line) -> None:
        previous = self.current[-1] if self.current else None
        if previous is not None and _same_row(previous, line):
            if self.kind == "heading":  # a heading does not share its row: a table cell
                self.kind = "para"
            self.current.append(line)
            return
        level = self.scale.level(line)
        near = previous is not None and _close(previous, line)
        if (
            level is None
            and self.kind == "heading"
            and near
            and previous is not None
            and line.style == previous.style
            and list_marker(line.text) is None
        ):
            self.current.append(line)  # a bold paragraph, not a title: `_flush` decides
            return
        if (
            level is not None
            and self.kind == "para"
            and near
            and previous is not None
            and _runs_on_into_bold(previous, line, self.scale.body_size)
        ):
            self.current.append(line)  # "... connectivity with **CloudWay 24 - ...!**"
            return
        if level is not None:
            same = self.kind == "heading" and level == self.heading_level and near
            if not same:
                self._flush()
                self.kind, self.heading_level = "heading", level
                self.list_stack = []
            self.current.append(line)
            return
        marker = list_marker(line.text)
        if marker is not None:
            self._flush()
            self._start_item(line, marker[0])
            self.current.append(line)
            return
        if self.kind == "item" and near and line.x0 > self.list_stack[-1][0] + 2:
            self.current.append(line)
            return
        if self.kind == "para" and near and previous is not None and line.size == previous.size:
            self.current.append(line)
            return
        self._flush()
        self.list_stack = []
        self.kind = "para"
        self.current.append(line)

    def _start_item(self, line: Line, marker: str) -> None:
        while self.list_stack and line.x0 < self.list_stack[-1][0] - 3:
            self.list_stack.pop()
        if self.list_stack and abs(line.x0 - self.list_stack[-1][0]) <= 3:
            self.list_stack.pop()
        indent = self.list_stack[-1][1] if self.list_stack else 0
        self.list_stack.append((line.x0, indent + len(marker) + 1))
        self.kind = "item"
        self.item_prefix = " " * indent + marker + " "

    def _flush(self) -> None:
        if not self.current:
            return
        title = _join([line.text for line in self.current], self.current)
        if self.kind == "heading" and not _short_enough_for_heading(self.current, title):
            self.kind = "para"  # a long run in a large font is body text (slides), not a title
        body_sized = self.current[0].size < self.scale.body_size * 1.12
        if self.kind == "heading" and title.endswith(HEADING_END) and body_sized:
            self.kind = "para"  # bold lines that end a sentence: a bold paragraph
        if self.kind == "heading":
            self.blocks.append(("heading", "#" * self.heading_level + " " + title))
        elif self.kind == "item":
            first = self.current[0]
            marker = list_marker(first.text)
            texts = [_inline(first, skip_marker=True, marker=marker)]
            texts += [_inline(line) for line in self.current[1:]]
            self.blocks.append(("item", self.item_prefix + _join(texts, self.current)))
        else:
            text = _join([_inline(line) for line in self.current], self.current)
            self.blocks.append(("para", _escape_start(text)))
        self.current = []
        self.kind = ""


def _runs_on_into_bold(previous: Line, line: Line, body: float) -> bool:
    """Whether a bold body-sized line at normal spacing goes on with the sentence the
    paragraph line before it left open (ending in a lower-case word or a comma): bold words
    of that sentence, not a heading."""
    text = previous.text.rstrip()
    return (
        bool(text)
        and (text[-1].islower() or text[-1] == ",")
        and line.size < body * 1.12
        and abs(line.size - previous.size) < 0.5
    )


def _short_enough_for_heading(lines: list[Line], title: str) -> bool:
    return len(lines) <= _HEADING_MAX_LINES and len(title) <= _HEADING_MAX_CHARS


def _close(previous: Line, line: Line) -> bool:
    """True when `line` follows `previous` at normal line spacing (same block)."""
    gap = (previous.end_baseline or previous.baseline) - line.baseline
    return 0 < gap <= 1.5 * max(previous.size, line.size)


def _same_row(previous: Line, line: Line) -> bool:
    """True when `line` continues `previous`'s visual row (e.g. the next table cell).

    The next cell starts to the right, on the same baseline or up to a few lines higher
    (when the previous cell wrapped onto several lines).
    """
    size = max(previous.size, line.size, 1.0)
    drop = previous.baseline - line.baseline
    return line.x0 > previous.x0 + 1 and -4 * size <= drop < 0.35 * size


def _join(texts: list[str], lines: list[Line]) -> str:
    out = ""
    for text, line_before in zip(texts, [None, *lines[:-1]], strict=True):
        if not out:
            out = text
        elif line_before is not None and line_before.hyphen_end and out.endswith("-"):
            out = out[:-1] + text
        else:
            out = f"{out} {text}"
    return out.replace("** **", " ")


def _inline(line: Line, skip_marker: bool = False, marker: tuple[str, str] | None = None) -> str:
    """Return the line's text with bold runs marked `**...**` (unless the whole line is bold)."""
    chars = line.chars
    if skip_marker and marker is not None:
        chars = _drop_marker(chars, line.text, marker[1])
    text = "".join(ch for ch, _ in chars).strip()
    if not any(bold for ch, bold in chars if ch != " "):
        return text
    runs: list[tuple[str, bool]] = []
    for char, bold in chars:
        if runs and (runs[-1][1] == bold or char == " "):
            runs[-1] = (runs[-1][0] + char, runs[-1][1])
        else:
            runs.append((char, bold))
    pieces = []
    for run, bold in runs:
        core = run.strip()
        if bold and any(ch.isalnum() for ch in core):
            lead = run[: len(run) - len(run.lstrip())]
            trail = run[len(run.rstrip()) :]
            pieces.append(f"{lead}**{core}**{trail}")
        else:
            pieces.append(run)
    return "".join(pieces).strip()


def _drop_marker(chars: list[tuple[str, bool]], text: str, rest: str) -> list[tuple[str, bool]]:
    """Return the characters after the list marker (the marker is `text` minus `rest`)."""
    to_drop = sum(1 for ch in text[: len(text) - len(rest)] if ch != " ")
    index = 0
    while index < len(chars) and to_drop:
        if chars[index][0] != " ":
            to_drop -= 1
        index += 1
    while index < len(chars) and chars[index][0] == " ":
        index += 1
    return chars[index:]


def _escape_start(text: str) -> str:
    """Keep a paragraph that happens to start like Markdown syntax from becoming it."""
    if text.startswith(("#", ">")):
        return "\\" + text
    return text
