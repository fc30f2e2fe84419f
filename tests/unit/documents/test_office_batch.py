"""Office documents converted in batches by one LibreOffice: each document's PDF is made from its
own file only, and a batch that hangs or crashes gives no PDF at all (each document is then
converted alone)."""

import stat
import time
from pathlib import Path

import pytest
from reliability.hostile_links import docx as linked_docx
from reliability.hostile_links import pdf_text

from drac.documents.intake import normalise
from drac.documents.intake.detect import DocumentFormat
from drac.documents.intake.normalise import convert_with_libreoffice
from drac.documents.intake.office_batch import Prepared, convert_batch, prepare
from drac.errors import DocumentError


@pytest.fixture(autouse=True)
def _fakes_may_write_their_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake LibreOffices write marks to tmp_path; the real one may write only its work folder."""
    monkeypatch.setattr(normalise, "LIBREOFFICE_WRITABLE", [str(tmp_path)])


def _fake_soffice(tmp_path: Path, per_file: str) -> str:
    """A LibreOffice stand-in running `per_file` for each input file ($f), its PDF to write
    at $out/<stem>.pdf, as `soffice --convert-to pdf --outdir OUT FILE...` does."""
    script = tmp_path / "soffice"
    script.write_text(
        "#!/bin/sh\n"
        'while [ "$#" -gt 0 ]; do case "$1" in --outdir) out="$2"; shift 2;;'
        " --convert-to) shift 2;; -*) shift;;"
        " *) break;; esac; done\n"
        'mkdir -p "$out"\n'
        'for f in "$@"; do stem=$(basename "$f"); stem="${stem%.*}"\n'
        f"{per_file}\n"
        "done\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def docx(paragraphs: list[str]) -> bytes:
    """A DOCX of "Body text" then these paragraphs, made by the hostile-file helpers."""
    body = "".join(f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>" for text in paragraphs)
    return linked_docx(body, [])


def _prepared(words: str, budget_s: float | None = 60.0) -> Prepared:
    data = docx([words])
    return Prepared(data, DocumentFormat.DOCX, data, (), budget_s, 0.0)


_COPIES = 'cat "$f" > "$out/$stem.pdf"'
"""A stand-in whose "PDF" is its input: what each document is given shows where it came from."""


@pytest.mark.subprocess
def test_each_document_is_given_the_output_of_its_own_file(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, _COPIES))
    documents = [_prepared(f"document number {n}") for n in range(5)]
    batch = convert_batch(documents, timeout_s=30)
    assert [pdf.data if pdf else None for pdf in batch.pdfs] == [d.readable for d in documents]


@pytest.mark.subprocess
def test_a_document_without_output_alone_is_converted_again_alone(tmp_path, monkeypatch):
    # the stand-in cannot load the second file (as LibreOffice prints and goes on)
    per_file = 'grep -q "cannot be loaded" "$f" 2>/dev/null || ' + _COPIES
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, per_file))
    refused = Prepared(b"cannot be loaded", DocumentFormat.DOCX, b"cannot be loaded", (), 60, 0)
    documents = [_prepared("first"), refused, _prepared("third")]
    batch = convert_batch(documents, timeout_s=30)
    assert batch.pdfs[1] is None
    assert [pdf.data for pdf in (batch.pdfs[0], batch.pdfs[2]) if pdf] == [
        documents[0].readable,
        documents[2].readable,
    ]


@pytest.mark.subprocess
def test_a_batch_that_hangs_gives_no_pdf_at_all(tmp_path, monkeypatch):
    per_file = 'grep -q HANG "$f" && sleep 60; ' + _COPIES
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, per_file))
    hanging = Prepared(b"HANG", DocumentFormat.DOCX, b"HANG", (), 60.0, 0.0)
    started = time.monotonic()
    batch = convert_batch([_prepared("first"), hanging, _prepared("third")], timeout_s=1)
    assert batch.pdfs == [None, None, None]
    assert batch.cpu_share_s == 0.0
    assert time.monotonic() - started < 20


@pytest.mark.subprocess
def test_a_batch_that_crashes_gives_no_pdf_at_all(tmp_path, monkeypatch):
    # the first file's PDF is written before the crash: none is trusted after it
    per_file = _COPIES + '; grep -q CRASH "$f" && kill -SEGV $$'
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, per_file))
    crashing = Prepared(b"CRASH", DocumentFormat.DOCX, b"CRASH", (), 60.0, 0.0)
    batch = convert_batch([_prepared("first"), crashing, _prepared("third")], timeout_s=30)
    assert batch.pdfs == [None, None, None]


def test_a_batch_holds_documents_of_one_kind():
    html = Prepared(b"<p>x</p>", DocumentFormat.HTML, b"<p>x</p>", (), None, 0.0)
    with pytest.raises(ValueError, match="one kind"):
        convert_batch([_prepared("a"), html])


def test_only_office_documents_read_as_pages_are_prepared():
    with pytest.raises(DocumentError, match="not converted in batches"):
        prepare(b"a,b\n1,2\n", DocumentFormat.CSV, None)


@pytest.mark.libreoffice
def test_libreoffice_batches_give_each_document_the_pdf_of_its_own_words():
    words = ["Aardvark quarterly ledger", "Bluebell pump manual", "Cormorant audit notes"]
    documents = [prepare(docx([text]), DocumentFormat.DOCX, 60.0) for text in words]
    batch = convert_batch(documents, timeout_s=120)
    assert all(batch.pdfs)
    for text, pdf, document in zip(words, batch.pdfs, documents, strict=True):
        assert pdf is not None
        found = pdf_text(pdf.data)
        assert text in found
        assert not any(other in found for other in words if other != text)
        alone = convert_with_libreoffice(document.data, ".docx", "pdf", timeout_s=120)
        assert pdf_text(alone.data) == found
    assert 0 < batch.cpu_share_s < 60
