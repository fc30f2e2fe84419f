"""Where `normalise` finds a PDF converted ahead of it: the local runtime converts the office
documents of one run in batches (`office_batch`) and serves each document its own PDF.

    with served(lookup):        # in the thread converting one document
        normalise(data, fmt)    # asks lookup(data, fmt) first; None: converts it alone

A context variable: each thread sees only the lookup of the document it works for.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

from drac.documents.intake.detect import DocumentFormat


class Converted(NamedTuple):
    """What LibreOffice wrote, and the warnings for the document (references removed)."""

    data: bytes
    warnings: list[str]


Lookup = Callable[[bytes, DocumentFormat], Converted | None]
"""The document's PDF converted ahead, when these are the bytes it was converted from."""

_LOOKUP: contextvars.ContextVar[Lookup | None] = contextvars.ContextVar(
    "drac_converted_ahead", default=None
)


def converted_ahead(data: bytes, fmt: DocumentFormat) -> Converted | None:
    """The PDF converted ahead for this document in this thread (None: convert it alone)."""
    lookup = _LOOKUP.get()
    return lookup(data, fmt) if lookup is not None else None


@contextmanager
def served(lookup: Lookup | None) -> Iterator[None]:
    """Have `normalise` ask `lookup` first, in this thread, inside the block."""
    token = _LOOKUP.set(lookup)
    try:
        yield
    finally:
        _LOOKUP.reset(token)
