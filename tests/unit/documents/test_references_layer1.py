"""Layer 1 on its own: every reference that once slipped past the sanitizer, and was stopped
only by LibreOffice's own behaviour, is removed (or the document refused) and counted."""

from __future__ import annotations

import io
import random
import time
import zipfile
from collections import Counter

import pytest
from reliability.hostile_layer1 import (
    JUNK,
    docx_alt_chunk,
    hidden_package_payload,
    html_style_markup,
    ods_formula,
    pptx_hidden_package,
    strict_docx_field,
    xlsx_formula,
)
from reliability.hostile_links import docx, ods, package
from sheet_workbooks import patched

from drac.documents.sandbox.references import (
    EXTERNAL_DATA,
    FIELD,
    LINKED_DOCUMENT,
    OTHER,
    remove_external_references,
    strip_external_references,
)
from drac.documents.sandbox.references.formulas import reads_outside
from drac.errors import DocumentError

TARGET = "file:///secret/target.txt"


def _parts(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _nothing_names(data: bytes, *needles: bytes) -> None:
    for name, content in _parts(data).items():
        for needle in needles:
            assert needle not in content, f"{needle!r} left in {name}"


@pytest.mark.parametrize("simple", [True, False], ids=["simple", "complex"])
@pytest.mark.parametrize(
    "instruction", [f'INCLUDETEXT "{TARGET}"', f'INCLUDEPICTURE "{TARGET}" \\d']
)
def test_a_strict_namespace_field_is_removed_and_counted(instruction: str, simple: bool) -> None:
    data = strict_docx_field(instruction, simple=simple)
    assert b"purl.oclc.org/ooxml/wordprocessingml" in _parts(data)["word/document.xml"]
    cleaned = strip_external_references(data, ".docx")
    assert cleaned.removed == Counter({FIELD: 1})
    body = _parts(cleaned.data)["word/document.xml"]
    assert b"secret" not in body and b"cached result" in body


_CHUNKS = {
    "xhtml": (
        '<div><img src="file:///secret/a.png"/><iframe src="http://x.test/f"></iframe>'
        "<p>chunk text</p></div>"
    ),
    "html": "<div><img src=file:///secret/a.png><br><p>chunk text</div>",
    "rtf": r"{\rtf1 {\field{\*\fldinst INCLUDETEXT file:///secret/a.txt}}}",
}


@pytest.mark.parametrize("chunk", sorted(_CHUNKS))
def test_an_alt_chunk_goes_with_its_part_and_is_counted(chunk: str) -> None:
    cleaned = strip_external_references(docx_alt_chunk(_CHUNKS[chunk]), ".docx")
    parts = _parts(cleaned.data)
    assert "word/chunk.htm" not in parts
    assert b"altChunk" not in parts["word/document.xml"]
    assert b"aFChunk" not in parts["word/_rels/document.xml.rels"]
    assert b"Body text" in parts["word/document.xml"]
    assert cleaned.removed == Counter({LINKED_DOCUMENT: 1})
    _nothing_names(cleaned.data, b"secret", b"x.test")


def test_a_package_hidden_behind_junk_bytes_refuses_the_document() -> None:
    data = pptx_hidden_package(hidden_package_payload(TARGET))
    with pytest.raises(DocumentError, match="holds a ZIP package after other bytes"):
        strip_external_references(data, ".pptx")


def test_a_package_at_the_start_of_a_part_is_still_cleaned() -> None:
    parts = _parts(pptx_hidden_package(hidden_package_payload(TARGET)))
    inner = parts["ppt/embeddings/Microsoft_Excel_Worksheet.xlsx"][len(JUNK) :]
    parts["ppt/embeddings/Microsoft_Excel_Worksheet.xlsx"] = inner
    cleaned = strip_external_references(package(dict(parts)), ".pptx")
    assert sum(cleaned.removed.values()) == 2  # the outer deck's link and the inner one's
    embedded = _parts(cleaned.data)["ppt/embeddings/Microsoft_Excel_Worksheet.xlsx"]
    _nothing_names(embedded, b"secret")


def test_binary_parts_with_zip_signatures_by_chance_pass() -> None:
    noise = random.Random(5).randbytes(4096)
    image = b"\x89PNG\r\n\x1a\n" + noise + b"PK\x05\x06" + noise + b"PK\x03\x04" + noise
    parts = _parts(docx("", []))
    parts["word/media/image1.png"] = image
    cleaned = strip_external_references(package(dict(parts)), ".docx")
    assert _parts(cleaned.data)["word/media/image1.png"] == image


_XLSX_FORMULAS = {
    "entity": 'W&#69;BSERVICE("http"&amp;CHAR(58)&amp;"//x.test/e")',
    "cdata": '<![CDATA[WEBSERVICE("http://x.test/c")]]>',
    "long": '"' + "x" * 5000 + '"&amp;WEBSERVICE("http://x.test/l")',
    "built name": 'INDIRECT("\'file"&amp;CHAR(58)&amp;"///secret/x.ods\'#$Sheet1.A1")',
    "dde": 'DDE("soffice";"x.test";"A1")',
}


@pytest.mark.parametrize("formula", sorted(_XLSX_FORMULAS))
def test_an_xlsx_formula_reading_outside_is_removed_keeping_its_value(formula: str) -> None:
    cleaned = strip_external_references(xlsx_formula(_XLSX_FORMULAS[formula]), ".xlsx")
    sheet = _parts(cleaned.data)["xl/worksheets/sheet1.xml"]
    assert b"<f>" not in sheet and b"<v>cached</v>" in sheet
    assert cleaned.removed == Counter({EXTERNAL_DATA: 1})


def test_a_defined_name_reading_outside_is_removed() -> None:
    book = patched(
        xlsx_formula("1+1"),
        "xl/workbook.xml",
        b"<definedNames />",
        b'<definedNames><definedName name="x">WEBSERVICE("http://x.test/n")</definedName>'
        b'<definedName name="y">Sheet1!$A$1</definedName></definedNames>',
    )
    cleaned = strip_external_references(book, ".xlsx")
    workbook = _parts(cleaned.data)["xl/workbook.xml"]
    assert b"x.test" not in workbook and b"Sheet1!$A$1" in workbook
    assert b"<f>1+1</f>" in _parts(cleaned.data)["xl/worksheets/sheet1.xml"]
    assert cleaned.removed == Counter({EXTERNAL_DATA: 1})


_ODS_FORMULAS = {
    "indirect": 'of:=INDIRECT("\'file"&CHAR(58)&"///secret/x.ods\'#$Sheet1.A1")',
    "webservice": 'of:=WEBSERVICE("http"&CHAR(58)&"//x.test/o")',
    "named": 'of:=COM.MICROSOFT.WEBSERVICE("http"&CHAR(58)&"//x.test/o")',
}


@pytest.mark.parametrize("formula", sorted(_ODS_FORMULAS))
def test_an_ods_formula_building_a_url_is_removed_keeping_its_value(formula: str) -> None:
    cleaned = strip_external_references(ods_formula(_ODS_FORMULAS[formula]), ".ods")
    content = _parts(cleaned.data)["content.xml"]
    assert b"table:formula" not in content and b"<text:p>cached</text:p>" in content
    assert cleaned.removed == Counter({EXTERNAL_DATA: 1})


def test_an_ods_named_expression_reading_outside_is_removed() -> None:
    named = (
        '<table:named-expressions><table:named-expression table:name="x" '
        'table:base-cell-address="$Sheet1.$A$1" '
        "table:expression=\"of:=INDIRECT(&quot;'file&quot;&amp;CHAR(58)&amp;&quot;///secret"
        "/x.ods'#$Sheet1.A1&quot;)\"/></table:named-expressions>"
    )
    data = _parts(ods(["Own cell"]))
    data["content.xml"] = data["content.xml"].replace(
        b"</office:spreadsheet>", named.encode() + b"</office:spreadsheet>"
    )
    cleaned = strip_external_references(package(dict(data)), ".ods")
    assert b"secret" not in _parts(cleaned.data)["content.xml"]
    assert cleaned.removed == Counter({EXTERNAL_DATA: 1})


def test_honest_formulas_stay() -> None:
    for formula in ("SUM(A1:A3)", 'IF(B2>0;"yes";"no")', "VLOOKUP(A1;Sheet2.A1:B9;2;0)"):
        assert not reads_outside(formula)
    for formula in ("WEBSERVICE(A1)", "indirect(A1)", "'/etc/x'#$A1", "'file:///x'#$A1"):
        assert reads_outside(formula)


def test_a_formula_is_judged_in_linear_time() -> None:
    """A run of letters was matched from every letter as a URL scheme (quadratic: 20,000
    letters took 1.9 s, 200,000 would take minutes)."""
    started = time.process_time()
    assert not reads_outside("a" * 200_000)
    assert time.process_time() - started < 0.5


def test_markup_inside_a_style_is_removed_and_counted() -> None:
    cleaned = strip_external_references(html_style_markup("/secret/a.png"), ".html")
    page = cleaned.data.decode("utf-8-sig")
    assert "secret" not in page and "<img" not in page and "Honest paragraph." in page
    assert cleaned.removed == Counter({OTHER: 1})


def test_a_style_keeps_its_rules_without_the_old_comment_markers() -> None:
    cleaned = strip_external_references(b"<style><!-- p > b { color: red } --></style>", ".html")
    assert cleaned.data.decode("utf-8-sig") == "<style> p > b { color: red } </style>"
    assert cleaned.removed == Counter()


def test_a_self_closing_style_still_starts_a_style_sheet() -> None:
    page = b"<style/>p { background: url(http://x.test/a) }</style><p>Text</p>"
    cleaned = strip_external_references(page, ".html")
    assert b"x.test" not in cleaned.data and b"<p>Text</p>" in cleaned.data


def test_the_contained_sanitizer_gives_what_the_sanitizer_gives() -> None:
    data = docx_alt_chunk(_CHUNKS["xhtml"])
    here = strip_external_references(data, ".docx")
    contained = remove_external_references(data, ".docx")
    assert contained.data == here.data and contained.removed == here.removed
    assert remove_external_references(b"a,b\n", ".csv").data == b"a,b\n"
    with pytest.raises(DocumentError, match="DTD"):
        remove_external_references(
            package({"word/document.xml": b'<!DOCTYPE x [<!ENTITY a "b">]><x/>'}), ".docx"
        )
