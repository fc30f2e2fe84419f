from drac.documents.vision.check import (
    check_batch,
    clean_model_markdown,
    markers_in,
    page_texts,
    repair_markers,
)


def test_correct_markers_pass():
    md = "<!-- Page 6 -->\n\n# A\n\ntext\n\n<!-- Page 7 -->\n\nmore"
    report = check_batch(md, [6, 7])
    assert report.ok and report.warnings == ()


def test_missing_unexpected_and_out_of_order_markers_are_reported():
    assert "missing for pages 7" in check_batch("<!-- Page 6 -->\nx", [6, 7]).warnings[0]
    unexpected = check_batch("<!-- Page 6 -->\nx\n<!-- Page 9 -->\ny", [6])
    assert not unexpected.ok and "unexpected page markers for pages 9" in unexpected.warnings[0]
    swapped = check_batch("<!-- Page 7 -->\nx\n<!-- Page 6 -->\ny", [6, 7])
    assert not swapped.ok and "out of order" in swapped.warnings[0]


def test_table_syntax_is_a_warning_only():
    md = "<!-- Page 1 -->\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    report = check_batch(md, [1])
    assert report.ok
    assert report.table_lines == 3
    assert any("table syntax" in warning for warning in report.warnings)


def test_grid_tables_count_as_table_syntax():
    md = "<!-- Page 1 -->\n+---+---+\n| a | b |\n+===+===+\n"
    assert check_batch(md, [1]).table_lines == 3


def test_short_output_for_a_text_heavy_page_is_flagged():
    md = "<!-- Page 1 -->\n\nTiny.\n\n<!-- Page 2 -->\n\n" + "word " * 100
    report = check_batch(md, [1, 2], {1: 2000, 2: 400})
    assert report.short_pages == (1,)
    assert "page 1: output has 5 characters but its text layer has 2000" in report.warnings[0]


def test_short_check_ignores_pages_with_little_text():
    assert check_batch("<!-- Page 1 -->\n\nx", [1], {1: 50}).short_pages == ()


def test_clean_model_markdown_strips_a_code_fence_and_crlf():
    assert clean_model_markdown("```markdown\r\n# A\r\n\r\nb\r\n```\n") == "# A\n\nb"
    assert clean_model_markdown("  # A  \n") == "# A"


def test_repair_renumbers_batch_relative_markers():
    md, notes = repair_markers("<!-- Page 1 -->\na\n<!-- Page 2 -->\nb", [11, 12])
    assert markers_in(md) == [11, 12]
    assert "renumbered" in notes[0]


def test_repair_adds_a_missing_first_marker_and_drops_strays():
    md, notes = repair_markers("intro\n<!-- Page 99 -->\nrest", [4])
    assert markers_in(md) == [4]
    assert md.startswith("<!-- Page 4 -->")
    assert len(notes) == 2


def test_repair_leaves_correct_markdown_alone():
    md = "<!-- Page 3 -->\nx"
    assert repair_markers(md, [3]) == (md, [])


def test_the_pieces_after_a_repeated_marker_stay_apart_words() -> None:
    markdown = (
        "<!-- Page 1 -->\n\nRefunds take\n\n<!-- Page 2 -->\n\nTwo\n\n<!-- Page 1 -->\n\nseven days"
    )
    assert page_texts(markdown) == {1: "Refunds take\n\nseven days", 2: "Two"}
    assert page_texts("<!-- Page 1 -->\n\n<!-- Page 1 -->\n\nOnly text") == {1: "Only text"}
