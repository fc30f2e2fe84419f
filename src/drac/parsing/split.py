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
    pieces: list[str] = []
    current = ""
    for unit in units:
        if len(unit.strip()) > limit:
            if current:
                pieces.append(current)
                current = ""
            pieces.extend(_split(unit, limit, level + 1))
        elif len((current + unit).strip()) <= limit:
            current += unit
        else:
            if current:
                pieces.append(current)
            current = unit
    if current:
        pieces.append(current)
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
