"""Cell values shown as the sheet shows them: Excel number format codes, the common subset.

Supported: General, fixed decimals (0.00), optional digits (#), thousands separators
(#,##0), scaling by trailing commas, percentages, scientific (0.00E+00), literal text
("..." and \\x), currency brackets ([$€-407]), colours, up to four sections
(positive;negative;zero;text), dates and times (see `datefmt`). Anything else (fractions,
conditional sections) falls back to General, which never loses the value.

A format code is compiled once (cached), so a sheet of a million cells in a few formats
pays for parsing a few times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache

from drac.documents.spreadsheets.datefmt import DatePattern, date_pattern, is_date_section

Number = int | float | Decimal
_PLACEHOLDERS = "0#?"
# openpyxl names built-in format 14 by its code "mm-dd-yy"; Excel shows it in the system's
# short date format, which for en-US is m/d/yyyy (likewise 22, the short date and time).
_LOCALE_BUILTINS = {"mm-dd-yy": "m/d/yyyy", "m/d/yy h:mm": "m/d/yyyy h:mm"}


@dataclass(frozen=True, slots=True)
class Token:
    """A piece of a format section: raw code, literal text, an elapsed unit, or AM/PM."""

    kind: str  # "raw", "lit", "elapsed", "ampm"
    text: str


@dataclass(frozen=True, slots=True)
class _Digits:
    """How a number section writes its digits."""

    integer_places: str  # the 0 # ? placeholders before the point
    fraction_places: str  # and after it
    has_point: bool
    thousands: bool
    exponent: tuple[bool, int] | None  # (sign always shown, exponent digits) for E+00


@dataclass(frozen=True, slots=True)
class _Section:
    """One ;-separated section, compiled: what it writes around the number and how."""

    kind: str  # "general", "number", "literal", "date", "fallback"
    before: str = ""
    after: str = ""
    scale: Decimal = Decimal(1)
    digits: _Digits | None = None
    date: DatePattern | None = None
    text_template: tuple[Token, ...] | None = None  # a section holding @


@dataclass(frozen=True, slots=True)
class NumberFormat:
    """A compiled number format code."""

    sections: tuple[_Section, ...]
    conditional: bool

    @property
    def is_date(self) -> bool:
        return self.sections[0].kind == "date"


def format_cell(value: object, number_format: str | None = None) -> str:
    """The text a spreadsheet shows for `value` under `number_format` (General when None)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    fmt = parse_format(number_format or "General")
    if isinstance(value, str):
        return _format_text(value, fmt)
    if isinstance(value, datetime | date | time | timedelta):
        pattern = fmt.sections[0].date
        return pattern.format(value) if pattern else _iso(value)
    if isinstance(value, int | float | Decimal):
        return format_number(value, fmt)
    return str(value)


@lru_cache(maxsize=1024)
def parse_format(code: str) -> NumberFormat:
    """Compile a format code (cached: sheets reuse a few codes)."""
    code = _LOCALE_BUILTINS.get(code, code)
    sections: list[tuple[Token, ...]] = []
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
            sections.append(tuple(tokens))
            tokens = []
            i += 1
        else:
            tokens.append(Token("raw", char))
            i += 1
    sections.append(tuple(tokens))
    return NumberFormat(tuple(_compile(section) for section in sections), conditional)


def _bracket(content: str) -> list[Token]:
    lowered = content.lower()
    if lowered and len(set(lowered)) == 1 and lowered[0] in "hms":
        return [Token("elapsed", lowered)]  # [h], [mm], [ss]: elapsed time
    if content.startswith("$"):
        symbol = content[1:].split("-", 1)[0]
        return [Token("lit", symbol)] if symbol else []
    return []  # a colour, a condition or a locale: no text


def _compile(tokens: tuple[Token, ...]) -> _Section:
    raw = "".join(t.text for t in tokens if t.kind == "raw")
    template = tokens if "@" in raw else None
    if "general" in raw.lower():
        return _general_section(tokens, template)
    if is_date_section(tokens):
        return _Section("date", date=date_pattern(tokens), text_template=template)
    if "/" in raw:
        return _Section("fallback", text_template=template)  # fractions (# ?/?)
    places = [i for i, t in enumerate(tokens) if t.kind == "raw" and t.text in _PLACEHOLDERS]
    if not places:
        literal = "".join(t.text for t in tokens if t.kind == "lit" or _shown_raw(t))
        return _Section("literal", before=literal, text_template=template)
    return _number_section(tokens, places[0], places[-1], template)


def _general_section(tokens: tuple[Token, ...], template: tuple[Token, ...] | None) -> _Section:
    before: list[str] = []
    after: list[str] = []
    seen, run = False, ""
    for token in tokens:
        if token.kind == "raw":
            run += token.text
            seen = seen or "general" in run.lower()
        elif token.kind == "lit":
            (after if seen else before).append(token.text)
    return _Section("general", "".join(before), "".join(after), text_template=template)


