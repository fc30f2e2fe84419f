"""Re-convert only what changed: a new version of a document reuses the Markdown of every
batch whose pages render exactly as the earlier version's batch did.

A page's digest is the SHA-256 of its rendered PNG, the very bytes the vision model is sent:
two pages with the same digest are the same model input, so reusing the earlier answer is
the answer the model was given for that image. BENCHMARKS.md ("Incremental re-conversion")
measures that it survives an edit elsewhere, a LibreOffice re-export and a re-save that
rewrites content streams (which a content-stream digest does not). A batch is reused only
when its pages have, in order, the digests of an earlier batch's pages, that batch was
converted by the same model with the same conversion prompt, and it converted cleanly (a
failed batch is asked again).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from drac.clock import utc_now
from drac.documents.vision.batches import BatchPage, BatchResult, convert_batch, page_span
from drac.documents.vision.check import MARKER, markers_in, page_texts
from drac.documents.vision.prompt import conversion_system_prompt, page_marker
from drac.ids import digest_of, sha256_hex
from drac.models import LedgerEntry
from drac.ports import Ledger, VisionModel

REUSED = "reused"
"""The ledger outcome of a batch whose Markdown was taken from the earlier version."""

_PAGE_DOMAIN = b"drac-page-v1\x00"


class StoredBatch(BaseModel):
    """A converted batch as kept for the next version: its pages' digests and its answer."""

    model_config = ConfigDict(frozen=True)

    pages: list[int]
    digests: list[str]
    model: str
    prompt: str = Field(description="digest of the conversion prompt the batch was asked with")
    markdown: str
    warnings: list[str] = Field(default_factory=list)


class EarlierVersion(BaseModel):
    """The version a path (or S3 key) held before, with the batches it may lend."""

    model_config = ConfigDict(frozen=True)

    document_id: str
    batches: list[StoredBatch] = Field(default_factory=list)


def convert_or_reuse(
    vision: VisionModel,
    pages: Sequence[BatchPage],
    total_pages: int,
    document_id: str,
    ledger: Ledger,
    earlier: EarlierVersion | None,
    *,
    attempts: int = 2,
    on_retryable: Literal["mark", "raise"] = "mark",
) -> tuple[BatchResult, StoredBatch | None]:
    """The batch's Markdown: the earlier version's where `reusable_batch` finds it (recorded
    in `ledger` as reused, no model call), else `convert_batch`'s; and what to keep of it
    for the next version."""
    digests = page_digests(pages)
    numbers = [page.number for page in pages]
    reused = reusable_batch(earlier, numbers, digests, vision.name)
    if reused is not None and earlier is not None:
        ledger.record(reused_entry(document_id, vision.name, numbers, earlier.document_id))
        result = reused
    else:
        result = convert_batch(
            vision, pages, total_pages, document_id, ledger,
            attempts=attempts, on_retryable=on_retryable,
        )  # fmt: skip
    return result, stored_batch(result, digests, vision.name)


def page_digest(png: bytes) -> str:
    """The digest of a rendered page: equal digests are equal model inputs."""
    return sha256_hex(_PAGE_DOMAIN + png)


def prompt_digest() -> str:
    """The digest of the conversion system prompt (a new prompt converts everything again)."""
    return digest_of([conversion_system_prompt()])


def page_digests(pages: Iterable[BatchPage]) -> list[str]:
    """The digest of every page of a batch, in order."""
    return [page_digest(page.png) for page in pages]


def stored_batch(result: BatchResult, digests: Sequence[str], model: str) -> StoredBatch | None:
    """What the next version may reuse of a converted batch (None for a failed batch)."""
    if result.failure is not None or len(digests) != len(result.pages):
        return None
    return StoredBatch(
        pages=list(result.pages),
        digests=list(digests),
        model=model,
        prompt=prompt_digest(),
        markdown=result.markdown,
        warnings=list(result.warnings),
    )


def reusable_batch(
    earlier: EarlierVersion | None, numbers: Sequence[int], digests: Sequence[str], model: str
) -> BatchResult | None:
    """The earlier version's answer for these pages, renumbered to them, when an earlier
    batch had exactly these page images in this order, the same model and prompt; else None."""
    if earlier is None or not numbers:
        return None
    prompt = prompt_digest()
    wanted = list(digests)
    for batch in earlier.batches:
        if batch.digests == wanted and batch.model == model and batch.prompt == prompt:
            return _renumbered(batch, list(numbers))
    return None


def _renumbered(batch: StoredBatch, numbers: list[int]) -> BatchResult | None:
    """The stored batch's Markdown with its page markers moved to `numbers`; None when its
    Markdown does not hold one marker per page (then it is converted again)."""
    if batch.pages == numbers:
        return BatchResult(pages=numbers, markdown=batch.markdown, warnings=batch.warnings)
    first = MARKER.search(batch.markdown)
    if markers_in(batch.markdown) != batch.pages or first is None:
        return None
    if batch.markdown[: first.start()].strip():  # text before the first marker: keep nothing
        return None
    texts = page_texts(batch.markdown)
    markdown = "\n\n".join(
        f"{page_marker(new)}\n\n{texts[old]}".rstrip()
        for old, new in zip(batch.pages, numbers, strict=True)
    )
    old_label, new_label = page_span(batch.pages), page_span(numbers)
    warnings = [
        new_label + w[len(old_label) :] if w.startswith(old_label + ":") else w
        for w in batch.warnings
    ]
    return BatchResult(pages=numbers, markdown=markdown, warnings=warnings)


def reused_entry(document_id: str, model: str, numbers: Sequence[int], earlier: str) -> LedgerEntry:
    """The ledger line of a batch not sent to the model: no tokens, and where it came from."""
    return LedgerEntry(
        document_id=document_id,
        stage="conversion",
        model=model,
        outcome=f"{REUSED}: {page_span(numbers)} unchanged since {earlier}",
        at=utc_now(),
    )


def is_reused(entry: LedgerEntry) -> bool:
    """Whether a ledger line is a batch reused from an earlier version (no model call)."""
    return entry.stage == "conversion" and entry.outcome.startswith(REUSED + ":")


_SAFE_ID = re.compile(r"d[0-9a-f]{19}")


def is_document_id(value: str) -> bool:
    """Whether a stored value is a well-formed document id (an earlier version's id is read
    back from storage and names a folder or a key)."""
    return bool(_SAFE_ID.fullmatch(value))
