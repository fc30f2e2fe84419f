"""Rendering benchmark: drac's renderer against `pdftoppm -r 200 -scale-to 1568 -png`.

Renders every page of the corpus PDFs (or the PDFs given) with both, reports pages per
second and their ratio, then PNG size and speed for drac's encoding choices.

    .venv/bin/python bench/render_bench.py [--limit N] [PDF ...]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from _common import CORPUS

from drac.documents.render import RenderOptions, render_pages


def _drac(datas: list[bytes], options: RenderOptions) -> tuple[int, float, int]:
    started = time.perf_counter()
    pages = size = 0
    for data in datas:
        for page in render_pages(data, options):
            pages += 1
            size += len(page.png)
    return pages, time.perf_counter() - started, size


def _pdftoppm(paths: list[Path]) -> tuple[int, float, int]:
    started = time.perf_counter()
    pages = size = 0
    with tempfile.TemporaryDirectory() as tmp:
        for index, path in enumerate(paths):
            prefix = Path(tmp) / f"d{index}"
            subprocess.run(
                ["pdftoppm", "-r", "200", "-scale-to", "1568", "-png", str(path), str(prefix)],
                check=True,
            )
        for png in Path(tmp).glob("*.png"):
            pages += 1
            size += png.stat().st_size
    return pages, time.perf_counter() - started, size


def main() -> None:
    """Run the benchmark and print a Markdown report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pdfs", nargs="*", type=Path)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N PDFs")
    args = parser.parse_args()
    paths = args.pdfs or sorted(CORPUS.glob("*/pdf/*.pdf"))
    if args.limit:
        paths = paths[: args.limit]
    datas = [path.read_bytes() for path in paths]
    _drac(datas[:3], RenderOptions())  # warm up PDFium and the page cache

    print(f"{len(paths)} PDFs\n")
    print("| renderer | pages | seconds | pages/s | mean PNG KiB |")
    print("|---|---|---|---|---|")
    pages, seconds, size = _drac(datas, RenderOptions())
    drac_rate = pages / seconds
    print(f"| drac (gray, compress 1) | {pages} | {seconds:.2f} | {drac_rate:.1f} | "
          f"{size / pages / 1024:.0f} |")  # fmt: skip
    if shutil.which("pdftoppm"):
        p_pages, p_seconds, p_size = _pdftoppm(paths)
        rate = p_pages / p_seconds
        print(f"| pdftoppm -r 200 -scale-to 1568 -png (RGB) | {p_pages} | {p_seconds:.2f} | "
              f"{rate:.1f} | {p_size / p_pages / 1024:.0f} |")  # fmt: skip
        print(f"\ndrac / pdftoppm speed ratio: {drac_rate / rate:.2f}x\n")
    print("| drac encoding | pages/s | mean PNG KiB |")
    print("|---|---|---|")
    for grayscale in (True, False):
        for level in (1, 3, 6, 9):
            options = RenderOptions(grayscale=grayscale, png_compress_level=level)
            pages, seconds, size = _drac(datas, options)
            mode = "gray" if grayscale else "RGB"
            print(f"| {mode}, compress_level {level} | {pages / seconds:.1f} | "
                  f"{size / pages / 1024:.0f} |")  # fmt: skip


if __name__ == "__main__":
    main()
