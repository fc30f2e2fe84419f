"""Parse a converted document into elements (DynamoDB) and sections (S3)."""

from __future__ import annotations

from pydantic import BaseModel

from drac.aws import keys
from drac.aws.conversion import join_batches
from drac.aws.runtime import Runtime
from drac.aws.stages.planning import store_sections
from drac.documents.detect import DocumentFormat
from drac.errors import DocumentError
from drac.models import DocumentStatus, Strategy
from drac.parsing import normalise_newlines, parse_markdown
from drac.pipeline import IngestSettings
from drac.sectioning import make_sections

INGEST_RUN = "ingest"


class ParseInput(BaseModel):
    """The ParseSection state's payload."""

    document_id: str
    strategy: Strategy
    batch_count: int


class ParseResult(BaseModel):
    """Element, section and failed-batch counts, and where the sections are."""

    elements: int
    sections_key: str
    section_count: int
    failed_batches: int


def parse_document(rt: Runtime, event: ParseInput) -> ParseResult:
    """Join the batches' Markdown, store it, its elements and its sections; mark the
    document CONVERTED with the conversion's warnings.

    Raises DocumentError when the document has no text content to chunk.
    """
    document_id, strategy = event.document_id, event.strategy
    record = rt.registry.get(document_id)
    if record is None:
        raise KeyError(f"document {document_id} is not registered")
    text = DocumentFormat(record.format).is_text
    joined = join_batches(rt.artifacts, document_id, event.batch_count, text=text)
    markdown = normalise_newlines(joined.markdown)
    rt.artifacts.put_text(keys.markdown_key(document_id), markdown)
    elements = parse_markdown(markdown, IngestSettings(strategy=strategy).parse_config())
    if not any(not element.is_heading for element in elements):
        raise DocumentError("the document has no text content to chunk")
    rt.elements.put_elements(document_id, elements)
    sections = make_sections(elements, strategy.section_budget)
    sections_key = store_sections(rt, document_id, INGEST_RUN, sections)
    record.status = DocumentStatus.CONVERTED
    record.warnings = [*record.warnings, *joined.warnings, *joined.failures]
    rt.registry.put(record)
    return ParseResult(
        elements=len(elements),
        sections_key=sections_key,
        section_count=len(sections),
        failed_batches=len(joined.failures),
    )

