"""Hostile decks and pages against the deck's lines (issue 17): a deck past the limits keeps
the text layer's blocks with a warning, and matching a deck's lines to a page stays linear."""

from __future__ import annotations

import time

from drac.documents.office import slides
from drac.documents.office.slide_lines import apply_lines, apply_slide
from drac.documents.office.slides import SlideLine, SlideText
from tests.decks import Para, Slide, make_pptx, slide_xml

PAGE = "<!-- Page 1 -->\n\nItem one wrapped\n\nover two lines\n\n- Item two"


def test_a_slide_past_the_line_limit_keeps_the_text_layers_blocks_with_a_warning():
    lines = [Para("Item one wrapped over two lines", bullet="char")]
    lines.append(Para("Item two", bullet="char"))
    crowded = lines + [Para(f"filler {n}", bullet="char") for n in range(slides._MAX_LINES)]
    deck = make_pptx([Slide("Fees", lines), Slide("Rates", crowded)])
    found, warnings = slides.read_slide_headings(deck)
    assert [len(slide.lines) for slide in found] == [3, 0]
    assert found[1].lines_left_out == slides._MAX_LINES + 3
    assert [hint.text for hint in found[1].headings] == ["Rates"]  # headings are still given
    assert warnings == [
        f"slides 2 hold more than {slides._MAX_LINES} lines; their paragraphs and lists are as"
        " the PDF's text layer shows them"
    ]
    assert apply_lines(PAGE, found[1].lines) == PAGE
    assert apply_lines(PAGE, found[0].lines) == (
        "<!-- Page 1 -->\n\n- Item one wrapped over two lines\n- Item two"
    )


def test_a_deck_the_worker_cannot_read_keeps_the_text_layers_blocks(monkeypatch):
    """The worker fails (here: its memory limit, past which the deck's parts cannot be read):
    no slide text and one warning; the converter then gives each page an empty SlideText,
    which leaves the page as the text layer made it."""
    from drac.documents.sandbox.containment import GIB, Limits

    monkeypatch.setattr(
        slides, "SLIDE_LIMITS", Limits(memory_bytes=GIB // 16, cpu_s=5.0, step_cpu_s=5.0,
                                       wall_s=20.0, preload=("drac.documents.office.slides",)),
    )  # fmt: skip
    body = "<a:r><a:t>x</a:t></a:r>" * (15 * 1024 * 1024 // 24)
    part = (
        '<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><p:cSld><p:spTree>'
        f"<p:sp><p:txBody><a:p>{body}</a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
    )
    deck = make_pptx([Slide("Title")], parts={"ppt/slides/slide1.xml": part})
    found, warnings = slides.read_slide_headings(deck)
    assert found == []
    assert len(warnings) == 1 and "paragraphs could not be read" in warnings[0]
    assert "memory limit" in warnings[0]
    assert apply_slide(PAGE, SlideText()) == PAGE


def test_matching_a_page_of_one_repeated_word_costs_linear_time():
    """Every deck line and every page word the same, as paragraphs and as table rows (read
    as lines when every word is found): each line tries a bounded number of places, so 8
    times the text costs well under 64 times the time."""
    for shape in ("word word word\n\n", "| word | word word |\n"):
        _linear(shape)


def _linear(shape: str) -> None:
    timings = []
    for count in (250, 2000):
        page = "<!-- Page 1 -->\n\n" + shape * count + "|" + "-" * 10_000
        lines = [SlideLine(text="word word word word", kind="bullet")] * (count // 4)
        best = float("inf")
        for _ in range(3):  # the best of three: load from other processes only adds
            started = time.perf_counter()
            out = apply_lines(page, lines)
            best = min(best, time.perf_counter() - started)
        timings.append(best)
        assert out.count("word") == 3 * count  # no word added or lost
    assert timings[1] < 16 * timings[0] + 0.05, f"{timings[1] / timings[0]:.0f}x the time"


def test_a_page_or_a_slide_past_the_size_limits_is_left_as_it_is():
    from drac.documents.office import slide_lines

    line = SlideLine(text="Item one wrapped over two lines", kind="bullet")
    big_page = PAGE + "\n\n" + " ".join(["w"] * slide_lines._MAX_PAGE_WORDS)
    assert apply_lines(big_page, [line]) == big_page
    filler = SlideLine(text="x" * slide_lines._MAX_SLIDE_CHARS, kind="paragraph")
    assert apply_lines(PAGE, [line, filler]) == PAGE
    assert apply_lines(PAGE, [line]) != PAGE  # the same line alone is applied


def test_numbers_past_the_largest_start_keep_the_deck_readable():
    """An automatic list starting at 99,999 (the largest start read) counts on past the
    number a line may carry: it stays at the largest, and the deck's headings and lines are
    still given (a number out of range once made the whole deck unreadable)."""
    slide = Slide("Steps", [Para(f"Step {n}", bullet="auto") for n in range(3)])
    part = slide_xml(slide).replace('type="arabicPeriod"', 'type="arabicPeriod" startAt="99999"')
    found = slides.slide_text(make_pptx([slide], parts={"ppt/slides/slide1.xml": part}))
    assert [hint.text for hint in found[0].headings] == ["Steps"]
    assert [(line.text, line.number) for line in found[0].lines[1:]] == [
        ("Step 0", 99999), ("Step 1", 99999), ("Step 2", 99999),
    ]  # fmt: skip
