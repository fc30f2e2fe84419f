"""Small DOCX, PPTX and HTML files holding tables, written at test time (no Office library)."""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import escape

from tests.decks import Slide, make_pptx, slide_xml

_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
_PKG = "http://schemas.openxmlformats.org/package/2006"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_WML = "application/vnd.openxmlformats-officedocument.wordprocessingml"

Rows = list[list[str]]


def docx_paragraph(text: str) -> str:
    """One WordprocessingML paragraph."""
    return f'<w:p><w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r></w:p>'


def docx_table(rows: Rows, header_rows: int = 1) -> str:
    """A `w:tbl` of the rows (the first `header_rows` repeat on each page); a newline in a
    cell's text starts a new paragraph of the cell."""
    grid = "".join('<w:gridCol w:w="3000"/>' for _ in rows[0])
    out = [f"<w:tbl><w:tblPr><w:tblW w:type=\"pct\" w:w=\"5000\"/></w:tblPr><w:tblGrid>{grid}"
           "</w:tblGrid>"]  # fmt: skip
    for index, row in enumerate(rows):
        props = '<w:trPr><w:tblHeader w:val="true"/></w:trPr>' if index < header_rows else ""
        cells = "".join(
            "<w:tc><w:tcPr/>" + "".join(docx_paragraph(p) for p in cell.split("\n")) + "</w:tc>"
            for cell in row
        )
        out.append(f"<w:tr>{props}{cells}</w:tr>")
    out.append("</w:tbl>")
    return "".join(out)


def make_docx(body: str, parts: dict[str, str] | None = None) -> bytes:
    """A DOCX LibreOffice opens whose body is `body` (paragraphs and tables), with any other
    `parts` (name -> XML: styles, numbering) beside it."""
    files = {
        "[Content_Types].xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="{_PKG}/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/word/document.xml" ContentType="{_WML}.document.main+xml"/>'
            "</Types>"
        ),
        "_rels/.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PKG}/relationships">'
            f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="word/document.xml"/>'
            "</Relationships>"
        ),
        "word/document.xml": (
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {_W}>'
            f'<w:body>{body}<w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr></w:body>'
            "</w:document>"
        ),
    }
    return _zip({**files, **(parts or {})})


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def pptx_table(rows: Rows) -> str:
    """A graphic frame holding an `a:tbl` of the rows (the first is the header)."""
    grid = "".join('<a:gridCol w="2000000"/>' for _ in rows[0])
    body = "".join(
        '<a:tr h="370840">'
        + "".join(
            "<a:tc><a:txBody><a:bodyPr/><a:lstStyle/>"
            + "".join(f"<a:p><a:r><a:t>{escape(p)}</a:t></a:r></a:p>" for p in cell.split("\n"))
            + "</a:txBody><a:tcPr/></a:tc>"
            for cell in row
        )
        + "</a:tr>"
        for row in rows
    )
    return (
        '<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="9" name="Table"/>'
        "<p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr>"
        '<p:xfrm><a:off x="457200" y="1800000"/><a:ext cx="6000000" cy="1500000"/></p:xfrm>'
        '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table">'
        f'<a:tbl><a:tblPr firstRow="1"/><a:tblGrid>{grid}</a:tblGrid>{body}</a:tbl>'
        "</a:graphicData></a:graphic></p:graphicFrame>"
    )


def make_pptx_with_tables(slides: list[tuple[Slide, Rows | None]]) -> bytes:
    """A deck whose slides each may hold one table under their title."""
    parts = {}
    for number, (slide, rows) in enumerate(slides, start=1):
        if rows is not None:
            xml = slide_xml(slide).replace("</p:spTree>", pptx_table(rows) + "</p:spTree>")
            parts[f"ppt/slides/slide{number}.xml"] = xml
    return make_pptx([slide for slide, _ in slides], parts)


def html_table(rows: Rows) -> str:
    """A `<table>` with the first row in `<thead>` as `<th>` cells; newlines become `<br>`."""

    def cell(tag: str, text: str) -> str:
        return f"<{tag}>" + "<br>".join(escape(p) for p in text.split("\n")) + f"</{tag}>"

    head = "<tr>" + "".join(cell("th", text) for text in rows[0]) + "</tr>"
    body = "".join("<tr>" + "".join(cell("td", t) for t in row) + "</tr>" for row in rows[1:])
    return f"<table><thead>{head}</thead><tbody>{body}</tbody></table>"


def make_html(body: str) -> bytes:
    """An HTML page of `body`."""
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title></head><body>{body}</body></html>".encode()  # noqa: E501
