"""Conversion fidelity: the offline conversion of every rendition scored against its source.

Usage:
    python bench/conversion_fidelity.py [--formats pdf,docx,pptx,html] [--pdf-cache DIR]
                                        [--speed REF] [--write]

Every document of the corpus (both companies) exists as Markdown (the ground truth) and as PDF,
DOCX, PPTX and HTML. Each rendition is converted offline as `drac ingest` does (the same
scorer as `drac eval-conversion`, `drac.evaluation.fidelity`) and scored: word recall and
precision, reading order, headings (text and level), table cells with their row key and
column header in one element, list items kept as lists, paragraphs split mid-sentence,
unprintable characters. --pdf-cache DIR keeps the PDFs LibreOffice makes of DOCX, PPTX and
HTML (keyed by the file's SHA-256) and converts those: only the text-layer path is scored then.
--speed REF also times `offline_markdown` over the corpus PDFs with this tree's code and with
the code of git revision REF, interleaved, three rounds (the performance budget), and with
--pdf-cache scores the code at REF too (the table before the change).
--write puts the tables into BENCHMARKS.md (section "conversion-fidelity").
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from _common import CORPUS, REPO, machine, write_section

from drac.documents.convert import convert_to_markdown
from drac.documents.detect import detect_format
from drac.documents.normalise import normalise_to_pdf
from drac.documents.offline import OfflinePage, offline_markdown
from drac.documents.options import ConversionOptions
from drac.evaluation.fidelity_corpus import (
    Rendition,
    fidelity_table,
    find_documents,
    score_folder,
    totals,
)
from drac.ports import MemoryLedger


def product_conversion(path: Path) -> Rendition:
    """The conversion `drac ingest` makes offline."""
    result = convert_to_markdown(
        path.read_bytes(),
        path.name,
        options=ConversionOptions(),
        vision=None,
        ledger=MemoryLedger(),
        document_id="bench",
    )
    return Rendition(result.markdown, tuple(result.warnings))


def cached_pdf_conversion(
    cache: Path, converter: Callable[[bytes], list[OfflinePage]] = offline_markdown
) -> Callable[[Path], Rendition]:
    """The offline converter over LibreOffice's PDF of each file, made once and cached."""
    cache.mkdir(parents=True, exist_ok=True)

    def convert(path: Path) -> Rendition:
        data = path.read_bytes()
        fmt = detect_format(data, path.name).format
        if fmt.value != "pdf":
            target = cache / f"{hashlib.sha256(data).hexdigest()}.pdf"
            if not target.exists():
                target.write_bytes(normalise_to_pdf(data, fmt))
            data = target.read_bytes()
        pages = converter(data)
        warnings = tuple(w for page in pages for w in page.warnings)
        return Rendition("\n\n".join(page.markdown for page in pages) + "\n", warnings)

    return convert


@functools.cache
def old_offline(ref: str) -> ModuleType:
    """`drac.documents.offline` as it was at git revision `ref` (with its tables module)."""
    folder = Path(tempfile.mkdtemp(prefix="drac-old-offline-"))
    for name in ("offline", "tables"):
        source = subprocess.run(
            ["git", "show", f"{ref}:src/drac/documents/{name}.py"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        source = source.replace("from drac.documents.tables import", "from old_tables import")
        (folder / f"old_{name}.py").write_text(source, encoding="utf-8")
    sys.path.insert(0, str(folder))
    return importlib.import_module("old_offline")


def speed(ref: str, rounds: int = 3) -> str:
    """Seconds to convert the corpus PDFs with the old and the new code, interleaved."""
    pdfs = [path.read_bytes() for path in sorted(CORPUS.glob("*/pdf/*.pdf"))]
    old = old_offline(ref).offline_markdown
    times: dict[str, list[float]] = {"old": [], "new": []}
    for _ in range(rounds):
        for name, function in (("old", old), ("new", offline_markdown)):
            started = time.perf_counter()
            for data in pdfs:
                function(data)
            times[name].append(time.perf_counter() - started)
    old_s, new_s = statistics.median(times["old"]), statistics.median(times["new"])
    return (
        f"`offline_markdown` over the {len(pdfs)} corpus PDFs, median of {rounds} interleaved"
        f" rounds: {old_s:.2f} s at `{ref}`, {new_s:.2f} s now ({new_s / old_s - 1:+.0%}).\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--formats", default="pdf,docx,pptx,html")
    parser.add_argument("--pdf-cache", type=Path, default=None)
    parser.add_argument("--speed", metavar="REF", default=None)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    formats = frozenset(f.strip() for f in args.formats.split(",") if f.strip())
    convert = cached_pdf_conversion(args.pdf_cache) if args.pdf_cache else product_conversion
    started = time.perf_counter()
    scored = score_folder(find_documents(CORPUS), convert, formats)
    elapsed = time.perf_counter() - started
    glyphs = sum(1 for item in scored for w in item.warnings if "glyph" in w)
    by_format = fidelity_table(totals(scored, lambda s: s.format), "format")
    by_company = fidelity_table(
        totals(scored, lambda s: f"{s.document.group} / {s.format}"), "company / format"
    )
    timing = speed(args.speed) if args.speed else ""
    before = ""
    if args.speed and args.pdf_cache:  # the same corpus with the code at REF, for comparison
        old = cached_pdf_conversion(args.pdf_cache, old_offline(args.speed).offline_markdown)
        old_scored = score_folder(find_documents(CORPUS), old, formats)
        before = f"The same with the converter at `{args.speed}` (before):\n\n" + fidelity_table(
            totals(old_scored, lambda s: s.format), "format"
        )
    print(by_format, by_company, before, timing, sep="\n\n")
    if args.write:
        cache = f" --pdf-cache {args.pdf_cache}" if args.pdf_cache else ""
        speed_flag = f" --speed {args.speed}" if args.speed else ""
        body = (
            "## Conversion fidelity: the offline converter against the corpus' Markdown\n\n"
            f"Command: `python bench/conversion_fidelity.py --formats {args.formats}{cache}"
            f"{speed_flag} --write`  \nMachine: {machine()}; {elapsed:.0f} s"
            f" ({len(scored)} renditions; {glyphs} missing-glyph warnings).\n\n"
            f"{by_format}\n\nPer company:\n\n{by_company}\n\n{before}\n\n{timing}"
        )
        write_section("conversion-fidelity", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
