"""One commit scenario, the same assertions, against both runtimes' adapters: SQLite + FTS
(the local workspace) and DynamoDB + S3 on moto + the OpenSearch fake (the cloud)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from drac.clock import utc_now
from drac.commit import (
    abandon_plan,
    activate_plan,
    clean_up_failure,
    commit_plan,
    index_chunks,
    plan_chunks,
    release_source,
    retire_if_orphaned,
    save_plan,
)
from drac.ingest import parse_document
from drac.models import DocumentRecord, DocumentStatus, PlanVersion, Strategy
from drac.planning import plan_document
from drac.ports import ChunkIndex, DocumentRegistry, PlanStore

MARKDOWN = "# Guide\n\n" + "\n\n".join(
    f"## Part {n}\n\n" + " ".join(f"Sentence {n}.{i} about part {n}." for i in range(30))
    for n in range(1, 6)
)


@dataclass
class Adapters:
    registry: DocumentRegistry
    plans: PlanStore
    index: ChunkIndex
    stored: Callable[[], list[tuple[str, int]]]
    """(document, plan version) of every chunk the index holds, active or not."""

    def versions(self) -> set[tuple[str, int]]:
        """The (document, plan version) pairs the index holds chunks of."""
        return set(self.stored())


@pytest.fixture(params=["sqlite", "moto"])
def adapters(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Adapters]:
    if request.param == "sqlite":
        from drac.local import Workspace

        ws = Workspace(tmp_path / "ws")
        yield Adapters(ws.registry, ws.plans, ws.index, ws.index.stored_chunks)
        ws.close()
    else:
        rt, opensearch = request.getfixturevalue("cloud")
        def stored() -> list[tuple[str, int]]:
            return [(d["document_id"], int(d["plan_version"])) for d in opensearch.docs]

        yield Adapters(rt.registry, rt.plans, rt.index(), stored)


def _registered(adapters: Adapters, document_id: str, owner: str) -> DocumentRecord:
    record = DocumentRecord(document_id=document_id, source="guide.md",
                            source_path="incoming/guide.md", sha256="0" * 64, format="markdown",
                            owner=owner)
    adapters.registry.put(record)
    return record


def _plan(record: DocumentRecord, version: int, target: int) -> tuple[PlanVersion, list[Any]]:
    strategy = Strategy(target_chars=target, min_chars=min(700, target), hard_limit_chars=2000)
    parsed = parse_document(MARKDOWN, strategy)
    plan = plan_document(record.document_id, parsed.elements, parsed.sections, strategy,
                         version=version)
    return plan, plan_chunks(record, parsed.elements, plan, strategy)


def test_commit_scenario(adapters: Adapters) -> None:
    registry, index = adapters.registry, adapters.index
    record = _registered(adapters, "d1", owner="run-1")

    # the first version, committed by the run that owns the document
    plan1, chunks1 = _plan(record, 1, 1100)
    first = commit_plan(registry, adapters.plans, index, plan1, chunks1,
                        DocumentStatus.INDEXED, owner="run-1")
    assert first.activated
    stored = registry.get("d1")
    assert stored is not None
    assert (stored.status, stored.active_version, stored.owner) == (
        DocumentStatus.INDEXED, 1, None)
    assert adapters.versions() == {("d1", 1)}
    assert adapters.plans.get_plan("d1", 1).chunk_ids_arrays == plan1.chunk_ids_arrays

    # a re-plan that failed half-way left chunks of version 2 behind (saved, never activated)
    plan2, chunks2 = _plan(record, 2, 400)
    save_plan(adapters.plans, plan2)
    index_chunks(index, chunks2[: len(chunks2) // 2])
    assert ("d1", 2) in adapters.versions()
    # ... the next re-plan (version 3) leaves exactly its own chunks
    plan3, chunks3 = _plan(record, 3, 700)
    third = commit_plan(registry, adapters.plans, index, plan3, chunks3, DocumentStatus.INDEXED)
    assert third.activated and third.retired_chunks == len(chunks1) + len(chunks2) // 2
    assert adapters.versions() == {("d1", 3)}
    assert len(adapters.stored()) == len(chunks3)

    # a run that does not own the document cannot activate; its chunks are removed
    plan4, chunks4 = _plan(record, 4, 900)
    refused = commit_plan(registry, adapters.plans, index, plan4, chunks4,
                          DocumentStatus.INDEXED, owner="someone-else")
    assert not refused.activated
    assert adapters.versions() == {("d1", 3)}
    assert registry.get("d1").active_version == 3  # type: ignore[union-attr]

    # an older version can never be activated after a newer one
    index_chunks(index, chunks2)
    assert registry.activate("d1", 2, DocumentStatus.INDEXED) is None
    assert abandon_plan(registry, index, "d1", 2) == len(chunks2)

    # repeating the activation of the active version (a retried step) keeps it, and an
    # abandon after the version became active finishes the retirement instead of deleting it
    index_chunks(index, chunks2)
    again = activate_plan(registry, index, "d1", 3, DocumentStatus.INDEXED)
    assert again.activated and adapters.versions() == {("d1", 3)}
    index_chunks(index, chunks2)
    assert abandon_plan(registry, index, "d1", 3) == len(chunks2)
    assert adapters.versions() == {("d1", 3)}

    # after a failure, clean-up keeps the active version only
    index_chunks(index, chunks4)
    clean_up_failure(registry, index, "d1")
    assert adapters.versions() == {("d1", 3)}


def test_sources_scenario(adapters: Adapters) -> None:
    registry, index = adapters.registry, adapters.index
    record = _registered(adapters, "d1", owner="run-1")
    plan, chunks = _plan(record, 1, 1100)
    commit_plan(registry, adapters.plans, index, plan, chunks, DocumentStatus.INDEXED,
                owner="run-1")
    order = utc_now()
    # the same content under two keys: one document, two sources
    assert registry.claim_source("incoming/a.md", "d1", f"{order}-1").claimed
    assert registry.claim_source("incoming/b.md", "d1", f"{order}-1").claimed
    assert registry.sources_of("d1") == ["incoming/a.md", "incoming/b.md"]
    # an upload older than the recorded one does not win
    stale = registry.claim_source("incoming/a.md", "d0", f"{order}-0")
    assert not stale.claimed and registry.sources_of("d1") == ["incoming/a.md", "incoming/b.md"]
    # deleting one key keeps the document; a stale delete is ignored
    assert release_source(registry, index, "incoming/a.md", f"{order}-0") is None
    assert release_source(registry, index, "incoming/a.md", f"{order}-2") is None
    assert registry.get("d1").live  # type: ignore[union-attr]
    # a new upload of the other key replaces the document: d1 has no key left
    claim = registry.claim_source("incoming/b.md", "d2", f"{order}-3")
    assert claim.claimed and claim.previous == "d1"
    assert retire_if_orphaned(registry, index, "d1")
    retired = registry.get("d1")
    assert retired is not None and retired.status is DocumentStatus.DELETED
    assert retired.active_version is None
    assert adapters.versions() == set()
    # a run still indexing the retired document cannot bring it back
    index_chunks(index, chunks)
    assert registry.activate("d1", 2, DocumentStatus.INDEXED, owner="run-1") is None
