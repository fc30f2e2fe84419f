"""The hostile-input set: every file the reliability tests and `bench/hostile_memory.py` feed
to drac, written on demand (nothing binary is committed except one 9 KB encrypted PDF fixture
shared with the unit tests), each with the outcome drac must give it.
"""

from __future__ import annotations

import io
import os
import random
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hostile_office import (
    document_xml,
    docx,
    docx_bomb,
    docx_many_entries,
    docx_padded,
    docx_with_body,
)
from hostile_pdf import (
    big_image_pdf,
    empty_password_pdf,
    many_pages_pdf,
    nested_q_pdf,
    page_tree_loop_pdf,
    shared_form_pdf,
    text_bomb_pdf,
)
from hostile_text import comment_bomb, hostile_text
from hostile_zip import RawEntry, deflated, zip_bytes
from PIL import Image

ENCRYPTED_PDF = Path(__file__).parents[1] / "unit" / "documents" / "data" / "encrypted.pdf"
_MIB = 1024 * 1024


@dataclass(frozen=True)
class Hostile:
    """One input: how to write it, and what drac must make of it."""

    label: str
    filename: bytes
    """The file name on disk, as bytes: some are not UTF-8."""
    content: Callable[[], bytes] | None
    status: str
    """INDEXED, PARTIAL or FAILED."""
    reason: str = ""
    """A regular expression the FAILED reason (or, when not FAILED, a warning) must match."""
    libreoffice: bool = False
    sparse_bytes: int = 0
    """Instead of content: a sparse file of this size (no disk or memory spent writing it)."""

    def write(self, folder: Path) -> Path:
        """Write the file into folder and return its path."""
        path = Path(os.fsdecode(os.path.join(os.fsencode(folder), self.filename)))
        if self.sparse_bytes:
            with path.open("wb") as file:
                file.truncate(self.sparse_bytes)
        else:
            assert self.content is not None
            path.write_bytes(self.content())
        return path

    @property
    def shown_name(self) -> str:
        """The file name as drac shows it (U+FFFD for bytes that are not UTF-8)."""
        return self.filename.decode("utf-8", "replace")


def _text(family: str, size: int = 100_000) -> Callable[[], bytes]:
    return lambda: hostile_text(family, size).encode()


def _junk(size: int, seed: int = 7) -> Callable[[], bytes]:
    return lambda: random.Random(seed).randbytes(size)


def _good_pdf() -> bytes:
    return many_pages_pdf(1, "A good PDF about warranty claims and service intervals")


def _truncated(make: Callable[[], bytes], keep: float = 0.5) -> Callable[[], bytes]:
    def cut() -> bytes:
        data = make()
        return data[: int(len(data) * keep)]

    return cut


def _scan_pdf() -> bytes:
    buffer = io.BytesIO()
    Image.new("L", (850, 1100), 255).save(buffer, "PDF", resolution=100)
    return buffer.getvalue()


