"""The cost quote: pages, batches, tokens and dollars of documents estimated from their bytes,
on real files made here (PDFs by pdfium, OOXML containers, Markdown)."""

from __future__ import annotations

import io
import math
import os
import zipfile

import pytest
from pdfs import Text, make_pdf

from drac.costs.prices import PriceTable
from drac.costs.quote import (
    MEMBER_CAP,
    QuoteAssumptions,
    QuoteModels,
    conversion_tokens,
    quote_document,
    total_quote,
)
from drac.documents.vision.prompt import batch_prompt, conversion_system_prompt
from drac.models import Strategy

GEMMA = "google.gemma-3-27b-it"
BEDROCK = QuoteModels(backend="bedrock", conversion=GEMMA, planning=GEMMA)
OFFLINE = QuoteModels()
LLM = Strategy(planner="llm")
GEMMA_IN, GEMMA_OUT = 0.23, 0.38  # $/M, drac.costs.prices defaults (Bedrock us-east-1)


def _pdf(pages: int) -> bytes:
    return make_pdf([(612, 792, [Text(f"page {n}", 72, 700)]) for n in range(1, pages + 1)])


def _zip(parts: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in parts.items():
            archive.writestr(name, content)
    return out.getvalue()


def _pptx(slides: int) -> bytes:
    ids = "".join(f'<p:sldId id="{256 + n}" r:id="rId{n + 2}"/>' for n in range(slides))
    presentation = (
        '<?xml version="1.0" encoding="UTF-8"?><p:presentation '
        'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        f"<p:sldIdLst>{ids}</p:sldIdLst></p:presentation>"
    )
    parts = {"[Content_Types].xml": b"<Types/>", "ppt/presentation.xml": presentation.encode()}
    for n in range(1, slides + 1):
        parts[f"ppt/slides/slide{n}.xml"] = b"<p:sld/>"
    return _zip(parts)


def _docx(text_chars: int, stored_pages: int | None = None) -> bytes:
    words = ("word " * (text_chars // 5 + 1))[:text_chars]
    body = (
        f'<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>{words}</w:t></w:r></w:p></w:body>'
        "</w:document>"
    )
    parts = {"[Content_Types].xml": b"<Types/>", "word/document.xml": body.encode()}
    if stored_pages is not None:
        parts["docProps/app.xml"] = (
            f"<Properties><Pages>{stored_pages}</Pages></Properties>".encode()
        )
    return _zip(parts)


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def test_a_7_page_pdf_is_two_batches_with_image_prompt_and_output_tokens() -> None:
    quote = quote_document(
        _pdf(7), "report.pdf", models=BEDROCK, prices=PriceTable(), strategy=Strategy()
    )
    assert (quote.format, quote.pages, quote.pages_estimated, quote.batches) == ("pdf", 7, False, 2)
    system = _tokens(conversion_system_prompt())
    prompts = _tokens(batch_prompt([1, 2, 3, 4, 5], 7)) + _tokens(batch_prompt([6, 7], 7))
    assert quote.conversion.input_tokens == 2 * system + prompts + 7 * 1140
    assert quote.conversion.output_tokens == 7 * 600
    assert quote.conversion.calls == 2
    expected = (quote.conversion.input_tokens * GEMMA_IN + 4200 * GEMMA_OUT) / 1e6
    assert quote.conversion.dollars == pytest.approx(expected)
    assert quote.planning.calls == 0  # the rules planner calls no model


def test_batch_pages_decides_the_batches() -> None:
    quote = quote_document(
        _pdf(7), "r.pdf", models=BEDROCK, prices=PriceTable(), strategy=Strategy(), batch_pages=3
    )
    assert quote.batches == 3


def test_output_is_capped_per_batch_at_the_conversion_max_tokens() -> None:
    batches, _, output = conversion_tokens(7, 5, QuoteAssumptions(), max_output_tokens=1000)
    assert (batches, output) == (2, 1000 + 1000)  # 5 x 600 and 2 x 600 are both over 1,000


def test_offline_costs_nothing_and_sends_no_batch() -> None:
    quote = quote_document(
        _pdf(12), "r.pdf", models=OFFLINE, prices=PriceTable(), strategy=Strategy()
    )
    assert (quote.pages, quote.batches, quote.input_tokens, quote.output_tokens) == (12, 0, 0, 0)
    assert quote.dollars == 0.0


def test_a_pptx_has_one_page_per_slide_listed_marked_estimated() -> None:
    quote = quote_document(
        _pptx(9), "deck.pptx", models=BEDROCK, prices=PriceTable(), strategy=Strategy()
    )
    assert (quote.format, quote.pages, quote.pages_estimated, quote.batches) == ("pptx", 9, True, 2)
    assert quote.pages_basis == "slides in presentation.xml"
    assert quote.conversion.output_tokens == 9 * 600


def test_a_docx_is_paged_by_its_text_unless_its_stored_page_count_is_more() -> None:
    by_text = quote_document(
        _docx(3000), "a.docx", models=OFFLINE, prices=PriceTable(), strategy=Strategy()
    )
    assert (by_text.pages, by_text.pages_estimated) == (3, True)  # 3,000 / 1,200 a page
    stale = quote_document(
        _docx(3000, stored_pages=1),
        "a.docx",
        models=OFFLINE,
        prices=PriceTable(),
        strategy=Strategy(),
    )
    assert stale.pages == 3
    stored = quote_document(
        _docx(3000, stored_pages=8),
        "a.docx",
        models=OFFLINE,
        prices=PriceTable(),
        strategy=Strategy(),
    )
    assert (stored.pages, stored.pages_basis) == (8, "<Pages> in docProps/app.xml")


def test_markdown_makes_no_conversion_call_and_plans_by_its_characters() -> None:
    text = ("# Title\n\n" + "A sentence of the policy. " * 200).encode()
    quote = quote_document(text, "policy.md", models=BEDROCK, prices=PriceTable(), strategy=LLM)
    assert (quote.format, quote.pages, quote.batches, quote.conversion.calls) == (
        "markdown",
        1,
        0,
        0,
    )
    chunks = math.ceil(len(text) / 1100)  # the default strategy's target size
    assert quote.chunks == chunks == 5
    assert quote.planning.input_tokens == round(chunks * 136.0)
    assert quote.planning.output_tokens == round(chunks * 1.49)
    expected = (round(chunks * 136.0) * GEMMA_IN + round(chunks * 1.49) * GEMMA_OUT) / 1e6
    assert quote.dollars == pytest.approx(expected)


def test_an_unpriced_model_is_listed_and_counted_as_zero() -> None:
    unpriced: set[str] = set()
    models = QuoteModels(backend="openai", conversion="mystery-vision-9")
    quote = quote_document(
        _pdf(2), "r.pdf", models=models, prices=PriceTable(), strategy=Strategy(), unpriced=unpriced
    )
    assert quote.conversion.input_tokens > 0 and quote.dollars == 0.0
    assert unpriced == {"mystery-vision-9"}


def test_the_total_sums_every_document() -> None:
    rows = [
        quote_document(
            _pdf(n), f"{n}.pdf", models=BEDROCK, prices=PriceTable(), strategy=Strategy()
        )
        for n in (1, 6, 11)
    ]
    total = total_quote(rows, models=BEDROCK, prices=PriceTable())
    assert (total.pages, total.batches) == (18, 1 + 2 + 3)
    assert total.input_tokens == sum(r.input_tokens for r in rows)
    assert total.dollars == pytest.approx(sum(r.dollars for r in rows))
    assert total.failed == 0


def test_a_corrupt_pdf_gets_its_reason_and_no_numbers() -> None:
    quote = quote_document(
        b"%PDF-1.7\n garbage", "bad.pdf", models=BEDROCK, prices=PriceTable(), strategy=Strategy()
    )
    assert quote.error and "PDF" in quote.error
    assert (quote.pages, quote.dollars) == (0, 0.0)


def test_a_presentation_part_that_inflates_like_a_bomb_is_refused() -> None:
    huge = b"<p:sldId/>" + b" " * (MEMBER_CAP + 10)
    data = _zip({"[Content_Types].xml": b"<Types/>", "ppt/presentation.xml": huge})
    quote = quote_document(
        data, "bomb.pptx", models=BEDROCK, prices=PriceTable(), strategy=Strategy()
    )
    assert quote.error is not None and "decompression bomb" in quote.error
    assert quote.pages == 0


def test_a_presentation_part_larger_than_the_cap_is_not_read_whole() -> None:
    noise = os.urandom(MEMBER_CAP // 2 + 1024).hex().encode()  # incompressible: no bomb ratio
    data = _zip({"[Content_Types].xml": b"<Types/>", "ppt/presentation.xml": noise})
    quote = quote_document(
        data, "big.pptx", models=BEDROCK, prices=PriceTable(), strategy=Strategy()
    )
    assert quote.error == "ppt/presentation.xml is larger than 8 MiB"
