"""Documents that point outside themselves (issue 16, findings 1 to 3), a canary file and a
canary image to point at, and a local HTTP listener that counts every request it gets.

Every document is written here with zipfile and XML strings; nothing is a stored blob.
"""

from __future__ import annotations

import http.server
import io
import secrets
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image

CANARY_RGB = (13, 201, 77)
"""The canary image's one colour: no honest page of these probes has it."""

_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
_OFFICE_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_PML_OLE = "http://schemas.openxmlformats.org/presentationml/2006/ole"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_PIC = "http://schemas.openxmlformats.org/drawingml/2006/picture"
_WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"


@dataclass(frozen=True)
class Canary:
    """A file the converters must never read: a unique token inside, and an image of one
    colour beside it."""

    token: str
    text_file: Path
    png_file: Path
    ods_file: Path


def write_canary(folder: Path) -> Canary:
    """Write the canary text file, PNG and ODS (holding the token in a cell) into `folder`."""
    token = f"CANARY{secrets.token_hex(8).upper()}"
    text_file = folder / "canary.txt"
    text_file.write_text(f"{token} secret line one\n{token} secret line two\n")
    png_file = folder / "canary.png"
    Image.new("RGB", (240, 160), CANARY_RGB).save(png_file, "PNG")
    ods_file = folder / "canary.ods"
    ods_file.write_bytes(ods([token]))
    return Canary(token, text_file, png_file, ods_file)


# --- a listener -----------------------------------------------------------------------------


@dataclass
class Listener:
    """A local HTTP server's address and the requests it received ("METHOD path")."""

    port: int
    requests: list[str] = field(default_factory=list)

    def url(self, path: str = "/canary") -> str:
        """An http URL on this listener."""
        return f"http://127.0.0.1:{self.port}{path}"


@contextmanager
def listening(token: str, *, seconds: float = 300.0) -> Iterator[Listener]:
    """Serve `token` as the body of every request on 127.0.0.1 (a free port), counting the
    requests; the server stops when the block ends or after `seconds`, whichever is first."""
    received: list[str] = []
    body = f"{token} fetched over http\n".encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            received.append(f"{self.command} {self.path}")
            self.send_response(200)
            kind = "image/png" if self.path.endswith(".png") else "text/plain"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_HEAD = do_OPTIONS = do_POST = do_PROPFIND = _answer

        def log_message(self, format: str, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="canary-listener", daemon=True)
    thread.start()
    stopper = threading.Timer(seconds, server.shutdown)
    stopper.daemon = True
    stopper.start()
    try:
        yield Listener(server.server_address[1], received)
    finally:
        stopper.cancel()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# --- packages -------------------------------------------------------------------------------


