"""The cloud side of re-converting only what changed.

Register, which knows the version the S3 key held before (the starter's `previous_document`)
and may read the documents table, writes a pointer to it beside the new document's files;
each ConvertBatch reads the pointer and the earlier version's batch of the same number, and
keeps its own batch for the version after. The Convert function's permissions stay as they
were: it reads and writes the artifacts bucket only.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from drac.aws import keys
from drac.aws.runtime import Runtime
from drac.documents.incremental import EarlierVersion, StoredBatch, is_document_id


def point_to_earlier(
    rt: Runtime, document_id: str, previous: str | None, tenant: str | None
) -> None:
    """Name the version the key held before as the one this document may reuse batches of,
    when it is another document of the same tenant."""
    if previous is None or previous == document_id or not is_document_id(previous):
        return
    held = rt.registry.get(previous)
    if held is None or (held.tenant or None) != (tenant or None):
        return
    pointer = json.dumps({"document_id": previous})
    rt.artifacts.put_text(keys.earlier_version_key(document_id), pointer)


def earlier_batch(rt: Runtime, document_id: str, batch: int) -> EarlierVersion | None:
    """The earlier version with its batch of the same number, if both are stored."""
    try:
        pointer = json.loads(rt.artifacts.get_text(keys.earlier_version_key(document_id)))
        previous = str(pointer["document_id"])
        if not is_document_id(previous):
            return None
        stored = rt.artifacts.get_text(keys.reusable_batch_key(previous, batch))
        kept = StoredBatch.model_validate_json(stored)
    except (KeyError, TypeError, ValueError, ValidationError):
        return None
    return EarlierVersion(document_id=previous, batches=[kept])


def keep_batch(rt: Runtime, document_id: str, batch: int, kept: StoredBatch | None) -> None:
    """Store a converted batch for the next version (nothing for a failed batch)."""
    if kept is not None:
        rt.artifacts.put_text(keys.reusable_batch_key(document_id, batch), kept.model_dump_json())
