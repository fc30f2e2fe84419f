"""parse_markdown: stable IDs, verbatim text, tables, pages, lists, code, headings, splitting."""

from __future__ import annotations

import gc
import random
import re
import time
import tracemalloc

import pytest

from drac.errors import DocumentError
from drac.ingest import element_config
from drac.models import Element, ElementKind, ParseConfig, Strategy
from drac.parsing import parse_markdown, split_text


def ids(elements: list[Element]) -> list[str]:
    return [element.id for element in elements]


def content(elements: list[Element]) -> list[Element]:
    return [element for element in elements if not element.is_heading]


# --- identity and verbatim text ------------------------------------------------------------


def test_ids_are_identical_across_runs(markdown_fixtures: dict[str, str]) -> None:
    for name, markdown in markdown_fixtures.items():
        first = parse_markdown(markdown)
        second = parse_markdown(markdown)
        assert first == second, name
        assert len(set(ids(first))) == len(first), f"{name}: duplicate IDs"


def test_ids_are_numbered_in_document_order(markdown_fixtures: dict[str, str]) -> None:
    elements = parse_markdown(markdown_fixtures["baggage_allowance.md"])
    headings = [e.id for e in elements if e.is_heading]
    paragraphs = [e.id for e in elements if not e.is_heading]
    assert headings == [f"h{i}" for i in range(1, len(headings) + 1)]
    assert paragraphs == [f"p{i}" for i in range(1, len(paragraphs) + 1)]


def test_every_element_text_is_an_exact_slice_of_the_source(
    markdown_fixtures: dict[str, str],
) -> None:
    for name, markdown in markdown_fixtures.items():
        position = 0
        for element in parse_markdown(markdown):
            assert element.text, f"{name}: {element.id} is empty"
            found = markdown.find(element.text, position)
            assert found >= 0, f"{name}: {element.id} is not verbatim / out of order"
            if element.table_header:
                assert element.table_header in markdown
            position = found if element.table_id else found + len(element.text)


def test_no_source_text_is_lost(markdown_fixtures: dict[str, str]) -> None:
    """Every non-blank source line (except rules and table headers) lands in some element."""
    for name, markdown in markdown_fixtures.items():
        elements = parse_markdown(markdown)
        covered = "\n".join(e.text + "\n" + (e.table_header or "") for e in elements)
        for line in markdown.splitlines():
            stripped = line.strip()
            if not stripped or stripped == "---" or stripped.startswith("<!--"):
                continue
            assert stripped in covered, f"{name}: line dropped: {stripped!r}"


def test_fixture_structure_of_a_real_document(markdown_fixtures: dict[str, str]) -> None:
    elements = parse_markdown(markdown_fixtures["baggage_allowance.md"])
    by_id = {e.id: e for e in elements}
    assert by_id["h1"].level == 1 and by_id["h1"].title == "CloudWay 24 Baggage Allowance Policy"
    assert by_id["h2"].title == "Cabin Baggage Allowance"
    assert by_id["h2"].ancestors == ("h1",)
    rows = [e for e in elements if e.kind is ElementKind.TABLE_ROW]
    assert len({row.table_id for row in rows}) == 2
    assert len(rows) == 8  # four classes in each of the two tables
    quote = next(e for e in elements if e.kind is ElementKind.QUOTE)
    assert quote.text.startswith("> *In addition")
    assert quote.ancestors == ("h1", "h2")


# --- pipe tables ----------------------------------------------------------------------------

PIPE = """Intro before the table.
| Plan | Price |
|------|------:|
| Basic | 10 |
| Pro | 20 |
| Max | 30 |
Text right after the table.
"""


def test_pipe_table_rows_carry_header_and_separator() -> None:
    elements = parse_markdown(PIPE)
    rows = [e for e in elements if e.kind is ElementKind.TABLE_ROW]
    assert [row.text for row in rows] == ["| Basic | 10 |", "| Pro | 20 |", "| Max | 30 |"]
    assert {row.table_header for row in rows} == {"| Plan | Price |\n|------|------:|"}
    assert len({row.table_id for row in rows}) == 1 and rows[0].table_id is not None


def test_text_around_a_table_is_kept() -> None:
    texts = [e.text for e in parse_markdown(PIPE)]
    assert texts[0] == "Intro before the table."
    assert "Text right after the table." in texts[-1]


