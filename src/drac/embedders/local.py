"""A local sentence-transformers model folder as an Embedder (optional extra `local-model`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from drac.embedders.errors import EmbedderUnavailable
from drac.ports import Embedder


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
        self._identity: str | None = None

    @property
    def identity(self) -> str:
        """The cache key of this model's vectors: `local:NAME@` and the SHA-256 of every file in
        the folder (weights and configuration), read once per process."""
        if self._identity is None:
            if not self.path.is_dir():
                raise EmbedderUnavailable(f"embedding model folder not found: {self.path}")
            self._identity = f"{self.name}@{folder_digest(self.path)[:16]}"
        return self._identity

    def _load(self) -> Any:
        if self._model is None:
            if not self.path.is_dir():
                raise EmbedderUnavailable(f"embedding model folder not found: {self.path}")
            import os

            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            # no weight-loading progress bar on the user's terminal (search prints results)
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise EmbedderUnavailable(
                    "local embedder needs sentence-transformers: install a CPU build of torch "
                    "(docs/search.md), then pip install 'drac[local-model]'"
                ) from exc
            _quiet_transformers()
            self._model = SentenceTransformer(str(self.path), device=self.device)
        return self._model

    def load(self) -> None:
        """Load the model now (raises EmbedderUnavailable if it cannot be)."""
        self._load()

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


def folder_digest(folder: Path) -> str:
    """SHA-256 over the relative path and bytes of every file under a folder, in path order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def _quiet_transformers() -> None:
    """Turn off transformers' own progress bars ("Loading weights") where it is installed."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
