"""A full disk gives one clear error, stops the run, and leaves nothing of the document that
was being written (fault injection at the write layer and at SQLite's page limit)."""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import drac.local.workspace as workspace_module
from drac.cli import _register_commands, cli
from drac.local.errors import DiskFullError
from drac.local.pipeline import IngestSettings, ingest_file, replan_document
from drac.local.workspace import Workspace
from drac.strategies import resolve_strategy

_register_commands()
TEXT = (
    "# Returns\n\nReturns are accepted within thirty days.\n\n## Refunds\n\nRefunds take a week.\n"
)


def _full_after(writes: int) -> Callable[..., None]:
    """write_atomic that succeeds `writes` times, then finds the disk full."""
    real = workspace_module.write_atomic
    done = [0]

    def write(path: Path, data: bytes, temporary_folder: Path | None = None) -> None:
        done[0] += 1
        if done[0] > writes:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data, temporary_folder)

    return write


@pytest.mark.parametrize("writes", [0, 1, 3, 5])
def test_a_disk_full_mid_ingest_leaves_no_file_of_the_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writes: int
) -> None:
    source = tmp_path / "returns.md"
    source.write_text(TEXT)
    workspace = Workspace(tmp_path / "ws", create=True)
    try:
        monkeypatch.setattr(workspace_module, "write_atomic", _full_after(writes))
        with pytest.raises(DiskFullError, match="no space left on the device"):
            ingest_file(source, workspace, IngestSettings())
        documents = tmp_path / "ws" / "documents"
        assert not documents.exists() or list(documents.iterdir()) == []
        assert workspace.documents() == [] and workspace.active_chunks() == []
    finally:
        workspace.close()


def test_a_disk_full_during_a_replan_keeps_the_active_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "returns.md"
    source.write_text(TEXT)
    workspace = Workspace(tmp_path / "ws", create=True)
    try:
        assert ingest_file(source, workspace, IngestSettings()).status == "INDEXED"
        [record] = workspace.documents()
        before = workspace.active_chunks()
        monkeypatch.setattr(workspace_module, "write_atomic", _full_after(1))
        with pytest.raises(DiskFullError):
            replan_document(record, workspace, resolve_strategy("fine"))
        folder = tmp_path / "ws" / "documents" / record.document_id
        assert sorted(p.name for p in (folder / "plans").iterdir()) == ["v0001.json"]
        assert sorted(p.name for p in (folder / "chunks").iterdir()) == ["v0001.jsonl"]
        assert workspace.active_chunks() == before
    finally:
        workspace.close()


def test_a_full_database_is_one_line_and_stops_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(3):
        paragraphs = "".join(f"Paragraph {n} of document {number}.\n\n" for n in range(2000))
        (docs / f"doc{number}.md").write_text(f"# Document {number}\n\n{paragraphs}")
    ws = tmp_path / "ws"
    Workspace(ws, create=True).close()
    real_init = workspace_module.Database.__init__

    def full_database(self: workspace_module.Database, path: Path) -> None:
        real_init(self, path)
        self.conn.execute("PRAGMA journal_mode = DELETE")  # writes reach the file at once
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        self.conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own SQLITE_FULL

    monkeypatch.setattr(workspace_module.Database, "__init__", full_database)
    result = CliRunner().invoke(cli, ["ingest", str(docs), "-w", str(ws), "--jobs", "1"])
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if "no space left" in line]
    assert len(errors) == 1 and errors[0].startswith("Error: ") and "drac.sqlite" in errors[0]
    assert "Traceback" not in result.output
    assert not (ws / "documents").exists() or list((ws / "documents").iterdir()) == []


def test_a_disk_full_in_the_cli_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "returns.md"
    source.write_text(TEXT)
    monkeypatch.setattr(workspace_module, "write_atomic", _full_after(2))
    result = CliRunner().invoke(cli, ["ingest", str(source), "-w", str(tmp_path / "ws")])
    assert result.exit_code == 1
    assert result.output.count("no space left on the device") == 1
    assert "free some space" in result.output and "Traceback" not in result.output
