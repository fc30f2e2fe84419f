"""Top-level Markdown blocks with their exact source spans, from markdown-it-py's block parser.

markdown-it-py (CommonMark) tokenises the blocks; every top-level
token carries the line range it came from (`Token.map`), so each block is a verbatim slice of
the source. drac adds its own rules through markdown-it's rule chain: its tables (see
drac.parsing.tables) and a bound on nesting (see `_nested_deeper`). Link reference
definitions are read as paragraph text (the reference rule is off): a chunk keeps them.
Only the block stage runs: inline content is never parsed.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.ruler import RuleOptionsType
from markdown_it.rules_block import StateBlock, html_block
from markdown_it.rules_block.html_block import HTML_SEQUENCES

from drac.parsing.tables import bare_table, grid_table, pipe_table

# One top-level block: its kind, the verbatim source it came from, and a heading's level.
# A plain tuple: a document has thousands of blocks and named tuples cost more to make.
Block = tuple[str, str, int | None]

# Containers nested deeper than this (in token levels: a list item counts two) are read by
# indentation, not parsed: markdown-it recurses once per level, and past its own bound it
# skips the rest of the enclosing block's range, which would swallow the document's rest.
_DEPTH = 40

# markdown-it's lone-tag pattern (markdown_it.common.html_re) with possessive repetitions, and
# the line length from which it is used instead
_LONE_TAG = re.compile(
    r"<[A-Za-z][A-Za-z0-9\-]*+"
    r"(?:\s++[a-zA-Z_:][a-zA-Z0-9:._-]*+"
    r"(?:\s*+=\s*+(?:[^\"'=<>`\x00-\x20]++|'[^']*+'|\"[^\"]*+\"))?+)*+\s*+/?>"
    r"\s*+$"
    r"|</[A-Za-z][A-Za-z0-9\-]*+\s*+>\s*+$"
)
_LONG_LINE = 1_000

_KINDS = {
    "paragraph_open": "paragraph",
    "heading_open": "heading",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "blockquote_open": "block_quote",
    "fence": "block_code",
    "code_block": "block_code",
    "html_block": "block_html",
    "table": "table",
    "grid_table": "grid_table",
}


def _nested_deeper(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Past `_DEPTH`, a container's lines are those indented at least as its content."""
    if state.level < _DEPTH:
        return False
    line = last = start
    while line < end and (state.isEmpty(line) or state.sCount[line] >= state.blkIndent):
        line += 1
        if not state.isEmpty(line - 1):
            last = line
    state.line = last
    return True


def _html_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """markdown-it's HTML block rule, except for a long line that can only be a lone tag
    (CommonMark's seventh kind of HTML block), which a possessive pattern checks: markdown-it's
    own keeps a backtracking entry per attribute (500,000 of them took over 40 MiB)."""
    first, stop = state.bMarks[start] + state.tShift[start], state.eMarks[start]
    line = state.src[first:stop]
    if (
        stop - first < _LONG_LINE
        or line[:1] != "<"
        or state.sCount[start] - state.blkIndent >= 4
        or any(opening.search(line) for opening, _, _ in HTML_SEQUENCES[:-1])
    ):
        return html_block(state, start, end, silent)
    if silent or not _LONE_TAG.match(line):
        return False  # a lone tag cannot interrupt a paragraph
    after = start + 1
    while after < end and state.sCount[after] >= state.blkIndent and not state.isEmpty(after):
        after += 1
    token = state.push("html_block", "", 0)
    token.map = [start, after]
    state.line = after
    return True


def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"maxNesting": 2 * _DEPTH})
    parser.disable("reference")
    parser.block.ruler.at("html_block", _html_block, {"alt": ["paragraph", "blockquote"]})
    paragraph_breaks: RuleOptionsType = {"alt": ["paragraph"]}  # tables interrupt text
    parser.enable("table").block.ruler.at("table", pipe_table, paragraph_breaks)
    parser.block.ruler.before("table", "grid_table", grid_table, paragraph_breaks)
    parser.block.ruler.before("table", "nested_deeper", _nested_deeper)
    parser.block.ruler.before("paragraph", "bare_table", bare_table, paragraph_breaks)
    parser.core.ruler.enableOnly(["normalize", "block"])
    return parser


_PARSER = _parser()


def split_blocks(source: str) -> list[Block]:
    """Split normalised Markdown into top-level blocks, each with its verbatim source slice."""
    blocks: list[Block] = []
    start, size = 0, _WINDOW_LINES
    while start < len(source):
        window = _lines(size).match(source, start) if size < _ALL_LINES else None
        end = window.end() if window else len(source)
        if source.find("\n", end) < 0:
            end = len(source)  # the rest is one line without its newline
        spans = _spans(source, start, end)
        resume = end if end == len(source) else _resume(spans, end)
        if resume is None:  # one block that may go on: read more lines
            size *= 8  # re-reading costs 1/7 more at most
            continue
        blocks += [
            (kind, text, level)
            for kind, text, level, begin, _, _ in spans
            if kind and begin < resume
        ]
        start, size = resume, _WINDOW_LINES
    return blocks


# A window of lines is parsed at a time: markdown-it keeps five lists of a number per line
# (a million blank lines took 116 MiB at once). A window's last block may go on past it, so
# the next window starts where that block does; the blocks before it were closed within it.
_WINDOW_LINES = 20_000
_ALL_LINES = 1 << 30  # from this window size on, the rest of the source (re's repeat limit)
# Blocks that blank lines do not end: a list (an item's next paragraph), indented code.
_GOES_ON_AFTER_BLANKS = frozenset({"bullet_list_open", "ordered_list_open", "code_block"})

# kind, verbatim text, heading level, start and end offsets, and whether blank lines end it
Span = tuple[str, str, int | None, int, int, bool]


@lru_cache(maxsize=8)
def _lines(count: int) -> re.Pattern[str]:
    """Matches up to `count` whole lines (possessive: one backtracking entry at most)."""
    return re.compile(rf"(?:[^\n]*+\n){{1,{count}}}")


def _spans(source: str, start: int, end: int) -> list[Span]:
    """The top-level blocks of source[start:end], with their offsets in source (rules and
    closing tokens are dropped; a rule still counts as the block a window ends on)."""
    spans: list[Span] = []
    offset, line = start, 0
    find = source.find
    for token in _PARSER.parse(source[start:end]):
        if token.level or token.map is None or token.nesting == -1:
            continue
        first, last = token.map
        while line < first:
            offset, line = find("\n", offset, end) + 1, line + 1
        begin = offset
        while line < last:
            found = find("\n", offset, end)
            offset, line = (end if found < 0 else found + 1), line + 1
        kind = _KINDS.get(token.type, "")
        level = int(token.tag[1]) if kind == "heading" else None
        closed = token.type not in _GOES_ON_AFTER_BLANKS
        spans.append((kind, source[begin:offset], level, begin, offset, closed))
    return spans


def _resume(spans: list[Span], end: int) -> int | None:
    """Where the next window starts: after this one when its last block is closed, else
    where that block starts (None: it is the window's only block)."""
    if not spans:
        return end  # blank lines only
    _, _, _, begin, stop, closed = spans[-1]
    if closed and stop < end:
        return end  # only blank lines follow it
    return begin if len(spans) > 1 else None
