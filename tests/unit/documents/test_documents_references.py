"""The reference sanitizer on its own (no LibreOffice): what it removes, what it keeps."""

from __future__ import annotations

import io
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from reliability.hostile_links import (
    docx,
    docx_attached_template,
    docx_field,
    docx_linked_image,
    html_probes,
    ods,
    ods_external_formula,
    ods_table_source,
    package,
    pptx_hyperlink,
    pptx_linked_image,
    pptx_ole_link,
)

from drac.documents.sandbox.references import (
    EXTERNAL_DATA,
    FIELD,
    HYPERLINK,
    IMAGE_LINK,
    LINKED_DOCUMENT,
    LINKED_OBJECT,
    points_outside,
    removal_warning,
    strip_external_references,
)
from drac.errors import DocumentError

TARGET = "file:///secret/target.txt"


def _parts(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.mark.parametrize(
    ("data", "suffix", "kind"),
    [
        (pptx_ole_link(TARGET), ".pptx", LINKED_OBJECT),
        (pptx_ole_link(TARGET, "Package", automatic=False), ".pptx", LINKED_OBJECT),
        (pptx_ole_link("../../../../secret/target.txt"), ".pptx", LINKED_OBJECT),
        (pptx_linked_image(TARGET), ".pptx", IMAGE_LINK),
        (pptx_hyperlink(TARGET), ".pptx", HYPERLINK),
        (docx_linked_image(TARGET), ".docx", IMAGE_LINK),
        (docx_attached_template(TARGET), ".docx", LINKED_DOCUMENT),
        (docx_field(f'INCLUDETEXT "{TARGET}"', simple=True), ".docx", FIELD),
        (docx_field(f'INCLUDETEXT "{TARGET}"', simple=False), ".docx", FIELD),
        (docx_field(f'INCLUDEPICTURE "{TARGET}" \\d', simple=False), ".docx", FIELD),
        (docx_field(f'LINK Excel.Sheet.12 "{TARGET}" ""', simple=True), ".docx", FIELD),
        (ods_table_source(TARGET), ".ods", EXTERNAL_DATA),
        (ods_external_formula(TARGET), ".ods", EXTERNAL_DATA),
    ],
    ids=[
        "ole link", "ole package manual", "ole relative", "pptx image", "pptx hyperlink",
        "docx image", "template", "simple field", "complex field", "includepicture", "link field",
        "ods table source", "ods formula",
    ],
)  # fmt: skip
def test_a_package_loses_its_external_reference_and_counts_it(
    data: bytes, suffix: str, kind: str
) -> None:
    cleaned = strip_external_references(data, suffix)
    assert cleaned.removed == Counter({kind: 1})
    assert all(b"secret/target" not in part for part in _parts(cleaned.data).values())


def test_the_ole_link_element_goes_and_the_rest_of_the_slide_stays() -> None:
    cleaned = strip_external_references(pptx_ole_link(TARGET), ".pptx")
    slide = _parts(cleaned.data)["ppt/slides/slide1.xml"]
    assert b"<p:link" not in slide
    assert b"<a:t>Slide text</a:t>" in slide and b"<p:oleObj " in slide


def test_a_complex_field_keeps_its_cached_result_and_loses_its_instruction() -> None:
    data = docx_field(f'INCLUDETEXT "{TARGET}"', simple=False)
    body = _parts(strip_external_references(data, ".docx").data)["word/document.xml"]
    assert b"cached result" in body and b"INCLUDETEXT" not in body
    assert body.count(b"<w:fldChar ") == 3  # begin, separate, end stay


def test_a_field_split_across_instruction_runs_is_still_found() -> None:
    parts = _parts(docx_field("INCLUDE@TEXT", simple=False))
    parts["word/document.xml"] = parts["word/document.xml"].replace(
        b"INCLUDE@TEXT",
        b'INCLUDE</w:instrText></w:r><w:r><w:instrText xml:space="preserve">TEXT "'
        + TARGET.encode()
        + b'"',
    )
    data = package(dict(parts))
    cleaned = strip_external_references(data, ".docx")
    assert cleaned.removed == Counter({FIELD: 1})
    assert b"secret" not in _parts(cleaned.data)["word/document.xml"]


def test_harmless_fields_and_internal_relationships_stay_byte_for_byte() -> None:
    data = docx_field("PAGE \\* MERGEFORMAT", simple=False)
    cleaned = strip_external_references(data, ".docx")
    assert cleaned.removed == Counter()
    assert _parts(cleaned.data) == _parts(data)


def test_an_honest_package_is_unchanged_part_for_part() -> None:
    parts = _parts(pptx_linked_image("../media/inside.png"))
    rels = "ppt/slides/_rels/slide1.xml.rels"
    parts[rels] = parts[rels].replace(b' TargetMode="External"', b"")
    data = package(dict(parts))
    cleaned = strip_external_references(data, ".pptx")
    assert cleaned.removed == Counter()
    assert _parts(cleaned.data) == _parts(data)


def test_prefixes_do_not_hide_a_relationship() -> None:
    data = pptx_linked_image(TARGET)
    parts = _parts(data)
    rels = parts["ppt/slides/_rels/slide1.xml.rels"]
    parts["ppt/slides/_rels/slide1.xml.rels"] = (
        rels.replace(b"<Relationships xmlns=", b"<x:Relationships xmlns:x=")
        .replace(b"<Relationship ", b"<x:Relationship ")
        .replace(b"</Relationships>", b"</x:Relationships>")
    )
    cleaned = strip_external_references(package(parts), ".pptx")
    assert cleaned.removed[IMAGE_LINK] == 1


def test_a_package_inside_a_package_is_cleaned_too() -> None:
    inner = pptx_ole_link(TARGET)
    outer = docx("", [], settings="")
    parts = _parts(outer)
    parts["word/embeddings/deck.pptx"] = inner
    cleaned = strip_external_references(package(parts), ".docx")
    assert cleaned.removed == Counter({LINKED_OBJECT: 1})
    assert (
        b"secret"
        not in _parts(_parts(cleaned.data)["word/embeddings/deck.pptx"])[
            "ppt/slides/_rels/slide1.xml.rels"
        ]
    )


@pytest.mark.parametrize(
    ("xml", "reason"),
    [
        (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "x">]><r>&a;</r>', "declares a DTD"),
        ('<?xml version="1.0" encoding="UTF-16"?><r/>'.encode("utf-16"), "not UTF-8"),
        (b'<?xml version="1.0" encoding="ISO-8859-1"?><r/>', "not UTF-8"),
        (b"<r><unclosed></r>", "not well-formed"),
    ],
    ids=["dtd", "utf-16", "latin-1", "malformed"],
)
def test_a_part_that_cannot_be_checked_safely_refuses_the_document(xml: bytes, reason: str) -> None:
    data = package({"[Content_Types].xml": "<Types/>", "word/document.xml": xml})
    with pytest.raises(DocumentError, match=reason):
        strip_external_references(data, ".docx")


def test_something_that_is_not_a_package_is_refused() -> None:
    with pytest.raises(DocumentError, match="ZIP"):
        strip_external_references(b"{\\rtf1 INCLUDETEXT}", ".docx")


def test_an_ods_keeps_its_own_cells() -> None:
    cleaned = strip_external_references(ods_table_source(TARGET), ".ods")
    content = _parts(cleaned.data)["content.xml"]
    assert b"Own cell" in content and b"table-source" not in content
    assert strip_external_references(ods(["a"]), ".ods").removed == Counter()


@pytest.mark.parametrize(
    ("target", "base", "outside"),
    [
        ("media/image1.png", "ppt/slides", False),
        ("../media/image1.png", "ppt/slides", False),
        ("/ppt/media/image1.png", "ppt/slides", False),
        ("../../../etc/passwd", "ppt/slides", True),
        ("%2e%2e/%2e%2e/%2e%2e/etc/passwd", "ppt/slides", True),
        ("file:///etc/passwd", "ppt/slides", True),
        ("HTTP://127.0.0.1/", "ppt/slides", True),
        ("\\\\server\\share\\x", "ppt/slides", True),
        ("//server/share", "ppt/slides", True),
        ("#slide2", "ppt/slides", False),
        ("data:image/png;base64,AAAA", None, False),
        ("data:image/svg+xml;base64,PHN2Zz4=", None, True),
        ("data:text/html,<b>x</b>", None, True),
        ("Pictures/1.png", None, False),
        ("./Object 1", None, False),
        ("../outside.ods", None, True),
        ("/etc/passwd", None, True),
        ("vnd.sun.star.script:Standard.Module1.Main?language=Basic", None, True),
    ],
)
def test_points_outside(target: str, base: str | None, outside: bool) -> None:
    assert points_outside(target, base=base) is outside


_HTML_NAMES = (
    "stylesheet", "css import", "css background", "inline style", "img", "srcset",
    "table background", "body background", "iframe", "object", "embed", "input image",
    "base and img", "meta refresh", "svg image", "video",
)  # fmt: skip


@pytest.mark.parametrize("name", [*_HTML_NAMES, "local image uri", "local image path"])
def test_an_html_page_loses_every_resource_url(name: str) -> None:
    urls = {probe: "http://127.0.0.1:9/probe" for probe in _HTML_NAMES}
    page = html_probes(urls, Path("/tmp/canary-image.png"))[name]
    cleaned = strip_external_references(page, ".html")
    assert sum(cleaned.removed.values()) >= 1
    assert b"127.0.0.1" not in cleaned.data and b"canary-image" not in cleaned.data
    assert b"Honest paragraph." in cleaned.data


def test_html_keeps_text_links_text_and_data_images() -> None:
    page = (
        b'<html><head><meta charset="windows-1252"><title>T</title></head><body>'
        b'<p onclick="x()">Caf\xe9 &amp; <a href="http://x.test/">link text</a> '
        b'<a href="#top">top</a></p><img src="data:image/png;base64,iVBORw0KGgo=">'
        b"<script>fetch('http://x.test')</script><pre>  a &lt; b</pre></body></html>"
    )
    cleaned = strip_external_references(page, ".html")
    text = cleaned.data.decode("utf-8")
    assert text.startswith("\ufeff")
    assert "Café &amp; <a>link text</a>" in text and '<a href="#top">top</a>' in text
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in text
    assert "fetch" not in text and "onclick" not in text and "windows-1252" not in text
    assert "<pre>  a &lt; b</pre>" in text
    assert cleaned.removed == Counter({HYPERLINK: 1, "script": 1})


def test_css_escapes_and_comments_do_not_hide_a_url() -> None:
    page = b"<style>p { background: u\\72l(http://x.test/a.png) } q { b: ur/**/l(y) }</style>"
    text = strip_external_references(page, ".html").data.decode()
    assert "x.test" not in text


def test_csv_and_xls_pass_unchanged() -> None:
    assert strip_external_references(b"a,b\n1,2\n", ".csv").data == b"a,b\n1,2\n"
    assert strip_external_references(b"\xd0\xcf\x11\xe0", ".xls").removed == Counter()


def test_the_warning_names_the_counts() -> None:
    removed = Counter({LINKED_OBJECT: 2, IMAGE_LINK: 1})
    assert removal_warning(removed) == (
        "removed 3 external references (2 linked objects, 1 image link) before conversion: "
        "they could read files of the machine or reach the network"
    )
    assert removal_warning(Counter({HYPERLINK: 2})) == (
        "removed 2 external references (2 hyperlink targets) before conversion: their text is kept"
    )
    assert removal_warning(Counter()) is None


_SVG = (
    b'<?xml version="1.0"?>\n<?xml-stylesheet href="http://x.test/s.css"?>\n'
    b'<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
    b'"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n'
    b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
    b'<image href="file:///secret/a.png"/><image xlink:href="http://x.test/b.png"/>'
    b'<image href="data:image/png;base64,AAAA"/><rect width="1" height="1"/></svg>'
)


def test_an_svg_image_in_a_package_loses_its_dtd_stylesheet_and_image_links() -> None:
    parts = _parts(docx("", []))
    parts["word/media/image1.svg"] = _SVG
    cleaned = strip_external_references(package(dict(parts)), ".docx")
    svg = _parts(cleaned.data)["word/media/image1.svg"]
    assert b"x.test" not in svg and b"secret" not in svg and b"DOCTYPE" not in svg
    assert b'<image href="data:image/png;base64,AAAA"/><rect width="1" height="1"/>' in svg
    assert cleaned.removed == Counter({IMAGE_LINK: 2, "stylesheet": 1, "other reference": 1})


def test_alt_chunks_xinclude_and_web_queries_are_removed() -> None:
    body = (
        '<w:altChunk r:id="rId4"/><xi:include xmlns:xi="http://www.w3.org/2001/XInclude" '
        'href="file:///secret/x" parse="text"/>'
    )
    cleaned = strip_external_references(
        docx(body, [("rId4", "aFChunk", "chunk.rtf", False)]), ".docx"
    )
    document = _parts(cleaned.data)["word/document.xml"]
    assert b"altChunk" not in document and b"secret" not in document
    assert cleaned.removed == Counter({LINKED_DOCUMENT: 1, "other reference": 1})
    connections = (
        b'<connections xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        b'<connection id="1" name="q"><webPr url="http://x.test/q"/></connection></connections>'
    )
    book = package({"[Content_Types].xml": "<Types/>", "xl/connections.xml": connections})
    cleaned = strip_external_references(book, ".xlsx")
    assert b"x.test" not in _parts(cleaned.data)["xl/connections.xml"]
    assert cleaned.removed == Counter({EXTERNAL_DATA: 1})


def test_an_html_part_inside_a_package_is_cleaned_as_html() -> None:
    parts = _parts(docx("", []))
    parts["word/chunk.html"] = (
        b'<html><body><img src="http://x.test/a.png"><p>kept</p></body></html>'
    )
    cleaned = strip_external_references(package(dict(parts)), ".docx")
    chunk = _parts(cleaned.data)["word/chunk.html"]
    assert b"x.test" not in chunk and b"<p>kept</p>" in chunk


def test_a_hyperlink_keeps_its_text_and_points_nowhere() -> None:
    cleaned = strip_external_references(pptx_hyperlink("https://phish.test/login"), ".pptx")
    parts = _parts(cleaned.data)
    rels = parts["ppt/slides/_rels/slide1.xml.rels"]
    assert b'Target="about:blank"' in rels and b"phish" not in rels
    assert b"Visible link text" in parts["ppt/slides/slide1.xml"]
    assert cleaned.removed == Counter({HYPERLINK: 1})


def test_binary_parts_pass_unchanged_whatever_their_first_bytes() -> None:
    parts = _parts(docx("", []))
    icon = b"\x00\x00\x01\x00" + bytes(range(256)) * 4
    parts["word/media/icon.ico"] = icon
    parts["word/embeddings/oleObject1.bin"] = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512)
    cleaned = strip_external_references(package(dict(parts)), ".docx")
    assert _parts(cleaned.data)["word/media/icon.ico"] == icon
    assert cleaned.removed == Counter()


def test_an_svg_data_image_in_html_is_removed_as_it_can_link_files() -> None:
    page = b'<p>x</p><img src="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=">'
    cleaned = strip_external_references(page, ".html")
    assert b"svg+xml" not in cleaned.data
    assert cleaned.removed == Counter({IMAGE_LINK: 1})
