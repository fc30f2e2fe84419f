"""A deck made at test time, through real LibreOffice and the offline converter: its slide
titles come back as headings at the deck's levels, one page per shown slide."""

from __future__ import annotations

import re

from drac.documents.convert import ConversionOptions, convert_to_markdown
from drac.parsing import parse_markdown
from drac.ports import MemoryLedger
from tests.decks import HANDBOOK, make_pptx


def test_slide_titles_are_headings_and_same_named_sections_have_their_own_breadcrumbs():
    result = convert_to_markdown(
        make_pptx(HANDBOOK), "handbook.pptx", options=ConversionOptions(), vision=None,
        ledger=MemoryLedger(), document_id="deck",
    )  # fmt: skip
    assert result.status == "ok" and result.pages == 6  # 7 slides, one hidden
    headings = re.findall(r"^(#+) (.+)$", result.markdown, re.MULTILINE)
    assert [(len(marks), text) for marks, text in headings] == [
        (1, "Acme Travel Handbook"),
        (2, "1. CORPORATE"),
        (3, "Eligibility"),
        (2, "2. RETAIL"),
        (3, "Eligibility"),
        (3, "Booking"),
        (4, "Online"),
        (4, "By phone"),
    ]
    assert "Not for export" not in result.markdown
    elements = parse_markdown(result.markdown)
    titles = {element.id: element.title for element in elements if element.is_heading}

    def trail(text: str) -> list[str]:
        [element] = [e for e in elements if not e.is_heading and text in e.text]
        return [titles[ancestor] for ancestor in element.ancestors]

    assert trail("one year of service") == ["Acme Travel Handbook", "1. CORPORATE", "Eligibility"]
    assert trail("loyalty card") == ["Acme Travel Handbook", "2. RETAIL", "Eligibility"]
    assert trail("Call the desk") == ["Acme Travel Handbook", "2. RETAIL", "Booking", "By phone"]
