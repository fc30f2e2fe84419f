import io
import re
import threading
import time
from collections.abc import Sequence

import pytest
from pdfs import Text, make_pdf
from PIL import Image, ImageDraw

from drac.documents.convert import ConversionOptions, convert_to_markdown
from drac.documents.intake.normalise import image_to_pdf
from drac.errors import DocumentError, ModelCallError
from drac.models import TokenUsage
from drac.ports import MemoryLedger, ModelReply, VisionModel


class ScriptedVision(VisionModel):
    """A vision model that answers from the prompt's page numbers (or per a script)."""

    name = "scripted"

    def __init__(self, answer=None, delay: float = 0.0):
        self.answer = answer
        self.delay = delay
        self.calls: list[tuple[str, str, list[bytes]]] = []
        self.active = 0
        self.peak = 0
        self.lock = threading.Lock()

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        with self.lock:
            self.calls.append((system, prompt, list(images)))
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            time.sleep(self.delay)
            pages = [int(n) for n in re.findall(r"image \d+ is page (\d+)", prompt)]
            text = (
                self.answer(pages)
                if self.answer
                else "\n\n".join(
                    f"<!-- Page {n} -->\n\n# Page {n} title\n\nBody {n}." for n in pages
                )
            )
            return ModelReply(
                text=text,
                model="scripted-1",
                usage=TokenUsage(input_tokens=10, output_tokens=5),
                latency_ms=3,
            )
        finally:
            with self.lock:
                self.active -= 1


def _pdf(pages: int) -> bytes:
    return make_pdf([(612, 792, [Text(f"Page {n} text", 72, 700)]) for n in range(1, pages + 1)])


def _convert(data, vision, options=None, name="doc.pdf", ledger=None, progress=None):
    return convert_to_markdown(
        data,
        name,
        options=options or ConversionOptions(),
        vision=vision,
        ledger=ledger or MemoryLedger(),
        document_id="d1",
        progress=progress,
    )


def test_batches_of_five_are_converted_and_reassembled_in_page_order():
    vision = ScriptedVision(delay=0.01)
    ledger = MemoryLedger()
    seen = []
    result = _convert(
        _pdf(12), vision, ledger=ledger, progress=lambda done, total: seen.append((done, total))
    )
    assert result.status == "ok" and result.failures == [] and result.pages == 12
    assert [int(n) for n in re.findall(r"<!-- Page (\d+) -->", result.markdown)] == list(
        range(1, 13)
    )
    assert sorted(len(images) for _, _, images in vision.calls) == [2, 5, 5]
    assert all(images[0].startswith(b"\x89PNG") for _, _, images in vision.calls)
    assert "Markdown table syntax is forbidden" in vision.calls[0][0]
    assert result.model == "scripted"
    assert len(ledger.entries) == 3
    entry = ledger.entries[0]
    assert (entry.stage, entry.model, entry.input_tokens, entry.output_tokens, entry.outcome) == (
        "conversion",
        "scripted-1",
        10,
        5,
        "ok",
    )
    assert seen[-1] == (12, 12)


def test_no_more_than_max_in_flight_batches_run_at_once():
    vision = ScriptedVision(delay=0.05)
    _convert(_pdf(12), vision, ConversionOptions(batch_pages=1, max_in_flight=3))
    assert len(vision.calls) == 12
    assert 2 <= vision.peak <= 3


def test_a_failed_batch_becomes_error_markers_and_the_document_is_partial():
    def answer(pages):
        if 6 in pages:
            raise ModelCallError("ThrottlingException after 6 attempts")
        return "\n\n".join(f"<!-- Page {n} -->\n\nText {n}" for n in pages)

    ledger = MemoryLedger()
    result = _convert(_pdf(11), ScriptedVision(answer), ledger=ledger)
    assert result.status == "partial"
    assert result.failures == [
        "pages 6-10: conversion failed: ThrottlingException after 6 attempts"
    ]
    for n in range(6, 11):
        assert (
            f"<!-- Page {n}: conversion failed: ThrottlingException after 6 attempts -->"
            in result.markdown
        )
    assert "Text 11" in result.markdown and "Text 5" in result.markdown
    assert [e.outcome.startswith("error") for e in ledger.entries].count(True) == 1


def test_an_empty_answer_is_retried_then_marked_failed():
    vision = ScriptedVision(lambda pages: "   ")
    result = _convert(_pdf(2), vision, ConversionOptions(batch_attempts=2))
    assert len(vision.calls) == 2
    assert result.status == "partial"
    assert "<!-- Page 1: conversion failed: the model returned no content -->" in result.markdown


