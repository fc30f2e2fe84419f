"""Cell values shown as the sheet shows them: Excel number format codes, the common subset.

Supported: General, fixed decimals (0.00), optional digits (#), thousands separators
(#,##0), scaling by trailing commas, percentages, scientific (0.00E+00), literal text
("..." and \\x), currency brackets ([$€-407]), colours, up to four sections
(positive;negative;zero;text), dates and times (see `datefmt`). Anything else (fractions,
conditional sections) falls back to General, which never loses the value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache

from drac.documents.spreadsheets.datefmt import format_datetime, is_date_section

_PLACEHOLDERS = "0#?"
# openpyxl names built-in format 14 by its code "mm-dd-yy"; Excel shows it in the system's
# short date format, which for en-US is m/d/yyyy (likewise 22, the short date and time).
_LOCALE_BUILTINS = {"mm-dd-yy": "m/d/yyyy", "m/d/yy h:mm": "m/d/yyyy h:mm"}


@dataclass(frozen=True, slots=True)
class Token:
    """A piece of a format section: raw code, literal text, an elapsed unit, or AM/PM."""

    kind: str  # "raw", "lit", "elapsed", "ampm"
    text: str


@dataclass(frozen=True)
class Section:
    """One ;-separated section of a number format."""

    tokens: tuple[Token, ...]
    conditional: bool = False

    @property
    def raw(self) -> str:
        return "".join(token.text for token in self.tokens if token.kind == "raw")

    @property
    def is_general(self) -> bool:
        return "general" in self.raw.lower()


@dataclass(frozen=True)
class NumberFormat:
    """A parsed number format code."""

    sections: tuple[Section, ...] = field(default_factory=tuple)

    @property
    def is_date(self) -> bool:
        return bool(self.sections) and is_date_section(self.sections[0].tokens)


def format_cell(value: object, number_format: str | None = None) -> str:
    """The text a spreadsheet shows for `value` under `number_format` (General when None)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return _format_text(value, parse_format(number_format or "General"))
    fmt = parse_format(number_format or "General")
    if isinstance(value, datetime | date | time | timedelta):
        if fmt.is_date:
            return format_datetime(value, fmt.sections[0].tokens)
        return _iso(value)
    if isinstance(value, int | float | Decimal):
        return format_number(value, fmt)
    return str(value)


@lru_cache(maxsize=1024)
def parse_format(code: str) -> NumberFormat:
    """Parse a format code into sections of tokens (cached: sheets reuse a few codes)."""
    code = _LOCALE_BUILTINS.get(code, code)
    sections: list[Section] = []
    tokens: list[Token] = []
    conditional = False
    i = 0
    while i < len(code):
        char = code[i]
        if char == '"':
            end = code.find('"', i + 1)
            end = len(code) if end < 0 else end
            tokens.append(Token("lit", code[i + 1 : end]))
            i = end + 1
        elif char == "\\" and i + 1 < len(code):
            tokens.append(Token("lit", code[i + 1]))
            i += 2
        elif char in "_*" and i + 1 < len(code):
            i += 2  # padding to a character's width, or a fill: no text of their own
        elif char == "[":
            end = code.find("]", i)
            end = len(code) if end < 0 else end
            bracket = code[i + 1 : end]
            conditional |= bracket[:1] in "<>="
            tokens.extend(_bracket(bracket))
            i = end + 1
        elif code[i : i + 5].upper() == "AM/PM":
            tokens.append(Token("ampm", code[i : i + 5]))
            i += 5
        elif code[i : i + 3].upper() == "A/P":
            tokens.append(Token("ampm", code[i : i + 3]))
            i += 3
        elif char == ";":
            sections.append(Section(tuple(tokens), conditional))
            tokens, conditional = [], False
            i += 1
        else:
            tokens.append(Token("raw", char))
            i += 1
    sections.append(Section(tuple(tokens), conditional))
    return NumberFormat(tuple(sections))


def _bracket(content: str) -> list[Token]:
    lowered = content.lower()
    if lowered and len(set(lowered)) == 1 and lowered[0] in "hms":
        return [Token("elapsed", lowered)]  # [h], [mm], [ss]: elapsed time
    if content.startswith("$"):
        symbol = content[1:].split("-", 1)[0]
        return [Token("lit", symbol)] if symbol else []
    return []  # a colour, a condition or a locale: no text


def format_number(value: int | float | Decimal, fmt: NumberFormat) -> str:
    """A number under a parsed format: the section its sign selects, General as fallback."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    sections = fmt.sections
    if not sections or any(section.conditional for section in sections):
        return format_general(value)
    section, absolute = sections[0], False
    if value < 0 and len(sections) >= 2:
        section, absolute = sections[1], True
    elif value == 0 and len(sections) >= 3:
        section = sections[2]
    if section.is_general:
        text = format_general(abs(value) if absolute else value)
        return _literals_around(section, text)
    if is_date_section(section.tokens):
        return format_general(value)
    if any(token.kind == "raw" and token.text == "/" for token in section.tokens):
        return format_general(value)  # fractions (# ?/?) are not supported
    return _format_with(section, abs(value) if absolute else value)


def format_general(value: int | float | Decimal) -> str:
    """A number as Excel's General format shows it (15 significant digits, no float noise)."""
    if isinstance(value, int):
        return str(value)
    number = float(value)
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    text = f"{number:.15g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}E{exponent[0]}{abs(int(exponent)):02d}"
    return text


