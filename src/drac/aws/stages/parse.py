"""Parse a converted document: its Markdown, elements (DynamoDB) and sections (S3)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel, Field

from drac.aws import keys
from drac.aws.dynamo import MAX_WARNINGS
from drac.aws.lambda_support import MetricUnit, metrics
from drac.aws.runtime import Runtime
from drac.aws.stages.boxes import place_on_pages
from drac.aws.stages.escalation import EscalatedBatch
from drac.aws.stages.fanout import ItemGroup
from drac.aws.stages.planning import store_sections
from drac.documents.vision.batches import JoinedMarkdown, join_batches
from drac.documents.vision.escalate import escalation_line
from drac.documents.vision.verify import VerificationSummary, review_conversion
from drac.ingest import parse_document
from drac.models import DocumentStatus, PageEscalation, Strategy

INGEST_RUN = "ingest"
READERS = 16
"""Batch results read at once (S3 GETs are latency-bound)."""


class ParseInput(BaseModel):
    """The ParseSection state's payload; `batch_count` 0 means the Markdown is stored already
    (a Markdown or text upload)."""

    document_id: str
    execution: str
    strategy: Strategy
    batch_count: int = 0
    page_count: int = Field(
        default=0, ge=0, description="the PDF's pages (0: not converted from pages)"
    )
    source_warnings: list[str] = Field(
        default_factory=list, description="what Normalise removed (external references)"
    )


class ParseResult(BaseModel):
    """Element, section and failed-batch counts, and the section groups to plan."""

    elements: int
    run_id: str
    section_count: int
    groups: list[ItemGroup]
    failed_batches: int


def parse_converted(rt: Runtime, event: ParseInput) -> ParseResult:
    """Join the batches' Markdown (or read the stored Markdown), parse it into elements and
    sections, store all three and mark the document CONVERTED with its warnings.

    Raises DocumentError when the document has no text content to chunk.
    """
    document_id = event.document_id
    escalations: list[PageEscalation] = []
    if event.batch_count:
        joined, escalations = _join(rt, document_id, event.batch_count)
    else:
        markdown = rt.artifacts.get_text(keys.markdown_key(document_id))
        joined = JoinedMarkdown(markdown=markdown, warnings=[], failures=[])
    reviewed = review_conversion(
        joined.markdown, joined.verification, event.strategy.hold_back_flags
    )
    failures = [*joined.failures, *reviewed.failures]
    escalated = [escalation_line(escalations)] if escalations else []
    joined = JoinedMarkdown(
        markdown=reviewed.markdown,
        warnings=[*([reviewed.warning] if reviewed.warning else []), *escalated, *joined.warnings],
        failures=failures,
    )
    summary = reviewed.summary.model_copy(update={"escalations": tuple(escalations)})
    checked = summary.counts() if summary.pages else None
    if summary.pages or escalations:  # a vision model's pages, checked against their text
        rt.artifacts.put_text(keys.verification_key(document_id), summary.model_dump_json(indent=1))
        publish_verification(summary)
    parsed = parse_document(joined.markdown, event.strategy, joined.failures)
    if event.batch_count:  # converted from pages: place the elements on them
        parsed = place_on_pages(rt, document_id, parsed)
    rt.artifacts.put_text(keys.markdown_key(document_id), parsed.markdown)
    rt.elements.put_elements(document_id, parsed.elements)
    sectioning = store_sections(rt, document_id, INGEST_RUN, parsed.sections, parsed.elements)
    warnings = [*joined.warnings, *joined.failures]
    if len(warnings) > MAX_WARNINGS:
        rt.artifacts.put_text(keys.warnings_key(document_id), json.dumps(warnings))
    record = rt.registry.get(document_id)
    known = record.warnings if record else []
    new = [w for w in event.source_warnings if w not in known]  # once: Parse may be retried
    rt.registry.update(
        document_id,
        owner=event.execution,
        status=DocumentStatus.CONVERTED,
        **({"pages": event.page_count} if event.page_count else {}),
        warnings=[*known, *new, *warnings],
        conversion_failures=len(joined.failures),
        verification=checked,  # counts only: the tokens stay in verification.json
    )
    return ParseResult(
        elements=len(parsed.elements),
        run_id=sectioning.run_id,
        section_count=sectioning.section_count,
        groups=sectioning.groups,
        failed_batches=len(joined.failures),
    )


VERIFICATION_METRICS = {
    "VerificationUnsupported": "unsupported",
    "VerificationMissing": "missing",
    "VerificationSuspectRows": "suspect_rows",
}
"""CloudWatch metric name -> the summary's count it publishes (per converted document)."""


def publish_verification(summary: VerificationSummary) -> None:
    """Publish a document's verification counts as CloudWatch metrics (Powertools EMF)."""
    for name, kind in VERIFICATION_METRICS.items():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=summary.total(kind))
    metrics.add_metric(name="VerifiedPages", unit=MetricUnit.Count, value=summary.checked)
    metrics.add_metric(
        name="VerificationFlaggedPages", unit=MetricUnit.Count, value=len(summary.flagged)
    )
    metrics.add_metric(name="PagesHeldBack", unit=MetricUnit.Count, value=len(summary.held_back))


def _join(
    rt: Runtime, document_id: str, batch_count: int
) -> tuple[JoinedMarkdown, list[PageEscalation]]:
    """The batches joined, and the record of every page escalated (`stages.escalation`)."""

    def read(batch: int) -> EscalatedBatch:
        try:
            text = rt.artifacts.get_text(keys.batch_key(document_id, batch))
        except KeyError as exc:
            raise RuntimeError(f"batch {batch} of {document_id} was never converted") from exc
        return EscalatedBatch.model_validate_json(text)

    with ThreadPoolExecutor(max_workers=READERS) as pool:
        batches = list(pool.map(read, range(batch_count)))
    escalations = sorted((r for b in batches for r in b.escalations), key=lambda r: r.page)
    return join_batches(batches), escalations
