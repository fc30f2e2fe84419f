"""One document that cannot be shown does not take the report down: `drac inspect` writes every
other document, and marks that one, with the reason, on the index and on its own page."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from pdfs import Text, make_pdf

from drac.cli import _register_commands, cli
from drac.inspect.build import report_name
from drac.local.pipeline import IngestSettings, ingest_file
from drac.local.workspace import Workspace

_register_commands()

HUGE = 200 * 72  # a 200 x 200-inch page, in points


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "huge.pdf").write_bytes(make_pdf([(HUGE, HUGE, [Text("Huge page text", 72, 72)])]))
    (tmp_path / "fine.pdf").write_bytes(make_pdf([(300, 300, [Text("Fine page text", 20, 100)])]))
    (tmp_path / "notes.md").write_text("# Notes\n\nA note about returns.\n")
    ws = tmp_path / "ws"
    workspace = Workspace(ws, create=True)
    try:
        for name in ("huge.pdf", "fine.pdf", "notes.md"):
            outcome = ingest_file(tmp_path / name, workspace, IngestSettings())
            assert outcome.status == "INDEXED", (name, outcome.error)
    finally:
        workspace.close()
    return ws


def _record(ws: Path, name: str):
    workspace = Workspace(ws, create=False)
    try:
        return workspace.find_document(name)
    finally:
        workspace.close()


def test_a_page_too_large_to_render_is_marked_and_the_rest_is_written(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["inspect", "--out", str(out), "-w", str(ws)])
    assert result.exit_code == 0, result.output
    assert "huge.pdf" in result.output and "120-inch limit" in result.output
    index = (out / "index.html").read_text("utf-8")
    for name in ("huge.pdf", "fine.pdf", "notes.md"):
        page = out / f"{report_name(_record(ws, name))}.html"
        assert page.exists() and f'href="{page.name}"' in index, name
    huge = (out / f"{report_name(_record(ws, 'huge.pdf'))}.html").read_text("utf-8")
    assert "120-inch limit" in huge and "Huge page text" in huge  # the text view instead
    row = re.search(r"<tr[^>]*>(?:(?!</tr>).)*huge\.pdf(?:(?!</tr>).)*</tr>", index, re.S)
    assert row and "120-inch limit" in row.group(0)
    fine = out / report_name(_record(ws, "fine.pdf"))
    assert (fine / "page-0001.png").exists()


def test_a_document_whose_files_are_damaged_gets_a_page_saying_so(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    record = _record(ws, "fine.pdf")
    (ws / "documents" / record.document_id / "chunks" / "v0001.jsonl").write_text('{"chunk_')
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["inspect", "--out", str(out), "-w", str(ws)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    page = (out / f"{report_name(record)}.html").read_text("utf-8")
    assert "chunks/v0001.jsonl" in page and "not shown" in page
    index = (out / "index.html").read_text("utf-8")
    assert "chunks/v0001.jsonl" in index
    assert (out / f"{report_name(_record(ws, 'notes.md'))}.html").exists()


def test_nothing_written_is_an_error(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    blocker = tmp_path / "report"
    blocker.write_text("a file where the folder should go")
    result = CliRunner().invoke(cli, ["inspect", "--out", str(blocker / "sub"), "-w", str(ws)])
    assert result.exit_code == 1
    assert "Traceback" not in result.output and "report" in result.output