def package(parts: dict[str, str | bytes]) -> bytes:
    """A ZIP package of the given parts (text is written as UTF-8), in order."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in parts.items():
            archive.writestr(name, content.encode() if isinstance(content, str) else content)
    return out.getvalue()


def relationships(*rels: tuple[str, str, str, bool]) -> str:
    """A .rels part: (id, type suffix, target, external) per relationship."""
    rows = "".join(
        f'<Relationship Id="{rid}" Type="{_OFFICE_REL}/{kind}" Target={quoteattr(target)}'
        + (' TargetMode="External"' if external else "")
        + "/>"
        for rid, kind, target, external in rels
    )
    head = f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_REL_NS}">'
    return f"{head}{rows}</Relationships>"


def _content_types(overrides: dict[str, str]) -> str:
    rows = "".join(
        f'<Override PartName="{name}" ContentType="{kind}"/>' for name, kind in overrides.items()
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/'
        'vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Default Extension="png" ContentType="image/png"/>'
        f"{rows}</Types>"
    )


_PML = "application/vnd.openxmlformats-officedocument.presentationml"
_THEME_CT = "application/vnd.openxmlformats-officedocument.theme+xml"


def pptx(slide_body: str, slide_rels: list[tuple[str, str, str, bool]]) -> bytes:
    """A one-slide PPTX whose slide's shape tree holds `slide_body` (after a text box that
    says "Slide text"), with `slide_rels` as the slide's relationships (plus its layout)."""
    theme = (
        f'<a:theme xmlns:a="{_A}" name="t"><a:themeElements>'
        '<a:clrScheme name="c"><a:dk1><a:srgbClr val="000000"/></a:dk1><a:lt1><a:srgbClr '
        'val="FFFFFF"/></a:lt1><a:dk2><a:srgbClr val="000000"/></a:dk2><a:lt2><a:srgbClr '
        'val="FFFFFF"/></a:lt2><a:accent1><a:srgbClr val="4472C4"/></a:accent1><a:accent2>'
        '<a:srgbClr val="ED7D31"/></a:accent2><a:accent3><a:srgbClr val="A5A5A5"/></a:accent3>'
        '<a:accent4><a:srgbClr val="FFC000"/></a:accent4><a:accent5><a:srgbClr val="5B9BD5"/>'
        '</a:accent5><a:accent6><a:srgbClr val="70AD47"/></a:accent6><a:hlink><a:srgbClr '
        'val="0563C1"/></a:hlink><a:folHlink><a:srgbClr val="954F72"/></a:folHlink></a:clrScheme>'
        '<a:fontScheme name="f"><a:majorFont><a:latin typeface="Arial"/><a:ea typeface=""/>'
        '<a:cs typeface=""/></a:majorFont><a:minorFont><a:latin typeface="Arial"/><a:ea '
        'typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme><a:fmtScheme name="m">'
        '<a:fillStyleLst><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill>'
        '<a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/>'
        "</a:solidFill></a:fillStyleLst><a:lnStyleLst><a:ln><a:noFill/></a:ln><a:ln><a:noFill/>"
        "</a:ln><a:ln><a:noFill/></a:ln></a:lnStyleLst><a:effectStyleLst><a:effectStyle>"
        "<a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle>"
        "<a:effectStyle><a:effectLst/></a:effectStyle></a:effectStyleLst><a:bgFillStyleLst>"
        '<a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr '
        'val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill>'
        "</a:bgFillStyleLst></a:fmtScheme></a:themeElements></a:theme>"
    )
    tree = (
        '<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>'
    )
    namespaces = f'xmlns:p="{_P}" xmlns:a="{_A}" xmlns:r="{_OFFICE_REL}"'
    master = (
        f"<p:sldMaster {namespaces}><p:cSld><p:spTree>{tree}</p:spTree></p:cSld>"
        '<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" '
        'accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" '
        'folHlink="folHlink"/><p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/>'
        "</p:sldLayoutIdLst></p:sldMaster>"
    )
    layout = (
        f'<p:sldLayout {namespaces} type="blank"><p:cSld><p:spTree>{tree}</p:spTree></p:cSld>'
        "</p:sldLayout>"
    )
    text_box = (
        '<p:sp><p:nvSpPr><p:cNvPr id="2" name="Text"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>'
        '<p:spPr><a:xfrm><a:off x="500000" y="300000"/><a:ext cx="8000000" cy="600000"/></a:xfrm>'
        '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr><p:txBody><a:bodyPr/>'
        "<a:p><a:r><a:t>Slide text</a:t></a:r></a:p></p:txBody></p:sp>"
    )
    shapes = f"{tree}{text_box}{slide_body}"
    slide = f"<p:sld {namespaces}><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>"
    presentation = (
        f'<p:presentation {namespaces}><p:sldMasterIdLst><p:sldMasterId id="2147483648" '
        'r:id="rId1"/></p:sldMasterIdLst><p:sldIdLst><p:sldId id="256" r:id="rId2"/>'
        '</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/><p:notesSz cx="6858000" '
        'cy="9144000"/></p:presentation>'
    )
    return package(
        {
            "[Content_Types].xml": _content_types(
                {
                    "/ppt/presentation.xml": f"{_PML}.presentation.main+xml",
                    "/ppt/slides/slide1.xml": f"{_PML}.slide+xml",
                    "/ppt/slideLayouts/slideLayout1.xml": f"{_PML}.slideLayout+xml",
                    "/ppt/slideMasters/slideMaster1.xml": f"{_PML}.slideMaster+xml",
                    "/ppt/theme/theme1.xml": _THEME_CT,
                }
            ),
            "_rels/.rels": relationships(("rId1", "officeDocument", "ppt/presentation.xml", False)),
            "ppt/presentation.xml": presentation,
            "ppt/_rels/presentation.xml.rels": relationships(
                ("rId1", "slideMaster", "slideMasters/slideMaster1.xml", False),
                ("rId2", "slide", "slides/slide1.xml", False),
                ("rId3", "theme", "theme/theme1.xml", False),
            ),
            "ppt/slideMasters/slideMaster1.xml": master,
            "ppt/slideMasters/_rels/slideMaster1.xml.rels": relationships(
                ("rId1", "slideLayout", "../slideLayouts/slideLayout1.xml", False),
                ("rId2", "theme", "../theme/theme1.xml", False),
            ),
            "ppt/slideLayouts/slideLayout1.xml": layout,
            "ppt/slideLayouts/_rels/slideLayout1.xml.rels": relationships(
                ("rId1", "slideMaster", "../slideMasters/slideMaster1.xml", False)
            ),
            "ppt/theme/theme1.xml": theme,
            "ppt/slides/slide1.xml": slide,
            "ppt/slides/_rels/slide1.xml.rels": relationships(
                ("rId1", "slideLayout", "../slideLayouts/slideLayout1.xml", False), *slide_rels
            ),
        }
    )


