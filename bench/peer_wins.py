"""Where a peer converter did better: line-end hyphens and repeated table headers, counted.

Usage:
    python bench/peer_wins.py [--pdf-cache DIR] [--corpus DIR]

Against each document's source Markdown:
- line-end hyphens in the offline conversion of the corpus PDFs: words the output keeps
  hyphenated ("experi-ence") where the source writes them whole and never hyphenated, and
  words the output joins ("fuelefficient") where the source writes them hyphenated (more
  often than the source writes them whole);
- with --pdf-cache DIR (LibreOffice's PDFs, as bench/conversion_fidelity.py keeps them): the
  table header rows of the DOCX and HTML conversions beyond the source's own (a header row
  repeated per page where the file holds it once).
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter
from pathlib import Path

from _common import CORPUS
from conversion_fidelity import cached_product_conversion

from drac.documents.offline.pages import offline_markdown

_HYPHENATED = re.compile(r"\b([^\W\d_]+)-([^\W\d_]+)\b")
_DELIMITER = re.compile(r"^\|(?: ?:?-+:? ?\|)+$")


def _source(path: Path) -> str:
    return (path.parent.parent / "md" / f"{path.stem}.md").read_text(encoding="utf-8")


def hyphens(corpus: Path) -> str:
    """The line-end hyphen counts over the corpus PDFs, and the converter's CPU seconds."""
    kept: list[str] = []
    joined: list[str] = []
    files = 0
    spent = 0.0
    for pdf in sorted(corpus.glob("*/pdf/*.pdf")):
        source = _source(pdf).casefold()
        started = time.process_time()
        text = "\n".join(page.markdown for page in offline_markdown(pdf.read_bytes()))
        spent += time.process_time() - started
        low = text.casefold()
        broken = [
            m.group(0)
            for m in _HYPHENATED.finditer(text)
            if f"{m.group(1)}-{m.group(2)}".casefold() not in source
            and re.search(rf"\b{re.escape((m.group(1) + m.group(2)).casefold())}\b", source)
        ]
        files += bool(broken)
        kept += broken
        for parts in set(_HYPHENATED.findall(source)):
            whole = rf"\b{re.escape(''.join(parts))}\b"
            extra = len(re.findall(whole, low)) - len(re.findall(whole, source))
            joined += [f"{pdf.stem}: {''.join(parts)}"] * max(extra, 0)
    return (
        f"Corpus PDFs: {len(kept)} words kept hyphenated in {files} files (the source writes"
        f" them whole), {len(joined)} joined where the source hyphenates them;"
        f" offline_markdown {spent:.1f} CPU s.\n  kept: {kept}\n  joined: {joined}"
    )


def _headers(markdown: str) -> Counter[str]:
    lines = markdown.split("\n")
    return Counter(
        " ".join(re.findall(r"\w+", lines[i - 1].casefold()))
        for i in range(1, len(lines))
        if _DELIMITER.match(lines[i])
    )


def header_rows(corpus: Path, cache: Path) -> str:
    """Table header rows of the DOCX and HTML conversions beyond their source's."""
    convert = cached_product_conversion(cache)
    out = []
    for fmt in ("docx", "html"):
        extra, files = 0, 0
        for path in sorted(corpus.glob(f"*/{fmt}/*.{fmt}")):
            more = sum((_headers(convert(path).markdown) - _headers(_source(path))).values())
            extra += more
            files += bool(more)
        out.append(f"{fmt}: {extra} header rows beyond the source's in {files} files")
    return "; ".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-cache", type=Path, default=None)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    print(hyphens(args.corpus))
    if args.pdf_cache:
        print(header_rows(args.corpus, args.pdf_cache))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
