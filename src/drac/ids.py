"""Deterministic identifiers: the same input always gets the same ids."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def sha256_hex(data: bytes) -> str:
    """Return the hex SHA-256 of data."""
    return hashlib.sha256(data).hexdigest()


def document_id_for(content: bytes, tenant: str | None = None) -> str:
    """Return the document id for a file's bytes (and tenant): 20 hex chars of SHA-256."""
    digest = hashlib.sha256()
    if tenant:
        digest.update(tenant.encode("utf-8") + b"\x00")
    digest.update(content)
    return "d" + digest.hexdigest()[:19]


def digest_of(parts: Iterable[str], length: int = 16) -> str:
    """Return a short hex digest of a sequence of strings (unambiguously separated)."""
    digest = hashlib.sha256()
    for part in parts:
        encoded = part.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "big"))
        digest.update(encoded)
    return digest.hexdigest()[:length]


def chunk_id_for(document_id: str, plan_version: int, element_ids: Iterable[str]) -> str:
    """Return a chunk id derived from its document, plan version and element ids."""
    return f"{document_id}-v{plan_version}-{digest_of(element_ids, 12)}"
