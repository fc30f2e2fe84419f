"""A run's office documents converted ahead in batches: each document gets the same Markdown as
when converted alone, a document the batch gives no PDF is converted alone (failing with its
own reason when it is hostile), and unchanged documents are not converted at all."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest
from reliability.hostile_links import docx as linked_docx

from drac.documents.intake import normalise
from drac.documents.intake.ahead import Converted, converted_ahead
from drac.documents.intake.detect import DocumentFormat
from drac.documents.intake.office_batch import Batch
from drac.local import Workspace, office_ahead
from drac.local.cores import ThreadBudget
from drac.local.office_ahead import OfficeAhead, _Slot
from drac.local.pipeline import IngestSettings, ingest_file

WORDS = ["Aardvark quarterly ledger", "Bluebell pump manual", "Cormorant audit notes"]


def _docx(text: str) -> bytes:
    return linked_docx(f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>", [])


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    files = tmp_path / "files"
    files.mkdir()
    for number, text in enumerate(WORDS):
        (files / f"doc{number}.docx").write_bytes(_docx(text))
    (files / "page.html").write_bytes(b"<html><body><h1>Dormouse</h1><p>Eel.</p></body></html>")
    # a package whose body LibreOffice cannot load: no PDF in the batch, fails alone
    (files / "broken.docx").write_bytes(linked_docx("<w:p><w:r><w:t>x</w:r></w:p>", []))
    return files


def _ingest(files: list[Path], root: Path, ahead: bool) -> dict[str, tuple[str, str]]:
    """Each file's status and Markdown (or error), ingested with or without batches."""
    workspace = Workspace(root)
    settings = IngestSettings()
    found: dict[str, tuple[str, str]] = {}
    try:
        with workspace.writing(), OfficeAhead(files, workspace, settings) as run:
            for path in files:
                if ahead:
                    outcome = run.serve(path, ingest_file, path, workspace, settings)
                else:
                    outcome = ingest_file(path, workspace, settings)
                text = outcome.error or workspace.get_markdown(outcome.document_id or "")
                found[path.name] = (outcome.status, text)
    finally:
        workspace.close()
    return found


@pytest.mark.libreoffice
def test_batched_documents_read_as_they_do_alone_and_a_bad_one_fails_alone(
    folder, tmp_path, monkeypatch
):
    files = sorted(folder.iterdir())
    alone = _ingest(files, tmp_path / "alone", ahead=False)
    single = []
    convert_alone = normalise.convert_with_libreoffice
    monkeypatch.setattr(
        normalise,
        "convert_with_libreoffice",
        lambda data, suffix, *a, **k: single.append(suffix) or convert_alone(data, suffix, *a, **k),
    )
    batched = _ingest(files, tmp_path / "batched", ahead=True)
    assert batched == alone
    assert batched["broken.docx"][0] == "FAILED"
    assert all(batched[f"doc{n}.docx"][0] == "INDEXED" for n in range(3))
    assert WORDS[1] in batched["doc1.docx"][1] and WORDS[0] not in batched["doc1.docx"][1]
    assert single == [".docx"]  # only the broken document was converted alone


@pytest.mark.libreoffice
def test_a_batch_that_fails_leaves_every_document_to_be_converted_alone(
    folder, tmp_path, monkeypatch
):
    files = sorted(path for path in folder.iterdir() if path.name != "broken.docx")
    monkeypatch.setattr(
        office_ahead, "convert_batch", lambda documents, **_: Batch([None] * len(documents), 0.0)
    )
    found = _ingest(files, tmp_path / "ws", ahead=True)
    assert {status for status, _ in found.values()} == {"INDEXED"}
    assert "Dormouse" in found["page.html"][1]


@pytest.mark.subprocess
def test_unchanged_documents_are_not_converted_ahead(folder, tmp_path, monkeypatch):
    files = [folder / "doc0.docx"]
    assert _ingest(files, tmp_path / "ws", ahead=True)["doc0.docx"][0] == "INDEXED"
    batches = []
    monkeypatch.setattr(
        office_ahead, "convert_batch", lambda documents, **_: batches.append(documents)
    )
    assert _ingest(files, tmp_path / "ws", ahead=True)["doc0.docx"][0] == "UNCHANGED"
    assert batches == []


def test_a_pdf_is_served_only_for_the_bytes_it_was_made_from(tmp_path):
    ahead = OfficeAhead([], Workspace(tmp_path / "ws"), IngestSettings())
    slot = _Slot(sha256=hashlib.sha256(b"first").hexdigest(), fmt=DocumentFormat.DOCX)
    slot.pdf = Converted(b"%PDF-first", ["a warning"])
    slot.done.set()
    assert ahead._take(slot, b"changed since", DocumentFormat.DOCX) is None
    assert ahead._take(slot, b"first", DocumentFormat.PPTX) is None
    assert ahead._take(slot, b"first", DocumentFormat.DOCX) == (b"%PDF-first", ["a warning"])
    ahead.workspace.close()


