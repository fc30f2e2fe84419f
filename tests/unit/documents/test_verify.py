"""The conversion verifier (issue 21): what a page's Markdown says that its text layer does
not, what it leaves out, and rows put together from two rows; normalised so that a faithful
transcription flags nothing."""

from __future__ import annotations

import time

import pytest

from drac.documents.vision.verify import (
    VerificationSummary,
    chunk_flags,
    hold_back,
    page_lines,
    review_conversion,
    summarise,
    verify_markdown,
    verify_page,
)

LAYER = (
    "Price plans 2024\r\nPlan Price Seats\r\nBasic $1,200.00 5\r\nTeam $3,450.50 25\r\n"
    "Enterprise $12,000 250"
)
TABLE = "| Plan | Price | Seats |\n| --- | --- | --- |\n"


def _rows(*rows: str) -> str:
    return "# Price plans 2024\n\n" + TABLE + "\n".join(rows)


HONEST = _rows(
    "| Basic | $1,200.00 | 5 |", "| Team | $3,450.50 | 25 |", "| Enterprise | $12,000 | 250 |"
)


def _check(markdown: str, layer: str = LAYER) -> dict[str, tuple[str, ...]]:
    found = verify_page(1, markdown, layer)
    assert found is not None
    return {
        "unsupported": found.unsupported,
        "missing": found.missing,
        "merged": found.suspect_rows,
    }


NOTHING = {"unsupported": (), "missing": (), "merged": ()}


@pytest.mark.parametrize(
    "markdown",
    [
        HONEST,
        # the method's one sentence per row, naming the headers, in another case
        "## PRICE PLANS 2024\n\n- Plan Basic: Price $1,200.00; Seats 5.\n"
        "- Plan Team: Price $3,450.50; Seats 25.\n- Plan Enterprise: Price $12,000; Seats 250.",
        # currency written after, separators dropped, emphasis and a link
        "**Price plans 2024**\n\nPlan [Basic](https://example.com): Price 1200.00 USD$, Seats 5."
        "\nPlan Team: Price 3450.50, Seats 25.\nPlan Enterprise: Price 12000, Seats 250.",
    ],
)
def test_a_faithful_transcription_flags_nothing(markdown: str) -> None:
    assert _check(markdown.replace("USD$", "$").replace(" USD", "")) == NOTHING


def test_text_layer_artefacts_are_normalised_away() -> None:
    layer = (
        "The ware-\nhouse in Pune opens at 10:30 for Cloud\ufffeLux members\n"
        "\u2022 Package: ffi12\u201318 LPA, \u20b91,24,999 per year\nStorage/RAMBattery\n3"
    )
    markdown = (
        "The warehouse in Pune opens at 10:30 for CloudLux members\n\n"
        "- Package: 12-18 LPA, ₹1,24,999 per year\n\nStorage/RAM Battery"
    )
    assert _check(markdown, layer) == NOTHING  # "3" alone is a page number: never missing


def test_an_invented_value_is_unsupported_and_the_real_one_missing() -> None:
    found = _check(_rows("| Basic | $1,300.00 | 5 |", "| Team | $3,450.50 | 25 |",
                         "| Enterprise | $12,000 | 250 |"))  # fmt: skip
    assert found == {"unsupported": ("1300.00",), "missing": ("1200.00",), "merged": ()}


def test_a_dropped_row_is_missing() -> None:
    found = _check(_rows("| Basic | $1,200.00 | 5 |", "| Team | $3,450.50 | 25 |"))
    assert found == {"unsupported": (), "missing": ("enterprise", "12000", "250"), "merged": ()}


def test_a_row_made_of_two_rows_is_a_suspect_merge() -> None:
    shifted = "| Basic | $3,450.50 | 25 |"  # Basic with Team's price and seats
    assert _check(_rows(shifted, "| Enterprise | $12,000 | 250 |"))["merged"] == (shifted,)
    collapsed = "| Basic Team | $1,200.00 $3,450.50 | 5 25 |"
    found = _check(_rows(collapsed, "| Enterprise | $12,000 | 250 |"))
    assert found == {"unsupported": (), "missing": (), "merged": (collapsed,)}
    sentence = "- Plan Basic: Price $3,450.50; Seats 25."
    assert _check(f"# Price plans 2024\n\n{sentence}")["merged"] == (sentence,)


