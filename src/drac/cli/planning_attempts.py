"""A document's last re-plan that stored no plan version (every section fell back, or the
model server went away), as `status` and `show` report it."""

from __future__ import annotations

from typing import Any

from drac.local.workspace import Workspace
from drac.models import DocumentRecord
from drac.planning import PlanningCounts


def last_failed_attempt(ws: Workspace, record: DocumentRecord) -> dict[str, Any] | None:
    """The document's last planning attempt that stored nothing (when, why, its counts,
    tokens and seconds), or None when its latest attempt stored a plan version."""
    return ws.planning_attempt(record.document_id)


def describe_attempt(attempt: dict[str, Any]) -> str:
    """One line: 'last re-plan 2026-...Z stored nothing (1 section(s): 0 by the model, 1 fell
    back to rules; 900 in / 80 out tokens; 12.5 s): <why>'."""
    counts = attempt.get("planning")
    detail = [PlanningCounts.model_validate(counts).describe()] if counts else []
    detail.append(f"{attempt.get('seconds', 0):g} s")
    return (
        f"last re-plan {attempt.get('at', '?')} stored nothing ({'; '.join(detail)}): "
        f"{attempt.get('error', '')}"
    )
