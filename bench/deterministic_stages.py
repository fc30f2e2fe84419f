"""Deterministic stages benchmark: drac parse/section/rules-plan/assemble vs Chonkie's
RecursiveChunker on the same corpus Markdown.

Usage:
    python bench/deterministic_stages.py [--companies velvera,cloudway] [--repeat 3] [--write]

Needs `pip install -r bench/requirements.txt` (chonkie; the MiniLM tokenizer is read from
shared/models with the `tokenizers` package). Sizes are reported in characters and in MiniLM
word pieces (special tokens included); "oversized" means over the 256 word pieces MiniLM
reads (the rest is silently truncated), and over 2,000 characters.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from _common import COMPANIES, CORPUS, MINILM, machine, write_section

from drac.assemble import assemble_chunks
from drac.ids import document_id_for
from drac.models import DocumentRecord
from drac.parsing import parse_markdown
from drac.planning import plan_document
from drac.sectioning import make_sections
from drac.strategies import resolve_strategy

MINILM_LIMIT = 256
CHAR_LIMIT = 2000


def drac_chunks(texts: Sequence[tuple[str, str]], timings: dict[str, float]) -> list[str]:
    """drac's deterministic stages with the default strategy; stage times added to timings."""
    strategy = resolve_strategy("default")
    out: list[str] = []
    for name, text in texts:
        record = DocumentRecord(document_id=document_id_for(text.encode()), source=name,
                                sha256="")
        t0 = time.perf_counter()
        elements = parse_markdown(text)
        t1 = time.perf_counter()
        sections = make_sections(elements, strategy.section_budget)
        t2 = time.perf_counter()
        plan = plan_document(record.document_id, elements, sections, strategy, 1)
        t3 = time.perf_counter()
        chunks = assemble_chunks(record, elements, plan)
        t4 = time.perf_counter()
        for stage, spent in zip(("parse", "section", "plan", "assemble"),
                                (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            timings[stage] = timings.get(stage, 0.0) + spent
        out.extend(chunk.text for chunk in chunks)
    return out


def chonkie_chunks(
    texts: Sequence[tuple[str, str]], chunk_size: int, tokenizer: object
) -> list[str]:
    """Chonkie RecursiveChunker (default rules) over each document."""
    from chonkie import RecursiveChunker

    chunker = RecursiveChunker(tokenizer=tokenizer, chunk_size=chunk_size)
    return [chunk.text for _, text in texts for chunk in chunker.chunk(text)]


def timed(run: Callable[[], list[str]], repeat: int) -> tuple[list[str], float]:
    """Best-of-`repeat` wall time of a run, and its chunks."""
    best, chunks = float("inf"), []
    for _ in range(repeat):
        start = time.perf_counter()
        chunks = run()
        best = min(best, time.perf_counter() - start)
    return chunks, best


def sizes_row(name: str, chunks: list[str], seconds: float, count_tokens) -> str:
    """One Markdown table row of chunk statistics."""
    chars = [len(c) for c in chunks]
    tokens = [count_tokens(c) for c in chunks]
    over_tok = sum(t > MINILM_LIMIT for t in tokens) / len(tokens)
    over_chr = sum(c > CHAR_LIMIT for c in chars) / len(chars)
    return (f"| {name} | {seconds * 1000:.0f} ms | {len(chunks)} | "
            f"{statistics.median(chars):.0f} | {max(chars)} | "
            f"{statistics.median(tokens):.0f} | {max(tokens)} | "
            f"{over_tok:.1%} | {over_chr:.1%} | {min(chars)} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--companies", default="velvera,cloudway")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(MINILM / "tokenizer.json"))
    tokenizer.no_truncation()  # the shipped file truncates at 128: count every piece
    tokenizer.no_padding()

    def count(text: str) -> int:
        return len(tokenizer.encode(text).ids)

    paths: list[Path] = [p for c in args.companies.split(",")
                         for p in sorted((CORPUS / COMPANIES[c.strip()] / "md").glob("*.md"))]
    texts = [(p.name, p.read_text(encoding="utf-8")) for p in paths]
    stage_times: dict[str, float] = {}
    drac, drac_s = timed(lambda: drac_chunks(texts, stage_times), args.repeat)
    runs = [("drac (default strategy, rules planner)", drac, drac_s)]
    for size in (1000, 2000):
        chunks, secs = timed(lambda s=size: chonkie_chunks(texts, s, "character"), args.repeat)
        runs.append((f"Chonkie RecursiveChunker, {size} characters", chunks, secs))
    chunks, secs = timed(lambda: chonkie_chunks(texts, MINILM_LIMIT, tokenizer), args.repeat)
    runs.append((f"Chonkie RecursiveChunker, {MINILM_LIMIT} MiniLM tokens", chunks, secs))
    header = (f"| chunker | time (best of {args.repeat}) | chunks | median chars | max chars"
              " | median tokens | max tokens | > 256 tokens | > 2,000 chars | min chars |")
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [sizes_row(name, chunks, secs, count) for name, chunks, secs in runs]
    per_stage = ", ".join(f"{k} {v / args.repeat * 1000:.0f} ms" for k, v in stage_times.items())
    table = "\n".join(lines) + f"\n\ndrac stage times (mean per run): {per_stage}.\n"
    print(table)
    if args.write:
        shown = argv if argv is not None else sys.argv[1:]
        write_section("deterministic-stages", (
            "## Deterministic stages vs Chonkie RecursiveChunker\n\n"
            f"Command: `python bench/deterministic_stages.py {' '.join(shown)}`  \n"
            f"Machine: {machine()}. Input: {len(texts)} corpus Markdown documents "
            f"({sum(len(t) for _, t in texts):,} characters).\n\n{table}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
