"""A document's stored verification summary in a workspace (written at ingest when a vision
model converted it; read by `drac status`, `show`, `export` and `inspect`)."""

from __future__ import annotations

from drac.documents.vision.verify import VERIFICATION_FILE, VerificationSummary
from drac.local.workspace import Workspace


def save_verification(ws: Workspace, document_id: str, summary: VerificationSummary | None) -> None:
    """Keep the document's verification summary (atomically), or remove a stale one when
    this conversion was not checked (converted offline)."""
    key = ws.document_key(document_id, VERIFICATION_FILE)
    if summary is None:
        ws.artifacts.path(key).unlink(missing_ok=True)
        return
    ws.artifacts.put_text(key, summary.model_dump_json(indent=1))


def stored_verification(ws: Workspace, document_id: str) -> VerificationSummary | None:
    """The document's verification summary, or None (converted offline, or before drac kept
    one; a damaged summary is no summary: the conversion itself is intact)."""
    try:
        text = ws.artifacts.get_text(ws.document_key(document_id, VERIFICATION_FILE))
    except (KeyError, OSError):
        return None
    try:
        return VerificationSummary.model_validate_json(text)
    except ValueError:
        return None
