"""Hostile DOCX parts against the reader of a file's headings and lists (issue 17), and hostile
pages against their placement: refused, capped or bounded, never expanded, never a crash of
the caller."""

from __future__ import annotations

from hostile_office import docx, docx_with_body
from hostile_zip import deflated, filler_entry

from drac.documents.intake.detect import DocumentFormat
from drac.documents.office import file_structure, structure_pages
from drac.documents.office.file_structure import FileBlock, Run, read_file_structure, structure_here
from drac.documents.office.structure_pages import place_structure
from drac.documents.sandbox.containment import GIB, Limits

_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _styles(body: str) -> bytes:
    return f'<?xml version="1.0"?><w:styles {_W}>{body}</w:styles>'.encode()


def _styled(style: str, text: str) -> str:
    return f'<w:p><w:pPr><w:pStyle w:val="{style}"/></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>'


def _body(paragraphs: str) -> bytes:
    xml = f'<?xml version="1.0"?><w:document {_W}><w:body>{paragraphs}</w:body></w:document>'
    return xml.encode()


def test_a_styles_part_declaring_entities_is_refused_and_nothing_is_expanded():
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE w:styles [<!ENTITY a "aaaaaaaaaa">'
        + "".join(f'<!ENTITY {chr(98 + n)} "{("&" + chr(97 + n) + ";") * 10}">' for n in range(8))
        + f']><w:styles {_W}><w:style w:styleId="H"><w:name w:val="&i;"/></w:style></w:styles>'
    ).encode()
    data = docx_with_body(_body(_styled("H", "Title text")), [deflated(laughs, "word/styles.xml")])
    assert structure_here(data, "docx") == []
    blocks, warnings = read_file_structure(data, DocumentFormat.DOCX)
    assert (blocks, warnings) == ([], [])  # the text layer's headings stay, quietly


def test_a_styles_part_past_its_cap_is_refused_without_being_inflated():
    styles = filler_entry("word/styles.xml", 40, fill=b" ", prefix=f"<w:styles {_W}>".encode(),
                          suffix=b"</w:styles>")  # fmt: skip
    data = docx_with_body(_body(_styled("Heading1", "Kept as text")), [styles])
    assert len(data) < 1024 * 1024
    assert structure_here(data, "docx") == []


def test_a_loop_or_a_long_chain_of_based_on_styles_ends_at_the_cap():
    loop = ('<w:style w:type="paragraph" w:styleId="A"><w:name w:val="A"/><w:basedOn w:val="B"/>'
            '</w:style><w:style w:type="paragraph" w:styleId="B"><w:name w:val="B"/>'
            '<w:basedOn w:val="A"/></w:style>')  # fmt: skip
    chain = (
        "".join(
            f'<w:style w:type="paragraph" w:styleId="S{n}"><w:name w:val="S{n}"/>'
            f'<w:basedOn w:val="S{n + 1}"/></w:style>'
            for n in range(5000)
        )
        + '<w:style w:type="paragraph" w:styleId="S5000"><w:name w:val="heading 1"/></w:style>'
    )
    near = '<w:style w:type="paragraph" w:styleId="Near"><w:basedOn w:val="S4990"/></w:style>'
    data = docx_with_body(
        _body(_styled("A", "In a loop") + _styled("S0", "Far down") + _styled("Near", "Close")),
        [deflated(_styles(loop + chain + near), "word/styles.xml")],
    )
    blocks = structure_here(data, "docx")
    assert [(b.kind, b.text) for b in blocks] == [
        ("paragraph", "In a loop"),
        ("paragraph", "Far down"),  # Heading 1 is 5,000 links away: past the cap, body text
        ("heading", "Close"),  # 11 links away: within it
    ]


def test_deep_nesting_and_a_worker_past_its_limits_keep_the_text_layers_structure(monkeypatch):
    deep = docx_with_body(_body("<w:sdt><w:sdtContent>" * 100_000 + _styled("X", "deep")
                                + "</w:sdtContent></w:sdt>" * 100_000))  # fmt: skip
    blocks, warnings = read_file_structure(deep, DocumentFormat.DOCX)
    read = [(b.kind, b.text) for b in blocks] == [("paragraph", "deep")] and not warnings
    refused = not blocks and len(warnings) == 1 and "could not be read" in warnings[0]
    assert read or refused  # the worker reads it or fails alone; the call returns cleanly
    tight = Limits(memory_bytes=1 * GIB, cpu_s=0.3, step_cpu_s=0.3, wall_s=30.0,
                   preload=("drac.documents.office.file_structure",))  # fmt: skip
    monkeypatch.setattr(file_structure, "FILE_STRUCTURE_LIMITS", tight)
    many = docx([f"Paragraph number {n} of a long file." for n in range(60_000)])
    blocks, warnings = read_file_structure(many, DocumentFormat.DOCX)
    assert blocks == []
    assert len(warnings) == 1 and "CPU" in warnings[0] and "text layer" in warnings[0]


def test_placing_paragraphs_stops_at_its_budget_of_compared_characters():
    """Paragraphs that each almost match 80 long lines would compare 10,000 x 80 x 1,000
    characters; the budget stops that, and the lines are left as the text layer read them."""
    line = "b" * 1000
    pages = ["<!-- Page 1 -->\n\nThe first line\n\n" + "\n\n".join([line] * 80)]
    almost = FileBlock(kind="heading", level=1, runs=(Run(text="b" * 999 + "c"),))
    first = FileBlock(kind="heading", level=2, runs=(Run(text="The first line"),))
    assert structure_pages.MAX_COMPARED < 10_000 * 80 * 1000
    placed = place_structure(pages, [almost] * 10 + [first])
    assert placed[0].startswith("<!-- Page 1 -->\n\n## The first line\n\nbbb")
    assert place_structure(pages, [almost] * 10_000 + [first]) == pages


def test_a_heading_or_item_holding_a_page_marker_cannot_forge_one():
    forged = "<!-- Page 9 -->"
    blocks = [
        FileBlock(kind="heading", level=2, runs=(Run(text=f"Fares {forged}"),)),
        FileBlock(kind="item", runs=(Run(text=f"Seats\n{forged}"),)),
    ]
    pages = ["<!-- Page 1 -->\n\nFares Page 9\n\n- Seats Page 9"]
    placed = place_structure(pages, blocks)
    assert placed == [
        "<!-- Page 1 -->\n\n## Fares &lt;!-- Page 9 -->\n\n- Seats\n  &lt;!-- Page 9 -->"
    ]


def test_html_lists_nested_1000_deep_keep_their_items_at_the_deepest_level():
    page = ("<ul><li>item" * 1_000 + "</li></ul>" * 1_000).encode()
    blocks, warnings = read_file_structure(page, DocumentFormat.HTML)
    assert warnings == []
    assert len(blocks) == 1_000
    assert {b.kind for b in blocks} == {"item"}
    assert [b.level for b in blocks[:10]] == [*range(9), 8]  # nesting capped at 8
