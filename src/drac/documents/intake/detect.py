"""Detect a document's format from its bytes; the file name is only a hint to compare with."""

from __future__ import annotations

import io
import re
import zipfile
from enum import StrEnum
from pathlib import PurePath

from pydantic import BaseModel, ConfigDict

from drac.documents.intake.archive import read_directory
from drac.documents.intake.delimited import is_single_column, looks_like_tsv, sniff_delimiter
from drac.documents.intake.ole import OLE_MAGIC, root_stream_names
from drac.errors import DocumentError


class DocumentFormat(StrEnum):
    """Formats drac accepts."""

    PDF = "pdf"
    DOCX = "docx"
    PPTX = "pptx"
    XLSX = "xlsx"
    XLS = "xls"
    ODS = "ods"
    CSV = "csv"
    TSV = "tsv"
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
        """True for formats LibreOffice turns into PDF (spreadsheets too: `drac render` shows
        them, though ingest reads them as tables)."""
        return self in (
            DocumentFormat.DOCX,
            DocumentFormat.PPTX,
            DocumentFormat.XLSX,
            DocumentFormat.XLS,
            DocumentFormat.ODS,
            DocumentFormat.CSV,
            DocumentFormat.TSV,
            DocumentFormat.HTML,
        )

    @property
    def is_zip_container(self) -> bool:
        """True for formats stored as a ZIP container (checked for bombs before reading)."""
        return self in (
            DocumentFormat.DOCX,
            DocumentFormat.PPTX,
            DocumentFormat.XLSX,
            DocumentFormat.ODS,
        )

    @property
    def is_spreadsheet(self) -> bool:
        """True for formats read as tables straight to Markdown (no rendering, no conversion)."""
        return self in _SPREADSHEETS

    @property
    def is_image(self) -> bool:
        """True for raster image formats (scans)."""
        return self in (DocumentFormat.PNG, DocumentFormat.JPEG, DocumentFormat.TIFF)


_SPREADSHEETS = frozenset(
    {
        DocumentFormat.XLSX,
        DocumentFormat.XLS,
        DocumentFormat.ODS,
        DocumentFormat.CSV,
        DocumentFormat.TSV,
    }
)


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
    ".xls": DocumentFormat.XLS,
    ".ods": DocumentFormat.ODS,
    ".csv": DocumentFormat.CSV,
    ".tsv": DocumentFormat.TSV,
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
    if claimed in text_like and detected in text_like:
        return True
    # Excel's "Text (Tab delimited)" export is named .txt
    return claimed is DocumentFormat.TEXT and detected is DocumentFormat.TSV


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
    if head.startswith(OLE_MAGIC):
        return _sniff_ole(data)
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


def _sniff_ole(data: bytes) -> DocumentFormat:
    names = root_stream_names(data)
    # BIFF8 (Excel 97-2003) keeps its workbook in "Workbook", BIFF5 (Excel 5/95) in "Book"
    if "Workbook" in names or "Book" in names:
        return DocumentFormat.XLS
    if "EncryptedPackage" in names:
        raise DocumentError(
            "unsupported format: password-protected Office file; save it without a password"
        )
    raise DocumentError(
        "unsupported format: OLE compound file (legacy .doc/.ppt or a password-protected "
        "Office file); save it as DOCX, PPTX, XLSX or PDF without a password"
    )


_ODF_SPREADSHEET = "application/vnd.oasis.opendocument.spreadsheet"
_ODF_KINDS = {
    "application/vnd.oasis.opendocument.text": "OpenDocument text (ODT); save it as DOCX or PDF",
    "application/vnd.oasis.opendocument.presentation": (
        "OpenDocument presentation (ODP); save it as PPTX or PDF"
    ),
}


def _sniff_zip(data: bytes) -> DocumentFormat:
    # Only the directory's size is checked here; members' sizes and ratios are checked before
    # LibreOffice or the spreadsheet reader sees them, so a refused DOCX is still known as one.
    names = {member.filename for member in read_directory(data)}
    mimetype = ""
    if "mimetype" in names:
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                mimetype = _odf_mimetype(archive)
        except (zipfile.BadZipFile, ValueError, OSError) as exc:
            raise DocumentError(f"corrupt ZIP container (Office file?): {exc}") from exc
    for part, fmt in _OOXML_PARTS:
        if part in names:
            return fmt
    if mimetype == _ODF_SPREADSHEET or mimetype.startswith(_ODF_SPREADSHEET + "-"):
        return DocumentFormat.ODS  # the "-template" variant (.ots) reads the same way
    if "mimetype" in names:
        kind = next(
            (reason for prefix, reason in _ODF_KINDS.items() if mimetype.startswith(prefix)),
            f"OpenDocument file ({mimetype or 'unknown kind'}); save it as DOCX, PPTX, XLSX, "
            "ODS or PDF",
        )
        raise DocumentError(f"unsupported format: {kind}")
    sample = ", ".join(sorted(names)[:5]) or "no files"
    raise DocumentError(
        "ZIP archive that is not a DOCX, PPTX or XLSX (none of word/document.xml, "
        f"ppt/presentation.xml, xl/workbook.xml; it holds {sample})"
    )


def _odf_mimetype(archive: zipfile.ZipFile) -> str:
    """The OpenDocument kind, which the "mimetype" member names (it is a few dozen bytes)."""
    with archive.open("mimetype") as member:
        return member.read(200).decode("ascii", "replace").strip()


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
    delimited = _sniff_delimited(text, claimed)
    if delimited is not None:
        return delimited
    if claimed is DocumentFormat.MARKDOWN or _MARKDOWN_HINT.search(text[:20000]):
        return DocumentFormat.MARKDOWN
    return DocumentFormat.TEXT


def _sniff_delimited(text: str, claimed: DocumentFormat | None) -> DocumentFormat | None:
    """CSV or TSV when the name says so and the content parses as one; TSV also when a text
    file without such a name is plainly tab-separated data."""
    if claimed in (DocumentFormat.CSV, DocumentFormat.TSV):
        if sniff_delimiter(text) is not None or is_single_column(text):
            return claimed
        return None
    if claimed is not DocumentFormat.MARKDOWN and looks_like_tsv(text):
        return DocumentFormat.TSV
    return None


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
