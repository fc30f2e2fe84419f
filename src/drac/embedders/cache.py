"""Embeddings remembered by model and text, so re-evaluating unchanged chunks costs nothing."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Protocol

from drac.ports import Embedder


class VectorStore(Protocol):
    """Where cached vectors live (the workspace database, or a benchmark's own file)."""

    def get_vectors(self, model: str, keys: Sequence[str]) -> Mapping[str, list[float]]:
        """The stored vectors of these keys (missing keys are absent)."""
        ...

    def put_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store vectors by key."""
        ...


def text_key(text: str) -> str:
    """The cache key of a text: its SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachingEmbedder(Embedder):
    """Wraps an embedder: texts embedded before by the same model come from the store."""

    def __init__(self, inner: Embedder, store: VectorStore) -> None:
        self.inner = inner
        self.store = store
        self.name = inner.name

    @property
    def dimension(self) -> int:  # type: ignore[override]
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, embedding only the texts the store does not have."""
        keys = [text_key(text) for text in texts]
        known = dict(self.store.get_vectors(self.name, keys))
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in known}
        if missing:
            fresh = self.inner.embed(list(missing.values()))
            new = dict(zip(missing, fresh, strict=True))
            self.store.put_vectors(self.name, new)
            known.update(new)
        return [list(known[key]) for key in keys]
