"""Commit a plan: assemble its chunks verbatim, embed and index them, retire the old version."""

from __future__ import annotations

from pydantic import BaseModel

from drac.assemble import assemble_chunks, check_hard_limit
from drac.aws import keys
from drac.aws.errors import model_throttling_retried
from drac.aws.lambda_support import logger
from drac.aws.runtime import Runtime
from drac.aws.stages.planning import RunId, Sectioning
from drac.clock import utc_now
from drac.models import LedgerEntry, PlanVersion, SectionPlan, Strategy


class CommitPlanInput(BaseModel):
    """The Commit state's payload: the planning run whose section plans to commit."""

    document_id: str
    tenant: str | None = None
    strategy: Strategy
    sectioning: Sectioning
    run_id: RunId


class CommitResult(BaseModel):
    """The new plan version, its chunk count, and the retired version and its chunk count."""

    document_id: str
    plan_version: int
    chunks: int
    retired_version: int
    retired_chunks: int


def commit_plan(rt: Runtime, event: CommitPlanInput) -> CommitResult:
    """Save plan version N+1 from the run's section plans, index its chunks with their
    embeddings, make it the active version and delete version N's chunks from the index.

    Raises DocumentError, before anything is stored, when a chunk breaks the hard limit;
    ModelThrottled when the embedding model keeps throttling.
    """
    document_id, strategy = event.document_id, event.strategy
    sections = tuple(
        SectionPlan.model_validate_json(
            rt.artifacts.get_text(keys.section_plan_key(document_id, str(event.run_id), index))
        )
        for index in range(event.sectioning.section_count)
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
    chunks = assemble_chunks(record, rt.elements.get_elements(document_id), plan)
    check_hard_limit(record, chunks, strategy)
    embedder = rt.embedder()
    with model_throttling_retried():
        vectors = embedder.embed([chunk.text for chunk in chunks])
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
    logger.info(
        "plan committed",
        extra={
            "version": version,
            "chunks": len(chunks),
            "retired_version": previous,
            "retired": retired,
        },
    )
    return CommitResult(
        document_id=document_id,
        plan_version=version,
        chunks=len(chunks),
        retired_version=previous or 0,
        retired_chunks=retired,
    )
