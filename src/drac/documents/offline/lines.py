"""A line of a PDF page's text layer as the offline converter reads it: its characters
with their weight, size, baseline and cell starts, and where it splits into cells."""

from __future__ import annotations

import bisect
import ctypes
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

import pypdfium2.raw as pdfium_c

from drac.documents.offline.tables import CELL_GAP, Cell

BULLETS = frozenset("•●○◦▪▫■□➢➤►▶✓✔❖◆◇‣⁃∙·")
DASH_BULLETS = frozenset("-–—*")
ORDERED = re.compile(r"^(\d{1,3}[.)])\s+(.*)$")
PAGE_NUMBER = re.compile(r"^(?:page\s+)?\d{1,4}(?:\s*(?:/|of)\s*\d{1,4})?$", re.IGNORECASE)
HEADING_END = (".", ",", ";")
_BOLD_NAMES = (b"bold", b"black", b"heavy", b"semibold", b"demi")
_FORCE_BOLD = 1 << 18
# PDFium reports a hyphen it judged to end a line inside a word as U+0002 (or keeps a soft
# hyphen); the offline converter decides per document whether it was a real one.
LINE_END_HYPHENS = frozenset({0x02, 0xAD})
SOFT_HYPHEN = "\x02"
# Characters that start this many font sizes left of the previous one's end start a new cell.
OVERLAP = 0.5
# Letters of one word sit closer than this many font sizes to each other.
ABUTTING = 0.15
# A glyph this many points from a column's start starts at it (side bearings differ).
_AT_COLUMN = 1.0
# A gap wider than this many font sizes between two text objects is more than a word space.
SPACED_CELL = 0.3


def bold_font(name: bytes, flags: int) -> bool:
    """Whether a font is bold by its name ("DejaVuSans-Bold") or its force-bold flag."""
    lowered = name.lower()
    return any(word in lowered for word in _BOLD_NAMES) or bool(flags & _FORCE_BOLD)


def object_of(raw: object, index: int) -> int | None:
    """The address of the text object a character of the text page belongs to."""
    return ctypes.cast(pdfium_c.FPDFText_GetTextObject(raw, index), ctypes.c_void_p).value


WORD = re.compile(r"[^\W_]+")


