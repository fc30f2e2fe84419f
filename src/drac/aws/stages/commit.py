"""Commit a planning run as a plan version: prepare (assemble, save), index chunk ranges in
parallel, then activate; abandon the version's chunks when a step fails. Each stage calls the
core step of `drac.commit` of the same name, so the order that keeps search consistent is the
one the local runtime follows too."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel

from drac.aws import keys
from drac.aws.errors import retried_by_step_functions
from drac.aws.lambda_support import logger
from drac.aws.runtime import Runtime
from drac.aws.stages.fanout import MAX_ITEMS, ItemGroup, item_groups
from drac.aws.vectors import ReusingEmbedder, embedder_for_version
from drac.clock import utc_now
from drac.commit import (
    Activation,
    abandon_plan,
    activate_plan,
    index_chunks,
    plan_chunks,
    save_plan,
)
from drac.errors import DocumentError
from drac.ingest import status_after_conversion
from drac.models import Chunk, PlanVersion, SectionPlan, Strategy

RANGE_SIZE = 100
"""Chunks embedded and indexed by one IndexChunks invocation (Titan takes one text a call:
100 chunks is about 15 seconds)."""


class PrepareInput(BaseModel):
    """The Prepare state's payload: the planning run whose section plans become a version."""

    document_id: str
    strategy: Strategy
    run_id: str
    section_count: int


class PreparedPlan(BaseModel):
    """The saved plan version, its chunk count, and the chunk ranges to index."""

    document_id: str
    version: int
    chunks: int
    range_count: int
    groups: list[ItemGroup]


class RangeItem(BaseModel):
    """One item of the IndexChunks map: a range of a plan version's chunks."""

    document_id: str
    version: int
    index: int


class IndexInput(BaseModel):
    """The IndexChunks state's payload (the map item under `input`)."""

    input: RangeItem


class IndexedRange(BaseModel):
    """How many chunks a range indexed."""

    index: int
    chunks: int


class ActivateInput(BaseModel):
    """The Activate state's payload: `ingest` runs own the document (`owner`), re-plans
    (`replan`) need it live."""

    document_id: str
    version: int
    mode: Literal["ingest", "replan"]
    owner: str | None = None


class AbandonInput(BaseModel):
    """The Abandon state's payload: the version whose chunks must go."""

    document_id: str
    version: int


class Abandoned(BaseModel):
    """How many chunks of the abandoned version were deleted."""

    document_id: str
    version: int
    deleted: int


def prepare_plan(rt: Runtime, event: PrepareInput) -> PreparedPlan:
    """Build plan version N+1 from the run's section plans, assemble its chunks verbatim,
    save the plan (before any chunk is indexed) and store the chunks in ranges to index.

    Raises DocumentError, before anything is stored, when a chunk breaks the hard limit.
    """
    document_id = event.document_id
    sections = tuple(
        SectionPlan.model_validate_json(
            rt.artifacts.get_text(keys.section_plan_key(document_id, event.run_id, index))
        )
        for index in range(event.section_count)
    )
    record = rt.registry.get(document_id)
    if record is None:
        raise KeyError(f"document {document_id} is not registered")
    plan = PlanVersion(
        document_id=document_id,
        version=rt.plans.latest_version(document_id) + 1,
        strategy=event.strategy,
        sections=sections,
        created_at=utc_now(),
    )
    chunks = plan_chunks(record, rt.elements.get_elements(document_id), plan, event.strategy)
    ranges = -(-len(chunks) // RANGE_SIZE)
    if ranges > MAX_ITEMS:
        raise DocumentError(f"{len(chunks)} chunks are too many to index in one plan version")
    save_plan(rt.plans, plan)
    # the metadata the chunks are indexed with, as the record holds it now (IndexChunks reads
    # it here: it has no access to the documents table)
    rt.artifacts.put_text(
        keys.chunk_metadata_key(document_id, plan.version),
        json.dumps(record.metadata, ensure_ascii=False, sort_keys=True),
    )
    for index in range(ranges):
        part = chunks[index * RANGE_SIZE : (index + 1) * RANGE_SIZE]
        rt.artifacts.put_text(
            keys.chunk_range_key(document_id, plan.version, index),
            "".join(chunk.model_dump_json() + "\n" for chunk in part),
        )
    logger.info("plan saved", extra={"version": plan.version, "chunks": len(chunks)})
    return PreparedPlan(
        document_id=document_id,
        version=plan.version,
        chunks=len(chunks),
        range_count=ranges,
        groups=item_groups(ranges),
    )


def index_range(rt: Runtime, event: IndexInput) -> IndexedRange:
    """Embed and index one range of a plan version's chunks (repeating it replaces them); in
    a version after the first, a chunk whose text the document's index holds already,
    embedded by the same model, keeps that vector (drac.aws.vectors).

    Raises ModelThrottled or TransientError when the embedding model may succeed later.
    """
    item = event.input
    text = rt.artifacts.get_text(keys.chunk_range_key(item.document_id, item.version, item.index))
    chunks = [Chunk.model_validate_json(line) for line in text.splitlines() if line]
    stored = json.loads(
        rt.artifacts.get_text(keys.chunk_metadata_key(item.document_id, item.version))
    )
    metadata = {item.document_id: stored} if stored else None
    index = rt.index()
    embedder = embedder_for_version(rt.embedder(), index, item.document_id, item.version)
    with retried_by_step_functions():
        index_chunks(index, chunks, embedder=embedder, ledger=rt.ledger, metadata=metadata)
    if isinstance(embedder, ReusingEmbedder):
        logger.info(
            "range indexed", extra={"chunks": len(chunks), "vectors_reused": embedder.vectors.found}
        )
    return IndexedRange(index=item.index, chunks=len(chunks))


def activate_version(rt: Runtime, event: ActivateInput) -> Activation:
    """Make the version active (then delete every other version's chunks), or, when the
    document no longer allows it, delete this version's chunks."""
    record = rt.registry.get(event.document_id)
    if event.mode == "ingest":
        status = status_after_conversion(record.conversion_failures if record else 0)
    else:
        status = record.status if record else status_after_conversion(0)
    activation = activate_plan(
        rt.registry,
        rt.index(),
        event.document_id,
        event.version,
        status,
        owner=event.owner if event.mode == "ingest" else None,
    )
    logger.info("activation", extra=activation.model_dump(mode="json"))
    return activation


def abandon_version(rt: Runtime, event: AbandonInput) -> Abandoned:
    """Delete every chunk of a version whose commit failed (or, if it became active before
    the failure, finish retiring the other versions)."""
    deleted = abandon_plan(rt.registry, rt.index(), event.document_id, event.version)
    logger.warning("plan version abandoned", extra={"version": event.version, "deleted": deleted})
    return Abandoned(document_id=event.document_id, version=event.version, deleted=deleted)
