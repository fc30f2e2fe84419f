"""ZIP packages (DOCX, PPTX, XLSX, ODS and the packages embedded in them), written again
member by member with every part cleaned: XML parts by `xml_parts`, HTML parts by `pages`,
embedded packages recursively; what cannot be checked refuses the document."""

from __future__ import annotations

import io
import re
import zipfile
from collections import Counter
from typing import BinaryIO

from drac.documents.intake.archive import ArchiveLimits, check_archive
from drac.documents.sandbox.references.pages import clean_html
from drac.documents.sandbox.references.xml_parts import XmlCleaner, alt_chunk_parts
from drac.errors import DocumentError

MAX_NESTING = 3
"""Packages embedded in packages (an Excel sheet inside a slide) are cleaned this deep; a
deeper one is refused."""
_LOCAL_HEADER = b"PK\x03\x04"
_END_OF_DIRECTORY = b"PK\x05\x06"
_WIDE_XML = (
    b"\xff\xfe<\x00", b"\xfe\xff\x00<", b"<\x00", b"\x00<",
    b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00", b"\x00\x00\x00<",
)  # fmt: skip
"""How XML in UTF-16 or UTF-32 starts (a byte-order mark or a wide '<')."""
_HTML_START = re.compile(rb"(?i)<(?:!doctype\s+html|html\b)")


def clean_package(
    data: bytes,
    removed: Counter[str],
    limits: ArchiveLimits,
    depth: int,
    out: BinaryIO | None = None,
) -> bytes:
    """The package rewritten without its external references, counted into `removed`
    (written to `out` when given, then b"" is returned)."""
    if depth >= MAX_NESTING:
        raise DocumentError(f"packages nested more than {MAX_NESTING} deep inside the document")
    members = check_archive(data, limits)
    buffer = io.BytesIO()
    sink: BinaryIO = buffer if out is None else out
    try:
        with (
            zipfile.ZipFile(io.BytesIO(data)) as source,
            zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as target,
        ):
            imported = _alt_chunk_parts(source, members)
            for member in members:
                if member.filename.lstrip("/") in imported:
                    continue  # an altChunk's part: removed with its altChunk, counted there
                content = _read_member(source, member)
                if not member.is_dir():
                    content = _clean_member(member.filename, content, removed, limits, depth)
                copy = zipfile.ZipInfo(member.filename, date_time=member.date_time)
                copy.compress_type = member.compress_type
                copy.external_attr = member.external_attr
                target.writestr(copy, content)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        raise DocumentError(f"corrupt ZIP container (Office file?): {exc}") from exc
    return buffer.getvalue()


def _alt_chunk_parts(source: zipfile.ZipFile, members: list[zipfile.ZipInfo]) -> set[str]:
    """The parts Word would import whole through an `altChunk` (HTML, RTF, another
    document): LibreOffice never gets them, so no rule of this format or that has to hold
    for them."""
    found: set[str] = set()
    for member in members:
        if member.filename.endswith(".rels") and not member.is_dir():
            found |= alt_chunk_parts(member.filename, _read_member(source, member))
    return found


def _read_member(source: zipfile.ZipFile, member: zipfile.ZipInfo) -> bytes:
    """The member's bytes, never more than it declares (its size was checked against the
    limits before)."""
    with source.open(member) as stream:
        content = stream.read(member.file_size + 1)
    if len(content) != member.file_size:
        raise DocumentError(f"ZIP member {member.filename!r} does not hold the size it declares")
    return content


def _clean_member(
    name: str, content: bytes, removed: Counter[str], limits: ArchiveLimits, depth: int
) -> bytes:
    if content.startswith(_LOCAL_HEADER):
        return clean_package(content, removed, limits, depth + 1)
    if content.startswith(_WIDE_XML):
        raise DocumentError(f"XML part {name!r} is not UTF-8; Office files write UTF-8")
    text = content.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"<"):
        _refuse_hidden_package(name, content)
        return content  # an image or another binary part: nothing LibreOffice follows in it
    if _HTML_START.match(text[:256]):
        page = clean_html(content)
        removed.update(page.removed)
        return page.data
    return XmlCleaner(name, content, removed).cleaned()


def _refuse_hidden_package(name: str, content: bytes) -> None:
    """Refuse a binary part that holds a ZIP package after other bytes: ZIP readers
    (LibreOffice's among them) find a package by its directory at the end, whatever comes
    before it, and this one could not be cleaned where it sits (an OLE file's stream, junk
    put in front)."""
    if _END_OF_DIRECTORY not in content:
        return
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as hidden:
            if not hidden.infolist():
                return
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError):
        return  # the signature by chance (an image's bytes): no reader opens it
    raise DocumentError(
        f"the part {name!r} holds a ZIP package after other bytes, which could not be cleaned "
        "of external references"
    )
