"""A small DOCX with paragraph styles and numbering, written at test time (no Office library)."""

from __future__ import annotations

from xml.sax.saxutils import escape

from file_table_fixtures import make_docx

_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def styled(text: str, style: str = "", numbering: tuple[int, int] | None = None,
           bold: str = "") -> str:  # fmt: skip
    """A paragraph of `style` (an id of `STYLES`), in list `numbering` (numId, ilvl), whose
    text is `bold` (a bold run) followed by `text`."""
    properties = f'<w:pStyle w:val="{style}"/>' if style else ""
    if numbering is not None:
        properties += (f'<w:numPr><w:ilvl w:val="{numbering[1]}"/>'
                       f'<w:numId w:val="{numbering[0]}"/></w:numPr>')  # fmt: skip
    runs = f'<w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">{escape(bold)}</w:t></w:r>'
    runs = (runs if bold else "") + f'<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r>'
    return f"<w:p><w:pPr>{properties}</w:pPr>{runs}</w:p>"


def _style(style_id: str, name: str, extra: str = "") -> str:
    return (f'<w:style w:type="paragraph" w:styleId="{style_id}"><w:name w:val="{name}"/>'
            f"{extra}</w:style>")  # fmt: skip


STYLES = (
    f'<?xml version="1.0" encoding="UTF-8"?><w:styles {_W}>'
    + _style("Normal", "Normal")
    + _style("Title", "Title", '<w:basedOn w:val="Normal"/>')
    + _style("Heading1", "heading 1", '<w:basedOn w:val="Normal"/>')
    + _style("Heading2", "Heading 2", '<w:basedOn w:val="Normal"/>')
    + _style("Chapter", "Chapter", '<w:pPr><w:outlineLvl w:val="2"/></w:pPr>')
    + _style("Aside", "Aside", '<w:basedOn w:val="Chapter"/>')  # a heading by inheritance
    + _style("Bulleted", "List Bullet", '<w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr>')
    + "</w:styles>"
)
"""Title, Heading 1 and 2 by name, a style with an outline level (and one based on it), and a
list style whose paragraphs are bullets."""


def _level(ilvl: int, fmt: str) -> str:
    return (f'<w:lvl w:ilvl="{ilvl}"><w:start w:val="1"/><w:numFmt w:val="{fmt}"/>'
            f'<w:lvlText w:val="%{ilvl + 1}."/></w:lvl>')  # fmt: skip


NUMBERING = (
    f'<?xml version="1.0" encoding="UTF-8"?><w:numbering {_W}>'
    f'<w:abstractNum w:abstractNumId="0">{_level(0, "bullet")}{_level(1, "bullet")}'
    "</w:abstractNum>"
    f'<w:abstractNum w:abstractNumId="1">{_level(0, "decimal")}{_level(1, "lowerLetter")}'
    "</w:abstractNum>"
    '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
    '<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>'
    "</w:numbering>"
)
"""List 1 is bullets (two levels), list 2 numbers (1., 2., ... and a., b., below)."""


def make_styled_docx(body: str, styles: str = STYLES, numbering: str = NUMBERING) -> bytes:
    """A DOCX of `body` with `styles.xml` and `numbering.xml`."""
    return make_docx(body, {"word/styles.xml": styles, "word/numbering.xml": numbering})
