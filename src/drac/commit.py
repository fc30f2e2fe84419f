"""Commit a plan version, and retire documents no source holds any more.

The order of the steps is what keeps search consistent in both runtimes:
1. `plan_chunks`: assemble the chunks and refuse any over the hard limit (nothing stored yet);
2. `save_plan`: store the plan version (so every indexed chunk has a stored plan);
3. `index_chunks`: embed and index them (idempotent per chunk id, so a retry repeats safely);
4. `activate_plan`: make the version active if the document still allows it, then delete every
   other version's chunks; when refused, `abandon_plan` deletes this version's chunks.
Retirement and clean-up delete by (document, version), never by lists of chunk ids, so nothing
a failed or concurrent run left behind can survive them. The local runtime runs the steps in
one transaction; the cloud runs them as separate Lambda invocations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from drac.assemble import assemble_chunks, check_hard_limit
from drac.clock import utc_now
from drac.models import (
    Chunk,
    DocumentRecord,
    DocumentStatus,
    Element,
    LedgerEntry,
    PlanVersion,
    Strategy,
)
from drac.ports import ChunkIndex, DocumentRegistry, Embedder, Ledger, PlanStore


class Activation(BaseModel):
    """What activating a plan version did."""

    document_id: str
    version: int
    activated: bool
    retired_chunks: int = 0
    """Chunks of other versions deleted (or, when refused, of this version)."""


def plan_chunks(
    record: DocumentRecord, elements: Sequence[Element], plan: PlanVersion, strategy: Strategy
) -> list[Chunk]:
    """The chunks of a plan version, verbatim from the elements; DocumentError when one breaks
    the strategy's hard limit."""
    chunks = assemble_chunks(record, elements, plan)
    check_hard_limit(record, chunks, strategy)
    return chunks


def save_plan(plans: PlanStore, plan: PlanVersion) -> None:
    """Store a new plan version before any of its chunks is indexed."""
    plans.save_plan(plan)


def index_chunks(
    index: ChunkIndex,
    chunks: Sequence[Chunk],
    *,
    embedder: Embedder | None = None,
    ledger: Ledger | None = None,
    metadata: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Embed (when an embedder is given) and index chunks with their documents' `metadata`
    (by document id); repeating it replaces, never adds."""
    if not chunks:
        return
    vectors = None
    if embedder is not None:
        vectors = embedder.embed([chunk.text for chunk in chunks])
        usage = getattr(embedder, "usage", None)
        if ledger is not None and usage is not None:
            ledger.record(
                LedgerEntry(
                    document_id=chunks[0].document_id,
                    stage="embedding",
                    model=embedder.name,
                    input_tokens=usage.input_tokens,
                    at=utc_now(),
                )
            )
    if metadata:
        index.upsert(chunks, vectors, metadata)
    else:
        index.upsert(chunks, vectors)


def activate_plan(
    registry: DocumentRegistry,
    index: ChunkIndex,
    document_id: str,
    version: int,
    status: DocumentStatus,
    *,
    owner: str | None = None,
) -> Activation:
    """Make `version` the document's active plan with `status`, then delete every other
    version's chunks. When the document no longer allows it (deleted, taken over by another
    run, or a newer version active), delete this version's chunks instead. Safe to repeat: a
    version already active only has the others' chunks deleted (again)."""
    record = registry.activate(document_id, version, status, owner=owner)
    if record is None and not _is_active(registry, document_id, version):
        removed = abandon_plan(registry, index, document_id, version)
        return Activation(
            document_id=document_id, version=version, activated=False, retired_chunks=removed
        )
    retired = index.delete_other_versions(document_id, version)
    return Activation(
        document_id=document_id, version=version, activated=True, retired_chunks=retired
    )


def abandon_plan(
    registry: DocumentRegistry, index: ChunkIndex, document_id: str, version: int
) -> int:
    """Delete every chunk of a plan version whose commit failed; return how many. A version
    that became active before the failure is kept, and the other versions' chunks are
    deleted instead (the retirement the failure interrupted)."""
    if _is_active(registry, document_id, version):
        return index.delete_other_versions(document_id, version)
    return index.delete(document_id, version)


def _is_active(registry: DocumentRegistry, document_id: str, version: int) -> bool:
    record = registry.get(document_id)
    return record is not None and record.live and record.active_version == version


def commit_plan(
    registry: DocumentRegistry,
    plans: PlanStore,
    index: ChunkIndex,
    plan: PlanVersion,
    chunks: Sequence[Chunk],
    status: DocumentStatus,
    *,
    owner: str | None = None,
    embedder: Embedder | None = None,
    ledger: Ledger | None = None,
) -> Activation:
    """Save, index and activate a plan version in one go (the steps above, in order)."""
    save_plan(plans, plan)
    index_chunks(index, chunks, embedder=embedder, ledger=ledger)
    return activate_plan(registry, index, plan.document_id, plan.version, status, owner=owner)


def retire_if_orphaned(registry: DocumentRegistry, index: ChunkIndex, document_id: str) -> bool:
    """When no source holds the document any more, mark it DELETED, then delete its chunks.

    Return True when it was retired. Call it after every change of a source's document, from
    each side of a race: whichever looks last sees the orphan. Marking first means an
    activation that comes later is refused (and deletes its own chunks).
    """
    if registry.sources_of(document_id) or registry.get(document_id) is None:
        return False
    registry.mark_deleted(document_id)
    index.delete(document_id)
    return True


def clean_up_failure(registry: DocumentRegistry, index: ChunkIndex, document_id: str) -> int:
    """After a failed ingest or re-plan, delete every chunk not of the active version (all of
    them when none is active); return how many."""
    record = registry.get(document_id)
    active = record.active_version if record is not None and record.live else None
    if active is None:
        return index.delete(document_id)
    return index.delete_other_versions(document_id, active)


def release_source(
    registry: DocumentRegistry, index: ChunkIndex, source: str, order: str
) -> str | None:
    """A source was deleted: forget it (unless a later upload is recorded) and retire its
    document if no other source holds it. Return the retired document's id, if any."""
    document_id = registry.release_source(source, order)
    if document_id is not None and retire_if_orphaned(registry, index, document_id):
        return document_id
    return None
