"""Table rows of converted documents as one sentence each (issue 17, the paper's table rule)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from pdfs import Text, make_pdf

from drac.documents.convert import ConversionOptions, convert_to_markdown
from drac.documents.row_sentences import rows_as_sentences, stored_rows_differ
from drac.documents.spreadsheets import SpreadsheetOptions
from drac.models import DocumentRecord, ElementKind, TableRows, TokenUsage
from drac.parsing import parse_markdown
from drac.ports import MemoryLedger, ModelReply, VisionModel

LIMIT = 1200


def rewritten(markdown: str, limit: int = LIMIT) -> str:
    return rows_as_sentences(markdown, limit)[0]


def test_each_row_becomes_one_sentence_carrying_its_headers_and_the_rest_stays_verbatim():
    before = "<!-- Page 1 -->\n\n# Fleet\n\nOur engines:\n\n"
    table = "| Model | Engine | Price |\n|---|:---:|---:|\n| A | V8 | 100 |\n| B | V6 | 90 |\n"
    after = "\nPrices in **USD**.\n\n<!-- Page 2 -->\n\n## Notes\n\n- one\n- two\n"
    markdown, stats, kept = rows_as_sentences(before + table + after, LIMIT)
    assert markdown == (
        before + "Model: A; Engine: V8; Price: 100.\n\nModel: B; Engine: V6; Price: 90.\n" + after
    )
    assert (stats.rows, stats.split_rows, kept) == (2, 0, 0)


def test_the_sentences_are_paragraphs_one_element_per_row_and_other_elements_are_unchanged():
    markdown = (
        "<!-- Page 1 -->\n\n# T\n\nText.\n\n| K | V |\n|---|---|\n| a | 1 |\n| b | 2 |\n\n"
        "<!-- Page 2 -->\n\n| K | V |\n|---|---|\n| c | 3 |\n\nEnd.\n"
    )
    old, new = parse_markdown(markdown), parse_markdown(rewritten(markdown))
    rows = [e for e in new if e.text.startswith("K: ")]
    assert [(e.text, e.page, e.kind) for e in rows] == [
        ("K: a; V: 1.", 1, ElementKind.PARAGRAPH),
        ("K: b; V: 2.", 1, ElementKind.PARAGRAPH),
        ("K: c; V: 3.", 2, ElementKind.PARAGRAPH),
    ]
    assert not any(e.kind is ElementKind.TABLE_ROW for e in new)
    kept = [(e.text, e.page) for e in old if e.kind is not ElementKind.TABLE_ROW]
    assert [(e.text, e.page) for e in new if e not in rows] == kept


def test_ragged_rows_keep_every_cell_and_empty_cells_are_left_out():
    markdown = "| A | B | C |\n|---|---|---|\n| 1 | | 3 |\n| 4 |\n| 5 | 6 | 7 | 8 |\n|  |  |  |\n"
    assert rewritten(markdown) == "A: 1; C: 3.\n\nA: 4.\n\nA: 5; B: 6; C: 7; 8.\n"


def test_a_table_without_header_names_writes_its_values_and_a_header_only_table_its_names():
    assert rewritten("| | |\n|---|---|\n| x | y |\n") == "x; y.\n"
    assert rewritten("| Name | Role |\n|---|---|\n") == "Name; Role.\n"
    assert rewritten("| Name | |\n|---|---|\n| Ada | chair |\n") == "Name: Ada; chair.\n"
    assert rewritten("| | |\n|---|---|\n") == "\n"  # an empty table has no text


def test_escaped_pipes_are_unescaped_and_other_escapes_kept():
    markdown = "| Code | Note |\n|---|---|\n| a \\| b | \\*not bold\\* |\n"
    assert rewritten(markdown) == "Code: a | b; Note: \\*not bold\\*.\n"
    # an escaped backslash before a pipe: the pipe ends the cell
    pairs = "| A | B |\n|---|---|\n| back\\\\| <br>two <!-- x --> |\n"
    assert rewritten(pairs) == "A: back\\\\; B: <br>two &lt;!-- x -->.\n"


@pytest.mark.parametrize(
    ("first", "written"),
    [
        ("1. Apply", "1\\. Apply; online."),
        ("- dash", "\\- dash; online."),
        ("# hash", "\\# hash; online."),
        ("> quote", "\\> quote; online."),
        ("<b>", "\\<b>; online."),
    ],
)
def test_a_sentence_that_would_open_another_block_is_escaped(first, written):
    markdown = f"| | |\n|---|---|\n| {first} | online |\n"
    out = rewritten(markdown)
    assert out == written + "\n"
    [element] = parse_markdown(out)
    assert (element.kind, element.text) == (ElementKind.PARAGRAPH, written)


def test_tables_inside_code_lists_and_quotes_and_text_without_tables_are_untouched():
    markdown = (
        "```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\n\n"
        "- item\n\n  | a | b |\n  |---|---|\n  | 1 | 2 |\n\n"
        "> | a | b |\n> |---|---|\n> | 1 | 2 |\n\n"
        "a | b is not a table\n"
    )
    out, stats, _ = rows_as_sentences(markdown, LIMIT)
    assert out is markdown and stats.rows == 0


def test_a_table_written_the_same_inside_a_code_block_above_is_found_where_it_is():
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n"
    markdown = f"```\n{table}```\n\n{table}"
    assert rewritten(markdown) == f"```\n{table}```\n\na: 1; b: 2.\n"


def test_a_table_right_after_a_paragraph_or_before_text_stays_apart_from_it():
    markdown = "Para\n| H1 | H2 |\n|---|---|\n| x | y |\nAfter\n"
    out = rewritten(markdown)
    texts = [e.text for e in parse_markdown(out)]
    assert texts == ["Para", "H1: x; H2: y.", "After"]


def test_a_row_longer_than_the_limit_is_split_by_column_groups_repeating_its_key():
    header = "| Key | " + " | ".join(f"Column {n}" for n in range(8)) + " |"
    row = "| k1 | " + " | ".join("v" * 60 for _ in range(8)) + " |"
    markdown = f"{header}\n|{'---|' * 9}\n{row}\n"
    out, stats, _ = rows_as_sentences(markdown, 200)
    pieces = out.strip().split("\n\n")
    assert stats.split_rows == 1 and len(pieces) > 1
    assert all(len(piece) <= 200 and piece.startswith("Key: k1; ") for piece in pieces)
    assert out.count("v" * 60) == 8


def test_the_document_records_which_rows_it_stores_and_text_formats_never_differ():
    pdf = DocumentRecord(document_id="d", source="a.pdf", sha256="", format="pdf")
    assert not stored_rows_differ(pdf, "pipe") and stored_rows_differ(pdf, "sentences")
    pdf.table_rows = "sentences"
    assert stored_rows_differ(pdf, "pipe") and not stored_rows_differ(pdf, "sentences")
    markdown = DocumentRecord(document_id="d", source="a.md", sha256="", format="markdown")
    assert not stored_rows_differ(markdown, "sentences")
    sheet = DocumentRecord(document_id="d", source="a.xlsx", sha256="", format="xlsx")
    assert not stored_rows_differ(sheet, "sentences")  # unknown: its rows say (the advice)
    sheet.table_rows = "pipe"
    assert stored_rows_differ(sheet, "sentences")


class PipeTableVision(VisionModel):
    """A vision model that disobeys the prompt and answers each page with a pipe table."""

    name = "pipe-tables"

    def __init__(self, note: str = "") -> None:
        self.note = note  # a third column, when not empty

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        pages = [int(n) for n in re.findall(r"image \d+ is page (\d+)", prompt)]
        head, rule, cell = ("| Note ", "---|", f" {self.note} |") if self.note else ("", "", "")
        text = "\n\n".join(
            f"<!-- Page {n} -->\n\n| Item | Qty {head}|\n|---|---|{rule}\n| bolt {n} | {n} |{cell}"
            for n in pages
        )
        return ModelReply(text=text, model="m", usage=TokenUsage(), latency_ms=1)


@pytest.mark.parametrize("table_rows", ["pipe", "sentences"])
def test_a_vision_models_tables_follow_the_option_and_its_kept_batches_stay_its_answer(
    table_rows: TableRows,
):
    pdf = make_pdf([(612, 792, [Text(f"bolt {n} {n}", 72, 700)]) for n in (1, 2)])
    result = convert_to_markdown(
        pdf,
        "doc.pdf",
        options=ConversionOptions(verify_scans=False),
        vision=PipeTableVision(),
        ledger=MemoryLedger(),
        document_id="d",
        spreadsheet=SpreadsheetOptions(table_rows=table_rows),
    )
    rows = ["Item: bolt 1; Qty: 1.", "Item: bolt 2; Qty: 2."]
    if table_rows == "sentences":
        assert [line for line in result.markdown.splitlines() if "bolt" in line] == rows
    else:
        assert "| bolt 1 | 1 |" in result.markdown and rows[0] not in result.markdown
    assert ["| bolt 1 | 1 |" in batch.markdown for batch in result.batches] == [True]


def test_a_row_too_long_for_one_element_is_split_with_a_warning():
    pdf = make_pdf([(612, 792, [Text("bolt 1 1", 72, 700)])])
    result = convert_to_markdown(
        pdf,
        "doc.pdf",
        options=ConversionOptions(verify_scans=False),
        vision=PipeTableVision(note="long words " * 30),
        ledger=MemoryLedger(),
        document_id="d",
        spreadsheet=SpreadsheetOptions(table_rows="sentences", max_element_chars=200),
    )
    pieces = [line for line in result.markdown.splitlines() if line.startswith("Item: bolt 1")]
    assert len(pieces) >= 2 and all(len(piece) <= 200 for piece in pieces)
    assert any("1 table rows longer than the 200-character" in w for w in result.warnings)