def ole_link_body(prog_id: str = "Word.Document.12", *, update_automatic: bool = True) -> str:
    """A slide's graphic frame holding an OLE object linked through relationship rId9."""
    update = ' updateAutomatic="1"' if update_automatic else ""
    return (
        '<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="4" name="Object"/><p:cNvGraphicFramePr/>'
        '<p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="500000" y="1200000"/><a:ext cx="8000000" '
        f'cy="5000000"/></p:xfrm><a:graphic><a:graphicData uri="{_PML_OLE}">'
        f'<p:oleObj name="Document" r:id="rId9" progId="{prog_id}" imgW="8000000" imgH="5000000">'
        f"<p:link{update}/></p:oleObj></a:graphicData></a:graphic></p:graphicFrame>"
    )


def pptx_ole_link(
    target: str, prog_id: str = "Word.Document.12", *, automatic: bool = True
) -> bytes:
    """Finding 1: a PPTX whose slide links an OLE object to `target` (a file or a URL)."""
    return pptx(
        ole_link_body(prog_id, update_automatic=automatic), [("rId9", "oleObject", target, True)]
    )


def _pic(rid_attribute: str) -> str:
    return (
        '<p:pic><p:nvPicPr><p:cNvPr id="5" name="Picture"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr>'
        f"<p:blipFill><a:blip {rid_attribute}/><a:stretch><a:fillRect/></a:stretch></p:blipFill>"
        '<p:spPr><a:xfrm><a:off x="500000" y="1200000"/><a:ext cx="4000000" cy="3000000"/>'
        '</a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>'
    )


def pptx_linked_image(target: str) -> bytes:
    """Finding 3: a PPTX picture whose image is an external relationship (`r:link`)."""
    return pptx(_pic('r:link="rId8"'), [("rId8", "image", target, True)])


def pptx_hyperlink(target: str) -> bytes:
    """A PPTX whose text carries a hyperlink to `target` (the text must stay)."""
    body = (
        '<p:sp><p:nvSpPr><p:cNvPr id="6" name="Link"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>'
        '<p:spPr><a:xfrm><a:off x="500000" y="1500000"/><a:ext cx="8000000" cy="600000"/>'
        '</a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr><p:txBody><a:bodyPr/>'
        '<a:p><a:r><a:rPr><a:hlinkClick r:id="rId7"/></a:rPr><a:t>Visible link text</a:t></a:r>'
        "</a:p></p:txBody></p:sp>"
    )
    return pptx(body, [("rId7", "hyperlink", target, True)])


_WORD_CT = "application/vnd.openxmlformats-officedocument.wordprocessingml"


