"""Boxes through the local runtime: a PDF ingested offline has its chunks' boxes in
`drac export` and `drac search --json`, stored in SQLite, and its chunk text unchanged."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner
from pdfs import Text, make_pdf, text_page

from drac.cli import _register_commands, cli

_register_commands()

LINES = [
    Text("Luggage claims", 72, 720, 16),
    Text("Lost luggage is refunded up to 1,300 euros per", 72, 690),
    Text("passenger when the claim is filed within seven days.", 72, 676),
]


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def ingest_claims_and_notes(tmp_path: Path) -> Path:
    """A workspace holding a two-page PDF (claims.pdf) and a Markdown file without pages
    (notes.md), ingested offline; returns the workspace."""
    pdf = tmp_path / "claims.pdf"
    pdf.write_bytes(make_pdf([text_page(LINES), text_page([Text("Page two text", 72, 700)])]))
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nLost luggage notes without pages.\n")
    ws = tmp_path / "ws"
    code, out = run("ingest", str(pdf), str(notes), "-w", str(ws), "--no-embed")
    assert code == 0, out
    return ws


def test_a_pdfs_chunks_carry_boxes_in_export_and_search(tmp_path: Path) -> None:
    ws = ingest_claims_and_notes(tmp_path)

    code, out = run("export", "-w", str(ws))
    assert code == 0
    chunks = {json.loads(line)["source"]: json.loads(line) for line in out.splitlines()}
    exported = chunks["claims.pdf"]
    assert "Lost luggage is refunded up to 1,300 euros per passenger" in exported["text"]
    assert "boxes" not in exported["text"] and "72." not in exported["text"]
    by_page = {entry["page"]: entry["boxes"] for entry in exported["boxes"]}
    assert sorted(by_page) == [1, 2]
    paragraph = by_page[1]
    assert len(paragraph) == 2  # its two lines
    assert paragraph[0][0] == round(paragraph[0][0], 1) and 71 < paragraph[0][0] < 74
    assert paragraph[0][1] < 792 - 690 < paragraph[0][3]  # the baseline inside the box
    assert exported["unaligned"] == []
    assert chunks["notes.md"]["boxes"] == []  # no pages: no boxes, and none invented

    code, out = run("search", "refunded luggage", "-w", str(ws), "--json", "--mode", "bm25")
    assert code == 0, out
    hits = json.loads(out)
    hit = next(h for h in hits if h["source"] == "claims.pdf")
    assert hit["boxes"] == exported["boxes"]

    database = sqlite3.connect(ws / "drac.sqlite")
    rows = [json.loads(row[0]) for row in database.execute("SELECT data FROM elements")]
    database.close()
    placed = [row for row in rows if "boxes" in row]
    assert placed and all(row["boxes"]["status"] == "aligned" for row in placed)
    assert not any(
        "boxes" in row for row in rows if row["text"].startswith(("# Notes", "Lost luggage notes"))
    )
