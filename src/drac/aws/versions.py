"""The cloud side of re-converting only what changed.

Register, which knows the version the S3 key held before (the starter's `previous_document`)
and may read the documents table, writes a pointer to it beside the new document's files;
each ConvertBatch reads the pointer and looks up the earlier version's batch with exactly its
page images, model and prompt under `documents/<earlier id>/reuse/<batch digest>.json` (one
read, wherever the batch falls in either version: pages put in front of whole batches still
reuse them), and keeps its own batch the same way for the version after. An earlier version
ingested before batches were kept by digest has only its batches kept by number
(`documents/<earlier id>/batches/<number>.reuse.json`): when the digest object is absent, the
batch of the same number is read instead and lent only when its page digests, model and
prompt are exactly this batch's. The Convert function's permissions stay as they were: it
reads and writes the artifacts bucket only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import ValidationError

from drac.aws import keys
from drac.aws.runtime import Runtime
from drac.documents.vision.incremental import (
    EarlierVersion,
    StoredBatch,
    is_document_id,
    prompt_digest,
)
from drac.ids import digest_of

_BATCH_DOMAIN = "drac-batch-v1"


def batch_digest(digests: Sequence[str], model: str, prompt: str) -> str:
    """The name of a converted batch among its document's kept batches: equal for the same
    page images in the same order asked of the same model with the same prompt."""
    return digest_of([_BATCH_DOMAIN, model, prompt, *digests], length=64)


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


def earlier_batch(
    rt: Runtime, document_id: str, digests: Sequence[str], model: str, batch: int
) -> EarlierVersion | None:
    """The earlier version with its kept batch of exactly these page images (in order),
    this model and the current prompt, if both are stored: kept by digest, or else (an
    earlier version kept before that) kept as batch number `batch`."""
    if not digests:
        return None
    try:
        pointer = json.loads(rt.artifacts.get_text(keys.earlier_version_key(document_id)))
        previous = str(pointer["document_id"])
    except (KeyError, TypeError, ValueError):
        return None
    if not is_document_id(previous):
        return None
    prompt = prompt_digest()
    kept = _kept(rt, keys.reuse_key(previous, batch_digest(digests, model, prompt)))
    if kept is None:
        kept = _kept(rt, keys.numbered_batch_key(previous, batch))
    if kept is None or (kept.digests, kept.model, kept.prompt) != (list(digests), model, prompt):
        return None
    return EarlierVersion(document_id=previous, batches=[kept])


def _kept(rt: Runtime, key: str) -> StoredBatch | None:
    """The batch kept under `key`, if one is (and is readable)."""
    try:
        return StoredBatch.model_validate_json(rt.artifacts.get_text(key))
    except (KeyError, ValueError, ValidationError):
        return None


def keep_batch(rt: Runtime, document_id: str, kept: StoredBatch | None) -> None:
    """Store a converted batch for the next version, under its batch digest (nothing for a
    failed batch)."""
    if kept is None:
        return
    digest = batch_digest(kept.digests, kept.model, kept.prompt)
    rt.artifacts.put_text(keys.reuse_key(document_id, digest), kept.model_dump_json())
