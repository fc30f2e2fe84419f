"""Headings and list items read from a DOCX's own structure and put on its PDF's pages."""

from __future__ import annotations

from file_structure_fixtures import make_styled_docx, styled
from file_table_fixtures import docx_table, html_table, make_docx, make_html

from drac.documents.intake.detect import DocumentFormat
from drac.documents.office.file_structure import FileBlock, Run, read_file_structure, structure_here
from drac.documents.office.structure_pages import place_structure
from drac.evaluation.fidelity import score_conversion

HIDDEN = ('<w:p><w:r><w:t>Shown</w:t></w:r><w:r><w:rPr><w:vanish/></w:rPr>'
          "<w:t>secret</w:t></w:r></w:p>")  # fmt: skip
BODY = "".join([
    styled("Fleet Guide", "Title"),
    styled("Aircraft", "Heading1"),
    styled("Long haul", "Heading2"),
    styled("Cabin details", "Chapter"),
    styled("Seat maps", "Aside"),
    styled("Wide seats", "Bulleted"),
    styled("Lie-flat beds in every row", numbering=(1, 1)),
    styled("Book online", numbering=(2, 0)),
    styled("Choose a seat", numbering=(2, 1)),
    styled("Pay by card", numbering=(2, 0)),
    styled(" Bags are weighed at the desk.", bold="Note:"),
    docx_table([["Model", "Range"], ["A350", "15,000 km"]]),
    HIDDEN,
])  # fmt: skip


def _kinds(blocks: list[FileBlock]) -> list[tuple[str, int, bool, int, str]]:
    return [(b.kind, b.level, b.ordered, b.number, b.text) for b in blocks]


def test_styles_and_numbering_give_each_paragraph_its_kind_level_and_number():
    blocks, warnings = read_file_structure(make_styled_docx(BODY), DocumentFormat.DOCX)
    assert warnings == []
    cells = [block.text for block in blocks if block.kind == "cell"]
    assert len(cells) == 4 and cells[0] == "Model"  # the table's words, never placed
    blocks = [block for block in blocks if block.kind != "cell"]
    assert _kinds(blocks) == [
        ("heading", 1, False, 1, "Fleet Guide"),  # Title on top, the headings one below
        ("heading", 2, False, 1, "Aircraft"),
        ("heading", 3, False, 1, "Long haul"),
        ("heading", 4, False, 1, "Cabin details"),  # outline level 2: Heading 3
        ("heading", 4, False, 1, "Seat maps"),  # based on that style
        ("item", 0, False, 1, "Wide seats"),  # the style's numbering: bullets
        ("item", 1, False, 1, "Lie-flat beds in every row"),
        ("item", 0, True, 1, "Book online"),
        ("item", 1, True, 1, "Choose a seat"),
        ("item", 0, True, 2, "Pay by card"),
        ("paragraph", 0, False, 1, "Note: Bags are weighed at the desk."),
        ("paragraph", 0, False, 1, "Shown"),  # the table's cells are not body paragraphs
    ]
    assert blocks[-2].runs == (
        Run(text="Note:", bold=True),
        Run(text=" Bags are weighed at the desk."),
    )


def test_without_a_title_heading_n_is_level_n_and_a_file_without_styles_has_paragraphs():
    blocks = structure_here(
        make_styled_docx(styled("A", "Heading1") + styled("B", "Heading2")), "docx"
    )
    assert [(b.kind, b.level) for b in blocks] == [("heading", 1), ("heading", 2)]
    plain = structure_here(make_docx(styled("Hello", "Heading1")), "docx")
    assert [(b.kind, b.text) for b in plain] == [("paragraph", "Hello")]


# What the text layer made of the file above on three pages: a title as a paragraph, levels
# it cannot see, a bold line taken for a heading, a wrapped item cut in two, numbers printed
# before the items' text and a numbered list taken for a table; one paragraph runs over the
# page break.
TEXT_LAYER = [
    "<!-- Page 1 -->\n\nFleet Guide\n\n## Aircraft\n\n## Long haul\n\nCabin details\n\n"
    "Seat maps\n\n- Wide seats\n- Lie-flat beds in\n\n### every row",
    "<!-- Page 2 -->\n\n| 1. | Book online |\n| --- | --- |\n| a. | Choose a seat |\n"
    "| 2. | Pay by card |\n\n### Note:\n\nBags are weighed",
    "<!-- Page 3 -->\n\nat the desk.\n\nShown\n\nFooter 3",
]


