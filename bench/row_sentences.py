"""Table rows as pipe-table rows or as sentences: retrieval on the corpus both ways (issue 17).

Usage:
    python bench/row_sentences.py [--formats pdf,docx,html] [--companies velvera,cloudway]
        [--embedder local:PATH|none] [-k 6] [--write] [--json OUT.json]

For each format, the corpus documents of that format are ingested offline (`drac ingest` as a
user runs it, no vision model) into two workspaces, one with `table_rows="pipe"` and one with
`"sentences"`; the active chunks of both are scored on the corpus queries as `drac eval` does
(dense with the reference MiniLM embedder, BM25, and their hybrid: R@6, MRR, NDCG@6). Nothing
is tuned: the two settings are compared as they are, on all queries and, to show the choice
holds on either, on each half (even and odd query rows). --write puts the tables into
docs/benchmarks.md (section "row-sentences"). Needs the bench requirements (sentence-transformers)
unless --embedder none.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _common import COMPANIES, CORPUS, MINILM, CachedEmbedder, machine, write_section

from drac.evaluation.chunksets import ChunkSet, EvalChunk
from drac.evaluation.queries import Query, load_queries
from drac.evaluation.runner import EvalReport, evaluate
from drac.local.pipeline import IngestSettings, ingest_file
from drac.local.workspace import Workspace
from drac.models import ElementKind, Strategy, TableRows

MODES: tuple[TableRows, ...] = ("pipe", "sentences")
SUFFIXES = {"pdf": ".pdf", "docx": ".docx", "pptx": ".pptx", "html": ".html"}


def _files(fmt: str, companies: list[str]) -> list[Path]:
    return sorted(
        path
        for company in companies
        for path in (CORPUS / COMPANIES[company] / fmt).glob(f"*{SUFFIXES[fmt]}")
    )


def ingest_all(files: list[Path], mode: TableRows, root: Path) -> tuple[ChunkSet, dict[str, float]]:
    """The files ingested offline into a new workspace with this table-rows option: its active
    chunks, and counts (documents, chunks, table-row elements, seconds)."""
    workspace = Workspace(root / f"ws-{mode}", create=True)
    settings = IngestSettings(strategy=Strategy(table_rows=mode))
    started = time.perf_counter()
    try:
        failed = [p.name for p in files if ingest_file(p, workspace, settings).failed]
        seconds = time.perf_counter() - started
        chunks = workspace.active_chunks()
        records = [r for r in workspace.documents() if r.live]
        table_rows = sum(
            1
            for record in records
            for element in workspace.get_elements(record.document_id)
            if element.kind is ElementKind.TABLE_ROW
        )
    finally:
        workspace.close()
    if failed:
        print(f"{mode}: failed {failed}", file=sys.stderr)
    chunk_set = ChunkSet(
        name=f"table_rows={mode}",
        chunks=tuple(EvalChunk(chunk_id=c.chunk_id, source=c.source, text=c.text) for c in chunks),
    )
    counts = {
        "documents": len(records),
        "chunks": len(chunks),
        "table_row_elements": table_rows,
        "seconds": seconds,
    }
    return chunk_set, counts


def _embedder(spec: str):
    if spec == "none":
        return None
    from drac.embedders.local import SentenceTransformerEmbedder

    return CachedEmbedder(SentenceTransformerEmbedder(Path(spec.removeprefix("local:"))))


def _rows(report: EvalReport, label: str) -> list[str]:
    metrics = (f"R@{report.k}", "MRR", f"NDCG@{report.k}")
    return [
        f"| {label} | {result.chunk_set} | {result.retriever} | {result.chunks} | "
        + " | ".join(f"{result.overall[m]:.3f}" for m in metrics)
        + " |"
        for result in report.results
    ]


def _verdict(report: EvalReport) -> str:
    """Per retriever, sentences minus pipe in R@k, MRR and NDCG@k (all queries)."""
    metrics = (f"R@{report.k}", "MRR", f"NDCG@{report.k}")
    by = {(r.chunk_set, r.retriever): r.overall for r in report.results}
    parts = []
    for retriever in dict.fromkeys(r.retriever for r in report.results):
        pipe, sentences = (
            by[("table_rows=pipe", retriever)],
            by[("table_rows=sentences", retriever)],
        )
        deltas = ", ".join(f"{m} {sentences[m] - pipe[m]:+.3f}" for m in metrics)
        parts.append(f"{retriever} {deltas}")
    return "Sentences minus pipe, all queries: " + "; ".join(parts) + "."


def _sentence_wins(report: EvalReport) -> list[bool]:
    """Per retriever, whether sentences score a higher R@k than pipe (all queries)."""
    by = {(r.chunk_set, r.retriever): r.overall[f"R@{report.k}"] for r in report.results}
    retrievers = dict.fromkeys(r.retriever for r in report.results)
    return [by[("table_rows=sentences", r)] > by[("table_rows=pipe", r)] for r in retrievers]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--formats", default="pdf")
    parser.add_argument("--companies", default="velvera,cloudway")
    parser.add_argument("--queries", type=Path, default=CORPUS / "queries.csv")
    parser.add_argument("--embedder", default=f"local:{MINILM}", help="local:PATH or none")
    parser.add_argument("-k", type=int, default=6)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--json", type=Path, help="also write the reports as JSON here")
    args = parser.parse_args(argv)

    companies = [c.strip() for c in args.companies.split(",") if c.strip()]
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    queries = load_queries(args.queries)
    halves: dict[str, list[Query]] = {
        "all": list(queries),
        "even rows": list(queries[0::2]),
        "odd rows": list(queries[1::2]),
    }
    embedder = _embedder(args.embedder)
    lines: list[str] = []
    dump: dict[str, object] = {}
    started = time.perf_counter()
    wins: list[bool] = []
    for fmt in formats:
        root = Path(tempfile.mkdtemp(prefix=f"drac-rows-{fmt}-"))
        try:
            files = _files(fmt, companies)
            built = {mode: ingest_all(files, mode, root) for mode in MODES}
        finally:
            shutil.rmtree(root, ignore_errors=True)
        sets = [chunk_set for chunk_set, _ in built.values()]
        counts = {mode: facts for mode, (_, facts) in built.items()}
        lines.append(
            f"{fmt.upper()} ({len(files)} documents): "
            + "; ".join(
                f"{mode}: {c['chunks']:.0f} chunks, {c['table_row_elements']:.0f} pipe-table "
                f"row elements, ingest {c['seconds']:.1f} s"
                for mode, c in counts.items()
            )
            + "."
        )
        lines += [
            "",
            f"| queries | chunk set | retriever | chunks | R@{args.k} | MRR | NDCG@{args.k} |",
        ]
        lines.append("|---|---|---|---:|---:|---:|---:|")
        reports = {}
        for label, chosen in halves.items():
            report = evaluate(sets, chosen, embedder, k=args.k)
            reports[label] = report.model_dump(mode="json")
            lines += _rows(report, f"{label} ({report.queries_used})")
            if label == "all":
                verdict = _verdict(report)
                wins += _sentence_wins(report)
        lines += ["", verdict, ""]
        dump[fmt] = {"counts": counts, "reports": reports}
    elapsed = time.perf_counter() - started
    better = "sentences" if sum(wins) > len(wins) / 2 else "pipe"
    lines.append(
        f"Sentences beat pipe in R@{args.k} on {sum(wins)} of {len(wins)} format and retriever "
        f"pairs (all queries): the better default is **{better}**."
    )
    text = "\n".join(lines)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1), encoding="utf-8")
    if args.write:
        shown = argv if argv is not None else sys.argv[1:]
        command = "python bench/row_sentences.py " + " ".join(shown)
        body = (
            "## Table rows as sentences on converted documents\n\n"
            f"Command: `{command.strip()}`  \nMachine: {machine()}; {elapsed:.0f} s.\n\n"
            "Each corpus document of the format ingested offline twice, with "
            "`--table-rows pipe` and `--table-rows sentences`, and both chunk sets scored on "
            f"the corpus queries (top {args.k}, embedder {args.embedder.rsplit('/', 1)[-1]}; "
            "nothing tuned; each half of the queries shown to say whether the order holds on "
            "both). The scores are `drac eval`'s: `drac eval queries.csv -w WS --embedder "
            "local:PATH` on either workspace prints the same numbers.\n\n" + text
        )
        write_section("row-sentences", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