def test_two_tables_get_distinct_table_ids() -> None:
    markdown = "| a |\n|---|\n| 1 |\n\nBetween.\n\n| b |\n|---|\n| 2 |\n"
    rows = [e for e in parse_markdown(markdown) if e.table_id]
    assert [row.table_id for row in rows] == ["t1", "t2"]
    assert [row.table_header for row in rows] == ["| a |\n|---|", "| b |\n|---|"]


def test_header_only_table_is_one_element() -> None:
    elements = parse_markdown("| a | b |\n|---|---|\n")
    assert len(elements) == 1
    assert elements[0].text == "| a | b |\n|---|---|"


# --- grid tables ----------------------------------------------------------------------------

GRID = """Intro before the grid.

+-------+-------+
| Name  | Value |
+=======+=======+
| one   | 1     |
+-------+-------+
| two   | 2     |
| more  |       |
+-------+-------+

After the grid.
"""


def test_grid_table_with_header_separator() -> None:
    elements = parse_markdown(GRID)
    assert elements[0].text == "Intro before the grid."
    assert elements[-1].text == "After the grid."
    rows = [e for e in elements if e.kind is ElementKind.TABLE_ROW]
    assert len(rows) == 2
    header = "+-------+-------+\n| Name  | Value |\n+=======+=======+"
    assert all(row.table_header == header for row in rows)
    assert rows[0].text == "| one   | 1     |\n+-------+-------+"
    # a multi-line grid row stays one element
    assert rows[1].text == "| two   | 2     |\n| more  |       |\n+-------+-------+"


def test_grid_table_without_header_separator_uses_first_row_as_header() -> None:
    markdown = "+---+---+\n| a | b |\n+---+---+\n| 1 | 2 |\n+---+---+\n| 3 | 4 |\n+---+---+\n"
    rows = parse_markdown(markdown)
    assert [row.kind for row in rows] == [ElementKind.TABLE_ROW] * 2
    assert rows[0].table_header == "+---+---+\n| a | b |\n+---+---+"
    assert rows[1].text == "| 3 | 4 |\n+---+---+"


def test_grid_table_lines_are_not_taken_for_lists_or_headings() -> None:
    # '+---' could read as a list item marker, '+===' under text as a setext heading
    rows = parse_markdown(GRID)
    assert not any(e.is_heading for e in rows)
    assert not any(e.kind is ElementKind.LIST for e in rows)


# --- pages ----------------------------------------------------------------------------------


def test_no_page_markers_means_page_one(markdown_fixtures: dict[str, str]) -> None:
    assert {e.page for e in parse_markdown(markdown_fixtures["baggage_allowance.md"])} == {1}


def test_page_markers_and_failed_page_markers_set_pages(
    markdown_fixtures: dict[str, str],
) -> None:
    elements = parse_markdown(markdown_fixtures["grid_and_pages.md"])
    page = {e.title if e.is_heading else e.text.split("\n")[0]: e.page for e in elements}
    assert page["Product Handbook"] == 1
    assert page["| Phone        | 24 months | Parts and labour |"] == 1
    assert page["Claims need the original receipt."] == 1
    assert page["Service Levels"] == 2
    assert page["- Standard repair: 10 working days"] == 2
    assert page["Contact"] == 3  # set by "<!-- Page 3: conversion failed: ... -->"
    assert page["Write to support for anything else."] == 3
    assert not any("<!--" in e.text for e in elements)


def test_page_marker_forms() -> None:
    markdown = (
        "Before.\n\n<!--Page 4-->\n\nA\n\n<!-- page 7 -->\nB\n\n"
        "<!-- Page 9: conversion failed: model returned -> nothing -->\n\nC\n"
    )
    pages = {e.text: e.page for e in parse_markdown(markdown)}
    assert pages == {"Before.": 1, "A": 4, "B": 7, "C": 9}


def test_other_comments_do_not_change_pages_or_become_content() -> None:
    elements = parse_markdown("<!-- Page 2 -->\n\n<!-- note to self -->\n\nText.\n")
    assert [(e.text, e.page) for e in elements] == [("Text.", 2)]


# --- lists, code, headings ------------------------------------------------------------------


