"""Conversion fidelity: the offline conversion of every rendition scored against its source.

Usage:
    python bench/conversion_fidelity.py [--formats pdf,docx,pptx,html] [--pdf-cache DIR]
                                        [--speed REF] [--file-tables | --file-structure]
                                        [--write]

Every document of the corpus (both companies) exists as Markdown (the ground truth) and as PDF,
DOCX, PPTX and HTML. Each rendition is converted offline as `drac ingest` does (the same
scorer as `drac eval-conversion`, `drac.evaluation.fidelity`) and scored: word recall and
precision, reading order, headings (text and level), table cells with their row key and
column header in one element, list items kept as lists, paragraphs split mid-sentence,
unprintable characters. --pdf-cache DIR keeps the PDFs LibreOffice makes of DOCX, PPTX and
HTML (keyed by the file's SHA-256) and converts those through the rest of the product's path
(`convert_to_markdown` with LibreOffice's step taken from the cache: slide titles and the file's
own tables included).
--file-tables also converts every rendition without the file's own tables (the text layer's
tables only), interleaved with the conversion with them, and reports both tables and the
conversion time per format both ways.
--file-structure does the same without the file's own headings and lists (the text layer's
only; the file's tables kept), and counts the words the file's structure put on another page
than the conversion without it has them on (the PDF decides pages: it must be 0).
--speed REF also times `offline_markdown` over the corpus PDFs with this tree's code and with
the code of git revision REF (CPU seconds, interleaved per document, five rounds: the
performance budget), and with
--pdf-cache scores the code at REF too (the table before the change).
--write puts the tables into docs/benchmarks.md (section "conversion-fidelity").
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import importlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType

from _common import CORPUS, REPO, machine, write_section

from drac.documents import convert as convert_module
from drac.documents.convert import convert_to_markdown
from drac.documents.detect import DocumentFormat, detect_format
from drac.documents.normalise import Converted, normalise_to_pdf
from drac.documents.offline import OfflinePage, offline_markdown
from drac.documents.options import ConversionOptions
from drac.evaluation.fidelity_corpus import (
    Rendition,
    ScoredRendition,
    SourceDocument,
    fidelity_table,
    find_documents,
    score_folder,
    totals,
)
from drac.ports import MemoryLedger
from drac.retrieval.text import tokens


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


def cached_pdf(cache: Path, data: bytes, fmt: DocumentFormat) -> bytes:
    """LibreOffice's PDF of an office or HTML file, made once and kept in `cache`."""
    target = cache / f"{hashlib.sha256(data).hexdigest()}.pdf"
    if not target.exists():
        target.write_bytes(normalise_to_pdf(data, fmt))
    return target.read_bytes()


@contextlib.contextmanager
def product_path(
    cache: Path, file_tables: bool = True, file_structure: bool = True
) -> Iterator[None]:
    """`convert_to_markdown` with LibreOffice's PDFs taken from `cache` (and, unless
    `file_tables`, without the file's own tables: the text layer's only; unless
    `file_structure`, without the file's own headings and lists)."""
    cache.mkdir(parents=True, exist_ok=True)
    normalise, read_tables = convert_module.normalise, convert_module.read_file_tables
    read_structure = convert_module.read_file_structure

    def cached(data: bytes, fmt: DocumentFormat, **_: object) -> Converted:
        if fmt is DocumentFormat.PDF:
            return Converted(data, [])
        return Converted(cached_pdf(cache, data, fmt), [])

    convert_module.normalise = cached  # type: ignore[assignment]
    if not file_tables:
        convert_module.read_file_tables = lambda data, fmt: ([], [])  # type: ignore[assignment]
    if not file_structure:
        convert_module.read_file_structure = lambda data, fmt: ([], [])  # type: ignore[assignment]
    try:
        yield
    finally:
        convert_module.normalise = normalise  # type: ignore[assignment]
        convert_module.read_file_tables = read_tables  # type: ignore[assignment]
        convert_module.read_file_structure = read_structure  # type: ignore[assignment]


