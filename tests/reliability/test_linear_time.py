"""Every detector and parser entry point stays fast on pathological text.

The budget is generous (2 CPU seconds per call) while the real cost is milliseconds (RELIABILITY.md
lists the measured numbers): a regex that backtracks exponentially or quadratically on
200,000 characters blows through it by orders of magnitude, and that is what these tests catch.
"""

from __future__ import annotations

import contextlib
import resource
import time
from collections.abc import Callable

import pytest
from hostile_text import SIZE, TEXT_FAMILIES, comment_bomb, hostile_text
from pdfs import Text, make_pdf, text_page

from drac.documents.convert import decode_text
from drac.documents.intake.detect import DocumentFormat, detect_format
from drac.documents.offline.pages import offline_markdown
from drac.documents.row_sentences import rows_as_sentences
from drac.documents.vision.check import (
    check_batch,
    clean_model_markdown,
    page_texts,
    repair_markers,
)
from drac.errors import DracError
from drac.ingest import parse_document
from drac.models import Element, ElementKind, ParseConfig, Strategy
from drac.parsing import split_text
from drac.planning.answer import expand_ranges, parse_answer
from drac.planning.llm import preview

BUDGET_S = 2.0


def _element_preview(text: str) -> object:
    # Previews are made of parsed elements only, which the parser caps at max_element_chars.
    limit = ParseConfig().max_element_chars
    return preview(Element(id="p1", kind=ElementKind.PARAGRAPH, text=text[:limit], page=1), 240)


ENTRY_POINTS: dict[str, Callable[[str], object]] = {
    "detect_format": lambda text: detect_format(text.encode(), "input.md"),
    "detect_format (as .html)": lambda text: detect_format(text.encode(), "input.html"),
    "decode_text": lambda text: decode_text(text.encode()),
    "clean_model_markdown": clean_model_markdown,
    "check_batch": lambda text: check_batch(text, [1, 2, 3], {1: 900, 2: 900, 3: 900}),
    "repair_markers": lambda text: repair_markers(text, [4, 5]),
    "page_texts": page_texts,
    "parse_answer": parse_answer,
    "expand_ranges": lambda text: expand_ranges([text], ["p1", "p2"]),
    "parse_document": lambda text: parse_document(text, Strategy()),
    "split_text": lambda text: split_text(text, 1200),
    "rows_as_sentences": lambda text: rows_as_sentences(text, 1200),
    "planner preview": _element_preview,
}


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children: the machine running the suite is
    shared (other test workers, other jobs), so a wall clock measures the neighbours too."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _timed(function: Callable[[str], object], text: str) -> float:
    started = _cpu_seconds()
    # refusing the input with drac's own error is fine; any other exception is a bug
    with contextlib.suppress(DracError):
        function(text)
    return _cpu_seconds() - started


@pytest.mark.parametrize("family", sorted(TEXT_FAMILIES))
def test_every_text_entry_point_is_fast_on_pathological_input(family: str) -> None:
    text = hostile_text(family)
    slow = {}
    for name, function in ENTRY_POINTS.items():
        seconds = _timed(function, text)
        if seconds > BUDGET_S:
            slow[name] = round(seconds, 2)
    assert not slow, f"{family}: over the {BUDGET_S} s budget: {slow}"


