"""Write the manifest of documents to re-plan, read by the re-plan Distributed Map."""

from __future__ import annotations

import json
import uuid
from typing import Any

from pydantic import BaseModel

from drac.aws import keys
from drac.aws.events import ReplanRequest
from drac.aws.lambda_support import logger
from drac.aws.runtime import Runtime
from drac.models import DocumentStatus


class ManifestInput(BaseModel):
    """The Manifest state's payload: the `Replan Requested` detail and the execution name."""

    request: ReplanRequest
    run_id: str | None = None


class Manifest(BaseModel):
    """Where the manifest is, how many documents it lists, and the resolved strategy."""

    bucket: str
    key: str
    count: int
    strategy: dict[str, Any]


def write_replan_manifest(rt: Runtime, event: ManifestInput) -> Manifest:
    """List the requested live (INDEXED or PARTIAL) documents of the tenant, if one is named."""
    request = event.request
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
    key = keys.manifest_key(event.run_id or uuid.uuid4().hex)
    rt.artifacts.put_text(key, json.dumps(items))
    logger.info(
        "manifest written",
        extra={"documents": len(items), "skipped": skipped, "strategy": strategy.name},
    )
    return Manifest(
        bucket=rt.env.artifacts_bucket,
        key=key,
        count=len(items),
        strategy=strategy.model_dump(mode="json"),
    )