def _number_section(
    tokens: tuple[Token, ...], first: int, last: int, template: tuple[Token, ...] | None
) -> _Section:
    exponent_at = next(
        (
            i
            for i in range(first, last)
            if tokens[i].kind == "raw" and tokens[i].text in "Ee" and tokens[i + 1].text in "+-"
        ),
        None,
    )
    number_end = exponent_at if exponent_at is not None else last + 1
    spec = "".join(t.text for t in tokens[first:number_end] if t.kind == "raw")
    integer_spec, _, fraction_spec = spec.partition(".")
    exponent = None
    if exponent_at is not None:
        width = sum(1 for t in tokens[exponent_at + 2 : last + 1] if t.text in _PLACEHOLDERS)
        exponent = (tokens[exponent_at + 1].text == "+", width or 1)
    scale = Decimal(1)
    before: list[str] = []
    after: list[str] = []
    trailing_commas = True
    for i, token in enumerate(tokens):
        if first <= i <= last:
            continue
        if token.kind == "raw" and token.text == "," and i > last and trailing_commas:
            scale /= 1000  # commas right after the digits divide by a thousand each
            continue
        if i > last:
            trailing_commas = False
        if token.kind == "raw" and token.text == "%":
            scale *= 100
        text = token.text if token.kind == "lit" or _shown_raw(token) else ""
        (before if i < first else after).append(text)
    digits = _Digits(
        integer_places="".join(c for c in integer_spec if c in _PLACEHOLDERS),
        fraction_places="".join(c for c in fraction_spec if c in _PLACEHOLDERS),
        has_point="." in spec,
        thousands="," in integer_spec.strip(","),
        exponent=exponent,
    )
    return _Section("number", "".join(before), "".join(after), scale, digits, None, template)


def _shown_raw(token: Token) -> bool:
    return token.kind == "raw" and token.text != "@"


def format_number(value: Number, fmt: NumberFormat) -> str:
    """A number under a compiled format: the section its sign selects, General as fallback."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    sections = fmt.sections
    if fmt.conditional:
        return format_general(value)
    section, absolute = sections[0], False
    if value < 0 and len(sections) >= 2:
        section, absolute = sections[1], True
    elif value == 0 and len(sections) >= 3:
        section = sections[2]
    if absolute:
        value = -value  # the negative section shows the magnitude
    if section.kind == "general":
        return section.before + format_general(value) + section.after
    if section.kind == "literal":
        return section.before
    if section.kind != "number" or section.digits is None:
        return format_general(value)
    number = _decimal(value) * section.scale
    digits = section.digits
    shown = _scientific(number, digits) if digits.exponent else _fixed(number, digits)
    negative = number < 0 and shown.strip("0., ") != ""
    return ("-" if negative else "") + section.before + shown + section.after


def format_general(value: Number) -> str:
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


def _decimal(value: Number) -> Decimal:
    try:
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:
        return Decimal(0)


def _fixed(number: Decimal, digits: _Digits) -> str:
    places = len(digits.fraction_places)
    rounded = abs(number).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)
    whole, _, fraction = f"{rounded:f}".partition(".")
    text = _integer_digits(whole, digits)
    if digits.has_point:
        text += "." + _fraction_digits(fraction, digits.fraction_places)
    return text


def _integer_digits(whole: str, digits: _Digits) -> str:
    places = digits.integer_places
    shown = whole.lstrip("0").rjust(places.count("0"), "0")
    if digits.thousands and shown:
        shown = f"{int(shown):,}"
    padding = places[: max(0, len(places) - len(shown))].count("?")
    return " " * padding + shown


def _fraction_digits(fraction: str, places: str) -> str:
    shown = list(fraction.ljust(len(places), "0"))
    for i in range(len(places) - 1, -1, -1):
        if places[i] == "0" or shown[i] != "0":
            break
        shown[i] = " " if places[i] == "?" else ""
    return "".join(shown)


def _scientific(number: Decimal, digits: _Digits) -> str:
    assert digits.exponent is not None
    sign_shown, width = digits.exponent
    decimals = len(digits.fraction_places)
    exponent = abs(number).adjusted() if number else 0
    mantissa = abs(number).scaleb(-exponent).quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    if mantissa >= 10:
        mantissa, exponent = (mantissa / 10).quantize(Decimal(1).scaleb(-decimals)), exponent + 1
    whole, _, fraction = f"{mantissa:f}".partition(".")
    text = _integer_digits(whole, digits)
    if digits.has_point:
        text += "." + _fraction_digits(fraction, digits.fraction_places)
    sign = "-" if exponent < 0 else ("+" if sign_shown else "")
    return f"{text}E{sign}{abs(exponent):0{width}d}"


def _format_text(value: str, fmt: NumberFormat) -> str:
    template = next((s.text_template for s in fmt.sections if s.text_template), None)
    if template is None:
        return value
    parts = []
    for token in template:
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
