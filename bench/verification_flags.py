"""False flags of the conversion verifier: the offline converter's Markdown as the "model".

Usage:
    python bench/verification_flags.py [--limit N] [--write]

Every corpus PDF is converted offline (its Markdown is taken from the text layer, so it is a
faithful transcription) and each page's Markdown is checked against the page's own text layer
by `drac.documents.vision.verify`, as a vision model's answer is. Every flag is a false flag. The
rate is flags (unsupported tokens + missing tokens + suspect rows) per element (`drac`'s
parser's elements of the page Markdown). Then each page holding a number is damaged twice, as a
model might: one number changed (a digit added: must be *unsupported*), and the last line
holding a number dropped (its values must be *missing*); the share caught is the recall.
--write puts the table into docs/benchmarks.md (section
"verification-flags").
"""

from __future__ import annotations

import argparse
import collections
import re
import time

from _common import CORPUS, machine, write_section

from drac.documents.offline.pages import offline_here
from drac.documents.pdf.page_text import page_text_layers
from drac.documents.pdf.render import PDF_LIMITS
from drac.documents.sandbox.containment import contained_call
from drac.documents.vision.verify import verify_page
from drac.parsing import parse_markdown

_NUMBER = re.compile(r"(?<![\d.,])\d{2,}(?![\d.,])")


def _faults(number: int, markdown: str, layer: str, totals: collections.Counter[str]) -> None:
    """Damage the page's Markdown as a model might and count the damage the checker caught."""
    found = _NUMBER.search(markdown.split("-->", 1)[-1])
    if found is None:
        return
    offset = len(markdown) - len(markdown.split("-->", 1)[-1])
    start, end = found.start() + offset, found.end() + offset
    invented = markdown[:start] + found.group() + "7" + markdown[end:]
    checked = verify_page(number, invented, layer)
    totals["invented"] += 1
    totals["invented caught"] += bool(checked and checked.counts["unsupported"])
    lines = markdown.split("\n")
    holding = [i for i, line in enumerate(lines) if _NUMBER.search(line) and "<!--" not in line]
    if holding:
        dropped = "\n".join(lines[: holding[-1]] + lines[holding[-1] + 1 :])
        checked = verify_page(number, dropped, layer)
        totals["dropped"] += 1
        totals["dropped caught"] += bool(checked and checked.counts["missing"])


def main() -> None:
    """Measure and print (and with --write store) the false-flag rate on the corpus PDFs."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=0, help="at most this many PDFs")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    pdfs = sorted(CORPUS.rglob("*.pdf"))[: args.limit or None]
    totals: collections.Counter[str] = collections.Counter()
    examples: list[str] = []
    started = time.perf_counter()
    for path in pdfs:
        data = path.read_bytes()
        found = contained_call(offline_here, data, limits=PDF_LIMITS, what="offline")
        layers = page_text_layers(data)
        for page in found["pages"]:
            number, markdown = int(page["number"]), str(page["markdown"])
            totals["pages"] += 1
            totals["elements"] += sum(1 for e in parse_markdown(markdown) if not e.is_heading)
            checked = verify_page(number, markdown, layers.get(number, ""))
            if checked is None:
                totals["unjudged pages"] += 1
                continue
            for kind, count in checked.counts.items():
                totals[kind] += count
            _faults(number, markdown, layers.get(number, ""), totals)
            if checked.flags and len(examples) < 12:
                flagged = [*checked.unsupported, *checked.missing, *checked.suspect_rows]
                examples.append(f"{path.name} p{number}: {', '.join(flagged[:6])}")
        totals["documents"] += 1
    seconds = time.perf_counter() - started
    flags = totals["unsupported"] + totals["missing"] + totals["suspect_rows"]
    rate = flags / max(1, totals["elements"])
    table = (
        "| documents | pages | elements | unsupported | missing | suspect rows | "
        "flags per element |\n|---|---|---|---|---|---|---|\n"
        f"| {totals['documents']} | {totals['pages']} | {totals['elements']} | "
        f"{totals['unsupported']} | {totals['missing']} | {totals['suspect_rows']} | "
        f"{rate:.2%} |"
    )
    table += (
        "\n\n| damage | pages | caught |\n|---|---|---|\n"
        f"| a number changed | {totals['invented']} | "
        f"{totals['invented caught'] / max(1, totals['invented']):.1%} |\n"
        f"| the last line with a number dropped | {totals['dropped']} | "
        f"{totals['dropped caught'] / max(1, totals['dropped']):.1%} |"
    )
    print(table)
    print(f"{seconds:.1f} s; unjudged pages: {totals['unjudged pages']}")
    for example in examples:
        print("  ", example)
    if args.write:
        body = (
            "## Conversion verification: false flags\n\n"
            "`python bench/verification_flags.py --write` (DRAC_SHARED=/work/shared). Each "
            "corpus PDF's offline Markdown (a faithful transcription of the text layer) is "
            "checked page by page against the text layer, as a vision model's answer is; "
            "every flag is a false flag. Target: under 1 % of elements. The second table "
            "damages each page's Markdown as a model might and counts what was caught.\n\n"
            f"{table}\n\n{seconds:.0f} s on {machine()}. What was flagged (a suspect row "
            "can be a true flag: the offline converter itself merges rows of some tables):\n\n"
            + "".join(f"- {example[:200]}\n" for example in examples)
        )
        write_section("verification-flags", body)


if __name__ == "__main__":
    main()
