"""Write the re-plan manifest (documents to re-plan) for the Distributed Map."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return the manifest's bucket, key and count, and the resolved strategy."""
    import json

    from drac.aws import keys
    from drac.aws.events import ReplanRequest
    from drac.models import DocumentStatus

    rt = _runtime()
    request = ReplanRequest.model_validate(event["request"])
    strategy = rt.env.strategy(request.strategy)
    if request.all:
        records = list(rt.registry.live(request.tenant))
    else:
        records = [r for r in (rt.registry.get(i) for i in request.document_ids) if r is not None]
    live = (DocumentStatus.INDEXED, DocumentStatus.PARTIAL)
    items = [
        {"document_id": r.document_id, "tenant": r.tenant}
        for r in records
        if r.status in live and (request.tenant is None or r.tenant == request.tenant)
    ]
    skipped = len(request.document_ids) - len(items) if not request.all else 0
    import uuid

    key = keys.manifest_key(event.get("run_id") or uuid.uuid4().hex)
    rt.artifacts.put_text(key, json.dumps(items))
    logger.info(
        "manifest written",
        extra={"documents": len(items), "skipped": skipped, "strategy": strategy.name},
    )
    return {
        "bucket": rt.env.artifacts_bucket,
        "key": key,
        "count": len(items),
        "strategy": strategy.model_dump(mode="json"),
    }
