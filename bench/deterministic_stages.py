"""Deterministic stages benchmark: drac parse/section/rules-plan/assemble vs Chonkie's
RecursiveChunker on the same corpus Markdown, and drac's time per MB on growing documents.

Usage:
    python bench/deterministic_stages.py [--companies velvera,cloudway] [--repeat 5]
                                         [--scale-mb 1,5,10,25,50] [--write]

Needs `pip install -r bench/requirements.txt` (chonkie; the MiniLM tokenizer is read from
shared/models with the `tokenizers` package). Sizes are reported in characters and in MiniLM
word pieces (special tokens included); "oversized" means over the 256 word pieces MiniLM
reads (the rest is silently truncated), and over 2,000 characters. Times are the best of
`--repeat` runs, as wall time and as CPU time of this process (steadier on a shared machine).
The scaling runs parse, section, plan and assemble one document made of the corpus Markdown
repeated up to each size.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
STAGES = ("parse", "section", "plan", "assemble")


@dataclass
class Timing:
    """Best wall and CPU seconds over repeated runs."""

    wall: float = float("inf")
    cpu: float = float("inf")


def drac_chunks(texts: Sequence[tuple[str, str]], stages: dict[str, float]) -> list[str]:
    """drac's deterministic stages with the default strategy; CPU seconds per stage added."""
    strategy = resolve_strategy("default")
    out: list[str] = []
    for name, text in texts:
        record = DocumentRecord(document_id=document_id_for(text.encode()), source=name,
                                sha256="")
        t0 = time.process_time()
        elements = parse_markdown(text)
        t1 = time.process_time()
        sections = make_sections(elements, strategy.section_budget)
        t2 = time.process_time()
        plan = plan_document(record.document_id, elements, sections, strategy, 1)
        t3 = time.process_time()
        chunks = assemble_chunks(record, elements, plan)
        t4 = time.process_time()
        for stage, spent in zip(STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            stages[stage] = stages.get(stage, 0.0) + spent
        out.extend(chunk.text for chunk in chunks)
    return out


def chonkie_chunks(
    texts: Sequence[tuple[str, str]], chunk_size: int, tokenizer: object
) -> list[str]:
    """Chonkie RecursiveChunker (default rules) over each document."""
    from chonkie import RecursiveChunker

    chunker = RecursiveChunker(tokenizer=tokenizer, chunk_size=chunk_size)
    return [chunk.text for _, text in texts for chunk in chunker.chunk(text)]


def timed(run: Callable[[], list[str]], repeat: int) -> tuple[list[str], Timing]:
    """Best-of-`repeat` wall and CPU time of a run, and its chunks."""
    best, chunks = Timing(), []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        chunks = run()
        best.wall = min(best.wall, time.perf_counter() - wall)
        best.cpu = min(best.cpu, time.process_time() - cpu)
    return chunks, best


def best_stages(texts: Sequence[tuple[str, str]], repeat: int) -> dict[str, float]:
    """CPU seconds per stage in the run whose stages added up to the least."""
    best: dict[str, float] = {}
    for _ in range(repeat):
        stages: dict[str, float] = {}
        drac_chunks(texts, stages)
        if not best or sum(stages.values()) < sum(best.values()):
            best = stages
    return best


def sizes_row(name: str, chunks: list[str], timing: Timing, count_tokens) -> str:
    """One Markdown table row of chunk statistics."""
    chars = [len(c) for c in chunks]
    tokens = [count_tokens(c) for c in chunks]
    over_tok = sum(t > MINILM_LIMIT for t in tokens) / len(tokens)
    over_chr = sum(c > CHAR_LIMIT for c in chars) / len(chars)
    return (f"| {name} | {timing.wall * 1000:.0f} ms | {timing.cpu * 1000:.0f} ms "
            f"| {len(chunks)} | "
            f"{statistics.median(chars):.0f} | {max(chars)} | "
            f"{statistics.median(tokens):.0f} | {max(tokens)} | "
            f"{over_tok:.1%} | {over_chr:.1%} | {min(chars)} |")


def scaling_rows(texts: Sequence[str], sizes_mb: Sequence[float]) -> list[str]:
    """Time per MB of one document of each size (the corpus Markdown repeated)."""
    strategy = resolve_strategy("default")
    unit = "\n\n".join(texts)
    rows = ["| document | elements | chunks | wall | CPU | CPU per MB | peak RSS |",
            "|---:|---:|---:|---:|---:|---:|---:|"]
    for size in sizes_mb:
        copies = max(1, round(size * 1_000_000 / len(unit)))
        text = "\n\n".join([unit] * copies)
        wall, cpu = time.perf_counter(), time.process_time()
        elements = parse_markdown(text)
        sections = make_sections(elements, strategy.section_budget)
        plan = plan_document("d1", elements, sections, strategy, 1)
        record = DocumentRecord(document_id="d1", source="big.md", sha256="")
        chunks = assemble_chunks(record, elements, plan)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
        megabytes = len(text.encode()) / 1_000_000
        rows.append(f"| {megabytes:.1f} MB | {len(elements):,} | {len(chunks):,} | "
                    f"{wall:.2f} s | {cpu:.2f} s | {cpu / megabytes * 1000:.0f} ms | "
                    f"{peak:,.0f} MiB |")
        del elements, sections, plan, chunks, text
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--companies", default="velvera,cloudway")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scale-mb", default="1,5,10,25,50",
                        help="document sizes of the scaling runs ('' to skip)")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
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
    drac, drac_time = timed(lambda: drac_chunks(texts, {}), args.repeat)
    runs = [("drac (default strategy, rules planner)", drac, drac_time)]
    for size in (1000, 2000):
        chunks, spent = timed(lambda s=size: chonkie_chunks(texts, s, "character"), args.repeat)
        runs.append((f"Chonkie RecursiveChunker, {size} characters", chunks, spent))
    chunks, spent = timed(lambda: chonkie_chunks(texts, MINILM_LIMIT, tokenizer), args.repeat)
    runs.append((f"Chonkie RecursiveChunker, {MINILM_LIMIT} MiniLM tokens", chunks, spent))
    header = (f"| chunker | wall (best of {args.repeat}) | CPU (best of {args.repeat}) | chunks "
              "| median chars | max chars | median tokens | max tokens | > 256 tokens "
              "| > 2,000 chars | min chars |")
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [sizes_row(name, chunks, spent, count) for name, chunks, spent in runs]
    stages = best_stages(texts, args.repeat)
    per_stage = ", ".join(f"{stage} {stages[stage] * 1000:.1f} ms" for stage in STAGES)
    table = "\n".join(lines) + f"\n\ndrac CPU time per stage (best run): {per_stage}.\n"
    sizes = [float(size) for size in args.scale_mb.split(",") if size.strip()]
    if sizes:
        scaling = "\n".join(scaling_rows([text for _, text in texts], sizes))
        table += ("\nOne document of the corpus Markdown repeated to each size, parsed, "
                  f"sectioned, planned and assembled once:\n\n{scaling}\n")
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(table)
    if args.write:
        shown = argv if argv is not None else sys.argv[1:]
        write_section("deterministic-stages", (
            "## Deterministic stages vs Chonkie RecursiveChunker\n\n"
            f"Command: `python bench/deterministic_stages.py {' '.join(shown)}`  \n"
            f"Machine: {machine()}; load average {load} at the end of the run. "
            f"Input: {len(texts)} corpus Markdown documents "
            f"({sum(len(t) for _, t in texts):,} characters).\n\n{table}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
