"""Atomic writes: names up to the file system's 255 bytes, temporary files in one folder that
the next writer clears, so an interrupted write leaves nothing behind for long."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from drac.local.files import write_atomic
from drac.local.pipeline import IngestSettings, ingest_file
from drac.local.workspace import Workspace


@pytest.mark.parametrize("length", [242, 250, 255])
def test_a_name_of_up_to_255_bytes_is_written(tmp_path: Path, length: int) -> None:
    path = tmp_path / ("n" * (length - 3) + ".md")
    write_atomic(path, b"data")
    assert path.read_bytes() == b"data" and os.listdir(tmp_path) == [path.name]


def test_a_file_with_a_255_byte_multibyte_name_is_ingested(tmp_path: Path) -> None:
    name = "é" * 125 + "xy.md"  # 250 + 5 = 255 bytes
    assert len(os.fsencode(name)) == 255
    path = tmp_path / name
    path.write_text("# Long\n\nA document with a long name.\n")
    workspace = Workspace(tmp_path / "ws", create=True)
    try:
        outcome = ingest_file(path, workspace, IngestSettings())
        assert outcome.status == "INDEXED", outcome.error
    finally:
        workspace.close()


def test_leftover_temporary_files_are_removed_by_the_next_writer(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "ws", create=True)
    try:
        old_style = tmp_path / "ws" / "documents" / "d" / "chunks"
        old_style.mkdir(parents=True)
        (old_style / ".v0002.jsonl.k1ll3d0x.tmp").write_text("left by an earlier drac")
        (old_style / "v0001.jsonl").write_text("{}\n")
        (old_style / ".notes.tmp").write_text("a user's file of that ending is kept")
        with workspace.writing():
            assert sorted(p.name for p in old_style.iterdir()) == [".notes.tmp", "v0001.jsonl"]
        temporary = workspace.artifacts.temporary_folder
        (temporary / ".v0002.jsonl.abc123.tmp").write_text("half a write, then kill -9")
        with workspace.writing():
            assert list(temporary.iterdir()) == []
    finally:
        workspace.close()


def test_artifacts_are_written_through_the_temporary_folder(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "ws", create=True)
    try:
        workspace.artifacts.put_text("documents/d/document.md", "# T\n")
        assert (tmp_path / "ws" / "documents" / "d").iterdir().__next__().name == "document.md"
        assert list(workspace.artifacts.temporary_folder.iterdir()) == []
    finally:
        workspace.close()
