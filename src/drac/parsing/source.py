"""Markdown source as lines, with the offsets needed to slice blocks out verbatim."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from itertools import accumulate, chain

# Characters a blank line may consist of (Unicode spaces such as NBSP make a line non-blank).
BLANK_CHARS = " \t\v\f"


class Lines:
    """The lines of a source (without their newlines) and where each starts in it."""

    __slots__ = ("blank", "count", "ends_with_newline", "lines", "source", "starts")

    def __init__(self, source: str) -> None:
        self.source = source
        lines = source.split("\n") if source else []
        self.ends_with_newline = source.endswith("\n")
        if self.ends_with_newline:
            lines.pop()  # the empty string after the final newline is not a line
        self.lines = lines
        self.count = len(lines)
        # Compact per-line tables (8 bytes and 1 byte a line, not a Python int and a pointer):
        # a million blank lines would otherwise cost more than 50 MiB.
        self.starts = array("q", chain((0,), accumulate(len(line) + 1 for line in lines)))
        # blank[i]: line i is blank (only spaces, tabs, vertical tabs, form feeds; a newline)
        self.blank = bytearray(not line.strip(BLANK_CHARS) for line in lines)
        if lines and not self.ends_with_newline:
            self.blank[-1] = False  # a blank line needs its newline

    def has_newline(self, index: int) -> bool:
        """True when line `index` is terminated by a newline (all but possibly the last)."""
        return index < self.count - 1 or self.ends_with_newline

    def next_blank(self, index: int) -> int:
        """Index of the first blank line at or after `index` (the line count when none)."""
        found = self.blank.find(1, index)
        return self.count if found < 0 else found

    def line_at(self, offset: int) -> int:
        """Index of the line holding source offset `offset`."""
        return bisect_right(self.starts, offset, 0, self.count) - 1