def test_nested_list_is_one_element() -> None:
    markdown = "- a\n- b\n  - b1\n    - b1x\n  - b2\n- c\n\n1. one\n   1. one.one\n2. two\n"
    elements = parse_markdown(markdown)
    assert [e.kind for e in elements] == [ElementKind.LIST, ElementKind.LIST]
    assert elements[0].text == "- a\n- b\n  - b1\n    - b1x\n  - b2\n- c"
    assert elements[1].text == "1. one\n   1. one.one\n2. two"


def test_deeply_nested_list_does_not_break() -> None:
    markdown = "".join("  " * depth + f"- level {depth}\n" for depth in range(60))
    elements = parse_markdown(markdown)
    assert "".join(e.text for e in elements).count("- level") == 60
    assert all(e.text in markdown for e in elements)


def test_code_fence_with_hash_lines_is_not_a_heading() -> None:
    markdown = (
        "# Real\n\n```python\n# not a heading\n## nor this\nx = 1\n```\n\n~~~\n# tilde\n~~~\n"
    )
    elements = parse_markdown(markdown)
    assert [e.id for e in elements if e.is_heading] == ["h1"]
    code = [e for e in elements if e.kind is ElementKind.CODE]
    assert [c.text for c in code] == [
        "```python\n# not a heading\n## nor this\nx = 1\n```",
        "~~~\n# tilde\n~~~",
    ]
    assert all(c.ancestors == ("h1",) for c in code)


def test_headings_without_content() -> None:
    markdown = "# A\n## B\n### C\n## D\n\nOnly D has text.\n# E\n"
    elements = parse_markdown(markdown)
    assert ids(elements) == ["h1", "h2", "h3", "h4", "p1", "h5"]
    by_id = {e.id: e for e in elements}
    assert by_id["h3"].ancestors == ("h1", "h2")
    assert by_id["h4"].ancestors == ("h1",)  # a sibling closes B and C
    assert by_id["p1"].ancestors == ("h1", "h4")
    assert by_id["h5"].ancestors == ()


def test_setext_headings() -> None:
    markdown = "Main Title\n==========\n\nIntro.\n\nSub Title\n---------\n\nBody.\n"
    elements = parse_markdown(markdown)
    assert [(e.id, e.level, e.title) for e in elements if e.is_heading] == [
        ("h1", 1, "Main Title"),
        ("h2", 2, "Sub Title"),
    ]
    assert elements[0].text == "Main Title\n=========="
    assert elements[-1].ancestors == ("h1", "h2")


def test_heading_levels_skip_and_come_back() -> None:
    elements = parse_markdown("# A\n#### Deep\n\nx\n\n## B\n\ny\n")
    by_text = {e.text: e for e in elements}
    assert by_text["x"].ancestors == ("h1", "h2")
    assert by_text["y"].ancestors == ("h1", "h3")


def test_list_broken_by_a_heading_does_not_bleed_into_the_heading() -> None:
    markdown = "- one\n- two\n## Next\n- three\n- four\n# Top\nText.\n"
    elements = parse_markdown(markdown)
    assert [(e.id, e.text) for e in elements] == [
        ("p1", "- one\n- two"),
        ("h1", "## Next"),
        ("p2", "- three\n- four"),
        ("h2", "# Top"),
        ("p3", "Text."),
    ]


def test_paragraph_broken_by_a_heading_does_not_bleed() -> None:
    elements = parse_markdown("line one\nline two\n# Head\nafter\n")
    assert [e.text for e in elements] == ["line one\nline two", "# Head", "after"]


def test_quote_and_thematic_break() -> None:
    elements = parse_markdown("> quoted\n> more\n\n---\n\n***\n\nplain\n")
    assert [(e.kind, e.text) for e in elements] == [
        (ElementKind.QUOTE, "> quoted\n> more"),
        (ElementKind.PARAGRAPH, "plain"),
    ]


def test_crlf_is_not_part_of_the_contract_but_does_not_crash() -> None:
    elements = parse_markdown("# A\r\n\r\ntext\r\n")
    assert elements[0].kind is ElementKind.HEADING


# --- oversized elements ---------------------------------------------------------------------


