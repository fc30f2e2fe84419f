"""Chunk-size sweep: which rules-planner settings retrieve best on the corpus queries.

Usage:
    python bench/strategy_sweep.py [--companies velvera] [--grid "900:250,1000:600,..."]

Each grid item is target_chars:min_chars (hard limit 2,000 throughout). Prints R@6, R@3 and
MRR with the reference dense embedder and BM25 for each setting, next to the fixed 1,000/200
baseline over the PDF text layer. This is how drac's default Strategy was chosen; the chosen
row and the numbers are in BENCHMARKS.md ("Choosing the default chunk size").
"""

from __future__ import annotations

import argparse
import statistics

from _common import COMPANIES, CORPUS, MINILM, CachedEmbedder
from _drac import markdown_chunks
from retrieval import corpus_fixed

from drac.embedders.local import SentenceTransformerEmbedder
from drac.evaluation.chunksets import ChunkSet, EvalChunk
from drac.evaluation.queries import load_queries
from drac.evaluation.runner import evaluate
from drac.models import Strategy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--companies", default="velvera")
    parser.add_argument("--grid", default="900:250,900:500,1000:600,1100:700,1200:800")
    args = parser.parse_args()
    companies = [c.strip() for c in args.companies.split(",")]
    paths = [p for c in companies for p in sorted((CORPUS / COMPANIES[c] / "md").glob("*.md"))]
    sets: list[ChunkSet] = []
    for item in args.grid.split(","):
        target, minimum = (int(v) for v in item.split(":"))
        strategy = Strategy(target_chars=target, min_chars=minimum)
        chunks = markdown_chunks(paths, strategy)
        sizes = [len(c.text) for c in chunks]
        name = f"t={target} min={minimum} n={len(chunks)} mean={statistics.mean(sizes):.0f}"
        sets.append(
            ChunkSet(
                name=name,
                chunks=tuple(
                    EvalChunk(chunk_id=c.chunk_id, source=c.source, text=c.text) for c in chunks
                ),
            )
        )
    sets.append(corpus_fixed(companies))
    embedder = CachedEmbedder(SentenceTransformerEmbedder(MINILM))
    report = evaluate(sets, load_queries(CORPUS / "queries.csv"), embedder, k=6)
    print(f"{'setting':45s} {'retriever':8s} {'R@6':>6s} {'R@3':>6s} {'MRR':>6s}")
    for result in report.results:
        m = result.overall
        scores = f"{m['R@6']:6.3f} {m['R@3']:6.3f} {m['MRR']:6.3f}"
        print(f"{result.chunk_set:45s} {result.retriever:8s} {scores}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
