"""The cloud's ReadScans step on scanned corpus pages: seconds a page, to size the function.

Usage: .venv/bin/python bench/read_scans_bench.py [--pages 6] [--write]

Corpus PDF pages (the OCR benchmark's picks) are rendered at 200 DPI and wrapped as one
image-only PDF (a scan), then read by `drac.documents.pdf.scans.read_scanned_pages`, the code
ReadScans runs: each page rendered again in the contained pdfium worker and read by RapidOCR in
the contained OCR worker. Measured per page: wall seconds and the CPU seconds of this process
and of its worker processes (live ones from /proc, ended ones from RUSAGE_CHILDREN: an OCR
worker above half its address-space limit is retired after its page), so other load on the
machine does not count; once with every core and once pinned to one core (the CPU a
1,769 MB Lambda has).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pypdfium2 as pdfium
from _common import CORPUS, machine, processes_cpu_s, write_section

from drac.documents.intake.normalise import image_to_pdf
from drac.documents.options import ConversionOptions
from drac.documents.pdf.render import RenderOptions, render_pages
from drac.documents.pdf.scans import read_scanned_pages

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ocr_bench import PICKS


def scan_pdf(pages: int) -> bytes:
    """The picked pages as one image-only PDF."""
    document = pdfium.PdfDocument.new()
    for company, name, number in PICKS[:pages]:
        pdf = (CORPUS / company / "pdf" / name).read_bytes()
        png = next(render_pages(pdf, RenderOptions(dpi=200, max_side_px=4000), pages=[number])).png
        part = pdfium.PdfDocument(image_to_pdf(png))
        document.import_pages(part)
        part.close()
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _children_cpu_s() -> float:
    """CPU seconds of this process's ended (reaped) children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _descendants_cpu_s() -> float:
    """CPU seconds (user + system) of every live descendant of this process."""
    live = processes_cpu_s()
    parents = {pid: parent for pid, (parent, _) in live.items()}
    times = {pid: cpu for pid, (_, cpu) in live.items()}
    mine, found = {os.getpid()}, True
    while found:
        found = False
        for pid, ppid in parents.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                found = True
    return sum(times[pid] for pid in mine - {os.getpid()} if pid in times)


def measure(pages: int) -> dict[str, float]:
    """Read the scan once (in this process); return seconds a page and pages read."""
    pdf = scan_pdf(pages)
    started_wall = time.perf_counter()
    started_cpu = time.process_time() + _children_cpu_s() + _descendants_cpu_s()
    read = read_scanned_pages(pdf, list(range(1, pages + 1)), ConversionOptions())
    wall = time.perf_counter() - started_wall
    cpu = time.process_time() + _children_cpu_s() + _descendants_cpu_s() - started_cpu
    return {"wall": wall / pages, "cpu": cpu / pages,
            "read": sum(page.readable for page in read.values())}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # a fresh process per run: its workers start with its CPU affinity
        print(json.dumps(measure(args.pages)))
        return
    results = {}
    for label, cores in (("every core", None), ("one core", {0})):
        prefix = [] if cores is None else ["taskset", "-c", "0"]
        done = subprocess.run(
            [*prefix, sys.executable, __file__, "--one", "--pages", str(args.pages)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        results[label] = json.loads(done.stdout.strip().splitlines()[-1])
        print(label, results[label], flush=True)
    rows = "\n".join(
        f"| {label} ({os.cpu_count() if label == 'every core' else 1}) | "
        f"{r['wall']:.2f} | {r['cpu']:.2f} | {int(r['read'])}/{args.pages} |"
        for label, r in results.items()
    )
    body = f"""## ReadScans: OCR of scanned pages in the cloud

Command: `.venv/bin/python bench/read_scans_bench.py --pages {args.pages} --write` (the OCR
benchmark's first {args.pages} corpus pages as one image-only PDF, read by
`pdf.scans.read_scanned_pages`, the code the ReadScans function runs: render at 200 DPI and
RapidOCR, each in its contained worker; CPU is this process and its workers).
Machine: {machine()}.

| cores | wall s/page | CPU s/page | pages read |
|---|---:|---:|---:|
{rows}

Wall time includes the other processes of a shared machine (others ran during the run); CPU
seconds are what size the function: 3,008 MB (about 1.7 vCPUs), 15 minutes, groups of 20 pages
(at most 50 groups a document, so 100 pages, about 6 minutes, for a 5,000-page scan);
docs/aws.md, "Scanned pages are checked too". The OCR worker is started again for each page
(it is retired above half its 4 GiB address-space limit), which is part of the 3.7 s.
"""
    if args.write:
        write_section("read-scans", body)
    print(body)


if __name__ == "__main__":
    main()
