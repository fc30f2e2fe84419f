"""Converter speed against an earlier revision: the offline PDF converter's CPU seconds over the
corpus PDFs, and `drac ingest` of those PDFs, with this tree's code and with the code of a git
revision (the fidelity work's budget: ingest of born-digital documents at most 20 % slower
than before the fidelity work).

Usage:
    python bench/converter_speed.py REF [--rounds 5] [--write]

REF's whole `src/` is taken from git (`git archive`), so the converter runs with the modules it
had then (the revision's own render, tables and text modules). Each round converts every
corpus PDF once with each code, in a fresh process per code and round (the order alternating
by round, so that other load on a shared machine weighs on both alike), timing only
`offline_markdown` calls in CPU seconds of that process (neither revision starts workers inside
`offline_markdown`). Each round also ingests the PDFs into a fresh workspace with each code
(`drac ingest`, default jobs; this tree with `--no-embed`, since REF may predate embedding at
ingest and vectors are not conversion), timed in wall-clock seconds and CPU seconds of the
process and its workers. The median round is reported.
--write puts the result into docs/benchmarks.md (section "converter-speed").
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from _common import CORPUS, REPO, machine, write_section

_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from drac.documents.offline.pages import offline_markdown
spent = 0.0
for path in sys.argv[2:]:
    data = open(path, "rb").read()
    started = time.process_time()
    offline_markdown(data)
    spent += time.process_time() - started
print(json.dumps(spent))
"""


def sources_at(ref: str, folder: Path) -> Path:
    """`src/` of git revision `ref`, extracted under `folder`."""
    archive = subprocess.run(
        ["git", "archive", ref, "src"], cwd=REPO, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def cpu_seconds(src: Path, pdfs: list[Path]) -> float:
    """CPU seconds `offline_markdown` of the code under `src` spends on `pdfs`."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(src), *map(str, pdfs)],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def ingest_seconds(src: Path, pdfs: Path, workspace: Path, *extra: str) -> tuple[float, float]:
    """(wall-clock, CPU) seconds of `drac ingest` of the folder `pdfs` with the code under
    `src` into the fresh `workspace`, its workers' CPU included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from drac.cli import main; main()", "ingest", str(pdfs),
         "-w", str(workspace), *extra],
        check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(src)},
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    pdfs = sorted(CORPUS.glob("*/pdf/*.pdf"))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", args.ref], cwd=REPO, check=True, capture_output=True,
        text=True,
    ).stdout.strip()  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="drac-speed-") as tmp:
        folder = Path(tmp) / "pdfs"
        folder.mkdir()
        for pdf in pdfs:
            (folder / pdf.name).write_bytes(pdf.read_bytes())
        codes = {"before": sources_at(args.ref, Path(tmp)), "now": REPO / "src"}
        extra = {"before": (), "now": ("--no-embed",)}
        times: dict[str, list[float]] = {"before": [], "now": []}
        ingests: dict[str, list[tuple[float, float]]] = {"before": [], "now": []}
        for round_number in range(args.rounds):
            order = list(codes) if round_number % 2 == 0 else list(codes)[::-1]
            for name in order:
                times[name].append(cpu_seconds(codes[name], pdfs))
                workspace = Path(tmp) / f"ws-{name}-{round_number}"
                ingests[name].append(ingest_seconds(codes[name], folder, workspace, *extra[name]))
    before, now = statistics.median(times["before"]), statistics.median(times["now"])
    rounds = "; ".join(
        f"{b:.2f} / {n:.2f}" for b, n in zip(times["before"], times["now"], strict=True)
    )
    body = (
        "## Converter speed: the offline PDF converter against the code before the fidelity"
        " work\n\n"
        f"Command: `python bench/converter_speed.py {args.ref} --rounds {args.rounds} --write`"
        f" (`{args.ref}` = {commit})  \nMachine: {machine()}.\n\n"
        f"`offline_markdown` over the {len(pdfs)} corpus PDFs, CPU seconds, median of"
        f" {args.rounds} rounds (a fresh process per code and round, order alternating):"
        f" **{before:.2f} s before, {now:.2f} s now ({now / before - 1:+.0%})**; the rounds,"
        f" before / now: {rounds}.\n\n" + _ingest_line(ingests, len(pdfs), args.rounds)
    )
    print(body)
    if args.write:
        write_section("converter-speed", body)
    return 0


def _ingest_line(ingests: dict[str, list[tuple[float, float]]], count: int, rounds: int) -> str:
    """The ingest comparison as one sentence (medians over the rounds)."""
    wall = {name: statistics.median(w for w, _ in runs) for name, runs in ingests.items()}
    cpu = {name: statistics.median(c for _, c in runs) for name, runs in ingests.items()}
    return (
        f"`drac ingest` of the {count} PDFs into a fresh workspace, median of {rounds} rounds:"
        f" **wall {wall['before']:.2f} s before, {wall['now']:.2f} s now"
        f" ({wall['now'] / wall['before'] - 1:+.0%}); CPU {cpu['before']:.2f} s before,"
        f" {cpu['now']:.2f} s now ({cpu['now'] / cpu['before'] - 1:+.0%})**.\n"
    )


if __name__ == "__main__":
    raise SystemExit(main())
