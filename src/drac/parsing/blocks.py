"""Top-level Markdown blocks with their exact source spans, from mistune's block parser."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BlockState
from mistune.plugins import import_plugin


@dataclass(frozen=True, slots=True)
class Block:
    """One top-level block: mistune's token type and the verbatim source it came from."""

    type: str
    text: str
    start: int
    level: int | None = None


class _SpanParser(BlockParser):
    """mistune's block parser, recording the source span of every top-level token.

    mistune tokens carry no source positions. `parse_spans` is mistune's own top-level loop
    plus bookkeeping: each top-level `parse_method` call records the span it consumed for the
    tokens it created (keyed by token identity, since a list broken by a heading inserts its
    own token before the heading's); text the loop turns into paragraphs is recorded likewise.
    """

    def __init__(self) -> None:
        super().__init__()
        self._root: BlockState | None = None
        self._spans: dict[int, list[int]] = {}

    def parse_method(self, m: re.Match[str], state: BlockState) -> int | None:  # type: ignore[override]
        if state is not self._root:
            return super().parse_method(m, state)
        count = len(state.tokens)
        end = super().parse_method(m, state)
        self._claim(state, count, m.start(), end if end else m.start())
        return end

    def _claim(self, state: BlockState, count: int, start: int, end: int) -> None:
        """Give tokens created since `count` without a span the source [start, end)."""
        fresh = state.tokens[count:]
        claimed = [self._spans[id(t)][0] for t in fresh if id(t) in self._spans]
        stop = min([end, *claimed])
        for token in fresh:
            if id(token) not in self._spans:
                self._spans[id(token)] = [start, stop]

    def _step(self, state: BlockState, count: int, start: int, end: int) -> None:
        if len(state.tokens) > count:
            self._claim(state, count, start, end)
        elif state.tokens and id(state.tokens[-1]) in self._spans:
            span = self._spans[id(state.tokens[-1])]  # a paragraph was extended
            span[1] = max(span[1], end)

    def parse_spans(self, state: BlockState) -> list[list[int]]:
        """Parse state's source at top level; return [start, end] per token."""
        self._root, self._spans = state, {}
        sc = self.compile_sc(self.rules)
        while state.cursor < state.cursor_max:
            begin, count = state.cursor, len(state.tokens)
            if "indent_code" in self.rules:
                end_pos = self._parse_indent_code_fast(state)
                if end_pos is not None:
                    state.cursor = end_pos
                    self._step(state, count, begin, end_pos)
                    continue
            match = sc.match(state.src, state.cursor)
            if not match and self._parse_plain_paragraph(state, sc):
                self._step(state, count, begin, state.cursor)
                continue
            if not match:
                match = sc.search(state.src, state.cursor)
            if not match:
                break
            if match.start() > state.cursor:
                state.add_paragraph(state.get_text(match.start()))
                self._step(state, count, begin, match.start())
                state.cursor = match.start()
            begin, count = state.cursor, len(state.tokens)
            end_pos = self.parse_method(match, state)
            if not end_pos:
                end_pos = state.find_line_end()
                state.add_paragraph(state.get_text(end_pos))
            state.cursor = end_pos
            self._step(state, count, begin, end_pos)

        if state.cursor < state.cursor_max:
            begin, count = state.cursor, len(state.tokens)
            state.add_paragraph(state.src[state.cursor :])
            state.cursor = state.cursor_max
            self._step(state, count, begin, state.cursor_max)
        spans = [self._spans[id(token)] for token in state.tokens]
        self._root, self._spans = None, {}
        return spans


# A grid table: a border line like +---+---+ then lines starting with | or +.
GRID_TABLE_PATTERN = r"^[ ]{0,3}\+[-=:]+\+(?:[-=:]*+\+)*+[ \t]*(?:\n[ ]{0,3}[|+][^\n]*+)++\n?"

# Python's regex engine keeps a backtracking entry for every repetition of a group, so these
# mistune rules cost memory per repetition: a million blank lines took 946 MiB, a line of a
# million "=" 282 MiB. Their possessive forms (Python 3.11) match exactly the same text, in
# constant memory. The same holds for the grid table pattern above.
_LINEAR_RULES = {
    "blank_line": r"(?:^[ \t\v\f]*+\n)++",
    "setex_heading": r"^ {0,3}[=-]*(?P<setext_1>[=-])[ \t]*$",
    "thematic_break": r"^ {0,3}((?:-[ \t]*+){3,}+|(?:_[ \t]*+){3,}+|(?:\*[ \t]*+){3,}+)$",
}


def _parse_grid_table(parser: BlockParser, match: re.Match[str], state: BlockState) -> int:
    state.append_token({"type": "grid_table", "text": match.group(0)})
    return match.end()


_local = threading.local()


def _parser() -> _SpanParser:
    """This thread's parser (a parser keeps per-parse state, so threads must not share one)."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = _new_parser()
    return parser


def _new_parser() -> _SpanParser:
    parser = _SpanParser()
    parser.specification.update(_LINEAR_RULES)
    parser.BLANK_LINE = re.compile(_LINEAR_RULES["blank_line"], re.M)
    # Markdown() wires the plugin's table rules into our parser; the object is not needed after.
    mistune.Markdown(block=parser, plugins=[import_plugin("table")])
    parser.register("grid_table", GRID_TABLE_PATTERN, _parse_grid_table)
    parser.rules.remove("grid_table")
    parser.rules.insert(0, "grid_table")  # before lists and setext headings claim its lines
    return parser


def split_blocks(source: str) -> list[Block]:
    """Split normalised Markdown into top-level blocks, each with its verbatim source slice."""
    state = BlockState()
    state.process(source)
    spans = _parser().parse_spans(state)
    blocks: list[Block] = []
    for token, (start, end) in zip(state.tokens, spans, strict=True):
        kind = token["type"]
        if kind == "blank_line":
            continue
        level = token.get("attrs", {}).get("level") if kind == "heading" else None
        blocks.append(Block(type=kind, text=source[start:end], start=start, level=level))
    return blocks
