"""A local sentence-transformers model folder as an Embedder (optional extra `embed`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from drac.errors import DracError
from drac.ports import Embedder


class EmbedderUnavailable(DracError):
    """The configured embedder cannot be used here; the message says what to install or set."""


class SentenceTransformerEmbedder(Embedder):
    """Embeds with a sentence-transformers model loaded from a local folder, on CPU.

    The package is imported and the model loaded on first use, never at import time, and
    never from a hub: the folder must hold the model (HF_HUB_OFFLINE is forced on).
    """

    def __init__(self, path: Path, batch_size: int = 64, device: str = "cpu"):
        self.path = Path(path)
        self.batch_size = batch_size
        self.device = device
        self.name = f"local:{self.path.name}"
        self._model: Any | None = None
        self._dimension: int | None = None

    def _load(self) -> Any:
        if self._model is None:
            if not self.path.is_dir():
                raise EmbedderUnavailable(f"embedding model folder not found: {self.path}")
            import os

            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise EmbedderUnavailable(
                    "local embedder needs sentence-transformers: pip install 'drac[embed]'"
                ) from exc
            self._model = SentenceTransformer(str(self.path), device=self.device)
        return self._model

    @property
    def dimension(self) -> int:  # type: ignore[override]
        """Vector size of the model (loads it)."""
        if self._dimension is None:
            model = self._load()
            getter = getattr(model, "get_embedding_dimension", None)
            if getter is None:
                getter = model.get_sentence_embedding_dimension
            self._dimension = int(getter())
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one normalised vector per text, in order."""
        if not texts:
            return []
        vectors = self._load().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return [[float(x) for x in row] for row in vectors]
