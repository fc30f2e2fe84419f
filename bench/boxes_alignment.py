"""Boxes: the share of elements placed on their page, per format, and what placing costs.

Usage:
    python bench/boxes_alignment.py [--formats pdf,docx,pptx,html] [--limit N]
                                    [--pdf-cache DIR] [--write]

Each corpus document (both companies) of the given formats is converted offline as `drac
ingest` does, parsed, then its elements are placed on the pages of its PDF (the source, or the
PDF LibreOffice made of it) by `drac.documents.pdf.boxes.with_boxes`, the step ingest runs. Counts
of content elements (headings apart) per status, per format; and per document the time of
conversion + parsing (before) against the time of placing (what boxes add), measured in the
same run on the same document. A second table stands in for a vision model: the corpus' source
Markdown of each PDF of at most two pages (written by a person, not from the text layer:
no hyphenation, real table rows, its own line breaks) placed on that PDF.
--limit N takes the first N documents of each format and company; --pdf-cache DIR keeps the
PDFs LibreOffice makes of DOCX and HTML (keyed by SHA-256), so a second run converts only the
text layer (not of PPTX: the offline converter reads a deck's slide titles from it).
--write puts the tables into docs/benchmarks.md (section "boxes").
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from _common import COMPANIES, CORPUS, machine, write_section

from drac.documents.convert import convert_to_markdown
from drac.documents.options import ConversionOptions
from drac.documents.pdf.boxes import with_boxes
from drac.documents.pdf.render import page_count
from drac.ingest import parse_document
from drac.models import Strategy
from drac.ports import MemoryLedger
from drac.provenance import BoxStatus

STATUSES = (BoxStatus.ALIGNED, BoxStatus.PARTIAL, BoxStatus.NOT_ALIGNED)
NO_WORDS = "no words"


def counted(elements: tuple) -> Counter[str]:  # type: ignore[type-arg]
    """Content elements per box status; those without a letter or digit (a stray `)` the
    converter made an element) apart, as there is nothing of them to place."""
    found: Counter[str] = Counter()
    for element in elements:
        if element.is_heading or element.boxes is None:
            continue
        if element.boxes.reason == "the element has no words to look for":
            found[NO_WORDS] += 1
        else:
            found[element.boxes.status.value] += 1
    return found


def place_one(path: Path, cache: Path | None) -> tuple[Counter[str], float, float, str | None]:
    """(statuses, seconds converting and parsing, seconds placing, a problem)."""
    data = path.read_bytes()
    strategy = Strategy()
    started = time.perf_counter()
    pdf_cached = None
    if cache is not None and path.suffix not in (".pdf", ".pptx"):  # a deck's own headings
        pdf_cached = cache / f"{hashlib.sha256(data).hexdigest()}.pdf"
    if pdf_cached is not None and pdf_cached.exists():
        source, name = pdf_cached.read_bytes(), "cached.pdf"
    else:
        source, name = data, path.name
    conversion = convert_to_markdown(
        source, name, options=ConversionOptions(), vision=None, ledger=MemoryLedger(),
        document_id="bench",
    )  # fmt: skip
    pdf = conversion.normalised_pdf or source
    if pdf_cached is not None and not pdf_cached.exists():
        pdf_cached.write_bytes(pdf)
    parsed = parse_document(conversion.markdown, strategy, conversion.failures, allow_empty=True)
    converted = time.perf_counter()
    placed = with_boxes(parsed, pdf, ocr=conversion.ocr_layers)
    done = time.perf_counter()
    problem = next((e.boxes.reason for e in placed.elements if e.boxes and "could not" in
                    (e.boxes.reason or "")), None)  # fmt: skip
    return counted(placed.elements), converted - started, done - converted, problem


def source_markdown_one(pdf_path: Path, md_path: Path) -> Counter[str] | None:
    """Statuses of the source Markdown's elements placed on the PDF (at most two pages)."""
    pdf = pdf_path.read_bytes()
    if page_count(pdf) > 2 or not md_path.exists():
        return None
    parsed = parse_document(md_path.read_text("utf-8"), Strategy())
    return counted(with_boxes(parsed, pdf).elements)


