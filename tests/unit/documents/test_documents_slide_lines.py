"""The deck's own lines given to a page of LibreOffice's PDF: decks made at test time, the
page as the text layer gives such a slide (cases taken from the corpus decks)."""

from __future__ import annotations

from drac.documents.office.slide_lines import apply_lines, apply_slide
from drac.documents.office.slides import HeadingHint, SlideLine, SlideText, slide_text
from drac.parsing import parse_markdown
from tests.decks import Para, Slide, make_pptx


def _slide(slide: Slide, parts: dict[str, str] | None = None) -> SlideText:
    [text] = slide_text(make_pptx([slide], parts))
    return text


def test_bullets_of_two_levels_come_back_as_one_nested_list():
    slide = _slide(Slide("Eligible Categories", [
        Para("Sports Equipment", bullet="char"),
        Para("Golf bags, skis, snowboards, bicycles, surfboards, cricket kits, etc.",
             bullet="char", level=1),
        Para("Musical Instruments", bullet="char"),
        Para("Guitars, violins, cellos, musical keyboards, etc.", bullet="char", level=1),
    ]))  # fmt: skip
    assert [(line.kind, line.level) for line in slide.lines] == [
        ("title", 0), ("bullet", 0), ("bullet", 1), ("bullet", 0), ("bullet", 1),
    ]  # fmt: skip
    # the text layer: the title run into the first item, a wrapped item as two paragraphs
    page = (
        "<!-- Page 2 -->\n\nEligible Categories Sports Equipment\n\n"
        "Golf bags, skis, snowboards, bicycles,\n\nsurfboards, cricket kits, etc.\n\n"
        "- Musical Instruments\n- Guitars, violins, cellos, musical keyboards, etc."
    )
    out = apply_slide(page, slide)
    assert out == (
        "<!-- Page 2 -->\n\n# Eligible Categories\n\n"
        "- Sports Equipment\n"
        "  - Golf bags, skis, snowboards, bicycles, surfboards, cricket kits, etc.\n"
        "- Musical Instruments\n"
        "  - Guitars, violins, cellos, musical keyboards, etc."
    )
    [heading, items] = parse_markdown(out)
    assert heading.is_heading and items.kind.value == "list"


def test_a_title_wrapped_over_two_lines_is_one_heading():
    # build_your_own.pptx: the title's second line came back as a list item
    title = "Velvera Build Your Own Product Plan — Configure Your Custom Device"
    slide = _slide(
        Slide(title, ["Empowering you to design the Velvera device that fits your needs."])
    )
    page = (
        "<!-- Page 1 -->\n\n# Velvera Build Your Own Product Plan\n\n"
        "- Configure Your Custom Device\n\n"
        "Empowering you to design the Velvera device that fits your needs."
    )
    assert apply_slide(page, slide) == (
        "<!-- Page 1 -->\n\n"
        "# Velvera Build Your Own Product Plan — Configure Your Custom Device\n\n"
        "Empowering you to design the Velvera device that fits your needs."
    )


def test_a_bold_paragraph_over_two_lines_is_one_paragraph():
    # Staff Accommodation Policy.pptx, last slide
    text = "For further queries on staff accommodation, access the Crew Portal or contact Crew."
    slide = _slide(Slide(None, [Para(text, bullet="none", bold=True)]))
    assert slide.lines == [SlideLine(text=text, kind="paragraph", bold=True)]
    page = (
        "<!-- Page 11 -->\n\n**For further queries on staff accommodation,**\n\n"
        "**access the Crew Portal or contact Crew.**"
    )
    assert apply_slide(page, slide) == f"<!-- Page 11 -->\n\n**{text}**"


def test_the_end_of_a_wrapped_item_taken_for_a_heading_goes_back_to_its_item():
    # velvra_expanded_catalog.pptx: "### Glass Victus 2" was the item's wrapped end
    slide = _slide(Slide(None, [
        Para("Aerospace-grade aluminum body with Gorilla Glass Victus 2", bullet="char"),
        Para("IP68 water and dust resistance", bullet="char"),
    ]))  # fmt: skip
    page = (
        "<!-- Page 4 -->\n\n- Aerospace-grade aluminum body with Gorilla\n\n### Glass Victus 2\n\n"
        "- IP68 water and dust resistance"
    )
    assert apply_lines(page, slide.lines) == (
        "<!-- Page 4 -->\n\n- Aerospace-grade aluminum body with Gorilla Glass Victus 2\n"
        "- IP68 water and dust resistance"
    )


