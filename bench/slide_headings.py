"""Heading recall of the corpus decks (PPTX) offline, without and with the deck's slide titles.

Usage: .venv/bin/python bench/slide_headings.py [--limit N] [--write]

Each corpus PPTX is normalised to PDF once by LibreOffice and converted offline twice from
that same PDF: as before (the text layer alone) and with `drac.documents.office.slides` heading
hints. Scored against the deck's source Markdown: the share of its headings that come back as
headings with the same text (markup, punctuation and case ignored), and with the same text
and level. Decks whose slide count differs from the PDF's page count get no hints (counted).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter

from _common import COMPANIES, CORPUS, machine, write_section

from drac.documents.intake.detect import DocumentFormat
from drac.documents.intake.normalise import normalise_to_pdf
from drac.documents.office.slides import slide_text
from drac.documents.offline.converter import convert_offline
from drac.documents.options import ConversionOptions

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
NOTES = [
    "Before, LibreOffice's PDF text layer set most of a deck's headings in the body's",
    "size, so they became paragraphs (or ran into the next line) and the chunks of a deck",
    "had empty breadcrumbs. `drac.documents.office.slides` reads the deck's own headings (title",
    "placeholders; bold, unbulleted paragraphs with space before, as PowerPoint and pandoc",
    "write sub-headings) and their levels from its structure, and makes the matching text",
    "on that slide's page a heading. The levels that still differ are mostly the source's",
    "own choices that no deck records (a deck starting at `##`, a sub-heading written one",
    "level deeper than its siblings).",
]


def headings(markdown: str) -> list[tuple[int, str]]:
    """(level, normalised text) of every ATX heading."""
    out = []
    for line in markdown.splitlines():
        match = _HEADING.match(line.strip())
        if match:
            text = re.sub(r"[^\w]+", " ", match.group(2).replace("**", "").lower()).strip()
            out.append((len(match.group(1)), text))
    return out


def recall(source: list[tuple[int, str]], got: list[tuple[int, str]]) -> tuple[int, int]:
    """(headings found by text, found by text and level) as multisets."""
    by_text = Counter(text for _, text in got)
    by_both = Counter(got)
    text_hits = both_hits = 0
    for level, text in source:
        if by_text[text] > 0:
            text_hits += 1
            by_text[text] -= 1
        if by_both[(level, text)] > 0:
            both_hits += 1
            by_both[(level, text)] -= 1
    return text_hits, both_hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="decks per company (0: all)")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    started = time.time()
    options = ConversionOptions()
    rows = []
    for company in COMPANIES.values():
        decks = sorted((CORPUS / company / "pptx").glob("*.pptx"))
        if args.limit:
            decks = decks[: args.limit]
        totals = Counter()
        for deck in decks:
            source = CORPUS / company / "md" / (deck.stem + ".md")
            if not source.exists():
                continue
            truth = headings(source.read_text(encoding="utf-8"))
            data = deck.read_bytes()
            pdf = normalise_to_pdf(data, DocumentFormat.PPTX, timeout_s=120, max_pages=5000)
            hints = slide_text(data)  # headings and lines, as the product reads them
            before = convert_offline(pdf, DocumentFormat.PPTX, [], options, None, [])
            after = convert_offline(pdf, DocumentFormat.PPTX, [], options, None, hints)
            pages = before.pages
            totals["decks"] += 1
            totals["unmatched"] += len(hints) != pages
            totals["source"] += len(truth)
            for label, result in (("before", before), ("after", after)):
                text, both = recall(truth, headings(result.markdown))
                totals[f"{label} text"] += text
                totals[f"{label} both"] += both
            print(f"{deck.name}: {len(truth)} headings", file=sys.stderr)
        rows.append((company, totals))
    lines = [
        "| company | decks | source headings | before: text | before: text+level "
        "| after: text | after: text+level |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    grand: Counter[str] = Counter()
    for company, totals in [*rows, ("all", None)]:
        if totals is None:
            totals = grand
        else:
            grand.update(totals)
        n = max(totals["source"], 1)
        lines.append(
            f"| {company} | {totals['decks']} | {totals['source']} | "
            f"{totals['before text'] / n:.3f} | {totals['before both'] / n:.3f} | "
            f"{totals['after text'] / n:.3f} | {totals['after both'] / n:.3f} |"
        )
    report = "\n".join(
        [
            "## Slide titles as headings (PPTX offline)",
            "",
            f"Command: `.venv/bin/python bench/slide_headings.py --write` "
            f"({time.time() - started:.0f} s).  ",
            f"Machine: {machine()}.",
            "",
            *lines,
            "",
            f"Decks whose slide count differed from the PDF's pages (no hints): "
            f"{grand['unmatched']}.",
            "",
            *NOTES,
        ]
    )
    print(report)
    if args.write:
        write_section("slide-headings", report)


if __name__ == "__main__":
    main()
