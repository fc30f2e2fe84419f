"""Escalation in the cloud: the pages the conversion model converted doubtfully are converted
again by the second model (the `escalateTo` setting), each page keeping the better-verified
answer, exactly as `drac ingest --escalate-to` does locally (`drac.documents.vision.escalate`).

ConvertBatch (and MarkBatchFailed) return the batch as an item of the EscalatePages map when
one of its pages deserves the second model; EscalateBatch converts those pages again and
stores the batch with each page's kept answer and the record of every escalated page, which
Parse puts on the verification summary and the document's warnings.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from drac.aws import keys
from drac.aws.errors import retried_by_step_functions
from drac.aws.runtime import Runtime
from drac.aws.stages.fanout import CONVERT_GROUP_SIZE
from drac.documents.vision.batches import BatchResult, checked_against_ocr, join_batches
from drac.documents.vision.escalate import escalation_reasons, merge_escalated
from drac.documents.vision.incremental import convert_or_reuse
from drac.models import PageEscalation
from drac.settings import Settings, SettingsError

BACKEND = "bedrock"
"""The only backend of the cloud's second model (the functions call Bedrock alone)."""


def escalation_model_id(settings: Settings) -> str | None:
    """The Bedrock model id of the second model (`escalateTo: bedrock:<model id>`); None
    without escalation. Raises SettingsError for another backend."""
    if not settings.models.escalate_to:
        return None
    backend, _, model_id = settings.models.escalate_to.partition(":")
    if backend != BACKEND:
        raise SettingsError(
            f"escalateTo {settings.models.escalate_to!r}: the cloud converts with Bedrock only "
            f"(bedrock:<model id>)"
        )
    return model_id


def convert_group_size(settings: Settings) -> int:
    """Batches per convert execution: CONVERT_GROUP_SIZE, halved with escalation, whose
    EscalatePages map may add as many iterations (and retries) to the same history."""
    if escalation_model_id(settings) is None:
        return CONVERT_GROUP_SIZE
    return CONVERT_GROUP_SIZE // 2


class EscalationItem(BaseModel):
    """One item of the EscalatePages map: a batch with pages the second model converts."""

    document_id: str
    page_count: int
    batch: int
    pages: list[int] = Field(description="the doubtful pages (recomputed from the stored batch)")


class EscalateInput(BaseModel):
    """The EscalateBatch state's payload (the map item under `input`); with `error`, the
    batch's escalation ran out of retries and its first answers are kept."""

    input: EscalationItem
    error: str | None = None
    cause: str = ""


class EscalatedBatch(BatchResult):
    """A stored batch with the record of each of its pages converted again (the batch key
    holds it; Parse reads it as a BatchResult with `escalations`)."""

    escalations: list[PageEscalation] = Field(default_factory=list)


class Escalated(BaseModel):
    """What became of one escalated batch: its pages converted again, and those that kept
    the second model's answer."""

    batch: int
    escalated: int
    kept: int


def doubtful_batch(
    settings: Settings, document_id: str, page_count: int, batch: int, result: BatchResult
) -> list[EscalationItem]:
    """The batch as an EscalatePages item when escalation is configured and one of its pages
    failed or has more flags than the threshold; else no item."""
    if escalation_model_id(settings) is None:
        return []
    reasons = escalation_reasons([result], settings.models.escalate_flags)
    if not reasons:
        return []
    return [
        EscalationItem(
            document_id=document_id, page_count=page_count, batch=batch, pages=list(reasons)
        )
    ]


def escalate_batch(rt: Runtime, event: EscalateInput) -> Escalated:
    """Convert the doubtful pages of a stored batch again with the second model, keep each
    page's better-verified answer (ties to the second model) and store the batch with the
    record of each escalated page. With `error` (retries ran out) nothing is converted and
    every page keeps its first answer, recorded as such.

    Raises ModelThrottled or TransientError when the call may succeed later. A batch stored
    with its records already (a retried invocation) is returned as it is.
    """
    from drac.aws.stages.conversion import BatchItem, batch_pages, ocr_words  # imports this

    item = event.input
    stored = EscalatedBatch.model_validate_json(
        rt.artifacts.get_text(keys.batch_key(item.document_id, item.batch))
    )
    if stored.escalations:  # stored by an earlier try of this invocation
        return _escalated(item.batch, stored.escalations)
    first = BatchResult.model_validate(stored.model_dump())
    reasons = escalation_reasons([first], rt.settings.models.escalate_flags)
    if not reasons:
        return Escalated(batch=item.batch, escalated=0, kept=0)
    vision, second = rt.vision_model(), rt.escalation_model()
    answers: list[BatchResult] = []
    if event.error is None:
        batch = BatchItem(
            document_id=item.document_id, page_count=item.page_count, batch=item.batch
        )
        pages = [page for page in batch_pages(rt, batch) if page.number in reasons]
        with retried_by_step_functions():
            answer, _ = convert_or_reuse(
                second, pages, item.page_count, item.document_id, rt.ledger, None,
                on_retryable="raise",
            )  # fmt: skip
        scans = [page.number for page in pages if not page.text_chars]
        answers.append(checked_against_ocr(answer, ocr_words(rt, item.document_id, scans)))
    merged, records = merge_escalated([first], answers, reasons, vision.name, second.name)
    rt.artifacts.put_text(
        keys.batch_key(item.document_id, item.batch), _stored(first, merged, records)
    )
    return _escalated(item.batch, records)


def _stored(
    first: BatchResult, merged: Sequence[BatchResult], records: list[PageEscalation]
) -> str:
    """The batch's JSON: its pages' kept answers joined back into one batch, with the
    records."""
    joined = join_batches(merged)
    return EscalatedBatch(
        pages=first.pages,
        markdown=joined.markdown.removesuffix("\n"),
        warnings=joined.warnings,
        failure="; ".join(joined.failures) or None,
        verification=joined.verification,
        escalations=records,
    ).model_dump_json()


def _escalated(batch: int, records: Sequence[PageEscalation]) -> Escalated:
    kept = sum(1 for record in records if record.model == record.second_model)
    return Escalated(batch=batch, escalated=len(records), kept=kept)
