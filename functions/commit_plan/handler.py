"""Assemble chunks verbatim, embed them (Titan V2), index them, then retire the old version."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Save plan version N+1, index its chunks, delete version N's; return counts."""
    from drac.assemble import assemble_chunks
    from drac.aws import keys
    from drac.aws.errors import ModelThrottled, is_throttling
    from drac.aws.lambda_support import MetricUnit
    from drac.clock import utc_now
    from drac.errors import DracError
    from drac.models import LedgerEntry, PlanVersion, SectionPlan, Strategy
    from drac.ports import ModelCallError

    rt = _runtime()
    document_id = event["document_id"]
    correlate(document_id, stage="commit")
    strategy = Strategy.model_validate(event["strategy"])
    count = int(event["sectioning"]["section_count"])
    sections = tuple(
        SectionPlan.model_validate_json(
            rt.artifacts.get_text(keys.section_plan_key(document_id, event["run_id"], index))
        )
        for index in range(count)
    )
    record = rt.registry.get(document_id)
    if record is None:
        raise KeyError(f"document {document_id} is not registered")
    version = rt.plans.latest_version(document_id) + 1
    plan = PlanVersion(
        document_id=document_id,
        version=version,
        strategy=strategy,
        sections=sections,
        created_at=utc_now(),
    )
    elements = rt.elements.get_elements(document_id)
    chunks = assemble_chunks(record, elements, plan)
    too_big = [c for c in chunks if len(c.text) > strategy.hard_limit_chars]
    if too_big:
        raise DracError(
            f"hard limit {strategy.hard_limit_chars} is below this document's largest "
            f"single-element chunk ({max(len(c.text) for c in too_big)} characters)"
        )
    embedder = rt.embedder()
    try:
        vectors = embedder.embed([chunk.text for chunk in chunks])
    except ModelCallError as exc:
        if is_throttling(exc):
            raise ModelThrottled(str(exc)) from exc
        raise
    usage = getattr(embedder, "usage", None)
    if usage is not None:
        rt.ledger.record(
            LedgerEntry(
                document_id=document_id,
                stage="embedding",
                model=embedder.name,
                input_tokens=usage.input_tokens,
                at=utc_now(),
            )
        )
    index = rt.index()
    index.upsert(chunks, vectors)
    rt.plans.save_plan(plan)
    previous = record.active_version
    record = rt.registry.get(document_id) or record
    record.active_version = version
    rt.registry.put(record)
    retired = index.delete(document_id, previous) if previous and previous != version else 0
    metrics.add_metric(name="ChunksIndexed", unit=MetricUnit.Count, value=len(chunks))
    logger.info(
        "plan committed",
        extra={
            "version": version,
            "chunks": len(chunks),
            "retired_version": previous,
            "retired": retired,
        },
    )
    return {
        "document_id": document_id,
        "plan_version": version,
        "chunks": len(chunks),
        "retired_version": previous or 0,
        "retired_chunks": retired,
    }
