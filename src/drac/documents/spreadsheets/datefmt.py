"""Dates, times and durations shown as an Excel date/time format code shows them (English
month and day names; `m` is minutes next to hours or seconds, months elsewhere)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Protocol

_EPOCH = datetime(1899, 12, 30)
_DATE_LETTERS = frozenset("ymdhs")
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


class FormatToken(Protocol):
    """What this module reads of a format token (see `numfmt.Token`)."""

    @property
    def kind(self) -> str: ...

    @property
    def text(self) -> str: ...


def is_date_section(tokens: Sequence[FormatToken]) -> bool:
    """True when a format section formats dates, times or durations."""
    raw = "".join(t.text for t in tokens if t.kind == "raw").lower()
    if "general" in raw:
        return False
    return any(t.kind in ("elapsed", "ampm") for t in tokens) or bool(_DATE_LETTERS & set(raw))


@dataclass(frozen=True)
class DatePattern:
    """A date/time format section, compiled: code units in order ("min" where `m` means
    minutes) and whether hours run on a 12-hour clock."""

    units: tuple[tuple[str, str], ...]
    twelve_hour: bool

    def format(self, value: datetime | date | time | timedelta) -> str:
        """The text of a date, time or duration under this pattern."""
        if isinstance(value, timedelta):
            moment, elapsed = _EPOCH + value, value
        else:
            moment = _as_datetime(value)
            elapsed = moment - _EPOCH
        return "".join(
            _render(kind, text, moment, elapsed, self.twelve_hour) for kind, text in self.units
        )


def date_pattern(tokens: Sequence[FormatToken]) -> DatePattern:
    """Compile a date/time format section (see `is_date_section`)."""
    units = _units(tokens)
    resolved = tuple(
        ("min", text) if kind == "m" and len(text) <= 2 and _is_minutes(i, units) else (kind, text)
        for i, (kind, text) in enumerate(units)
    )
    return DatePattern(resolved, any(kind == "ampm" for kind, _ in units))


def _as_datetime(value: datetime | date | time) -> datetime:
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime.combine(value, time(0))
    return datetime.combine(_EPOCH.date(), value)


def _units(tokens: Sequence[FormatToken]) -> list[tuple[str, str]]:
    """Runs of one code letter ("y", "m", "d", "h", "s", ".0" fractions) and literal text."""
    units: list[tuple[str, str]] = []
    for token in tokens:
        if token.kind != "raw":
            units.append((token.kind, token.text))
            continue
        letter = token.text.lower()
        previous = units[-1] if units else None
        if letter in _DATE_LETTERS and previous and previous[0] == letter:
            units[-1] = (letter, previous[1] + token.text)
        elif letter in _DATE_LETTERS:
            units.append((letter, token.text))
        elif letter == "0" and previous and previous[0] == "frac":
            units[-1] = ("frac", previous[1] + "0")
        elif letter == "0" and previous == ("lit", ".") and len(units) > 1 and units[-2][0] == "s":
            units[-1] = ("frac", "0")  # ss.00: fractions of a second
        else:
            units.append(("lit", token.text))
    return units


def _is_minutes(index: int, units: list[tuple[str, str]]) -> bool:
    codes = [(i, kind, text) for i, (kind, text) in enumerate(units) if kind not in ("lit",)]
    position = next(p for p, (i, _, _) in enumerate(codes) if i == index)
    before = codes[position - 1] if position > 0 else None
    after = codes[position + 1] if position + 1 < len(codes) else None
    if before and (before[1] == "h" or (before[1] == "elapsed" and before[2][0] == "h")):
        return True
    return bool(after and (after[1] == "s" or (after[1] == "elapsed" and after[2][0] == "s")))


def _render(kind: str, text: str, moment: datetime, elapsed: timedelta, twelve_hour: bool) -> str:
    width = len(text)
    if kind == "y":
        return f"{moment.year % 100:02d}" if width <= 2 else f"{moment.year:04d}"
    if kind == "min":
        return f"{moment.minute:0{width}d}"
    if kind == "m":
        return _month(moment.month, width)
    if kind == "d":
        if width <= 2:
            return f"{moment.day:0{width}d}"
        name = _DAYS[moment.weekday()]
        return name[:3] if width == 3 else name
    if kind == "h":
        hour = (moment.hour % 12 or 12) if twelve_hour else moment.hour
        return f"{hour:0{min(width, 2)}d}"
    if kind == "s":
        return f"{moment.second:0{min(width, 2)}d}"
    if kind == "frac":
        digits = text.count("0")
        fraction = f"{moment.microsecond / 1_000_000:.{digits}f}"
        return fraction[1:]  # ".5" from "0.5"
    if kind == "ampm":
        return _ampm(text, moment.hour)
    if kind == "elapsed":
        return _elapsed(text, elapsed)
    return text


def _month(month: int, width: int) -> str:
    name = _MONTHS[month - 1]
    if width <= 2:
        return f"{month:0{width}d}"
    return {3: name[:3], 4: name}.get(width, name[0])


def _ampm(text: str, hour: int) -> str:
    afternoon = hour >= 12
    if text.upper() == "A/P":
        letter = "P" if afternoon else "A"
        return letter if text[0].isupper() else letter.lower()
    marker = "PM" if afternoon else "AM"
    return marker if text[:2].isupper() else marker.lower()


def _elapsed(text: str, elapsed: timedelta) -> str:
    seconds = int(elapsed.total_seconds())
    total = {"h": seconds // 3600, "m": seconds // 60, "s": seconds}[text[0]]
    return f"{total:0{len(text)}d}"