def test_oversized_paragraph_is_split_into_numbered_pieces() -> None:
    sentence = "The quick brown fox jumps over the lazy dog number {}. "
    giant = "".join(sentence.format(i) for i in range(60)).strip()
    markdown = f"# H\n\nshort one\n\n{giant}\n\nshort two\n"
    elements = parse_markdown(markdown, ParseConfig(max_element_chars=300))
    pieces = [e for e in elements if e.id.startswith("p2.")]
    assert len(pieces) >= 10
    assert [e.id for e in pieces] == [f"p2.{i}" for i in range(1, len(pieces) + 1)]
    assert all(len(e.text) <= 300 for e in pieces)
    assert all(e.text in giant for e in pieces)
    assert all(e.text.endswith(".") for e in pieces)  # cut at sentence ends
    assert " ".join(e.text for e in pieces) == giant  # nothing lost
    assert [e.id for e in elements][-1] == "p3"  # numbering continues after the pieces


def test_oversized_code_block_is_split_at_line_boundaries() -> None:
    lines = [f"value_{i} = compute({i})" for i in range(120)]
    code = "```\n" + "\n".join(lines) + "\n```"
    elements = parse_markdown(code, ParseConfig(max_element_chars=200))
    assert len(elements) > 5
    assert all(e.kind is ElementKind.CODE and len(e.text) <= 200 for e in elements)
    assert "\n".join(e.text for e in elements) == code  # split only at newlines


def test_oversized_table_row_is_split_and_keeps_its_header() -> None:
    row = "| " + " ".join(f"cell{i}" for i in range(150)) + " | end |"
    markdown = f"| h | i |\n|---|---|\n| small | row |\n{row}\n"
    config = ParseConfig(max_element_chars=300)
    elements = parse_markdown(markdown, config)
    pieces = [e for e in elements if e.id.startswith("p2.")]
    assert len(pieces) > 1
    for piece in pieces:
        assert piece.table_header == "| h | i |\n|---|---|"
        assert len(piece.text) + len(piece.table_header) + 1 <= config.max_element_chars
        assert piece.text in row


def test_cjk_text_is_split_at_sentence_ends() -> None:
    ends = "。！？"
    sentences = [f"这是第{i}个句子，内容足够长以便测试分割功能{ends[i % 3]}" for i in range(40)]
    text = "".join(sentences)
    elements = parse_markdown(text, ParseConfig(max_element_chars=100))
    assert len(elements) > 5
    assert "".join(e.text for e in elements) == text
    for element in elements:
        assert len(element.text) <= 100
        assert element.text[-1] in "。！？"


