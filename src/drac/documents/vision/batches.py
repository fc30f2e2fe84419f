"""Convert one batch of rendered pages with a vision model, and join batches in page order.

Both runtimes convert batch by batch through `convert_batch`: the local converter runs batches
in a thread pool, the cloud runs each batch in its own Lambda invocation under Step Functions.
A batch that cannot be converted becomes `<!-- Page N: conversion failed: ... -->` markers, so
the document degrades to PARTIAL instead of failing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from drac.clock import utc_now
from drac.documents.vision.check import (
    ECHO_SHARE,
    MARKER,
    check_batch,
    clean_model_markdown,
    echo_share,
    foreign_pages,
    page_texts,
    repair_markers,
)
from drac.documents.vision.loops import loop_start
from drac.documents.vision.prompt import batch_prompt, conversion_system_prompt, page_marker
from drac.documents.vision.verify import PageVerification, verify_markdown
from drac.errors import ModelCallError
from drac.models import LedgerEntry
from drac.ports import Ledger, ModelReply, VisionModel

EMPTY_ANSWER = "the model returned no content"
LOOP_REASON = (
    "the answer repeats itself over and over (a repetition loop), also when asked again with "
    "a repetition penalty"
)
ECHO_REASON = (
    "the answer repeats the conversion prompt instead of the page: the model may not read "
    "images (a text-only model behind the server?)"
)


class BatchPage(Protocol):
    """What converting a page needs: its number, its PNG, its text layer's size and text
    ("" where it is not kept: the answer is then not compared with it)."""

    @property
    def number(self) -> int: ...

    @property
    def png(self) -> bytes: ...

    @property
    def text_chars(self) -> int: ...

    @property
    def text_layer(self) -> str: ...


class StoredPage(BaseModel):
    """A page image read back from storage (the cloud renders and converts apart)."""

    model_config = ConfigDict(frozen=True)

    number: int
    png: bytes = Field(repr=False)
    text_chars: int
    text_layer: str = Field(default="", repr=False)


class BatchResult(BaseModel):
    """A converted batch: its Markdown (or error markers) and warnings."""

    pages: list[int]
    markdown: str
    warnings: list[str] = Field(default_factory=list)
    failure: str | None = None
    verification: list[PageVerification] = Field(
        default_factory=list, description="each answered page checked against its own text"
    )


class JoinedMarkdown(BaseModel):
    """A document's Markdown joined from its batches, and how the batches went."""

    markdown: str
    warnings: list[str]
    failures: list[str]
    verification: list[PageVerification] = Field(default_factory=list)


def convert_batch(
    vision: VisionModel,
    pages: Sequence[BatchPage],
    total_pages: int,
    document_id: str,
    ledger: Ledger,
    *,
    attempts: int = 2,
    on_retryable: Literal["mark", "raise"] = "mark",
) -> BatchResult:
    """Convert one batch of pages; an empty answer is asked again up to `attempts` times.
    Every model call is recorded in `ledger`.

    A failed model call becomes error markers, except that with `on_retryable="raise"` a call
    that may succeed later (throttled, transient) is raised as ModelCallError for the caller's
    own retries (Step Functions backs off, then marks the batch with `failed_batch`).
    """
    numbers = [page.number for page in pages]
    prompt = batch_prompt(numbers, total_pages)
    system = conversion_system_prompt()
    images = [page.png for page in pages]
    text_chars = {page.number: page.text_chars for page in pages}
    looped = False
    for _attempt in range(attempts):
        started = time.perf_counter()
        try:
            if looped:
                reply = vision.convert_carefully(system, prompt, images)
            else:
                reply = vision.convert(system, prompt, images)
        except ModelCallError as exc:
            ledger.record(_entry(document_id, vision.name, started, None, f"error: {exc}"))
            if exc.retry and on_retryable == "raise":
                raise
            return failed_batch(numbers, str(exc) or type(exc).__name__)
        except Exception as exc:  # a client bug must not sink the document
            ledger.record(_entry(document_id, vision.name, started, None, f"error: {exc!r}"))
            return failed_batch(numbers, f"unexpected {type(exc).__name__}: {exc}")
        markdown = clean_model_markdown(reply.text)
        loop = loop_start(markdown)
        if loop is not None:
            ledger.record(_entry(document_id, reply.model, started, reply, "looping"))
            if not looped:  # asked once more, with a repetition penalty
                looped = True
                continue
            return _verified(_looping(markdown[:loop], numbers), pages)  # pages before it
        has_content = any(ch.isalnum() for ch in MARKER.sub("", markdown))
        if not markdown or (not has_content and any(text_chars.values())):
            ledger.record(_entry(document_id, reply.model, started, reply, "empty"))
            continue
        ledger.record(
            _entry(document_id, reply.model, started, reply, "cut off" if reply.cut_off else "ok")
        )
        markdown, notes = repair_markers(markdown, numbers)
        label = page_span(numbers)
        if reply.cut_off:
            written = [number for number in numbers if number in page_texts(markdown)]
            complete = written[:-1]  # the last page written is the one the answer stopped in
            reason = f"answer cut off at the token cap ({_cap_of(vision)})"
            lost = {number: reason for number in numbers if number not in complete}
            cut = _with_failed_pages(markdown, numbers, lost, [f"{label}: {n}" for n in notes])
            return _verified(cut, pages)  # the complete pages are checked too
        if echo_share(markdown, f"{system}\n{prompt}") >= ECHO_SHARE:
            return failed_batch(numbers, ECHO_REASON)
        report = check_batch(markdown, numbers, text_chars)
        warnings = [f"{label}: {note}" for note in [*notes, *report.warnings]]
        foreign = foreign_pages(markdown, {page.number: page.text_layer for page in pages})
        if foreign:
            unlike = {
                number: f"the answer shares {share:.0%} of its words with the page's text "
                "layer: it is not this page"
                for number, share in foreign.items()
            }
            return _verified(_with_failed_pages(markdown, numbers, unlike, warnings), pages)
        return _verified(BatchResult(pages=numbers, markdown=markdown, warnings=warnings), pages)
    if looped:  # the careful answer was empty
        return failed_batch(numbers, LOOP_REASON)
    return failed_batch(numbers, EMPTY_ANSWER)


