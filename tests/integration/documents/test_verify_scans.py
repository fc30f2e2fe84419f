"""A vision model's page that has no text layer (a scan) is checked against what the real OCR
engine reads of it (issue 21): an invented number is flagged, the faithful answer is not."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from drac.documents.convert import ConversionOptions, convert_to_markdown
from drac.documents.intake.normalise import image_to_pdf
from drac.documents.pdf.ocr import ocr_available
from drac.documents.pdf.render import RenderOptions, render_pages
from drac.ports import MemoryLedger, ModelReply, VisionModel
from tests.pdfs import Text, make_pdf, text_page

pytestmark = pytest.mark.skipif(not ocr_available(), reason="the ocr extra is not installed")

LINES = [
    "Service centre opening hours",
    "The Pune centre opens at 10:30 and closes at 19:00 on weekdays.",
    "Claims are answered within 14 days by the Velvera service team.",
]


class ScriptedVision(VisionModel):
    """Answers every batch with the given page Markdown."""

    name = "scripted"

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        """The scripted answer, whatever the images."""
        return ModelReply(text=self.answer, model=self.name, finish_reason="stop")


def _scan() -> bytes:
    page = make_pdf(
        [text_page([Text(line, 72, 720 - 30 * i, size=14) for i, line in enumerate(LINES)])]
    )
    png = next(render_pages(page, RenderOptions(dpi=200, max_side_px=4000))).png
    return image_to_pdf(png)  # an image-only page: no text layer


def _convert(answer: str, **options: object) -> list:
    result = convert_to_markdown(
        _scan(), "scan.pdf", options=ConversionOptions(**options), vision=ScriptedVision(answer),
        ledger=MemoryLedger(), document_id="d",
    )  # fmt: skip
    return result.verification


def test_a_scanned_page_is_checked_against_ocr() -> None:
    faithful = "<!-- Page 1 -->\n\n## Service centre opening hours\n\n" + "\n\n".join(LINES[1:])
    (page,) = _convert(faithful)
    assert page.source == "ocr" and page.flags == 0
    (page,) = _convert(faithful.replace("14 days", "41 days"))
    assert page.unsupported == ("41",) and page.missing == ("14",)
    assert _convert(faithful, verify_scans=False) == []  # asked not to: not checked
