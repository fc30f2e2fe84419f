"""CPU seconds of the Markdown block split and of parse_markdown on the corpus' Markdown.

    DRAC_SHARED=/work/shared .venv/bin/python bench/markdown_parser.py

Three inputs: the corpus' Markdown documents joined (blank lines between), 100,000 headings
on three levels each over a short paragraph, and the joined corpus repeated to 50 MB (the
block split only). Best of three runs (one for 50 MB).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from drac.parsing import parse_markdown
from drac.parsing.blocks import split_blocks


def _cpu(function: Callable[[str], object], text: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        function(text)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    """Print one table row per input."""
    shared = Path(os.environ.get("DRAC_SHARED", "../shared"))
    files = sorted((shared / "corpus").glob("*/*/md/*.md"))
    corpus = "\n\n".join(path.read_text("utf-8") for path in files)
    headings = "".join(f"{'#' * (1 + i % 3)} Heading {i}\n\nText {i}.\n\n" for i in range(100_000))
    large = (corpus * (50_000_000 // max(len(corpus), 1) + 1))[:50_000_000]
    print("| input | characters | blocks | split_blocks CPU s | parse_markdown CPU s |")
    print("|---|---|---|---|---|")
    for name, text, runs, whole in (
        (f"corpus Markdown ({len(files)} documents)", corpus, 3, True),
        ("100,000 headings", headings, 3, True),
        ("corpus repeated to 50 MB", large, 1, False),
    ):
        split = _cpu(split_blocks, text, runs)
        parse = f"{_cpu(parse_markdown, text, runs):.2f}" if whole else "-"
        print(f"| {name} | {len(text):,} | {len(split_blocks(text)):,} | {split:.2f} | {parse} |")


if __name__ == "__main__":
    main()