def _png_bomb(side: int = 40_000) -> bytes:
    """A PNG declaring side x side 1-bit pixels: its rows of zeros deflate about 1,000:1."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        checksum = struct.pack(">L", zlib.crc32(kind + body))
        return struct.pack(">L", len(body)) + kind + body + checksum

    row = b"\0" * (1 + side // 8)  # filter byte, then the row's bits
    compressor = zlib.compressobj(9)
    rows = b"".join(compressor.compress(row) for _ in range(side)) + compressor.flush()
    header = struct.pack(">2L5B", side, side, 1, 0, 0, 0, 0)
    chunks = chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + chunks


def _zip_with_entry(name: str) -> bytes:
    return zip_bytes([deflated(b"x", name)])


def _encrypted_member_docx() -> bytes:
    secret = RawEntry("word/secret.bin", b"\x00" * 12, 0, 0, flags=0x1)
    return docx(["Visible text."], [secret])


def _broken_xml_docx() -> bytes:
    xml = document_xml(["Text after broken markup."]).replace("<w:body>", "<w:body><<<&")
    return docx_with_body(xml.encode())


def _html_comment_bomb() -> bytes:
    html = "<html><body><h1>Page</h1><p>HTML behind forty comments.</p></body></html>"
    return (comment_bomb(40).replace("# Title\n\nSome text.\n", "") + html).encode()


HOSTILE_SET: tuple[Hostile, ...] = (
    # pathological text
    Hostile("Markdown, 40 leading comments (the reported comment bomb)", b"comment-bomb.md",
            lambda: comment_bomb(40).encode(), "INDEXED"),
    Hostile("Markdown, 5,000 leading comments", b"comment-bomb-5000.md",
            lambda: comment_bomb(5000).encode(), "INDEXED"),
    Hostile("Markdown, 100 KB of unclosed comments", b"unclosed-comments.md",
            _text("unclosed comments"), "INDEXED"),
    Hostile("Markdown, 100 KB of unclosed page markers", b"unclosed-markers.md",
            _text("unclosed page markers"), "INDEXED"),
    Hostile("Markdown, page marker with 5,000 digits", b"huge-page-number.md",
            _text("page marker with 5,000 digits"), "INDEXED"),
    Hostile("Markdown, code fence then 100 KB of blank lines", b"fence-blank-lines.md",
            _text("fence then blank lines", 20_000), "INDEXED"),
    Hostile("Markdown, 100 KB of open brackets", b"brackets.md", _text("open brackets"),
            "INDEXED"),
    Hostile("Markdown, 100 KB of unclosed links", b"links.md", _text("unclosed links"), "INDEXED"),
    Hostile("Markdown, blockquote nested 100,000 deep", b"deep-quote.md",
            _text("deep blockquote"), "INDEXED"),
    Hostile("Markdown, list nested 400 deep", b"deep-list.md", _text("deep list indentation"),
            "INDEXED"),
    Hostile("Markdown, a table 12,500 columns wide", b"wide-table.md", _text("wide table"),
            "INDEXED"),
    Hostile("text, one 2 MB line", b"huge-line.txt", _text("one huge line", 2 * _MIB), "INDEXED"),
    Hostile("text, one 1 MB word", b"huge-word.txt", _text("one huge word", _MIB), "INDEXED"),
    Hostile("CSV-like text, 50,000 rows", b"rows.txt", lambda: b"id,name,value\n" +
            b"".join(b"%d,item %d,%d\n" % (i, i, i * 7 % 1000) for i in range(50_000)), "INDEXED"),
    Hostile("text, 4 MB of blank lines", b"blank-lines.txt", _text("blank lines", 4 * _MIB),
            "INDEXED"),
    Hostile("empty file", b"empty.md", lambda: b"", "FAILED", r"empty file \(0 bytes\)"),
    Hostile("only whitespace", b"blank.txt", lambda: b" \n\t\n" * 1000, "FAILED",
            "only whitespace"),
    Hostile("UTF-16 text", b"utf16.txt", lambda: "Hello".encode("utf-16"), "FAILED", "UTF-16"),
    Hostile("text with NUL bytes", b"nul.txt", lambda: b"text\x00" * 100, "FAILED",
            "binary content"),
    # binary junk under document names
    Hostile("random bytes named .pdf", b"junk.pdf", _junk(100_000), "FAILED",
            "not a PDF, Office, HTML or image"),
    Hostile("random bytes named .docx", b"junk.docx", _junk(100_000, 8), "FAILED",
            "not a PDF, Office, HTML or image"),
    Hostile("random bytes named .md", b"junk.md", _junk(100_000, 9), "FAILED",
            "not a PDF, Office, HTML or image"),
    Hostile("ELF executable named .pdf", b"program.pdf", lambda: b"\x7fELF" + bytes(1000),
            "FAILED", "ELF executable"),
    # HTML
    Hostile("HTML, 40 comments before <html>", b"comment-bomb.html", _html_comment_bomb,
            "INDEXED", libreoffice=True),
    # office containers
    Hostile("DOCX, honest", b"good.docx", lambda: docx(["Honest document text."]), "INDEXED",
            libreoffice=True),
    Hostile("DOCX, body inflating to 1.9 GB (2 MB file)", b"bomb.docx", lambda: docx_bomb(1900),
            "FAILED", r"inflate 1,\d{3}:1 \(to 1,900 MiB\)"),
    Hostile("DOCX, body declaring 4 KiB but inflating to 1.9 GB", b"liar.docx",
            lambda: docx_bomb(1900, declared_size=4096), "FAILED",
            "declares 4,096 bytes but inflates to more"),
    Hostile("DOCX, unreferenced 50 MiB member of zeros", b"padded.docx",
            lambda: docx_padded(50), "FAILED", "more than the 100:1"),
    Hostile("DOCX, 50,000 members", b"many-members.docx", lambda: docx_many_entries(50_000),
            "FAILED", "50,003 members, more than the 10,000"),
    Hostile("DOCX, encrypted member", b"encrypted-member.docx", _encrypted_member_docx,
            "FAILED", "is encrypted"),
    Hostile("DOCX, truncated to half", b"truncated.docx",
            _truncated(lambda: docx_padded(1), 0.5), "FAILED", "corrupt ZIP"),
    Hostile("DOCX, broken XML body", b"broken-xml.docx", _broken_xml_docx, "FAILED",
            "LibreOffice|no text content|not well-formed", libreoffice=True),
    Hostile("zip named .docx holding a member named [/]", b"markup-member.docx",
            lambda: _zip_with_entry("[/]"), "FAILED", r"it holds \[/\]"),
    Hostile("OLE file (legacy or password-protected Office)", b"protected.docx",
            lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(4096), "FAILED",
            "OLE compound file"),
    # PDFs
    Hostile("PDF, honest", b"good.pdf", _good_pdf, "INDEXED"),
    Hostile("PDF, encrypted", b"encrypted.pdf", ENCRYPTED_PDF.read_bytes, "FAILED",
            "password"),
    Hostile("PDF, header then junk", b"corrupt.pdf", lambda: b"%PDF-1.7\n" + _junk(50_000)(),
            "FAILED", "corrupt or unreadable PDF"),
    Hostile("PDF, truncated to half", b"truncated.pdf",
            _truncated(lambda: many_pages_pdf(200, "cut here")), "FAILED",
            "corrupt or unreadable PDF"),
    Hostile("PDF, 3,000 tiny pages", b"tiny-pages.pdf",
            lambda: many_pages_pdf(3000, "tiny page"), "INDEXED"),
    Hostile("PDF, 5,001 pages (over the page limit)", b"too-many-pages.pdf",
            lambda: many_pages_pdf(5001, "x"), "FAILED", "more than the 5000 page limit"),
    Hostile("PDF, no pages", b"no-pages.pdf", lambda: many_pages_pdf(0), "FAILED",
            "no pages"),
    Hostile("PDF, image only (scan)", b"scan.pdf", _scan_pdf, "PARTIAL",
            "--model bedrock|openai"),
    # PDF amplification (issue 16): each fails alone, or is indexed within the limits
    Hostile("PDF, one page showing 100,000 x 1,000 letters (213 KB)", b"text-bomb.pdf",
            lambda: text_bomb_pdf(100_000), "FAILED", "100,000 content objects"),
    Hostile("PDF, one page showing 20,000 x 1,000 letters (43 KB)", b"text-bomb-small.pdf",
            lambda: text_bomb_pdf(20_000), "FAILED",
            "exceeded the 2 GiB memory limit while reading page 1"),
    Hostile("PDF, 2,000 pages drawing one 5,000-character form", b"shared-form.pdf",
            shared_form_pdf, "FAILED", "more than 2,000,000 characters"),
    Hostile("PDF, 10 million nested q operators (20 KB)", b"nested-q.pdf", nested_q_pdf,
            "FAILED", "empty|no text"),
    Hostile("PDF, 20 pages sharing one 15,000 x 15,000 image", b"big-image.pdf",
            lambda: big_image_pdf(15_000, pages=20), "PARTIAL", "no text layer"),
    Hostile("PDF, encrypted with an empty user password", b"empty-password.pdf",
            empty_password_pdf, "INDEXED", "encrypted with an empty user password"),
    Hostile("PDF, page tree that contains itself", b"page-tree-loop.pdf", page_tree_loop_pdf,
            "FAILED", "page 1 cannot be read"),
    # images
    Hostile("PNG declaring 40,000 x 40,000 px", b"bomb.png", _png_bomb, "FAILED",
            "pixel limit|decompression bomb"),
    # names
    Hostile("file name that is not UTF-8", b"caf\xe9 notes.md", lambda: b"# Caf\n\nBody.\n",
            "INDEXED"),
    Hostile("file name with Rich markup", b"[bold]report[red].md",
            lambda: b"# Report\n\nText with [/] and [red]markup[/red].\n", "INDEXED"),
    # size
    Hostile("2 GB file (sparse)", b"huge.pdf", None, "FAILED", "more than the 500 MiB limit",
            sparse_bytes=2 * 1024**3),
)  # fmt: skip
"""Every hostile input, in the order RELIABILITY.md lists them."""


def write_set(folder: Path, inputs: tuple[Hostile, ...] = HOSTILE_SET) -> dict[str, Hostile]:
    """Write the inputs into folder; map each file name as drac shows it to its input."""
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, Hostile] = {}
    for item in inputs:
        item.write(folder)
        written[item.shown_name] = item
    return written
