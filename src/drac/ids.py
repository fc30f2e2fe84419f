"""Deterministic identifiers: the same input always gets the same ids."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def sha256_hex(data: bytes) -> str:
    """Return the hex SHA-256 of data."""
    return hashlib.sha256(data).hexdigest()


_DOCUMENT_DOMAIN = b"drac-document-v2\x00"


class ContentDigest:
    """The document id and SHA-256 of content fed in pieces (a 2 GB upload streams through
    in constant memory)."""

    def __init__(self, tenant: str | None = None) -> None:
        tenant_bytes = (tenant or "").encode("utf-8")
        self._content = hashlib.sha256()
        self._document = hashlib.sha256(_DOCUMENT_DOMAIN)
        # The tenant is length-prefixed, so no content can pose as tenant + content.
        self._document.update(len(tenant_bytes).to_bytes(8, "big") + tenant_bytes)
        self.size = 0

    def update(self, data: bytes) -> None:
        """Feed the next piece of content."""
        self._content.update(data)
        self._document.update(data)
        self.size += len(data)

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of the content alone."""
        return self._content.hexdigest()

    @property
    def document_id(self) -> str:
        """`d` + 19 hex characters of the tenant-and-content digest."""
        return "d" + self._document.hexdigest()[:19]


def document_id_for(content: bytes, tenant: str | None = None) -> str:
    """Return the document id of a file's bytes for a tenant (no tenant and the empty tenant
    are the same); ids of different (tenant, content) pairs never coincide by construction."""
    digest = ContentDigest(tenant)
    digest.update(content)
    return digest.document_id


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
