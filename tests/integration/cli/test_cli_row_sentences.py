"""`drac ingest --table-rows` on converted documents (issue 17): the option is part of what a
document's stored elements are, so ingesting again with the other one converts it again."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import shared_paths
from click.testing import CliRunner
from shared_paths import require

from drac.cli import _register_commands, cli
from drac.local.workspace import Workspace

_register_commands()
CORPUS = require(shared_paths.CORPUS)
PDF = CORPUS / "CloudWay-24" / "pdf" / "Check Your Visa and Passport Requirements.pdf"
PIPE_ROW = "| Belgium | 6 months | Yes, Schengen Visa |"
SENTENCE = "Country: Belgium; Passport Validity: 6 months; Visa Required (Indian Citizens): Yes"

pytestmark = pytest.mark.skipif(not PDF.exists(), reason="corpus PDF not available")


def ingest(workspace: Path, path: Path, *options: str) -> dict[str, Any]:
    args = ["ingest", str(path), "-w", str(workspace), "--no-embed", "--json", *options]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [outcome] = json.loads(result.output[result.output.index("{") :])["outcomes"]
    return outcome


def chunk_text(workspace: Path) -> str:
    ws = Workspace(workspace, create=False)
    try:
        return "\n".join(chunk.text for chunk in ws.active_chunks())
    finally:
        ws.close()


@pytest.fixture()
def pdf(tmp_path: Path) -> Path:
    path = tmp_path / "visa.pdf"
    shutil.copyfile(PDF, path)
    return path


def test_the_flag_writes_a_pdfs_table_rows_as_sentences_and_switching_it_converts_again(
    pdf: Path, tmp_path: Path
):
    workspace = tmp_path / "ws"
    first = ingest(workspace, pdf)
    assert first["status"] == "INDEXED"
    assert PIPE_ROW in chunk_text(workspace) and SENTENCE not in chunk_text(workspace)

    switched = ingest(workspace, pdf, "--table-rows", "sentences")
    assert switched["status"] == "INDEXED" and switched["document_id"] == first["document_id"]
    text = chunk_text(workspace)
    assert SENTENCE in text and PIPE_ROW not in text
    assert "\n| ---" not in text  # no pipe table is left in any chunk

    assert ingest(workspace, pdf, "--table-rows", "sentences")["status"] == "UNCHANGED"
    back = ingest(workspace, pdf, "--table-rows", "pipe")
    assert back["status"] == "INDEXED"
    assert PIPE_ROW in chunk_text(workspace) and SENTENCE not in chunk_text(workspace)
    assert ingest(workspace, pdf)["status"] == "UNCHANGED"  # pipe is the default


def test_markdown_is_used_as_is_whatever_the_option(tmp_path: Path):
    note = tmp_path / "note.md"
    note.write_text("# Note\n\n| K | V |\n|---|---|\n| a | 1 |\n")
    workspace = tmp_path / "ws"
    assert ingest(workspace, note, "--table-rows", "sentences")["status"] == "INDEXED"
    assert "| a | 1 |" in chunk_text(workspace)
    assert ingest(workspace, note, "--table-rows", "pipe")["status"] == "UNCHANGED"


def test_a_workspace_from_before_the_option_was_recorded_opens_and_keeps_its_documents(
    pdf: Path, tmp_path: Path
):
    workspace = tmp_path / "ws"
    ingest(workspace, pdf)
    with sqlite3.connect(workspace / "drac.sqlite") as conn:
        conn.execute("ALTER TABLE documents DROP COLUMN table_rows")
    conn.close()
    assert ingest(workspace, pdf)["status"] == "UNCHANGED"  # no record: it was pipe
    assert ingest(workspace, pdf, "--table-rows", "sentences")["status"] == "INDEXED"


def test_the_flags_help_names_every_format():
    result = CliRunner().invoke(cli, ["ingest", "--help"])
    assert "--table-rows" in result.output
    assert "converted documents" in " ".join(result.output.split())


def test_a_replan_with_the_other_option_keeps_the_stored_rows_and_says_so(pdf: Path, tmp_path):
    workspace = tmp_path / "ws"
    ingest(workspace, pdf, "--table-rows", "sentences")
    args = ["replan", "-w", str(workspace), "--table-rows", "pipe", "--no-embed", "--json"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    [outcome] = json.loads(result.output[result.output.index("{") :])["outcomes"]
    assert "rows are stored as sentences, not pipe" in outcome["warnings"][0]
    assert SENTENCE in chunk_text(workspace) and PIPE_ROW not in chunk_text(workspace)
