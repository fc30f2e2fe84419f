"""Search latency: `drac search` over the shared corpus' 75 documents, per mode.

Usage:
    python bench/search_latency.py [--format pdf|md] [--queries 200] [--embedder local:PATH|none]
        [--write]

Both companies' documents of one format are ingested offline with `drac ingest` into
bench/out/search/<format>/ (reused when unchanged). Then, in one process with the embedder
loaded (what a long-running service or a notebook sees):
- the first embedding: every chunk vector computed and cached in the workspace (cold cache);
- per query, for bm25, dense and hybrid: the time of `drac.local.search.search_workspace`
  (the code `drac search` runs), each query embedded anew (its cached vector removed first);
- the embedder's own time per query, and a re-plan's refresh (only changed chunks embedded).
Finally the whole `drac search` command, process start to exit, which adds Python start-up and,
with a local model, importing torch and loading the model.
--write puts the table into docs/benchmarks.md (section "search-latency").
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from _common import COMPANIES, CORPUS, MINILM, OUT, machine, write_section

from drac.embedders.cache import QUERY_SUFFIX, embed_queries, model_identity, text_key
from drac.embedders.factory import embedder_from_spec
from drac.evaluation.queries import load_queries
from drac.local.pipeline import live_documents, replan_document
from drac.local.search import search_workspace
from drac.local.workspace import Workspace
from drac.ports import Embedder
from drac.retrieval.rank import Mode
from drac.strategies import resolve_strategy

DRAC = Path(sys.executable).with_name("drac")


def ingest(fmt: str) -> Path:
    """The workspace of both companies' documents in one format (ingested when needed)."""
    workspace = OUT / "search" / fmt
    folders = [str(CORPUS / company / fmt) for company in COMPANIES.values()]
    subprocess.run(
        [str(DRAC), "ingest", *folders, "-w", str(workspace), "--jobs", "2", "--no-embed"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return workspace


def _forget(ws: Workspace, model: str, texts: Sequence[str]) -> None:
    """Remove the texts' cached vectors (passage and query side) of the model identity."""
    with ws.db.transaction() as conn:
        conn.executemany(
            "DELETE FROM embedding_cache WHERE model IN (?, ?) AND text_hash = ?",
            [(model, model + QUERY_SUFFIX, text_key(text)) for text in texts],
        )


def _torch_threads(threads: int | None) -> int | None:
    """Set torch's intra-op threads (when given and torch is loaded); return the setting."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    if threads:
        torch.set_num_threads(threads)
    return int(torch.get_num_threads())


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def _ms(values: Sequence[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered) * 1000:.1f} | {p95 * 1000:.1f} | {ordered[-1] * 1000:.1f}"


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _cli(args: Sequence[str], before: Callable[[], None] = lambda: None, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        before()
        started = time.perf_counter()
        subprocess.run([str(DRAC), "search", *args], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", default="pdf", choices=["pdf", "md", "docx", "pptx", "html"])
    parser.add_argument("--queries", type=int, default=200, help="queries timed per mode")
    parser.add_argument("--embedder", default=f"local:{MINILM}")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch intra-op threads for the searches"
    )
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    load_before = _load()
    path = ingest(args.format)
    queries = [q.text for q in load_queries(CORPUS / "queries.csv")][: args.queries]
    embedder: Embedder | None = embedder_from_spec(args.embedder)
    ws = Workspace(path, create=False)
    chunks = ws.active_chunks()
    documents = len(live_documents(ws))
    rows: list[str] = []
    notes: list[str] = []
    modes = [Mode.BM25] if embedder is None else [Mode.BM25, Mode.DENSE, Mode.HYBRID]
    if embedder is not None:
        embedder.embed(["warm-up"])  # load the model outside the timings
        _forget(ws, model_identity(embedder), [c.text for c in chunks])
        first = _timed(
            lambda: search_workspace(ws, queries[0], mode=Mode.HYBRID, embedder=embedder)
        )
        notes.append(
            f"First embedding (cold cache, {len(chunks)} chunks embedded and stored, then the"
            f" query): {first:.1f} s."
        )
        default_threads = _torch_threads(None)
        # thread counts only where torch runs the model (the embedded model has no torch)
        variants = [None] if default_threads is None else [default_threads, 1]
        for threads in dict.fromkeys(variants):
            _torch_threads(threads)
            per_query = [_timed(lambda q=q: embed_queries(embedder, [q])) for q in queries]
            label = f", torch {threads} thread(s)" if threads else ""
            rows.append(f"| embedder alone (one query){label} | {_ms(per_query)} |")
        chosen = _torch_threads(args.threads or default_threads)
        if chosen:
            notes.append(f"Searches ran with torch on {chosen} thread(s).")
    for mode in modes:
        if embedder is not None:
            _forget(ws, model_identity(embedder), queries)
        times = [
            _timed(lambda q=q, m=mode: search_workspace(ws, q, mode=m, k=6, embedder=embedder))
            for q in queries
        ]
        rows.append(f"| `search_workspace`, {mode.value} | {_ms(times)} |")
    if embedder is not None:  # the same queries again: their vectors are cached now
        times = [
            _timed(lambda q=q: search_workspace(ws, q, mode=Mode.HYBRID, k=6, embedder=embedder))
            for q in queries
        ]
        rows.append(f"| `search_workspace`, hybrid, query vector cached | {_ms(times)} |")
    if embedder is not None:
        record = next(r for r in live_documents(ws) if r.pages > 1)
        before = {c.text for c in ws.active_chunks(record.document_id)}
        replan_document(record, ws, resolve_strategy("fine"))
        changed = [c.text for c in ws.active_chunks(record.document_id) if c.text not in before]
        _forget(ws, model_identity(embedder), changed)  # as if never embedded, on every run
        told: list[int] = []
        refresh = _timed(
            lambda: search_workspace(
                ws, queries[0], mode=Mode.HYBRID, embedder=embedder, announce=told.append
            )
        )
        notes.append(
            f"After re-planning one document ({record.source}, `fine`): the next hybrid search"
            f" embedded {told[0] if told else 0} changed chunk(s) of {len(ws.active_chunks())}"
            f" and took {refresh * 1000:.0f} ms."
        )
        replan_document(record, ws, resolve_strategy("default"))  # the next run starts alike
    query = queries[1]
    bm25_cli = _cli([query, "-w", str(path), "--embedder", "none"])
    cli = [f"| `drac search` command, bm25 | {bm25_cli * 1000:.0f} | | |"]
    if embedder is not None:
        name = model_identity(embedder)
        seconds = _cli(
            [query, "-w", str(path), "--embedder", args.embedder, "--mode", "hybrid"],
            before=lambda: _forget(ws, name, [query]),
        )
        cli.append(
            f"| `drac search` command, hybrid (loads the model) | {seconds * 1000:.0f} | | |"
        )

    command = "python bench/search_latency.py " + " ".join(sys.argv[1:])
    body = "\n".join(
        [
            "## Search latency (`drac search` over the corpus)",
            "",
            f"Command: `{command}`  ",
            f"Machine: {machine()}.",
            "",
            f"{documents} documents ({args.format}, ingested offline), {len(chunks)} active chunks;"
            f" {len(queries)} corpus queries per mode, each embedded anew; embedder"
            f" {embedder.name if embedder else 'none'}; k = 6.",
            "",
            "| what | median ms | p95 ms | max ms |",
            "|---|---:|---:|---:|",
            *rows,
            *cli,
            "",
            *[f"- {note}" for note in notes],
            f"- Load average (1 min) {load_before} before, {_load()} after: other work shared"
            " the 2 cores.",
            "- In process, a query costs the embedder's time plus the ranking (loading the active"
            " chunks and their cached vectors, BM25, cosine, fusion: the row with the query vector"
            " cached); the command adds start-up (and, for a local model, importing torch and"
            " loading it).",
        ]
    )
    ws.close()
    print(body)
    if args.write:
        write_section("search-latency", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
