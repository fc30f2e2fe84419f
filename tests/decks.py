"""Build small PPTX decks for tests: the minimal package LibreOffice opens (no master needed)."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

_NS = (
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
    'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'
)
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006"
_PML = "application/vnd.openxmlformats-officedocument.presentationml"


@dataclass(frozen=True)
class Para:
    """A body paragraph; `heading` writes it as a sub-heading is written (bold, no bullet,
    space before); `bullet` "char" or "auto" gives it a bullet or an automatic number at
    `level` ("none" says no bullet; "" inherits); `bold` sets its run bold; a newline in
    `text` is a line break (`a:br`)."""

    text: str
    heading: bool = False
    bullet: str = ""
    level: int = 0
    bold: bool = False


@dataclass(frozen=True)
class Slide:
    title: str | None
    body: list[Para | str] = field(default_factory=list)
    hidden: bool = False
    title_kind: str = "title"
    subtitle: str | None = None


def _shape(number: int, placeholder: str, paragraphs: list[str]) -> str:
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="{number}" name="shape {number}"/><p:cNvSpPr/>'
        f"<p:nvPr>{placeholder}</p:nvPr></p:nvSpPr><p:spPr><a:xfrm>"
        f'<a:off x="457200" y="{300000 + number * 1400000}"/><a:ext cx="8229600" cy="1300000"/>'
        f"</a:xfrm></p:spPr><p:txBody><a:bodyPr/><a:lstStyle/>{''.join(paragraphs)}</p:txBody>"
        "</p:sp>"
    )


def _paragraph(para: Para | str) -> str:
    if isinstance(para, str):
        para = Para(para)
    if para.heading:
        return (
            '<a:p><a:pPr><a:spcBef><a:spcPts val="3000"/></a:spcBef><a:buNone/></a:pPr>'
            f'<a:r><a:rPr lang="en-US" b="1"/><a:t>{escape(para.text)}</a:t></a:r></a:p>'
        )
    bullet = {
        "char": '<a:buChar char="\u2022"/>',
        "auto": '<a:buAutoNum type="arabicPeriod"/>',
        "none": "<a:buNone/>",
    }.get(para.bullet, "")
    level = f' lvl="{para.level}"' if para.level else ""
    properties = f"<a:pPr{level}>{bullet}</a:pPr>" if bullet or level else ""
    bold = ' b="1"' if para.bold else ""
    runs = "<a:br/>".join(
        f'<a:r><a:rPr lang="en-US"{bold}/><a:t>{escape(line)}</a:t></a:r>'
        for line in para.text.split("\n")
    )
    return f"<a:p>{properties}{runs}</a:p>"


def slide_xml(slide: Slide) -> str:
    shapes = []
    if slide.title is not None:
        shapes.append(_shape(2, f'<p:ph type="{slide.title_kind}"/>', [_paragraph(slide.title)]))
    if slide.subtitle is not None:
        shapes.append(_shape(3, '<p:ph type="subTitle" idx="1"/>', [_paragraph(slide.subtitle)]))
    if slide.body:
        shapes.append(_shape(4, '<p:ph idx="1"/>', [_paragraph(p) for p in slide.body]))
    show = ' show="0"' if slide.hidden else ""
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:sld {_NS}{show}><p:cSld>'
        '<p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>'
        f"<p:grpSpPr/>{''.join(shapes)}</p:spTree></p:cSld></p:sld>"
    )


def make_pptx(slides: list[Slide], parts: dict[str, str] | None = None) -> bytes:
    """Return a PPTX with the slides in order (`parts` replaces or adds package parts)."""
    count = len(slides)
    overrides = "".join(
        f'<Override PartName="/ppt/slides/slide{n}.xml" ContentType="{_PML}.slide+xml"/>'
        for n in range(1, count + 1)
    )
    files = {
        "[Content_Types].xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="{_PKG}/content-types">'
            f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/ppt/presentation.xml" ContentType="{_PML}.presentation.'
            f'main+xml"/>{overrides}</Types>'
        ),
        "_rels/.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PKG}/relationships">'
            f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="ppt/presentation.xml"/>'
            "</Relationships>"
        ),
        "ppt/presentation.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><p:presentation {_NS}><p:sldIdLst>'
            + "".join(f'<p:sldId id="{255 + n}" r:id="rId{n + 1}"/>' for n in range(1, count + 1))
            + '</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/>'
            '<p:notesSz cx="6858000" cy="9144000"/></p:presentation>'
        ),
        "ppt/_rels/presentation.xml.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PKG}/relationships">'
            + "".join(
                f'<Relationship Id="rId{n + 1}" Type="{_REL}/slide" Target="slides/slide{n}.xml"/>'
                for n in range(1, count + 1)
            )
            + "</Relationships>"
        ),
    }
    for number, slide in enumerate(slides, start=1):
        files[f"ppt/slides/slide{number}.xml"] = slide_xml(slide)
    files.update(parts or {})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


HANDBOOK = [
    Slide("Acme Travel Handbook", ["Everything a traveller needs to know."], title_kind="ctrTitle"),
    Slide("1. CORPORATE", subtitle="Travel booked by companies"),
    Slide("Eligibility", ["Staff with one year of service may apply."]),
    Slide("Draft notes", ["Not for export."], hidden=True),
    Slide("2. RETAIL"),
    Slide("Eligibility", ["Retail customers with a loyalty card may apply."]),
    Slide("Booking", [Para("Online", heading=True), "Use the website or the app.",
                      Para("By phone", heading=True), "Call the desk."]),
]  # fmt: skip
"""A deck with a title slide, two numbered section slides, a hidden slide and sub-headings."""
