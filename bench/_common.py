"""Shared helpers of the benchmarks: corpus paths, machine description, BENCHMARKS.md sections."""

from __future__ import annotations

import hashlib
import os
import pickle
import platform
import re
from collections.abc import Sequence
from pathlib import Path

from drac.ports import Embedder

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DRAC_SHARED", REPO.parent / "shared"))
CORPUS = SHARED / "corpus" / "rag-multi-corpus"
MINILM = SHARED / "models" / "all-MiniLM-L6-v2"
OUT = REPO / "bench" / "out"
BENCHMARKS = REPO / "BENCHMARKS.md"
COMPANIES = {"velvera": "Velvera Technologies", "cloudway": "CloudWay-24"}


def machine() -> str:
    """One line describing the machine the benchmark ran on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def write_section(name: str, body: str, path: Path = BENCHMARKS) -> None:
    """Replace (or append) the section between this benchmark's markers, leaving others alone."""
    start, end = f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _m: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


class CachedEmbedder(Embedder):
    """Wraps an embedder with an on-disk cache keyed by model name and text (bench only)."""

    def __init__(self, inner: Embedder, cache_dir: Path = OUT / "embeddings"):
        self.inner = inner
        self.name = inner.name
        digest = hashlib.sha256(inner.name.encode()).hexdigest()[:16]
        self.cache_file = cache_dir / f"{digest}.pkl"
        self._cache: dict[str, list[float]] = {}
        if self.cache_file.exists():
            self._cache = pickle.loads(self.cache_file.read_bytes())

    @property
    def dimension(self) -> int:  # type: ignore[override]
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._cache}
        missing = sorted(todo.items())
        if missing:
            vectors = self.inner.embed([t for _, t in missing])
            self._cache.update({k: v for (k, _), v in zip(missing, vectors, strict=True)})
            self.cache_file.parent.mkdir(parents=True, exist_ok=True)
            self.cache_file.write_bytes(pickle.dumps(self._cache))
        return [self._cache[k] for k in keys]
