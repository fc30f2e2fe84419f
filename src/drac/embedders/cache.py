"""Embeddings remembered by model identity and text, so re-evaluating unchanged chunks costs
nothing; and the one way to embed queries (some models read a query differently)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from drac.ports import Embedder

QUERY_SUFFIX = "#query"
"""Appended to a model's identity for the vectors of its query-side embedding."""


class VectorStore(Protocol):
    """Where cached vectors live (the workspace database, or a benchmark's own file)."""

    def get_vectors(self, model: str, keys: Sequence[str]) -> Mapping[str, list[float]]:
        """The stored vectors of these keys (missing keys are absent)."""
        ...

    def put_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store vectors by key."""
        ...


class MemoryVectorStore:
    """Vectors kept in memory for one run (where no workspace is at hand)."""

    def __init__(self) -> None:
        self._vectors: dict[tuple[str, str], list[float]] = {}

    def get_vectors(self, model: str, keys: Sequence[str]) -> Mapping[str, list[float]]:
        """The stored vectors of these keys (missing keys are absent)."""
        return {key: self._vectors[model, key] for key in keys if (model, key) in self._vectors}

    def put_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store vectors by key."""
        for key, vector in vectors.items():
            self._vectors[model, key] = list(vector)


def text_key(text: str) -> str:
    """The cache key of a text: its SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_identity(embedder: Embedder) -> str:
    """What identifies an embedder's vectors: its `identity` (a digest of its weights and
    configuration, or its package and version) where it has one, else its name."""
    identity = getattr(embedder, "identity", None)
    return identity if isinstance(identity, str) and identity else embedder.name


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Vectors of query texts: the embedder's `embed_queries` where it has one (E5 prefixes
    queries), else `embed`."""
    method = getattr(embedder, "embed_queries", None)
    return method(texts) if callable(method) else embedder.embed(texts)


def has_query_side(embedder: Embedder) -> bool:
    """Whether the embedder embeds queries differently from passages."""
    return callable(getattr(embedder, "embed_queries", None))


class CachingEmbedder(Embedder):
    """Wraps an embedder: texts embedded before by the same model come from the store.

    Vectors are keyed by the model's identity (`model_identity`), never by its display name,
    so two model folders of the same name never share vectors.
    """

    def __init__(self, inner: Embedder, store: VectorStore) -> None:
        self.inner = inner
        self.store = store
        self.name = inner.name
        self._identity: str | None = None

    @property
    def identity(self) -> str:
        """The wrapped model's identity (computed once)."""
        if self._identity is None:
            self._identity = model_identity(self.inner)
        return self._identity

    @property
    def dimension(self) -> int:  # type: ignore[override]
        return self.inner.dimension

    def missing(self, texts: Sequence[str]) -> list[str]:
        """The distinct texts whose vectors the store does not have yet, in order."""
        keys = {text_key(text): text for text in texts}
        known = self.store.get_vectors(self.identity, list(keys))
        return [text for key, text in keys.items() if key not in known]

    def fill(
        self,
        texts: Sequence[str],
        progress: Callable[[int, int], None] | None = None,
        batch: int = 64,
    ) -> int:
        """Embed and store the passage texts the store lacks, `batch` a call, telling
        `progress(done, total)` before the first and after each; how many were embedded."""
        missing = self.missing(texts)
        if progress is not None and missing:
            progress(0, len(missing))
        for start in range(0, len(missing), batch):
            self.embed(missing[start : start + batch])
            if progress is not None:
                progress(min(start + batch, len(missing)), len(missing))
        return len(missing)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per passage text, embedding only the texts the store does not have."""
        return self._cached(texts, self.identity, self.inner.embed)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per query text, cached apart from passages when the model tells them
        apart."""
        if not has_query_side(self.inner):
            return self.embed(texts)
        return self._cached(
            texts, self.identity + QUERY_SUFFIX, lambda batch: embed_queries(self.inner, batch)
        )

    def _cached(self, texts: Sequence[str], model: str, embed: _Embed) -> list[list[float]]:
        keys = [text_key(text) for text in texts]
        known = dict(self.store.get_vectors(model, keys))
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in known}
        if missing:
            fresh = embed(list(missing.values()))
            new = dict(zip(missing, fresh, strict=True))
            self.store.put_vectors(model, new)
            known.update(new)
        return [list(known[key]) for key in keys]


class _Embed(Protocol):
    def __call__(self, texts: Sequence[str], /) -> list[list[float]]: ...
