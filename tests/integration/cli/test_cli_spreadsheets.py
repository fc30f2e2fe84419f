"""Spreadsheets through `drac ingest` as a user runs it (issue 13): tables, not pages."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sheet_workbooks import SALES_COLUMNS, sales_rows, xlsx

from drac.cli import _register_commands, cli
from drac.documents.spreadsheets.numfmt import format_cell
from drac.local.workspace import Workspace
from drac.models import Chunk, Element, ElementKind

_register_commands()
HEADER_LINE = "| " + " | ".join(SALES_COLUMNS) + " |"
HARD_LIMIT = 2000


def run(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    out = result.output
    return result.exit_code, json.loads(out[out.index("{") :]) if "--json" in args else out


def shown(row: list[Any]) -> str:
    return "| " + " | ".join(format_cell(value) for value in row) + " |"


def sentence(row: list[Any]) -> str:
    pairs = zip(SALES_COLUMNS, (format_cell(value) for value in row), strict=True)
    return "; ".join(f"{name}: {value}" for name, value in pairs if value) + "."


def chunks_of(workspace: Path) -> list[Chunk]:
    ws = Workspace(workspace, create=False)
    try:
        return ws.active_chunks()
    finally:
        ws.close()


@pytest.fixture()
def sales(tmp_path: Path) -> tuple[Path, list[list[Any]]]:
    rows = sales_rows(120)
    path = tmp_path / "sales.xlsx"
    path.write_bytes(xlsx({"Sales": rows}))
    return path, rows


def test_a_sales_workbook_is_one_table_with_every_row_whole_under_its_header(sales, tmp_path):
    """The issue's reproduction: 16 columns, 120 rows went to a 6-page PDF split by columns."""
    path, rows = sales
    code, summary = run("ingest", str(path), "-w", str(tmp_path / "ws"), "--json")
    assert code == 0
    [outcome] = summary["outcomes"]
    assert outcome["status"] == "INDEXED" and outcome["pages"] == 1
    chunks = chunks_of(tmp_path / "ws")
    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.breadcrumb == "sales >> Sales"
        assert HEADER_LINE in chunk.text  # the header on every chunk
        assert len(chunk.text) <= HARD_LIMIT
    for row in rows[1:]:
        holding = [chunk for chunk in chunks if shown(row) + "\n" in chunk.text + "\n"]
        assert len(holding) == 1, row  # every row whole, in exactly one chunk


def _questions(rows: list[list[Any]], count: int) -> list[tuple[str, list[Any]]]:
    """Questions whose answer is one row: who sold it, how many, at what status."""
    picked = random.Random(5).sample(rows[1:], count)
    templates = [
        "How many units of {Product} ({SKU}) were sold in {Region} in {Quarter}?",
        "What is the status of order {SKU} for {Product}, handled by {Rep}?",
        "Which warehouse shipped {SKU} and what was its rating?",
    ]
    questions = []
    for index, row in enumerate(picked):
        values = dict(zip(SALES_COLUMNS, row, strict=True))
        questions.append((templates[index % len(templates)].format(**values), row))
    return questions


@pytest.mark.parametrize("table_rows", ["pipe", "sentences"])
def test_the_chunk_holding_a_questions_row_ranks_in_the_top_three(sales, tmp_path, table_rows):
    path, rows = sales
    workspace = tmp_path / "ws"
    code, _ = run("ingest", str(path), "-w", str(workspace), "--table-rows", table_rows, "--json")
    assert code == 0
    render = shown if table_rows == "pipe" else sentence
    ws = Workspace(workspace, create=False)
    try:
        misses = []
        for question, row in _questions(rows, 30):
            hits = ws.index.search(question, k=3)
            if not any(render(row) in hit.chunk.text for hit in hits):
                misses.append(question)
    finally:
        ws.close()
    assert not misses