def docx(body: str, rels: list[tuple[str, str, str, bool]], settings: str = "") -> bytes:
    """A DOCX whose body holds a paragraph "Body text" then `body` (WordprocessingML), with
    `rels` as the document's relationships and an optional settings part's inner XML."""
    namespaces = (
        f'xmlns:w="{_W}" xmlns:r="{_OFFICE_REL}" xmlns:a="{_A}" xmlns:pic="{_PIC}" xmlns:wp="{_WP}"'
    )
    document = (
        f"<w:document {namespaces}><w:body><w:p><w:r><w:t>Body text</w:t></w:r></w:p>{body}"
        "</w:body></w:document>"
    )
    parts: dict[str, str | bytes] = {
        "[Content_Types].xml": _content_types(
            {
                "/word/document.xml": f"{_WORD_CT}.document.main+xml",
                "/word/settings.xml": f"{_WORD_CT}.settings+xml",
            }
        ),
        "_rels/.rels": relationships(("rId1", "officeDocument", "word/document.xml", False)),
        "word/document.xml": document,
        "word/_rels/document.xml.rels": relationships(
            ("rId1", "settings", "settings.xml", False), *rels
        ),
        "word/settings.xml": f"<w:settings {namespaces}>{settings}</w:settings>",
    }
    return package(parts)


def docx_linked_image(target: str) -> bytes:
    """Finding 3: a DOCX inline picture whose image is an external relationship (`r:link`)."""
    drawing = (
        '<w:p><w:r><w:drawing><wp:inline><wp:extent cx="3000000" cy="2000000"/>'
        '<wp:docPr id="1" name="Picture"/><a:graphic><a:graphicData '
        f'uri="{_PIC}"><pic:pic><pic:nvPicPr><pic:cNvPr id="1" name="p.png"/><pic:cNvPicPr/>'
        '</pic:nvPicPr><pic:blipFill><a:blip r:link="rId8"/><a:stretch><a:fillRect/>'
        '</a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="3000000" '
        'cy="2000000"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr>'
        "</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"
    )
    return docx(drawing, [("rId8", "image", target, True)])


def docx_field(instruction: str, *, simple: bool) -> bytes:
    """A DOCX with a field (`INCLUDETEXT "..."`, `INCLUDEPICTURE`, `LINK`) as a simple field
    or as a complex field (fldChar begin, instrText, separate, a cached result, end)."""
    if simple:
        field_xml = (
            f"<w:p><w:fldSimple w:instr={quoteattr(instruction)}><w:r><w:t>cached result</w:t>"
            "</w:r></w:fldSimple></w:p>"
        )
    else:
        field_xml = (
            '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText '
            f'xml:space="preserve">{_escape(instruction)}</w:instrText></w:r><w:r><w:fldChar '
            'w:fldCharType="separate"/></w:r><w:r><w:t>cached result</w:t></w:r><w:r><w:fldChar '
            'w:fldCharType="end"/></w:r></w:p>'
        )
    return docx(field_xml, [])


def docx_attached_template(target: str) -> bytes:
    """A DOCX whose settings attach an external template."""
    return docx(
        "",
        [("rId5", "attachedTemplate", target, True)],
        settings='<w:attachedTemplate r:id="rId5"/>',
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# --- ODF ------------------------------------------------------------------------------------

_ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
    'xmlns:xlink="http://www.w3.org/1999/xlink" '
    'xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2"'
)


