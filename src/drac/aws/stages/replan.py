"""Write the manifest of documents to re-plan, read by the re-plan Distributed Map."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from drac.aws import keys
from drac.aws.events import ReplanRequest
from drac.aws.identity import replan_scope, scoped_replan
from drac.aws.lambda_support import logger
from drac.aws.runtime import Runtime
from drac.strategies import strategy_from_request


class ManifestInput(BaseModel):
    """The Manifest state's payload: the `Replan Requested` event's source and detail, and
    the execution name."""

    source: str
    request: ReplanRequest
    run_id: str

    def authorised(self, rt: Runtime) -> ReplanRequest:
        """The request, if the scope its source stands for covers it (a tenant's source
        re-plans only that tenant); drac.aws.errors.Forbidden otherwise."""
        return scoped_replan(replan_scope(rt.settings, self.source), self.request)


class Manifest(BaseModel):
    """Where the manifest is, how many documents it lists, and the resolved strategy."""

    bucket: str
    key: str
    count: int
    strategy: dict[str, Any]


def write_replan_manifest(rt: Runtime, event: ManifestInput) -> Manifest:
    """List the live documents the request covers: its tenant's (or every tenant's with
    `all`), narrowed to `document_ids` when given, paging through the live-documents index.
    A request its source may not make raises drac.aws.errors.Forbidden."""
    request = event.authorised(rt)
    strategy = strategy_from_request(request.strategy, rt.settings.conversion.strategy)
    wanted = set(request.document_ids)
    items = [
        {"document_id": document_id, "tenant": tenant}
        for document_id, tenant in rt.registry.live(request.tenant)
        if not wanted or document_id in wanted
    ]
    missing = sorted(wanted - {item["document_id"] for item in items})
    key = keys.manifest_key(event.run_id)
    rt.artifacts.put_text(key, json.dumps(items))
    logger.info(
        "manifest written",
        extra={
            "documents": len(items),
            "not_live_or_other_tenant": missing[:20],
            "strategy": strategy.name,
        },
    )
    return Manifest(
        bucket=rt.resources.artifacts_bucket,
        key=key,
        count=len(items),
        strategy=strategy.model_dump(mode="json"),
    )
