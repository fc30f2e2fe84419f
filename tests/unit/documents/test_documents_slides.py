"""Slide titles read from the PPTX package and applied to page Markdown as headings."""

from __future__ import annotations

import pytest

from drac.documents.office.slides import HeadingHint, apply_headings, slide_headings
from tests.decks import HANDBOOK, Para, Slide, make_pptx, slide_xml


def levels(deck: bytes) -> list[list[tuple[int, str]]]:
    return [[(hint.level, hint.text) for hint in hints] for hints in slide_headings(deck)]


def test_the_title_slide_is_the_top_heading_and_section_slides_open_sections():
    assert levels(make_pptx(HANDBOOK)) == [
        [(1, "Acme Travel Handbook")],
        [(2, "1. CORPORATE")],
        [(3, "Eligibility")],
        [(2, "2. RETAIL")],  # the hidden slide is not exported by LibreOffice: no page
        [(3, "Eligibility")],
        [(3, "Booking"), (4, "Online"), (4, "By phone")],
    ]


def test_without_section_slides_titles_are_second_level_and_sub_headings_third():
    deck = make_pptx([
        Slide("Airbus A350 Fleet Overview"),
        Slide("Aircraft Overview", ["The A350 is a wide-body aircraft."]),
        Slide(None, [Para("1. CloudLux", heading=True), "Eight suites."]),
        Slide(None, [Para("2. CloudElite", heading=True), "Forty-two seats."]),
        Slide("Airbus A350 Fleet Overview: Cargo", ["A second part of the deck."]),
    ])  # fmt: skip
    assert levels(deck) == [
        [(1, "Airbus A350 Fleet Overview")],
        [(2, "Aircraft Overview")],
        [(3, "1. CloudLux")],
        [(3, "2. CloudElite")],  # continues the level of "1."
        [(1, "Airbus A350 Fleet Overview: Cargo")],  # restates the deck title: a new part
    ]


def test_a_numbered_run_sits_below_the_heading_it_follows_with_no_text_between():
    # velvera_audio.pptx (a heading over a table, then "1. Velvera Buds" on the next slide)
    # and Employee Insurance Policy.pptx (two headings in a row); Staff Expense Claim
    # Procedure.pptx keeps "1. Eligible Expenses" beside "Overview", which has text
    deck = make_pptx([
        Slide("Velvera Audio Series"),
        Slide(None, [Para("Overview", heading=True), "Who may claim."]),
        Slide(None, [Para("1. Eligible Expenses", heading=True), "Travel."]),
        Slide(None, [Para("Product Models", heading=True)]),
        Slide(None, [Para("1. Velvera Buds", heading=True), "True wireless."]),
        Slide(None, [Para("2. Velvera Buds Deluxe", heading=True), "Noise cancelling."]),
        Slide("Insurance", [Para("Policy Categories", heading=True),
                            Para("1. Non-Ground Staff", heading=True), "Pilots and crew."]),
    ])  # fmt: skip
    assert levels(deck) == [
        [(1, "Velvera Audio Series")],
        [(2, "Overview")],
        [(2, "1. Eligible Expenses")],
        [(2, "Product Models")],
        [(3, "1. Velvera Buds")],
        [(3, "2. Velvera Buds Deluxe")],
        [(2, "Insurance"), (3, "Policy Categories"), (4, "1. Non-Ground Staff")],
    ]


def test_slides_follow_presentation_order_not_part_names():
    deck = make_pptx(
        [Slide("First"), Slide("Second", ["Body."])],
        parts={
            "ppt/slides/slide1.xml": slide_xml(Slide("Second", ["Body."])),
            "ppt/slides/slide2.xml": slide_xml(Slide("First")),
            "ppt/_rels/presentation.xml.rels": (
                '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/'
                'package/2006/relationships"><Relationship Id="rId2" Type="x" '
                'Target="slides/slide2.xml"/><Relationship Id="rId3" Type="x" '
                'Target="slides/slide1.xml"/></Relationships>'
            ),
        },
    )
    assert levels(deck) == [[(1, "First")], [(2, "Second")]]


