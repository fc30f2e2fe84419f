"""Vectors a new plan version reuses: a chunk whose text the document's index already holds,
embedded by the same model, keeps that vector instead of being embedded again (a re-plan for
changed metadata embeds nothing; one for a new strategy embeds only the chunks it changed).

A vector is a function of the text and the model alone (Titan's embedding is deterministic),
so reuse is exact. The index is the store: every chunk is indexed with its text's SHA-256 and
its vector's model (`drac.aws.opensearch`), and `drac.embedders.cache.CachingEmbedder` asks
it for the digests of the texts to embed, as the local runtime asks its workspace database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from drac.aws.opensearch import OpenSearchChunkIndex
from drac.embedders.cache import CachingEmbedder, VectorStore, model_identity
from drac.models import TokenUsage
from drac.ports import Embedder


class IndexedVectors(VectorStore):
    """The vectors one document's indexed chunks hold (any plan version), by text digest."""

    def __init__(self, index: OpenSearchChunkIndex, document_id: str, dimension: int) -> None:
        """Look up `document_id`'s chunks in `index`; only vectors of `dimension` count."""
        self.index = index
        self.document_id = document_id
        self.dimension = dimension
        self.found = 0

    def get_vectors(self, model: str, keys: Sequence[str]) -> Mapping[str, list[float]]:
        """The stored vectors of these text digests made by `model`."""
        vectors = self.index.stored_vectors(self.document_id, model, keys, self.dimension)
        self.found += len(vectors)
        return vectors

    def put_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Nothing to do: the vectors are stored with their chunks when they are indexed."""


def embedder_for_version(
    embedder: Embedder, index: OpenSearchChunkIndex, document_id: str, version: int
) -> Embedder:
    """The embedder that indexes plan version `version` of a document into `index`: from
    version 2 on one that reuses the vectors the document's chunks hold already; version 1
    has no earlier version to take them from, so it embeds (and spends no lookup). Either
    way `index` labels the vectors with the model's identity."""
    index.vector_model = model_identity(embedder)
    if version <= 1:
        return embedder
    return ReusingEmbedder(embedder, index, document_id)


class ReusingEmbedder(CachingEmbedder):
    """Embeds only the texts whose vectors the document's index does not hold, and reports
    the token usage of what it embedded (a ledger entry only when it embedded something)."""

    def __init__(self, inner: Embedder, index: OpenSearchChunkIndex, document_id: str) -> None:
        """Wrap `inner`, finding vectors among `document_id`'s chunks in `index`."""
        self.vectors = IndexedVectors(index, document_id, inner.dimension)
        super().__init__(inner, self.vectors)

    @property
    def usage(self) -> TokenUsage | None:
        """The wrapped embedder's token usage, None while it embedded nothing."""
        usage = getattr(self.inner, "usage", None)
        return usage if isinstance(usage, TokenUsage) and usage != TokenUsage() else None
