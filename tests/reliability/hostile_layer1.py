"""Documents that once slipped past the reference sanitizer (layer 1) and were stopped only by
LibreOffice's own behaviour: strict-namespace Word fields, `altChunk` imports, a package
hidden behind junk bytes, spreadsheet formulas hidden by entities, CDATA, length or a name
built at run time, and markup inside a `<style>`. Each is written here with zipfile."""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import quoteattr

from reliability.hostile_links import docx, docx_field, ods, package, pptx_ole_link
from sheet_workbooks import patched, xlsx

_TRANSITIONAL_TO_STRICT = {
    b"http://schemas.openxmlformats.org/wordprocessingml/2006/main": (
        b"http://purl.oclc.org/ooxml/wordprocessingml/main"
    ),
    b"http://schemas.openxmlformats.org/officeDocument/2006/relationships": (
        b"http://purl.oclc.org/ooxml/officeDocument/relationships"
    ),
    b"http://schemas.openxmlformats.org/drawingml/2006/main": (
        b"http://purl.oclc.org/ooxml/drawingml/main"
    ),
}
JUNK = bytes(range(1, 33))
"""The 32 bytes put in front of a hidden package."""


def _parts(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def strict_docx_field(instruction: str, *, simple: bool) -> bytes:
    """`docx_field` in ISO/IEC 29500 strict namespaces (what Word saves as "Strict Open XML")."""
    parts = _parts(docx_field(instruction, simple=simple))
    for name, content in parts.items():
        for old, new in _TRANSITIONAL_TO_STRICT.items():
            content = content.replace(old, new)
        parts[name] = content
    return package(dict(parts))


def docx_alt_chunk(chunk: str, name: str = "chunk.htm") -> bytes:
    """A DOCX importing the part `word/<name>` (HTML starting with `<div>`, or anything) whole
    through `w:altChunk`."""
    parts = _parts(docx('<w:altChunk r:id="rId4"/>', [("rId4", "aFChunk", name, False)]))
    types = parts["[Content_Types].xml"].decode()
    override = f'<Override PartName="/word/{name}" ContentType="text/html"/>'
    parts["[Content_Types].xml"] = types.replace("</Types>", f"{override}</Types>").encode()
    parts[f"word/{name}"] = chunk.encode()
    return package(dict(parts))


def pptx_hidden_package(inner: bytes) -> bytes:
    """A PPTX with an embedded workbook part that is `inner` (a package) behind 32 junk bytes."""
    parts = _parts(pptx_ole_link("embeddings/Microsoft_Excel_Worksheet.xlsx"))
    parts["ppt/embeddings/Microsoft_Excel_Worksheet.xlsx"] = JUNK + inner
    return package(dict(parts))


def hidden_package_payload(target: str) -> bytes:
    """What hides behind the junk: a package keeping an OLE link to `target`."""
    return pptx_ole_link(target)


def xlsx_formula(formula_xml: str) -> bytes:
    """An XLSX whose B1 holds `formula_xml` as the raw content of its `<f>` (entities, CDATA
    as given) and the cached text "cached"; A1 says "Own cell"."""
    book = xlsx({"Sheet1": [["Own cell", "=1+1"]]})
    return patched(
        book,
        "xl/worksheets/sheet1.xml",
        b'<c r="B1"><f>1+1</f><v /></c>',
        f'<c r="B1" t="str"><f>{formula_xml}</f><v>cached</v></c>'.encode(),
    )


def ods_formula(formula: str) -> bytes:
    """An ODS whose first cell holds `formula` (an `of:=` formula) with the cached text
    "cached"; the next row says "Own cell"."""
    cell = (
        f"<table:table-cell table:formula={quoteattr(formula)} "
        'office:value-type="string" office:string-value="cached"><text:p>cached</text:p>'
        "</table:table-cell>"
    )
    return ods(["Own cell"], first_cell=cell)


def html_style_markup(image_path: str) -> bytes:
    """A page whose `<style>` holds markup: an image of a local file, written as a tag."""
    return (
        "<!DOCTYPE html><html><head><style>p { color: black }\n"
        f'<img src="{image_path}" width="240" height="160"></style></head>'
        "<body><p>Honest paragraph.</p></body></html>"
    ).encode()