def cached_product_conversion(
    cache: Path,
    file_tables: bool = True,
    times: dict[str, list[float]] | None = None,
    file_structure: bool = True,
) -> Callable[[Path], Rendition]:
    """The product's offline conversion with LibreOffice's step cached; each conversion's
    seconds added to `times` under its format."""

    def convert(path: Path) -> Rendition:
        with product_path(cache, file_tables, file_structure):
            started = time.perf_counter()
            rendition = product_conversion(path)
            elapsed = time.perf_counter() - started
        if times is not None:
            times.setdefault(path.suffix.lower().lstrip("."), []).append(elapsed)
        return rendition

    return convert


def cached_pdf_conversion(
    cache: Path, converter: Callable[[bytes], list[OfflinePage]] = offline_markdown
) -> Callable[[Path], Rendition]:
    """The text-layer converter alone over LibreOffice's PDF of each file (cached)."""
    cache.mkdir(parents=True, exist_ok=True)

    def convert(path: Path) -> Rendition:
        data = path.read_bytes()
        fmt = detect_format(data, path.name).format
        if fmt.value != "pdf":
            data = cached_pdf(cache, data, fmt)
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


def speed(ref: str, rounds: int = 5) -> str:
    """CPU seconds to convert the corpus PDFs with the old and the new code, interleaved per
    document (the order alternating by round), so that other load on a shared machine
    weighs on both alike."""
    pdfs = [path.read_bytes() for path in sorted(CORPUS.glob("*/pdf/*.pdf"))]
    old = old_offline(ref).offline_markdown
    times: dict[str, list[float]] = {"old": [], "new": []}
    for round_number in range(rounds):
        spent = {"old": 0.0, "new": 0.0}
        order = [("old", old), ("new", offline_markdown)]
        for data in pdfs:
            for name, function in order if round_number % 2 == 0 else order[::-1]:
                started = time.process_time()
                function(data)
                spent[name] += time.process_time() - started
        for name, seconds in spent.items():
            times[name].append(seconds)
    old_s, new_s = statistics.median(times["old"]), statistics.median(times["new"])
    return (
        f"`offline_markdown` over the {len(pdfs)} corpus PDFs, CPU seconds, median of {rounds}"
        f" rounds interleaved per document: {old_s:.2f} s at `{ref}`, {new_s:.2f} s now"
        f" ({new_s / old_s - 1:+.0%}).\n"
    )


@functools.cache
def _corpus() -> tuple[SourceDocument, ...]:
    return tuple(find_documents(CORPUS))


def _alone(path: Path) -> SourceDocument:
    """The corpus document of one rendition, with that rendition only."""
    document = next(d for d in _corpus() if path in d.renditions)
    return replace(document, renditions=(path,))


_PAGE_MARKER = re.compile(r"<!--\s*Page\s+\d+\s*-->")


def moved_words(before: str, after: str) -> tuple[int, int]:
    """(words of `after` on a page where `before` did not have them but had them on another
    page, words of `after`): how many words a change put on the wrong page."""
    old = [Counter(tokens(page)) for page in _PAGE_MARKER.split(before)[1:]]
    new = [Counter(tokens(page)) for page in _PAGE_MARKER.split(after)[1:]]
    if len(old) != len(new):
        return sum(sum(page.values()) for page in new), sum(sum(page.values()) for page in new)
    everywhere = sum(old, Counter())
    wrong = 0
    for number, page in enumerate(new):
        for word, count in (page - old[number]).items():
            if everywhere[word] - old[number][word] > 0:
                wrong += count
    return wrong, sum(sum(page.values()) for page in new)


def pages_kept(moved: dict[str, list[int]]) -> str:
    """A line per format: words the change put on a page where the other conversion did not
    have them (but had them on another page)."""
    if not moved:
        return ""
    parts = [f"{fmt} {wrong} of {total:,}" for fmt, (wrong, total) in sorted(moved.items())]
    return "Words put on another page than without the change: " + ", ".join(parts) + "."