def test_each_heading_and_list_item_is_marked_on_its_own_page():
    blocks = structure_here(make_styled_docx(BODY), "docx")
    assert place_structure(TEXT_LAYER, blocks) == [
        "<!-- Page 1 -->\n\n# Fleet Guide\n\n## Aircraft\n\n### Long haul\n\n"
        "#### Cabin details\n\n#### Seat maps\n\n- Wide seats\n  - Lie-flat beds in every row",
        "<!-- Page 2 -->\n\n1. Book online\n   1. Choose a seat\n2. Pay by card\n\n"
        "**Note:** Bags are weighed",
        "<!-- Page 3 -->\n\nat the desk.\n\nShown\n\nFooter 3",
    ]


def test_the_placed_structure_scores_as_the_source_markdown():
    source = ("# Fleet Guide\n\n## Aircraft\n\n### Long haul\n\n#### Cabin details\n\n"
              "#### Seat maps\n\n- Wide seats\n  - Lie-flat beds in every row\n\n"
              "1. Book online\n   1. Choose a seat\n2. Pay by card\n")  # fmt: skip
    blocks = structure_here(make_styled_docx(BODY), "docx")
    before = score_conversion(source, "\n\n".join(TEXT_LAYER))
    after = score_conversion(source, "\n\n".join(place_structure(TEXT_LAYER, blocks)))
    assert (before.headings_found, before.list_items_kept) == (0, 1)
    assert (after.headings_found, after.headings) == (5, 5)
    assert (after.list_items_kept, after.list_items) == (5, 5)
    assert after.matched_words == after.source_words


def test_text_not_on_the_pages_or_out_of_order_leaves_the_lines_alone():
    blocks = [FileBlock(kind="heading", level=2, runs=(Run(text="Nowhere to be seen"),))]
    pages = ["<!-- Page 1 -->\n\n| Model | Range |\n| --- | --- |\n| A350 | 15,000 km |\n\nText"]
    assert place_structure(pages, blocks) == pages
    # a table row is never cut by a shorter paragraph
    short = [FileBlock(kind="paragraph", runs=(Run(text="Model"),))]
    assert place_structure(pages, short) == pages


PAGE = make_html(
    "<h1>Fleet</h1><p>Our <b>aircraft</b>\nfly far.</p><h3>Long haul</h3>"
    "<ul><li><p><strong>Wide</strong> seats</p><ul><li>Lie-flat</li></ul></li></ul>"
    '<ol start="3"><li>Book</li><li>Pay</li></ol>'
    + html_table([["Model", "Range"], ["A350", "15,000 km"]])
    + "<script>var h = '<h2>no</h2>';</script><div>Shown<br>below</div>"
)


def test_an_html_pages_headings_lists_and_paragraphs_are_read_in_order():
    blocks, warnings = read_file_structure(PAGE, DocumentFormat.HTML)
    assert warnings == []
    assert _kinds(blocks) == [
        ("heading", 1, False, 1, "Fleet"),
        ("paragraph", 0, False, 1, "Our aircraft fly far."),
        ("heading", 3, False, 1, "Long haul"),
        ("item", 0, False, 1, "Wide seats"),  # <li><p>: the item's text
        ("item", 1, False, 1, "Lie-flat"),
        ("item", 0, True, 3, "Book"),
        ("item", 0, True, 4, "Pay"),
        ("paragraph", 0, False, 1, "Shown\nbelow"),  # no table cells, no script
    ]
    assert blocks[3].runs == (Run(text="Wide", bold=True), Run(text=" seats"))
    pages = ["<!-- Page 1 -->\n\n# Fleet\n\nOur aircraft fly far.\n\n**Long haul**\n\n"
             "- Wide seats\n\no Lie-flat\n\n3. Book\n4. Pay\n\nShown below"]  # fmt: skip
    assert place_structure(pages, blocks) == [
        "<!-- Page 1 -->\n\n# Fleet\n\nOur **aircraft** fly far.\n\n### Long haul\n\n"
        "- **Wide** seats\n  - Lie-flat\n3. Book\n4. Pay\n\nShown\nbelow"
    ]


def test_a_file_that_styles_no_heading_keeps_the_text_layers_headings():
    """Headings set by font alone: the text layer finds them by size; the file's paragraphs
    (no style) do not undo that, while its list is still read."""
    body = styled("Baggage rules", bold="") + styled("Two bags.", numbering=(1, 0))
    blocks = structure_here(make_styled_docx(body), "docx")
    assert [b.kind for b in blocks] == ["paragraph", "item"]
    pages = ["<!-- Page 1 -->\n\n## Baggage rules\n\nTwo bags."]
    assert place_structure(pages, blocks) == ["<!-- Page 1 -->\n\n## Baggage rules\n\n- Two bags."]
