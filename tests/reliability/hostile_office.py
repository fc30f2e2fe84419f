"""Minimal Office Open XML documents, honest or hostile, written without any Office library."""

from __future__ import annotations

from xml.sax.saxutils import escape

from hostile_zip import RawEntry, deflated, filler_entry, zip_bytes

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/'
    'vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Default Extension="bin" ContentType="application/octet-stream"/>'
    '<Override PartName="/word/document.xml" ContentType="application/'
    'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    "</Types>"
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="word/document.xml"/>'
    "</Relationships>"
)


def document_xml(paragraphs: list[str]) -> str:
    """A WordprocessingML body with one paragraph per string."""
    body = "".join(f"<w:p><w:r><w:t>{escape(text)}</w:t></w:r></w:p>" for text in paragraphs)
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        f"<w:body>{body}</w:body></w:document>"
    )


def docx(paragraphs: list[str], extra: list[RawEntry] | None = None) -> bytes:
    """A DOCX LibreOffice opens, with optional extra members."""
    return docx_with_body(document_xml(paragraphs).encode(), extra)


def docx_with_body(xml: bytes, extra: list[RawEntry] | None = None) -> bytes:
    """A DOCX whose word/document.xml is `xml`, whatever it holds."""
    return zip_bytes([*_package(), deflated(xml, "word/document.xml"), *(extra or [])])


def _package() -> list[RawEntry]:
    return [
        deflated(_CONTENT_TYPES.encode(), "[Content_Types].xml"),
        deflated(_RELS.encode(), "_rels/.rels"),
    ]


def docx_bomb(mebibytes: int = 1900, *, declared_size: int | None = None) -> bytes:
    """The issue's DOCX: about 2 MB whose (non-zip64) word/document.xml inflates to
    `mebibytes` MiB of blank space inside a valid body, which LibreOffice parses whole.

    With `declared_size` the headers lie about that size.
    """
    head, tail = document_xml(["A document carrying a bomb.", "\0"]).encode().split(b"\0")
    body = filler_entry(
        "word/document.xml", mebibytes, fill=b" ", prefix=head, suffix=tail,
        declared_size=declared_size,
    )  # fmt: skip
    return zip_bytes([*_package(), body])


def docx_padded(mebibytes: int) -> bytes:
    """A DOCX with an unreferenced member of `mebibytes` MiB of zeros (about 1,000:1)."""
    return docx(["A document with padding."], [filler_entry("word/media/pad.bin", mebibytes)])


def docx_many_entries(count: int = 50_000) -> bytes:
    """A DOCX with `count` tiny members."""
    fillers = [deflated(b"", f"word/media/f{index}.bin") for index in range(count)]
    return docx(["A document with many parts."], fillers)