def test_numbered_items_with_drawn_numbers_and_line_breaks_become_one_numbered_list():
    # Boarding Process.pptx: LibreOffice draws "1." before the item's text and the text
    # layer runs it into the heading above; each item's line break made it two blocks
    slide = _slide(Slide(None, [
        Para("5. Boarding Sequence", heading=True),
        Para("Pre-Boarding:\nPassengers who need special assistance.", bullet="auto"),
        Para("Priority Boarding:\nCloudLux and CloudElite members.", bullet="auto"),
    ]))  # fmt: skip
    assert [(line.kind, line.number) for line in slide.lines] == [
        ("heading", 1), ("number", 1), ("number", 2),
    ]  # fmt: skip
    page = (
        "<!-- Page 6 -->\n\n## 5. Boarding Sequence 1.Pre-Boarding:\n\n"
        "Passengers who need special assistance.\n\n## 2.Priority Boarding:\n\n"
        "CloudLux and CloudElite members."
    )
    assert apply_slide(page, slide) == (
        "<!-- Page 6 -->\n\n## 5. Boarding Sequence\n\n"
        "1. Pre-Boarding: Passengers who need special assistance.\n"
        "2. Priority Boarding: CloudLux and CloudElite members."
    )


def test_a_line_break_in_a_paragraph_keeps_its_lines_and_typed_markers_make_items():
    # audio_usage_guide.pptx: a paragraph of "Care:" and typed "- " lines, one per line break
    slide = _slide(Slide(None, [Para(
        "Care:\n- Wipe earbuds with a dry cloth after use.\n- Avoid submerging in water.",
        bullet="none",
    )]))  # fmt: skip
    assert [(line.kind, line.text) for line in slide.lines] == [
        ("paragraph", "Care:"),
        ("bullet", "Wipe earbuds with a dry cloth after use."),
        ("bullet", "Avoid submerging in water."),
    ]
    page = (
        "<!-- Page 2 -->\n\nCare: - Wipe earbuds with a dry\n\ncloth after use.\n\n"
        "- Avoid submerging in water."
    )
    assert apply_lines(page, slide.lines) == (
        "<!-- Page 2 -->\n\nCare:\n\n- Wipe earbuds with a dry cloth after use.\n"
        "- Avoid submerging in water."
    )


_LAYOUT_RELS = (
    '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
    '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
    'officeDocument/2006/relationships/{kind}" Target="{target}"/></Relationships>'
)
_P = (
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'
)


def _styled(layout_body: str) -> dict[str, str]:
    """A slide layout (its body placeholder's list style `layout_body`) and a master whose
    body style bullets every level, for a one-slide deck."""
    master = (
        f"<p:sldMaster {_P}><p:cSld><p:spTree/></p:cSld><p:txStyles><p:bodyStyle>"
        '<a:lvl1pPr><a:buChar char="•"/></a:lvl1pPr><a:lvl2pPr><a:buChar char="–"/></a:lvl2pPr>'
        "</p:bodyStyle></p:txStyles></p:sldMaster>"
    )
    layout = (
        f'<p:sldLayout {_P}><p:cSld><p:spTree><p:sp><p:nvSpPr><p:cNvPr id="2" name="b"/>'
        '<p:cNvSpPr/><p:nvPr><p:ph idx="1"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody>'
        f"<a:bodyPr/><a:lstStyle>{layout_body}</a:lstStyle></p:txBody></p:sp></p:spTree>"
        "</p:cSld></p:sldLayout>"
    )
    return {
        "ppt/slides/_rels/slide1.xml.rels": _LAYOUT_RELS.format(
            kind="slideLayout", target="../slideLayouts/slideLayout1.xml"
        ),
        "ppt/slideLayouts/slideLayout1.xml": layout,
        "ppt/slideLayouts/_rels/slideLayout1.xml.rels": _LAYOUT_RELS.format(
            kind="slideMaster", target="../slideMasters/slideMaster1.xml"
        ),
        "ppt/slideMasters/slideMaster1.xml": master,
    }