def test_split_text_prefers_blank_lines_then_lines_then_words() -> None:
    assert split_text("aaa\n\nbbb", 5) == ["aaa", "bbb"]
    assert split_text("aaa bbb\nccc", 8) == ["aaa bbb", "ccc"]
    assert split_text("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]
    with pytest.raises(ValueError):
        split_text("abc", 0)


# --- robustness -----------------------------------------------------------------------------


@pytest.mark.parametrize("markdown", ["", "   ", "\n\n\n", "---\n\n***\n", "<!-- Page 3 -->\n"])
def test_empty_or_contentless_input_gives_no_elements(markdown: str) -> None:
    assert parse_markdown(markdown) == []


def test_binary_like_junk_does_not_crash() -> None:
    generator = random.Random(7)
    junk = bytes(generator.randrange(256) for _ in range(20_000)).decode("latin-1")
    junk = junk.replace("\r", "\n")
    elements = parse_markdown(junk)
    for element in elements:
        assert element.text in junk
        assert len(element.text) <= ParseConfig().max_element_chars


@pytest.mark.parametrize(
    "markdown",
    [
        "```\nnever closed\n# x\n",
        "| a |\n|---|\n| unterminated",
        "+---+\n| broken grid\n",
        "<!-- Page 2 never closed\n\ntext\n",
        "# \n\n#\n\n> \n\n- \n",
        "[link](<unclosed\n\n*emph\n",
        "\x00\x01\x02 control chars\x7f\n",
    ],
)
def test_malformed_markdown_gives_verbatim_elements(markdown: str) -> None:
    for element in parse_markdown(markdown):
        assert element.text in markdown


# --- linear time ----------------------------------------------------------------------------


def _cost(markdown: str) -> float:
    gc.collect()
    start = time.process_time()
    parse_markdown(markdown)
    return time.process_time() - start


def _best_ratio(small: str, large: str) -> float:
    return min(_cost(large) / max(_cost(small), 1e-3) for _ in range(2))


UNIT = (
    "## Heading {i}\n\nA paragraph with some words. Another sentence here.\n\n"
    "- item one\n- item two\n\n| a | b |\n|---|---|\n| {i} | 2 |\n\n<!-- Page {i} -->\n\n"
)


@pytest.mark.slow
def test_parsing_time_grows_linearly_with_size() -> None:
    small = "".join(UNIT.format(i=i) for i in range(300))
    large = "".join(UNIT.format(i=i) for i in range(1_200))
    assert _best_ratio(small, large) < 8  # 4x the input; quadratic would be ~16


@pytest.mark.parametrize(
    "unit",
    ["<!-- unclosed comment\n", "<!-- Page 3 unclosed\n", "text <!-- x\n"],
    ids=["comments", "page-markers", "inline"],
)
@pytest.mark.slow
def test_unclosed_comments_are_not_quadratic(unit: str) -> None:
    # A regex with .*? over unclosed "<!--" scanned to the end for each one: 12,000 lines
    # took minutes. Now both sizes take milliseconds.
    small, large = unit * 3_000, unit * 12_000
    assert _cost(large) < 2.0
    assert _best_ratio(small, large) < 8


def test_page_marker_number_is_taken_from_the_marker_itself() -> None:
    elements = parse_markdown("<!-- Page 3 <!-- Page 5 -->\n\nX\n")
    assert [(e.text, e.page) for e in elements] == [("X", 5)]


def test_ids_only_use_the_documented_shapes(markdown_fixtures: dict[str, str]) -> None:
    pattern = re.compile(r"^(h\d+|p\d+(\.\d+)?)$")
    for markdown in markdown_fixtures.values():
        assert all(pattern.match(e.id) for e in parse_markdown(markdown))


def _wide_table(columns: int, rows: int = 5) -> str:
    names = [f"Column name number {i} with more words" for i in range(columns)]
    header = "| " + " | ".join(names) + " |\n|" + "---|" * columns + "\n"
    body = "".join(
        "| " + " | ".join(f"{r * 100 + i} value" for i in range(columns)) + " |\n"
        for r in range(rows)
    )
    return header + body


def test_row_shown_under_its_header_fits_the_element_limit() -> None:
    config = ParseConfig(max_element_chars=1200)
    for columns in (5, 20, 25, 40):
        for element in parse_markdown(_wide_table(columns), config):
            shown = (element.table_header + "\n" if element.table_header else "") + element.text
            assert len(shown) <= config.max_element_chars, columns


def test_a_header_too_wide_to_repeat_is_its_own_element_once() -> None:
    markdown = _wide_table(40)
    elements = parse_markdown(markdown, ParseConfig(max_element_chars=1200))
    header_lines = markdown.split("\n")[:2]
    assert all(e.table_header is None for e in elements)
    assert {e.table_id for e in elements} == {"t1"}
    assert elements[0].text.startswith(header_lines[0][:50])
    joined = "\n".join(e.text for e in elements)
    assert joined.count("Column name number 0 ") == 1
    assert "| 400 value |" in joined  # the last row is kept


def test_a_moderately_wide_header_is_still_repeated() -> None:
    elements = parse_markdown(_wide_table(8), ParseConfig(max_element_chars=1200))
    assert len(elements) == 5
    assert all(e.table_header and e.table_header.startswith("| Column") for e in elements)


def test_indented_code_keeps_its_first_line_indent() -> None:
    markdown = "Intro.\n\n    indented code\n    # not a heading\n\nAfter.\n"
    elements = parse_markdown(markdown)
    assert [(e.kind, e.text) for e in elements] == [
        (ElementKind.PARAGRAPH, "Intro."),
        (ElementKind.CODE, "    indented code\n    # not a heading"),
        (ElementKind.PARAGRAPH, "After."),
    ]
    # re-parsed on its own, the element is still a code block
    assert parse_markdown(elements[1].text)[0].kind is ElementKind.CODE


def test_smallest_document_parses_with_any_allowed_parser_version() -> None:
    # Copying a parser library's private loop made this raise AttributeError with older
    # releases the dependency range allows; scripts/test_lowest.sh runs it at the lowest ones.
    elements = parse_markdown("# A\n\ntext")
    assert [(e.id, e.kind, e.text, e.ancestors) for e in elements] == [
        ("h1", ElementKind.HEADING, "# A", ()),
        ("p1", ElementKind.PARAGRAPH, "text", ("h1",)),
    ]


def test_link_reference_definitions_are_kept_as_text() -> None:
    elements = parse_markdown("See [the site][s].\n\n[s]: https://example.com 'Site'\n")
    assert [e.text for e in elements] == [
        "See [the site][s].",
        "[s]: https://example.com 'Site'",
    ]


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        # mistune failed (KeyError) on a quote after text, ended by a list that cannot
        # interrupt text, and put a list before the quote it ended when a block ended the list
        ("Text.\n> quoted\n2. two\n", ["Text.", "> quoted", "2. two"]),
        ("> quoted\n* item\n> again\n", ["> quoted", "* item", "> again"]),
        ("> quoted\n- item\n# Head\n", ["> quoted", "- item", "# Head"]),
    ],
)
def test_blocks_come_in_document_order(markdown: str, expected: list[str]) -> None:
    assert [e.text for e in parse_markdown(markdown)] == expected


