"""Conversion fidelity of the corpus decks (PPTX) with and without the deck's own lines.

Usage:
    python bench/slide_lines.py [--pdf-cache DIR] [--write]

Every corpus PPTX is converted offline as `drac ingest` does (LibreOffice's PDF taken from
`--pdf-cache`, default /tmp/tables-cache, made there once when missing), twice and interleaved
so that load from others weighs on both alike: as before (slide titles as headings only) and
with the deck's own lines (`drac.documents.office.slide_lines`: wrapped lines joined, bullets and
numbered items as nested lists). Both are scored against the source Markdown by the
conversion-fidelity scorer (`drac.evaluation.fidelity`), per format and per company, with the
seconds the conversions took. --write puts the tables into docs/benchmarks.md (section
"slide-lines").
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from _common import CORPUS, machine, write_section
from conversion_fidelity import cached_product_conversion

from drac.documents.office.slides import SlideText, apply_headings
from drac.documents.offline import converter as convert_module
from drac.evaluation.fidelity_corpus import (
    Rendition,
    ScoredRendition,
    fidelity_table,
    find_documents,
    score_folder,
    totals,
)

NOTES = """\
Before, LibreOffice's PDF of a deck broke every line a slide wraps, and its text layer could
not tell a bullet from a paragraph: a title or a sentence over two lines became two blocks (the
second sometimes a heading: "## For any questions or to pre-arrange your", a wrapped item's
end as "### Glass Victus 2"), bullets came back as paragraphs, an automatic number ran into
the heading above. `drac.documents.office.slides` now also reads each slide's paragraphs (in the
same contained worker as its titles): bullets and automatic numbers (`a:buChar`, `a:buAutoNum`,
else inherited from the shape's, the layout's and the master's list styles), levels (`lvl`),
line breaks, list markers typed into a line. `drac.documents.office.slide_lines` finds each
deck line on its slide's page by its words and cuts, joins and marks the page's blocks to match,
keeping the text layer's characters (a text-layer table whose every word is in the deck's lines, six
of them, bullets whose bold lead made a column, is read as those lines): split mid-sentence
5 -> 0, list items kept as lists 0.848 -> 0.931, words and table cells unchanged, headings +2
(titles wrapped over two lines). Heading levels also gain
from a rule of the deck's structure, in both tables above (main at 7e1c1d3 had 0.925, 681/736,
by the same scorer): a heading numbered 1 right after an unnumbered heading, on its slide or
first on the next slide after one holding no other text, sits below it (+7 in velvera_audio
and Employee Insurance Policy; Careers at CloudWay 24 writes its "1. Legal Officer" beside
"Other Open Positions" and loses 2). So against main: headings text+level 0.925 -> 0.935,
list items 0.848 -> 0.931, split mid-sentence 5 -> 0, word recall and precision equal. What is
left of list items is not in the decks: 134 of the 155 items missed are written into one
paragraph in the deck itself ("Display: - 11-inch IPS LCD ... - 120Hz refresh rate", the
source's lists flattened when the decks were made), so the slide shows one line and the
conversion keeps it; most others are paragraphs whose layout turns bullets off (`a:buNone`)."""


@contextlib.contextmanager
def headings_only() -> Iterator[None]:
    """The product's conversion with the slides' headings applied but not their lines."""
    real = convert_module.apply_slide

    def titles(markdown: str, slide: SlideText) -> str:
        return apply_headings(markdown, slide.headings)

    convert_module.apply_slide = titles  # type: ignore[assignment]
    try:
        yield
    finally:
        convert_module.apply_slide = real  # type: ignore[assignment]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-cache", type=Path, default=Path("/tmp/tables-cache"))
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    times = {"before": 0.0, "after": 0.0}
    convert = cached_product_conversion(args.pdf_cache)
    before: list[ScoredRendition] = []

    def timed(label: str, path: Path) -> Rendition:
        started = time.perf_counter()
        if label == "before":
            with headings_only():
                rendition = convert(path)
        else:
            rendition = convert(path)
        times[label] += time.perf_counter() - started
        return rendition

    def both(path: Path) -> Rendition:
        # interleaved, so that load from others weighs on both alike
        documents = [d for d in find_documents(CORPUS) if path in d.renditions]
        alone = [replace(d, renditions=(path,)) for d in documents]
        before.extend(score_folder(alone, lambda p: timed("before", p), {"pptx"}))
        return timed("after", path)

    after = score_folder(find_documents(CORPUS), both, {"pptx"})
    tables = []
    labels = (
        "Before (slide titles as headings only, at this tree's heading levels)",
        "After (the deck's own lines too)",
    )
    for label, scored in zip(labels, (before, after), strict=True):
        tables.append(
            f"{label}:\n\n"
            + fidelity_table(totals(scored, lambda s: s.format), "format")
            + "\n\n"
            + fidelity_table(
                totals(scored, lambda s: f"{s.document.group} / {s.format}"), "company / format"
            )
        )
    timing = (
        f"Seconds to convert the {len(after)} decks (LibreOffice's step cached):"
        f" before {times['before']:.1f} s, after {times['after']:.1f} s."
    )
    print(*tables, timing, sep="\n\n")
    if args.write:
        body = (
            "## Slide lines: the deck's own paragraphs (PPTX offline)\n\n"
            f"Command: `python bench/slide_lines.py --pdf-cache {args.pdf_cache} --write`  \n"
            f"Machine: {machine()}.\n\n" + "\n\n".join(tables) + "\n\n" + timing + "\n\n" + NOTES
        )
        write_section("slide-lines", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