@dataclass
class Line:
    """One line of a page's text layer: (character, bold) pairs and where it sits."""

    chars: list[tuple[str, bool]]
    size: float
    bold: bool
    x0: float
    baseline: float
    hyphen_end: bool = False
    # (char index, x, baseline, right edge of the cell before) of each cell after the first
    cell_starts: list[tuple[int, float, float, float]] = field(default_factory=list)
    end_baseline: float | None = None  # where the line ends when PDFium joined a wrapped word
    right: float = 0.0  # the right edge of the line's last cell
    glyphs: list[tuple[int, float]] = field(default_factory=list)  # (char index, left edge)
    text: str = field(init=False)

    def __post_init__(self) -> None:
        self.text = "".join(ch for ch, _ in self.chars).strip()
        if self.end_baseline is None:
            self.end_baseline = self.baseline

    def cells(
        self,
        columns: Sequence[float] = (),
        near: Sequence[float] = (),
        own: Sequence[float] = (),
    ) -> list[Cell]:
        """The line's parts separated by gaps wider than CELL_GAP font sizes, left to right,
        and also where a glyph right after another, with no space between, starts another
        word at one of `columns` (text that ran over its cell's right edge into the next
        cell's start); in a line of several parts (a table row), also where a word after a
        space starts at one of `near` (the columns of the lines around it); in a line of one
        part that starts at one of `own`, where a number or a price after a space does."""
        starts = [(0, self.x0, self.baseline), *((i, x, y) for i, x, y, _ in self.cell_starts)]
        rights = [right for *_, right in self.cell_starts] + [self.right]
        if columns:
            starts, rights = self._cut_at(columns, near, own, starts, rights)
        ends = [index for index, *_ in starts[1:]] + [len(self.chars)]
        last = len(starts) - 1
        bottom = self.baseline if self.end_baseline is None else self.end_baseline
        return [
            Cell(
                x,
                max(right, x),
                y,
                bottom if n == last and bottom != self.baseline else y,  # a wrapped word
                "".join(ch for ch, _ in self.chars[start:end]),
            )
            for n, ((start, x, y), end, right) in enumerate(zip(starts, ends, rights, strict=True))
        ]

    def _cut_at(
        self,
        columns: Sequence[float],
        near: Sequence[float],
        own: Sequence[float],
        starts: list[tuple[int, float, float]],
        rights: list[float],
    ) -> tuple[list[tuple[int, float, float]], list[float]]:
        """`starts` and `rights` with a cell added at each glyph that abuts the glyph before
        it and starts at a column (within _AT_COLUMN points)."""
        cut_starts: list[tuple[int, float, float]] = []
        cut_rights: list[float] = []
        glyphs = self.glyphs
        # in a line already cut at a wide gap (a table row), a word after a narrow space
        # that starts at a column starts a cell too ("4400mAh 42,999"); a part that only
        # abuts the one before it (a bold label, "**Available Colors**: ...") makes no row
        size = self.size if self.size > 1.0 else 1.0
        row = any(
            not -OVERLAP <= (starts[n + 1][1] - rights[n]) / size <= CELL_GAP
            for n in range(len(starts) - 1)
        )
        # a line of one part that starts at a column (a cell's own line): only a number or
        # a price after a space starts a cell ("5000mAh 6.5”", "59,999 $719"), not a word of
        # the cell's wrapped text
        inside = not row and _at_column(own, self.x0)  # (the page's margin is no column)
        spaced = row or inside
        near = near if row else own
        position = 0
        for n, (start, x, y) in enumerate(starts):
            end = starts[n + 1][0] if n + 1 < len(starts) else len(self.chars)
            cut_starts.append((start, x, y))
            while position < len(glyphs) and glyphs[position][0] <= start:
                position += 1
            while position < len(glyphs) and glyphs[position][0] < end:
                index, left = glyphs[position]
                position += 1
                if (
                    left > x + _AT_COLUMN
                    and _at_column(columns, left)
                    and (
                        (
                            spaced
                            and _at_column(near, left)
                            and self._after_space(index)
                            and (row or self._number_after_number(index))
                        )
                        or (
                            self._pieces_are_words(index)
                            and _word_boundary(
                                self.chars[index - 1][0],
                                self.chars[index][0],
                                "".join(ch for ch, _ in self.chars[index + 1 : index + 9]),
                            )
                        )
                    )
                ):
                    cut_rights.append(left)
                    cut_starts.append((index, left, y))
            cut_rights.append(rights[n])
        return cut_starts, cut_rights

    def _number_after_number(self, index: int) -> bool:
        """Whether a number or price starts at `index` after a space that follows a word
        holding a digit ("5000mAh 6.5”", "59,999 $719"; not "Velvera Edge 256GB")."""
        if not _starts_number(self.chars[index][0]):
            return False
        before = "".join(ch for ch, _ in self.chars[max(0, index - WORD_MAX) : index]).split()
        return bool(before) and any(ch.isdigit() for ch in before[-1])

    def _after_space(self, index: int) -> bool:
        """Whether the last character before `index` that is not left out is a space."""
        chars = self.chars
        while index > 0 and not chars[index - 1][0]:
            index -= 1
        return index > 0 and chars[index - 1][0] == " "

    def _pieces_are_words(self, index: int) -> bool:
        """Whether the text on both sides of character `index` is two characters long or
        more (a one-letter prefix, "eVisa", or suffix, "GaN", is part of one word)."""
        chars = self.chars
        return (
            index >= 2
            and chars[index - 2][0].isalnum()
            and index + 1 < len(chars)
            and chars[index + 1][0].strip() != ""
        )

    @property
    def style(self) -> tuple[float, bool]:
        return (self.size, self.bold)


def _starts_number(char: str) -> bool:
    """Whether `char` starts a number or a price."""
    return char.isdigit() or unicodedata.category(char) == "Sc"


def _at_column(columns: Sequence[float], x: float) -> bool:
    """Whether `x` is within _AT_COLUMN points of one of `columns` (in ascending order)."""
    at = bisect.bisect_left(columns, x - _AT_COLUMN)
    return at < len(columns) and columns[at] <= x + _AT_COLUMN


def _word_boundary(before: str, char: str, rest: str) -> bool:
    """Whether `char` right after `before` (and before `rest`), with no space, starts
    another word: a capitalised word or a code after a small letter or digit
    ("PuneMaharashtra", "2025Velvera", "AustraliaCW2411"; not "VelOS" or "64GB"), a
    capitalised word after a capital ("RAMStorage", not "SLAs"), a digit after a small
    letter ("Gujarat3rd"; not "CW2418"), a currency sign after a letter or digit, a
    letter after closing punctuation ("Hills,Road"; not "3,499")."""
    if not before or not char:
        return False
    if before in _CLOSING:
        return char.isalpha()
    if char.isdigit():
        return before.islower()  # not a code ("CW2418")
    if unicodedata.category(char) == "Sc":  # a price after a number ("87,999$1,059")
        return before.isalnum()
    if not char.isupper() or not before.isalnum():
        return False
    run = WORD.match(rest)
    after = run.group(0) if run else ""
    if before.isupper():
        return len(after) >= 2 and after[:2].islower()
    return after[:1].islower() or any(ch.isdigit() for ch in after)


_CLOSING = frozenset(",;)]")


WORD_MAX = 64  # longer runs of letters are no word a line break hyphenates
