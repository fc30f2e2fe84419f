"""The cloud's scanned pages (issue 21) on moto: Render names them, Convert checks their answer
against the words ReadScans stored (source "ocr"), and ReadScans reads them through the
containment module, so a page that breaks its limits is left unread, not the invocation."""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import pypdfium2 as pdfium
import pytest
from pdfs import Text, make_pdf, text_page

from drac.aws import keys
from drac.aws.runtime import Runtime
from drac.aws.stages.conversion import (
    BatchItem,
    ConvertInput,
    RenderInput,
    SliceInput,
    convert_pages,
    render_document,
    render_slice,
)
from drac.aws.stages.fanout import MAX_SCAN_GROUPS, SCAN_PAGES_PER_READ, ItemGroup, scan_group_pages
from drac.aws.stages.scans import ScansInput, read_scans
from drac.documents.intake.normalise import image_to_pdf
from drac.documents.pdf import scans
from drac.documents.pdf.ocr import ocr_available
from drac.documents.pdf.render import RenderOptions, render_pages
from drac.models import DocumentRecord
from tests.fakes import FakeBedrockRuntime, _digest

pytestmark = pytest.mark.subprocess

WORDS = "Claims are answered within 14 days by the Velvera service team."


def _scan_page() -> bytes:
    """A one-page image-only PDF (no text layer)."""
    page = make_pdf([text_page([Text(WORDS, 72, 700, size=14)])])
    return image_to_pdf(next(render_pages(page, RenderOptions(dpi=200))).png)


def _two_pages(rt: Runtime) -> bytes:
    """Page 1 born-digital, page 2 a scan, stored as the document's PDF and counted."""
    document = pdfium.PdfDocument(make_pdf([text_page([Text("Opening hours 9 to 5", 72, 700)])]))
    scan = pdfium.PdfDocument(_scan_page())
    document.import_pages(scan)
    out = io.BytesIO()
    document.save(out)
    pdf = out.getvalue()
    rt.artifacts.put_bytes("in.pdf", pdf)
    rt.registry.put(
        DocumentRecord(document_id="d1", source="in.pdf", sha256="0" * 64, owner="run-1")
    )
    render_document(
        rt, RenderInput(document_id="d1", execution="run-1", pdf_bucket="art", pdf_key="in.pdf")
    )
    return pdf


def test_render_names_the_scanned_pages_of_its_slice(cloud: Any) -> None:
    rt, _ = cloud
    _two_pages(rt)
    done = render_slice(
        rt,
        SliceInput(
            document_id="d1", page_count=2, pdf_bucket="art", pdf_key="in.pdf",
            slice=ItemGroup(first=0, last=0),
        ),
    )  # fmt: skip
    assert (done.pages, done.scans, done.has_scans) == (2, [2], True)
    text_only = make_pdf([text_page([Text("Opening hours 9 to 5", 72, 700)])])
    rt.artifacts.put_bytes("text.pdf", text_only)
    born_digital = render_slice(
        rt,
        SliceInput(
            document_id="d2", page_count=1, pdf_bucket="art", pdf_key="text.pdf",
            slice=ItemGroup(first=0, last=0),
        ),
    )  # fmt: skip
    assert (born_digital.scans, born_digital.has_scans) == ([], False)


def _answer_scan(rt: Runtime, pdf: bytes, markdown: str) -> FakeBedrockRuntime:
    fake = FakeBedrockRuntime(pdf, "google.gemma-3-27b-it")
    for page in render_pages(pdf, RenderOptions(), pages=[2]):
        fake.page_texts[_digest(page.png)] = markdown
    rt._clients["bedrock-runtime"] = fake
    return fake


def _checked(rt: Runtime) -> dict[int, dict[str, Any]]:
    convert_pages(rt, ConvertInput(input=BatchItem(document_id="d1", page_count=2, batch=0)))
    stored = json.loads(rt.artifacts.get_text(keys.batch_key("d1", 0)))
    return {page["page"]: page for page in stored["verification"]}


def test_convert_checks_a_scan_against_the_words_read_scans_stored(cloud: Any) -> None:
    rt, _ = cloud
    pdf = _two_pages(rt)
    render_slice(
        rt,
        SliceInput(
            document_id="d1", page_count=2, pdf_bucket="art", pdf_key="in.pdf",
            slice=ItemGroup(first=0, last=0),
        ),
    )  # fmt: skip
    _answer_scan(rt, pdf, WORDS.replace("14 days", "41 days"))
    # no words stored for the scan (OCR could not read it): only the text layer is checked
    assert {n: p["source"] for n, p in _checked(rt).items()} == {1: "text layer"}
    rt.artifacts.put_text(keys.page_ocr_key("d1", 2), WORDS)
    pages = _checked(rt)
    assert pages[2]["source"] == "ocr" and pages[1]["source"] == "text layer"
    assert pages[2]["unsupported"] == ["41"] and pages[2]["missing"] == ["14"]
    _answer_scan(rt, pdf, WORDS)
    assert _checked(rt)[2]["counts"] == {"unsupported": 0, "missing": 0, "suspect_rows": 0}


@pytest.mark.skipif(not ocr_available(), reason="the ocr extra is not installed")
def test_a_page_that_breaks_the_ocr_limits_is_left_unread_not_the_invocation(
    cloud: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, _ = cloud
    _two_pages(rt)
    # the contained OCR worker may use less memory than the engine needs: it is killed
    starved = dataclasses.replace(scans.OCR_LIMITS, memory_bytes=200 * 1024 * 1024)
    monkeypatch.setattr(scans, "OCR_LIMITS", starved)
    event = ScansInput(document_id="d1", pdf_bucket="art", pdf_key="in.pdf", pages=[2])
    done = read_scans(rt, event)
    assert (done.read, done.unread) == ([], [2])
    assert not rt.artifacts.exists(keys.page_ocr_key("d1", 2))


@pytest.mark.parametrize("pages", [1, 20, 999, 1001, 5000, 50_000])
def test_scan_groups_are_at_least_20_pages_and_at_most_50_a_document(pages: int) -> None:
    size = scan_group_pages(pages)
    assert size >= SCAN_PAGES_PER_READ
    assert -(-pages // size) <= MAX_SCAN_GROUPS  # even if every page is a scan
    assert size == SCAN_PAGES_PER_READ or -(-pages // (size - 1)) > MAX_SCAN_GROUPS  # no larger


@pytest.mark.skipif(not ocr_available(), reason="the ocr extra is not installed")
def test_pages_past_the_invocation_budget_are_left_unread_not_the_invocation(
    cloud: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, _ = cloud
    document = pdfium.PdfDocument.new()
    for _ in range(8):
        document.import_pages(pdfium.PdfDocument(_scan_page()))
    out = io.BytesIO()
    document.save(out)
    rt.artifacts.put_bytes("scans.pdf", out.getvalue())
    tight = rt.settings.changed(document_cpu_s=1.0, document_cpu_s_per_mib=0)
    monkeypatch.setattr(rt, "settings", tight)
    pages = list(range(1, 9))
    done = read_scans(rt, ScansInput(document_id="d1", pdf_bucket="art", pdf_key="scans.pdf",
                                     pages=pages))  # fmt: skip
    assert done.unread and len(done.read) < 4  # about 1 s of OCR, not 8 pages of it
    assert sorted(done.read + done.unread) == pages
    assert all(not rt.artifacts.exists(keys.page_ocr_key("d1", n)) for n in done.unread)
