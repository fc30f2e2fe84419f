"""Plan one section into arrays of element IDs (rules, or the LLM planner on Bedrock)."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Store the section's validated plan; return its index and chunk count."""
    import json

    from drac.aws import keys
    from drac.aws.errors import ModelThrottled, is_throttling
    from drac.aws.lambda_support import record_tokens
    from drac.models import Section, Strategy
    from drac.planning import plan_section
    from drac.ports import ModelCallError

    rt = _runtime()
    item = event["input"]
    document_id, index = item["document_id"], int(item["index"])
    correlate(document_id, stage="plan", section=index)
    strategy = Strategy.model_validate(item["strategy"])
    sections = json.loads(rt.artifacts.get_text(item["sections_key"]))
    section = Section.model_validate(sections[index])
    elements = rt.elements.get_elements(document_id)
    ledger = rt.ledger
    start = len(ledger.entries)
    try:
        plan = plan_section(
            section,
            elements,
            strategy,
            text_model=rt.text_model() if strategy.planner == "llm" else None,
            cache=rt.plan_cache,
            ledger=ledger,
            document_id=document_id,
        )
    except ModelCallError as exc:
        if is_throttling(exc):
            raise ModelThrottled(str(exc)) from exc
        raise
    finally:
        record_tokens(ledger.entries[start:], "planning")
    rt.artifacts.put_text(
        keys.section_plan_key(document_id, item["run_id"], index), plan.model_dump_json()
    )
    return {"index": index, "chunks": len(plan.chunks)}
