"""Shared helpers of the benchmarks: corpus paths, the machine, docs/benchmarks.md sections."""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path

from drac.ports import Embedder

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DRAC_SHARED", REPO.parent / "shared"))
CORPUS = SHARED / "corpus" / "rag-multi-corpus"
MINILM = SHARED / "models" / "all-MiniLM-L6-v2"
OUT = REPO / "bench" / "out"
BENCHMARKS = REPO / "docs" / "benchmarks.md"  # the full tables; BENCHMARKS.md summarises them
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


def CachedEmbedder(inner: Embedder, path: Path = OUT / "embeddings.sqlite") -> Embedder:
    """The embedder with vectors cached in bench/out/embeddings.sqlite (drac's own cache)."""
    from drac.embedders.cache import CachingEmbedder
    from drac.local.database import Database
    from drac.local.stores import SqliteVectorStore

    return CachingEmbedder(inner, SqliteVectorStore(Database(path)))


def processes_cpu_s() -> dict[int, tuple[int, float]]:
    """Every live process: its parent's pid and its CPU seconds (user + system), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    found: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks)
    return found
