"""Repetition loops in a vision model's answer: the same line or phrase written over and over
until the token cap, the failure small and quantised vision models show most."""

from __future__ import annotations

MIN_LOOP_CHARS = 200
"""A repeated stretch shorter than this is text (a short refrain, a few table rules)."""
MIN_REPEATS = 4
MAX_PERIOD = 400
"""The longest repeated unit looked for: a line or a short paragraph."""


def loop_start(text: str) -> int | None:
    """Where a repetition loop running to the end of `text` starts, or None.

    A loop is a unit of 1 to MAX_PERIOD characters holding a letter or digit, repeated at
    least MIN_REPEATS times back to back at the end of the answer, over at least
    MIN_LOOP_CHARS characters (a cut in the middle of a unit counts). The start returned is
    where the first repetition ends: the unit is kept once, its repetitions cut.
    """
    end = len(text)
    for period in range(1, min(MAX_PERIOD, end // MIN_REPEATS) + 1):
        run = 0  # characters at the end equal to the character `period` before them
        index = end - 1
        while index >= period and text[index] == text[index - period]:
            run += 1
            index -= 1
        if run < max(MIN_LOOP_CHARS, (MIN_REPEATS - 1) * period):
            continue
        first = end - run - period  # the loop's first unit starts here
        unit = text[first : first + period]
        if any(char.isalnum() for char in unit):
            return first + period
    return None