def row(label: str, documents: int, counts: Counter[str]) -> str:
    total = sum(counts.values()) - counts[NO_WORDS]
    cells = [f"{counts[s.value]:,}" for s in STATUSES] + [f"{counts[NO_WORDS]:,}"]
    share = f"{counts[BoxStatus.ALIGNED.value] / total:.1%}" if total else "-"
    placed = counts[BoxStatus.ALIGNED.value] + counts[BoxStatus.PARTIAL.value]
    any_box = f"{placed / total:.1%}" if total else "-"
    return f"| {label} | {documents} | {total:,} | {' | '.join(cells)} | {share} | {any_box} |"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--formats", default="pdf,docx,pptx,html")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--pdf-cache", type=Path, default=None)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.pdf_cache:
        args.pdf_cache.mkdir(parents=True, exist_ok=True)
    header = (
        "| format | documents | content elements with words | aligned | partial | not aligned "
        "| without words | aligned share | with boxes |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    rows, timing_rows = [], []
    totals: Counter[str] = Counter()
    all_before, all_after = 0.0, 0.0
    for fmt in args.formats.split(","):
        counts: Counter[str] = Counter()
        before: list[float] = []
        after: list[float] = []
        documents = 0
        for company in COMPANIES.values():
            files = sorted((CORPUS / company / fmt).glob(f"*.{fmt}"))
            for path in files[: args.limit or None]:
                statuses, converting, placing, problem = place_one(path, args.pdf_cache)
                if problem:
                    print(f"{path.name}: {problem}", file=sys.stderr)
                counts += statuses
                before.append(converting)
                after.append(placing)
                documents += 1
                print(f"{fmt} {path.name}: {dict(statuses)} {converting:.2f}s +{placing:.3f}s",
                      file=sys.stderr)  # fmt: skip
        totals += counts
        rows.append(row(fmt, documents, counts))
        all_before += sum(before)
        all_after += sum(after)
        timing_rows.append(
            f"| {fmt} | {documents} | {sum(before):.1f} | {sum(after):.2f} "
            f"| {sum(after) / sum(before):.1%} | {statistics.median(after) * 1000:.0f} |"
        )
    rows.append(row("**all**", sum(int(r.split("|")[2]) for r in rows), totals))
    source_counts: Counter[str] = Counter()
    source_documents = 0
    for company in COMPANIES.values():
        for pdf_path in sorted((CORPUS / company / "pdf").glob("*.pdf")):
            found = source_markdown_one(pdf_path, CORPUS / company / "md" / f"{pdf_path.stem}.md")
            if found is not None:
                source_counts += found
                source_documents += 1
    limit = f" --limit {args.limit}" if args.limit else ""
    limit += " --pdf-cache DIR" if args.pdf_cache else ""
    body = "\n".join([
        "## Boxes: elements placed on their page",
        "",
        f"`python bench/boxes_alignment.py --formats {args.formats}{limit} --write` "
        f"({machine()}). Offline conversion of each document, then its content elements "
        "(headings apart) placed on its PDF's text layer as `drac ingest` does "
        "(`drac.documents.pdf.boxes`). *Aligned*: at least 90 % of the element's words found; "
        "*partial*: at least half (boxes of those words only); *not aligned*: no box; "
        "*without words*: elements with no letter or digit (a stray `)` of a slide), "
        "not aligned as there is nothing to place, and left out of the shares.",
        "",
        header, *rows,
        "",
        "The source Markdown of each corpus PDF of at most two pages, placed on that PDF "
        "(a stand-in for a vision model's Markdown: written by a person, its own words, "
        "tables and line breaks, no page markers):",
        "",
        header, row("pdf, source Markdown", source_documents, source_counts),
        "",
        "What placing costs at ingest, measured in the same run on the same documents: "
        "conversion + parsing (before) and placing (reading the text layer with its boxes "
        "in the contained pdfium worker, then aligning)"
        + (" (with --pdf-cache the PDFs LibreOffice made are read back, so its time is "
           "not in 'before')" if args.pdf_cache else "") + ":",
        "",
        "| format | documents | convert + parse, s | placing, s | added | median placing, ms |",
        "|---|---:|---:|---:|---:|---:|",
        *timing_rows,
        f"| **all** | | {all_before:.1f} | {all_after:.2f} | {all_after / all_before:.1%} | |",
    ])  # fmt: skip
    print(body)
    if args.write:
        write_section("boxes", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