def _looping(markdown: str, numbers: Sequence[int]) -> BatchResult:
    """A batch whose answer looped twice: the pages written before the loop are kept, the
    page it loops in and those after it become error markers (never indexed text)."""
    markdown, notes = repair_markers(markdown, numbers)
    written = [number for number in numbers if number in page_texts(markdown)]
    complete = written[:-1]  # the page the loop starts in is not complete
    lost = {number: LOOP_REASON for number in numbers if number not in complete}
    label = page_span(numbers)
    return _with_failed_pages(markdown, numbers, lost, [f"{label}: {n}" for n in notes])


def checked_against_ocr(result: BatchResult, words: Mapping[int, str]) -> BatchResult:
    """The batch with its scanned pages (page number -> the words OCR read of it) checked
    against those words; any earlier check of those pages is replaced."""
    if not words:
        return result
    checked = verify_markdown(result.markdown, words, dict.fromkeys(words, "ocr"))
    kept = [page for page in result.verification if page.page not in words]
    pages = sorted([*kept, *checked], key=lambda page: page.page)
    return result.model_copy(update={"verification": pages})


def _verified(result: BatchResult, pages: Sequence[BatchPage]) -> BatchResult:
    """The result with its answered pages checked against their own text
    (`drac.documents.vision.verify`)."""
    layers = {page.number: page.text_layer for page in pages if page.text_layer}
    result.verification = verify_markdown(result.markdown, layers)
    return result


def _cap_of(vision: VisionModel) -> str:
    cap = getattr(vision, "max_tokens", None)
    return f"{cap} tokens, DRAC_CONVERSION_MAX_TOKENS" if cap else "DRAC_CONVERSION_MAX_TOKENS"


def _with_failed_pages(
    markdown: str, numbers: Sequence[int], failed: Mapping[int, str], warnings: list[str]
) -> BatchResult:
    """The batch with the `failed` pages (number: reason) as error markers, the others as
    answered, in page order."""
    texts = page_texts(markdown)
    parts = [
        failed_batch([number], failed[number]).markdown
        if number in failed
        else f"{page_marker(number)}\n\n{texts.get(number, '')}".rstrip()
        for number in numbers
    ]
    by_reason: dict[str, list[int]] = {}
    for number, reason in failed.items():
        by_reason.setdefault(reason, []).append(number)
    failure = "; ".join(
        f"{_pages(pages)}: conversion failed: {reason}" for reason, pages in by_reason.items()
    )
    return BatchResult(
        pages=list(numbers), markdown="\n\n".join(parts), warnings=warnings, failure=failure
    )


def _pages(numbers: Sequence[int]) -> str:
    if len(numbers) > 1 and list(numbers) == list(range(numbers[0], numbers[-1] + 1)):
        return page_span(numbers)
    return ("page " if len(numbers) == 1 else "pages ") + ", ".join(map(str, numbers))


def failed_batch(pages: Sequence[int], reason: str) -> BatchResult:
    """The result of a batch that could not be converted: one error marker per page."""
    safe = " ".join(reason.replace("--", "- -").split())[:300]
    markers = "\n\n".join(
        f"{page_marker(number)[:-4]}: conversion failed: {safe} -->" for number in pages
    )
    return BatchResult(
        pages=list(pages),
        markdown=markers,
        failure=f"{page_span(pages)}: conversion failed: {safe}",
    )


def join_batches(results: Sequence[BatchResult]) -> JoinedMarkdown:
    """Join batch Markdown in page order, with every batch's warnings and failures."""
    ordered = sorted(results, key=lambda result: result.pages[0])
    return JoinedMarkdown(
        markdown="\n\n".join(result.markdown for result in ordered) + "\n",
        warnings=[warning for result in ordered for warning in result.warnings],
        failures=[result.failure for result in ordered if result.failure],
        verification=[page for result in ordered for page in result.verification],
    )


def page_span(pages: Sequence[int]) -> str:
    """'page 3' or 'pages 3-7'."""
    return f"pages {pages[0]}-{pages[-1]}" if len(pages) > 1 else f"page {pages[0]}"


def _entry(
    document_id: str, model: str, started: float, reply: ModelReply | None, outcome: str
) -> LedgerEntry:
    usage = reply.usage if reply else None
    latency = (reply.latency_ms if reply else 0.0) or (time.perf_counter() - started) * 1000
    return LedgerEntry(
        document_id=document_id,
        stage="conversion",
        model=model,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        latency_ms=latency,
        outcome=outcome[:500],
        at=utc_now(),
    )
