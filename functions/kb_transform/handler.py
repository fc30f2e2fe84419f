"""Chunk a Bedrock Knowledge Base's parsed files with drac (custom transformation at
POST_CHUNKING of a data source with chunking strategy NONE)."""

from __future__ import annotations

import os
from typing import Any

from drac.aws.lambda_support import logger, metrics, record_tokens, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.errors import KbTransformError
from drac.aws.stages.kb_transform import RESERVE_MS, transform
from drac.ports import MemoryLedger

check_at_cold_start("kb_transform")  # a missing resource name fails the init phase

BUCKET_VARIABLE = "KB_INTERMEDIATE_BUCKET"
PREFIX_VARIABLE = "KB_INTERMEDIATE_PREFIX"


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Write drac's chunks of every content batch beside it; return the output event."""
    rt = _runtime()
    bucket = os.environ[BUCKET_VARIABLE]
    if event.get("bucketName") != bucket:
        raise KbTransformError(
            f"bucketName {event.get('bucketName')!r} is not the configured intermediate bucket"
        )
    strategy = rt.settings.conversion.strategy
    llm = strategy.planner == "llm"
    s3 = rt.client("s3")
    logger.append_keys(ingestion_job=event.get("ingestionJobId"))
    ledger = MemoryLedger()  # tokens go to metrics: the function has no table
    try:
        result = transform(
            event,
            lambda key: s3.get_object(Bucket=bucket, Key=key)["Body"].read(),
            strategy,
            prefix=os.environ.get(PREFIX_VARIABLE, ""),
            text_model=rt.text_model(strategy.planner_model) if llm else None,
            ledger=ledger,
            remaining_ms=context.get_remaining_time_in_millis,
            # a planner call may take the model's whole timeout
            reserve_ms=RESERVE_MS + (int(rt.settings.models.model_timeout_s * 1000) if llm else 0),
        )
    finally:
        record_tokens(ledger.entries, "kb_transform")
    for key, body in result.writes.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json")
    logger.info("kb transform", extra={"batches": len(result.writes), "chunks": result.chunks})
    return result.response