def ods(cells: list[str], *, table_extra: str = "", first_cell: str | None = None) -> bytes:
    """An ODS with one sheet: a column of text cells, optionally a first cell's raw XML and
    raw XML inside the table (before its rows)."""
    rows = "".join(
        f'<table:table-row><table:table-cell office:value-type="string"><text:p>{_escape(c)}'
        "</text:p></table:table-cell></table:table-row>"
        for c in cells
    )
    if first_cell is not None:
        rows = f"<table:table-row>{first_cell}</table:table-row>{rows}"
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_ODF_NS} '
        'office:version="1.2"><office:body><office:spreadsheet><table:table table:name="Sheet1">'
        f"{table_extra}{rows}</table:table></office:spreadsheet></office:body>"
        "</office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest='
        '"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
        '<manifest:file-entry manifest:full-path="/" manifest:media-type='
        '"application/vnd.oasis.opendocument.spreadsheet"/><manifest:file-entry '
        'manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>'
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(
            zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.spreadsheet"
        )
        archive.writestr("content.xml", content, zipfile.ZIP_DEFLATED)
        archive.writestr("META-INF/manifest.xml", manifest, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def ods_table_source(target: str) -> bytes:
    """An ODS whose sheet is linked to another file's sheet (`table:table-source`)."""
    source = (
        f'<table:table-source xlink:type="simple" xlink:href={quoteattr(target)} '
        'table:table-name="Sheet1" table:mode="copy-all"/>'
    )
    return ods(["Own header", "Own cell"], table_extra=source)


def ods_external_formula(target: str) -> bytes:
    """An ODS whose first cell reads a cell of another file by formula."""
    cell = (
        f"<table:table-cell table:formula=\"of:=['{target}'#$Sheet1.A1]\" "
        'office:value-type="string"><text:p>cached</text:p></table:table-cell>'
    )
    return ods(["Own cell"], first_cell=cell)


# --- HTML -----------------------------------------------------------------------------------


def html_probes(url_of: dict[str, str], png_file: Path) -> dict[str, bytes]:
    """Finding 3: one HTML document per way of making LibreOffice fetch a resource; `url_of`
    maps probe names to the listener URL each uses; the last two embed a local image."""
    page = (
        "<!DOCTYPE html><html><head>{head}</head><body><p>Honest paragraph.</p>{body}</body></html>"
    )
    probes = {
        "stylesheet": ('<link rel="stylesheet" href="{u}">', ""),
        "css import": ("<style>@import url({u});</style>", ""),
        "css background": ("<style>p {{ background: url('{u}') }}</style>", ""),
        "inline style": ("", '<div style="background-image: url({u})">Styled</div>'),
        "img": ("", '<img src="{u}" width="100" height="100">'),
        "srcset": ("", '<img srcset="{u} 2x" width="100" height="100">'),
        "table background": ("", '<table background="{u}"><tr><td>Cell</td></tr></table>'),
        "body background": (
            "",
            '<div><table><tr><td background="{u}">Cell</td></tr></table></div>',
        ),
        "iframe": ("", '<iframe src="{u}"></iframe>'),
        "object": ("", '<object data="{u}" type="text/plain"></object>'),
        "embed": ("", '<embed src="{u}" type="text/plain">'),
        "input image": ("", '<form><input type="image" src="{u}"></form>'),
        "base and img": ('<base href="{u}/">', '<img src="x.png">'),
        "meta refresh": ('<meta http-equiv="refresh" content="0; url={u}">', ""),
        "svg image": ("", '<svg><image href="{u}" width="10" height="10"/></svg>'),
        "video": ("", '<video src="{u}" poster="{u}"></video>'),
    }
    out = {}
    for name, (head, body) in probes.items():
        url = url_of[name]
        out[name] = page.format(head=head.format(u=url), body=body.format(u=url)).encode()
    out["local image uri"] = page.format(
        head="", body=f'<img src="{png_file.as_uri()}" width="240" height="160">'
    ).encode()
    out["local image path"] = page.format(
        head="", body=f'<img src="{png_file}" width="240" height="160">'
    ).encode()
    return out


# --- what came out -------------------------------------------------------------------------


def pdf_text(pdf: bytes) -> str:
    """The text layer of every page."""
    document = pdfium.PdfDocument(pdf)
    try:
        return "".join(page.get_textpage().get_text_range() for page in document)
    finally:
        document.close()


def canary_images(pdf: bytes) -> int:
    """Image objects in the PDF whose pixels are mostly the canary's colour."""
    document = pdfium.PdfDocument(pdf)
    found = 0
    try:
        for page in document:
            for item in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=4):
                bitmap = item.get_bitmap(render=False).to_pil().convert("RGB")
                colours = bitmap.getcolors(maxcolors=bitmap.width * bitmap.height) or []
                if colours and max(colours)[1] == CANARY_RGB:
                    found += 1
    finally:
        document.close()
    return found
