"""The conversion-fidelity scorer on tiny hand-made Markdown with known answers."""

from __future__ import annotations

import pytest

from drac.evaluation.fidelity import (
    Fidelity,
    lcs_length,
    score_conversion,
    unprintable_characters,
)


def test_identical_text_scores_perfectly() -> None:
    source = (
        "# Title\n\nOne sentence here. Another one.\n\n- first item\n- second item\n\n"
        "| Model | Price |\n| --- | --- |\n| A1 | 10 |\n"
    )
    score = score_conversion(source, source)
    assert score.source_words == score.output_words == score.matched_words
    assert score.word_recall == score.word_precision == score.reading_order == 1.0
    assert (score.headings, score.headings_found) == (1, 1)
    assert (score.table_cells, score.table_cells_found) == (1, 1)
    assert (score.list_items, score.list_items_kept) == (2, 2)
    assert (score.paragraphs, score.paragraphs_split) == (1, 0)
    assert score.unprintable == 0


def test_word_recall_and_precision_count_repetitions() -> None:
    score = score_conversion("red red blue green", "red blue blue extra")
    assert (score.source_words, score.output_words, score.matched_words) == (4, 4, 2)
    assert score.word_recall == 0.5 and score.word_precision == 0.5


def test_a_control_character_inside_a_word_costs_the_word_and_is_counted() -> None:
    score = score_conversion("it is transparent", "it is trans\x02parent")
    assert score.matched_words == 2 and score.word_recall == pytest.approx(2 / 3)
    assert score.unprintable == 1


def test_unprintable_characters_are_controls_replacement_and_private_use() -> None:
    assert unprintable_characters("a\tb\nc") == 0
    assert unprintable_characters("\x02\x7f\x85\ufffd\ue000 ok ₹ ﬁ") == 5


def test_reading_order_is_the_lcs_over_shared_words() -> None:
    assert lcs_length(["a", "b", "c", "d"], ["b", "a", "c", "d"]) == 3
    assert lcs_length([], ["a"]) == 0
    assert lcs_length(["x", "y", "z"], ["z", "y", "x"]) == 1
    score = score_conversion("alpha beta gamma delta", "gamma delta alpha beta")
    assert score.word_recall == 1.0 and score.reading_order == 0.5


def test_lcs_matches_the_quadratic_definition() -> None:
    a = ["the", "cat", "sat", "on", "the", "mat", "with", "the", "hat"]
    b = ["a", "cat", "on", "a", "mat", "sat", "the", "hat", "the"]
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = (
                table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
            )
    assert lcs_length(a, b) == table[-1][-1]


def test_headings_need_text_and_level_for_recall() -> None:
    source = "# Guide\n\n## Fees\n\ntext\n\n## Terms\n\nmore\n"
    output = "# Guide\n\n### Fees\n\ntext\n\nTerms\n\nmore\n"
    score = score_conversion(source, output)
    assert score.headings == 3
    assert score.headings_text_found == 2 and score.headings_found == 1
    assert score.heading_recall == pytest.approx(1 / 3)


def test_heading_levels_count_from_the_documents_top_heading() -> None:
    source = "## Plan\n\n### Options\n\nbody\n"
    assert score_conversion(source, "# Plan\n\n## Options\n\nbody\n").headings_found == 2
    assert score_conversion(source, "# Plan\n\n### Options\n\nbody\n").headings_found == 1


def test_a_table_cell_counts_only_with_its_key_and_header_in_one_element() -> None:
    source = (
        "| Model | Engine | Price |\n| --- | --- | --- |\n| A1 | V6 | 100 |\n| B2 | V8 | 200 |\n"
    )
    faithful = score_conversion(source, source)
    assert (faithful.table_cells, faithful.table_cells_found) == (4, 4)
    merged = "| Model | Engine Price |\n| --- | --- |\n| A1 | V6 100 |\n| B2 | V8 200 |\n"
    assert score_conversion(source, merged).table_cells_found == 0
    prose = "Model Engine Price\n\nA1 V6 100\n\nB2 V8 200\n"
    assert score_conversion(source, prose).table_cells_found == 0
    sentences = "Model A1: Engine V6, Price 100.\n\nModel B2: Engine V8, Price 200.\n"
    assert score_conversion(source, sentences).table_cells_found == 4


def test_a_header_promoted_from_the_first_row_loses_the_cells() -> None:
    source = "| Model | Price |\n| --- | --- |\n| A1 | 100 |\n| B2 | 200 |\n"
    promoted = "Model Price\n\n| A1 | 100 |\n| --- | --- |\n| B2 | 200 |\n"
    score = score_conversion(source, promoted)
    assert (score.table_cells, score.table_cells_found) == (2, 0)


def test_list_items_must_stay_in_a_list() -> None:
    source = "- apples and pears\n- plums\n  1. nested one\n"
    assert score_conversion(source, source).list_items == 3
    as_paragraphs = "apples and pears\n\nplums\n\nnested one\n"
    score = score_conversion(source, as_paragraphs)
    assert (score.list_items, score.list_items_kept) == (3, 0)
    as_table = "| apples and pears | plums |\n| --- | --- |\n| nested one | |\n"
    assert score_conversion(source, as_table).list_items_kept == 0


def test_a_paragraph_cut_mid_sentence_is_counted_and_one_cut_at_a_sentence_end_is_not() -> None:
    source = "In emergencies, education and care come first. Then we rest.\n"
    mid = "In emergencies,\n\neducation and care come first. Then we rest.\n"
    at_end = "In emergencies, education and care come first.\n\nThen we rest.\n"
    page = "In emergencies, education\n\n<!-- Page 2 -->\n\nand care come first. Then we rest.\n"
    assert score_conversion(source, source).paragraphs_split == 0
    assert score_conversion(source, mid).paragraphs_split == 1
    assert score_conversion(source, at_end).paragraphs_split == 0
    assert score_conversion(source, page).paragraphs_split == 1
    assert score_conversion(source, mid).paragraphs == 1
    with_break = "**Hours:** 9 AM to 6 PM\n**Qualifications:** a degree\n"
    split_at_break = "**Hours:** 9 AM to 6 PM\n\n### Qualifications: a degree\n"
    assert score_conversion(with_break, split_at_break).paragraphs_split == 0


def test_page_markers_and_markup_are_not_words() -> None:
    score = score_conversion("**Bold** words", "<!-- Page 1 -->\n\nBold *words*")
    assert score.word_recall == score.word_precision == 1.0


def test_scores_add_up_over_documents() -> None:
    one = score_conversion("a1 b1 c1", "a1 b1")
    two = score_conversion("d1 e1", "d1 e1 f1")
    total = one + two
    assert total.documents == 2
    assert (total.source_words, total.matched_words, total.output_words) == (5, 4, 5)
    assert total.word_recall == 0.8
    assert Fidelity(documents=0).word_recall == 1.0  # nothing to find: nothing lost
