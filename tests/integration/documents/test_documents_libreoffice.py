"""Normalisation with the real headless LibreOffice (installed by scripts/setup.sh)."""

import io
import re
import subprocess
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor

import pytest
from shared_paths import CLOUDWAY, require

from drac.documents.convert import ConversionOptions, convert_to_markdown
from drac.documents.intake.detect import DocumentFormat, detect_format
from drac.documents.intake.normalise import find_soffice, libreoffice_to_pdf, normalise_to_pdf
from drac.documents.pdf.render import page_count
from drac.errors import DocumentError
from drac.ports import MemoryLedger

pytestmark = pytest.mark.libreoffice

CORPUS = require(CLOUDWAY)
SAMPLE_DOCX = b""  # filled lazily from the corpus or built below


def _corpus(kind: str, stem: str = "Airbus A350") -> bytes:
    path = CORPUS / kind / f"{stem}.{kind}"
    if not path.exists():
        pytest.skip(f"corpus file {path} not available")
    return path.read_bytes()


@pytest.mark.parametrize("kind", ["docx", "pptx", "html"])
def test_corpus_office_files_become_pdfs_with_their_text(kind):
    data = _corpus(kind)
    fmt = detect_format(data, f"x.{kind}").format
    pdf = normalise_to_pdf(data, fmt, timeout_s=120)
    assert pdf.startswith(b"%PDF-")
    assert page_count(pdf) >= 1
    result = convert_to_markdown(
        data,
        f"Airbus A350.{kind}",
        options=ConversionOptions(),
        vision=None,
        ledger=MemoryLedger(),
        document_id="d1",
    )
    assert result.format == kind and result.status == "ok"
    assert "<!-- Page 1 -->" in result.markdown
    assert "Airbus A350" in result.markdown.replace("AIRBUS", "Airbus")


def test_an_xlsx_made_by_libreoffice_converts(tmp_path):
    csv = tmp_path / "fares.csv"
    csv.write_text("Route,Fare\nBOM-JFK,1200\nBOM-LHR,800\n")
    profile = (tmp_path / "profile").as_uri()
    subprocess.run(
        [find_soffice(), f"-env:UserInstallation={profile}", "--headless", "--convert-to",
         "xlsx", "--outdir", str(tmp_path), str(csv)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    data = (tmp_path / "fares.xlsx").read_bytes()
    assert detect_format(data, "fares.xlsx").format is DocumentFormat.XLSX
    result = convert_to_markdown(
        data, "fares.xlsx", options=ConversionOptions(), vision=None, ledger=MemoryLedger(),
        document_id="d2",
    )  # fmt: skip
    assert "BOM-JFK" in result.markdown and "1200" in result.markdown


def test_two_conversions_run_concurrently_with_private_profiles():
    data = _corpus("docx")
    with ThreadPoolExecutor(2) as pool:
        pdfs = list(pool.map(lambda _i: libreoffice_to_pdf(data, ".docx", timeout_s=120), [1, 2]))
    assert all(pdf.startswith(b"%PDF-") for pdf in pdfs)


def test_a_docx_that_is_really_another_zip_is_refused_before_libreoffice():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("photos/cat.jpg", b"\xff\xd8\xff")
    with pytest.raises(DocumentError, match="not a DOCX"):
        convert_to_markdown(
            buffer.getvalue(), "report.docx", options=ConversionOptions(), vision=None,
            ledger=MemoryLedger(), document_id="d3",
        )  # fmt: skip


def test_a_damaged_docx_is_a_clear_document_error():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("word/document.xml", b"<w:document>not closed")
    with tempfile.TemporaryDirectory():
        try:
            pdf = libreoffice_to_pdf(buffer.getvalue(), ".docx", timeout_s=120)
        except DocumentError as exc:
            # refused by the reference sanitizer before LibreOffice, or by LibreOffice
            assert re.search(r"LibreOffice could not convert the DOCX|is not well-formed", str(exc))
        else:  # LibreOffice may salvage an empty document; it must still be a real PDF
            assert pdf.startswith(b"%PDF-")
