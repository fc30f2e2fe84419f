"""Retrieval benchmark: drac chunks vs fixed 1,000/200 windows (PDF text layer) vs agentic.

Usage:
    python bench/retrieval.py --chunks X.jsonl [--chunks NAME=Y.jsonl ...]
        [--drac-md fine,default,coarse,700]
        [--companies velvera,cloudway] [--embedder local:PATH|none]
        [--no-fixed] [--no-agentic] [-k 6] [--write] [--json OUT.json]

`X.jsonl` is what `drac export` writes (at least "text" and "source" per line).
--drac-md builds drac chunks in process from the corpus Markdown with the rules planner, one
chunk set per strategy preset name or target_chars value (on top of the default preset).
Without either, only the baselines run. The reference embedder (all-MiniLM-L6-v2 from shared/models)
is the default; BM25 and the hybrid (drac search's blend) always run too. --write puts the
tables into docs/benchmarks.md (section "retrieval"). Embeddings are cached under bench/out/.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from _common import COMPANIES, CORPUS, MINILM, CachedEmbedder, machine, write_section
from rich.console import Console

from drac.evaluation.baseline import fixed_chunk_set, pdf_text
from drac.evaluation.chunksets import (
    ChunkSet,
    EvalChunk,
    agentic_reference_to_chunks,
    chunks_from_jsonl_lines,
    load_chunk_set,
)
from drac.evaluation.queries import load_queries
from drac.evaluation.report import markdown_report, print_report
from drac.evaluation.runner import evaluate


def _companies(arg: str) -> list[str]:
    names = [c.strip().lower() for c in arg.split(",") if c.strip()]
    unknown = [c for c in names if c not in COMPANIES]
    if unknown:
        raise SystemExit(f"unknown companies {unknown}; choose from {sorted(COMPANIES)}")
    return names


def corpus_fixed(companies: list[str]) -> ChunkSet:
    """Fixed 1,000/200 windows over the PDF text layer of the companies' documents."""
    docs = []
    for company in companies:
        for pdf in sorted((CORPUS / COMPANIES[company] / "pdf").glob("*.pdf")):
            docs.append((pdf.name, pdf_text(pdf)))
    return fixed_chunk_set(docs, name="fixed 1000/200 (PDF text)")


def corpus_agentic(companies: list[str]) -> ChunkSet:
    """The corpus' agentic reference chunks of the companies."""
    chunks = []
    for company in companies:
        path = CORPUS / f"agentic-reference-{company}.jsonl"
        with path.open(encoding="utf-8") as handle:
            lines = [json.dumps(o) for o in agentic_reference_to_chunks(handle)]
        chunks.extend(chunks_from_jsonl_lines(lines, origin=str(path)))
    return ChunkSet(name="agentic reference", chunks=tuple(chunks))


def drac_strategy(spec: str):
    """A preset name (default, fine, coarse) or a target size in characters on top of the
    default preset (min_chars and hard limit moved only as far as validation needs)."""
    from drac.strategies import resolve_strategy

    if not spec.isdigit():
        return resolve_strategy(spec)
    base = resolve_strategy("default")
    target = int(spec)
    changes = {
        "name": f"t={target}",
        "target_chars": target,
        "min_chars": min(base.min_chars, target // 2),
        "hard_limit_chars": max(base.hard_limit_chars, target),
    }
    return type(base).model_validate({**base.model_dump(), **changes})


def corpus_drac(companies: list[str], spec: str) -> ChunkSet:
    """drac chunks (rules planner) of the companies' corpus Markdown under one strategy."""
    from _drac import markdown_chunks

    strategy = drac_strategy(spec)
    paths = [p for c in companies for p in sorted((CORPUS / COMPANIES[c] / "md").glob("*.md"))]
    chunks = [
        EvalChunk(chunk_id=c.chunk_id, source=c.source, text=c.text)
        for c in markdown_chunks(paths, strategy)
    ]
    return ChunkSet(name=f"drac {strategy.name}", chunks=tuple(chunks))


def _embedder(spec: str):
    if spec == "none":
        return None
    from drac.embedders.local import SentenceTransformerEmbedder

    path = Path(spec.removeprefix("local:"))
    return CachedEmbedder(SentenceTransformerEmbedder(path))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", action="append", default=[], help="[NAME=]FILE.jsonl")
    parser.add_argument("--drac-md", default="", help="presets or target_chars, comma-separated")
    parser.add_argument("--companies", default="velvera,cloudway")
    parser.add_argument("--queries", type=Path, default=CORPUS / "queries.csv")
    parser.add_argument("--embedder", default=f"local:{MINILM}", help="local:PATH or none")
    parser.add_argument("--no-fixed", action="store_true")
    parser.add_argument("--no-agentic", action="store_true")
    parser.add_argument("-k", type=int, default=6)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--json", type=Path, help="also write the report as JSON here")
    args = parser.parse_args(argv)

    companies = _companies(args.companies)
    sets: list[ChunkSet] = []
    for spec in args.chunks:
        name, _, file = spec.rpartition("=")
        sets.append(load_chunk_set(Path(file), name=name or None))
    for spec in [t.strip() for t in args.drac_md.split(",") if t.strip()]:
        sets.append(corpus_drac(companies, spec))
    if not args.no_fixed:
        sets.append(corpus_fixed(companies))
    if not args.no_agentic:
        sets.append(corpus_agentic(companies))
    if not sets:
        raise SystemExit("nothing to evaluate")

    started = time.perf_counter()
    report = evaluate(sets, load_queries(args.queries), _embedder(args.embedder), k=args.k)
    elapsed = time.perf_counter() - started
    print_report(report, Console(width=200))
    print(f"({elapsed:.1f} s)", file=sys.stderr)
    if args.json:
        args.json.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    if args.write:
        shown = argv if argv is not None else sys.argv[1:]
        command = "python bench/retrieval.py " + " ".join(shown)
        body = (
            "## Retrieval (drac vs fixed vs agentic)\n\n"
            f"Command: `{command}`  \nMachine: {machine()}; {elapsed:.0f} s.\n\n"
            + markdown_report(report)
        )
        write_section("retrieval", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
