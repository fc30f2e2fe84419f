"""Re-planning stored documents and forgetting paths: the writes besides ingest."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from drac.documents.row_sentences import replan_advice
from drac.documents.spreadsheets import SPREADSHEET_FORMATS, table_rows_advice
from drac.errors import DracError, WorkspaceError
from drac.local.errors import WorkspaceUnusableError
from drac.local.files import shown_path
from drac.local.outcome import Outcome
from drac.local.pipeline import replan_document
from drac.local.workspace import Workspace as LocalWorkspace
from drac.models import DocumentRecord, Strategy
from drac.planning.errors import ModelServerUnreachable
from drac.ports import TextModel


class Removal(BaseModel):
    """What forgetting one path did: `retired` is the id of the document that left search
    (None when another path still holds it); `document_id` None means nothing was removed,
    and `error` says why."""

    path: str
    document_id: str | None
    retired: str | None = None
    error: str | None = None


def remove_reference(ws: LocalWorkspace, reference: str) -> list[Removal]:
    """Forget a path, or every path of the document a name or id means (`drac remove`)."""
    source = shown_path(Path(reference).resolve())
    held = ws.registry.source_document(source)
    if held is not None:
        retired = ws.remove_source(source)
        return [Removal(path=reference, document_id=held, retired=retired)]
    try:
        record = ws.find_document(reference)
    except WorkspaceError as exc:
        return [Removal(path=reference, document_id=None, error=str(exc))]
    sources = ws.registry.sources_of(record.document_id)
    if not sources:
        error = f"{record.source} is not held by any path ({record.status.value})"
        return [Removal(path=reference, document_id=None, error=error)]
    return [
        Removal(path=path, document_id=record.document_id, retired=ws.remove_source(path))
        for path in sources
    ]


def table_rows_note(ws: LocalWorkspace, record: DocumentRecord, strategy: Strategy) -> list[str]:
    """A warning when a document's stored rows are written another way than `strategy`
    asks (a re-plan keeps them; a forced ingest writes them again)."""
    recorded = replan_advice(record, strategy.table_rows)
    if recorded is not None:
        return [recorded]
    if record.format not in SPREADSHEET_FORMATS:
        return []
    advice = table_rows_advice(record.format, ws.get_elements(record.document_id), strategy)
    return [advice] if advice else []


@dataclass
class ReplanRun:
    """The outcomes of re-planning documents; `stopped` says why the run ended early (a model
    server that cannot be reached), with the count of documents left."""

    outcomes: list[Outcome] = field(default_factory=list)
    stopped: str = ""


def replan_all(
    ws: LocalWorkspace,
    records: Sequence[DocumentRecord],
    strategy: Strategy,
    text_model: TextModel | None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> ReplanRun:
    """Plan each document again from its stored elements (caller holds the writer lock). A
    document that fails is a FAILED outcome; an unreachable model server stops the run
    (every later call would fail the same); WorkspaceUnusableError is raised."""
    run = ReplanRun()
    for record in records:
        try:
            outcome = replan_document(record, ws, strategy, text_model=text_model)
            outcome.warnings[:0] = table_rows_note(ws, record, strategy)
        except WorkspaceUnusableError:
            raise
        except ModelServerUnreachable as exc:
            run.stopped = f"{exc} ({len(records) - len(run.outcomes)} document(s) not re-planned)"
            break
        except DracError as exc:
            outcome = Outcome(
                path=record.source, document_id=record.document_id, status="FAILED", error=str(exc)
            )
        run.outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return run
