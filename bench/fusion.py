"""Fusion benchmark: how to combine BM25 and dense rankings, chosen on one half of the corpus'
queries and reported on the other.

Usage:
    python bench/fusion.py [--embedders embedded,minilm] [--write]

The queries (518, both companies) are split in two halves by position (even / odd rows of
queries.csv). On each half, every fusion below is scored (R@6, the judge of docs/evaluation.md,
over drac's chunks of the 75 Markdown documents); the best of each family on one half is then
reported on the other half, both ways round (best by R@6, and by the mean of R@6, R@3, MRR):
- RRF: score = w / (k + dense rank) + (1 - w) / (k + BM25 rank), k in K_VALUES, w in WEIGHTS;
- blend: w x min-max-normalised cosine + (1 - w) x min-max-normalised BM25, w in WEIGHTS.
Today's fusion (RRF, k = 60, equal weights), BM25 alone and dense alone are reported on the same
halves. Vectors come from bench/out/embeddings.sqlite (filled by bench/embedders.py).
--write puts the table into docs/benchmarks.md (section "fusion").
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from _common import CORPUS, CachedEmbedder, machine, write_section
from embedders import CANDIDATES, corpus_workspace, workspace_chunks

from drac.embedders.cache import embed_queries
from drac.evaluation.chunksets import ChunkSet
from drac.evaluation.queries import Query, load_queries
from drac.evaluation.runner import score_system, select_queries
from drac.retrieval.bm25 import MemoryTermIndex
from drac.retrieval.rank import (
    Ranking,
    blend,
    dense_ranking,
    fuse,
    lexical_ranking,
    positions,
    unit,
)
from drac.retrieval.text import bm25_terms

K_VALUES = (1, 5, 10, 20, 40, 60, 100)
WEIGHTS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
METRICS = ("R@6", "R@3", "MRR")
OBJECTIVES: dict[str, Callable[[dict[str, float]], float]] = {
    "R@6": lambda overall: overall["R@6"],
    "mean of R@6, R@3, MRR": lambda overall: sum(overall[m] for m in METRICS) / len(METRICS),
}
Fusion = Callable[[Ranking, Ranking], Ranking]


def fusions() -> dict[str, Fusion]:
    """Every fusion tried, by name."""
    tried: dict[str, Fusion] = {}
    for k in K_VALUES:
        for w in WEIGHTS:
            tried[f"RRF k={k} w={w}"] = lambda d, b, k=k, w=w: fuse([d, b], k, (w, 1 - w))
    for w in WEIGHTS:
        tried[f"blend w={w}"] = lambda d, b, w=w: blend(d, b, w)
    return tried


def score(
    chunk_set: ChunkSet,
    queries: Sequence[Query],
    dense: Sequence[Ranking],
    lexical: Sequence[Ranking],
    fusion: Fusion | None,
    which: str = "fused",
) -> dict[str, float]:
    """The overall metrics of one fusion (or of dense / BM25 alone) on these queries."""
    if which == "dense":
        rankings = dense
    elif which == "bm25":
        rankings = lexical
    else:
        assert fusion is not None
        rankings = [fusion(d, b) for d, b in zip(dense, lexical, strict=True)]
    result = score_system(chunk_set, which, queries, [positions(r) for r in rankings], 6)
    return result.overall


def main() -> int:
    """Tune on one half, report on the other, for each embedder."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", default="embedded,minilm")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    chunk_set = workspace_chunks(corpus_workspace())
    queries = list(select_queries(load_queries(CORPUS / "queries.csv"), [chunk_set]).queries)
    halves = {"even": queries[0::2], "odd": queries[1::2]}
    texts = [c.text for c in chunk_set.chunks]
    index = MemoryTermIndex([bm25_terms(t) for t in texts])
    tried = fusions()
    lines: list[str] = []
    for name in args.embedders.split(","):
        embedder = CachedEmbedder(CANDIDATES[name][1]())
        units = [unit(v) for v in embedder.embed(texts)]
        rankings: dict[str, tuple[list[Ranking], list[Ranking]]] = {}
        for half, items in halves.items():
            vectors = embed_queries(embedder, [q.text for q in items])
            rankings[half] = (
                [dense_ranking(units, v) for v in vectors],
                [lexical_ranking(index, q.text) for q in items],
            )
        for tune, report in (("even", "odd"), ("odd", "even")):
            d_tune, b_tune = rankings[tune]
            d_rep, b_rep = rankings[report]
            on_tune = {
                label: score(chunk_set, halves[tune], d_tune, b_tune, f)
                for label, f in tried.items()
            }
            rows = {
                "BM25 alone": score(chunk_set, halves[report], d_rep, b_rep, None, "bm25"),
                "dense alone": score(chunk_set, halves[report], d_rep, b_rep, None, "dense"),
                "RRF k=60 w=0.5": score(
                    chunk_set, halves[report], d_rep, b_rep, tried["RRF k=60 w=0.5"]
                ),
            }
            chosen: dict[str, str] = {}
            for objective, value in OBJECTIVES.items():
                for family in ("RRF", "blend"):
                    best = max(
                        (lb for lb in on_tune if lb.startswith(family)),
                        key=lambda lb, value=value: value(on_tune[lb]),
                    )
                    chosen[f"best {family} by {objective}: {best}"] = best
            for label, best in chosen.items():
                rows[label] = score(chunk_set, halves[report], d_rep, b_rep, tried[best])
            for label, overall in rows.items():
                tuned = on_tune.get(chosen.get(label, label))
                tuned_text = f"{tuned['R@6']:.3f}" if tuned is not None else "-"
                cells = " | ".join(f"{overall[m]:.3f}" for m in METRICS)
                lines.append(f"| {name} | {tune} -> {report} | {label} | {tuned_text} | {cells} |")
            print("\n".join(lines[-len(rows) :]), flush=True)
    body = "\n".join(
        [
            "## Fusion",
            "",
            f"Machine: {machine()}. drac chunks of the 75 Markdown documents; the {len(queries)} "
            "queries split by position (even / odd rows); each fusion family's best on one half "
            "(its R@6 there in the tuning column) is reported on the other half, both ways "
            "round; best by R@6 alone and by the mean of R@6, R@3 and MRR (the top of the list "
            "matters to a reader). RRF: "
            "w / (k + dense rank) + (1 - w) / (k + BM25 rank), k in "
            f"{', '.join(map(str, K_VALUES))}, w in {', '.join(map(str, WEIGHTS))}; blend: w x "
            "min-max-normalised cosine + (1 - w) x min-max-normalised BM25. The judge is "
            "lexical and flatters BM25.",
            "",
            "| embedder | tuned -> reported | fusion | R@6 on tuning half | R@6 | R@3 | MRR |",
            "|---|---|---|---:|---:|---:|---:|",
            *lines,
            "",
            "Chosen (`drac.retrieval.rank.hybrid`, for `drac search` and `drac eval`): the "
            "score-normalised blend, with the dense weight chosen by the mean objective: 0.8 "
            "for the embedded model (`EmbeddedE5Embedder.hybrid_dense_weight`), 0.6 for any "
            "other embedder (the MiniLM choice, `HYBRID_DENSE_WEIGHT`). The same weight won on "
            "both halves for each model, and on the held-out half it scores at least RRF k=60's "
            "R@6, R@3 and MRR; RRF tuned for R@6 alone (small k) gains R@6 but loses R@3 and "
            "MRR, the top of the list. Both hybrids beat BM25 alone and dense alone on every "
            "held-out half here; on another corpus RRF trailed BM25, so rerun this on "
            "yours. The cloud runtime's hybrid (OpenSearch, Titan) still fuses with RRF k=60.",
            "",
            "Rerun: `DRAC_SHARED=/work/shared python bench/fusion.py --write` (after "
            "`bench/embedders.py`, which caches the vectors).",
        ]
    )
    print(body)
    if args.write:
        write_section("fusion", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