def test_sentences_store_each_row_as_one_paragraph(sales, tmp_path):
    path, rows = sales
    workspace = tmp_path / "ws"
    code, _ = run("ingest", str(path), "-w", str(workspace), "--table-rows", "sentences")
    assert code == 0
    ws = Workspace(workspace, create=False)
    try:
        [record] = ws.documents()
        stored = ws.get_elements(record.document_id)
    finally:
        ws.close()
    paragraphs = [e.text for e in stored if e.kind is ElementKind.PARAGRAPH]
    assert paragraphs == [sentence(row) for row in rows[1:]]
    assert not any(e.kind is ElementKind.TABLE_ROW for e in stored)


def test_a_replan_with_other_table_rows_says_to_reingest_with_force(sales, tmp_path):
    path, _ = sales
    workspace = str(tmp_path / "ws")
    assert run("ingest", str(path), "-w", workspace)[0] == 0
    code, summary = run("replan", "-w", workspace, "--table-rows", "sentences", "--json")
    assert code == 0
    [outcome] = summary["outcomes"]
    assert "re-ingest with --force --table-rows sentences" in outcome["warnings"][0]
    assert run("ingest", str(path), "-w", workspace, "--force", "--table-rows", "sentences")[0] == 0
    code, summary = run("replan", "-w", workspace, "--table-rows", "sentences", "--json")
    assert code == 0 and summary["outcomes"][0]["warnings"] == []


def test_an_unchanged_workbook_asked_for_other_rows_is_read_again(sales, tmp_path):
    """The option is recorded with the document (issue 17): asking for the other rows reads the
    workbook again; a workspace that recorded none says to force, as its rows tell."""
    path, _ = sales
    workspace = str(tmp_path / "ws")
    assert run("ingest", str(path), "-w", workspace)[0] == 0
    code, summary = run("ingest", str(path), "-w", workspace, "--strategy", "sentences", "--json")
    assert code == 0 and summary["outcomes"][0]["status"] == "INDEXED"
    assert not any(e.kind is ElementKind.TABLE_ROW for e in _elements(tmp_path / "ws"))
    code, summary = run("ingest", str(path), "-w", workspace, "--json")
    assert summary["outcomes"][0]["status"] == "INDEXED"  # back to pipe rows
    with sqlite3.connect(tmp_path / "ws" / "drac.sqlite") as conn:
        conn.execute("UPDATE documents SET table_rows = NULL")  # as an earlier drac left it
    conn.close()
    code, summary = run("ingest", str(path), "-w", workspace, "--strategy", "sentences", "--json")
    [outcome] = summary["outcomes"]
    assert code == 0 and outcome["status"] == "UNCHANGED"
    assert "rows are stored as pipe, not sentences" in outcome["warnings"][0]
    code, summary = run("ingest", str(path), "-w", workspace, "--json")
    assert summary["outcomes"][0]["warnings"] == []  # asked as stored: nothing to say


def _elements(workspace: Path) -> list[Element]:
    ws = Workspace(workspace, create=False)
    try:
        return [e for record in ws.documents() for e in ws.get_elements(record.document_id)]
    finally:
        ws.close()


def test_a_folder_picks_up_csv_tsv_and_workbooks(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "people.csv").write_text('Name;City;Comment\nAna;Lisboa;"two\nlines"\nBen;Porto;ok\n')
    (folder / "parts.tsv").write_text("Part\tDescription\nP-1\tbolt, steel\nP-2\tnut\n")
    (folder / "stock.xlsm").write_bytes(xlsx({"Stock": [["Item", "Qty"], ["bolts", 4]]}))
    code, summary = run("ingest", str(folder), "-w", str(tmp_path / "ws"), "--json")
    assert code == 0
    formats = {Path(o["path"]).name: o["status"] for o in summary["outcomes"]}
    assert formats == {"people.csv": "INDEXED", "parts.tsv": "INDEXED", "stock.xlsm": "INDEXED"}
    texts = "\n".join(chunk.text for chunk in chunks_of(tmp_path / "ws"))
    assert "| Ana | Lisboa | two<br>lines |" in texts
    assert "| P-1 | bolt, steel |" in texts
    assert "| bolts | 4 |" in texts
