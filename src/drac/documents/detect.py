"""Detect a document's format from its bytes; the file name is only a hint to compare with."""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import PurePath

from pydantic import BaseModel, ConfigDict

from drac.documents.archive import read_directory
from drac.errors import DocumentError


class DocumentFormat(StrEnum):
    """Formats drac accepts."""

    PDF = "pdf"
    DOCX = "docx"
    PPTX = "pptx"
    XLSX = "xlsx"
    HTML = "html"
    MARKDOWN = "markdown"
    TEXT = "text"
    PNG = "png"
    JPEG = "jpeg"
    TIFF = "tiff"

    @property
    def is_text(self) -> bool:
        """True for formats used as Markdown as-is (no rendering, no conversion)."""
        return self in (DocumentFormat.MARKDOWN, DocumentFormat.TEXT)

    @property
    def is_office(self) -> bool:
        """True for formats LibreOffice turns into PDF."""
        return self in (
            DocumentFormat.DOCX,
            DocumentFormat.PPTX,
            DocumentFormat.XLSX,
            DocumentFormat.HTML,
        )

    @property
    def is_image(self) -> bool:
        """True for raster image formats (scans)."""
        return self in (DocumentFormat.PNG, DocumentFormat.JPEG, DocumentFormat.TIFF)


class Detection(BaseModel):
    """The detected format of a file, and a warning when its name disagrees."""

    model_config = ConfigDict(frozen=True)

    format: DocumentFormat
    extension_format: DocumentFormat | None = None
    warning: str | None = None


EXTENSIONS: dict[str, DocumentFormat] = {
    ".pdf": DocumentFormat.PDF,
    ".docx": DocumentFormat.DOCX,
    ".docm": DocumentFormat.DOCX,
    ".pptx": DocumentFormat.PPTX,
    ".pptm": DocumentFormat.PPTX,
    ".xlsx": DocumentFormat.XLSX,
    ".xlsm": DocumentFormat.XLSX,
    ".html": DocumentFormat.HTML,
    ".htm": DocumentFormat.HTML,
    ".xhtml": DocumentFormat.HTML,
    ".md": DocumentFormat.MARKDOWN,
    ".markdown": DocumentFormat.MARKDOWN,
    ".txt": DocumentFormat.TEXT,
    ".text": DocumentFormat.TEXT,
    ".png": DocumentFormat.PNG,
    ".jpg": DocumentFormat.JPEG,
    ".jpeg": DocumentFormat.JPEG,
    ".tif": DocumentFormat.TIFF,
    ".tiff": DocumentFormat.TIFF,
}

_OOXML_PARTS: tuple[tuple[str, DocumentFormat], ...] = (
    ("word/document.xml", DocumentFormat.DOCX),
    ("ppt/presentation.xml", DocumentFormat.PPTX),
    ("xl/workbook.xml", DocumentFormat.XLSX),
)

# Every pattern here runs on untrusted bytes, so none may backtrack more than linearly: no
# nested quantifiers, no `\s*` that can run across lines where only a line's indent is meant.
# Leading comments are skipped by `_skip_prologue` with plain scans: `(?:<!--.*?-->\s*)*`
# tried every way of grouping the comments (25 comments took 22 s).
_SPACE = re.compile(rb"\s*")
_HTML_ROOT = re.compile(rb"<(?:!doctype\s+html|html|head|body)\b", re.IGNORECASE)
_HTML_BLOCK_TAGS = (
    "h1|h2|h3|h4|h5|h6|p|div|table|ul|ol|section|article|header|main|nav|span|title|meta|style"
)
_HTML_FRAGMENT_START = re.compile(
    rb"^\s*<(?:" + _HTML_BLOCK_TAGS.encode() + rb")\b[^>]*>", re.IGNORECASE
)
_HTML_CLOSING_TAG = re.compile(rb"</(?:" + _HTML_BLOCK_TAGS.encode() + rb"|li|td|tr)>", re.I)
_MARKDOWN_HINT = re.compile(
    r"^(?:#{1,6}\s|[ \t]*[-*+]\s|[ \t]*\d+[.)]\s|>\s|```|\|.*\|)", re.MULTILINE
)


def extension_format(filename: str) -> DocumentFormat | None:
    """Return the format a file name's extension claims, or None when unknown."""
    return EXTENSIONS.get(PurePath(filename).suffix.lower())


def detect_format(data: bytes, filename: str = "") -> Detection:
    """Return the format of `data` judged from its content, never from the name alone.

    Raises DocumentError for empty, unsupported or unreadable content.
    """
    if not data:
        raise DocumentError("empty file (0 bytes)")
    claimed = extension_format(filename) if filename else None
    detected = _sniff(data, claimed)
    warning = None
    if claimed is not None and not _compatible(claimed, detected):
        warning = (
            f"file name says {claimed.value} but the content is {detected.value}; "
            f"treated as {detected.value}"
        )
    return Detection(format=detected, extension_format=claimed, warning=warning)


