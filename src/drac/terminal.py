"""Strings from documents and file names made safe to print: no byte of them can move the
cursor, clear the screen, set a window title, reorder text or start a new table row.

Every command prints document-derived text (names, paths, Markdown, chunk text, warnings,
errors quoting them) through `printable` (plain text) or `markup` (inside rich markup), and
JSON through `json_text`, piped or not.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_VISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Control, format (bidi overrides, zero-width, soft hyphen), surrogate (undecodable bytes
kept by surrogateescape) and line/paragraph separator characters."""

_ANY_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\xad]|[^\x00-\xff]")
"""A quick test whether a string may hold anything to escape (most text holds nothing)."""


@lru_cache(maxsize=4096)
def _unsafe(char: str) -> bool:
    return unicodedata.category(char) in _VISIBLE_CATEGORIES


def _visible(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def printable(text: object, *, lines: bool = False) -> str:
    """The text with every control, format (bidi, zero-width) and separator character
    replaced by a visible escape such as `\\x1b` or `\\u202e`; with `lines`, newlines and tabs
    are kept (for Markdown printed as a whole) and a carriage return still escaped."""
    value = str(text)
    if not _ANY_UNSAFE.search(value):
        return value
    kept = "\n\t" if lines else ""
    return "".join(_visible(char) if _unsafe(char) and char not in kept else char for char in value)


def markup(text: object) -> str:
    """`printable` text escaped for rich markup (a `[` in a name is not a style)."""
    from rich.markup import escape  # here: `drac --help` loads no rich

    return escape(printable(text))


def json_text(text: str) -> str:
    """JSON text (made by `json.dumps` or pydantic) with the characters JSON leaves raw that a
    terminal acts on (C1 controls, bidi overrides, separators) written as `\\uXXXX` escapes:
    still valid JSON, and it decodes to the original text."""
    if not _ANY_UNSAFE.search(text):
        return text
    return "".join(
        _json_escape(char) if ord(char) > 0x7E and _unsafe(char) else char for char in text
    )
