"""Conversion fidelity of drac's offline converter beside peer converters, on the corpus.

Usage:
    python bench/peer_converters.py [--formats pdf,docx,pptx,html] [--pdf-cache DIR] [--write]

Each rendition of the corpus is converted by drac's offline path (as `drac ingest` does; with
--pdf-cache, LibreOffice's PDFs of office and HTML files are kept in DIR between runs) and by
each peer that reads its format: pymupdf4llm (PDF) and MarkItDown (PDF, DOCX, PPTX, HTML),
both bench-only dependencies (bench/requirements.txt). Every output is scored against the
document's source Markdown by `drac.evaluation.fidelity`, as bench/conversion_fidelity.py
scores drac alone. Docling is not measured: its standard pipeline loads layout models from a
model hub at run time, which this machine cannot reach. --write puts the table into
docs/benchmarks.md (section "peer-converters").
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from _common import machine, write_section
from conversion_fidelity import _corpus, cached_product_conversion, product_conversion

from drac.evaluation.fidelity_corpus import (
    Rendition,
    ScoredRendition,
    fidelity_table,
    score_folder,
    totals,
)

Convert = Callable[[Path], Rendition]


def _pymupdf4llm(path: Path) -> Rendition:
    import pymupdf4llm  # type: ignore[import-not-found]

    return Rendition(pymupdf4llm.to_markdown(str(path), show_progress=False))


def _markitdown() -> Convert:
    from markitdown import MarkItDown  # type: ignore[import-not-found]

    converter = MarkItDown()
    return lambda path: Rendition(converter.convert(str(path)).text_content)


def converters(pdf_cache: Path | None) -> dict[str, tuple[frozenset[str], Convert]]:
    """Each converter's name, the formats it reads, and its conversion."""
    drac = cached_product_conversion(pdf_cache) if pdf_cache else product_conversion
    return {
        "drac (offline)": (frozenset({"pdf", "docx", "pptx", "html"}), drac),
        "pymupdf4llm": (frozenset({"pdf"}), _pymupdf4llm),
        "MarkItDown": (frozenset({"pdf", "docx", "pptx", "html"}), _markitdown()),
    }


def _versions() -> str:
    from importlib.metadata import version

    return ", ".join(f"{name} {version(name)}" for name in ("pymupdf4llm", "pymupdf", "markitdown"))


def main() -> int:
    """Convert and score every rendition with every converter; print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--formats", default="pdf,docx,pptx,html")
    parser.add_argument("--pdf-cache", type=Path, default=None)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    documents = _corpus()
    scored: list[ScoredRendition] = []
    labels: dict[int, str] = {}
    seconds: dict[str, float] = {}
    for fmt in formats:
        for name, (reads, convert) in converters(args.pdf_cache).items():
            if fmt not in reads:
                continue
            label = f"{fmt} / {name}"
            started = time.perf_counter()
            rows = score_folder(documents, convert, frozenset({fmt}))
            seconds[label] = time.perf_counter() - started
            scored.extend(rows)
            labels.update((id(row), label) for row in rows)
            print(f"{label}: {len(rows)} documents, {seconds[label]:.0f} s", flush=True)
    table = fidelity_table(totals(scored, key=lambda item: labels[id(item)]), "format / converter")
    timing = ", ".join(f"{key} {value:.0f} s" for key, value in seconds.items())
    cache = f" --pdf-cache {args.pdf_cache}" if args.pdf_cache else ""
    body = "\n".join(
        [
            "## Peer converters: conversion fidelity beside pymupdf4llm and MarkItDown",
            "",
            f"Command: `python bench/peer_converters.py --formats {args.formats}{cache} --write`  ",
            f"Machine: {machine()}; {_versions()}.",
            "",
            table,
            "",
            f"Wall seconds, conversion and scoring (a shared machine): {timing}.",
        ]
    )
    print(body)
    if args.write:
        write_section("peer-converters", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
