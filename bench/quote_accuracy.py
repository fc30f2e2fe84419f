"""How close `drac ingest --dry-run`'s quote comes to what ingest really finds, on the corpus.

Three checks against ground truth, nothing converted by a model:
- pages of DOCX, PPTX and HTML as quoted (from the file) vs LibreOffice's real page count
  (a sample per format: each takes a LibreOffice run);
- conversion output tokens a PDF page as assumed (600) vs the corpus' source Markdown of the
  same document (characters / 4) over the PDF's pages;
- chunks (and so LLM planning tokens, 134.5 in / 2.85 out a chunk) as quoted from the
  Markdown's characters vs the chunks drac's default strategy really makes of it.

    .venv/bin/python bench/quote_accuracy.py [--office-sample 6] [--write]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from _common import CORPUS, machine, write_section

from drac.assemble import assemble_chunks
from drac.costs.prices import PriceTable
from drac.costs.quote import QuoteAssumptions, QuoteModels, estimate_pages, quote_document
from drac.documents.intake.detect import detect_format
from drac.documents.intake.normalise import normalise_to_pdf
from drac.documents.pdf.render import page_count
from drac.ids import document_id_for
from drac.models import DocumentRecord
from drac.parsing import parse_markdown
from drac.planning import plan_document
from drac.sectioning import make_sections
from drac.strategies import resolve_strategy


def _documents(fmt: str) -> list[Path]:
    return sorted(CORPUS.glob(f"*/{fmt}/*.{fmt}"))


def office_pages(sample: int) -> list[str]:
    """Rows: quoted vs LibreOffice pages for the first `sample` documents of each format."""
    rows = [
        "| format | documents | exact | within 1 page | quoted pages | real pages | bases |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    assumptions = QuoteAssumptions()
    for fmt in ("docx", "pptx", "html"):
        quoted, real, bases = [], [], set()
        for path in _documents(fmt)[:sample]:
            data = path.read_bytes()
            detected = detect_format(data, path.name).format
            estimate = estimate_pages(data, detected, assumptions)
            quoted.append(estimate.pages)
            bases.add(estimate.basis)
            real.append(page_count(normalise_to_pdf(data, detected)))
        exact = sum(q == r for q, r in zip(quoted, real, strict=True))
        near = sum(abs(q - r) <= 1 for q, r in zip(quoted, real, strict=True))
        rows.append(
            f"| {fmt} | {len(real)} | {exact} | {near} | {sum(quoted)} | {sum(real)} | "
            f"{'; '.join(sorted(bases))} |"
        )
    return rows


def _chunks(text: str) -> int:
    strategy = resolve_strategy("default")
    record = DocumentRecord(document_id=document_id_for(text.encode()), source="", sha256="")
    elements = parse_markdown(text)
    plan = plan_document(
        record.document_id, elements, make_sections(elements, strategy.section_budget), strategy, 1
    )
    return len(assemble_chunks(record, elements, plan))


def pdf_and_chunks() -> list[str]:
    """Rows: output tokens a page and chunks, quoted vs measured on the corpus."""
    strategy = resolve_strategy("default")
    llm = strategy.model_copy(update={"planner": "llm"})
    models = QuoteModels(
        backend="bedrock", conversion="google.gemma-3-27b-it", planning="google.gemma-3-27b-it"
    )
    pages = chars = real_chunks = text_quoted = pdf_quoted = 0
    per_page: list[float] = []
    for pdf in _documents("pdf"):
        markdown = pdf.parent.parent / "md" / f"{pdf.stem}.md"
        if not markdown.exists():
            continue
        text = markdown.read_text(encoding="utf-8")
        count = page_count(pdf.read_bytes())
        pages += count
        chars += len(text)
        per_page.append(len(text) / 4 / count)
        real_chunks += _chunks(text)
        text_quoted += quote_document(
            text.encode(), markdown.name, models=models, prices=PriceTable(), strategy=llm
        ).chunks
        pdf_quoted += quote_document(
            pdf.read_bytes(), pdf.name, models=models, prices=PriceTable(), strategy=llm
        ).chunks
    assumed = QuoteAssumptions().output_tokens_per_page
    measured = chars / 4 / pages
    return [
        "| measure | quoted | measured | quoted / measured |",
        "|---|---:|---:|---:|",
        f"| output tokens a PDF page ({len(per_page)} PDFs, {pages} pages; Markdown chars / 4) "
        f"| {assumed} | {measured:.0f} (median {statistics.median(per_page):.0f}) "
        f"| {assumed / measured:.2f} |",
        f"| chunks, quoted from the Markdown's characters | {text_quoted} | {real_chunks} "
        f"| {text_quoted / real_chunks:.2f} |",
        f"| chunks, quoted from the PDFs' pages | {pdf_quoted} | {real_chunks} "
        f"| {pdf_quoted / real_chunks:.2f} |",
    ]


def main(argv: list[str] | None = None) -> int:
    """Run the checks; print them, and with --write put them in docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--office-sample", type=int, default=12)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tokens = pdf_and_chunks()
    office = office_pages(args.office_sample)
    body = "\n".join(
        [
            "## Cost quote vs what ingest finds (`drac ingest --dry-run`)",
            "",
            f"Command: `python bench/quote_accuracy.py --office-sample {args.office_sample} "
            "--write`  ",
            f"Machine: {machine()}; {time.perf_counter() - started:.0f} s. Ground truth: the "
            "corpus' source Markdown, pdfium page counts, LibreOffice's PDF of each office file, "
            "the default strategy's real chunks.",
            "",
            *tokens,
            "",
            "Pages of office and HTML files, quoted from the file vs counted after LibreOffice "
            f"(first {args.office_sample} documents of each format; the 1,200 characters a page "
            "was set on the first six DOCX, so documents 7 on are held out):",
            "",
            *office,
        ]
    )
    print(body)
    if args.write:
        write_section("quote-accuracy", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
