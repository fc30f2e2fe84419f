"""The local side of re-converting only what changed: find the version a path held before,
and keep each new version's converted batches beside its files for the next one."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import TypeAdapter

from drac.documents.vision.incremental import EarlierVersion, StoredBatch, is_document_id
from drac.local.workspace import Workspace
from drac.models import DocumentRecord

BATCHES_FILE = "batches.json"
"""Per document: its converted batches with their pages' digests (what a new version reuses)."""

_BATCHES = TypeAdapter(list[StoredBatch])


def earlier_version(workspace: Workspace, record: DocumentRecord) -> EarlierVersion | None:
    """The document the record's path holds now, when it is another version of the same
    tenant with kept batches; None otherwise (a forced re-ingest of the same content, a first
    ingest, an unreadable batches file: everything is converted)."""
    previous = workspace.registry.source_document(record.source_path or record.source)
    if previous is None or previous == record.document_id or not is_document_id(previous):
        return None
    held = workspace.registry.get(previous)
    if held is None or (held.tenant or None) != (record.tenant or None):
        return None
    try:
        text = workspace.artifacts.get_text(workspace.document_key(previous, BATCHES_FILE))
        batches = _BATCHES.validate_json(text)
    except (KeyError, OSError, UnicodeDecodeError, ValueError):
        return None
    return EarlierVersion(document_id=previous, batches=batches)


def keep_batches(workspace: Workspace, document_id: str, batches: Sequence[StoredBatch]) -> None:
    """Write the document's converted batches for its next version (nothing when none was
    converted by a model). A write that fails only costs the next version its reuse."""
    if not batches:
        return
    try:
        workspace.artifacts.put_bytes(
            workspace.document_key(document_id, BATCHES_FILE), _BATCHES.dump_json(list(batches))
        )
    except OSError:
        return
