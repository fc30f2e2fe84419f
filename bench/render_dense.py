"""Rendering speed on DENSE pages, as the cloud's Render function renders one slice.

Ranks every page of the corpus PDFs by its content objects (then text-layer characters),
copies the densest pages (repeated) into one PDF of `--pages` pages with pdfium, and renders
it with `drac.documents.pdf.render.render_pages` under its containment limits (`PDF_LIMITS`, the
worker the Render function uses), at the default RenderOptions. Reports seconds per page and
what a render slice takes in a Lambda, against one invocation for every page (before).

    .venv/bin/python bench/render_dense.py [--pages 200] [--densest 20] [--write]
"""

from __future__ import annotations

import argparse
import io
import os
import time
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from _common import CORPUS, machine, write_section

from drac.aws.stages.fanout import MAX_SLICE_PAGES, MAX_SLICES, SLICE_PAGES
from drac.documents.pdf.render import PDF_LIMITS, RenderOptions, render_pages

LAMBDA_CPU_FACTOR = 0.6
"""A 2 GB Lambda's share of a core against this machine's (the cloud throughput model's)."""
Page = tuple[int, int, Path, int]
"""(content objects, text characters, file, 0-based index) of one page."""


def _pages_of(path: Path) -> list[Page]:
    found = []
    document = pdfium.PdfDocument(str(path))
    try:
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            chars = textpage.count_chars()
            objects = pdfium_c.FPDFPage_CountObjects(page)
            textpage.close()
            page.close()
            found.append((objects, chars, path, index))
    finally:
        document.close()
    return found


def dense_pdf(paths: list[Path], pages: int, densest: int) -> tuple[bytes, list[Page], int]:
    """A PDF of `pages` pages cycling through the `densest` pages of the corpus, those
    pages, and how many pages the corpus has."""
    everything = sorted((p for path in paths for p in _pages_of(path)), reverse=True)
    ranked = everything[:densest]
    target = pdfium.PdfDocument.new()
    sources: dict[Path, pdfium.PdfDocument] = {}
    for n in range(pages):
        _objects, _chars, path, index = ranked[n % len(ranked)]
        source = sources.setdefault(path, pdfium.PdfDocument(str(path)))
        target.import_pages(source, [index], index=len(target))
    buffer = io.BytesIO()
    target.save(buffer)
    for source in sources.values():
        source.close()
    target.close()
    return buffer.getvalue(), ranked, len(everything)


def report(per_page: float, ranked: list[Page], corpus_pages: int, pages: int) -> str:
    """The docs/benchmarks.md section for one measurement."""
    in_lambda = per_page / LAMBDA_CPU_FACTOR
    objects = [r[0] for r in ranked]
    chars = [r[1] for r in ranked]
    return "\n".join(
        [
            "## Rendering dense pages (the Render function's slices)",
            "",
            f"Command: `.venv/bin/python bench/render_dense.py --write` ({pages} pages cycling"
            f" through the {len(ranked)} densest of the corpus' {corpus_pages} PDF pages:"
            f" {min(objects)}-{max(objects)} content objects and {min(chars)}-{max(chars)} text"
            " characters a page, rendered in one run).  ",
            f"Machine: {machine()}; load average {os.getloadavg()[0]:.1f} while it ran (a shared"
        " machine: on a quiet one the same pages took about a third of the time).",
            "",
            "Rendered with `render_pages` in its contained worker (`PDF_LIMITS`) at the default"
            f" options (200 DPI, at most 1,568 px, gray PNG): **{per_page:.3f} s a page** here"
            f' ({1 / per_page:.1f} pages/s; "Rendering" above times every corpus page, most of'
            f" them sparse), about {in_lambda:.3f} s in a 2 GB Lambda (x{LAMBDA_CPU_FACTOR} of a"
            " core, the throughput model's factor). Each page is one S3 PUT more (not measured).",
            "",
            "| rendering these pages | seconds in a Lambda |",
            "|---|---:|",
            f"| a default slice ({SLICE_PAGES} pages) | {SLICE_PAGES * in_lambda:.1f} |",
            f"| the largest slice ({MAX_SLICE_PAGES} pages) | {MAX_SLICE_PAGES * in_lambda:.1f} |",
            f"| 5,000 pages in one invocation (before) | {5000 * in_lambda:.0f} |",
            "",
            "Before, one Render invocation rendered every page of a document in one pdfium worker:"
            f" at this rate 5,000 such pages take about {5000 * in_lambda:.0f} s of the 900 s"
            " timeout before their 5,000 PUTs, in a worker allowed"
            f" {PDF_LIMITS.cpu_s:.0f} s of CPU for the whole document, so pages a few times denser"
            " than the corpus' (drawings, large scans) failed the whole document after its retries."
            f" Now the ingest machine renders slices of {SLICE_PAGES} pages (whole batches; at most"
            f" {MAX_SLICE_PAGES} pages when a document has more batches than {MAX_SLICES} slices"
            " hold), `renderConcurrency` (10) at once, each its own invocation and worker, so a"
            " default slice stays within seconds even at ten times this density.",
        ]
    )


def main() -> None:
    """Measure, print and optionally write the section."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--densest", type=int, default=20)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    data, ranked, corpus_pages = dense_pdf(sorted(CORPUS.rglob("*.pdf")), args.pages, args.densest)
    started = time.perf_counter()
    rendered = sum(1 for _ in render_pages(data, RenderOptions()))
    body = report((time.perf_counter() - started) / rendered, ranked, corpus_pages, rendered)
    print(body)
    if args.write:
        write_section("rendering-dense", body)


if __name__ == "__main__":
    main()