@pytest.mark.parametrize("entry", ["parse_document", "split_text"])
def test_splitting_whitespace_runs_grows_linearly(entry: str) -> None:
    """split_text once joined whitespace-only units string by string (quadratic): 4x the
    input must cost well under 16x the time."""
    family = "fence then blank lines"
    small = _timed(ENTRY_POINTS[entry], hostile_text(family, SIZE // 4))
    large = _timed(ENTRY_POINTS[entry], hostile_text(family, SIZE))
    assert large < 8 * small + 0.05, f"4x the input took {large / max(small, 1e-6):.0f}x the time"


def test_the_comment_bomb_from_the_issue_is_detected_as_markdown_at_once() -> None:
    started = time.perf_counter()
    detection = detect_format(comment_bomb(40).encode(), "notes.md")
    assert time.perf_counter() - started < 0.5
    assert detection.format is DocumentFormat.MARKDOWN


def test_html_behind_many_comments_is_still_html() -> None:
    data = ("<?xml version='1.0'?>\n" + comment_bomb(200)).replace("# Title", "<html><body>")
    assert detect_format((data + "<p>x</p></body></html>").encode(), "page.html").format == "html"


def test_an_unclosed_comment_is_not_an_html_prologue() -> None:
    data = b"<!-- never closed\n<html><body><p>x</p></body></html>"
    assert detect_format(data, "page.txt").format is not DocumentFormat.HTML


def test_the_offline_converter_is_fast_on_pathological_text_lines() -> None:
    pages = []
    for family in sorted(TEXT_FAMILIES):
        sample = " ".join(hostile_text(family, 120)[:120].split()) or "x"
        lines = [Text(sample, 36, 760 - 14 * row, size=9) for row in range(50)]
        pages.append(text_page(lines))
    pdf = make_pdf(pages)
    started = time.perf_counter()
    result = offline_markdown(pdf)
    assert time.perf_counter() - started < BUDGET_S * 5
    assert len(result) == len(TEXT_FAMILIES)


def test_placing_a_file_table_of_the_most_rows_allowed_grows_linearly() -> None:
    """The file's table is matched line by line against the text layer: copying the table's
    word counts for each line made 5,000 rows cost 25 s of drac's own CPU (quadratic)."""
    from drac.documents.office.file_tables import _MAX_ROWS as MOST_ROWS  # the reader's cap
    from drac.documents.office.file_tables import FileTable
    from drac.documents.office.table_pages import place_tables

    def placed_in(rows: int) -> float:
        header = tuple(f"head{c}" for c in range(10))
        body = tuple(tuple(f"w{r}x{c}" for c in range(10)) for r in range(rows))
        lines = [" ".join(header)] + [" ".join(f"{w[:2]} {w[2:]}" for w in row) for row in body]
        lines.append("y" * 20_000)  # one long word after the table: no cells run together
        pages = [
            f"<!-- Page {n + 1} -->\n\n" + "\n\n".join(lines[at : at + 40])
            for n, at in enumerate(range(0, len(lines), 40))
        ]
        started = time.perf_counter()
        out = place_tables(pages, [FileTable(header=header, rows=body)])
        assert out[0].count("| head0 |") == 1  # placed (the test measures the real path)
        return time.perf_counter() - started

    small, large = placed_in(MOST_ROWS // 4), placed_in(MOST_ROWS)
    assert large < 8 * small + 0.2, f"4x the rows took {large / max(small, 1e-6):.0f}x the time"
    assert large < BUDGET_S


@pytest.mark.parametrize("reader", ["tables", "structure"])
def test_the_file_readers_read_unfinished_html_tags_linearly(reader: str) -> None:
    """The file-table and file-structure readers used `html.parser`, which scans to the end of
    the page once per unfinished `<a`: 40,000 of them took 4.1 s each (quadratic)."""
    from drac.documents.office.file_structure import _html_blocks
    from drac.documents.office.file_tables import _html_tables

    read = _html_tables if reader == "tables" else _html_blocks

    def cpu(count: int) -> float:
        started = time.process_time()
        read("<html><body><p>Text.</p>" + "<a" * count)
        return time.process_time() - started

    small, large = cpu(20_000), cpu(200_000)
    assert large < 25 * max(small, 0.02), f"{small:.4f} s -> {large:.4f} s"


def test_mending_broken_words_grows_linearly_in_the_pages_pieces() -> None:
    """Each piece starts a run of at most the file's longest word: a page of pieces that all
    nearly spell a word of the file costs time linear in its pieces."""
    from drac.documents.office.file_structure import FileBlock, Run
    from drac.documents.office.file_words import file_vocabulary, respell

    word = "maharashtra" * 4
    vocabulary = file_vocabulary([], [FileBlock(kind="paragraph", runs=(Run(text=word),))])
    piece = " ".join(word[:-1])  # every letter but the last: a run that never completes

    def mended_in(pieces: int) -> float:
        page = ["<!-- Page 1 -->\n\n" + " ".join([piece] * (pieces // len(word)))]
        started = time.perf_counter()
        assert respell(page, vocabulary) == page
        return time.perf_counter() - started

    small, large = mended_in(5_000), mended_in(20_000)
    assert large < 8 * small + 0.2, f"4x the pieces took {large / max(small, 1e-6):.0f}x the time"
    assert large < BUDGET_S
