"""Names that are not UTF-8, honest statuses for scans, detected formats on failures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hostile_files import HOSTILE_SET
from pdfs import Text, make_pdf, text_page

from drac.local.pipeline import SCAN_HINT, IngestSettings, ingest_file
from drac.local.workspace import Workspace


def _write(folder: Path, name: bytes, data: bytes) -> Path:
    path = Path(os.fsdecode(os.path.join(os.fsencode(folder), name)))
    path.write_bytes(data)
    return path


def _hostile(label_start: str) -> bytes:
    item = next(item for item in HOSTILE_SET if item.label.startswith(label_start))
    assert item.content is not None
    return item.content()


def test_a_name_that_is_not_utf8_is_stored_and_shown_with_replacement_characters(tmp_path):
    path = _write(tmp_path, b"caf\xe9.md", b"# Menu\n\nCoffee and cake.\n")
    workspace = Workspace(tmp_path / "ws", create=True)
    outcome = ingest_file(path, workspace, IngestSettings())
    assert outcome.status == "INDEXED"
    assert outcome.path.endswith("caf\ufffd.md")
    [record] = workspace.documents()
    assert record.source == "caf\ufffd.md"
    assert record.source_path is not None and record.source_path.endswith("/caf\ufffd.md")
    assert [chunk.source for chunk in workspace.active_chunks()] == ["caf\ufffd.md"]
    workspace.close()
    drac = [sys.executable, "-c", "from drac.cli import main; main()"]
    export = subprocess.run([*drac, "export", "-w", str(tmp_path / "ws")], capture_output=True)
    assert export.returncode == 0 and "caf\ufffd.md" in export.stdout.decode()
    ws = str(tmp_path / "ws")
    remove = subprocess.run([*drac, "remove", path, "-w", ws], capture_output=True)
    assert remove.returncode == 0, remove.stderr
    assert b"its document left search" in remove.stderr


def test_a_failing_file_with_such_a_name_gets_a_failed_record(tmp_path):
    path = _write(tmp_path, b"\xff\xfe broken.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 8)
    workspace = Workspace(tmp_path / "ws", create=True)
    outcome = ingest_file(path, workspace, IngestSettings())
    assert outcome.status == "FAILED" and "corrupt or unreadable PDF" in (outcome.error or "")
    [record] = workspace.documents()
    assert (record.source, record.status.value, record.format) == (
        "\ufffd\ufffd broken.pdf", "FAILED", "pdf",
    )  # fmt: skip


def test_a_scan_ingested_offline_is_partial_with_a_hint_to_use_a_vision_model(tmp_path):
    path = _write(tmp_path, b"scan.pdf", _hostile("PDF, image only"))
    workspace = Workspace(tmp_path / "ws", create=True)
    outcome = ingest_file(path, workspace, IngestSettings())
    assert outcome.status == "PARTIAL"
    assert outcome.warnings[0] == SCAN_HINT
    [record] = workspace.documents()
    assert record.warnings[0] == SCAN_HINT  # `drac status` shows it as the note
    assert SCAN_HINT[:80].startswith("scans need a vision model: ingest again with --model bedrock")


def test_a_document_with_a_text_page_and_a_scan_is_partial_and_keeps_its_text(tmp_path):
    mixed = make_pdf([text_page([Text("Text page about boilers", 72, 700)]), (612, 792)], [1])
    path = _write(tmp_path, b"mixed.pdf", mixed)
    workspace = Workspace(tmp_path / "ws", create=True)
    outcome = ingest_file(path, workspace, IngestSettings())
    assert (outcome.status, outcome.warnings[0]) == ("PARTIAL", SCAN_HINT)
    assert workspace.index.search("boilers", 3)


def test_a_failure_before_detection_records_an_unknown_format(tmp_path):
    path = _write(tmp_path, b"noise.pdf", bytes(range(1, 256)) * 40)
    workspace = Workspace(tmp_path / "ws", create=True)
    assert ingest_file(path, workspace, IngestSettings()).status == "FAILED"
    assert workspace.documents()[0].format == "unknown"
