"""Ingest keeps the PDF a non-PDF source was rendered from, and converts it as before."""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageDraw

from drac.documents.convert import ConversionOptions, convert_to_markdown
from drac.local import Workspace
from drac.local.pipeline import IngestSettings, ingest_file
from drac.ports import MemoryLedger, ModelReply, VisionModel

pytestmark = pytest.mark.subprocess

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "documents"


class PageVision(VisionModel):
    """A vision model writing one short section per page it is shown."""

    name = "fake-vision"

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        pages = re.findall(r"<!-- Page (\d+) -->", prompt)
        text = "\n\n".join(f"<!-- Page {n} -->\n\n# Scan {n}\n\nA scanned page." for n in pages)
        return ModelReply(text=text, model=self.name)


@pytest.fixture
def workspace(tmp_path: Path):
    ws = Workspace(tmp_path / "ws")
    yield ws
    ws.close()


def _scan(path: Path) -> Path:
    image = Image.new("L", (400, 300), 255)
    ImageDraw.Draw(image).rectangle((40, 40, 360, 100), fill=0)
    image.save(path, format="PNG")
    return path


def _stored(workspace: Workspace, document_id: str, name: str) -> bytes:
    return workspace.artifacts.get_bytes(workspace.document_key(document_id, name))


def test_an_image_keeps_its_normalised_pdf_and_its_format(
    workspace: Workspace, tmp_path: Path
) -> None:
    path = _scan(tmp_path / "scan.png")
    outcome = ingest_file(path, workspace, IngestSettings(), vision=PageVision())
    record = workspace.get_document(outcome.document_id or "")
    assert record is not None and record.format == "png" and record.status.value == "INDEXED"
    pdf = _stored(workspace, record.document_id, "normalised.pdf")
    assert len(pdfium.PdfDocument(pdf)) == 1
    direct = convert_to_markdown(
        path.read_bytes(),
        path.name,
        options=ConversionOptions(),
        vision=PageVision(),
        ledger=MemoryLedger(),
        document_id=record.document_id,
    )
    assert workspace.get_markdown(record.document_id) == direct.markdown
    assert record.warnings == [*direct.warnings, *direct.failures]


def test_pdf_and_markdown_sources_store_no_second_pdf(workspace: Workspace, tmp_path: Path) -> None:
    for name in ("warranty_and_service.pdf", "purchasing.md"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
        outcome = ingest_file(tmp_path / name, workspace, IngestSettings())
        with pytest.raises(KeyError):
            _stored(workspace, outcome.document_id or "", "normalised.pdf")


def test_a_misnamed_image_keeps_the_detection_warning(workspace: Workspace, tmp_path: Path) -> None:
    path = _scan(tmp_path / "scan.jpg")
    outcome = ingest_file(path, workspace, IngestSettings(), vision=PageVision())
    record = workspace.get_document(outcome.document_id or "")
    assert record is not None and record.format == "png"
    assert any("jpg" in w or "jpeg" in w for w in record.warnings[:1]), record.warnings


@pytest.mark.libreoffice
def test_an_office_document_keeps_the_pdf_libreoffice_made(
    workspace: Workspace, tmp_path: Path
) -> None:
    shutil.copy(EXAMPLES / "environmental_policy.docx", tmp_path / "policy.docx")
    outcome = ingest_file(tmp_path / "policy.docx", workspace, IngestSettings())
    record = workspace.get_document(outcome.document_id or "")
    assert record is not None and record.format == "docx" and record.status.value == "INDEXED"
    pdf = _stored(workspace, record.document_id, "normalised.pdf")
    assert pdf.startswith(b"%PDF") and len(pdfium.PdfDocument(pdf)) == record.pages
    assert io.BytesIO(pdf).getbuffer().nbytes > 1000
