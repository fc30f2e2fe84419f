"""A cost quote before work: pages, batches, model tokens and dollars of documents that have
not been converted, estimated from their bytes without converting anything.

What is counted and what is assumed (every assumption is a field of `QuoteAssumptions`):
- pages: a PDF's page count from pdfium (exact); a PPTX's slides listed in
  `ppt/presentation.xml`; a DOCX's text length at 1,200 characters a page, or the `<Pages>`
  its writing program stored in `docProps/app.xml` when that is more (often stale: every
  corpus DOCX says 1); HTML by its text length the same way. 1,200 is the corpus' business
  documents as LibreOffice lays them out (about 1,000 characters a page measured on the first
  six DOCX, rounded up to err on the side of more pages; BENCHMARKS.md "Cost quote").
  Office and HTML pages are *estimates*: LibreOffice decides the real count.
  Markdown and text are one page, a spreadsheet one page per sheet; neither is sent to a
  model for conversion.
- conversion: one model call per batch of `batch_pages` pages. Input: the page images
  (`image_tokens_per_page`, from docs/aws.md "Costs to expect": ~1,300 input tokens a page
  including the system prompt's share in 5-page batches) plus the real system and batch
  prompts at 4 characters a token. Output: `output_tokens_per_page` (600, docs/aws.md and
  bench/cloud_throughput.py), capped per batch at the conversion's `max_tokens` (8,192).
- planning (LLM planner only): 136.0 input and 1.49 output tokens per chunk, measured in
  BENCHMARKS.md "Planning tokens"; chunks are the Markdown's characters over the strategy's
  target size, the Markdown being the converted output (output tokens x 4 characters) or the
  text itself.
- embedding (when an embedding model is given): the Markdown's characters at 4 a token.
- dollars: the price table's (`drac.costs.prices`); local models cost nothing; a model the
  table does not know is listed as unpriced and counted as $0.
"""

from __future__ import annotations

import io
import math
import re
import zipfile
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from drac.costs.prices import PriceTable
from drac.costs.report import CHARS_PER_TOKEN, StageCost
from drac.documents.intake.archive import check_archive
from drac.documents.intake.detect import DocumentFormat, detect_format
from drac.documents.pdf.render import page_batches, page_count
from drac.documents.text import decode_text
from drac.documents.vision.prompt import batch_prompt, conversion_system_prompt
from drac.errors import DocumentError
from drac.models import Strategy

MEMBER_CAP = 8 * 1024 * 1024
"""Largest ZIP member (inflated) read to count pages: more is not a plausible part."""
_SLIDE = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?sldId\b")
_SHEET = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?sheet\b")
_PAGES = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?Pages>\s{0,10}(\d{1,7})\s{0,10}<")
_TAG = re.compile(rb"<[^<>]{0,100000}>")
_SCRIPT = re.compile(rb"<(script|style)\b[^<>]{0,10000}>.{0,10000000}?</\1\s{0,10}>", re.I | re.S)
_SPACE = re.compile(rb"\s+")


class QuoteAssumptions(BaseModel):
    """The per-page and per-chunk numbers a quote rests on (module docstring: sources)."""

    model_config = ConfigDict(frozen=True)

    image_tokens_per_page: int = Field(default=1140, ge=0)
    output_tokens_per_page: int = Field(default=600, ge=0)
    chars_per_office_page: int = Field(default=1200, ge=1)
    planning_input_per_chunk: float = Field(default=136.0, ge=0)
    planning_output_per_chunk: float = Field(default=1.49, ge=0)


class QuoteModels(BaseModel):
    """The models a run would call; None where it calls none (offline, rules planner)."""

    model_config = ConfigDict(frozen=True)

    backend: str = "offline"
    conversion: str | None = None
    planning: str | None = None
    embedding: str | None = None


class PageEstimate(BaseModel):
    """A document's page count, whether it is exact, and what it was read from."""

    model_config = ConfigDict(frozen=True)

    pages: int
    estimated: bool
    basis: str
    text_chars: int | None = Field(default=None, description="characters, when they were read")


class DocumentQuote(BaseModel):
    """One document's quote."""

    model_config = ConfigDict(frozen=True)

    name: str
    format: str = ""
    pages: int = 0
    pages_estimated: bool = False
    pages_basis: str = ""
    batches: int = 0
    markdown_chars: int = 0
    chunks: int = 0
    conversion: StageCost = StageCost()
    planning: StageCost = StageCost()
    embedding: StageCost = StageCost()
    error: str | None = None

    @property
    def input_tokens(self) -> int:
        """Model input tokens of every stage."""
        return (
            self.conversion.input_tokens + self.planning.input_tokens + self.embedding.input_tokens
        )

    @property
    def output_tokens(self) -> int:
        """Model output tokens of every stage."""
        return self.conversion.output_tokens + self.planning.output_tokens

    @property
    def dollars(self) -> float:
        """Dollars of every stage."""
        return self.conversion.dollars + self.planning.dollars + self.embedding.dollars


