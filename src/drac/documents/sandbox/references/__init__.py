"""Remove every reference to something outside a document before LibreOffice opens it.

LibreOffice follows what a document points at while it converts: a linked OLE object reads
the file or URL it names into the page, a linked image, stylesheet or frame is fetched, a Word
field includes another file. Each is a way for a document to read the machine or reach the
network, so every such reference is taken out here, in pure Python, and only the cleaned
copy is given to LibreOffice:

- ZIP packages (DOCX, PPTX, XLSX, ODS, and packages embedded in them; `packages`): parts
  pointing outside the package, OLE link elements, Word field codes that include or link
  other files (their cached result stays), `altChunk` imports with their parts, VML image
  sources, ODF `xlink:href` outside the package, DDE links, formulas that could read other
  files or URLs (`formulas`), `xml:base`, in the transitional and strict OOXML namespaces
  (`xml_parts`, `xml_rules`). Hyperlinks keep their text.
- HTML (`pages`): written again from a linear parse (`html_tokens`), with every resource URL
  (images, srcset, stylesheets, CSS `url()` and `@import`, backgrounds, frames, objects,
  embeds, base, meta refresh, SVG `href`, media) and every script removed; links keep their
  text, `data:` raster images stay.

XML is parsed with expat, refusing any DTD (so no entity can expand) and any encoding but
UTF-8; parts are edited in place, so an honest part's bytes are unchanged but for what is
removed. Members are rewritten one at a time, within the limits of `documents/intake/archive.py`.

The sanitizer parses untrusted input, so drac runs it as every other such parser:
`remove_external_references` calls it in a contained worker (`documents/containment`) under
`SANITIZER_LIMITS`; past them the document fails alone, with the reason named.
"""

from __future__ import annotations

import io
from collections import Counter
from typing import Any, BinaryIO

from drac.documents.intake.archive import DEFAULT_LIMITS, ArchiveLimits
from drac.documents.sandbox.containment import GIB, Limits, contained_call, in_worker
from drac.documents.sandbox.containment.tasks import contained_task
from drac.documents.sandbox.references.kinds import (
    EXTERNAL_DATA,
    FIELD,
    FRAME,
    HYPERLINK,
    IMAGE_LINK,
    LINKED_DOCUMENT,
    LINKED_OBJECT,
    OTHER,
    SCRIPT,
    STYLESHEET,
    removal_warning,
)
from drac.documents.sandbox.references.packages import clean_package
from drac.documents.sandbox.references.pages import Cleaned, clean_html
from drac.documents.sandbox.references.targets import is_raster_data, points_outside

__all__ = [
    "EXTERNAL_DATA",
    "FIELD",
    "FRAME",
    "HYPERLINK",
    "IMAGE_LINK",
    "LINKED_DOCUMENT",
    "LINKED_OBJECT",
    "OTHER",
    "SANITIZER_LIMITS",
    "SCRIPT",
    "STYLESHEET",
    "Cleaned",
    "cleaned_here",
    "is_raster_data",
    "points_outside",
    "removal_warning",
    "remove_external_references",
    "strip_external_references",
    "write_without_external_references",
]

_PACKAGE_SUFFIXES = frozenset({".docx", ".pptx", ".xlsx", ".ods", ".odt", ".odp"})
_HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})

SANITIZER_LIMITS = Limits(
    memory_bytes=4 * GIB,
    cpu_s=120.0,
    step_cpu_s=120.0,
    wall_s=300.0,
    preload=("drac.documents.sandbox.references",),
)
"""What removing a document's external references may use: the corpus' files take at most
0.14 s (a package is read and written again whole in the worker, so a 500 MiB file, the
largest accepted, needs about three times its size of address space)."""


def remove_external_references(data: bytes, suffix: str) -> Cleaned:
    """`strip_external_references` run in a contained worker under `SANITIZER_LIMITS`
    (in this process when it already is one). Formats with nothing to follow come back as
    they are without a worker. DocumentError names the reason the document is refused:
    what the sanitizer could not read, or the limit it went past."""
    if suffix.lower() not in _PACKAGE_SUFFIXES | _HTML_SUFFIXES:
        return Cleaned(data)
    if in_worker():
        return strip_external_references(data, suffix)
    found = contained_call(
        cleaned_here, data, suffix,
        limits=SANITIZER_LIMITS, what="while removing external references",
    )  # fmt: skip
    return Cleaned(found["data"], Counter(found["removed"]))


@contained_task
def cleaned_here(data: bytes, suffix: str) -> dict[str, Any]:
    """`strip_external_references` in this process, as the worker sends it back."""
    cleaned = strip_external_references(data, suffix)
    return {"data": cleaned.data, "removed": dict(+cleaned.removed)}


def strip_external_references(
    data: bytes, suffix: str, limits: ArchiveLimits = DEFAULT_LIMITS
) -> Cleaned:
    """Return `data` (a file LibreOffice reads as `suffix`, e.g. ".pptx") without references
    to anything outside it, with the count of what was removed, in this process.

    Formats with nothing to follow (CSV, TSV) and binary formats this cannot rewrite (XLS)
    come back unchanged. Raises DocumentError when a package or one of its XML parts cannot
    be read safely (damaged, a DTD, not UTF-8, a package hidden behind other bytes):
    LibreOffice must never see what this could not check.
    """
    out = io.BytesIO()
    removed = write_without_external_references(data, suffix, out, limits)
    return Cleaned(out.getvalue(), removed)


def write_without_external_references(
    data: bytes, suffix: str, out: BinaryIO, limits: ArchiveLimits = DEFAULT_LIMITS
) -> Counter[str]:
    """Write `data` without its external references to `out` (a package member by member)
    and return what was removed, by kind, in this process.

    Raises DocumentError as `strip_external_references` does.
    """
    kind = suffix.lower()
    removed: Counter[str] = Counter()
    if kind in _PACKAGE_SUFFIXES:
        clean_package(data, removed, limits, depth=0, out=out)
    elif kind in _HTML_SUFFIXES:
        page = clean_html(data)
        out.write(page.data)
        removed.update(page.removed)
    else:
        out.write(data)
    return removed