def _batches_made(files: list[Path], root: Path, monkeypatch) -> list[list[bytes]]:
    """The documents of each batch the run's files are converted in (none converted)."""
    batches: list[list[bytes]] = []

    def record(documents, **_):
        batches.append([document.data for document in documents])
        return Batch([None] * len(documents), 0.0)

    monkeypatch.setattr(office_ahead, "convert_batch", record)
    workspace = Workspace(root)
    try:
        with OfficeAhead(files, workspace, IngestSettings()) as ahead:
            ahead._thread.join()
    finally:
        workspace.close()
    return batches


@pytest.mark.subprocess
def test_the_same_content_at_two_paths_is_converted_once_and_kinds_are_apart(
    folder, tmp_path, monkeypatch
):
    copy = folder / "copy of doc0.docx"
    copy.write_bytes((folder / "doc0.docx").read_bytes())
    named_pdf = folder / "not really.pdf"  # an ending of another format is not read ahead
    named_pdf.write_bytes((folder / "doc1.docx").read_bytes())
    files = [folder / "doc0.docx", copy, named_pdf, folder / "page.html", folder / "doc2.docx"]
    batches = _batches_made(files, tmp_path / "ws", monkeypatch)
    assert sorted(map(len, batches)) == [1, 2]
    office = next(batch for batch in batches if len(batch) == 2)
    assert office == [(folder / "doc0.docx").read_bytes(), (folder / "doc2.docx").read_bytes()]


@pytest.mark.subprocess
def test_a_batch_that_raises_leaves_its_documents_to_be_converted_alone(
    folder, tmp_path, monkeypatch
):
    def full_disk(documents, **_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(office_ahead, "convert_batch", full_disk)
    workspace = Workspace(tmp_path / "ws")
    files = [folder / "doc0.docx"]
    try:
        with OfficeAhead(files, workspace, IngestSettings()) as ahead:
            ahead._thread.join()
            slot = ahead.slots[files[0]]
            assert slot.done.is_set() and slot.pdf is None
    finally:
        workspace.close()


@pytest.mark.subprocess
def test_an_interrupted_run_does_not_wait_for_its_batch(folder, tmp_path, monkeypatch):
    converting = threading.Event()

    def slow(documents, **_):
        converting.set()
        time.sleep(30)
        return Batch([None] * len(documents), 0.0)

    monkeypatch.setattr(office_ahead, "convert_batch", slow)
    workspace = Workspace(tmp_path / "ws")
    started = time.monotonic()
    try:
        with (
            pytest.raises(KeyboardInterrupt),
            OfficeAhead([folder / "doc0.docx"], workspace, IngestSettings()),
        ):
            assert converting.wait(60)
            raise KeyboardInterrupt
    finally:
        workspace.close()
    assert time.monotonic() - started < 25


def test_a_batch_holds_a_token_the_waiting_document_lends_it(folder, tmp_path, monkeypatch):
    budget = ThreadBudget(1)  # one core: the document waiting for its PDF holds the only token
    held_while_converting: list[int] = []

    def convert(documents, **_):
        held_while_converting.append(budget.in_use)
        pdfs = [Converted(b"%PDF-made-ahead", []) for _ in documents]
        return Batch(pdfs, 0.0)

    monkeypatch.setattr(office_ahead, "convert_batch", convert)
    path = folder / "doc0.docx"
    workspace = Workspace(tmp_path / "ws")
    found: list[Converted | None] = []
    try:
        with OfficeAhead([path], workspace, IngestSettings(), budget=budget) as ahead:
            done = threading.Thread(target=lambda: _wait_for_pdf(ahead, budget, path, found))
            done.start()
            done.join(30)
            assert not done.is_alive(), "the batch waited for the token its document held"
    finally:
        workspace.close()
    assert held_while_converting == [1]  # the batch's own token, lent by the waiting document
    assert found == [Converted(b"%PDF-made-ahead", [])]
    assert budget.in_use == 0


def _wait_for_pdf(ahead: OfficeAhead, budget: ThreadBudget, path: Path, found: list) -> None:
    """One document's job: holding a token, it asks for its PDF as `normalise` does."""
    data = path.read_bytes()
    with budget.job():
        found.append(ahead.serve(path, converted_ahead, data, DocumentFormat.DOCX))