def test_bullets_are_inherited_from_the_master_unless_the_layout_turns_them_off():
    deck = Slide("Fees", [Para("Refer to the calculator."), Para("Rates vary.", level=1)])
    inherited = _slide(deck, _styled(""))
    assert [(line.kind, line.level) for line in inherited.lines[1:]] == [
        ("bullet", 0), ("bullet", 1),
    ]  # fmt: skip
    turned_off = _slide(deck, _styled("<a:lvl1pPr><a:buNone/></a:lvl1pPr>"))
    assert [(line.kind, line.level) for line in turned_off.lines[1:]] == [
        ("paragraph", 0), ("bullet", 1),
    ]  # fmt: skip
    assert [line.kind for line in _slide(deck).lines[1:]] == ["paragraph", "paragraph"]


def test_lines_not_on_the_page_and_table_rows_leave_the_page_as_it_was():
    slide = _slide(Slide(None, [Para("A line the page does not show.", bullet="char")]))
    page = "<!-- Page 3 -->\n\nSome text.\n\n| Refer | to |\n|---|---|\n| the | calculator |"
    assert apply_slide(page, slide) == page
    cells = _slide(Slide(None, [Para("Refer to", bullet="char")]))
    assert apply_slide(page, cells) == page
    assert apply_slide(page, SlideText()) == page


def test_a_short_line_does_not_take_its_words_out_of_a_sentence():
    # the slide's long line differs from the page (so it is not found); its one-word line
    # "Note" must not cut the sentence that holds "note": it is found where it stands alone
    lines = [
        SlideLine(text="Please note the fees apply to every bag.", kind="paragraph"),
        SlideLine(text="Note", kind="bullet"),
    ]
    page = "<!-- Page 2 -->\n\nPlease note the fees apply to each bag.\n\nNote"
    assert apply_lines(page, lines) == (
        "<!-- Page 2 -->\n\nPlease note the fees apply to each bag.\n\n- Note"
    )


def test_bullets_the_text_layer_took_for_a_table_come_back_as_a_list():
    # phone_usage_guide.pptx: each bullet's bold lead set apart from its text made columns
    slide = _slide(Slide(None, [
        Para("Enduring Design: Large batteries (up to 6500mAh).", bullet="char"),
        Para("VelveraOS Lite: Streamlined OS for simplicity and performance.", bullet="char"),
    ]))  # fmt: skip
    page = (
        "<!-- Page 5 -->\n\n| • Enduring Design | : Large batteries (up to 6500mAh). |\n"
        "| --- | --- |\n| • VelveraOS Lite | : Streamlined OS for simplicity |\n\n"
        "and performance."
    )
    assert apply_lines(page, slide.lines) == (
        "<!-- Page 5 -->\n\n- Enduring Design: Large batteries (up to 6500mAh).\n"
        "- VelveraOS Lite: Streamlined OS for simplicity and performance."
    )
    # a table with a word found in no deck line (the deck's own tables are not lines) stays
    table = "<!-- Page 5 -->\n\n| Enduring Design | 6500mAh |\n| --- | --- |\n| Lite | 5000mAh |"
    assert apply_lines(table, slide.lines) == table


def test_a_numbered_title_wrapped_over_two_lines_is_one_heading():
    # the text layer read the title's typed number as a list marker and its second line as
    # a heading (or a paragraph): one title, one heading
    title = "1. Best Digital Transformation Bank – South Asia (2023)"
    slide = _slide(Slide(title, ["Awarded by Global Finance for our mobile banking app."]))
    expected = (
        "<!-- Page 2 -->\n\n## 1. Best Digital Transformation Bank – South Asia (2023)\n\n"
        "Awarded by Global Finance for our mobile banking app."
    )
    for second in ("# South Asia (2023)", "South Asia (2023)"):
        page = (
            "<!-- Page 2 -->\n\n1. Best Digital Transformation Bank –\n\n"
            f"{second}\n\nAwarded by Global Finance for our mobile banking app."
        )
        hinted = SlideText(headings=[HeadingHint(text=title, level=2)], lines=slide.lines)
        assert apply_slide(page, hinted) == expected
        headings = [e for e in parse_markdown(apply_slide(page, hinted)) if e.is_heading]
        assert [h.text for h in headings] == [f"## {title}"]