def _compatible(claimed: DocumentFormat, detected: DocumentFormat) -> bool:
    if claimed is detected:
        return True
    text_like = {DocumentFormat.MARKDOWN, DocumentFormat.TEXT}
    return claimed in text_like and detected in text_like


def _sniff(data: bytes, claimed: DocumentFormat | None) -> DocumentFormat:
    head = data[:2048]
    if _is_pdf(head):
        return DocumentFormat.PDF
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return DocumentFormat.PNG
    if head.startswith(b"\xff\xd8\xff"):
        return DocumentFormat.JPEG
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return DocumentFormat.TIFF
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return _sniff_zip(data)
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        raise DocumentError(
            "unsupported format: OLE compound file (legacy .doc/.ppt/.xls or a "
            "password-protected Office file); save it as DOCX, PPTX, XLSX or PDF without a password"
        )
    for magic, name in _OTHER_BINARY:
        if head.startswith(magic):
            raise DocumentError(f"unsupported format: {name}")
    return _sniff_text(data, claimed)


_OTHER_BINARY: tuple[tuple[bytes, str], ...] = (
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"\x1f\x8b", "gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"Rar!", "RAR archive"),
    (b"\x7fELF", "ELF executable"),
    (b"MZ", "Windows executable"),
    (b"{\\rtf", "RTF document; save it as DOCX or PDF"),
    (b"RIFF", "RIFF media file"),
)


def _is_pdf(head: bytes) -> bool:
    """PDF readers accept the %PDF- header anywhere in the first 1,024 bytes after junk."""
    at = head.find(b"%PDF-", 0, 1024)
    if at < 0:
        return False
    prefix = head[:at]
    if not prefix.strip(b"\x00\t\r\n \xef\xbb\xbf"):
        return True
    try:
        prefix.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return b"\x00" in prefix


def _sniff_zip(data: bytes) -> DocumentFormat:
    # Only the directory's size is checked here; members' sizes and ratios are checked before
    # LibreOffice sees them (`normalise_to_pdf`), so a refused DOCX is still known as a DOCX.
    names = {member.filename for member in read_directory(data)}
    for part, fmt in _OOXML_PARTS:
        if part in names:
            return fmt
    if "mimetype" in names:
        raise DocumentError(
            "unsupported format: OpenDocument (ODT/ODP/ODS); save it as DOCX, PPTX, XLSX or PDF"
        )
    sample = ", ".join(sorted(names)[:5]) or "no files"
    raise DocumentError(
        "ZIP archive that is not a DOCX, PPTX or XLSX (none of word/document.xml, "
        f"ppt/presentation.xml, xl/workbook.xml; it holds {sample})"
    )


def _sniff_text(data: bytes, claimed: DocumentFormat | None) -> DocumentFormat:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DocumentError("not valid UTF-8 text (UTF-16 encoded); save it as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            "unsupported content: not a PDF, Office, HTML or image file and not valid "
            f"UTF-8 text (invalid byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from exc
    if "\x00" in text or _control_ratio(text) > 0.01:
        raise DocumentError("not valid UTF-8 text: binary content (control characters)")
    if not text.strip():
        raise DocumentError("empty document (only whitespace)")
    if _looks_like_html(data, claimed):
        return DocumentFormat.HTML
    if claimed is DocumentFormat.MARKDOWN or _MARKDOWN_HINT.search(text[:20000]):
        return DocumentFormat.MARKDOWN
    return DocumentFormat.TEXT


def _control_ratio(text: str) -> float:
    sample = text[:20000]
    controls = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\t\n\r\f")
    return controls / max(1, len(sample))


def _looks_like_html(data: bytes, claimed: DocumentFormat | None) -> bool:
    head = data[:65536].removeprefix(b"\xef\xbb\xbf")
    start = _skip_prologue(head)
    if start is not None and _HTML_ROOT.match(head, start):
        return True
    closing = len(_HTML_CLOSING_TAG.findall(head))
    if _HTML_FRAGMENT_START.match(head) and closing >= 1:
        return True
    return claimed is DocumentFormat.HTML and closing >= 1


def _skip_prologue(head: bytes) -> int | None:
    """Offset after leading whitespace, an XML declaration and comments; None if one is unclosed.

    Each step finds the end of what it skips with one forward scan, so the whole prologue
    costs time linear in its length.
    """
    position = _after_space(head, 0)
    if head.startswith(b"<?xml", position):
        end = head.find(b">", position)
        if end < 0:
            return None
        position = _after_space(head, end + 1)
    while head.startswith(b"<!--", position):
        end = head.find(b"-->", position + 4)
        if end < 0:
            return None
        position = _after_space(head, end + 3)
    return position


def _after_space(data: bytes, position: int) -> int:
    match = _SPACE.match(data, position)
    return match.end() if match else position
