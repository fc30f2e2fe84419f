"""Split an oversized text into verbatim pieces at the most natural boundaries available."""

from __future__ import annotations

import re

# Boundaries from most to least natural. Each pattern matches the separator; a piece keeps
# the text up to and including its separator so pieces are exact slices of the input.
_BOUNDARIES: tuple[re.Pattern[str], ...] = (
    re.compile(r"\n[ \t]*\n"),  # blank line
    re.compile(r"\n(?=(?:[-*+]|\d{1,9}[.)])[ \t])"),  # top-level list item
    re.compile(r"\n"),  # line break
    re.compile(r"(?<=[.!?;:])[\"')\]]*[ \t]+|(?<=[。！？；])"),  # sentence end (incl. CJK)
    re.compile(r"[ \t]+"),  # any whitespace
)


def split_text(text: str, limit: int) -> list[str]:
    """Return verbatim, stripped pieces of text, each at most `limit` characters.

    Tries blank lines, list items, lines, sentence ends (also 。！？), then spaces; cuts hard
    only when a single word is longer than the limit.
    """
    if limit < 1:
        raise ValueError("limit must be positive")
    pieces = [piece.strip() for piece in _split(text, limit, 0)]
    return [piece for piece in pieces if piece]


def _split(text: str, limit: int, level: int) -> list[str]:
    if len(text.strip()) <= limit:
        return [text]
    if level >= len(_BOUNDARIES):
        return [text[i : i + limit] for i in range(0, len(text), limit)]
    units = _units(text, _BOUNDARIES[level])
    if len(units) == 1:
        return _split(text, limit, level + 1)
    # `current` is the slice text[start:pos] being filled; its stripped size is measured from
    # the offsets of its first and last non-space characters, never by joining strings (a
    # run of whitespace-only units would otherwise make this quadratic).
    pieces: list[str] = []
    start: int | None = None
    first: int | None = None  # offset of current's first non-space character
    last: int | None = None  # offset just past current's last non-space character
    pos = 0
    for unit in units:
        unit_start, pos = pos, pos + len(unit)
        stripped = unit.strip()
        if len(stripped) > limit:
            if start is not None:
                pieces.append(text[start:unit_start])
                start = None
            pieces.extend(_split(unit, limit, level + 1))
            continue
        unit_first = unit_start + len(unit) - len(unit.lstrip()) if stripped else None
        unit_last = unit_start + len(unit.rstrip()) if stripped else None
        if start is not None:
            joined_first = first if first is not None else unit_first
            joined_last = unit_last if unit_last is not None else last
            size = 0 if joined_first is None or joined_last is None else joined_last - joined_first
            if size <= limit:
                first, last = joined_first, joined_last
                continue
            pieces.append(text[start:unit_start])
        start, first, last = unit_start, unit_first, unit_last
    if start is not None:
        pieces.append(text[start:pos])
    return pieces


def _units(text: str, boundary: re.Pattern[str]) -> list[str]:
    units: list[str] = []
    start = 0
    for match in boundary.finditer(text):
        if match.end() > start:
            units.append(text[start : match.end()])
            start = match.end()
    if start < len(text):
        units.append(text[start:])
    return units
