"""Per-batch conversion for Step Functions, composed from `drac.documents` public functions.

The local runtime converts a whole document in one process; in the cloud each 5-page batch is
its own Lambda invocation so that Step Functions bounds concurrency, retries throttling with
backoff and turns a batch that keeps failing into error markers. The batch logic mirrors the
local converter so both runtimes produce the same Markdown for the same model answers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from pydantic import BaseModel, Field

from drac.aws import keys
from drac.aws.errors import ModelThrottled, is_throttling
from drac.clock import utc_now
from drac.documents.check import MARKER, check_batch, clean_model_markdown, repair_markers
from drac.documents.prompt import batch_prompt, conversion_system_prompt, page_marker
from drac.documents.render import RenderOptions, page_batches, render_pages
from drac.models import LedgerEntry
from drac.ports import ArtifactStore, Ledger, ModelCallError, ModelReply, VisionModel


class BatchStatus(BaseModel):
    """What happened to one batch (stored beside its Markdown)."""

    batch: int
    pages: list[int]
    ok: bool
    warnings: list[str] = Field(default_factory=list)
    failure: str | None = None


class RenderResult(BaseModel):
    """Counts of a rendered document."""

    page_count: int
    batch_count: int


def batch_pages(batch: int, page_count: int, batch_size: int) -> list[int]:
    """Return the 1-based page numbers of batch number `batch` (0-based)."""
    batches = page_batches(page_count, batch_size)
    if not 0 <= batch < len(batches):
        raise ValueError(f"batch {batch} does not exist ({len(batches)} batches)")
    return batches[batch]


def render_to_store(
    pdf: bytes,
    store: ArtifactStore,
    document_id: str,
    batch_size: int,
    options: RenderOptions | None = None,
) -> RenderResult:
    """Render every page to `pages/<doc>/<n>.png` and record each page's text-layer size."""
    text_chars: dict[str, int] = {}
    for page in render_pages(pdf, options or RenderOptions()):
        store.put_bytes(keys.page_key(document_id, page.number), page.png)
        text_chars[str(page.number)] = page.text_chars
    store.put_text(keys.page_meta_key(document_id), json.dumps(text_chars))
    count = len(text_chars)
    return RenderResult(page_count=count, batch_count=len(page_batches(count, batch_size)))


def failure_markdown(pages: Sequence[int], reason: str) -> str:
    """Error markers for pages whose conversion failed (same form as the local converter)."""
    safe = " ".join(reason.replace("--", "- -").split())[:300]
    return "\n\n".join(
        f"{page_marker(number)[:-4]}: conversion failed: {safe} -->" for number in pages
    )


def _entry(document_id: str, model: str, started: float, reply: ModelReply | None,
           outcome: str) -> LedgerEntry:
    usage = reply.usage if reply else None
    latency = (reply.latency_ms if reply else 0.0) or (time.perf_counter() - started) * 1000
    return LedgerEntry(
        document_id=document_id, stage="conversion", model=model,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        latency_ms=latency, outcome=outcome[:500], at=utc_now(),
    )


def convert_batch(
    store: ArtifactStore,
    document_id: str,
    batch: int,
    page_count: int,
    batch_size: int,
    vision: VisionModel,
    ledger: Ledger,
    attempts: int = 2,
) -> BatchStatus:
    """Convert one batch of rendered pages and store its Markdown and status.

    Raises ModelThrottled when Bedrock keeps throttling (Step Functions retries with backoff)
    and ModelCallError for other model failures (Step Functions then writes error markers).
    An empty answer is retried `attempts` times here, then recorded as a failed batch.
    """
    pages = batch_pages(batch, page_count, batch_size)
    text_layer = json.loads(store.get_text(keys.page_meta_key(document_id)))
    images = [store.get_bytes(keys.page_key(document_id, number)) for number in pages]
    prompt = batch_prompt(pages, page_count)
    system = conversion_system_prompt()
    chars = {number: int(text_layer.get(str(number), 0)) for number in pages}
    for _attempt in range(attempts):
        started = time.perf_counter()
        try:
            reply = vision.convert(system, prompt, images)
        except ModelCallError as exc:
            ledger.record(_entry(document_id, vision.name, started, None, f"error: {exc}"))
            if is_throttling(exc):
                raise ModelThrottled(f"pages {pages[0]}-{pages[-1]}: {exc}") from exc
            raise
        markdown = clean_model_markdown(reply.text)
        has_content = any(ch.isalnum() for ch in MARKER.sub("", markdown))
        if not markdown or (not has_content and any(chars.values())):
            ledger.record(_entry(document_id, reply.model, started, reply, "empty"))
            continue
        ledger.record(_entry(document_id, reply.model, started, reply, "ok"))
        markdown, notes = repair_markers(markdown, pages)
        report = check_batch(markdown, pages, chars)
        label = f"pages {pages[0]}-{pages[-1]}" if len(pages) > 1 else f"page {pages[0]}"
        status = BatchStatus(
            batch=batch, pages=pages, ok=True,
            warnings=[f"{label}: {note}" for note in [*notes, *report.warnings]],
        )
        _store_batch(store, document_id, markdown, status)
        return status
    return record_failed_batch(
        store, document_id, batch, page_count, batch_size, "the model returned no content"
    )


def record_failed_batch(
    store: ArtifactStore,
    document_id: str,
    batch: int,
    page_count: int,
    batch_size: int,
    reason: str,
) -> BatchStatus:
    """Store error markers in place of a batch's Markdown and a failed status."""
    pages = batch_pages(batch, page_count, batch_size)
    span = f"{pages[0]}-{pages[-1]}" if len(pages) > 1 else str(pages[0])
    safe = " ".join(reason.replace("--", "- -").split())[:300]
    status = BatchStatus(
        batch=batch, pages=pages, ok=False, failure=f"pages {span}: conversion failed: {safe}"
    )
    _store_batch(store, document_id, failure_markdown(pages, reason), status)
    return status


def store_text_document(store: ArtifactStore, document_id: str, markdown: str) -> None:
    """Store a Markdown/text source as the document's single, already-converted batch."""
    _store_batch(store, document_id, markdown,
                 BatchStatus(batch=0, pages=[1], ok=True))


def _store_batch(store: ArtifactStore, document_id: str, markdown: str,
                 status: BatchStatus) -> None:
    store.put_text(keys.batch_key(document_id, status.batch), markdown)
    store.put_text(keys.batch_status_key(document_id, status.batch), status.model_dump_json())


class JoinedMarkdown(BaseModel):
    """The document's Markdown joined from its batches, and how the batches went."""

    markdown: str
    failures: list[str]
    warnings: list[str]


def join_batches(store: ArtifactStore, document_id: str, batch_count: int,
                 text: bool = False) -> JoinedMarkdown:
    """Join batch Markdown in page order exactly as the local converter does."""
    parts: list[str] = []
    failures: list[str] = []
    warnings: list[str] = []
    for batch in range(batch_count):
        try:
            status = BatchStatus.model_validate_json(
                store.get_text(keys.batch_status_key(document_id, batch))
            )
        except KeyError as exc:
            raise RuntimeError(f"batch {batch} of {document_id} was never converted") from exc
        parts.append(store.get_text(keys.batch_key(document_id, batch)))
        warnings.extend(status.warnings)
        if status.failure:
            failures.append(status.failure)
    markdown = parts[0] if text else "\n\n".join(parts) + "\n"
    return JoinedMarkdown(markdown=markdown, failures=failures, warnings=warnings)
