"""Format benchmark: the same documents ingested from PDF, DOCX, PPTX, HTML and Markdown.

Usage:
    python bench/formats.py [--company velvera] [--formats md,pdf,docx,pptx,html] [--write]

Each format folder of the company is ingested offline (the product's own `drac ingest`, default
strategy, offline converter; LibreOffice for office files and HTML) into its own workspace under
bench/out/formats/, exported, and evaluated on the company's queries with the reference dense
embedder, BM25 and the hybrid, next to fixed 1,000/200 windows over the PDF text layer.
--write puts the table into docs/benchmarks.md (section "formats").
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from _common import COMPANIES, CORPUS, MINILM, OUT, CachedEmbedder, machine, write_section
from retrieval import corpus_fixed
from rich.console import Console

from drac.embedders.local import SentenceTransformerEmbedder
from drac.evaluation.chunksets import load_chunk_set
from drac.evaluation.queries import load_queries
from drac.evaluation.report import markdown_report, print_report
from drac.evaluation.runner import evaluate

DRAC = Path(sys.executable).with_name("drac")


def ingest_and_export(folder: Path, workspace: Path) -> Path:
    """Ingest one format folder into a workspace (reusing it when unchanged); export the chunks."""
    subprocess.run([str(DRAC), "ingest", str(folder), "-w", str(workspace)], check=True)
    export = workspace.with_suffix(".jsonl")
    with export.open("w", encoding="utf-8") as handle:
        subprocess.run([str(DRAC), "export", "-w", str(workspace)], check=True, stdout=handle)
    return export


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--company", default="velvera", choices=sorted(COMPANIES))
    parser.add_argument("--formats", default="md,pdf,docx,pptx,html")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    sets = []
    for fmt in [f.strip() for f in args.formats.split(",") if f.strip()]:
        folder = CORPUS / COMPANIES[args.company] / fmt
        export = ingest_and_export(folder, OUT / "formats" / f"{args.company}-{fmt}")
        sets.append(load_chunk_set(export, name=f"drac from {fmt}"))
    sets.append(corpus_fixed([args.company]))
    embedder = CachedEmbedder(SentenceTransformerEmbedder(MINILM))
    report = evaluate(sets, load_queries(CORPUS / "queries.csv"), embedder, k=6)
    elapsed = time.perf_counter() - started
    print_report(report, Console(width=200))
    if args.write:
        body = (
            "## Formats: the same documents from PDF, DOCX, PPTX, HTML and Markdown\n\n"
            f"Command: `python bench/formats.py --company {args.company} --formats {args.formats}"
            f" --write`  \nMachine: {machine()}; {elapsed:.0f} s (offline converter,"
            " default strategy).\n\n" + markdown_report(report)
        )
        write_section("formats", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