class Quote(BaseModel):
    """A quote for a set of documents: each one, the totals, and what it assumed."""

    model_config = ConfigDict(frozen=True)

    documents: tuple[DocumentQuote, ...]
    pages: int
    batches: int
    conversion: StageCost
    planning: StageCost
    embedding: StageCost
    input_tokens: int
    output_tokens: int
    dollars: float
    models: QuoteModels
    prices_as_of: str
    unpriced_models: tuple[str, ...]
    assumptions: QuoteAssumptions
    batch_pages: int
    failed: int


def _member(data: bytes, name: str) -> bytes | None:
    """One ZIP member's bytes (None when absent); the container's headers are checked first
    and no more than MEMBER_CAP inflated bytes are read."""
    members = {info.filename: info for info in check_archive(data)}
    if name not in members:
        return None
    with zipfile.ZipFile(io.BytesIO(data)) as archive, archive.open(members[name]) as stream:
        content = stream.read(MEMBER_CAP + 1)
    if len(content) > MEMBER_CAP:
        raise DocumentError(f"{name} is larger than {MEMBER_CAP // 1048576} MiB")
    return content


def _text_chars(markup: bytes) -> int:
    """Characters of text in XML or HTML once tags (and scripts, styles) are dropped."""
    text = _TAG.sub(b" ", _SCRIPT.sub(b" ", markup))
    return len(_SPACE.sub(b" ", text).strip().decode("utf-8", "replace"))


def _pages_from_chars(chars: int, per_page: int) -> int:
    return max(1, math.ceil(chars / per_page))


def estimate_pages(
    data: bytes, fmt: DocumentFormat, assumptions: QuoteAssumptions, max_pages: int = 5000
) -> PageEstimate:
    """The pages a document would have once converted, from its bytes alone."""
    per_page = assumptions.chars_per_office_page
    if fmt is DocumentFormat.PDF:
        return PageEstimate(pages=page_count(data, max_pages), estimated=False, basis="pdfium")
    if fmt.is_text:
        return PageEstimate(
            pages=1, estimated=False, basis="text", text_chars=len(decode_text(data))
        )
    if fmt is DocumentFormat.PPTX:
        slides = len(_SLIDE.findall(_member(data, "ppt/presentation.xml") or b""))
        return PageEstimate(
            pages=max(slides, 1), estimated=True, basis="slides in presentation.xml"
        )
    if fmt is DocumentFormat.DOCX:
        body = _member(data, "word/document.xml") or b""
        chars = _text_chars(body)
        stored = _PAGES.search(_member(data, "docProps/app.xml") or b"")
        from_text = _pages_from_chars(chars, per_page)
        if stored and int(stored.group(1)) > from_text:
            return PageEstimate(
                pages=int(stored.group(1)),
                estimated=True,
                basis="<Pages> in docProps/app.xml",
                text_chars=chars,
            )
        return PageEstimate(
            pages=_pages_from_chars(chars, per_page),
            estimated=True,
            basis=f"text length / {per_page:,} characters",
            text_chars=chars,
        )
    if fmt is DocumentFormat.HTML:
        chars = _text_chars(data)
        return PageEstimate(
            pages=_pages_from_chars(chars, per_page),
            estimated=True,
            basis=f"text length / {per_page:,} characters",
            text_chars=chars,
        )
    if fmt is DocumentFormat.XLSX:
        sheets = len(_SHEET.findall(_member(data, "xl/workbook.xml") or b""))
        return PageEstimate(
            pages=max(sheets, 1),
            estimated=False,
            basis="sheets in workbook.xml",
            text_chars=len(data),
        )
    if fmt in (DocumentFormat.CSV, DocumentFormat.TSV):
        return PageEstimate(
            pages=1, estimated=False, basis="one table", text_chars=len(decode_text(data))
        )
    if fmt.is_spreadsheet:
        return PageEstimate(
            pages=1, estimated=True, basis="sheets not counted", text_chars=len(data)
        )
    return PageEstimate(
        pages=1,
        estimated=fmt is DocumentFormat.TIFF,
        basis="one image" if fmt is not DocumentFormat.TIFF else "TIFF frames not counted",
    )


