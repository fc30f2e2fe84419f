"""Reference sanitizer on the corpus office files: its cost, what it removes from honest files,
and whether the Markdown LibreOffice gives changes.

Usage:
    python bench/references.py [--formats docx,pptx,html] [--compare N]

For every corpus DOCX, PPTX and HTML file: the sanitizer's time (best of 3) and the references
it removes by kind; whether every package part comes back byte for byte. For up to N files per
format that the sanitizer changed (default all), the file is converted by LibreOffice with and
without the sanitizer (the profile settings on in both) and the offline Markdown compared; the
sanitized conversion's time (LibreOffice and the offline converter) is reported beside.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
import zipfile
from collections import Counter
from pathlib import Path

from _common import COMPANIES, CORPUS

from drac.documents.intake.normalise import Defences, convert_with_libreoffice
from drac.documents.offline.pages import offline_markdown
from drac.documents.sandbox.references import strip_external_references


def _same_parts(before: bytes, after: bytes) -> bool:
    with zipfile.ZipFile(io.BytesIO(before)) as a, zipfile.ZipFile(io.BytesIO(after)) as b:
        return a.namelist() == b.namelist() and all(a.read(n) == b.read(n) for n in a.namelist())


def _markdown(data: bytes, suffix: str, strip: bool) -> str:
    pdf = convert_with_libreoffice(
        data, suffix, "pdf", timeout_s=180, defences=Defences(strip_references=strip)
    ).data
    return "\n\n".join(page.markdown for page in offline_markdown(pdf))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--formats", default="docx,pptx,html")
    parser.add_argument("--compare", type=int, default=10_000)
    args = parser.parse_args()
    for fmt in args.formats.split(","):
        files = sorted(p for c in COMPANIES.values() for p in (CORPUS / c / fmt).glob(f"*.{fmt}"))
        times: list[float] = []
        removed: Counter[str] = Counter()
        changed: list[Path] = []
        for path in files:
            data = path.read_bytes()
            best = float("inf")
            for _ in range(3):
                started = time.perf_counter()
                cleaned = strip_external_references(data, f".{fmt}")
                best = min(best, time.perf_counter() - started)
            times.append(best)
            removed += cleaned.removed
            if fmt == "html" or cleaned.removed or not _same_parts(data, cleaned.data):
                changed.append(path)
        print(
            f"{fmt}: {len(files)} files, sanitizer median {statistics.median(times) * 1000:.2f} ms,"
            f" max {max(times) * 1000:.2f} ms, total {sum(times):.3f} s; removed {dict(removed)};"
            f" {len(changed)} files rewritten",
            flush=True,
        )
        differing = []
        converting: list[float] = []
        compared = changed[: args.compare]
        for path in compared:
            data = path.read_bytes()
            started = time.perf_counter()
            cleaned = _markdown(data, f".{fmt}", True)
            converting.append(time.perf_counter() - started)
            if cleaned != _markdown(data, f".{fmt}", False):
                differing.append(path.name)
        took = f", conversion median {statistics.median(converting):.2f} s" if compared else ""
        print(f"{fmt}: Markdown compared for {len(compared)} files{took}, differing: {differing}")


if __name__ == "__main__":
    main()