def _literals_around(section: Section, text: str) -> str:
    before: list[str] = []
    after: list[str] = []
    seen_general = False
    raw_run = ""
    for token in section.tokens:
        if token.kind == "raw":
            raw_run += token.text
            if "general" in raw_run.lower():
                seen_general = True
            continue
        if token.kind == "lit":
            (after if seen_general else before).append(token.text)
    return "".join(before) + text + "".join(after)


def _format_with(section: Section, value: int | float | Decimal) -> str:
    tokens = section.tokens
    places = [i for i, t in enumerate(tokens) if t.kind == "raw" and t.text in _PLACEHOLDERS]
    if not places:
        return "".join(t.text for t in tokens if t.kind == "lit" or _shown_raw(t))
    first, last = places[0], places[-1]
    exponent_at = _exponent_index(tokens, first, last)
    number_end = exponent_at if exponent_at is not None else last + 1
    spec = "".join(t.text for t in tokens[first:number_end] if t.kind == "raw")
    scale = Decimal(1)
    prefix, suffix = [], []
    for i, token in enumerate(tokens):
        if first <= i <= last:
            continue
        if token.kind == "raw" and token.text == "%":
            scale *= 100
        if token.kind == "raw" and token.text == "," and i == last + 1 + _commas_before(tokens, i):
            scale /= 1000  # a trailing comma divides by a thousand and shows nothing
            continue
        text = token.text if token.kind == "lit" or _shown_raw(token) else ""
        (prefix if i < first else suffix).append(text)
    number = _decimal(value) * scale
    if exponent_at is not None:
        digits = _scientific(number, spec, tokens[exponent_at : last + 1])
    else:
        digits = _fixed(number, spec)
    negative = number < 0 and digits.strip("0.,") != ""
    return ("-" if negative else "") + "".join(prefix) + digits + "".join(suffix)


def _commas_before(tokens: tuple[Token, ...], index: int) -> int:
    """How many commas directly precede tokens[index] (for runs of scaling commas)."""
    count = 0
    while index - 1 - count >= 0 and tokens[index - 1 - count].text == ",":
        count += 1
    return count


def _shown_raw(token: Token) -> bool:
    return token.kind == "raw" and token.text not in "@"


def _exponent_index(tokens: tuple[Token, ...], first: int, last: int) -> int | None:
    for i in range(first, last):
        token = tokens[i]
        if token.kind == "raw" and token.text in "Ee" and tokens[i + 1].text in "+-":
            return i
    return None


def _decimal(value: int | float | Decimal) -> Decimal:
    try:
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:
        return Decimal(0)


def _fixed(number: Decimal, spec: str) -> str:
    integer_spec, _, fraction_spec = spec.partition(".")
    has_point = "." in spec
    fraction_places = [c for c in fraction_spec if c in _PLACEHOLDERS]
    rounded = abs(number).quantize(Decimal(1).scaleb(-len(fraction_places)), ROUND_HALF_UP)
    whole, _, fraction = f"{rounded:f}".partition(".")
    fraction = _fraction_digits(fraction, fraction_places)
    integer = _integer_digits(whole, integer_spec)
    return integer + ("." + fraction if has_point else "")


def _integer_digits(whole: str, integer_spec: str) -> str:
    places = [c for c in integer_spec if c in _PLACEHOLDERS]
    thousands = "," in integer_spec.strip(",")
    minimum = places.count("0")
    digits = whole.lstrip("0")
    if len(digits) < minimum:
        digits = digits.rjust(minimum, "0")
    if thousands and digits:
        digits = f"{int(digits):,}"
    padding = places[: max(0, len(places) - len(digits))].count("?")
    return " " * padding + digits


def _fraction_digits(fraction: str, places: list[str]) -> str:
    shown = list(fraction.ljust(len(places), "0"))
    for i in range(len(places) - 1, -1, -1):
        if places[i] == "0" or shown[i] != "0":
            break
        shown[i] = " " if places[i] == "?" else ""
    return "".join(shown)


def _scientific(number: Decimal, spec: str, exponent_tokens: tuple[Token, ...]) -> str:
    integer_spec, _, fraction_spec = spec.partition(".")
    decimals = sum(1 for c in fraction_spec if c in _PLACEHOLDERS)
    sign_shown = exponent_tokens[1].text == "+"
    exponent_width = sum(1 for t in exponent_tokens[2:] if t.text in _PLACEHOLDERS) or 1
    if number == 0:
        mantissa, exponent = Decimal(0), 0
    else:
        exponent = abs(number).adjusted()
        mantissa = abs(number).scaleb(-exponent)
    mantissa = mantissa.quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    if mantissa >= 10:
        mantissa, exponent = (mantissa / 10).quantize(Decimal(1).scaleb(-decimals)), exponent + 1
    whole, _, fraction = f"{mantissa:f}".partition(".")
    fraction_places = [c for c in fraction_spec if c in _PLACEHOLDERS]
    text = _integer_digits(whole, integer_spec or "0")
    if "." in spec:
        text += "." + _fraction_digits(fraction, fraction_places)
    sign = "-" if exponent < 0 else ("+" if sign_shown else "")
    return f"{text}E{sign}{abs(exponent):0{exponent_width}d}"


def _format_text(value: str, fmt: NumberFormat) -> str:
    text_section = next(
        (s for s in fmt.sections if any(t.kind == "raw" and t.text == "@" for t in s.tokens)),
        None,
    )
    if text_section is None:
        return value
    parts = []
    for token in text_section.tokens:
        if token.kind == "lit":
            parts.append(token.text)
        elif token.kind == "raw" and token.text == "@":
            parts.append(value)
    return "".join(parts)


def _iso(value: datetime | date | time | timedelta) -> str:
    if isinstance(value, datetime):
        if value.time() == time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, timedelta):
        return str(value)
    return value.isoformat()
