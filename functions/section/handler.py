"""Re-plan path: rebuild sections from stored elements for a strategy's section budget."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return the sections key and count (nothing is converted again)."""
    import json

    from drac.aws import keys
    from drac.models import Strategy
    from drac.sectioning import make_sections

    rt = _runtime()
    document_id = event["document_id"]
    correlate(document_id, stage="section")
    strategy = Strategy.model_validate(event["strategy"])
    elements = rt.elements.get_elements(document_id)
    if not elements:
        raise KeyError(f"document {document_id} has no stored elements")
    sections = make_sections(elements, strategy.section_budget)
    key = keys.sections_key(document_id, event["run_id"])
    rt.artifacts.put_text(key, json.dumps([s.model_dump(mode="json") for s in sections]))
    return {"sections_key": key, "section_count": len(sections)}