def test_markers_only_without_content_is_garbage_for_text_pages():
    result = _convert(_pdf(1), ScriptedVision(lambda pages: "<!-- Page 1 -->"))
    assert result.status == "partial"


def test_garbage_without_markers_is_kept_with_warnings():
    result = _convert(_pdf(1), ScriptedVision(lambda pages: "```\nSure! Here it is: text\n```"))
    assert result.status == "ok"
    assert result.markdown.startswith("<!-- Page 1 -->\n\nSure! Here it is: text")
    assert any("added the missing marker for page 1" in w for w in result.warnings)


def test_a_crashing_client_does_not_sink_the_document():
    def answer(pages):
        raise RuntimeError("bug in client")

    result = _convert(_pdf(1), ScriptedVision(answer))
    assert result.status == "partial" and "unexpected RuntimeError" in result.failures[0]


def test_offline_conversion_when_no_model_is_configured():
    result = _convert(_pdf(3), None)
    assert result.model == "offline" and result.status == "ok" and result.pages == 3
    assert "<!-- Page 3 -->\n\nPage 3 text" in result.markdown


def _scan_pdf() -> bytes:
    image = Image.new("L", (850, 1100), 255)
    ImageDraw.Draw(image).rectangle((100, 100, 700, 160), fill=0)  # ink, but no text layer
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return image_to_pdf(buffer.getvalue())


@pytest.mark.subprocess
def test_offline_conversion_of_a_scan_is_partial():
    result = _convert(_scan_pdf(), None)
    assert result.status == "partial"
    assert any("vision model" in w for w in result.warnings)


def test_a_blank_page_is_not_mistaken_for_a_scan():
    result = _convert(make_pdf([(612, 792)]), None)
    assert result.status == "ok"
    assert result.warnings == []
    assert result.markdown.strip() == "<!-- Page 1 -->"


def test_markdown_is_returned_as_is_with_newlines_normalised():
    result = _convert("\ufeff# Titre\r\n\r\nCafé\r".encode("utf-8"), ScriptedVision(), name="a.md")
    assert result.markdown == "# Titre\n\nCafé\n"
    assert (result.format, result.pages, result.status) == ("markdown", 1, "ok")


def test_invalid_text_is_a_document_error():
    with pytest.raises(DocumentError, match="not valid UTF-8 text"):
        _convert(b"# Title\n\xff\xfe\xfd broken", None, name="a.md")


def test_the_file_size_limit_is_enforced():
    with pytest.raises(DocumentError, match="MiB limit"):
        _convert(b"x" * 2000, None, ConversionOptions(max_file_bytes=1000), name="a.md")


def test_corrupt_and_encrypted_pdfs_are_document_errors():
    from pathlib import Path

    with pytest.raises(DocumentError, match="corrupt"):
        _convert(b"%PDF-1.4\nnonsense", ScriptedVision())
    encrypted = (Path(__file__).parent / "data" / "encrypted.pdf").read_bytes()
    with pytest.raises(DocumentError, match="password"):
        _convert(encrypted, None)


def test_a_mismatched_name_is_a_warning():
    result = _convert(_pdf(1), None, name="slides.pptx")
    assert any("file name says pptx" in w for w in result.warnings)


def test_the_first_converter_that_accepts_a_document_converts_it(monkeypatch):
    """The routes are a registry tried in order: a converter put before the others takes the
    documents it accepts, and every other document still goes the route it went."""
    from drac.documents import convert as convert_module
    from drac.documents.conversion import Conversion, ConversionResult

    class Shouting:
        def accepts(self, conversion: Conversion) -> bool:
            return conversion.format.is_text

        def convert(self, conversion: Conversion) -> ConversionResult:
            text = conversion.data.decode().upper()
            return ConversionResult(
                markdown=text, format="md", pages=1, status="ok", model="shouting"
            )

    monkeypatch.setattr(convert_module, "CONVERTERS", (Shouting(), *convert_module.CONVERTERS))
    common = {"options": ConversionOptions(), "ledger": MemoryLedger(), "document_id": "d"}
    text = convert_to_markdown(b"# Fares\n\nSome text.\n", "fares.md", vision=None, **common)
    assert (text.markdown, text.model) == ("# FARES\n\nSOME TEXT.\n", "shouting")
    pdf = make_pdf([(612, 792, [Text("Fares", 72, 700)])])
    offline = convert_to_markdown(pdf, "fares.pdf", vision=None, **common)
    assert offline.model == "offline" and "Fares" in offline.markdown
    vision = convert_to_markdown(pdf, "fares.pdf", vision=ScriptedVision(), **common)
    assert vision.model == "scripted"