def _tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def conversion_tokens(
    pages: int, batch_pages: int, assumptions: QuoteAssumptions, max_output_tokens: int = 8192
) -> tuple[int, int, int]:
    """Batches, input tokens and output tokens of converting `pages` pages with a model."""
    system = _tokens(conversion_system_prompt())
    batches = page_batches(pages, batch_pages)
    input_tokens = output_tokens = 0
    for numbers in batches:
        input_tokens += system + _tokens(batch_prompt(numbers, pages))
        input_tokens += len(numbers) * assumptions.image_tokens_per_page
        output_tokens += min(len(numbers) * assumptions.output_tokens_per_page, max_output_tokens)
    return len(batches), input_tokens, output_tokens


def _priced(
    model: str | None,
    tokens_in: int,
    tokens_out: int,
    calls: int,
    prices: PriceTable,
    unpriced: set[str],
) -> StageCost:
    if model is None or (tokens_in == 0 and tokens_out == 0):
        return StageCost()
    price = prices.price_of(model)
    if price is None:
        unpriced.add(model)
    dollars = price.cost(tokens_in, tokens_out) if price else 0.0
    return StageCost(calls=calls, input_tokens=tokens_in, output_tokens=tokens_out, dollars=dollars)


def quote_document(
    data: bytes,
    name: str,
    *,
    models: QuoteModels,
    prices: PriceTable,
    strategy: Strategy,
    batch_pages: int = 5,
    max_pages: int = 5000,
    max_output_tokens: int = 8192,
    assumptions: QuoteAssumptions | None = None,
    unpriced: set[str] | None = None,
) -> DocumentQuote:
    """Quote one document from its bytes and name; an unreadable one gets its reason."""
    assumptions = assumptions or QuoteAssumptions()
    unpriced = unpriced if unpriced is not None else set()
    try:
        fmt = detect_format(data, name).format
        estimate = estimate_pages(data, fmt, assumptions, max_pages)
    except DocumentError as exc:
        return DocumentQuote(name=name, error=str(exc))
    converted = not (fmt.is_text or fmt.is_spreadsheet)
    batches = input_tokens = output_tokens = 0
    if converted and models.conversion is not None:
        batches, input_tokens, output_tokens = conversion_tokens(
            estimate.pages, batch_pages, assumptions, max_output_tokens
        )
    if converted:  # the Markdown a conversion writes, at the assumed tokens per page
        chars = estimate.pages * assumptions.output_tokens_per_page * CHARS_PER_TOKEN
    else:
        chars = estimate.text_chars or 0
    chunks = max(1, math.ceil(chars / strategy.target_chars)) if chars else 0
    planning = StageCost()
    if strategy.planner == "llm" and models.planning is not None and chunks:
        planning = _priced(
            models.planning,
            round(chunks * assumptions.planning_input_per_chunk),
            round(chunks * assumptions.planning_output_per_chunk),
            chunks,
            prices,
            unpriced,
        )
    embedding = _priced(models.embedding, -(-chars // CHARS_PER_TOKEN), 0, chunks, prices, unpriced)
    return DocumentQuote(
        name=name,
        format=fmt.value,
        pages=estimate.pages,
        pages_estimated=estimate.estimated,
        pages_basis=estimate.basis,
        batches=batches,
        markdown_chars=chars,
        chunks=chunks,
        conversion=_priced(
            models.conversion, input_tokens, output_tokens, batches, prices, unpriced
        ),
        planning=planning,
        embedding=embedding,
    )


def total_quote(
    documents: Iterable[DocumentQuote],
    *,
    models: QuoteModels,
    prices: PriceTable,
    unpriced: Iterable[str] = (),
    assumptions: QuoteAssumptions | None = None,
    batch_pages: int = 5,
) -> Quote:
    """The quote of a set of documents: each, and their sum."""
    rows = tuple(documents)
    conversion = planning = embedding = StageCost()
    for row in rows:
        conversion, planning, embedding = (
            conversion + row.conversion,
            planning + row.planning,
            embedding + row.embedding,
        )
    return Quote(
        documents=rows,
        pages=sum(row.pages for row in rows),
        batches=sum(row.batches for row in rows),
        conversion=conversion,
        planning=planning,
        embedding=embedding,
        input_tokens=sum(row.input_tokens for row in rows),
        output_tokens=sum(row.output_tokens for row in rows),
        dollars=sum(row.dollars for row in rows),
        models=models,
        prices_as_of=prices.as_of,
        unpriced_models=tuple(sorted(set(unpriced))),
        assumptions=assumptions or QuoteAssumptions(),
        batch_pages=batch_pages,
        failed=sum(1 for row in rows if row.error),
    )
