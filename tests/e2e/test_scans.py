"""A scanned page is checked in the cloud too (issue 21): ReadScans (the container-image
function, the local runtime's contained OCR) reads the page, and the vision model's answer for
it is compared with those words. The scan is one page made at test time: a page with a text
layer rendered at 200 DPI and wrapped as an image-only PDF, as a scanner would make it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drac.aws import keys
from drac.aws.stages.boxes import page_layer_key
from drac.documents.convert import ConversionOptions
from drac.documents.intake.normalise import image_to_pdf
from drac.documents.pdf.layers import PageLayer
from drac.documents.pdf.ocr import ocr_available
from drac.documents.pdf.render import RenderOptions, pdf_facts, render_pages
from drac.ids import document_id_for
from drac.local import Workspace
from drac.local.pipeline import IngestSettings, ingest_file
from drac.models import DocumentStatus, VerificationCounts
from drac.provenance import BoxStatus
from tests.e2e.conftest import CONVERSION_MODEL, upload
from tests.e2e.harness import Cloud
from tests.e2e.test_local_vs_cloud import BedrockFakeVision, _same_chunks
from tests.fakes import FakeBedrockRuntime, _digest
from tests.pdfs import Text, make_pdf, text_page

pytestmark = pytest.mark.skipif(not ocr_available(), reason="the ocr extra is not installed")

KEY = "incoming/acme/service_scan.pdf"
LINES = [
    "Service centre opening hours",
    "The Pune centre opens at 10:30 and closes at 19:00 on weekdays.",
    "Claims are answered within 14 days by the Velvera service team.",
]
FAITHFUL = "## Service centre opening hours\n\n" + "\n\n".join(LINES[1:])
INVENTED = "41"  # the model writes "41 days" for the page's "14 days"


def one_page_scan() -> bytes:
    """A one-page image-only PDF: the page has no text layer, only its picture."""
    page = make_pdf(
        [text_page([Text(line, 72, 720 - 30 * i, size=14) for i, line in enumerate(LINES)])]
    )
    png = next(render_pages(page, RenderOptions(dpi=200, max_side_px=4000))).png
    scan = image_to_pdf(png)
    assert pdf_facts(scan, 10).pages == 1
    return scan


def _answer(deployed: Cloud, scan: bytes, markdown: str) -> None:
    """Script the fake vision model's answer for the scan's page (as the cloud renders it)."""
    (page,) = render_pages(scan, RenderOptions())
    assert page.text_chars == 0  # a scan: nothing to check against but OCR
    deployed.bedrock.page_texts[_digest(page.png)] = markdown


def _ingest(deployed: Cloud, scan: bytes) -> str:
    upload(deployed, scan, KEY)
    assert [run["status"] for run in deployed.wait("ingest")] == ["SUCCEEDED"]
    return document_id_for(scan, "acme")


def _assert_same_as_a_local_ingest(
    deployed: Cloud, opensearch: Any, scan: bytes, document_id: str, tmp_path: Path
) -> None:
    """The local runtime, given the same answer for the page, reads the scan by OCR too and
    stores the same elements (boxes from OCR included), chunks and verification."""
    local_bedrock = FakeBedrockRuntime(None, CONVERSION_MODEL)
    local_bedrock.page_texts.update(deployed.bedrock.page_texts)
    (tmp_path / "in").mkdir()
    source = tmp_path / "in" / "service_scan.pdf"
    source.write_bytes(scan)
    settings = IngestSettings(
        strategy=deployed.runtime.settings.conversion.strategy,
        conversion=ConversionOptions(batch_pages=deployed.runtime.settings.conversion.batch_size),
        tenant="acme",
    )
    workspace = Workspace(tmp_path / "ws")
    outcome = ingest_file(source, workspace, settings, vision=BedrockFakeVision(local_bedrock))
    assert (outcome.status, outcome.document_id) == (DocumentStatus.INDEXED.value, document_id)
    assert _same_chunks(deployed, opensearch, workspace, document_id) >= 1
    local = workspace.get_document(document_id)
    cloud = deployed.runtime.registry.get(document_id)
    assert local is not None and cloud is not None
    assert local.verification == cloud.verification


def test_an_invented_number_on_a_scan_is_unsupported_on_its_page(deployed: Cloud) -> None:
    scan = one_page_scan()
    _answer(deployed, scan, FAITHFUL.replace("14 days", f"{INVENTED} days"))
    document_id = _ingest(deployed, scan)

    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.verification == VerificationCounts(
        pages_checked=1, flagged_pages=1, unsupported=1, missing=1, suspect_rows=0, held_back=0
    )
    summary = json.loads(deployed.runtime.artifacts.get_text(keys.verification_key(document_id)))
    (page,) = summary["pages"]
    assert (page["page"], page["source"]) == (1, "ocr")
    assert page["unsupported"] == [INVENTED] and page["missing"] == ["14"]
    assert deployed.invocations.count("read_scans") == 1  # one page: one OCR invocation
    # the page's words with their boxes come from OCR, and Parse placed the elements on them
    layer = PageLayer.model_validate_json(
        deployed.runtime.artifacts.get_text(page_layer_key(document_id, 1))
    )
    assert layer.source == "ocr" and "Velvera" in {word[0] for word in layer.words}
    elements = deployed.runtime.elements.get_elements(document_id)
    aligned = [e for e in elements if e.boxes and e.boxes.status is BoxStatus.ALIGNED]
    assert aligned and all(e.boxes.source == "ocr" for e in aligned)
    assert {page.page for e in aligned for page in e.boxes.pages} == {1}


def test_an_honest_conversion_of_a_scan_flags_nothing_and_born_digital_skips_ocr(
    cloud: Any, tmp_path: Path
) -> None:
    deployed, _, opensearch, born_digital = cloud
    scan = one_page_scan()
    _answer(deployed, scan, FAITHFUL)
    document_id = _ingest(deployed, scan)
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.verification == VerificationCounts(
        pages_checked=1, flagged_pages=0, unsupported=0, missing=0, suspect_rows=0, held_back=0
    )
    assert not any(w.startswith("verification:") for w in record.warnings)
    assert deployed.invocations.count("read_scans") == 1
    _assert_same_as_a_local_ingest(deployed, opensearch, scan, document_id, tmp_path)

    upload(deployed, born_digital, "incoming/acme/store_locations.pdf")
    assert [run["status"] for run in deployed.wait("ingest")] == ["SUCCEEDED"] * 2
    other = deployed.runtime.registry.get(document_id_for(born_digital, "acme"))
    assert other is not None and other.verification is not None
    assert other.verification.pages_checked == 4  # checked against its own text layer
    assert deployed.invocations.count("read_scans") == 1  # a born-digital PDF pays no OCR
