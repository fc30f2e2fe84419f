"""What `drac status` reports of a workspace, gathered in one place."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from drac.local.box_status import BoxCounts, workspace_box_counts
from drac.local.verification import stored_verification
from drac.local.workspace import Workspace as LocalWorkspace
from drac.models import DocumentRecord, PageEscalation, Strategy, VerificationCounts
from drac.planning import PlanningCounts, planning_counts


@dataclass(frozen=True)
class DocumentState:
    """One document of the workspace: its record and what its active plan holds."""

    record: DocumentRecord
    chunks: int
    planning: PlanningCounts | None
    """How the active plan's sections were planned, when a model planned it."""
    verification: VerificationCounts | None
    """How a vision model's pages compared with their text layer, when they were checked."""
    boxes: BoxCounts | None
    """How many of its elements were placed on their page, for a document with pages."""
    escalations: tuple[PageEscalation, ...] = ()
    """Its pages converted again by a second model, why, and whose answer each kept."""
    last_planning_attempt: dict[str, Any] | None = None
    """Its last re-plan that stored no plan version (when, why, counts, tokens, seconds),
    None when its latest attempt stored one."""

    def to_dict(self) -> dict[str, Any]:
        """The document as one entry of `drac status --json`."""
        return {
            **self.record.model_dump(mode="json"),
            "chunks": self.chunks,
            "planning": _dumped(self.planning),
            "last_planning_attempt": self.last_planning_attempt,
            "verification": _dumped(self.verification),
            "boxes": _dumped(self.boxes),
            "escalations": [page.model_dump(mode="json") for page in self.escalations],
        }


def _dumped(value: BaseModel | None) -> dict[str, Any] | None:
    return value.model_dump(mode="json") if value is not None else None


@dataclass(frozen=True)
class WorkspaceStatus:
    """Every document of a workspace and the strategy new documents are planned with."""

    documents: tuple[DocumentState, ...]
    strategy: Strategy
    strategy_remembered: bool
    """Whether the strategy is the one remembered from the last full re-plan."""

    def counts(self) -> dict[str, int]:
        """Documents by status."""
        return dict(Counter(state.record.status.value for state in self.documents))


def gather_status(ws: LocalWorkspace) -> WorkspaceStatus:
    """The workspace's documents with their chunk counts, planning, verification and box
    counts, and its strategy for new documents."""
    documents = ws.documents()
    counts = Counter(chunk.document_id for chunk in ws.active_chunks())
    saved = ws.saved_strategy()
    planning = model_planning(ws, documents)
    placed = workspace_box_counts(ws)
    states = tuple(
        DocumentState(
            record=d,
            chunks=counts[d.document_id],
            planning=planning.get(d.document_id),
            verification=verification_of(ws, d),
            boxes=placed.get(d.document_id),
            last_planning_attempt=ws.planning_attempt(d.document_id),
            escalations=escalations_of(ws, d),
        )
        for d in documents
    )
    return WorkspaceStatus(states, saved or Strategy(), saved is not None)


def verification_of(ws: LocalWorkspace, record: DocumentRecord) -> VerificationCounts | None:
    """The record's verification counts; for a document ingested before the record kept
    them, the counts of its stored summary."""
    if record.verification is not None:
        return record.verification
    summary = stored_verification(ws, record.document_id)
    return summary.counts() if summary is not None else None


def escalations_of(ws: LocalWorkspace, record: DocumentRecord) -> tuple[PageEscalation, ...]:
    """The document's pages converted again by a second model (its stored summary's)."""
    if record.verification is None:
        return ()
    summary = stored_verification(ws, record.document_id)
    return summary.escalations if summary is not None else ()


def model_planning(
    ws: LocalWorkspace, documents: Sequence[DocumentRecord]
) -> dict[str, PlanningCounts]:
    """How the active plan of each document planned by the model was made."""
    found: dict[str, PlanningCounts] = {}
    for d in documents:
        if d.active_version:
            plan = ws.plans.get_plan(d.document_id, d.active_version)
            if plan.strategy.planner == "llm":
                found[d.document_id] = planning_counts(plan)
    return found
