"""Box status in `drac status` and `drac show`: how many of a document's elements were placed
on their PDF page with boxes and how many were not aligned (documents without pages have
none), checked against the elements themselves."""

from __future__ import annotations

import json
from pathlib import Path

from pdfs import Text, make_pdf, text_page
from test_cli_boxes import LINES, ingest_claims_and_notes, run
from test_cli_with_model_server import ModelServer, server
from test_cli_with_model_server import run as run_with_model

__all__ = ["server"]  # the fixture, shared with the model-server tests

INVENTED = "Refunds are also paid in gold bars to every passenger who asks twice."


def _by_source(out: str) -> dict[str, dict]:
    return {document["source"]: document for document in json.loads(out)}


def test_an_offline_pdf_shows_every_element_boxed_and_a_markdown_file_none(
    tmp_path: Path,
) -> None:
    ws = ingest_claims_and_notes(tmp_path)

    code, out = run("show", "claims.pdf", "-w", str(ws), "--json")
    assert code == 0, out
    shown = json.loads(out)
    elements = shown["elements"]
    on_page = {n: sum(e["page"] == n for e in elements) for n in (1, 2)}
    assert on_page[1] == 2 and on_page[2] == 1  # heading + paragraph, then one paragraph
    assert shown["boxes"] == [
        {"page": 1, "aligned": 2, "partial": 0, "not_aligned": 0, "unaligned_ids": []},
        {"page": 2, "aligned": 1, "partial": 0, "not_aligned": 0, "unaligned_ids": []},
    ]

    code, out = run("status", "-w", str(ws), "--json")
    assert code == 0, out
    documents = _by_source(out)
    assert documents["claims.pdf"]["boxes"] == {"aligned": 3, "partial": 0, "not_aligned": 0}
    assert documents["notes.md"]["boxes"] is None  # no pages: nothing to place

    code, out = run("status", "-w", str(ws))
    assert code == 0, out
    assert "boxed/unaligned" in out
    row = next(line for line in out.splitlines() if "claims.pdf" in line)
    assert "3/0" in row
    row = next(line for line in out.splitlines() if "notes.md" in line)
    assert "3/0" not in row and " - " in row

    code, out = run("show", "claims.pdf", "-w", str(ws))
    assert code == 0, out
    assert "boxes 3 element(s) with boxes, 0 not aligned" in out
    assert "page 1: 2 with boxes, 0 not aligned" in out
    assert "page 2: 1 with boxes, 0 not aligned" in out
    code, out = run("show", "notes.md", "-w", str(ws))
    assert code == 0 and "with boxes" not in out


def test_a_paragraph_the_page_does_not_hold_is_shown_not_aligned_on_its_page(
    server: ModelServer, tmp_path: Path
) -> None:
    """A vision model's paragraph that is not on the page gets no box (none invented), and
    status and show say so on the right page, by element id."""
    server.page_answer = {
        1: "<!-- Page 1 -->\n\n## Luggage claims\n\nLost luggage is refunded up to 1,300 euros"
        " per passenger when the claim is filed within seven days.",
        2: f"<!-- Page 2 -->\n\nPage two text\n\n{INVENTED}",
    }
    pdf = tmp_path / "plans.pdf"
    pdf.write_bytes(make_pdf([text_page(LINES), text_page([Text("Page two text", 72, 700)])]))
    ws = tmp_path / "ws"
    code, out = run_with_model(server, "ingest", str(pdf), "-w", str(ws))
    assert code == 0, out

    code, out = run_with_model(server, "show", "plans.pdf", "-w", str(ws), "--json")
    shown = json.loads(out)
    invented = next(e for e in shown["elements"] if e["text"] == INVENTED)
    assert invented["page"] == 2 and invented["boxes"]["status"] == "not_aligned"
    unaligned = [e["id"] for e in shown["elements"] if e["boxes"]["status"] == "not_aligned"]
    assert unaligned == [invented["id"]]
    pages = {page["page"]: page for page in shown["boxes"]}
    assert pages[2]["not_aligned"] == 1 and pages[2]["unaligned_ids"] == [invented["id"]]
    assert pages[1] == {
        "page": 1, "aligned": 2, "partial": 0, "not_aligned": 0, "unaligned_ids": []
    }  # fmt: skip
    boxed = sum(1 for e in shown["elements"] if e["boxes"]["status"] != "not_aligned")

    code, out = run_with_model(server, "status", "-w", str(ws), "--json")
    (document,) = json.loads(out)
    counts = document["boxes"]
    assert counts["aligned"] + counts["partial"] == boxed and counts["not_aligned"] == 1
    code, out = run_with_model(server, "status", "-w", str(ws))
    assert f"{boxed}/1" in out
    code, out = run_with_model(server, "show", "plans.pdf", "-w", str(ws))
    assert f"page 2: 1 with boxes, 1 not aligned: {invented['id']}" in out
