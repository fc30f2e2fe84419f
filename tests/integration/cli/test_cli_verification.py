"""A vision model's conversion checked against the page (issue 21): a scripted model on a local
OpenAI-compatible server drops a row, invents a number and merges two rows of a price table;
each is flagged on its own page, an honest answer flags nothing, and `--hold-back-flags` keeps
flagged pages out of the index (the document PARTIAL)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from pdfs import make_pdf
from price_pages import honest_answer, price_page
from test_cli_with_model_server import ModelServer, run, server

__all__ = ["server"]  # the fixture, shared with the model-server tests

PLANS = {
    1: [("Basic", "$1,200.00", "5"), ("Team", "$3,450.50", "25"), ("Enterprise", "$12,000", "250")],
    2: [("Starter", "$90.00", "2"), ("Growth", "$480.00", "12"), ("Scale", "$1,990.00", "60")],
    3: [("Bronze", "$15.75", "1"), ("Silver", "$31.50", "3"), ("Gold", "$77.25", "9")],
    4: [("Nova", "$640.00", "8"), ("Orion", "$1,280.00", "16"), ("Vega", "$2,560.00", "32")],
}


def _page(number: int) -> tuple:
    return price_page(number, PLANS)


def honest(number: int, rows: list[tuple[str, str, str]] | None = None) -> str:
    """What a faithful model writes for page `number` (its own rows unless given)."""
    return honest_answer(number, PLANS[number] if rows is None else rows)


def unfaithful() -> dict[int, str]:
    """Page 1 drops its last row, page 2 invents a price, page 3 merges two rows, 4 is right."""
    first = PLANS[1][:2]
    second = [PLANS[2][0], ("Growth", "$485.00", "12"), PLANS[2][2]]
    third = [("Bronze", "$31.50", "3"), PLANS[3][2]]  # Bronze with Silver's price and seats
    return {1: honest(1, first), 2: honest(2, second), 3: honest(3, third), 4: honest(4)}


def _ingest(server: ModelServer, tmp_path: Path, name: str, *extra: str) -> tuple[str, Path]:
    pdf = tmp_path / f"{name}.pdf"
    pdf.write_bytes(make_pdf([_page(number) for number in PLANS]))
    workspace = tmp_path / name
    code, out = run(server, "ingest", str(pdf), "-w", str(workspace), *extra)
    assert code == 0, out
    return pdf.name, workspace


def _status(server: ModelServer, workspace: Path) -> dict:
    code, out = run(server, "status", "-w", str(workspace), "--json")
    assert code == 0, out
    (document,) = json.loads(out)
    return document


def test_each_fault_is_flagged_on_its_page_and_an_honest_answer_flags_nothing(
    server: ModelServer, tmp_path: Path
) -> None:
    server.page_answer = {number: honest(number) for number in PLANS}
    _, clean = _ingest(server, tmp_path, "honest")
    document = _status(server, clean)
    assert document["status"] == "INDEXED"
    # the record's counts, as the cloud's record keeps them
    assert document["verification"] == {
        "pages_checked": 4, "flagged_pages": 0, "unsupported": 0, "missing": 0,
        "suspect_rows": 0, "held_back": 0,
    }  # fmt: skip
    assert not any("verification" in warning for warning in document["warnings"])

    server.page_answer = unfaithful()
    name, workspace = _ingest(server, tmp_path, "unfaithful")
    document = _status(server, workspace)
    assert document["status"] == "INDEXED"  # flagged, not held back: nothing was asked
    counts = document["verification"]
    assert counts["flagged_pages"] == 3 and counts["pages_checked"] == 4
    assert counts["unsupported"] == 1 and counts["suspect_rows"] == 1 and counts["held_back"] == 0
    assert counts["missing"] >= 4  # page 1's dropped row (3) and page 2's replaced price
    database = sqlite3.connect(workspace / "drac.sqlite")  # a record from before the field
    with database:
        database.execute("UPDATE documents SET verification = NULL")
    database.close()
    assert _status(server, workspace)["verification"] == counts  # from the stored summary
    code, out = run(server, "show", name, "-w", str(workspace), "--json")
    pages = {page["page"]: page for page in json.loads(out)["verification"]["pages"]}
    assert set(pages) == {1, 2, 3, 4}
    assert pages[1]["missing"] == ["enterprise", "12000", "250"]  # the dropped row
    assert pages[1]["unsupported"] == [] and pages[1]["suspect_rows"] == []
    assert pages[2]["unsupported"] == ["485.00"] and pages[2]["missing"] == ["480.00"]
    assert pages[2]["suspect_rows"] == []
    assert pages[3]["suspect_rows"] == ["- Plan Bronze: Price $31.50; Seats 3."]
    assert pages[3]["unsupported"] == []
    assert pages[4]["counts"] == {"unsupported": 0, "missing": 0, "suspect_rows": 0}
    assert any(w.startswith("verification: 1 unsupported") for w in document["warnings"])

    code, out = run(server, "show", name, "-w", str(workspace))
    assert code == 0, out
    assert "page 2:" in out and "unsupported: 485.00" in out and "held back" not in out

    _code, out = run(server, "export", "-w", str(workspace))
    chunks = [json.loads(line) for line in out.splitlines()]
    flagged = [c for c in chunks if c["verification"]["unsupported"]]
    assert flagged and all("$485.00" in c["text"] for c in flagged)
    assert {item["token"] for c in flagged for item in c["verification"]["unsupported"]} == {
        "485.00"
    }

    report = tmp_path / "report"
    code, out = run(server, "inspect", "-w", str(workspace), "--out", str(report))
    assert code == 0, out
    (page,) = [p for p in report.glob("*.html") if p.name != "index.html"]
    html = page.read_text()
    # pages 1, 2 and 3, beside the page image and in the element list
    assert html.count('class="note verification"') == 6
    assert "unsupported: 485.00" in html and "missing: enterprise; 12000; 250" in html
    assert "suspect merged rows: - Plan Bronze: Price $31.50; Seats 3." in html
    assert 'class="badge flagged" title="unsupported 485.00' in html  # its chunk, marked


def test_hold_back_leaves_flagged_pages_out_and_marks_the_document_partial(
    server: ModelServer, tmp_path: Path
) -> None:
    server.page_answer = unfaithful()
    name, workspace = _ingest(server, tmp_path, "held", "--hold-back-flags", "0")
    document = _status(server, workspace)
    assert document["status"] == "PARTIAL"
    assert document["conversion_failures"] == 3
    assert document["verification"]["held_back"] == 3
    code, out = run(server, "export", "-w", str(workspace))
    assert code == 0, out
    chunks = [json.loads(line) for line in out.splitlines()]
    assert chunks and {page for c in chunks for page in c["pages"]} == {4}
    assert all("Bronze" not in c["text"] and "$485.00" not in c["text"] for c in chunks)
    _code, out = run(server, "show", name, "-w", str(workspace), "--markdown")
    assert "<!-- Page 3: conversion failed: held back: " in out
    assert "Plan Nova" in out

    # a threshold above the worst page holds nothing back
    name, workspace = _ingest(server, tmp_path, "lenient", "--hold-back-flags", "10")
    assert _status(server, workspace)["status"] == "INDEXED"
    # converted again offline (from the text layer): no check, and no stale summary shown
    args = ("ingest", str(tmp_path / name), "-w", str(workspace), "--force", "--model", "offline")
    code, out = run(server, *args)
    assert code == 0, out
    document = _status(server, workspace)
    assert document["verification"] is None and document["status"] == "INDEXED"


def test_flagged_text_reaches_the_terminal_escaped(server: ModelServer, tmp_path: Path) -> None:
    """What the model wrote is untrusted: a flagged row is shown as text, never as terminal
    control codes or rich markup."""
    hostile = "- Plan Bronze [bold red]x[/bold red] \x1b[2J\x1b]0;owned\x07: Price $31.50; Seats 3."
    server.page_answer = {**unfaithful(), 3: honest(3, []) + "\n" + hostile}
    name, workspace = _ingest(server, tmp_path, "hostile")
    code, out = run(server, "show", name, "-w", str(workspace))
    assert code == 0, out
    assert "\x1b" not in out and "\x07" not in out
    assert "[bold red]x[/bold red]" in out  # shown literally, not as style
    code, out = run(server, "show", name, "-w", str(workspace), "--json")
    (row,) = {p["page"]: p for p in json.loads(out)["verification"]["pages"]}[3]["suspect_rows"]
    assert row.startswith("- Plan Bronze [bold red]x[/bold red]") and "\x1b" not in row