def conversion_times(
    with_tables: dict[str, list[float]], without: dict[str, list[float]], what: str = "tables"
) -> str:
    """Seconds per format to convert the corpus with and without the file's own tables (or
    `what` else of the file)."""
    lines = [
        f"| format | docs | seconds with the file's {what} | without | change |",
        "|---|---:|---:|---:|---:|",
    ]
    for fmt in sorted(with_tables):
        new, old = sum(with_tables[fmt]), sum(without.get(fmt, [0.0]))
        change = f"{new / old - 1:+.0%}" if old else "n/a"
        lines.append(f"| {fmt} | {len(with_tables[fmt])} | {new:.2f} | {old:.2f} | {change} |")
    return (
        "Conversion time (the product's offline path, LibreOffice's PDF taken from the cache,"
        " so the share is of the rest; LibreOffice's own conversion takes seconds more"
        " per file):\n\n" + "\n".join(lines)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--formats", default="pdf,docx,pptx,html")
    parser.add_argument("--pdf-cache", type=Path, default=None)
    parser.add_argument("--speed", metavar="REF", default=None)
    parser.add_argument("--file-tables", action="store_true")
    parser.add_argument("--file-structure", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    formats = frozenset(f.strip() for f in args.formats.split(",") if f.strip())
    with_times: dict[str, list[float]] = {}
    without_times: dict[str, list[float]] = {}
    convert = (
        cached_product_conversion(args.pdf_cache, times=with_times)
        if args.pdf_cache
        else product_conversion
    )
    without: list[ScoredRendition] = []
    moved: dict[str, list[int]] = {}  # format -> [words moved to another page, words]
    what = "headings and lists" if args.file_structure else "tables"
    if args.file_tables and args.file_structure:
        parser.error("--file-tables and --file-structure compare one thing each")
    if args.file_tables or args.file_structure:
        if not args.pdf_cache:
            parser.error("--file-tables and --file-structure need --pdf-cache")
        plain = cached_product_conversion(
            args.pdf_cache, not args.file_tables, without_times, not args.file_structure
        )

        seen: dict[Path, str] = {}

        def recorded(path: Path, convert_plain: Callable[[Path], Rendition] = plain) -> Rendition:
            rendition = convert_plain(path)
            seen[path] = rendition.markdown
            return rendition

        def convert(path: Path, with_tables: Callable[[Path], Rendition] = convert) -> Rendition:
            # interleaved, so that load from others weighs on both alike
            without.extend(score_folder([_alone(path)], recorded, formats))
            rendition = with_tables(path)
            if path in seen:
                fmt = path.suffix.lower().lstrip(".")
                count = moved.setdefault(fmt, [0, 0])
                for index, value in enumerate(moved_words(seen.pop(path), rendition.markdown)):
                    count[index] += value
            return rendition

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
        before = (
            f"The same with the converter at `{args.speed}` (before):\n\n"
            + fidelity_table(totals(old_scored, lambda s: s.format), "format")
            + "\n\nPer company:\n\n"
            + fidelity_table(
                totals(old_scored, lambda s: f"{s.document.group} / {s.format}"),
                "company / format",
            )
        )
    if without:
        before = (
            f"The same without the file's own {what} (the text layer's {what} only, before"
            " this change), converted interleaved with the above:\n\n"
            + fidelity_table(totals(without, lambda s: s.format), "format")
            + "\n\nPer company:\n\n"
            + fidelity_table(
                totals(without, lambda s: f"{s.document.group} / {s.format}"), "company / format"
            )
            + "\n\n"
            + conversion_times(with_times, without_times, what)
            # (tables add words the text layer clipped, so a word also found elsewhere is
            # no sign of a wrong page: only the structure's placement is judged by it)
            + ("\n\n" + pages_kept(moved) if args.file_structure else "")
        )
    print(by_format, by_company, before, timing, sep="\n\n")
    if args.write:
        cache = f" --pdf-cache {args.pdf_cache}" if args.pdf_cache else ""
        speed_flag = f" --speed {args.speed}" if args.speed else ""
        speed_flag += " --file-tables" if args.file_tables else ""
        speed_flag += " --file-structure" if args.file_structure else ""
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
