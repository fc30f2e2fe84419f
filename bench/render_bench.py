"""Rendering benchmark: drac's renderer against `pdftoppm -r 200 -scale-to 1568 -png`.

First the commands as a user runs them, start-up included, in the same run: one `drac render`
of the 15 corpus PDFs with the most pages (ties by name: 87 pages), with its default
`--jobs` and with `--jobs 1`, against one `pdftoppm` per file over the same files, `--repeat`
times (wall and CPU seconds, the CPU of every process each started). Then every page of the
corpus PDFs (or the PDFs given) with both: pages per second in process and as commands, PNG
size and speed for drac's encoding choices (`--commands-only` skips this part).

    .venv/bin/python bench/render_bench.py [--repeat 3] [--commands-only] [--limit N] [--write]
        [PDF ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import BENCHMARKS, CORPUS, machine, write_section

from drac.documents.pdf.render import RenderOptions, page_count, render_pages

PDFTOPPM = ["pdftoppm", "-r", "200", "-scale-to", "1568", "-png"]
COMMAND_SET_SIZE = 15
"""The command comparison's PDFs: this many corpus PDFs, those with the most pages."""


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


def _drac_command(paths: list[Path], per_file: bool) -> tuple[int, float, int]:
    """`drac render` as a user runs it: Python's start-up and drac's imports included."""
    drac = str(Path(sys.executable).with_name("drac"))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [[path] for path in paths] if per_file else [paths]
        for run in runs:
            subprocess.run([drac, "render", *map(str, run), "--out", tmp], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = time.perf_counter() - started
        pngs = list(Path(tmp).rglob("*.png"))
        return len(pngs), elapsed, sum(png.stat().st_size for png in pngs)


def command_set(paths: list[Path], size: int = COMMAND_SET_SIZE) -> list[tuple[Path, int]]:
    """The `size` PDFs with the most pages (ties by name), with their page counts."""
    counted = [(path, page_count(path.read_bytes())) for path in paths]
    return sorted(counted, key=lambda item: (-item[1], item[0].name))[:size]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(commands: list[list[str]]) -> tuple[float, float]:
    """Wall and CPU seconds (every process started, and theirs) of running the commands."""
    cpu, started = _children_cpu(), time.perf_counter()
    for command in commands:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, _children_cpu() - cpu


def _command_runs(paths: list[Path], repeat: int) -> dict[str, list[tuple[float, float]]]:
    """Each command's (wall, CPU) seconds per repetition, the commands interleaved."""
    drac = str(Path(sys.executable).with_name("drac"))
    runs: dict[str, list[tuple[float, float]]] = {"drac": [], "drac1": [], "pdftoppm": []}
    for index in range(repeat + 1):  # the first run warms the page cache, and is not kept
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            render = [drac, "render", *map(str, paths), "--out"]
            timed = {
                "drac": _timed([[*render, str(out / "a")]]),
                "drac1": _timed([[*render, str(out / "b"), "--jobs", "1"]]),
                "pdftoppm": _timed([
                    [*PDFTOPPM, str(path), str(out / f"p{number}")]
                    for number, path in enumerate(paths)
                ]),
            }
        if index:
            for key, value in timed.items():
                runs[key].append(value)
    return runs


def command_report(chosen: list[tuple[Path, int]], repeat: int) -> list[str]:
    """The command comparison as Markdown lines (the ratios measured in the same run)."""
    paths = [path for path, _ in chosen]
    pages = sum(count for _, count in chosen)
    runs = _command_runs(paths, repeat)
    from drac.cli.render_command import default_jobs

    labels = {
        "drac": f"`drac render` of all {len(paths)} files, `--jobs {default_jobs()}` (default)",
        "drac1": f"`drac render` of all {len(paths)} files, `--jobs 1`",
        "pdftoppm": "`pdftoppm -r 200 -scale-to 1568 -png`, one run per file",
    }
    lines = [
        f"{len(paths)} corpus PDFs with the most pages ({pages} pages): "
        + ", ".join(f"{path.name} ({count})" for path, count in chosen) + ".",
        "",
        "| command | wall s, each run | CPU s, each run | pages/s (median wall) |",
        "|---|---|---|---:|",
    ]
    for key, label in labels.items():
        walls = " / ".join(f"{wall:.2f}" for wall, _ in runs[key])
        cpus = " / ".join(f"{cpu:.2f}" for _, cpu in runs[key])
        median = statistics.median(wall for wall, _ in runs[key])
        lines.append(f"| {label} | {walls} | {cpus} | {pages / median:.1f} |")
    ratios = [p[0] / d[0] for d, p in zip(runs["drac"], runs["pdftoppm"], strict=True)]
    ratios1 = [p[0] / d[0] for d, p in zip(runs["drac1"], runs["pdftoppm"], strict=True)]
    cpu_ratios = [p[1] / d[1] for d, p in zip(runs["drac"], runs["pdftoppm"], strict=True)]
    lines += ["", (
        "`drac render` / pdftoppm, wall, each run: **"
        + " / ".join(f"{r:.1f}x" for r in ratios) + "** (`--jobs 1`: "
        + " / ".join(f"{r:.1f}x" for r in ratios1) + "); CPU: "
        + " / ".join(f"{r:.1f}x" for r in cpu_ratios) + "."
    )]
    return lines


def _row(label: str, pages: int, seconds: float, size: int) -> str:
    return (f"| {label} | {pages} | {seconds:.2f} | {pages / seconds:.1f} |"
            f" {size / pages / 1024:.0f} |")


def main() -> None:
    """Run the benchmark and print a Markdown report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pdfs", nargs="*", type=Path)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N PDFs")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the command comparison")
    parser.add_argument("--commands-only", action="store_true",
                        help="only the command comparison (not every corpus page)")
    args = parser.parse_args()
    corpus = sorted(CORPUS.glob("*/pdf/*.pdf"))
    paths = args.pdfs or corpus
    if args.limit:
        paths = paths[: args.limit]
    chosen = command_set(corpus)
    commands = command_report(chosen, args.repeat)
    print("\n".join(commands))
    if args.commands_only:
        if args.write:
            _write(commands, [])
        return
    datas = [path.read_bytes() for path in paths]
    _drac(datas[:3], RenderOptions())  # warm up PDFium and the page cache

    lines = [f"{len(paths)} PDFs, every page rendered by each.", "",
             "| renderer | pages | seconds | pages/s | mean PNG KiB |", "|---|---|---|---|---|"]
    pages, seconds, size = _drac(datas, RenderOptions())
    drac_rate = pages / seconds
    lines.append(_row("drac, in process (pypdfium2, gray, PNG compress_level 1)",
                      pages, seconds, size))
    command_all = _drac_command(paths, per_file=False)
    command_each = _drac_command(paths, per_file=True)
    lines.append(_row("`drac render` command, all files in one run", *command_all))
    lines.append(_row("`drac render` command, one run per file", *command_each))
    ratios = ""
    if shutil.which("pdftoppm"):
        p_pages, p_seconds, p_size = _pdftoppm(paths)
        rate = p_pages / p_seconds
        lines.append(_row("`pdftoppm -r 200 -scale-to 1568 -png` (RGB), one run per file",
                          p_pages, p_seconds, p_size))
        ratios = (
            f"drac / pdftoppm: **{drac_rate / rate:.1f}x** in process;"
            f" **{command_all[0] / command_all[1] / rate:.1f}x** as one `drac render` command"
            f" and **{command_each[0] / command_each[1] / rate:.1f}x** with one command per"
            " file (start-up included, as pdftoppm's is)."
        )
        lines += ["", ratios]
    lines += ["", "| drac encoding | pages/s | mean PNG KiB |", "|---|---|---|"]
    for grayscale in (True, False):
        for level in (1, 3, 6, 9):
            options = RenderOptions(grayscale=grayscale, png_compress_level=level)
            pages, seconds, size = _drac(datas, options)
            mode = "gray" if grayscale else "RGB"
            lines.append(f"| {mode}, compress_level {level} | {pages / seconds:.1f} | "
                         f"{size / pages / 1024:.0f} |")
    print("\n".join(lines))
    if args.write:
        _write(commands, lines)


def _kept_every_page() -> list[str]:
    """The "Every corpus page" part already written (`--commands-only` keeps it)."""
    text = BENCHMARKS.read_text(encoding="utf-8") if BENCHMARKS.exists() else ""
    start, end = text.find("\n### Every corpus page"), text.find("<!-- bench:rendering:end -->")
    return text[start:end].rstrip().splitlines() if 0 <= start < end else []


def _write(commands: list[str], lines: list[str]) -> None:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    every_page = [
        "",
        "### Every corpus page",
        "",
        *lines,
        "",
        "Both produce 1212 x 1568 px for a US Letter page (200 DPI, the longest side capped"
        " at 1,568 px). Choice: 8-bit grayscale at compress_level 1: gray is about 2.5x"
        " smaller than RGB; higher levels save a fifth of the bytes at a large cost in"
        " speed, and the pages are far below Bedrock's 3.75 MB per-image limit either way."
        " Colour-only information (red vs green cells) is lost in gray;"
        " `RenderOptions(grayscale=False)` keeps colour when that matters.",
    ] if lines else _kept_every_page()
    write_section("rendering", "\n".join([
        "## Rendering",
        "",
        "Command: `.venv/bin/python bench/render_bench.py --write` (`--commands-only`: the"
        " command comparison alone)  ",
        f"Machine: {machine()}; load average {load} at the end of the run.",
        "",
        "### `drac render` and pdftoppm as commands, in the same run",
        "",
        *commands,
        *every_page,
    ]))

if __name__ == "__main__":
    main()