def test_a_package_that_is_not_a_deck_or_declares_entities_gives_no_hints():
    assert slide_headings(b"PK\x03\x04 not really a zip") == []
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE p [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
        '<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main">&b;</p:sld>'
    )
    deck = make_pptx([Slide("Title")], parts={"ppt/slides/slide1.xml": bomb})
    assert slide_headings(deck) == []
    missing = make_pptx([Slide("Title")], parts={"ppt/presentation.xml": "<broken"})
    assert slide_headings(missing) == []


PAGE = """<!-- Page 3 -->

Eligibility Staff with one year of service may apply.

- Apply online. Documents needed:

| Eligibility | Yes |
|---|---|"""


def test_a_heading_run_into_the_next_line_is_split_off_and_table_rows_are_untouched():
    out = apply_headings(PAGE, [HeadingHint(text="Eligibility", level=3)])
    assert out.split("\n\n") == [
        "<!-- Page 3 -->",
        "### Eligibility",
        "Staff with one year of service may apply.",
        "- Apply online. Documents needed:",
        "| Eligibility | Yes |\n|---|---|",
    ]


def test_a_heading_at_the_end_of_a_line_after_a_sentence_is_split_off():
    out = apply_headings(PAGE, [HeadingHint(text="Documents needed:", level=4)])
    assert "- Apply online.\n\n#### Documents needed:" in out


def test_words_inside_a_sentence_are_not_taken_for_the_heading():
    page = "<!-- Page 1 -->\n\nCustomers may select Velvera Buds from the list."
    assert apply_headings(page, [HeadingHint(text="Velvera Buds", level=2)]) == page


def test_a_list_item_or_a_wrong_level_heading_takes_the_hinted_level():
    page = "<!-- Page 2 -->\n\n1. CORPORATE\n- other item\n\n# Eligibility"
    hints = [HeadingHint(text="1. CORPORATE", level=2), HeadingHint(text="Eligibility", level=3)]
    assert apply_headings(page, hints) == (
        "<!-- Page 2 -->\n\n## 1. CORPORATE\n\n- other item\n\n### Eligibility"
    )


def _slow_deck(slides: int) -> bytes:
    """A deck whose every slide part is a maximal 16 MiB of nested runs (tiny when zipped):
    reading its titles costs seconds of CPU per slide."""
    body = "<a:r><a:t>x</a:t></a:r>" * (16 * 1024 * 1024 // 24 - 40)
    part = (
        '<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><p:cSld><p:spTree>'
        f"<p:sp><p:txBody><a:p>{body}</a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
    )
    return make_pptx(
        [Slide("Title")] * slides,
        parts={f"ppt/slides/slide{n}.xml": part for n in range(1, slides + 1)},
    )


@pytest.mark.subprocess
def test_a_deck_past_the_reading_limits_gives_no_hints_and_a_warning(monkeypatch):
    """Before: the titles were read in drac's own process with no limit on the whole deck
    (16 MiB a part, any number of parts), so a 1 MB deck could hold drac for minutes. Now
    they are read in a contained worker; past its CPU limit the deck keeps the converter's
    headings, with a warning naming the limit."""
    from drac.documents.office import slides
    from drac.documents.sandbox.containment import Limits

    monkeypatch.setattr(
        slides, "SLIDE_LIMITS", Limits(cpu_s=1.0, step_cpu_s=1.0, wall_s=20.0,
                                       preload=("drac.documents.office.slides",)),
    )  # fmt: skip
    hints, warnings = slides.read_slide_headings(_slow_deck(8))
    assert hints == []
    assert len(warnings) == 1 and "CPU" in warnings[0] and "slide titles" in warnings[0]


def test_slide_titles_are_read_in_the_contained_worker(monkeypatch):
    from drac.documents.office import slides

    targets: list[object] = []
    real = slides.contained_call

    def recorded(target, *args, **kwargs):
        targets.append(target)
        return real(target, *args, **kwargs)

    monkeypatch.setattr(slides, "contained_call", recorded)
    hints, warnings = slides.read_slide_headings(make_pptx(HANDBOOK))
    assert targets == [slides.slide_text]
    assert [(hint.level, hint.text) for hint in hints[0].headings] == [(1, "Acme Travel Handbook")]
    assert warnings == []
