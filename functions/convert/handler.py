"""Convert one batch of rendered pages to Markdown with the vision model on Bedrock."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return {batch, ok}; raises ModelThrottled so Step Functions backs off and retries."""
    from drac.aws.conversion import convert_batch
    from drac.aws.errors import ModelThrottled
    from drac.aws.lambda_support import MetricUnit, record_tokens

    rt = _runtime()
    item = event["input"]
    document_id = item["document_id"]
    correlate(document_id, stage="convert", batch=item["batch"])
    ledger = rt.ledger
    start = len(ledger.entries)
    try:
        status = convert_batch(
            rt.artifacts,
            document_id,
            int(item["batch"]),
            int(item["page_count"]),
            rt.env.batch_size,
            rt.vision_model(),
            ledger,
        )
    except ModelThrottled:
        metrics.add_metric(name="ModelThrottled", unit=MetricUnit.Count, value=1)
        raise
    finally:
        record_tokens(ledger.entries[start:], "conversion")
    name = "BatchesConverted" if status.ok else "BatchesFailed"
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
    return {"batch": status.batch, "ok": status.ok}