def test_a_wrapped_cell_is_not_a_merge() -> None:
    layer = (
        "Model Storage Price\nVelvera Pad 11”\n128GB\n128GB /\n8GB\nIPS\nLCD\nStereo $399\n"
        "Velvera Pad 11”\n256GB\n256GB /\n8GB\nStereo $459"
    )
    markdown = (
        "| Model | Storage | Price |\n| --- | --- | --- |\n"
        '| Velvera Pad 11" 128GB | 128GB / 8GB IPS LCD Stereo | $399 |\n'
        '| Velvera Pad 11" 256GB | 256GB / 8GB Stereo | $459 |'
    )
    assert _check(markdown, layer) == NOTHING


def test_pages_without_text_are_not_judged_and_failed_pages_are_skipped() -> None:
    assert verify_page(1, "Anything 123", "") is None
    assert verify_page(1, "Anything 123", "  12  ") is None
    markdown = (
        "<!-- Page 1 -->\n\n" + HONEST + "\n\n<!-- Page 2: conversion failed: timeout -->\n\n"
        "<!-- Page 3 -->\n\nInvented 999"
    )
    found = verify_markdown(markdown, {1: LAYER, 2: LAYER})  # page 3 has no text layer
    assert [page.page for page in found] == [1] and found[0].flags == 0


def test_holding_back_replaces_only_the_pages_over_the_threshold() -> None:
    markdown = (
        "<!-- Page 1 -->\n\n"
        + HONEST
        + "\n\n<!-- Page 2 -->\n\n<!-- Page 2 -->\n\n"
        + _rows("| Basic | $9.99 | 5 |")
        + "\n\n<!-- Page 3 -->\n\nTail text.\n"
    )
    pages = verify_markdown(markdown, {1: LAYER, 2: LAYER})
    assert [page.flags for page in pages] == [0, 8]
    same, failures, summary = hold_back(markdown, summarise(pages), None)
    assert same == markdown and failures == [] and summary.held_back == ()
    held, failures, summary = hold_back(markdown, summarise(pages), 5)
    assert summary.held_back == (2,) and len(failures) == 1
    assert "$9.99" not in held and "Tail text." in held and "| Team | $3,450.50 | 25 |" in held
    assert "<!-- Page 2: conversion failed: held back: 8 verification flags" in held
    reviewed = review_conversion(markdown, pages, 8)
    assert reviewed.markdown == markdown and reviewed.failures == ()
    assert reviewed.warning == (
        "verification: 1 unsupported; 7 missing; 0 suspect merged rows on pages 2"
    )


def test_a_chunk_carries_the_flags_of_its_own_text() -> None:
    pages = verify_markdown(
        "<!-- Page 1 -->\n\n" + _rows("| Basic | $1,300.00 | 5 |", "| Team | $3,450.50 | 25 |"),
        {1: LAYER},
    )
    summary = summarise(pages)
    flags = chunk_flags(summary, [1], "Plans\n\n| Basic | $1,300.00 | 5 |")
    assert flags["unsupported"] == [{"page": 1, "token": "1300.00"}]
    assert {item["token"] for item in flags["missing"]} == {"1200.00", "enterprise", "12000", "250"}
    assert chunk_flags(summary, [1], "| Team | $3,450.50 | 25 |")["unsupported"] == []
    assert chunk_flags(summary, [2], "| Basic | $1,300.00 | 5 |")["unsupported"] == []
    assert VerificationSummary.model_validate_json(summary.model_dump_json()) == summary


@pytest.mark.slow
def test_hostile_text_costs_linear_time() -> None:
    """Untrusted Markdown and text layers: no pattern may backtrack (a model may answer
    anything; a PDF's text layer may hold up to 200,000 characters a page)."""
    cases = [
        ("<!--" * 20_000, "x" * 80_000),
        ("![" * 20_000 + "](" * 20_000, "- " * 40_000),
        ("|" + " |" * 40_000, "1," * 40_000),
        ("ware-\n" * 15_000, "a-\n" * 30_000),
        ("1" * 50_000 + "," + "2" * 50_000, "ffi" * 30_000 + "9"),
        ("Page", "page" + " " * 100_000 + "x"),
        ("| 1 | 2 | 9 |\n" * 1000, "1 2\n" * 30_000),  # rows whose values are on every line
        ("- Plan A 1 2 3\n" * 2000, "1 x\n2 y\n" * 20_000),
    ]
    for markdown, layer in cases:
        started = time.perf_counter()
        verify_page(1, markdown, layer)
        page_lines(layer)
        assert time.perf_counter() - started < 10, markdown[:20]  # measured: under 3 s
