"""What containment costs: `drac render` and offline `drac ingest` over the corpus PDFs, this
checkout against another (e.g. main, before containment), interleaved in one run so the load
of a shared machine falls on both alike; and `pdftoppm` for the render ratio.

    .venv/bin/python bench/containment_cost.py --before /work/main/.venv/bin/drac [--rounds 3]

Each command is a whole process (start-up included), as a user runs it. The best of the
rounds is kept for each.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import CORPUS, machine


def _timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - started


def _render(drac: str, paths: list[Path]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        return _timed([drac, "render", *map(str, paths), "--out", tmp], Path(tmp))


def _ingest(drac: str, paths: list[Path]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        return _timed([drac, "ingest", *map(str, paths), "-w", "ws"], Path(tmp))


def _pdftoppm(paths: list[Path]) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        for index, path in enumerate(paths):
            subprocess.run(["pdftoppm", "-r", "200", "-scale-to", "1568", "-png", str(path),
                            str(Path(tmp) / f"d{index}")], check=True)  # fmt: skip
        return time.perf_counter() - started, len(list(Path(tmp).glob("*.png")))


def main() -> None:
    """Run the comparison and print a Markdown report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the drac executable to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    after = str(Path(sys.executable).with_name("drac"))
    paths = sorted(CORPUS.glob("*/pdf/*.pdf"))
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for label, drac in (("before", args.before), ("after", after)):
            times.setdefault(("render", label), []).append(_render(drac, paths))
            times.setdefault(("ingest", label), []).append(_ingest(drac, paths))
    ppm_seconds, pages = _pdftoppm(paths)
    best = {key: min(values) for key, values in times.items()}
    lines = [
        f"{len(paths)} corpus PDFs ({pages} pages); best of {args.rounds} interleaved rounds; "
        f"{machine()}.",
        "",
        "| command | before (s) | after (s) | after / before |",
        "|---|---:|---:|---:|",
    ]
    for task in ("render", "ingest"):
        before, now = best[(task, "before")], best[(task, "after")]
        lines.append(f"| `drac {task}` (offline) | {before:.2f} | {now:.2f} | {now / before:.2f} |")
    lines += [
        "",
        f"`pdftoppm` (one run per file): {ppm_seconds:.2f} s. `drac render` over pdftoppm: "
        f"**{ppm_seconds / best[('render', 'before')]:.1f}x** before, "
        f"**{ppm_seconds / best[('render', 'after')]:.1f}x** after (start-up included).",
        "",
        "All rounds: "
        + "; ".join(
            f"{task} {label} " + ", ".join(f"{value:.2f}" for value in values)
            for (task, label), values in times.items()
        ),
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
