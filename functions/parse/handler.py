"""Parse the converted Markdown into elements (DynamoDB) and sections (S3)."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime

INGEST_RUN = "ingest"


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return element, section and failed-batch counts and the sections key."""
    from drac.aws import keys
    from drac.aws.conversion import join_batches
    from drac.documents.detect import DocumentFormat
    from drac.errors import DocumentError
    from drac.models import DocumentStatus, Strategy
    from drac.parsing import normalise_newlines, parse_markdown
    from drac.pipeline import IngestSettings
    from drac.sectioning import make_sections

    rt = _runtime()
    document_id = event["document_id"]
    correlate(document_id, stage="parse")
    strategy = Strategy.model_validate(event["strategy"])
    record = rt.registry.get(document_id)
    if record is None:
        raise KeyError(f"document {document_id} is not registered")
    text = DocumentFormat(record.format).is_text
    joined = join_batches(rt.artifacts, document_id, int(event["batch_count"]), text=text)
    markdown = normalise_newlines(joined.markdown)
    rt.artifacts.put_text(keys.markdown_key(document_id), markdown)
    elements = parse_markdown(markdown, IngestSettings(strategy=strategy).parse_config())
    if not any(not element.is_heading for element in elements):
        raise DocumentError("the document has no text content to chunk")
    rt.elements.put_elements(document_id, elements)
    sections = make_sections(elements, strategy.section_budget)
    sections_key = keys.sections_key(document_id, INGEST_RUN)
    rt.artifacts.put_text(sections_key, _dump(sections))
    record.status = DocumentStatus.CONVERTED
    record.warnings = [*record.warnings, *joined.warnings, *joined.failures]
    rt.registry.put(record)
    return {
        "elements": len(elements),
        "sections_key": sections_key,
        "section_count": len(sections),
        "failed_batches": len(joined.failures),
    }


def _dump(sections: list) -> str:
    """Sections as a JSON array."""
    import json

    return json.dumps([section.model_dump(mode="json") for section in sections])
