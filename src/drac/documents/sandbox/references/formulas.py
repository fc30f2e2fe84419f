"""Spreadsheet formulas that could read another file or reach the network.

A formula is judged on its text as the XML parser gives it (entities and CDATA decoded),
whole, whatever its length. It reads outside when it calls a function that fetches or opens
what a string names (WEBSERVICE, FILTERXML, INDIRECT, DDE: the string may be built at run
time, as in `INDIRECT("'file"&CHAR(58)&"///etc/x'#$A1")`, so no check of its arguments
could be complete), or names a URL or an absolute path itself. Such a formula is removed;
the cell keeps the value it was saved with, so the page shows what the author saw.
"""

from __future__ import annotations

import re

_READS_OUTSIDE = re.compile(
    r"(?i)webservice|filterxml|indirect|\bdde(?:auto)?\s*\("
    # a URL: the scheme is matched from the start of its word only, so a long run of
    # letters is scanned once (matching from every letter of it would be quadratic)
    r"|(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:[/\\]"
    r"|'\s*[/\\]"
)


def reads_outside(formula: str) -> bool:
    """True when a formula (any dialect: OOXML, ODF `of:=`) could read another file or
    reach the network when it is calculated."""
    return _READS_OUTSIDE.search(formula) is not None