@pytest.mark.slow
def test_deeply_indented_list_parses_in_memory_linear_in_its_size() -> None:
    # Parsing each nesting level as a document of its own copied the list at every level:
    # 2,000 levels (4 MB) peaked at 167 MB traced, 10,000 levels (100 MB) at 4.3 GB RSS.
    markdown = "".join("  " * depth + f"- level {depth}\n" for depth in range(2_000))
    tracemalloc.start()
    try:
        elements = parse_markdown(markdown)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 * len(markdown), f"peak {peak:,} bytes for {len(markdown):,} of Markdown"
    assert elements[0].kind is ElementKind.LIST
    assert all(e.kind is ElementKind.LIST and e.text in markdown for e in elements)
    assert "- level 1999" in elements[-1].text


_REPEATS = 20_000
HOSTILE = {
    "tag with many attributes": "<x" + " a=b\tc" * _REPEATS + "\n",
    "long reference labels": ("[" + "a" * 990 + "]:\n") * 50,
    "wide table": "|" + "x|" * _REPEATS + "\n|" + "-|" * _REPEATS + "\n|" + "y|" * _REPEATS,
    "escaped pipes": "| " + "\\|" * _REPEATS + " |\n|---|\n",
    "almost a thematic break": "- " * _REPEATS + "x\n",
    "almost a grid border": "+" + "-+" * _REPEATS + "x\n| a |\n",
    "hashes": "#" * _REPEATS + "\n",
    "backtick fence info": "```" + "`a" * _REPEATS + "\n",
    "quote markers": ">" * _REPEATS + "\n",
    "list markers": "1. " * _REPEATS + "\n",
    "quotes around lists": "".join("> " * (i % 50) + "- x\n" for i in range(5_000)),
    "unbroken text": "a " * _REPEATS * 2,
}


@pytest.mark.parametrize("markdown", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_lines_parse_in_linear_time(markdown: str) -> None:
    # Each takes milliseconds; a pattern that backtracks over the line takes minutes or more:
    # mistune's HTML attribute pattern took 38 s on "<x" + " a=b\tc" * 26 (4x per 2 more).
    start = time.process_time()
    elements = parse_markdown(markdown)
    assert time.process_time() - start < 2.0
    assert all(element.text in markdown for element in elements)


def test_a_document_with_more_elements_than_allowed_fails_while_parsing() -> None:
    """Each element costs memory while parsed: 2 MB of one-letter headings made 400,000 of
    them (about 600 MiB), so the count is bounded and the document fails, naming the limit."""
    markdown = "".join(f"# {n}\n\n" for n in range(1, 8))
    assert len(parse_markdown(markdown, ParseConfig(max_elements=7))) == 7
    with pytest.raises(DocumentError, match="more than 6 elements"):
        parse_markdown(markdown, ParseConfig(max_elements=6))
    assert element_config(Strategy(), ParseConfig(max_elements=6)).max_elements == 6
